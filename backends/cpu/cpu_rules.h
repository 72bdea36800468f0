/* The CPU's tier 0 and tier 1 rules and the derivations of its derived
 * knobs (cpu_rules.c); the catalogue is beside the ops table
 * (cpu_backend.c). */
#ifndef GPO_CPU_RULES_H
#define GPO_CPU_RULES_H

#include "backend.h"

gpuopt_status gpo_cpu_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);
gpuopt_status gpo_cpu_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);

/* Derivations (src/knob.h): omp.num_threads from threads; omp.places
 * from threads and omp.proc_bind. */
gpuopt_status gpo_cpu_derive_omp_num_threads(const gpo_knob_input *in, const gpo_derive_env *env,
                                             gpo_derivation *out);
gpuopt_status gpo_cpu_derive_omp_places(const gpo_knob_input *in, const gpo_derive_env *env,
                                        gpo_derivation *out);

#endif
