/* The ROCm runtime ops for tier 2 (backend.h, gpo_runtime_ops): a HIP
 * session on one device with its own stream, device buffers and copies,
 * pinned host memory, HIP source compiled by hiprtc for the device's own
 * target ID and loaded with hipModuleLoadData, kernels from
 * hipModuleGetFunction, launches through hipModuleLaunchKernel, timed with
 * events.
 *
 * HIP's current device is per thread and is the host program's: each op
 * that calls HIP makes the session's device current (hipSetDevice) only
 * when the thread has another one, and gives the thread its device back
 * before it returns (enter/leave), so between ops the thread's device is
 * what the host chose, and a session may move between threads (one at a
 * time, as backend.h says).
 *
 * All work goes to the session's own stream, created hipStreamNonBlocking:
 * in order among itself, so events recorded on it bracket exactly the work
 * between them, and never waiting for, or timed with, what the host queued
 * on the null stream. The blocking copies (buffer_write, buffer_read) are
 * the async copies on that stream followed by hipStreamSynchronize, so the
 * data has arrived when they return.
 *
 * A sticky error (gpo_hip_error_sticky: a kernel faulted) is
 * GPUOPT_ERR_FAULT whichever call meets it, so a caller stops.
 *
 * Every object an op creates is registered with its session
 * (src/rt/objects.h), so close() releases what the caller left behind
 * (kernels, then the modules they come from, then pinned and device
 * memory), and a handle of another session or a freed one is refused by
 * its address, without being read, before it reaches the runtime. What the
 * core passes in is otherwise trusted (the session, outputs, sources are
 * asserted); sizes and geometry that come from a user's tuning spec are
 * checked and refused in words. */
#include "rocm_runtime.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_rt_api.h"
#include "rocm_hip.h"
#include "rocm_hiprtc.h"
#include "rocm_state.h"
#include "rt/launch.h"
#include "rt/objects.h"
#include "util/strutil.h"

/* Kernel arguments (src/rt/launch.h): at most MAX_ARGS, each at most
 * MAX_ARG_BYTES. */
#define MAX_ARGS 32
#define MAX_ARG_BYTES 256

struct gpo_rt_buf {
    gpo_rt_obj obj; /* first: registered as GPO_RT_BUFFER */
    gpo_hip_deviceptr ptr;
    size_t size;
};

struct gpo_rt_prog {
    gpo_rt_obj obj; /* GPO_RT_PROGRAM */
    gpo_hip_module module;
};

struct gpo_rt_kernel {
    gpo_rt_obj obj; /* GPO_RT_KERNEL, owned by its program (a function of its module) */
    gpo_hip_function func;
    char name[128];
    gpo_rt_args args;
    unsigned int shared_bytes; /* dynamic LDS of each launch (extern __shared__) */
};

struct gpo_rt {
    gpo_rocm_state *st;
    const gpo_hip_rt_fns *fn; /* the state's */
    int ordinal;
    gpo_hip_stream stream; /* the session's own, hipStreamNonBlocking */
    gpo_hip_event ev_start, ev_stop;
    int max_threads;        /* per block */
    uint64_t lds_per_block; /* bytes, 0 unknown */
    char target[64];        /* compile target ID: "gfx942:sramecc+:xnack-" */
    char what[32];          /* "rocm:0", for reasons */
    char compiler[384];     /* compiler_version's answer */
    gpo_rt_objects objects;
};

/* ---- words, thread, timing ------------------------------------------------------ */

/* Codes with which a runtime says there is no GPU to run on: what the
 * runtime answers for work it cannot place (and the test double's answer
 * to a launch, since it emulates memory but runs no code). */
static int no_gpu(gpo_hip_error e)
{
    return e == GPO_hipErrorNoDevice || e == GPO_hipErrorInvalidDevice;
}

/* A failed HIP call of op `op` in words ("rocm:0 launch: hipModuleLaunchKernel
 * returned hipErrorNoDevice (100): ...; running code needs ..."); sets the
 * detail and returns `status` (GPUOPT_ERR_NO_MEMORY for an out-of-memory,
 * GPUOPT_ERR_FAULT for a sticky error). */
