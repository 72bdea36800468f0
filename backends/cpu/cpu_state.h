/* What the CPU backend holds for a context: the host's facts, read once at
 * load, and the tree they were read from. The rules, tier 2 and the ops
 * table read it through these accessors (cpu_state.c). */
#ifndef GPO_CPU_STATE_H
#define GPO_CPU_STATE_H

#include "backend.h"
#include "cpu/cpu_facts.h"

/* The ops table's load: reads the facts from the environment's tree. */
gpuopt_status gpo_cpu_state_load(const gpo_backend_env *env, void **state,
                                 gpo_backend_report *report);
void gpo_cpu_state_unload(void *state);

/* The facts a loaded state holds. */
const gpo_cpu_facts *gpo_cpu_state_facts(const void *state);

/* 1 when the state's facts come from a recorded tree (GPUOPT_SYSFS_ROOT),
 * not from this host: tier 2 must not measure the host for them. */
int gpo_cpu_state_recorded(const void *state);

/* The ops table's memory_live: the load's reading while it is fresh, else
 * /proc/meminfo and the cgroup's usage read now (memory.h). */
gpuopt_status gpo_cpu_state_memory_live(void *state, const gpo_route *route, uint32_t flags,
                                        gpo_memory_reading *out);

#endif
