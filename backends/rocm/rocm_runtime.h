/* The ROCm runtime ops for tier 2 (rocm_runtime.c; backend.h,
 * gpo_runtime_ops): HIP sessions, memory, hiprtc programs, kernels and
 * launches. The `backend_state` open takes is the backend's
 * gpo_rocm_state. */
#ifndef GPO_ROCM_RUNTIME_H
#define GPO_ROCM_RUNTIME_H

#include "backend.h"

extern const gpo_runtime_ops gpo_rocm_runtime;

#endif
