/* The OpenCL runtime ops for tier 2 and the tuner (cl_runtime.c). */
#ifndef GPO_CL_RUNTIME_H
#define GPO_CL_RUNTIME_H

#include "backend.h"

extern const gpo_runtime_ops gpo_ocl_runtime_ops;

/* cl_marks.c: the runtime ops' marks, markers on a command queue the host
 * program owns (the profiler's device time). */
gpuopt_status gpo_ocl_mark_record(void *state, const gpo_route *route, void *stream,
                                  gpo_rt_mark **mark);
gpuopt_status gpo_ocl_mark_elapsed(void *state, const gpo_rt_mark *start, const gpo_rt_mark *end,
                                   double *ns);
void gpo_ocl_mark_free(void *state, gpo_rt_mark *mark);

#endif
