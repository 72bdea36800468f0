/* The ROCm support matrix (rocm_support.c): whether the ROCm release this
 * backend loaded still supports a GPU's gfx target. */
#ifndef GPO_ROCM_SUPPORT_H
#define GPO_ROCM_SUPPORT_H

#include "backend.h"

/* gpo_backend_rocm.toolchain_dropped (src/backend.h). */
int gpo_rocm_toolchain_dropped(void *state, const gpo_route *route, const gpuopt_device *dev,
                               char *why, size_t cap);

#endif
