/* Rules the core applies to every device, after the backend's own. */
#ifndef GPO_RULES_CORE_H
#define GPO_RULES_CORE_H

#include "gpuopt/gpuopt.h"

struct gpuopt_plan;

/* Workload advice for tier 0 and 1: model.quantize_bits when the model does
 * not fit and precision may be traded. The knobs that follow from it
 * (model.offload_bytes, batch.max_size) are derived after the user's
 * overrides (src/workload_fit.c). */
gpuopt_status gpo_rules_workload(struct gpuopt_plan *p, int tier);

/* Locality for tier 1: cpu.affinity, the CPUs of the device's NUMA node
 * that this process may run on (src/rules_locality.c), or a warning when
 * it may run on none of them. */
gpuopt_status gpo_rules_locality(struct gpuopt_plan *p, int tier);

#endif