static gpuopt_status rt_fail(const gpo_rt *rt, gpuopt_status status, const char *op,
                             const char *call, gpo_hip_error e)
{
    char words[256];
    gpo_hip_error_text(&rt->st->hip, e, words, sizeof words);
    if (e == GPO_hipErrorOutOfMemory)
        status = GPUOPT_ERR_NO_MEMORY;
    if (gpo_hip_error_sticky(e))
        status = GPUOPT_ERR_FAULT;
    const char *hint = "";
    if (gpo_hip_error_sticky(e))
        hint = "; a sticky error: code on the GPU faulted, and every later HIP call in this "
               "process fails with it (a memory fault on an AMD GPU may end the process instead: "
               "ROCr's default handler aborts); the process must be restarted to use the GPU "
               "again";
    else if (no_gpu(e))
        hint = "; running code needs a real AMD GPU that this HIP runtime drives, and it has "
               "none to run this on";
    else if (e == GPO_hipErrorNoBinaryForGpu)
        hint = "; the code object was not built for this GPU's target ID (xnack/sramecc modes "
               "included)";
    return gpo_fail(status, "%s %s: %s returned %s%s", rt->what, op, call, words, hint);
}

/* GPUOPT_OK for a HIP call that succeeded, else rt_fail's words. */
static gpuopt_status rt_call(const gpo_rt *rt, gpuopt_status status, const char *op,
                             const char *call, gpo_hip_error e)
{
    return e == GPO_HIP_SUCCESS ? GPUOPT_OK : rt_fail(rt, status, op, call, e);
}

/* Whether an op may run at all: in the process that opened the session. */
static gpuopt_status check(const gpo_rt *rt, const char *op)
{
    assert(rt);
    return gpo_rocm_check_fork(rt->st, op);
}

/* What an op found current on the calling thread, to give back. */
typedef struct rt_scope {
    int previous;
} rt_scope;

/* Makes the session's device current for one op that calls HIP, when the
 * thread has another one; leave() gives the thread its device back. */
static gpuopt_status enter(gpo_rt *rt, const char *op, rt_scope *sc)
{
    gpuopt_status st = check(rt, op);
    if (st != GPUOPT_OK)
        return st;
    gpo_hip_error e = rt->fn->get_device(&sc->previous);
    if (e != GPO_HIP_SUCCESS)
        return rt_fail(rt, GPUOPT_ERR_DRIVER, op, "hipGetDevice", e);
    if (sc->previous != rt->ordinal && (e = rt->fn->set_device(rt->ordinal)) != GPO_HIP_SUCCESS)
        return rt_fail(rt, GPUOPT_ERR_DRIVER, op, "hipSetDevice", e);
    return GPUOPT_OK;
}

/* Returns `st`, or a failure to give the device back when `st` was OK. */
static gpuopt_status leave(gpo_rt *rt, const rt_scope *sc, gpuopt_status st, const char *op)
{
    if (sc->previous == rt->ordinal)
        return st;
    gpo_hip_error e = rt->fn->set_device(sc->previous);
    if (e != GPO_HIP_SUCCESS && st == GPUOPT_OK)
        return rt_fail(rt, GPUOPT_ERR_DRIVER, op,
                       "hipSetDevice (giving the thread its device back)", e);
    return st;
}

/* Waits for everything the session queued; errors of the work itself
 * (a kernel's fault) surface here, so they are launch errors. */
static gpuopt_status wait_stream(gpo_rt *rt, const char *op)
{
    return rt_call(rt, GPUOPT_ERR_LAUNCH, op, "hipStreamSynchronize",
                   rt->fn->stream_synchronize(rt->stream));
}

/* Events on the session's stream around what the caller enqueues between
 * the two calls; the second waits for its event and stores the time
 * between them in ns. */
static gpuopt_status time_begin(gpo_rt *rt, const char *op)
{
    return rt_call(rt, GPUOPT_ERR_DRIVER, op, "hipEventRecord",
                   rt->fn->event_record(rt->ev_start, rt->stream));
}

static gpuopt_status time_end(gpo_rt *rt, const char *op, double *device_ns)
{
    float ms = 0.0f;
    gpo_hip_error e = rt->fn->event_record(rt->ev_stop, rt->stream);
    if (e != GPO_HIP_SUCCESS)
        return rt_fail(rt, GPUOPT_ERR_DRIVER, op, "hipEventRecord", e);
    /* A fault of the work shows here: a launch error, as on CUDA. */
    e = rt->fn->event_synchronize(rt->ev_stop);
    if (e != GPO_HIP_SUCCESS)
        return rt_fail(rt, GPUOPT_ERR_LAUNCH, op, "hipEventSynchronize", e);
    e = rt->fn->event_elapsed_time(&ms, rt->ev_start, rt->ev_stop);
    if (e != GPO_HIP_SUCCESS)
        return rt_fail(rt, GPUOPT_ERR_DRIVER, op, "hipEventElapsedTime", e);
    return gpo_rt_event_ns(ms, rt->what, op, "hipEventElapsedTime", device_ns);
}

