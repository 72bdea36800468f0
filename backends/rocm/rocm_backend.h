/* The ROCm backend's ops table (rocm_backend.c), which the registry lists
 * and the tests drive. */
#ifndef GPO_ROCM_BACKEND_H
#define GPO_ROCM_BACKEND_H

#include "backend.h"

extern const gpo_backend gpo_backend_rocm;

/* rocm_roctx.c: the profiler's sections as roctx ranges (rocprof). */
extern const gpo_range_ops gpo_rocm_roctx_ranges;

#endif
