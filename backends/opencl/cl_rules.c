/* Tier-0 and tier-1 rules for OpenCL devices. The knobs they set are
 * declared in the backend's catalogue (opencl_backend.c); every rule, its
 * source and the framework setting it maps to are in docs/knobs.md
 * ("OpenCL"). */
#include "cl_rules.h"

#include <assert.h>
#include <string.h>

#include "cl_device.h"
#include "plan.h"
#include "util/strutil.h"

/* Tier-0 work-group size: 256 work-items run on every current GPU and CPU
 * runtime (NVIDIA and AMD allow 1024, Intel GPUs 512 or 1024, PoCL 4096)
 * and leave registers to spare for heavy kernels. */
#define OCL_SAFE_BLOCK 256
/* A multiple of every common SIMD width: NVIDIA warps (32), AMD wavefronts
 * (64 or 32), Intel sub-groups (8 to 32), CPU vectors (4 to 16 lanes). */
#define OCL_SAFE_MULTIPLE 64
/* The smallest local memory any OpenCL 1.0/1.1 full-profile device offers
 * (OpenCL 1.1 §4.2, CL_DEVICE_LOCAL_MEM_SIZE: at least 16 KB; 32 KB since
 * 1.2). */
#define OCL_SAFE_TILE (16u * 1024u)
/* Emulated local memory (CL_GLOBAL, CPU runtimes): a tile that stays in a
 * core's L1 data cache (32 or 48 KiB on current x86 cores, Intel 64 and
 * IA-32 Architectures Optimization Reference Manual, ch. 2; 64 KiB on Arm
 * Neoverse V1/V2). */
#define OCL_CPU_TILE (32u * 1024u)

static int64_t pow2_floor(int64_t v)
{
    int64_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return v >= 1 ? p : 0;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* "-cl-std=CL3.0" for the highest OpenCL C version the device accepts;
 * -cl-std starts at CL1.1 (OpenCL 3.0 §5.8.6.5). "" for a 1.0 device. */
static void cl_std(const ocl_facts *f, char *out, size_t cap)
{
    out[0] = '\0';
    if (f->c_major > 1 || (f->c_major == 1 && f->c_minor >= 1))
        gpo_snprintf(out, cap, "-cl-std=CL%d.%d", f->c_major, f->c_minor);
}

static const char *c_version_source(const ocl_facts *f)
{
    return f->ver_major >= 3 ? "CL_DEVICE_OPENCL_C_ALL_VERSIONS" : "CL_DEVICE_OPENCL_C_VERSION";
}

gpuopt_status gpo_ocl_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan)
{
    (void)state;
    (void)dev;
    assert(route && route->priv && plan);
    const ocl_dev_priv *p = route->priv;
    const ocl_facts *f = &p->facts;
    gpuopt_status s;

    if (p->other_platforms[0])
        s = gpo_knob_set_string(plan, "opencl.platform", p->platform_name,
                                "the device vendor's own platform (\"%s\"), preferred over %s "
                                "which also exposes it",
                                p->platform_vendor, p->other_platforms);
    else
        s = gpo_knob_set_string(plan, "opencl.platform", p->platform_name,
                                "the only platform that exposes this device (vendor \"%s\")",
                                p->platform_vendor);
    if (s != GPUOPT_OK)
        return s;

    char std[32];
    cl_std(f, std, sizeof std);
    if (std[0])
        s = gpo_knob_set_string(plan, "opencl.build_options", std,
                                "the highest OpenCL C version the device accepts is %d.%d (%s)",
                                f->c_major, f->c_minor, c_version_source(f));
    else
        s = gpo_knob_set_string(plan, "opencl.build_options", "",
                                "the device reports OpenCL C \"%s\": no -cl-std option applies",
                                f->c_version);
    if (s != GPUOPT_OK)
        return s;

    int64_t block = OCL_SAFE_BLOCK, multiple = OCL_SAFE_MULTIPLE;
    if (f->max_wg > 0 && f->max_wg < block)
        block = pow2_floor(f->max_wg);
    if (multiple > block)
        multiple = block;
    s = gpo_knob_set_int(plan, "launch.block_size", block,
                         "a work-group size every current device runs (the device allows up to "
                         "%lld work-items)",
                         (long long)f->max_wg);
    if (s == GPUOPT_OK)
        s = gpo_knob_set_int(plan, "launch.block_multiple", multiple,
                             "a multiple of every common SIMD width (warps of 32, wavefronts of "
                             "64 or 32, CPU vectors of 4 to 16 lanes)");
    if (s != GPUOPT_OK)
        return s;

    uint64_t tile = OCL_SAFE_TILE;
    if (f->local_mem > 0 && f->local_mem < tile)
        tile = f->local_mem;
    char have[32];
    gpo_format_bytes(f->local_mem, have, sizeof have);
    return gpo_knob_set_bytes(plan, "opencl.local_mem_tile_bytes", tile,
                              "the local memory every OpenCL device offers (16 KiB; this one "
                              "has %s)",
                              have);
}