/* ---- releasing objects ------------------------------------------------------------ */

/* Each releases the vendor's side of one object that is no longer
 * registered (removed or taken); the registry frees the record. */
static void kernel_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    (void)rt;
    gpo_rt_args_free(&((gpo_rt_kernel *)o)->args);
}

/* Its kernels must be gone: a module's functions die with it. */
static void prog_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    rt->fn->module_unload(((gpo_rt_prog *)o)->module);
}

static void buf_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    rt->fn->free(((gpo_rt_buf *)o)->ptr);
}

static void pinned_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    rt->fn->host_free(((gpo_rt_pinned *)o)->ptr);
}

static const gpo_rt_destroy_fn destroyers[GPO_RT_KINDS] = {
    [GPO_RT_BUFFER] = buf_destroy,
    [GPO_RT_PROGRAM] = prog_destroy,
    [GPO_RT_KERNEL] = kernel_destroy,
    [GPO_RT_PINNED] = pinned_destroy,
};

/* After fork() the device objects are the parent's: only our own records
 * are freed. */
static const gpo_rt_destroy_fn forgetters[GPO_RT_KINDS] = {[GPO_RT_KERNEL] = kernel_destroy};

/* ---- session ---------------------------------------------------------------------- */

static void destroy_stream_events(gpo_rt *rt)
{
    if (rt->ev_start)
        rt->fn->event_destroy(rt->ev_start);
    if (rt->ev_stop)
        rt->fn->event_destroy(rt->ev_stop);
    if (rt->stream)
        rt->fn->stream_destroy(rt->stream);
}

static void rt_close(gpo_rt *rt)
{
    if (!rt)
        return;
    /* After fork() the parent's runtime must not be touched. Otherwise the
     * session's work is waited for and everything released on its device
     * (by pointer, which HIP accepts on any device; when the device cannot
     * be made current the calls are made anyway). */
    if (check(rt, "close") == GPUOPT_OK) {
        rt_scope sc;
        int entered = enter(rt, "close", &sc) == GPUOPT_OK;
        if (rt->stream)
            rt->fn->stream_synchronize(rt->stream);
        gpo_rt_objects_clear(&rt->objects, rt, destroyers);
        destroy_stream_events(rt);
        if (entered)
            leave(rt, &sc, GPUOPT_OK, "close");
    } else {
        gpo_rt_objects_clear(&rt->objects, rt, forgetters);
    }
    gpo_rt_objects_destroy(&rt->objects);
    free(rt);
}

static gpuopt_status rt_open(void *backend_state, const gpo_route *route, gpo_rt **out)
{
    gpo_rocm_state *st = backend_state;
    gpo_rt *rt = NULL;
    gpo_hip_error e;
    gpuopt_status status = GPUOPT_OK;
    rt_scope sc;

    assert(st && route && out);
    *out = NULL;
    status = gpo_rocm_check_fork(st, "runtime open");
    if (status != GPUOPT_OK)
        return status;
    if (!st->hip_ok)
        return gpo_fail(GPUOPT_ERR_UNAVAILABLE,
                        "rocm:%d is seen only in the kernel's KFD topology and running code on "
                        "it needs the HIP runtime: %s",
                        (int)route->index, st->unavailable[0] ? st->unavailable : "not loaded");
    if (route->index < 0 || route->index >= st->hip.device_count)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "rocm runtime open: HIP device %d does not exist "
                        "(%d devices)",
                        (int)route->index, st->hip.device_count);
    rt = calloc(1, sizeof *rt);
    if (!rt)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory opening a HIP session");
    rt->st = st;
    rt->ordinal = route->index;
    gpo_rt_objects_init(&rt->objects);
    gpo_snprintf(rt->what, sizeof rt->what, "rocm:%d", rt->ordinal);
    rt->fn = &st->rt;
    if (st->rt_missing[0]) {
        status = gpo_fail(GPUOPT_ERR_UNAVAILABLE, "%s cannot run code: the HIP runtime %s lacks %s",
                          rt->what, st->hip.library, st->rt_missing);
        goto out;
    }
    status = enter(rt, "open", &sc);
    if (status != GPUOPT_OK)
        goto out;
    /* The stream and events belong to the device current when they are
     * made: the session's. */
    e = rt->fn->stream_create(&rt->stream, GPO_HIP_STREAM_NON_BLOCKING);
    if (e != GPO_HIP_SUCCESS) {
        rt->stream = NULL;
        status = rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "hipStreamCreateWithFlags", e);
    }
    if (status == GPUOPT_OK && (e = rt->fn->event_create(&rt->ev_start)) == GPO_HIP_SUCCESS)
        e = rt->fn->event_create(&rt->ev_stop);
    if (status == GPUOPT_OK && e != GPO_HIP_SUCCESS)
        status = rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "hipEventCreate", e);
    status = leave(rt, &sc, status, "open");
    if (status != GPUOPT_OK)
        goto out;
    gpo_hip_target(&st->hip, rt->ordinal, rt->target, sizeof rt->target);
    if (!rt->target[0])
        gpo_strlcpy(rt->target, route->info.arch_name, sizeof rt->target);
    rt->max_threads =
        route->info.max_threads_per_block > 0 ? route->info.max_threads_per_block : 1024;
    rt->lds_per_block = route->info.shared_mem_per_block;
