/* The CPU backend's parts shared between its files and its tests: the
 * loaded state, the tier rules and the knob catalogue. The core sees only
 * `gpo_backend_cpu`. */
#ifndef GPO_CPU_BACKEND_H
#define GPO_CPU_BACKEND_H

#include "backend.h"
#include "cpu/cpu_facts.h"

extern const gpo_backend gpo_backend_cpu;

/* The catalogue (cpu_rules.c). Its size is a constant so the ops table in
 * cpu_backend.c can hold it; a test checks that no entry is left empty. */
#define GPO_CPU_N_KNOBS 8
extern const gpo_knob_def gpo_cpu_knobs[GPO_CPU_N_KNOBS];

/* The facts a loaded state holds; NULL for a NULL state. */
const gpo_cpu_facts *gpo_cpu_state_facts(const void *state);

/* 1 when the state's facts come from a recorded tree (GPUOPT_SYSFS_ROOT),
 * not from this host: tier 2 must not measure the host for them. */
int gpo_cpu_state_recorded(const void *state);

/* Fills a device record (info, details, est_gflops) from facts. Returns
 * GPUOPT_ERR_NO_MEMORY when the details cannot be built. */
gpuopt_status gpo_cpu_fill_device(const gpo_cpu_facts *f, gpuopt_device *dev);

gpuopt_status gpo_cpu_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);
gpuopt_status gpo_cpu_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);
/* Tier 2, measured with host threads (cpu_tier2.c). */
gpuopt_status gpo_cpu_tier2(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);

#endif
