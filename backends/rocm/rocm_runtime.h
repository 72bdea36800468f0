/* The ROCm runtime ops for tier 2 (rocm_runtime.c; backend.h,
 * gpo_runtime_ops): HIP sessions, memory, hiprtc programs, kernels and
 * launches. The `backend_state` open takes is the backend's
 * gpo_rocm_state. */
#ifndef GPO_ROCM_RUNTIME_H
#define GPO_ROCM_RUNTIME_H

#include "backend.h"

extern const gpo_runtime_ops gpo_rocm_runtime;

/* rocm_marks.c: the runtime ops' marks, HIP events on a stream the host
 * program owns (the profiler's device time). */
gpuopt_status gpo_rocm_mark_record(void *state, const gpo_route *route, void *stream,
                                   gpo_rt_mark **mark);
gpuopt_status gpo_rocm_mark_elapsed(void *state, const gpo_rt_mark *start, const gpo_rt_mark *end,
                                    double *ns);
void gpo_rocm_mark_free(void *state, gpo_rt_mark *mark);

#endif
