/* Tier 1, memory and loading: lazy module loading by driver version, the
 * cuBLAS workspace (size, PyTorch's KiB form, and the reproducible
 * CUBLAS_WORKSPACE_CONFIG for precision-sensitive work), the L2 set-aside
 * for persisting accesses, and PyTorch's caching-allocator settings sized
 * from the device's memory. Each reason carries its arithmetic. */
#include <stdio.h>
#include <string.h>

#include "cuda_rules.h"
#include "util/strutil.h"

#define MIB (1024ull * 1024ull)
#define GIB (1024ull * MIB)

/* Lazy loading: CUDA 11.7 added CUDA_MODULE_LOADING=LAZY, 12.2 made it the
 * default on Linux (CUDA C++ Programming Guide, "Lazy Loading"; CUDA 11.7
 * and 12.2 release notes). */
static gpuopt_status set_module_loading(const cuda_facts *f, struct gpuopt_plan *plan)
{
    char v[16];
    if (f->workload && f->workload->objective == GPUOPT_OBJECTIVE_LATENCY)
        return gpo_cuda_latency_loading(plan, f->driver_version);
    if (f->driver_version <= 0)
        return GPUOPT_OK; /* tier 0's LAZY and its reason stand */
    gpo_cuda_version_text(f->driver_version, v, sizeof v);
    const char *amortised = f->workload ? "; a throughput workload amortises each kernel's "
                                          "first use over many calls"
                                        : "";
    if (f->driver_version >= 12020)
        return gpo_knob_set_string(plan, "cuda.module_loading", "LAZY",
                                   "the CUDA %s driver loads kernels on first use (the default "
                                   "since 12.2): faster start, less device memory%s",
                                   v, amortised);
    if (f->driver_version >= 11070)
        return gpo_knob_set_string(plan, "cuda.module_loading", "LAZY",
                                   "the CUDA %s driver can load kernels on first use (since 11.7) "
                                   "but does so only when asked (the default from 12.2): faster "
                                   "start, less device memory%s",
                                   v, amortised);
    return gpo_knob_set_string(plan, "cuda.module_loading", "EAGER",
                               "the CUDA %s driver predates lazy loading (11.7): it loads every "
                               "kernel at start whatever the variable says",
                               v);
}

gpuopt_status gpo_cuda_latency_loading(struct gpuopt_plan *plan, int driver_version)
{
    char v[16], drv[64] = "";
    if (driver_version > 0) {
        gpo_cuda_version_text(driver_version, v, sizeof v);
        gpo_snprintf(drv, sizeof drv, "; the CUDA %s driver %s", v,
                     driver_version >= 11070 ? "honours it" : "loads eagerly in any case");
    }
    return gpo_knob_set_string(
        plan, "cuda.module_loading", "EAGER",
        "the workload is latency-oriented: load every kernel when the program starts, so no "
        "request pays for loading a kernel on its first use (lazy loading moves that cost into "
        "the first call); start-up takes longer and every loaded module's kernels take device "
        "memory (CUDA C++ Programming Guide, \"Lazy Loading\")%s; warm up as well "
        "(warmup.runs): loading is not the only first-call cost",
        drv);
}

static uint64_t pow2_floor(uint64_t v)
{
    uint64_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return v ? p : 0;
}

/* cuBLAS recommends a 32 MiB workspace on Hopper and later, 4 MiB before
 * (cuBLAS documentation, cublasSetWorkspace); programs keep one per handle
 * and stream, so it is capped at 1/512 of the device's memory (our rule). */
static gpuopt_status set_cublas(const cuda_facts *f, struct gpuopt_plan *plan, const char *mem)
{
    uint64_t recommended = f->arch >= 90 ? 32 * MIB : 4 * MIB;
    uint64_t cap = pow2_floor(f->memory / 512 / MIB) * MIB;
    if (cap < MIB)
        cap = MIB;
    uint64_t ws = recommended < cap ? recommended : cap;
    char rec[32], capped[32], mem_part[64];
    gpo_format_bytes(recommended, rec, sizeof rec);
    gpo_format_bytes(cap, capped, sizeof capped);
    gpo_snprintf(mem_part, sizeof mem_part, "%s / 512 rounded down to a power of two", mem);
    gpuopt_status st = gpo_knob_set_bytes(
        plan, "cuda.cublas_workspace_bytes", ws,
        "cuBLAS recommends %s on compute capability %d.%d (%s); the cap is %s = %s: %s", rec,
        f->cc_major, f->cc_minor, f->arch >= 90 ? "Hopper and later" : "before Hopper", mem_part,
        capped, ws == recommended ? "the recommendation fits" : "the cap wins");
    if (st)
        return st;

    /* Results reproducible across streams need one of the two configurations
     * cuBLAS documents ("Results reproducibility"); PyTorch's
     * use_deterministic_algorithms accepts exactly these. Only for a workload
     * that says it is precision-sensitive: the 4 MiB buffers are below the
     * Hopper recommendation. */
    if (!f->workload || f->workload->reduced_precision != 0) {
        gpo_knob_unset(plan, "cuda.cublas_workspace_config");
        return GPUOPT_OK;
    }
    int large = 32 * MIB <= f->memory / 128;
    return gpo_knob_set_string(plan, "cuda.cublas_workspace_config", large ? ":4096:8" : ":16:8",
                               "the workload is precision-sensitive: cuBLAS results repeat "
                               "across streams only with :4096:8 or :16:8; %s",
                               large ? "8 buffers of 4 MiB = 32 MiB, within 1/128 of the memory"
                                     : "8 buffers of 16 KiB, since 32 MiB would exceed 1/128 of "
                                       "the memory");
}

