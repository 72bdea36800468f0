/* The ROCm knob rules of tiers 0 and 1 (rocm_rules.c), the entries of the
 * ops table. Every knob they set is in the backend's catalogue
 * (rocm_backend.c) and documented in docs/knobs.md, "ROCm backend". */
#ifndef GPO_ROCM_RULES_H
#define GPO_ROCM_RULES_H

#include "backend.h"

/* `state` is the backend's gpo_rocm_state. */
gpuopt_status gpo_rocm_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan);
gpuopt_status gpo_rocm_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan);

#endif
