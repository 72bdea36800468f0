/* ROCm tier-1 math knobs, from the gfx target's facts (src/arch/amd.c) and the
 * reduced-precision decision (gpo_plan_reduced_precision: the workload's
 * say, else the configuration's): the matrix units, XF32 (TF32-class fp32
 * matrix math), bf16, fp8 (also gated by workload->quantized); and the
 * knobs derived from them after the user's overrides: the TF32
 * environment variables, the autocast dtype, and the dimension multiple
 * for the precision the plan chose. docs/knobs.md, "ROCm backend" and
 * "TF32".
 *
 * XF32 is opt-in on ROCm, unlike TF32 on CUDA: only gfx940-942 have it
 * (v_mfma_f32_16x16x8_xf32; gfx950 dropped it), PyTorch uses it only for
 * matrix multiplications through hipBLASLt and only when
 * HIPBLASLT_ALLOW_TF32=1 (pytorch PR 139869; its tests call the variable
 * temporary), convolutions have no TF32 path, and fp32 GEMMs at "high"
 * precision on gfx942 are reported to err at bf16's scale rather than
 * TF32's (pytorch PR 188168). So it follows the reduced-precision
 * decision, as bf16 does. */
#include <string.h>

#include "rocm_rules_math.h"

#include "device.h"
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

static int precision_sensitive(const gpuopt_workload *w)
{
    return w && w->reduced_precision == 0;
}

static gpuopt_status set_tf32(const gpo_arch_amd_info *a, int reduced, const char *why,
                              const gpuopt_workload *w, struct gpuopt_plan *plan)
{
    if (a->extrapolated)
        return gpo_knob_set_bool(plan, "rocm.tf32", 0,
                                 "%s is newer than this library's architecture table: XF32 is "
                                 "not turned on by guess",
                                 a->gfx);
    if (!(a->features & GPUOPT_FEATURE_TF32))
        return gpo_knob_set_bool(plan, "rocm.tf32", 0,
                                 "%s (%s) has no XF32 matrix instructions (only gfx940-942 do): "
                                 "fp32 math stays fp32",
                                 a->gfx, a->family);
    if (precision_sensitive(w))
        return gpo_knob_set_bool(plan, "rocm.tf32", 0,
                                 "%s has XF32 matrix instructions, but the workload is "
                                 "precision-sensitive: full fp32, enforced for PyTorch "
                                 "(rocm.hipblaslt_allow_tf32)",
                                 a->gfx);
    if (!reduced)
        return gpo_knob_set_bool(plan, "rocm.tf32", 0,
                                 "%s has XF32 matrix instructions, but %s: on ROCm TF32-class "
                                 "math is opt-in (PyTorch gates it behind HIPBLASLT_ALLOW_TF32, "
                                 "and its error on gfx942 is reported at bf16's scale)",
                                 a->gfx, why);
    return gpo_knob_set_bool(plan, "rocm.tf32", 1,
                             "%s (%s) runs fp32 matrix multiplications in XF32 on its MFMA units "
                             "(v_mfma_f32_16x16x8_xf32) and %s; convolutions stay fp32 "
                             "(PyTorch has no MIOpen TF32 path); what only an API call sets: "
                             "torch.backends.cuda.matmul.allow_tf32 = True (or "
                             "torch.set_float32_matmul_precision(\"high\"))",
                             a->gfx, a->family, why);
}