/* The L2 set-aside for persisting accesses exists from compute capability
 * 8.0; the CUDA C++ Programming Guide ("L2 Cache Set-Aside for Persisting
 * Accesses") sizes it as min(3/4 of L2, the device's maximum). */
static gpuopt_status set_l2(const cuda_facts *f, struct gpuopt_plan *plan)
{
    if (f->arch < 80 || f->persisting_l2_max <= 0 || f->l2_bytes <= 0) {
        gpo_knob_unset(plan, "cuda.l2_persisting_bytes");
        return GPUOPT_OK;
    }
    uint64_t three_quarters = (uint64_t)f->l2_bytes / 4 * 3;
    uint64_t v = three_quarters < (uint64_t)f->persisting_l2_max ? three_quarters
                                                                 : (uint64_t)f->persisting_l2_max;
    char l2[32], q[32], mx[32];
    gpo_format_bytes((uint64_t)f->l2_bytes, l2, sizeof l2);
    gpo_format_bytes(three_quarters, q, sizeof q);
    gpo_format_bytes((uint64_t)f->persisting_l2_max, mx, sizeof mx);
    return gpo_knob_set_bytes(plan, "cuda.l2_persisting_bytes", v,
                              "min(3/4 of the %s L2 = %s, the device's maximum set-aside %s "
                              "(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE))%s",
                              l2, q, mx,
                              f->mps == 1 ? "; MPS is on: only the MPS server's "
                                            "CUDA_DEVICE_DEFAULT_PERSISTING_L2_CACHE_PERCENTAGE_"
                                            "LIMIT can set it"
                                          : "");
}

/* PyTorch's caching allocator (PyTorch docs, "CUDA semantics", Memory
 * management / Optimizing memory usage with PYTORCH_CUDA_ALLOC_CONF):
 *   expandable_segments  needs the driver's virtual memory management
 *                        (cuMemCreate/cuMemMap), which the device attribute
 *                        tells;
 *   max_split_size_mb    blocks above it are never split, so a big cached
 *                        block is not carved up by small requests; our rule
 *                        (not a vendor number): 1/64 of the memory, a power
 *                        of two, between 32 MiB (PyTorch requires > 20) and
 *                        2 GiB;
 *   garbage_collection_threshold  reclaim cached but unused blocks once
 *                        usage passes this share, keeping max(10%, 1 GiB)
 *                        of headroom, between 0.5 and 0.9.
 * The three together need PyTorch 2.5 or later (pytorch PR 134338 fixed
 * their interplay). PYTORCH_CUDA_ALLOC_CONF is derived from the three
 * after the user's overrides (gpo_cuda_derive_alloc_conf). */
static gpuopt_status set_alloc(const cuda_facts *f, struct gpuopt_plan *plan, const char *mem)
{
    uint64_t mib = f->memory / MIB;
    uint64_t split = pow2_floor(mib / 64);
    split = split < 32 ? 32 : split > 2048 ? 2048 : split;
    uint64_t headroom = f->memory / 10 > GIB ? f->memory / 10 : GIB;
    int gc = f->memory > headroom ? (int)((f->memory - headroom) * 100 / f->memory) : 0;
    gc = gc < 50 ? 50 : gc > 90 ? 90 : gc;
    int expandable = f->vmm == 1;

    gpuopt_status st = gpo_knob_set_bool(
        plan, "cuda.alloc.expandable_segments", expandable, "%s",
        expandable    ? "the device supports virtual memory management (cuMemCreate/cuMemMap): "
                        "segments grow in place, so changing batch shapes fragment less"
        : f->vmm == 0 ? "the device does not support virtual memory management, which "
                        "expandable segments need"
                      : "the driver does not say the device supports virtual memory management "
                        "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED), which "
                        "expandable segments need");
    if (!st)
        st = gpo_knob_set_int(plan, "cuda.alloc.max_split_mb", (int64_t)split,
                              "%s / 64 = %llu MiB, rounded down to a power of two within 32 MiB "
                              "to 2 GiB: cached blocks above it stay whole",
                              mem, (unsigned long long)(mib / 64));
    char room[32];
    gpo_format_bytes(headroom, room, sizeof room);
    if (!st)
        st = gpo_knob_set_int(plan, "cuda.alloc.gc_threshold_percent", gc,
                              "keep max(10%%, 1 GiB) = %s of %s as headroom: reclaim unused "
                              "cached blocks above %d%% (within 50%% to 90%%)",
                              room, mem, gc);
    return st;
}

