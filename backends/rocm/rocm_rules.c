/* ROCm tier 0 (safe on any AMD GPU ROCm drives) and tier 1 (from the
 * detected facts and the described workload). Every rule, its source and
 * the framework setting it maps to are in docs/knobs.md ("ROCm backend");
 * each reason names the fact behind the value. The math knobs are in
 * rocm_rules_math.c, the environment knobs (HIP_VISIBLE_DEVICES,
 * MIOPEN_FIND_MODE, HSA_OVERRIDE_GFX_VERSION) in rocm_rules_env.c; the
 * catalogue of every knob they set is beside the ops table
 * (rocm_backend.c). */
#include "rocm_rules.h"

#include <assert.h>

#include "arch/amd.h"
#include "rules.h"
#include "rocm_rules_env.h"
#include "rocm_rules_math.h"
#include "rocm_state.h"
#include "util/log.h"
#include "util/strutil.h"

/* ---- tier 0 ------------------------------------------------------------------
 *
 * 256 work-items: a whole number of wavefronts in both wave sizes (four
 * wave64 on GCN/CDNA, eight wave32 on RDNA), and within the 1024-item
 * work-group limit of every AMD GPU (HIP programming guide, "Hardware
 * implementation"; LLVM AMDGPUUsage, amdgpu-flat-work-group-size defaults
 * to 1,1024). 64 as the multiple: a multiple of 64 is whole wavefronts on
 * every AMD GPU, wave64 or wave32 (HIP performance guidelines, "Device
 * memory access": block widths a multiple of the warp size). */
#define TIER0_BLOCK 256
#define TIER0_MULTIPLE 64

/* When HIP loads a program's code objects: HIP_ENABLE_DEFERRED_LOADING=1
 * (the default) loads each on first use, 0 loads every one for every device
 * when the program registers them (ROCm clr, hipamd/src/hip_platform.cpp).
 * HIP has no HIP_MODULE_LOADING; this is CUDA_MODULE_LOADING's equivalent.
 * Only with a workload: latency wants no first-use load, throughput the
 * faster start. */
static gpuopt_status set_loading(struct gpuopt_plan *plan)
{
    const gpuopt_workload *w = gpo_plan_workload(plan);
    if (!w)
        return GPUOPT_OK;
    if (w->objective == GPUOPT_OBJECTIVE_LATENCY)
        return gpo_knob_set_string(
            plan, "rocm.deferred_loading", "0",
            "the workload is latency-oriented: load every code object when the program starts "
            "(HIP_ENABLE_DEFERRED_LOADING=0), so no request pays for loading a kernel on its "
            "first use; start-up takes longer and every device holds every kernel; warm up as "
            "well (warmup.runs)");
    return gpo_knob_set_string(plan, "rocm.deferred_loading", "1",
                               "the workload is throughput-oriented: load code objects on first "
                               "use (HIP's default), for a faster start and less device memory; "
                               "many calls amortise each kernel's first use");
}

gpuopt_status gpo_rocm_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan)
{
    const gpo_rocm_state *st = state;
    gpuopt_status s = GPUOPT_OK;
    assert(st && route && dev && plan);
    if (!st->hip_ok)
        s = gpo_plan_warn(plan,
                          "%s is seen only in the kernel's KFD topology (%s); the plan follows "
                          "its facts and takes effect once a HIP runtime drives it; level 2 "
                          "cannot measure without one",
                          dev->info.id, st->unavailable[0] ? st->unavailable : "no HIP runtime");
    if (!s)
        s = gpo_knob_set_int(plan, "launch.block_size", TIER0_BLOCK,
                             "tier 0 reads no fact: 256 work-items are whole wavefronts in "
                             "both wave sizes (4 x wave64 on GCN/CDNA, 8 x wave32 on RDNA) and "
                             "within the 1024-item work-group limit of every AMD GPU");
    if (!s)
        s = gpo_knob_set_int(plan, "launch.block_multiple", TIER0_MULTIPLE,
                             "tier 0 reads no fact: a multiple of 64 is whole wavefronts on "
                             "every AMD GPU, wave64 (GCN, CDNA) or wave32 (RDNA)");
    if (!s)
        s = gpo_knob_set_bool(plan, "rocm.bf16", 0,
                              "tier 0 reads no fact: full precision is correct on every GPU");
    if (!s)
        s = gpo_knob_set_bool(plan, "rocm.fp8", 0,
                              "tier 0 reads no fact: full precision is correct on every GPU");
    if (!s)
        s = gpo_rocm_tier0_tf32(plan);
    if (!s)
        s = gpo_knob_set_bool(plan, "rocm.miopen_benchmark", 0,
                              "tier 0 knows no workload: MIOpen's immediate mode and Find-Db "
                              "choose solvers without timing them (PyTorch's default)");
    if (!s)
        s = gpo_rocm_set_visible(st, route, dev, plan);
    if (!s)
        s = set_loading(plan);
    return s;
}

