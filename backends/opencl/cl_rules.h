/* Tier-0 and tier-1 rules for OpenCL devices (cl_rules.c), as
 * gpo_backend.tier0 and .tier1. */
#ifndef GPO_CL_RULES_H
#define GPO_CL_RULES_H

#include "backend.h"

gpuopt_status gpo_ocl_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);
gpuopt_status gpo_ocl_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);

#endif
