/* ROCm tier-1 math knobs, from the gfx target's facts (src/arch/amd.c) and the
 * reduced-precision decision (gpo_plan_reduced_precision: the workload's
 * say, else the configuration's): the matrix units, bf16, fp8 (also gated
 * by workload->quantized), the autocast dtype, and the dimension multiple
 * for the precision the plan chose. docs/knobs.md, "ROCm backend". */
#include <string.h>

#include "rocm_rules_math.h"
#include "util/strutil.h"

/* fp8 encodings: CDNA3 (gfx940-942) MFMA uses the FNUZ variants (no
 * negative zero, one NaN), gfx950 and RDNA4 the OCP E4M3/E5M2 ones (AMD
 * Instinct MI300 ISA, "FP8 and BF8"; HIP "Low precision floating point
 * types": __hip_fp8_e4m3_fnuz on gfx942, __hip_fp8_e4m3 on gfx950/gfx12). */
static const char *fp8_format(const gpo_arch_amd_info *a)
{
    return strncmp(a->gfx, "gfx94", 5) == 0
               ? "FNUZ encodings (torch.float8_e4m3fnuz, float8_e5m2fnuz)"
               : "OCP encodings (torch.float8_e4m3fn, float8_e5m2)";
}

static const char *unit_name(const gpo_arch_amd_info *a)
{
    return a->matrix == GPO_ARCH_AMD_MATRIX_MFMA   ? "MFMA"
           : a->matrix == GPO_ARCH_AMD_MATRIX_WMMA ? "WMMA"
                                                   : "vector";
}

static gpuopt_status set_matrix(const gpo_arch_amd_info *a, struct gpuopt_plan *plan)
{
    static const char *const names[] = {"none", "mfma", "wmma"};
    if (a->matrix == GPO_ARCH_AMD_MATRIX_NONE)
        return gpo_knob_set_string(plan, "rocm.matrix_units", "none",
                                   "%s (%s) has no matrix instructions (LLVM AMDGPU processor "
                                   "table: no MFMA or WMMA)",
                                   a->gfx, a->family);
    return gpo_knob_set_string(plan, "rocm.matrix_units", names[a->matrix],
                               a->matrix == GPO_ARCH_AMD_MATRIX_MFMA
                                   ? "%s (%s) has MFMA matrix instructions (CDNA ISA reference)"
                                   : "%s (%s) has WMMA matrix instructions (RDNA3/RDNA4 ISA "
                                     "reference)",
                               a->gfx, a->family);
}

static gpuopt_status set_bf16_fp8(const gpo_arch_amd_info *a, int reduced, const char *why,
                                  const gpuopt_workload *w, struct gpuopt_plan *plan)
{
    gpuopt_status s;
    int bf16 = (a->features & GPUOPT_FEATURE_BF16) != 0;
    int fp8 = (a->features & GPUOPT_FEATURE_FP8) != 0;
    if (a->extrapolated) {
        /* Borrowed facts may describe the table's nearest older target:
         * reduced precision is never turned on by guess. */
        s = gpo_knob_set_bool(plan, "rocm.bf16", 0,
                              "%s is newer than this library's architecture table (facts of %s "
                              "borrowed): reduced precision is not turned on by guess",
                              a->gfx, a->family);
        if (!s)
            s = gpo_knob_set_bool(plan, "rocm.fp8", 0,
                                  "%s is newer than this library's architecture table: fp8 is "
                                  "not turned on by guess",
                                  a->gfx);
        return s;
    }
    if (!bf16)
        s = gpo_knob_set_bool(plan, "rocm.bf16", 0,
                              "%s (%s) has no bf16 dot or matrix instructions", a->gfx, a->family);
    else if (!reduced)
        s = gpo_knob_set_bool(plan, "rocm.bf16", 0, "%s supports bf16 but %s", a->gfx, why);
    else
        s = gpo_knob_set_bool(plan, "rocm.bf16", 1, "%s (%s) computes bf16 in its %s units; %s",
                              a->gfx, a->family, unit_name(a), why);
    if (s)
        return s;
    if (!fp8)
        return gpo_knob_set_bool(plan, "rocm.fp8", 0,
                                 "%s (%s) has no fp8 instructions (CDNA3, CDNA4 and RDNA4 have)",
                                 a->gfx, a->family);
    if (!reduced)
        return gpo_knob_set_bool(plan, "rocm.fp8", 0, "%s supports fp8 but %s", a->gfx, why);
    if (!w || !w->quantized)
        return gpo_knob_set_bool(plan, "rocm.fp8", 0,
                                 "%s supports fp8 (%s) but the workload does not say its model "
                                 "is quantised; fp8 needs scaled weights",
                                 a->gfx, fp8_format(a));
    return gpo_knob_set_bool(plan, "rocm.fp8", 1,
                             "%s runs fp8 matrix math with %s; the model is quantised and %s",
                             a->gfx, fp8_format(a), why);
}

/* bfloat16 where the target computes it (its exponent range needs no loss
 * scaling), else float16, which every ROCm target runs at least at the
 * fp32 rate (packed math from GCN5 on; GCN4 16-bit arithmetic at the fp32
 * rate: the GCN3/Vega ISA guides), saving memory traffic either way. */
