/* The CPU backend's ops table, the only name the core sees
 * (cpu_backend.c), and the entry points it names that have no header of
 * their own. cpu_state.h comes with it: tier 2 reads the loaded facts
 * through it. */
#ifndef GPO_CPU_BACKEND_H
#define GPO_CPU_BACKEND_H

#include "backend.h"
#include "cpu/cpu_state.h"

extern const gpo_backend gpo_backend_cpu;

/* Tier 2, measured with host threads (cpu_tier2.c). */
gpuopt_status gpo_cpu_tier2(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);

#endif
