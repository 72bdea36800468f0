/* Device time on a stream the host program owns (backend.h, the runtime
 * ops' mark_*), for the profiler's sections: a mark is a HIP event
 * recorded on the program's stream.
 *
 * HIP's current device is the calling thread's, and the host program's:
 * an event is made on it, so it must be the profiler's device (a stream of
 * another device is refused by hipEventRecord; this check says why first).
 * Reading and freeing may happen on another thread, so a mark keeps its
 * device, made current around those calls only when the thread has
 * another one and given back after.
 *
 * hipEventRecord only queues the event; hipEventSynchronize waits for it;
 * hipEventElapsedTime gives milliseconds between two recorded events (HIP
 * API reference, "Event Management"). The entry points are the runtime
 * ops' slice, resolved by the backend's load (gpo_rocm_state.rt). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "hip_rt_api.h"
#include "rocm_runtime.h"
#include "rocm_state.h"
#include "util/strutil.h"

struct gpo_rt_mark {
    gpo_hip_event event;
    int device;
    const gpo_hip_rt_fns *fn;
    const gpo_hip *hip;
};

static gpuopt_status hip_fail(const gpo_hip *hip, const char *what, const char *call,
                              gpo_hip_error e)
{
    char words[256];
    gpo_hip_error_text(hip, e, words, sizeof words);
    return gpo_fail(gpo_hip_error_sticky(e) ? GPUOPT_ERR_FAULT : GPUOPT_ERR_DRIVER,
                    "%s: %s failed: %s", what, call, words);
}

gpuopt_status gpo_rocm_mark_record(void *state, const gpo_route *route, void *stream,
                                   gpo_rt_mark **out)
{
    gpo_rocm_state *st = state;
    const gpo_hip_rt_fns *fn = NULL;
    char what[64];
    assert(st && route && out);
    *out = NULL;
    gpo_snprintf(what, sizeof what, "rocm:%d: a profiler event", (int)route->index);
    gpuopt_status status = gpo_rocm_check_fork(st, what);
    if (status)
        return status;
    if (!st->hip_ok)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "%s needs the HIP runtime: %s", what,
                        st->unavailable[0] ? st->unavailable : "not loaded");
    if (st->rt_missing[0])
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "the HIP runtime %s lacks %s, which device events need", st->hip.library,
                        st->rt_missing);
    fn = &st->rt;
    int current = -1;
    gpo_hip_error e = fn->get_device(&current);
    if (e != GPO_HIP_SUCCESS)
        return hip_fail(&st->hip, what, "hipGetDevice", e);
    if (current != route->index)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: the calling thread's current HIP device is %d, not the profiler's "
                        "device: the stream must be one of rocm:%d's, used where it is current",
                        what, current, (int)route->index);
    gpo_rt_mark *m = calloc(1, sizeof *m);
    if (!m)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "%s: out of memory", what);
    m->device = current;
    m->fn = fn;
    m->hip = &st->hip;
    if ((e = fn->event_create(&m->event)) != GPO_HIP_SUCCESS) {
        free(m);
        return hip_fail(&st->hip, what, "hipEventCreate", e);
    }
    if ((e = fn->event_record(m->event, (gpo_hip_stream)stream)) != GPO_HIP_SUCCESS) {
        fn->event_destroy(m->event);
        free(m);
        return hip_fail(&st->hip, what, "hipEventRecord (is the stream one of this device's?)", e);
    }
    *out = m;
    return GPUOPT_OK;
}

/* Makes `device` current on the calling thread; *previous gets the one to
 * give back (-1: nothing to give back). */
static gpo_hip_error enter(const gpo_rt_mark *m, int *previous)
{
    *previous = -1;
    int cur = -1;
    gpo_hip_error e = m->fn->get_device(&cur);
    if (e == GPO_HIP_SUCCESS && cur != m->device && (e = m->fn->set_device(m->device)) == 0)
        *previous = cur;
    return e;
}

static void leave(const gpo_rt_mark *m, int previous)
{
    if (previous >= 0)
        m->fn->set_device(previous);
}

gpuopt_status gpo_rocm_mark_elapsed(void *state, const gpo_rt_mark *start, const gpo_rt_mark *end,
                                    double *ns)
{
    gpo_rocm_state *st = state;
    const char *what = "rocm: reading a profiler event";
    assert(st && start && end && ns);
    *ns = -1.0;
    gpuopt_status status = gpo_rocm_check_fork(st, what);
    if (status)
        return status;
    int previous;
    const char *call = "hipSetDevice";
    float ms = 0.0f;
    gpo_hip_error e = enter(end, &previous);
    if (e == GPO_HIP_SUCCESS) {
        call = "hipEventSynchronize";
        e = end->fn->event_synchronize(end->event);
    }
    if (e == GPO_HIP_SUCCESS) {
        call = "hipEventElapsedTime";
        e = end->fn->event_elapsed_time(&ms, start->event, end->event);
    }
    leave(end, previous);
    if (e != GPO_HIP_SUCCESS)
        return hip_fail(end->hip, what, call, e);
    if (!(ms >= 0.0f) || !isfinite(ms))
        return gpo_fail(GPUOPT_ERR_DRIVER, "%s: hipEventElapsedTime read %g ms, no duration", what,
                        (double)ms);
    *ns = (double)ms * 1e6;
    return GPUOPT_OK;
}

void gpo_rocm_mark_free(void *state, gpo_rt_mark *m)
{
    gpo_rocm_state *st = state;
    if (!m)
        return;
    /* A fork()ed child's copy of the parent's events is not its to destroy. */
    if (gpo_rocm_check_fork(st, "rocm: freeing a profiler event") == GPUOPT_OK) {
        int previous;
        if (enter(m, &previous) == GPO_HIP_SUCCESS)
            m->fn->event_destroy(m->event);
        leave(m, previous);
    }
    gpo_detail_clear();
    free(m);
}