/* ---- tier 1 --------------------------------------------------------------------- */

/* One wavefront per SIMD a work-group can use: 4 SIMD16 per CU run wave64
 * on GCN and CDNA (AMD CDNA3 ISA reference, "Compute unit"); a work-group
 * runs on a work-group processor of 4 SIMD32 on RDNA in its default WGP
 * mode (AMD RDNA whitepaper, "Work-group processor"; HIP runs gfx10+ in
 * WGP mode). Both give 4 wavefronts; more waves per SIMD come from other
 * work-groups on the same CU. */
#define WAVES_PER_GROUP 4

static gpuopt_status set_launch(const gpuopt_device *dev, const gpo_arch_amd_info *a,
                                struct gpuopt_plan *plan)
{
    int32_t wave = dev->info.simd_width > 0 ? dev->info.simd_width : a ? a->wavefront : -1;
    if (wave != 32 && wave != 64)
        return GPUOPT_OK; /* unknown wave size: tier 0's values stand */
    const char *src = dev->info.simd_width > 0 ? "the runtime's warpSize" : "the gfx target";
    const char *mode =
        wave == 64 ? "wave64, native on GCN and CDNA"
                   : "wave32, native on RDNA; code built with -mwavefrontsize64 runs wave64 "
                     "there, each wave64 instruction issued as two wave32 halves, and then "
                     "wants multiples of 64";
    gpuopt_status s = gpo_knob_set_int(plan, "launch.block_multiple", wave,
                                       "wavefront of %d (%s: %s): smaller multiples leave lanes "
                                       "of a wavefront idle",
                                       wave, src, mode);
    if (s)
        return s;
    int32_t block = WAVES_PER_GROUP * wave;
    int32_t cap = dev->info.max_threads_per_block;
    if (cap > 0 && block > cap)
        block = cap / wave * wave;
    if (block < wave)
        return GPUOPT_OK;
    return gpo_knob_set_int(
        plan, "launch.block_size", block, "%d wavefronts of %d: one per SIMD of a %s (4 SIMDs)%s",
        WAVES_PER_GROUP, wave, wave == 64 ? "GCN/CDNA compute unit" : "RDNA work-group processor",
        block < WAVES_PER_GROUP * wave ? ", capped by the device's limit" : "");
}

gpuopt_status gpo_rocm_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan)
{
    gpo_arch_amd_info arch;
    char why[256];
    const gpo_rocm_state *st = state;
    (void)route; /* tier 1 reads the device record, not the route */
    assert(st && route && dev && plan);
    int known = gpo_arch_amd_lookup(dev->info.arch_name, &arch) == 0;
    const gpuopt_workload *w = gpo_plan_workload(plan);
    gpo_log_debug(gpo_plan_log(plan),
                  "%s rocm tier 1 looks at: target %s (%s%s), wavefront %d, max threads per "
                  "block %d, UUID %s, %s, workload %s",
                  dev->info.id, known ? arch.gfx : "unknown", known ? arch.family : "-",
                  known && arch.extrapolated ? ", extrapolated" : "", (int)dev->info.simd_width,
                  (int)dev->info.max_threads_per_block, dev->info.uuid[0] ? dev->info.uuid : "none",
                  st->hip_ok ? "HIP runtime" : "KFD topology only",
                  !w                ? "none"
                  : w->fixed_shapes ? "with fixed shapes"
                                    : "with changing shapes");
    gpuopt_status s = set_launch(dev, known ? &arch : NULL, plan);
    if (!s && known) {
        /* Without a known target the math knobs keep tier 0's values. */
        int reduced = gpo_plan_reduced_precision(plan, why, sizeof why);
        s = gpo_rocm_rules_math(&arch, reduced, why, w, plan);
        if (!s)
            s = gpo_rocm_set_override_advice(dev, plan);
    }
    if (!s)
        s = gpo_rocm_set_miopen(plan);
    return s;
}