/* The vendor rule for the work-group multiple, with its fact in words. */
static int64_t vendor_multiple(ocl_dev_priv *p, const ocl_state *st, const gpuopt_device *dev,
                               char *why, size_t cap)
{
    ocl_facts *f = &p->facts;
    if (f->nv_warp > 0) {
        gpo_snprintf(why, cap, "NVIDIA warps are %lld threads (CL_DEVICE_WARP_SIZE_NV)",
                     (long long)f->nv_warp);
        return f->nv_warp;
    }
    if (f->vendor_id == 0x10de && (f->type & CL_DEVICE_TYPE_GPU)) {
        gpo_snprintf(why, cap,
                     "NVIDIA warps are 32 threads (CUDA C++ Programming Guide, "
                     "SIMT architecture)");
        return 32;
    }
    if (f->amd_wavefront > 0) {
        gpo_snprintf(why, cap,
                     "AMD wavefronts are %lld work-items on this GPU (CL_DEVICE_WAVEFRONT_WIDTH_AMD"
                     "; 64 on GCN/CDNA, 32 on RDNA)",
                     (long long)f->amd_wavefront);
        return f->amd_wavefront;
    }
    if (f->vendor_id == 0x1002 && (f->type & CL_DEVICE_TYPE_GPU) && dev->info.simd_width > 0 &&
        dev->info.arch_family[0]) {
        gpo_snprintf(why, cap,
                     "AMD wavefronts are %d work-items on %s (%s; 64 on GCN/CDNA, 32 on RDNA)",
                     dev->info.simd_width, dev->info.arch_name, dev->info.arch_family);
        return dev->info.simd_width;
    }
    if (f->pref_source == OCL_PREF_UNKNOWN && st) {
        uint64_t t0 = gpo_now_ns();
        gpuopt_status s = gpo_ocl_probe_preferred_multiple(&st->api, f);
        gpo_log_debug(st->log, "opencl: preferred-multiple probe on \"%s\" took %.2f ms (%s)",
                      f->name, (double)(gpo_now_ns() - t0) / 1e6,
                      s == GPUOPT_OK ? "ok" : gpo_detail_get());
    }
    if (f->pref_multiple > 0) {
        gpo_snprintf(why, cap, "the device's preferred work-group multiple is %lld (%s)",
                     (long long)f->pref_multiple,
                     f->pref_source == OCL_PREF_DEVICE
                         ? "CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE"
                         : "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE of a probe kernel");
        return f->pref_multiple;
    }
    return 0;
}

