/* Device time on a command queue the host program owns (backend.h, the
 * runtime ops' mark_*), for the profiler's sections: a mark is a marker
 * enqueued on the program's queue.
 *
 * A marker "waits on ... all previously enqueued commands ... to complete"
 * on an in-order queue, and its event's CL_PROFILING_COMMAND_END is when
 * that happened (OpenCL 3.0 API, clEnqueueMarkerWithWaitList and
 * clGetEventProfilingInfo), so the time between two markers' ends is the
 * time the work queued between them took on the device. Profiling
 * information exists only for a queue made with CL_QUEUE_PROFILING_ENABLE;
 * a queue without it is refused in words rather than read as zeros. An
 * out-of-order queue orders nothing between markers and their neighbours
 * (a marker there waits for everything before it, but later work may run
 * first), so it is refused too. The queue's device must be the
 * profiler's. OpenCL objects may be used from any thread, so reading and
 * freeing need no care about threads. */
#include <assert.h>
#include <stdlib.h>

#include "cl_device.h"
#include "cl_load.h"
#include "cl_runtime.h"
#include "util/strutil.h"

struct gpo_rt_mark {
    cl_event event;
    const ocl_api *api;
};

static gpuopt_status cl_fail(cl_int err, const char *what, const char *call)
{
    return gpo_fail(gpo_ocl_status(err, GPUOPT_ERR_DRIVER), "%s: %s failed (%s, %d)", what, call,
                    gpo_ocl_error_name(err), (int)err);
}

gpuopt_status gpo_ocl_mark_record(void *state, const gpo_route *route, void *stream,
                                  gpo_rt_mark **out)
{
    const ocl_state *st = state;
    const ocl_api *api = &st->api;
    const ocl_dev_priv *dp = route->priv;
    char what[64];
    assert(st && route && out);
    *out = NULL;
    gpo_snprintf(what, sizeof what, "opencl:%d: a profiler marker", (int)route->index);
    if (!api->GetCommandQueueInfo || !api->EnqueueMarkerWithWaitList)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "%s: the OpenCL loader %s lacks %s (OpenCL 1.2)",
                        what, st->library,
                        api->GetCommandQueueInfo ? "clEnqueueMarkerWithWaitList"
                                                 : "clGetCommandQueueInfo");
    if (!dp)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "%s: the device has no OpenCL route", what);
    cl_command_queue q = stream;
    cl_device_id dev = NULL;
    cl_command_queue_properties props = 0;
    cl_int err = api->GetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
    if (err != CL_SUCCESS)
        return cl_fail(err, what, "clGetCommandQueueInfo(CL_QUEUE_DEVICE) (is it a queue?)");
    if (dev != dp->facts.device)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: the queue is on another device than the profiler's", what);
    err = api->GetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (err != CL_SUCCESS)
        return cl_fail(err, what, "clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)");
    if (!(props & CL_QUEUE_PROFILING_ENABLE))
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the queue was made without CL_QUEUE_PROFILING_ENABLE, so the device "
                        "keeps no times for it: create it with that property to have device "
                        "time",
                        what);
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the queue executes out of order, so markers do not bracket the work "
                        "between them",
                        what);
    gpo_rt_mark *m = calloc(1, sizeof *m);
    if (!m)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "%s: out of memory", what);
    m->api = api;
    err = api->EnqueueMarkerWithWaitList(q, 0, NULL, &m->event);
    if (err != CL_SUCCESS || !m->event) {
        free(m);
        return cl_fail(err ? err : CL_INVALID_EVENT, what, "clEnqueueMarkerWithWaitList");
    }
    *out = m;
    return GPUOPT_OK;
}

gpuopt_status gpo_ocl_mark_elapsed(void *state, const gpo_rt_mark *start, const gpo_rt_mark *end,
                                   double *ns)
{
    const char *what = "opencl: reading a profiler marker";
    (void)state;
    assert(start && end && ns);
    *ns = -1.0;
    const ocl_api *api = end->api;
    cl_ulong t0 = 0, t1 = 0;
    cl_int err = api->WaitForEvents(1, &end->event);
    if (err != CL_SUCCESS)
        return cl_fail(err, what, "clWaitForEvents");
    err = api->GetEventProfilingInfo(start->event, CL_PROFILING_COMMAND_END, sizeof t0, &t0, NULL);
    if (err == CL_SUCCESS)
        err =
            api->GetEventProfilingInfo(end->event, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    if (err != CL_SUCCESS)
        return cl_fail(err, what, "clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)");
    if (t1 < t0)
        return gpo_fail(GPUOPT_ERR_DRIVER,
                        "%s: the later marker ended before the earlier one (%llu < %llu ns)", what,
                        (unsigned long long)t1, (unsigned long long)t0);
    *ns = (double)(t1 - t0);
    return GPUOPT_OK;
}

void gpo_ocl_mark_free(void *state, gpo_rt_mark *m)
{
    (void)state;
    if (!m)
        return;
    m->api->ReleaseEvent(m->event);
    free(m);
}
