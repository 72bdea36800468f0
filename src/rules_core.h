/* Rules the core applies to every device, after the backend's own. */
#ifndef GPO_RULES_CORE_H
#define GPO_RULES_CORE_H

#include "gpuopt/gpuopt.h"

struct gpuopt_plan;

/* Workload-derived knobs (batch.max_size, model.quantize_bits,
 * model.offload_bytes) for tier 0 and 1. */
gpuopt_status gpo_rules_workload(struct gpuopt_plan *p, int tier);

#endif