out:
    if (status != GPUOPT_OK) {
        destroy_stream_events(rt);
        gpo_rt_objects_destroy(&rt->objects);
        free(rt);
        return status;
    }
    *out = rt;
    return GPUOPT_OK;
}

static gpuopt_status rt_finish(gpo_rt *rt)
{
    rt_scope sc;
    gpuopt_status st = enter(rt, "finish", &sc);
    if (st != GPUOPT_OK)
        return st;
    return leave(rt, &sc, wait_stream(rt, "finish"), "finish");
}

static const char *rt_compiler_version(gpo_rt *rt)
{
    assert(rt);
    if (!rt->compiler[0]) {
        const gpo_hiprtc *rtc = NULL;
        char rtc_text[160];
        if (gpo_rocm_hiprtc(rt->st, &rtc) == GPUOPT_OK)
            gpo_hiprtc_describe(rtc, rtc_text, sizeof rtc_text);
        else
            gpo_strlcpy(rtc_text, "no hiprtc", sizeof rtc_text);
        /* The cache key needs everything that changes the code: compiler,
         * runtime (its loader and device libraries) and target ID. */
        gpo_snprintf(rt->compiler, sizeof rt->compiler, "%s, HIP %s, %s", rtc_text,
                     rt->st->runtime_version[0] ? rt->st->runtime_version : "?",
                     rt->target[0] ? rt->target : "unknown target");
    }
    return rt->compiler;
}

/* ---- buffers ------------------------------------------------------------------------ */

/* Device memory (GPO_RT_BUFFER) or pinned host memory (GPO_RT_PINNED),
 * registered. */
static gpuopt_status alloc(gpo_rt *rt, size_t bytes, gpo_rt_kind kind, gpo_rt_obj **out)
{
    const char *op = kind == GPO_RT_PINNED ? "host_alloc_pinned" : "buffer_alloc";
    const char *call = kind == GPO_RT_PINNED ? "hipHostMalloc" : "hipMalloc";
    gpo_rt_buf *b = NULL;
    gpo_rt_pinned *p = NULL;
    rt_scope sc;
    gpuopt_status st;
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s %s: 0 bytes", rt->what, op);
    if (kind == GPO_RT_PINNED && (!rt->fn->host_malloc || !rt->fn->host_free))
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s host_alloc_pinned: the HIP runtime %s lacks hipHostMalloc or "
                        "hipHostFree",
                        rt->what, rt->st->hip.library);
    gpo_rt_obj *o = calloc(1, kind == GPO_RT_PINNED ? sizeof *p : sizeof *b);
    if (!o)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    if (kind == GPO_RT_PINNED)
        p = (gpo_rt_pinned *)o;
    else
        b = (gpo_rt_buf *)o;
    if ((st = enter(rt, op, &sc)) != GPUOPT_OK) {
        free(o);
        return st;
    }
    void **ptr = p ? &p->ptr : &b->ptr;
    gpo_hip_error e = p ? rt->fn->host_malloc(ptr, bytes, GPO_HIP_HOST_MALLOC_DEFAULT)
                        : rt->fn->malloc(ptr, bytes);
    if (e != GPO_HIP_SUCCESS)
        st = rt_fail(rt, GPUOPT_ERR_DRIVER, op, call, e);
    else if (!*ptr)
        st = gpo_fail(GPUOPT_ERR_DRIVER, "%s %s: %s(%zu) gave NULL", rt->what, op, call, bytes);
    st = leave(rt, &sc, st, op);
    if (st != GPUOPT_OK) {
        if (*ptr && e == GPO_HIP_SUCCESS) /* allocated, then giving the device back failed */
            destroyers[kind](rt, o);
        free(o);
        return st;
    }
    if (b)
        b->size = bytes;
    gpo_rt_objects_add(&rt->objects, o, kind);
    *out = o;
    return GPUOPT_OK;
}