gpuopt_status gpo_cuda_rules_memory(const cuda_facts *f, struct gpuopt_plan *plan)
{
    char mem[64];
    gpo_cuda_memory_text(f, mem, sizeof mem);
    gpuopt_status st = set_module_loading(f, plan);
    if (!st && f->memory) {
        st = set_cublas(f, plan, mem);
        if (!st)
            st = set_alloc(f, plan, mem);
    }
    if (!st)
        st = set_l2(f, plan);
    return st;
}

/* ---- derived knobs ------------------------------------------------------------------ */

/* PyTorch reads its cuBLASLt workspace in KiB (CUBLASLT_WORKSPACE_SIZE,
 * aten/src/ATen/cuda/CublasHandlePool.cpp); the workspace's domain is whole
 * KiB. */
gpuopt_status gpo_cuda_derive_cublaslt_kib(const gpo_knob_input *in, const gpo_derive_env *env,
                                           gpo_derivation *out)
{
    (void)env;
    out->present = in[0].present;
    if (!out->present) {
        gpo_snprintf(out->how, sizeof out->how, "no cuBLAS workspace is set");
        return GPUOPT_OK;
    }
    gpo_snprintf(out->value, sizeof out->value, "%lld", (long long)(in[0].ival / 1024));
    gpo_snprintf(out->how, sizeof out->how,
                 "%lld / 1024 = %lld KiB, as PyTorch reads CUBLASLT_WORKSPACE_SIZE",
                 (long long)in[0].ival, (long long)(in[0].ival / 1024));
    return GPUOPT_OK;
}

/* "expandable_segments:True,max_split_size_mb:1024,garbage_collection_threshold:0.90":
 * PyTorch's option:value list (docs, "CUDA semantics", Optimizing memory
 * usage with PYTORCH_CUDA_ALLOC_CONF), with the options the plan has.
 * With a pre-allocated pool (prealloc.bytes) larger than max_split_size_mb,
 * that option is left out: PyTorch never splits a cached block above it
 * for a smaller request (c10/cuda/CUDACachingAllocator.cpp, get_free_block),
 * so the step's tensors could not be carved from the pool, and the docs
 * warn its cost for steady work "can range from 'zero' to 'substantial'". */
gpuopt_status gpo_cuda_derive_alloc_conf(const gpo_knob_input *in, const gpo_derive_env *env,
                                         gpo_derivation *out)
{
    (void)env;
    size_t n = 0;
    char pool_note[400] = "";
    out->present = 0;
    out->value[0] = '\0';
    int split = in[1].present;
    if (split && in[3].present && (uint64_t)in[1].ival * MIB < (uint64_t)in[3].ival) {
        char pool[32];
        gpo_format_bytes((uint64_t)in[3].ival, pool, sizeof pool);
        split = 0;
        gpo_snprintf(pool_note, sizeof pool_note,
                     "; max_split_size_mb:%lld left out: the pre-allocated pool of %s "
                     "(prealloc.bytes) is one cached block above it, which PyTorch never splits "
                     "for a smaller request, so the step's tensors could not use it",
                     (long long)in[1].ival, pool);
    }
    if (in[0].present && in[0].ival)
        n += (size_t)snprintf(out->value + n, sizeof out->value - n, "expandable_segments:True");
    if (split)
        n += (size_t)snprintf(out->value + n, sizeof out->value - n, "%smax_split_size_mb:%lld",
                              n ? "," : "", (long long)in[1].ival);
    if (in[2].present)
        n += (size_t)snprintf(out->value + n, sizeof out->value - n,
                              "%sgarbage_collection_threshold:0.%02d", n ? "," : "",
                              (int)in[2].ival);
    out->present = n > 0;
    gpo_snprintf(out->how, sizeof out->how, "%s%s",
                 n ? "as PyTorch reads them (all three together need PyTorch 2.5 or later)"
                   : "no allocator setting is set",
                 pool_note);
    return GPUOPT_OK;
}