static gpuopt_status tier1_launch(ocl_dev_priv *p, const ocl_state *st, const gpuopt_device *dev,
                                  struct gpuopt_plan *plan)
{
    const ocl_facts *f = &p->facts;
    char why[256];
    int64_t m = vendor_multiple(p, st, dev, why, sizeof why);
    if (m <= 0)
        return GPUOPT_OK; /* tier 0's values stand */
    /* The result must also be a multiple of what the runtime prefers (an
     * RDNA GPU running wave64 code reports 64 while its wavefront is 32). */
    if (f->pref_multiple > 0 && m % f->pref_multiple != 0) {
        int64_t l = m / gcd64(m, f->pref_multiple) * f->pref_multiple;
        gpo_snprintf(why + strlen(why), sizeof why - strlen(why),
                     ", raised to %lld to stay a multiple of the preferred %lld", (long long)l,
                     (long long)f->pref_multiple);
        m = l;
    }
    if (f->max_wg > 0 && m > f->max_wg)
        m = f->max_wg;
    gpuopt_status s = gpo_knob_set_int(plan, "launch.block_multiple", m, "%s", why);
    if (s != GPUOPT_OK)
        return s;
    int64_t block = OCL_SAFE_BLOCK;
    if (f->max_wg > 0 && block > f->max_wg)
        block = f->max_wg;
    block = block / m * m;
    if (block < m)
        block = m;
    return gpo_knob_set_int(plan, "launch.block_size", block,
                            "%lld work-items: the largest multiple of %lld up to 256 that the "
                            "device allows (max work-group size %lld)",
                            (long long)block, (long long)m, (long long)f->max_wg);
}

static gpuopt_status tier1_tile(const ocl_facts *f, struct gpuopt_plan *plan)
{
    if (f->local_mem == 0 || f->local_dedicated < 0)
        return GPUOPT_OK;
    char have[32], tile_s[32];
    gpo_format_bytes(f->local_mem, have, sizeof have);
    if (f->local_dedicated) {
        /* Half the work-group's local memory, so two work-groups fit on a
         * compute unit and one hides the other's memory latency (CUDA C++
         * Best Practices Guide, "Occupancy"; AMD Instinct/RDNA LDS is
         * 64 KiB per CU with the same trade-off). */
        uint64_t tile = (uint64_t)pow2_floor((int64_t)(f->local_mem / 2));
        if (tile == 0)
            tile = f->local_mem;
        gpo_format_bytes(tile, tile_s, sizeof tile_s);
        return gpo_knob_set_bytes(plan, "opencl.local_mem_tile_bytes", tile,
                                  "half of the %s of dedicated local memory (%s), so two "
                                  "work-groups can share a compute unit",
                                  have, tile_s);
    }
    uint64_t tile = f->local_mem / 2 < OCL_CPU_TILE ? f->local_mem / 2 : OCL_CPU_TILE;
    gpo_format_bytes(tile, tile_s, sizeof tile_s);
    return gpo_knob_set_bytes(plan, "opencl.local_mem_tile_bytes", tile,
                              "local memory is emulated in global memory (CL_GLOBAL, %s): a "
                              "%s tile stays in a core's L1 data cache",
                              have, tile_s);
}

static gpuopt_status tier1_build(const ocl_facts *f, struct gpuopt_plan *plan)
{
    char std[32], opts[160], why[192];
    cl_std(f, std, sizeof std);
    /* The workload's say when the caller described one, else the
     * configuration's reduced_precision (the core decides, for every
     * backend alike). */
    if (gpo_plan_reduced_precision(plan, why, sizeof why)) {
        /* -cl-fast-relaxed-math implies the other two (OpenCL 3.0
         * §5.8.6.4); they are spelled out so the knob reads the same on
         * every compiler. */
        gpo_snprintf(opts, sizeof opts,
                     "%s%s-cl-mad-enable -cl-no-signed-zeros -cl-fast-relaxed-math", std,
                     std[0] ? " " : "");
        return gpo_knob_set_string(plan, "opencl.build_options", opts,
                                   "%s: fused multiply-add, no signed zeros and relaxed math "
                                   "are on (OpenCL C %d.%d)",
                                   why, f->c_major, f->c_minor);
    }
    return gpo_knob_set_string(plan, "opencl.build_options", std,
                               "%s: no fast-math options; highest OpenCL C %d.%d", why, f->c_major,
                               f->c_minor);
}

gpuopt_status gpo_ocl_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan)
{
    assert(route && route->priv && dev && plan);
    ocl_dev_priv *p = route->priv;
    gpuopt_status s = tier1_launch(p, state, dev, plan);
    if (s == GPUOPT_OK)
        s = tier1_tile(&p->facts, plan);
    if (s == GPUOPT_OK)
        s = tier1_build(&p->facts, plan);
    return s;
}