static gpuopt_status rt_buffer_alloc(gpo_rt *rt, size_t bytes, gpo_rt_buf **out)
{
    gpo_rt_obj *o = NULL;
    assert(out);
    gpuopt_status st = alloc(rt, bytes, GPO_RT_BUFFER, &o);
    *out = (gpo_rt_buf *)o;
    return st;
}

/* Unregisters `o`, a live object of this session, and destroys it (a
 * program after its kernels) on the session's device; left to close() when
 * the device cannot be made current. */
static void release(gpo_rt *rt, gpo_rt_obj *o, const char *op)
{
    rt_scope sc;
    if (enter(rt, op, &sc) != GPUOPT_OK)
        return;
    gpo_rt_objects_release(&rt->objects, rt, o, destroyers);
    leave(rt, &sc, GPUOPT_OK, op);
}

static void rt_buffer_free(gpo_rt *rt, gpo_rt_buf *b)
{
    if (gpo_rt_objects_owns(&rt->objects, b, GPO_RT_BUFFER))
        release(rt, &b->obj, "buffer_free");
}

/* A buffer of this session (checked by address before anything reads it),
 * and offset + bytes within it, without overflow. */
static gpuopt_status in_range(gpo_rt *rt, const char *op, const gpo_rt_buf *b, size_t offset,
                              size_t bytes)
{
    gpuopt_status st = gpo_rt_objects_check(&rt->objects, b, GPO_RT_BUFFER, rt->what, op);
    if (st)
        return st;
    if (offset > b->size || bytes > b->size - offset)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s %s: %zu bytes at offset %zu pass the end of a %zu-byte buffer",
                        rt->what, op, bytes, offset, b->size);
    return GPUOPT_OK;
}

/* A blocking copy between the host and a buffer: the stream is waited for,
 * so the data has landed, not only been staged. */
static gpuopt_status host_copy(gpo_rt *rt, gpo_rt_buf *b, size_t offset, void *host, size_t bytes,
                               int to_device)
{
    const char *op = to_device ? "buffer_write" : "buffer_read";
    assert(host);
    rt_scope sc;
    gpuopt_status st = in_range(rt, op, b, offset, bytes);
    if (st != GPUOPT_OK || bytes == 0 || (st = enter(rt, op, &sc)) != GPUOPT_OK)
        return st;
    char *dev = (char *)b->ptr + offset;
    gpo_hip_error e = to_device ? rt->fn->memcpy_htod(dev, host, bytes, rt->stream)
                                : rt->fn->memcpy_dtoh(host, dev, bytes, rt->stream);
    if (e != GPO_HIP_SUCCESS)
        st = rt_fail(rt, GPUOPT_ERR_DRIVER, op,
                     to_device ? "hipMemcpyHtoDAsync" : "hipMemcpyDtoHAsync", e);
    else
        st = wait_stream(rt, op);
    return leave(rt, &sc, st, op);
}

/* hipMemcpyHtoDAsync takes void * before HIP 7: the source is not written. */
static gpuopt_status rt_buffer_write(gpo_rt *rt, gpo_rt_buf *b, size_t offset, const void *src,
                                     size_t bytes)
{
    return host_copy(rt, b, offset, (void *)(uintptr_t)src, bytes, 1);
}

static gpuopt_status rt_buffer_read(gpo_rt *rt, gpo_rt_buf *b, size_t offset, void *dst,
                                    size_t bytes)
{
    return host_copy(rt, b, offset, dst, bytes, 0);
}

static gpuopt_status rt_buffer_copy(gpo_rt *rt, gpo_rt_buf *dst, gpo_rt_buf *src, size_t bytes,
                                    double *device_ns)
{
    rt_scope sc;
    gpuopt_status st = in_range(rt, "buffer_copy", dst, 0, bytes);
    if (st == GPUOPT_OK)
        st = in_range(rt, "buffer_copy", src, 0, bytes);
    if (st != GPUOPT_OK)
        return st;
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s buffer_copy: 0 bytes", rt->what);
    if ((st = enter(rt, "buffer_copy", &sc)) != GPUOPT_OK)
        return st;
    if (device_ns)
        st = time_begin(rt, "buffer_copy");
    if (st == GPUOPT_OK)
        st = rt_call(rt, GPUOPT_ERR_DRIVER, "buffer_copy", "hipMemcpyDtoDAsync",
                     rt->fn->memcpy_dtod(dst->ptr, src->ptr, bytes, rt->stream));
    if (st == GPUOPT_OK && device_ns)
        st = time_end(rt, "buffer_copy", device_ns);
    return leave(rt, &sc, st, "buffer_copy");
}