gpuopt_status gpo_rocm_tier0_tf32(struct gpuopt_plan *plan)
{
    if (!precision_sensitive(gpo_plan_workload(plan)))
        return GPUOPT_OK; /* level 0 leaves it to the framework: PyTorch on ROCm keeps fp32 */
    return gpo_knob_set_bool(plan, "rocm.tf32", 0,
                             "the workload is precision-sensitive: no XF32 on any GPU (enforced "
                             "for PyTorch, rocm.hipblaslt_allow_tf32)");
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

gpuopt_status gpo_rocm_rules_math(const gpo_arch_amd_info *a, int reduced, const char *why,
                                  const gpuopt_workload *w, struct gpuopt_plan *plan)
{
    gpuopt_status s = set_matrix(a, plan);
    if (!s)
        s = set_tf32(a, reduced, why, w, plan);
    if (!s)
        s = set_bf16_fp8(a, reduced, why, w, plan);
    return s;
}

/* ---- derived knobs ------------------------------------------------------------------ */

/* The target's facts for a derivation: none below level 1 (tier 0 reads no
 * fact) or for a target the table does not know. */
static int derive_facts(const gpo_derive_env *env, gpo_arch_amd_info *a)
{
    return env->level >= 1 && gpo_arch_amd_lookup(env->dev->info.arch_name, a) == 0;
}

/* HIPBLASLT_ALLOW_TF32: PyTorch on ROCm lets torch.backends.cuda.matmul.
 * allow_tf32 take effect only with 1 (pytorch PR 139869, Context.cpp
 * allowTF32CuBLAS); 0 keeps fp32 even when a program asks, which is how a
 * plan enforces "no TF32" for a precision-sensitive workload or a user
 * who said so. Otherwise nothing is exported: PyTorch's own default is
 * fp32 on ROCm. */
gpuopt_status gpo_rocm_derive_hipblaslt_allow_tf32(const gpo_knob_input *in,
                                                   const gpo_derive_env *env, gpo_derivation *out)
{
    gpo_arch_amd_info a;
    int facts = derive_facts(env, &a);
    out->present = 0;
    if (!in[0].present) {
        gpo_snprintf(out->how, sizeof out->how,
                     "rocm.tf32 is not set: PyTorch on ROCm keeps fp32 matrix multiplications "
                     "unless HIPBLASLT_ALLOW_TF32=1");
        return GPUOPT_OK;
    }
    if (in[0].ival) {
        out->present = 1;
        gpo_snprintf(out->value, sizeof out->value, "1");
        gpo_snprintf(out->how, sizeof out->how,
                     "PyTorch on ROCm then lets TF32 through hipBLASLt for fp32 matrix "
                     "multiplications%s",
                     facts && !(a.features & GPUOPT_FEATURE_TF32)
                         ? " (this target has no XF32 instructions: no effect here)"
                         : "");
        return GPUOPT_OK;
    }
    if (facts && !(a.features & GPUOPT_FEATURE_TF32)) {
        gpo_snprintf(out->how, sizeof out->how, "%s has no XF32 instructions: nothing to turn off",
                     a.gfx);
        return GPUOPT_OK;
    }
    if (!in[0].user && !precision_sensitive(env->workload)) {
        gpo_snprintf(out->how, sizeof out->how,
                     "TF32 is not allowed and PyTorch on ROCm keeps fp32 without "
                     "HIPBLASLT_ALLOW_TF32=1: nothing to enforce");
        return GPUOPT_OK;
    }
    out->present = 1;
    gpo_snprintf(out->value, sizeof out->value, "0");
    gpo_snprintf(out->how, sizeof out->how,
                 "PyTorch on ROCm then keeps fp32 matrix multiplications even when a program "
                 "sets torch.backends.cuda.matmul.allow_tf32 = True");
    return GPUOPT_OK;
}

/* The same variable as on CUDA: PyTorch's default float32 matmul precision
 * becomes "high" (aten/src/ATen/Context), which on ROCm takes effect with
 * HIPBLASLT_ALLOW_TF32=1 beside it. */
gpuopt_status gpo_rocm_derive_torch_tf32_override(const gpo_knob_input *in,
                                                  const gpo_derive_env *env, gpo_derivation *out)
{
    (void)env;
    out->present = in[0].present && in[0].ival;
    if (!out->present) {
        gpo_snprintf(out->how, sizeof out->how, "TF32 is not allowed: PyTorch's default stands");
        return GPUOPT_OK;
    }
    gpo_snprintf(out->value, sizeof out->value, "1");
    gpo_snprintf(out->how, sizeof out->how,
                 "PyTorch then allows TF32 for fp32 matrix multiplications by default (with "
                 "HIPBLASLT_ALLOW_TF32=1 on ROCm); what only an API call sets: "
                 "torch.backends.cuda.matmul.allow_tf32 = True");
    return GPUOPT_OK;
}

/* bfloat16 where the plan allows it (its exponent range needs no loss
 * scaling), else float16, which every ROCm target runs at least at the
 * fp32 rate (packed math from GCN5 on; GCN4 16-bit arithmetic at the fp32
 * rate: the GCN3/Vega ISA guides), saving memory traffic either way. */
gpuopt_status gpo_rocm_derive_autocast_dtype(const gpo_knob_input *in, const gpo_derive_env *env,
                                             gpo_derivation *out)
{
    gpo_arch_amd_info a;
    out->present = 1;
    if (in[0].present && in[0].ival) {
        gpo_snprintf(out->value, sizeof out->value, "bfloat16");
        gpo_snprintf(out->how, sizeof out->how,
                     "bfloat16 keeps fp32's exponent range, so training needs no loss scaling");
        return GPUOPT_OK;
    }
    gpo_snprintf(out->value, sizeof out->value, "float32");
    if (!derive_facts(env, &a)) {
        gpo_snprintf(out->how, sizeof out->how, "%s: no mixed precision",
                     env->level < 1 ? "level 0 reads no precision policy"
                                    : "the target is unknown");
        return GPUOPT_OK;
    }
    const char *why = env->reduced_why;
    if (!env->reduced || a.extrapolated)
        gpo_snprintf(out->how, sizeof out->how, "%s: no mixed precision",
                     a.extrapolated ? "the target is newer than this library's table" : why);
    else if (a.features & GPUOPT_FEATURE_FP16) {
        gpo_snprintf(out->value, sizeof out->value, "float16");
        gpo_snprintf(out->how, sizeof out->how,
                     "no bf16 math, but %s runs fp16 at least at the fp32 rate%s, and %s; train "
                     "with a loss scaler (torch.amp.GradScaler)",
                     a.gfx, a.matrix != GPO_ARCH_AMD_MATRIX_NONE ? " (matrix units too)" : "", why);
    } else
        gpo_snprintf(out->how, sizeof out->how,
                     "%s has neither bf16 nor fp16 math: mixed precision would gain nothing",
                     a.gfx);
    return GPUOPT_OK;
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
 *     starts where a 128-bit load (global_load_dwordx4) can read it.
 * Level 0 knows no target: 16 (32 for fp8) fills the tiles of every AMD
 * GPU that has them. */
gpuopt_status gpo_rocm_derive_dim_multiple(const gpo_knob_input *in, const gpo_derive_env *env,
                                           gpo_derivation *out)
{
    gpo_arch_amd_info a;
    int fp8 = in[0].present && in[0].ival;
    const char *dtype = in[1].present ? in[1].text : "float32";
    int half = strcmp(dtype, "float32") != 0;
    out->present = 1;
    if (!derive_facts(env, &a)) {
        gpo_snprintf(out->value, sizeof out->value, "%d", fp8 ? 32 : 16);
        gpo_snprintf(out->how, sizeof out->how, "%s",
                     fp8 ? "fp8: 16 x 16 x 32 tiles on every AMD GPU that has fp8, K in "
                           "multiples of 32 elements"
                         : "multiples of 16 elements fill the 16-wide MFMA and WMMA tiles of "
                           "every AMD GPU that has them (rocWMMA: BlockM = BlockN = 16) and "
                           "keep fp32 rows 64-byte aligned on the others");
        return GPUOPT_OK;
    }
    int units = a.matrix != GPO_ARCH_AMD_MATRIX_NONE;
    int n;
    if (fp8 && units) {
        n = 32;
        gpo_snprintf(out->how, sizeof out->how,
                     "fp8 on %s's %s units: 16 x 16 x 32 tiles, so M and N in multiples of 16 "
                     "and K of 32 elements",
                     a.gfx, unit_name(&a));
    } else if (half && units) {
        n = 16;
        gpo_snprintf(out->how, sizeof out->how,
                     "%s on %s's %s units: 16 x 16 x 16 tiles (v_%s_f32_16x16x16_%s), so M, N "
                     "and K in multiples of 16 elements fill whole tiles",
                     dtype, a.gfx, unit_name(&a),
                     a.matrix == GPO_ARCH_AMD_MATRIX_MFMA ? "mfma" : "wmma",
                     strcmp(dtype, "bfloat16") == 0 ? "bf16" : "f16");
    } else if (!half && a.matrix == GPO_ARCH_AMD_MATRIX_MFMA) {
        n = 16;
        gpo_snprintf(out->how, sizeof out->how,
                     "fp32 on %s's MFMA units (v_mfma_f32_16x16x4f32): M and N in multiples of "
                     "16 elements fill whole tiles (K in 4s)",
                     a.gfx);
    } else {
        int elem = half ? 2 : 4;
        n = 16 / elem;
        gpo_snprintf(out->how, sizeof out->how,
                     "%s math does not use matrix units on %s%s: rows of a multiple of 16 bytes "
                     "= %d elements keep 128-bit loads aligned",
                     half ? dtype : "fp32", a.gfx,
                     units ? " (WMMA takes no fp32)" : " (it has none)", n);
    }
    gpo_snprintf(out->value, sizeof out->value, "%d", n);
    return GPUOPT_OK;
}
