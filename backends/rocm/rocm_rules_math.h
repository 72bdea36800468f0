/* ROCm math knobs (rocm_rules_math.c): tier 1's rules and the derived
 * math knobs the catalogue (rocm_backend.c) names. */
#ifndef GPO_ROCM_RULES_MATH_H
#define GPO_ROCM_RULES_MATH_H

#include "arch/amd.h"
#include "rules.h"

/* Matrix units, XF32, bf16 and fp8 for a known target `a`, whether
 * reduced precision is allowed (`reduced`, `why` in words) and the
 * workload (may be NULL). */
gpuopt_status gpo_rocm_rules_math(const gpo_arch_amd_info *a, int reduced, const char *why,
                                  const gpuopt_workload *w, struct gpuopt_plan *plan);

/* Tier 0: a precision-sensitive workload gets rocm.tf32 false on any GPU. */
gpuopt_status gpo_rocm_tier0_tf32(struct gpuopt_plan *plan);

/* The derived math knobs (src/knob.h): the TF32 variables from rocm.tf32,
 * the autocast dtype from rocm.bf16, the dimension multiple from rocm.fp8
 * and rocm.autocast_dtype. */
gpuopt_status gpo_rocm_derive_hipblaslt_allow_tf32(const gpo_knob_input *in,
                                                   const gpo_derive_env *env, gpo_derivation *out);
gpuopt_status gpo_rocm_derive_torch_tf32_override(const gpo_knob_input *in,
                                                  const gpo_derive_env *env, gpo_derivation *out);
gpuopt_status gpo_rocm_derive_autocast_dtype(const gpo_knob_input *in, const gpo_derive_env *env,
                                             gpo_derivation *out);
gpuopt_status gpo_rocm_derive_dim_multiple(const gpo_knob_input *in, const gpo_derive_env *env,
                                           gpo_derivation *out);

#endif