/* ---- pinned host memory --------------------------------------------------------------- */

static gpuopt_status rt_host_alloc_pinned(gpo_rt *rt, size_t bytes, void **out)
{
    gpo_rt_obj *o = NULL;
    assert(out);
    gpuopt_status st = alloc(rt, bytes, GPO_RT_PINNED, &o);
    *out = st ? NULL : ((gpo_rt_pinned *)o)->ptr;
    return st;
}

static void rt_host_free_pinned(gpo_rt *rt, void *ptr)
{
    gpo_rt_pinned *p = gpo_rt_objects_pinned(&rt->objects, ptr);
    if (p)
        release(rt, &p->obj, "host_free_pinned");
}

/* ---- programs ------------------------------------------------------------------------- */

static gpuopt_status rt_program_build(gpo_rt *rt, const char *source, const char *options,
                                      gpo_rt_prog **out, char **log)
{
    const gpo_hiprtc *rtc = NULL;
    void *code = NULL;
    size_t size = 0;
    gpo_rt_prog *p = NULL;
    gpuopt_status st;

    assert(source && out && log);
    *out = NULL;
    *log = NULL;
    rt_scope sc;
    st = check(rt, "program_build");
    if (st != GPUOPT_OK)
        return st;
    if (!rt->target[0])
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s program_build: the device's gfx target is unknown, so there is "
                        "nothing to compile for",
                        rt->what);
    st = gpo_rocm_hiprtc(rt->st, &rtc);
    if (st != GPUOPT_OK)
        return st;
    st = gpo_hiprtc_compile(rtc, source, rt->target, options, &code, &size, log);
    if (st != GPUOPT_OK)
        return st; /* the detail and, for a build error, the log are set */
    p = calloc(1, sizeof *p);
    if (!p) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    /* A module loads onto the current device: the session's. */
    if ((st = enter(rt, "program_build", &sc)) != GPUOPT_OK) {
        free(p);
        goto out;
    }
    gpo_hip_error e = rt->fn->module_load_data(&p->module, code);
    if (e != GPO_HIP_SUCCESS)
        st = rt_fail(rt, GPUOPT_ERR_DRIVER, "program_build", "hipModuleLoadData", e);
    st = leave(rt, &sc, st, "program_build");
    if (st != GPUOPT_OK) {
        if (e == GPO_HIP_SUCCESS)
            rt->fn->module_unload(p->module);
        free(p);
        goto out;
    }
    gpo_rt_objects_add(&rt->objects, &p->obj, GPO_RT_PROGRAM);
    *out = p;
out:
    free(code); /* the runtime keeps its own copy of the image */
    if (st != GPUOPT_OK && *log && st != GPUOPT_ERR_BUILD) {
        free(*log);
        *log = NULL;
    }
    return st;
}

static void rt_program_free(gpo_rt *rt, gpo_rt_prog *p)
{
    if (gpo_rt_objects_owns(&rt->objects, p, GPO_RT_PROGRAM))
        release(rt, &p->obj, "program_free");
}

/* ---- kernels -------------------------------------------------------------------------- */

static gpuopt_status rt_kernel_create(gpo_rt *rt, gpo_rt_prog *p, const char *name,
                                      gpo_rt_kernel **out)
{
    assert(name && out);
    *out = NULL;
    rt_scope sc;
    gpuopt_status st =
        gpo_rt_objects_check(&rt->objects, p, GPO_RT_PROGRAM, rt->what, "kernel_create");
    if (st != GPUOPT_OK)
        return st;
    size_t len = strlen(name);
    if (len == 0 || len >= sizeof((gpo_rt_kernel *)0)->name)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s kernel_create: a kernel name of %zu characters (1 to 127 accepted)",
                        rt->what, len);
    gpo_rt_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    if ((st = enter(rt, "kernel_create", &sc)) != GPUOPT_OK) {
        free(k);
        return st;
    }
    gpo_hip_error e = rt->fn->module_get_function(&k->func, p->module, name);
    if (e == GPO_hipErrorNotFound || e == GPO_hipErrorInvalidDeviceFunction)
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND,
                      "%s kernel_create: the program has no kernel '%s' "
                      "(hipModuleGetFunction: %s); declare it extern \"C\" __global__ so "
                      "its name is not mangled",
                      rt->what, name, gpo_hip_error_name(e));
    else if (e != GPO_HIP_SUCCESS)
        st = rt_fail(rt, GPUOPT_ERR_DRIVER, "kernel_create", "hipModuleGetFunction", e);
    st = leave(rt, &sc, st, "kernel_create");
    if (st != GPUOPT_OK) {
        free(k); /* a function belongs to its module: nothing to release */
        return st;
    }
    k->obj.owner = p;
    memcpy(k->name, name, len + 1);
    gpo_rt_objects_add(&rt->objects, &k->obj, GPO_RT_KERNEL);
    *out = k;
    return GPUOPT_OK;
}

