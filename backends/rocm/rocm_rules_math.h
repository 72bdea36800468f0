/* ROCm tier-1 math knobs (rocm_rules_math.c), called by tier 1. */
#ifndef GPO_ROCM_RULES_MATH_H
#define GPO_ROCM_RULES_MATH_H

#include "arch/amd.h"
#include "rules.h"

/* Matrix units, bf16, fp8, the autocast dtype and the dimension multiple,
 * for a known target `a`, whether reduced precision is allowed (`reduced`,
 * `why` in words) and the workload (may be NULL). */
gpuopt_status gpo_rocm_rules_math(const gpo_arch_amd_info *a, int reduced, const char *why,
                                  const gpuopt_workload *w, struct gpuopt_plan *plan);

#endif
