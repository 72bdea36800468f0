/* The CPU's tier 0 and tier 1 rules and the catalogue of the knobs they
 * set (cpu_rules.c). */
#ifndef GPO_CPU_RULES_H
#define GPO_CPU_RULES_H

#include "backend.h"

/* The catalogue. Its size is a constant so the ops table in cpu_backend.c
 * can hold it; a test checks that no entry is left empty. */
#define GPO_CPU_N_KNOBS 8
extern const gpo_knob_def gpo_cpu_knobs[GPO_CPU_N_KNOBS];

gpuopt_status gpo_cpu_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);
gpuopt_status gpo_cpu_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);

#endif