static void rt_kernel_free(gpo_rt *rt, gpo_rt_kernel *k)
{
    if (check(rt, "kernel_free") != GPUOPT_OK ||
        !gpo_rt_objects_owns(&rt->objects, k, GPO_RT_KERNEL))
        return;
    gpo_rt_objects_release(&rt->objects, rt, &k->obj, destroyers);
}

/* The checks every kernel op starts with: the process, a kernel of this
 * session (by address, before anything reads it), an argument index. */
static gpuopt_status kernel_check(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index, const char *op)
{
    gpuopt_status st = check(rt, op);
    if (st != GPUOPT_OK)
        return st;
    if ((st = gpo_rt_objects_check(&rt->objects, k, GPO_RT_KERNEL, rt->what, op)))
        return st;
    if (index >= MAX_ARGS)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s %s: argument %u of '%s' (0 to %d accepted)",
                        rt->what, op, index, k->name, MAX_ARGS - 1);
    return GPUOPT_OK;
}

static gpuopt_status rt_kernel_set_buffer(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                          gpo_rt_buf *buf)
{
    gpuopt_status st = kernel_check(rt, k, index, "kernel_set_buffer");
    if (st != GPUOPT_OK)
        return st;
    if ((st =
             gpo_rt_objects_check(&rt->objects, buf, GPO_RT_BUFFER, rt->what, "kernel_set_buffer")))
        return st;
    return gpo_rt_args_set(&k->args, index, &buf->ptr, sizeof buf->ptr, rt->what,
                           "kernel_set_buffer");
}

static gpuopt_status rt_kernel_set_scalar(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                          const void *value, size_t size)
{
    assert(value);
    gpuopt_status st = kernel_check(rt, k, index, "kernel_set_scalar");
    if (st != GPUOPT_OK)
        return st;
    if (size == 0 || size > MAX_ARG_BYTES)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s kernel_set_scalar: a %zu-byte argument (1 to %d accepted)", rt->what,
                        size, MAX_ARG_BYTES);
    return gpo_rt_args_set(&k->args, index, value, size, rt->what, "kernel_set_scalar");
}

/* HIP has one dynamic LDS region per launch (`extern __shared__`), sized at
 * launch, not a kernel parameter: `index` names no parameter and the bytes
 * become the launch's dynamic LDS (a later call replaces them). Unlike
 * CUDA's 48 KiB default there is nothing to opt into: a module kernel may
 * use the whole LDS of a work-group (hipDeviceAttributeMaxSharedMemoryPer
 * Block, 64 KiB on CDNA and RDNA), as the runtime checks at launch
 * (hip_module.cpp of ROCm's CLR: sharedMemBytes against the device's LDS
 * size, and a module function's maxDynamicSharedSizeBytes defaults to the
 * LDS left beside its static part); hipFuncSetAttribute takes a host
 * function pointer, which a hipModuleGetFunction kernel does not have. */
static gpuopt_status rt_kernel_set_local(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index, size_t bytes)
{
    gpuopt_status st = kernel_check(rt, k, index, "kernel_set_local");
    if (st != GPUOPT_OK)
        return st;
    uint64_t limit = rt->lds_per_block ? rt->lds_per_block : 65536;
    if (bytes > limit)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s kernel_set_local: %zu bytes of LDS for '%s' exceed the %llu bytes a "
                        "work-group may use",
                        rt->what, bytes, k->name, (unsigned long long)limit);
    k->shared_bytes = (unsigned int)bytes;
    return GPUOPT_OK;
}