static gpuopt_status set_autocast(const gpo_arch_amd_info *a, int reduced, const char *why,
                                  struct gpuopt_plan *plan)
{
    int64_t bf16 = 0;
    gpo_knob_get_int(plan, "rocm.bf16", &bf16);
    if (!reduced || a->extrapolated)
        return gpo_knob_set_string(plan, "rocm.autocast_dtype", "float32", "%s: no mixed precision",
                                   a->extrapolated ? "the target is newer than this library's "
                                                     "table"
                                                   : why);
    if (bf16)
        return gpo_knob_set_string(plan, "rocm.autocast_dtype", "bfloat16",
                                   "%s has bf16 %s math and %s; bfloat16 keeps fp32's exponent "
                                   "range, so training needs no loss scaling",
                                   a->gfx, unit_name(a), why);
    if (a->features & GPUOPT_FEATURE_FP16)
        return gpo_knob_set_string(
            plan, "rocm.autocast_dtype", "float16",
            "%s has no bf16 math but runs fp16 at least at the fp32 rate%s, "
            "and %s; train with a loss scaler (torch.amp.GradScaler)",
            a->gfx, a->matrix != GPO_ARCH_AMD_MATRIX_NONE ? " (matrix units too)" : "", why);
    return gpo_knob_set_string(plan, "rocm.autocast_dtype", "float32",
                               "%s has neither bf16 nor fp16 math: mixed precision would gain "
                               "nothing",
                               a->gfx);
}

/* Dimension multiples in elements of the plan's precision:
 *   fp8 on MFMA/WMMA: 32 (16 x 16 x 32 tiles: v_mfma_f32_16x16x32_fp8 on
 *     CDNA3, RDNA4 WMMA; rocWMMA f8 blocks: BlockK >= 32);
 *   bf16/fp16 on MFMA/WMMA: 16 (v_mfma_f32_16x16x16f16/bf16,
 *     v_wmma_f32_16x16x16_f16/bf16; rocWMMA API reference, "Supported data
 *     types": BlockM = BlockN = 16, BlockK >= 16);
 *   fp32 on MFMA: 16 (v_mfma_f32_16x16x4f32: M and N in 16s, K in 4s);
 *   otherwise (no matrix units, or WMMA, which takes no fp32: RDNA3 ISA,
 *     "Wave matrix multiply-accumulate"): 16-byte rows, so every row
 *     starts where a 128-bit load (global_load_dwordx4) can read it. */
static gpuopt_status set_dims(const gpo_arch_amd_info *a, struct gpuopt_plan *plan)
{
    int64_t fp8 = 0;
    gpo_knob_get_int(plan, "rocm.fp8", &fp8);
    const char *dtype = gpo_knob_get_text(plan, "rocm.autocast_dtype");
    int half = dtype && strcmp(dtype, "float32") != 0;
    int units = a->matrix != GPO_ARCH_AMD_MATRIX_NONE;
    if (fp8 && units)
        return gpo_knob_set_int(plan, "rocm.dim_multiple", 32,
                                "fp8 on %s's %s units: 16 x 16 x 32 tiles, so M and N in "
                                "multiples of 16 and K of 32 elements",
                                a->gfx, unit_name(a));
    if (half && units)
        return gpo_knob_set_int(plan, "rocm.dim_multiple", 16,
                                "%s on %s's %s units: 16 x 16 x 16 tiles (v_%s_f32_16x16x16_%s), "
                                "so M, N and K in multiples of 16 elements fill whole tiles",
                                dtype, a->gfx, unit_name(a),
                                a->matrix == GPO_ARCH_AMD_MATRIX_MFMA ? "mfma" : "wmma",
                                strcmp(dtype, "bfloat16") == 0 ? "bf16" : "f16");
    if (!half && a->matrix == GPO_ARCH_AMD_MATRIX_MFMA)
        return gpo_knob_set_int(plan, "rocm.dim_multiple", 16,
                                "fp32 on %s's MFMA units (v_mfma_f32_16x16x4f32): M and N in "
                                "multiples of 16 elements fill whole tiles (K in 4s)",
                                a->gfx);
    int elem = half ? 2 : 4;
    return gpo_knob_set_int(plan, "rocm.dim_multiple", 16 / elem,
                            "%s math does not use matrix units on %s%s: rows of a multiple of 16 "
                            "bytes = %d elements keep 128-bit loads aligned",
                            half ? dtype : "fp32", a->gfx,
                            units ? " (WMMA takes no fp32)" : " (it has none)", 16 / elem);
}

gpuopt_status gpo_rocm_rules_math(const gpo_arch_amd_info *a, int reduced, const char *why,
                                  const gpuopt_workload *w, struct gpuopt_plan *plan)
{
    gpuopt_status s = set_matrix(a, plan);
    if (!s)
        s = set_bf16_fp8(a, reduced, why, w, plan);
    if (!s)
        s = set_autocast(a, reduced, why, plan);
    if (!s)
        s = set_dims(a, plan);
    return s;
}
