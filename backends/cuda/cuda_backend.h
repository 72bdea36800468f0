/* The CUDA backend's ops table (cuda_backend.c), the one thing the core
 * sees of it, and the entries it gathers from the files below it, one job
 * each (load and unload come with the state they make, cuda_load.h). */
#ifndef GPO_CUDA_BACKEND_H
#define GPO_CUDA_BACKEND_H

#include "backend.h"

struct gpo_dr_run;

extern const gpo_backend gpo_backend_cuda;

/* cuda_enum.c: devices through the driver API without a context, or from
 * the kernel module's files when the library is unusable. */
gpuopt_status gpo_cuda_enumerate(void *state, const gpo_backend_env *env, gpo_device_list *out);

/* cuda_rules.c: tier 0 (no fact read) and tier 1 (the rules). */
gpuopt_status gpo_cuda_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan);
gpuopt_status gpo_cuda_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan);

/* cuda_memory.c: the ops table's memory_live (the calling thread's
 * current context, NVML, an active primary context, and with
 * GPO_MEMORY_MAY_CREATE_CONTEXT a primary context made for the reading). */
gpuopt_status gpo_cuda_memory_live(void *state, const gpo_route *route, uint32_t flags,
                                   gpo_memory_reading *out);

/* cuda_runtime.c: the runtime ops for tier 2 and the tuner. */
extern const gpo_runtime_ops gpo_cuda_runtime_ops;

/* cuda_marks.c: the runtime ops' marks, CUDA events on a stream the host
 * program owns (the profiler's device time). */
gpuopt_status gpo_cuda_mark_record(void *state, const gpo_route *route, void *stream,
                                   gpo_rt_mark **mark);
gpuopt_status gpo_cuda_mark_elapsed(void *state, const gpo_rt_mark *start, const gpo_rt_mark *end,
                                    double *ns);
void gpo_cuda_mark_free(void *state, gpo_rt_mark *mark);

/* cuda_nvtx.c: the profiler's sections as NVTX ranges (Nsight Systems). */
extern const gpo_range_ops gpo_cuda_nvtx_ranges;

/* cuda_apply.c: gpuopt_plan_apply(GPUOPT_APPLY_DEVICE) on the calling
 * thread's current context (the L2 set-aside for persisting accesses). */
gpuopt_status gpo_cuda_apply_device(void *state, const gpo_route *route,
                                    const struct gpuopt_plan *plan, gpo_sbuf *report);

/* cuda_support.c: whether the NVRTC found still compiles for the device
 * (the ops table's toolchain_dropped). */
int gpo_cuda_toolchain_dropped(void *state, const gpo_route *route, const gpuopt_device *dev,
                               char *why, size_t cap);

/* cuda_doctor.c: the CUDA block of gpuopt_context_diagnose. */
void gpo_cuda_diagnose(struct gpo_dr_run *run);

#endif
