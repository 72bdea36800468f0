/* Device time on a stream the host program owns (backend.h, the runtime
 * ops' mark_*), for the profiler's sections: a mark is a CUDA event
 * recorded on the program's stream, in the program's current context.
 *
 * Nothing of gpuopt's own is involved (no session, no retained primary
 * context): the event is made in the context current on the calling
 * thread, which is the stream's whenever the program may use the stream
 * there, and it must be on the profiler's device. Reading and freeing may
 * happen on another thread (a report made elsewhere), so a mark keeps its
 * context and pushes it around those calls, popping it after: the calling
 * thread's current context is the same before and after every call.
 *
 * cuEventRecord only queues the event; cuEventSynchronize waits "until the
 * completion of all work currently captured in hEvent" and
 * cuEventElapsedTime reads milliseconds "with a resolution of around 0.5
 * microseconds" (cuda.h 13.0, both functions). Events made with
 * CU_EVENT_DEFAULT record timing. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "cuda_backend.h"
#include "cuda_load.h"
#include "util/strutil.h"

struct gpo_rt_mark {
    gpo_cu_event event;
    gpo_cu_context ctx; /* current when it was recorded */
};

static const char *lacking(const gpo_cuda_api *api)
{
    return !api->cuCtxGetCurrent      ? "cuCtxGetCurrent"
           : !api->cuCtxGetDevice     ? "cuCtxGetDevice"
           : !api->cuCtxPushCurrent   ? "cuCtxPushCurrent_v2"
           : !api->cuCtxPopCurrent    ? "cuCtxPopCurrent_v2"
           : !api->cuEventCreate      ? "cuEventCreate"
           : !api->cuEventRecord      ? "cuEventRecord"
           : !api->cuEventSynchronize ? "cuEventSynchronize"
           : !api->cuEventDestroy     ? "cuEventDestroy_v2"
           : !api->cuEventElapsedTime ? "cuEventElapsedTime"
                                      : NULL;
}

gpuopt_status gpo_cuda_mark_record(void *state, const gpo_route *route, void *stream,
                                   gpo_rt_mark **out)
{
    gpo_cuda_state *s = state;
    const gpo_cuda_api *api = &s->api;
    char what[64];
    assert(s && route && out);
    *out = NULL;
    gpo_snprintf(what, sizeof what, "cuda:%d: a profiler event", (int)route->index);
    gpuopt_status st = gpo_cuda_driver_ready(s, what);
    if (st)
        return st;
    const char *missing = lacking(api);
    if (missing)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the CUDA driver library lacks %s (every call the profiler's events "
                        "need exists since CUDA 4.0: this is not a complete NVIDIA driver)",
                        what, missing);
    gpo_cu_context ctx = NULL;
    gpo_cu_device current = -1, want = -1;
    gpo_cu_result r = api->cuCtxGetCurrent(&ctx);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxGetCurrent", r);
    if (!ctx)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the calling thread has no current CUDA context; sections are timed "
                        "on the stream from the threads that use it, where its context is "
                        "current (the CUDA runtime makes the device's context current at a "
                        "thread's first CUDA call)",
                        what);
    if ((r = api->cuCtxGetDevice(&current)) != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxGetDevice", r);
    if ((r = api->cuDeviceGet(&want, (int)route->index)) != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDeviceGet", r);
    /* The driver hands out the ordinal as the CUdevice (cuda_apply.c). */
    if (current != want)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: the calling thread's current CUDA context is on cuda:%d, not on the "
                        "profiler's device: the stream must be one of cuda:%d's",
                        what, (int)current, (int)route->index);
    gpo_rt_mark *m = calloc(1, sizeof *m);
    if (!m)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "%s: out of memory", what);
    m->ctx = ctx;
    if ((r = api->cuEventCreate(&m->event, GPO_CU_EVENT_DEFAULT)) != GPO_CUDA_SUCCESS) {
        free(m);
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuEventCreate", r);
    }
    if ((r = api->cuEventRecord(m->event, (gpo_cu_stream)stream)) != GPO_CUDA_SUCCESS) {
        api->cuEventDestroy(m->event);
        free(m);
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what,
                                  "cuEventRecord (is the stream one of the current context's?)", r);
    }
    *out = m;
    return GPUOPT_OK;
}

gpuopt_status gpo_cuda_mark_elapsed(void *state, const gpo_rt_mark *start, const gpo_rt_mark *end,
                                    double *ns)
{
    gpo_cuda_state *s = state;
    const gpo_cuda_api *api = &s->api;
    const char *what = "cuda: reading a profiler event";
    assert(s && start && end && ns);
    *ns = -1.0;
    gpuopt_status st = gpo_cuda_check_pid(s, what);
    if (st)
        return st;
    gpo_cu_result r = api->cuCtxPushCurrent(end->ctx);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxPushCurrent_v2", r);
    const char *call = "cuEventSynchronize";
    float ms = 0.0f;
    r = api->cuEventSynchronize(end->event);
    if (r == GPO_CUDA_SUCCESS) {
        call = GPO_CUDA_ELAPSED_CALL(api);
        r = api->cuEventElapsedTime(&ms, start->event, end->event);
    }
    gpo_cu_context popped = NULL;
    api->cuCtxPopCurrent(&popped);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, call, r);
    if (!(ms >= 0.0f) || !isfinite(ms))
        return gpo_fail(GPUOPT_ERR_DRIVER, "%s: %s read %g ms, which is no duration", what, call,
                        (double)ms);
    *ns = (double)ms * 1e6;
    return GPUOPT_OK;
}

void gpo_cuda_mark_free(void *state, gpo_rt_mark *m)
{
    gpo_cuda_state *s = state;
    if (!m)
        return;
    /* In a fork()ed child the parent's events are not this process's to
     * destroy: only the memory is freed. */
    if (gpo_cuda_check_pid(s, "cuda: freeing a profiler event") == GPUOPT_OK &&
        s->api.cuCtxPushCurrent(m->ctx) == GPO_CUDA_SUCCESS) {
        gpo_cu_context popped = NULL;
        s->api.cuEventDestroy(m->event);
        s->api.cuCtxPopCurrent(&popped);
    }
    gpo_detail_clear();
    free(m);
}