static gpuopt_status rt_kernel_max_group(gpo_rt *rt, gpo_rt_kernel *k, size_t *max_items)
{
    assert(max_items);
    rt_scope sc;
    gpuopt_status st = kernel_check(rt, k, 0, "kernel_max_group");
    if (st != GPUOPT_OK)
        return st;
    if (!rt->fn->func_get_attribute) {
        *max_items = (size_t)rt->max_threads; /* the device's limit */
        return GPUOPT_OK;
    }
    /* The attribute is read for the current device: the session's. */
    if ((st = enter(rt, "kernel_max_group", &sc)) != GPUOPT_OK)
        return st;
    int v = 0;
    gpo_hip_error e =
        rt->fn->func_get_attribute(&v, GPO_HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->func);
    if (e != GPO_HIP_SUCCESS)
        st = rt_fail(rt, GPUOPT_ERR_DRIVER, "kernel_max_group", "hipFuncGetAttribute", e);
    else if (v <= 0)
        st = gpo_fail(GPUOPT_ERR_DRIVER,
                      "%s kernel_max_group: hipFuncGetAttribute gave %d threads for '%s'", rt->what,
                      v, k->name);
    st = leave(rt, &sc, st, "kernel_max_group");
    if (st == GPUOPT_OK)
        *max_items = (size_t)(v < rt->max_threads ? v : rt->max_threads);
    return st;
}

/* ---- launch --------------------------------------------------------------------------- */

static gpuopt_status rt_launch(gpo_rt *rt, gpo_rt_kernel *k, uint32_t dims, const size_t global[3],
                               const size_t *local, double *device_ns)
{
    size_t g[3], l[3], auto_local = 256;
    void *params[GPO_RT_MAX_ARGS];
    int n_args = 0;
    assert(global);
    rt_scope sc;
    gpuopt_status st = kernel_check(rt, k, 0, "launch");
    if (st != GPUOPT_OK)
        return st;
    /* The work-group when the caller leaves it to the runtime: HIP has no
     * such choice, so the largest power of two up to 256 that divides
     * global[0] (256: four wave64 or eight wave32 wavefronts, a multiple of
     * either). */
    while (auto_local > 1 && (auto_local > (size_t)rt->max_threads || global[0] % auto_local != 0))
        auto_local /= 2;
    st = gpo_rt_geometry(rt->what, k->name, dims, global, local, auto_local, NULL, NULL,
                         (size_t)rt->max_threads, g, l);
    /* HIP: gridDim x blockDim must stay below 2^32 in each dimension
     * (hipModuleLaunchKernel's documentation). */
    for (int d = 0; d < 3 && st == GPUOPT_OK; d++)
        if (g[d] > UINT32_MAX)
            st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                          "%s launch of '%s': global size %zu in dimension %d (below 2^32)",
                          rt->what, k->name, g[d], d);
    if (st != GPUOPT_OK)
        return st;
    int unset = gpo_rt_args_pack(&k->args, -1, params, &n_args);
    if (unset >= 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s launch of '%s': argument %d was not set",
                        rt->what, k->name, unset);
    if ((st = enter(rt, "launch", &sc)) != GPUOPT_OK)
        return st;
    if (device_ns)
        st = time_begin(rt, "launch");
    if (st == GPUOPT_OK)
        st = rt_call(rt, GPUOPT_ERR_LAUNCH, "launch", "hipModuleLaunchKernel",
                     rt->fn->module_launch_kernel(
                         k->func, (unsigned)(g[0] / l[0]), (unsigned)(g[1] / l[1]),
                         (unsigned)(g[2] / l[2]), (unsigned)l[0], (unsigned)l[1], (unsigned)l[2],
                         k->shared_bytes, rt->stream, n_args ? params : NULL, NULL));
    if (st == GPUOPT_OK && device_ns)
        st = time_end(rt, "launch", device_ns);
    return leave(rt, &sc, st, "launch");
}

const gpo_runtime_ops gpo_rocm_runtime = {
    .language = "hip",
    .builds_alongside_launches = 0, /* a module load makes the device current on this thread */
    .faults_end_process = 1,        /* sticky errors; ROCr aborts on a GPU memory fault */
    GPO_RUNTIME_OPS_FUNCTIONS,
    /* HIP API reference, "Graph management" (hipStreamBeginCapture,
     * hipGraphLaunch); PyTorch on ROCm runs torch.cuda.CUDAGraph on hipGraph
     * (PyTorch docs, "HIP (ROCm) semantics": torch.cuda is reused). */
    .graph_api = "a HIP graph (hipStreamBeginCapture, hipGraphInstantiate, hipGraphLaunch; in "
                 "PyTorch on ROCm torch.compile(mode=\"reduce-overhead\") or "
                 "torch.cuda.CUDAGraph, which run on hipGraph)",
    .mark_record = gpo_rocm_mark_record,
    .mark_elapsed = gpo_rocm_mark_elapsed,
    .mark_free = gpo_rocm_mark_free,
};
