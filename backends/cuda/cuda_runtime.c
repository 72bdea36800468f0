/* The CUDA runtime ops for tier 2 and the tuner (backend.h,
 * gpo_runtime_ops): a session on a device's primary context with its own
 * stream and two timing events, device buffers and copies, pinned host
 * memory, and CUDA C programs compiled by NVRTC (cuda_nvrtc.c), loaded with
 * cuModuleLoadData and launched with cuLaunchKernel.
 *
 * A session retains the device's primary context (the one the CUDA runtime
 * and most frameworks share) for its whole life and releases it on close.
 * Each op pushes that context, works, and pops it again, so the calling
 * thread's current context is the same before and after every op, and a
 * session may be used from whichever thread holds it at the time (one at a
 * time, as backend.h says). Every object an op creates is registered in the
 * session's registry (src/rt/objects.h), so close() releases whatever the
 * caller left behind, and a handle of another session, or a freed one, is
 * refused (looked up by address, never read) instead of reaching the
 * driver.
 *
 * All work goes to the session's own stream, created with
 * CU_STREAM_NON_BLOCKING: in order among itself, so events recorded on it
 * bracket exactly the copy or launch between them, and never implicitly
 * synchronised with the legacy default stream on which the host program's
 * own work may be queued (CUDA Driver API, "Stream synchronization
 * behavior"). Copies are the async calls on that stream; the ones the ops
 * contract calls blocking (buffer_write, buffer_read) wait for the stream
 * before returning, because a copy from pageable memory otherwise returns
 * "once the pageable buffer has been copied to the staging memory for DMA
 * transfer to device memory, but the DMA to final destination may not have
 * completed" (CUDA Driver API, "API synchronization behavior"), and a host
 * timer around it would stop early.
 *
 * A sticky result (gpo_cuda_result_sticky: a kernel faulted) is
 * GPUOPT_ERR_FAULT with cuda.h's words, whichever call meets it, so a
 * caller stops instead of blaming the next build or launch.
 *
 * Dynamic shared memory above a kernel's default limit
 * (MAX_SHARED_MEMORY_PER_BLOCK, 48 KiB, minus its static shared memory) is
 * opted into with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) before
 * the launch, up to the device's MAX_SHARED_MEMORY_PER_BLOCK_OPTIN (227 KiB
 * on an H100); more is refused with the numbers (cuda.h,
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
 *
 * Kernels are found with cuModuleGetFunction (their names must not be
 * mangled: declare them extern "C"). Sizes follow the OpenCL convention of
 * backend.h: global[] counts threads and is a multiple of local[], so
 * grid = global / local and block = local. */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "cuda_load.h"
#include "rt/launch.h"
#include "rt/objects.h"
#include "util/strutil.h"

/* ---- objects ------------------------------------------------------------ */

struct gpo_rt_buf {
    gpo_rt_obj h;
    gpo_cu_deviceptr ptr;
    size_t size;
};

struct gpo_rt_prog {
    gpo_rt_obj h;
    gpo_cu_module module;
};

struct gpo_rt_kernel {
    gpo_rt_obj h; /* owned by its program: a CUfunction belongs to the module */
    gpo_cu_function func;
    char name[128];
    int n_params; /* from cuFuncGetParamInfo; -1 when the driver cannot say */
    size_t param_size[GPO_RT_MAX_ARGS];
    gpo_rt_args args;
    unsigned int shared_bytes; /* dynamic shared memory per block */
    int static_shared;         /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */
    unsigned int dynamic_max;  /* its MAX_DYNAMIC_SHARED_SIZE_BYTES as last set or defaulted */
};

struct gpo_rt {
    gpo_cuda_state *s;
    const gpo_cuda_api *api;
    gpo_cu_device dev;
    gpo_cu_context ctx; /* the retained primary context */
    int cc_major, cc_minor;
    int max_threads;  /* per block */
    int max_block[3]; /* per dimension */
    int max_grid[3];
    int shared_per_block; /* MAX_SHARED_MEMORY_PER_BLOCK: the default limit */
    int shared_optin;     /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: the opt-in limit */
    gpo_cu_stream stream; /* the session's own, CU_STREAM_NON_BLOCKING */
    gpo_cu_event ev_start, ev_end;
    gpo_rt_objects objects;
    char what[32];      /* "cuda:0", for reasons */
    char compiler[256]; /* compiler_version's answer */
};

/* ---- words ------------------------------------------------------------------ */

/* A failed driver call of op `op`, in words ("cuda:0 launch: cuLaunchKernel
 * failed: ..."); sets the detail and returns `status`. */
static gpuopt_status rt_fail(gpo_rt *rt, gpuopt_status status, const char *op, const char *call,
                             gpo_cu_result r)
{
    char what[96];
    gpo_snprintf(what, sizeof what, "%s %s", rt->what, op);
    return gpo_cuda_fail_call(rt->s, status, what, call, r);
}

/* GPUOPT_OK for a driver call that succeeded, else rt_fail's
 * GPUOPT_ERR_DRIVER. */
static gpuopt_status rt_call(gpo_rt *rt, const char *op, const char *call, gpo_cu_result r)
{
    return r == GPO_CUDA_SUCCESS ? GPUOPT_OK : rt_fail(rt, GPUOPT_ERR_DRIVER, op, call, r);
}

/* GPUOPT_OK when `handle` is a live object of `kind` of this session. */
static gpuopt_status mine(gpo_rt *rt, const void *handle, gpo_rt_kind kind, const char *op)
{
    assert(rt);
    return gpo_rt_objects_check(&rt->objects, handle, kind, rt->what, op);
}

/* Failures of loading and running code, with what they mean. Meanings from
 * the CUresult documentation of cuda.h 13.0. A sticky one is
 * GPUOPT_ERR_FAULT whatever its row says (explain). */
typedef struct result_meaning {
    gpo_cu_result result;
    gpuopt_status status;
    const char *words;
} result_meaning;

static const result_meaning load_words[] = {
    {GPO_CUDA_ERROR_UNSUPPORTED_PTX_VERSION, GPUOPT_ERR_BUILD,
     "the PTX is of a newer version than this driver can compile: update the driver, or name an "
     "NVRTC no newer than the driver with GPUOPT_NVRTC_LIBRARY"},
    {GPO_CUDA_ERROR_NO_BINARY_FOR_GPU, GPUOPT_ERR_BUILD,
     "the module holds no code this GPU can run"},
    {GPO_CUDA_ERROR_INVALID_PTX, GPUOPT_ERR_BUILD, "the driver's PTX compiler rejected the PTX"},
    {GPO_CUDA_ERROR_INVALID_IMAGE, GPUOPT_ERR_BUILD, "the driver does not accept the module image"},
    {GPO_CUDA_ERROR_JIT_COMPILER_NOT_FOUND, GPUOPT_ERR_BUILD,
     "the driver's PTX compiler (libnvidia-ptxjitcompiler) is missing"},
    {GPO_CUDA_ERROR_JIT_COMPILATION_DISABLED, GPUOPT_ERR_BUILD,
     "PTX compilation is disabled (CUDA_DISABLE_PTX_JIT)"},
};

static const result_meaning launch_words[] = {
    {GPO_CUDA_ERROR_NOT_SUPPORTED, GPUOPT_ERR_UNSUPPORTED,
     "this driver cannot run kernels on the device (a test double or a driver without a GPU "
     "behind it): measuring on the device needs a real NVIDIA GPU with its driver"},
    {GPO_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, GPUOPT_ERR_LAUNCH,
     "one block needs more registers or shared memory than a multiprocessor has: use a smaller "
     "block"},
    {GPO_CUDA_ERROR_INVALID_VALUE, GPUOPT_ERR_LAUNCH,
     "the grid, block or shared memory is outside what the kernel and device accept"},
    {GPO_CUDA_ERROR_LAUNCH_TIMEOUT, GPUOPT_ERR_FAULT,
     "the kernel ran past the display watchdog's limit"},
    {GPO_CUDA_ERROR_ILLEGAL_ADDRESS, GPUOPT_ERR_FAULT,
     "a thread read or wrote memory outside every allocation (an index out of bounds)"},
    {GPO_CUDA_ERROR_MISALIGNED_ADDRESS, GPUOPT_ERR_FAULT,
     "a thread accessed memory at an address not aligned to the access's size"},
    {GPO_CUDA_ERROR_ASSERT, GPUOPT_ERR_FAULT, "a device-side assert() failed"},
    {GPO_CUDA_ERROR_LAUNCH_FAILED, GPUOPT_ERR_FAULT, "an exception on the device while it ran"},
};

/* A failed load or launch in words: the call, the driver's words, and what
 * they mean when `table` knows. `fallback` is the status otherwise; a
 * sticky result is GPUOPT_ERR_FAULT either way. */
static gpuopt_status explain(gpo_rt *rt, const char *op, const char *call, gpo_cu_result r,
                             const result_meaning *table, size_t n, gpuopt_status fallback)
{
    for (size_t i = 0; i < n; i++) {
        if (table[i].result != r)
            continue;
        char name[256];
        gpo_cuda_result_words(rt->api, r, name, sizeof name);
        if (gpo_cuda_result_sticky(r))
            return gpo_fail(GPUOPT_ERR_FAULT, "%s %s: %s failed: %s: %s; %s", rt->what, op, call,
                            name, table[i].words, GPO_CUDA_STICKY_WORDS);
        return gpo_fail(table[i].status, "%s %s: %s failed: %s: %s", rt->what, op, call, name,
                        table[i].words);
    }
    return rt_fail(rt, fallback, op, call, r);
}

/* A failure of running code (a launch, or waiting for one) in words, with
 * what the result means (a fault is sticky, a test double cannot run code,
 * ...). */
static gpuopt_status launch_fail(gpo_rt *rt, const char *op, const char *call, gpo_cu_result r)
{
    return explain(rt, op, call, r, launch_words, sizeof launch_words / sizeof launch_words[0],
                   GPUOPT_ERR_LAUNCH);
}

/* ---- context and timing ------------------------------------------------------ */

/* Pushes the session's context; GPUOPT_ERR_DRIVER with the detail set. */
static gpuopt_status rt_enter(gpo_rt *rt, const char *op)
{
    return rt_call(rt, op, "cuCtxPushCurrent_v2", rt->api->cuCtxPushCurrent(rt->ctx));
}

/* Pops it again. Returns `st`, or a pop failure when `st` was GPUOPT_OK. */
static gpuopt_status rt_leave(gpo_rt *rt, gpuopt_status st, const char *op)
{
    gpo_cu_context popped = NULL;
    gpo_cu_result r = rt->api->cuCtxPopCurrent(&popped);
    if (r != GPO_CUDA_SUCCESS && st == GPUOPT_OK)
        return rt_fail(rt, GPUOPT_ERR_DRIVER, op, "cuCtxPopCurrent_v2", r);
    return st;
}

/* Waits for everything the session queued. Errors of the work itself
 * surface here (a kernel's fault), so they are launch errors. */
static gpuopt_status wait_stream(gpo_rt *rt, const char *op)
{
    gpo_cu_result r = rt->api->cuStreamSynchronize(rt->stream);
    return r == GPO_CUDA_SUCCESS ? GPUOPT_OK : launch_fail(rt, op, "cuStreamSynchronize", r);
}

/* Records the two session events on the session's stream around what the
 * caller enqueues between the calls, then waits for the second and stores
 * the time between them in ns. */
static gpuopt_status time_begin(gpo_rt *rt, const char *op)
{
    return rt_call(rt, op, "cuEventRecord", rt->api->cuEventRecord(rt->ev_start, rt->stream));
}

static gpuopt_status time_end(gpo_rt *rt, const char *op, double *device_ns)
{
    float ms = 0.0f;
    gpo_cu_result r = rt->api->cuEventRecord(rt->ev_end, rt->stream);
    if (r != GPO_CUDA_SUCCESS)
        return rt_fail(rt, GPUOPT_ERR_DRIVER, op, "cuEventRecord", r);
    /* Errors of the work itself surface here, so they are launch errors. */
    r = rt->api->cuEventSynchronize(rt->ev_end);
    if (r != GPO_CUDA_SUCCESS)
        return launch_fail(rt, op, "cuEventSynchronize", r);
    const char *call = GPO_CUDA_ELAPSED_CALL(rt->api);
    r = rt->api->cuEventElapsedTime(&ms, rt->ev_start, rt->ev_end);
    if (r != GPO_CUDA_SUCCESS)
        return rt_fail(rt, GPUOPT_ERR_DRIVER, op, call, r);
    /* The events resolve about half a microsecond (cuEventElapsedTime in
     * cuda.h): shorter work reads 0, which is no measurement. */
    return gpo_rt_event_ns(ms, rt->what, op, call, device_ns);
}

/* ---- destroying objects (inside an entered op, out of the registry) -------- */

static void buf_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    rt->api->cuMemFree(((gpo_rt_buf *)o)->ptr);
}

static void pin_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    rt->api->cuMemFreeHost(((gpo_rt_pinned *)o)->ptr);
}

/* A CUfunction belongs to its module: the driver has nothing to release. */
static void kernel_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    (void)rt;
    gpo_rt_args_free(&((gpo_rt_kernel *)o)->args);
}

static void prog_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    rt->api->cuModuleUnload(((gpo_rt_prog *)o)->module);
}

static const gpo_rt_destroy_fn destroyers[GPO_RT_KINDS] = {
    [GPO_RT_BUFFER] = buf_destroy,
    [GPO_RT_PROGRAM] = prog_destroy,
    [GPO_RT_KERNEL] = kernel_destroy,
    [GPO_RT_PINNED] = pin_destroy,
};

/* ---- session ---------------------------------------------------------------- */

/* The driver calls a session needs: all of them, or it cannot work. They
 * are the runtime's calls of cuda_api.h but cuFuncGetParamInfo, used when
 * present, and the unversioned elapsed time (checked 0), a fallback. */
static const char *missing_call(const gpo_cuda_api *a)
{
    typedef void (*any_fn)(void);
    static const struct {
        size_t offset;
        const char *name;
        int checked;
    } calls[] = {
#define CALL_(field, symbol, required, checked, params)                                            \
    {offsetof(gpo_cuda_api, field), #symbol, checked},
        {offsetof(gpo_cuda_api, cuDevicePrimaryCtxRetain), "cuDevicePrimaryCtxRetain", 1},
        {offsetof(gpo_cuda_api, cuDevicePrimaryCtxRelease), "cuDevicePrimaryCtxRelease_v2", 1},
        {offsetof(gpo_cuda_api, cuCtxPushCurrent), "cuCtxPushCurrent_v2", 1},
        {offsetof(gpo_cuda_api, cuCtxPopCurrent), "cuCtxPopCurrent_v2", 1},
        GPO_CUDA_RUNTIME_API(CALL_)
#undef CALL_
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        any_fn f;
        memcpy(&f, (const char *)a + calls[i].offset, sizeof f);
        if (!calls[i].checked || f || calls[i].offset == offsetof(gpo_cuda_api, cuFuncGetParamInfo))
            continue;
        /* cuda_load.c falls back to the unversioned elapsed time: both are
         * missing, and the call is named as the driver's headers name it. */
        return calls[i].offset == offsetof(gpo_cuda_api, cuEventElapsedTime) ? "cuEventElapsedTime"
                                                                             : calls[i].name;
    }
    return NULL;
}

/* The device facts a session checks launches against. */
static gpuopt_status read_limits(gpo_rt *rt)
{
    static const struct {
        int attr;
        const char *name;
        size_t offset;
    } reads[] = {
#define LIMIT_(attr, field) {GPO_CU_DEVICE_ATTRIBUTE_##attr, #attr, offsetof(gpo_rt, field)}
        LIMIT_(COMPUTE_CAPABILITY_MAJOR, cc_major),
        LIMIT_(COMPUTE_CAPABILITY_MINOR, cc_minor),
        LIMIT_(MAX_THREADS_PER_BLOCK, max_threads),
        LIMIT_(MAX_BLOCK_DIM_X, max_block[0]),
        LIMIT_(MAX_BLOCK_DIM_Y, max_block[1]),
        LIMIT_(MAX_BLOCK_DIM_Z, max_block[2]),
        LIMIT_(MAX_GRID_DIM_X, max_grid[0]),
        LIMIT_(MAX_GRID_DIM_Y, max_grid[1]),
        LIMIT_(MAX_GRID_DIM_Z, max_grid[2]),
        LIMIT_(MAX_SHARED_MEMORY_PER_BLOCK, shared_per_block),
#undef LIMIT_
    };
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        int v = 0;
        gpo_cu_result r = rt->api->cuDeviceGetAttribute(&v, reads[i].attr, rt->dev);
        if (r != GPO_CUDA_SUCCESS) {
            char call[96];
            gpo_snprintf(call, sizeof call, "cuDeviceGetAttribute(%s)", reads[i].name);
            return rt_fail(rt, GPUOPT_ERR_DRIVER, "open", call, r);
        }
        memcpy((char *)rt + reads[i].offset, &v, sizeof v);
    }
    /* The opt-in limit came with Volta (CUDA 9.0); a driver or device that
     * does not know it has none beyond the default. */
    gpo_cu_result r = rt->api->cuDeviceGetAttribute(
        &rt->shared_optin, GPO_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, rt->dev);
    if (r == GPO_CUDA_ERROR_INVALID_VALUE || r == GPO_CUDA_ERROR_NOT_SUPPORTED)
        rt->shared_optin = 0;
    else if (r != GPO_CUDA_SUCCESS)
        return rt_fail(rt, GPUOPT_ERR_DRIVER, "open",
                       "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)", r);
    if (rt->shared_optin < rt->shared_per_block)
        rt->shared_optin = rt->shared_per_block;
    return GPUOPT_OK;
}

static void rt_close(gpo_rt *rt);

static gpuopt_status rt_open(void *backend_state, const gpo_route *route, gpo_rt **out)
{
    gpo_cuda_state *s = backend_state;
    gpuopt_status st = GPUOPT_OK;
    gpo_rt *rt = NULL;
    char what[48];

    assert(s && route && route->index >= 0 && out);
    *out = NULL;
    gpo_snprintf(what, sizeof what, "cuda:%d runtime: running code", (int)route->index);
    st = gpo_cuda_driver_ready(s, what);
    if (st)
        return st;
    const char *lacking = missing_call(&s->api);
    if (lacking)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "cuda:%d runtime: the CUDA driver library lacks %s, which running code "
                        "needs (a driver older than CUDA 11.0, or not a full driver)",
                        (int)route->index, lacking);

    rt = calloc(1, sizeof *rt);
    if (!rt)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda:%d runtime: out of memory", (int)route->index);
    gpo_rt_objects_init(&rt->objects);
    rt->s = s;
    rt->api = &s->api;
    gpo_snprintf(rt->what, sizeof rt->what, "cuda:%d", (int)route->index);

    st = rt_call(rt, "open", "cuDeviceGet", s->api.cuDeviceGet(&rt->dev, route->index));
    if (st || (st = read_limits(rt)))
        goto fail;
    gpo_cu_result r = s->api.cuDevicePrimaryCtxRetain(&rt->ctx, rt->dev);
    if (r != GPO_CUDA_SUCCESS) {
        rt->ctx = NULL;
        st = rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "cuDevicePrimaryCtxRetain", r);
        goto fail;
    }
    st = rt_enter(rt, "open");
    if (st)
        goto fail;
    r = s->api.cuStreamCreate(&rt->stream, GPO_CU_STREAM_NON_BLOCKING);
    if (r != GPO_CUDA_SUCCESS) {
        rt->stream = NULL;
        st = rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "cuStreamCreate(CU_STREAM_NON_BLOCKING)", r);
    }
    gpo_cu_event *events[2] = {&rt->ev_start, &rt->ev_end};
    for (int i = 0; i < 2 && !st; i++) {
        r = s->api.cuEventCreate(events[i], GPO_CU_EVENT_DEFAULT);
        if (r != GPO_CUDA_SUCCESS) {
            *events[i] = NULL;
            st = rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "cuEventCreate", r);
        }
    }
    st = rt_leave(rt, st, "open");
    if (st)
        goto fail;
    *out = rt;
    return GPUOPT_OK;
fail:
    rt_close(rt);
    return st;
}

static void rt_close(gpo_rt *rt)
{
    if (!rt)
        return;
    if (rt->ctx) {
        /* Everything is released inside the context, also when pushing it
         * fails: the calls then fail harmlessly and releasing the primary
         * context below frees what they could not (the driver destroys a
         * primary context with its last reference). */
        int pushed = rt_enter(rt, "close") == GPUOPT_OK;
        if (pushed && rt->stream)
            rt->api->cuStreamSynchronize(rt->stream);
        gpo_rt_objects_clear(&rt->objects, rt, destroyers);
        if (rt->ev_start)
            rt->api->cuEventDestroy(rt->ev_start);
        if (rt->ev_end)
            rt->api->cuEventDestroy(rt->ev_end);
        if (rt->stream)
            rt->api->cuStreamDestroy(rt->stream);
        if (pushed)
            rt_leave(rt, GPUOPT_OK, "close");
        rt->api->cuDevicePrimaryCtxRelease(rt->dev);
    }
    gpo_rt_objects_destroy(&rt->objects);
    free(rt);
}

static const char *rt_compiler_version(gpo_rt *rt)
{
    const gpo_nvrtc *nv = NULL;
    char compiler[64], driver[16];
    assert(rt);
    if (rt->compiler[0])
        return rt->compiler;
    gpo_cuda_version_text(rt->s->driver_version, driver, sizeof driver);
    if (gpo_cuda_nvrtc(rt->s, &nv) == GPUOPT_OK)
        gpo_nvrtc_version_text(nv, compiler, sizeof compiler);
    else
        gpo_strlcpy(compiler, "NVRTC unavailable", sizeof compiler);
    /* Cache keys need what decides the machine code: compiler, driver
     * (it JITs PTX) and the device's architecture. */
    gpo_snprintf(rt->compiler, sizeof rt->compiler, "%s; CUDA driver %s; sm_%d%d", compiler,
                 driver[0] ? driver : "unknown", rt->cc_major, rt->cc_minor);
    return rt->compiler;
}

static gpuopt_status rt_finish(gpo_rt *rt)
{
    assert(rt);
    gpuopt_status st = rt_enter(rt, "finish");
    if (st)
        return st;
    st = wait_stream(rt, "finish");
    return rt_leave(rt, st, "finish");
}

/* ---- buffers ---------------------------------------------------------------- */

/* Device memory (GPO_RT_BUFFER) or page-locked host memory (GPO_RT_PINNED),
 * registered. */
static gpuopt_status alloc(gpo_rt *rt, size_t bytes, gpo_rt_kind kind, gpo_rt_obj **out)
{
    const char *op = kind == GPO_RT_PINNED ? "host_alloc_pinned" : "buffer_alloc";
    gpo_rt_buf *b = NULL;
    gpo_rt_pinned *p = NULL;
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "cuda %s: size 0 (at least 1 byte)", op);
    gpo_rt_obj *o = calloc(1, kind == GPO_RT_PINNED ? sizeof *p : sizeof *b);
    if (!o)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda %s: out of memory", op);
    if (kind == GPO_RT_PINNED)
        p = (gpo_rt_pinned *)o;
    else
        b = (gpo_rt_buf *)o;
    gpuopt_status st = rt_enter(rt, op);
    if (st) {
        free(o);
        return st;
    }
    gpo_cu_result r =
        p ? rt->api->cuMemAllocHost(&p->ptr, bytes) : rt->api->cuMemAlloc(&b->ptr, bytes);
    if (r != GPO_CUDA_SUCCESS) {
        char call[64];
        gpo_snprintf(call, sizeof call, "%s(%zu bytes)", p ? "cuMemAllocHost_v2" : "cuMemAlloc_v2",
                     bytes);
        /* Device memory running out is the device's answer, not the host's:
         * GPUOPT_ERR_DRIVER, so a tier falls back instead of failing the plan. */
        st = rt_fail(rt, GPUOPT_ERR_DRIVER, op, call, r);
    }
    st = rt_leave(rt, st, op);
    if (st) {
        if (r == GPO_CUDA_SUCCESS) /* allocated, then the pop failed */
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
    assert(rt && out);
    gpuopt_status st = alloc(rt, bytes, GPO_RT_BUFFER, &o);
    *out = (gpo_rt_buf *)o;
    return st;
}

/* Unregisters `o`, a live object of this session, and destroys it inside
 * the context (also when pushing it fails, as rt_close does). */
static void release(gpo_rt *rt, gpo_rt_obj *o, const char *op)
{
    int pushed = rt_enter(rt, op) == GPUOPT_OK;
    gpo_rt_objects_release(&rt->objects, rt, o, destroyers);
    if (pushed)
        rt_leave(rt, GPUOPT_OK, op);
}

static void rt_buffer_free(gpo_rt *rt, gpo_rt_buf *b)
{
    if (gpo_rt_objects_owns(&rt->objects, b, GPO_RT_BUFFER))
        release(rt, &b->h, "buffer_free");
}

/* A copy's buffer and range checked, and the context entered for it. */
static gpuopt_status enter_range(gpo_rt *rt, const gpo_rt_buf *b, size_t offset, size_t bytes,
                                 const char *op)
{
    gpuopt_status st = mine(rt, b, GPO_RT_BUFFER, op);
    if (!st && (bytes == 0 || offset > b->size || bytes > b->size - offset))
        st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                      "%s %s: %zu bytes at offset %zu do not fit a buffer of %zu bytes "
                      "(1 byte at least)",
                      rt->what, op, bytes, offset, b->size);
    return st ? st : rt_enter(rt, op);
}

/* A blocking copy between the host and a buffer: the stream is waited for,
 * so the DMA has landed, not only been staged. */
static gpuopt_status host_copy(gpo_rt *rt, gpo_rt_buf *b, size_t offset, void *host, size_t bytes,
                               int to_device)
{
    const char *op = to_device ? "buffer_write" : "buffer_read";
    assert(host);
    gpuopt_status st = enter_range(rt, b, offset, bytes, op);
    if (st)
        return st;
    gpo_cu_result r = to_device
                          ? rt->api->cuMemcpyHtoDAsync(b->ptr + offset, host, bytes, rt->stream)
                          : rt->api->cuMemcpyDtoHAsync(host, b->ptr + offset, bytes, rt->stream);
    if (r != GPO_CUDA_SUCCESS)
        st = rt_fail(rt, GPUOPT_ERR_DRIVER, op,
                     to_device ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyDtoHAsync_v2", r);
    else
        st = wait_stream(rt, op);
    return rt_leave(rt, st, op);
}

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
    gpuopt_status st = mine(rt, dst, GPO_RT_BUFFER, "buffer_copy");
    if (!st)
        st = mine(rt, src, GPO_RT_BUFFER, "buffer_copy");
    if (st)
        return st;
    if (dst == src)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s buffer_copy: source and destination are the same buffer", rt->what);
    if (bytes == 0 || bytes > dst->size || bytes > src->size)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s buffer_copy: %zu bytes between buffers of %zu and %zu bytes", rt->what,
                        bytes, src->size, dst->size);
    if ((st = rt_enter(rt, "buffer_copy")))
        return st;
    if (device_ns) {
        *device_ns = 0.0;
        st = time_begin(rt, "buffer_copy");
    }
    if (!st)
        st = rt_call(rt, "buffer_copy", "cuMemcpyDtoDAsync_v2",
                     rt->api->cuMemcpyDtoDAsync(dst->ptr, src->ptr, bytes, rt->stream));
    if (!st && device_ns)
        st = time_end(rt, "buffer_copy", device_ns);
    return rt_leave(rt, st, "buffer_copy");
}

/* ---- pinned host memory --------------------------------------------------------
 * Page-locked memory from cuMemAllocHost_v2: copies from it run at full
 * link speed and need no staging copy (CUDA C++ Best Practices Guide,
 * "Pinned Memory"). */

static gpuopt_status rt_host_alloc_pinned(gpo_rt *rt, size_t bytes, void **ptr)
{
    gpo_rt_obj *o = NULL;
    assert(rt && ptr);
    gpuopt_status st = alloc(rt, bytes, GPO_RT_PINNED, &o);
    *ptr = st ? NULL : ((gpo_rt_pinned *)o)->ptr;
    return st;
}

static void rt_host_free_pinned(gpo_rt *rt, void *ptr)
{
    assert(rt);
    gpo_rt_pinned *p = gpo_rt_objects_pinned(&rt->objects, ptr);
    if (p)
        release(rt, &p->obj, "host_free_pinned");
}

/* ---- programs --------------------------------------------------------------- */

static gpuopt_status rt_program_build(gpo_rt *rt, const char *source, const char *options,
                                      gpo_rt_prog **out, char **log_out)
{
    const gpo_nvrtc *nv = NULL;
    gpo_nvrtc_image img;
    gpo_rt_prog *p = NULL;
    char *log = NULL;
    gpuopt_status st;

    assert(rt && source && out);
    memset(&img, 0, sizeof img);
    if (log_out)
        *log_out = NULL;
    *out = NULL;
    if (!source[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s program_build: empty source", rt->what);
    st = gpo_cuda_nvrtc(rt->s, &nv);
    if (st)
        return st;
    st = gpo_nvrtc_compile(nv, source, options, rt->cc_major, rt->cc_minor, &img, &log);
    if (st)
        goto out;
    p = calloc(1, sizeof *p);
    if (!p) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda program_build: out of memory");
        goto out;
    }
    st = rt_enter(rt, "program_build");
    if (st)
        goto out;
    gpo_cu_result r = rt->api->cuModuleLoadData(&p->module, img.data);
    if (r != GPO_CUDA_SUCCESS) {
        p->module = NULL;
        char call[96];
        gpo_snprintf(call, sizeof call, "cuModuleLoadData(%s for %s from %s)",
                     img.cubin ? "CUBIN" : "PTX", img.target, nv->library);
        st = explain(rt, "program_build", call, r, load_words,
                     sizeof load_words / sizeof load_words[0], GPUOPT_ERR_DRIVER);
        if (st == GPUOPT_ERR_BUILD) {
            /* The caller reads build failures from the log. */
            free(log);
            log = gpo_strdup(gpo_detail_get());
        }
    }
    st = rt_leave(rt, st, "program_build");
out:
    gpo_nvrtc_image_free(&img);
    if (st) {
        if (p && p->module)
            rt->api->cuModuleUnload(p->module);
        free(p);
    } else {
        gpo_rt_objects_add(&rt->objects, &p->h, GPO_RT_PROGRAM);
        *out = p;
    }
    if (log_out)
        *log_out = log;
    else
        free(log);
    return st;
}

static void rt_program_free(gpo_rt *rt, gpo_rt_prog *p)
{
    if (gpo_rt_objects_owns(&rt->objects, p, GPO_RT_PROGRAM))
        release(rt, &p->h, "program_free"); /* and its kernels */
}

/* ---- kernels ------------------------------------------------------------------ */

/* Reads the parameter sizes when the driver can tell (cuFuncGetParamInfo,
 * CUDA 12.4+): an index past the last answers CUDA_ERROR_INVALID_VALUE;
 * CUDA_ERROR_NOT_SUPPORTED means this module cannot say. */
static gpuopt_status read_params(gpo_rt *rt, gpo_rt_kernel *k)
{
    k->n_params = -1;
    if (!rt->api->cuFuncGetParamInfo)
        return GPUOPT_OK;
    for (int i = 0; i <= GPO_RT_MAX_ARGS; i++) {
        size_t offset = 0, size = 0;
        gpo_cu_result r = rt->api->cuFuncGetParamInfo(k->func, (size_t)i, &offset, &size);
        if (r == GPO_CUDA_ERROR_INVALID_VALUE) {
            k->n_params = i;
            return GPUOPT_OK;
        }
        if (r == GPO_CUDA_ERROR_NOT_SUPPORTED)
            return GPUOPT_OK;
        if (r != GPO_CUDA_SUCCESS)
            return rt_fail(rt, GPUOPT_ERR_DRIVER, "kernel_create", "cuFuncGetParamInfo", r);
        if (i == GPO_RT_MAX_ARGS)
            break;
        k->param_size[i] = size;
    }
    return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                    "%s kernel_create: kernel %s takes more than %d parameters", rt->what, k->name,
                    GPO_RT_MAX_ARGS);
}

/* The kernel's static shared memory, and so the dynamic shared memory it
 * may use by default: MAX_SHARED_MEMORY_PER_BLOCK minus it, or 0 when the
 * static part alone is larger (cuda.h, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_
 * SIZE_BYTES). */
static gpuopt_status read_static_shared(gpo_rt *rt, gpo_rt_kernel *k)
{
    int v = 0;
    gpuopt_status st =
        rt_call(rt, "kernel_create", "cuFuncGetAttribute(SHARED_SIZE_BYTES)",
                rt->api->cuFuncGetAttribute(&v, GPO_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->func));
    if (st)
        return st;
    k->static_shared = v > 0 ? v : 0;
    k->dynamic_max = rt->shared_per_block > k->static_shared
                         ? (unsigned int)(rt->shared_per_block - k->static_shared)
                         : 0;
    return GPUOPT_OK;
}

static gpuopt_status rt_kernel_create(gpo_rt *rt, gpo_rt_prog *p, const char *name,
                                      gpo_rt_kernel **out)
{
    assert(name && out);
    *out = NULL;
    gpuopt_status st = mine(rt, p, GPO_RT_PROGRAM, "kernel_create");
    if (st)
        return st;
    if (!name[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s kernel_create: an empty kernel name",
                        rt->what);
    gpo_rt_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "%s kernel_create: out of memory", rt->what);
    gpo_strlcpy(k->name, name, sizeof k->name);
    k->h.owner = p;
    if ((st = rt_enter(rt, "kernel_create"))) {
        free(k);
        return st;
    }
    gpo_cu_result r = rt->api->cuModuleGetFunction(&k->func, p->module, name);
    if (r == GPO_CUDA_ERROR_NOT_FOUND)
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND,
                      "%s: the program has no kernel named \"%s\" (declare kernels extern \"C\" "
                      "so NVRTC does not mangle their names)",
                      rt->what, name);
    else if (r != GPO_CUDA_SUCCESS)
        st = rt_fail(rt, GPUOPT_ERR_DRIVER, "kernel_create", "cuModuleGetFunction", r);
    if (!st)
        st = read_params(rt, k);
    if (!st)
        st = read_static_shared(rt, k);
    st = rt_leave(rt, st, "kernel_create");
    if (st) {
        free(k);
        return st;
    }
    gpo_rt_objects_add(&rt->objects, &k->h, GPO_RT_KERNEL);
    *out = k;
    return GPUOPT_OK;
}

static void rt_kernel_free(gpo_rt *rt, gpo_rt_kernel *k)
{
    if (gpo_rt_objects_owns(&rt->objects, k, GPO_RT_KERNEL))
        gpo_rt_objects_release(&rt->objects, rt, &k->h, destroyers);
}

static gpuopt_status set_arg(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index, const void *value,
                             size_t size, const char *op)
{
    if (index >= GPO_RT_MAX_ARGS || (k->n_params >= 0 && index >= (uint32_t)k->n_params))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s %s: kernel %s has no parameter %u (it takes %d)", rt->what, op, k->name,
                        index, k->n_params >= 0 ? k->n_params : GPO_RT_MAX_ARGS);
    if (k->n_params >= 0 && k->param_size[index] != size)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s %s: parameter %u of kernel %s is %zu bytes, not %zu", rt->what, op,
                        index, k->name, k->param_size[index], size);
    return gpo_rt_args_set(&k->args, index, value, size, rt->what, op);
}

static gpuopt_status rt_kernel_set_buffer(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                          gpo_rt_buf *b)
{
    gpuopt_status st = mine(rt, k, GPO_RT_KERNEL, "kernel_set_buffer");
    if (!st)
        st = mine(rt, b, GPO_RT_BUFFER, "kernel_set_buffer");
    return st ? st : set_arg(rt, k, index, &b->ptr, sizeof b->ptr, "kernel_set_buffer");
}

static gpuopt_status rt_kernel_set_scalar(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                          const void *value, size_t size)
{
    assert(value);
    gpuopt_status st = mine(rt, k, GPO_RT_KERNEL, "kernel_set_scalar");
    if (!st && size == 0)
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s kernel_set_scalar: a value of 0 bytes",
                      rt->what);
    return st ? st : set_arg(rt, k, index, value, size, "kernel_set_scalar");
}

/* CUDA has one dynamic shared-memory area per launch (extern __shared__),
 * not a parameter: `index` takes no parameter slot, and the bytes become
 * every later launch's dynamic shared memory. More than the device lets a
 * block opt into, beside the kernel's static shared memory, is refused
 * here with the numbers; the opt-in itself happens at the launch. */
static gpuopt_status rt_kernel_set_local(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index, size_t bytes)
{
    (void)index;
    gpuopt_status st = mine(rt, k, GPO_RT_KERNEL, "kernel_set_local");
    if (st)
        return st;
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s kernel_set_local: 0 bytes", rt->what);
    if (bytes > (size_t)rt->shared_optin - (size_t)k->static_shared || bytes > INT_MAX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s kernel_set_local: %zu bytes of dynamic shared memory for kernel %s, "
                        "beside its %d bytes of static shared memory, exceed the %d bytes a block "
                        "may opt into on this device (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_"
                        "BLOCK_OPTIN; %d without opting in)",
                        rt->what, bytes, k->name, k->static_shared, rt->shared_optin,
                        rt->shared_per_block);
    k->shared_bytes = (unsigned int)bytes;
    return GPUOPT_OK;
}

/* Raises the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES when this launch
 * wants more dynamic shared memory than it allows now (kernel_set_local
 * kept the request within the opt-in limit). */
static gpuopt_status opt_in_shared(gpo_rt *rt, gpo_rt_kernel *k)
{
    if (k->shared_bytes <= k->dynamic_max)
        return GPUOPT_OK;
    gpo_cu_result r = rt->api->cuFuncSetAttribute(
        k->func, GPO_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)k->shared_bytes);
    if (r != GPO_CUDA_SUCCESS) {
        char call[96];
        gpo_snprintf(call, sizeof call, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %u)",
                     k->shared_bytes);
        return rt_fail(rt, GPUOPT_ERR_LAUNCH, "launch", call, r);
    }
    k->dynamic_max = k->shared_bytes;
    return GPUOPT_OK;
}

static gpuopt_status kernel_threads(gpo_rt *rt, gpo_rt_kernel *k, const char *op, size_t *out)
{
    int v = 0;
    gpo_cu_result r =
        rt->api->cuFuncGetAttribute(&v, GPO_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->func);
    if (r != GPO_CUDA_SUCCESS)
        return rt_fail(rt, GPUOPT_ERR_DRIVER, op, "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)", r);
    if (v <= 0)
        return gpo_fail(GPUOPT_ERR_DRIVER,
                        "%s %s: the driver says kernel %s runs %d threads per block", rt->what, op,
                        k->name, v);
    *out = (size_t)v;
    return GPUOPT_OK;
}

static gpuopt_status rt_kernel_max_group(gpo_rt *rt, gpo_rt_kernel *k, size_t *max_items)
{
    assert(max_items);
    *max_items = 0;
    gpuopt_status st = mine(rt, k, GPO_RT_KERNEL, "kernel_max_group");
    if (st || (st = rt_enter(rt, "kernel_max_group")))
        return st;
    st = kernel_threads(rt, k, "kernel_max_group", max_items);
    return rt_leave(rt, st, "kernel_max_group");
}

/* ---- launch ---------------------------------------------------------------------- */

static gpuopt_status rt_launch(gpo_rt *rt, gpo_rt_kernel *k, uint32_t dims, const size_t global[3],
                               const size_t *local, double *device_ns)
{
    void *params[GPO_RT_MAX_ARGS];
    size_t g[3], l[3], cap = 0;
    int n = 0;

    assert(global);
    if (device_ns)
        *device_ns = 0.0;
    gpuopt_status st = mine(rt, k, GPO_RT_KERNEL, "launch");
    if (st)
        return st;
    int unset = gpo_rt_args_pack(&k->args, k->n_params, params, &n);
    if (unset >= 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s launch: parameter %d of kernel %s is not set", rt->what, unset,
                        k->name);
    if ((st = rt_enter(rt, "launch")))
        return st;
    /* Without local[], dimension 0 gets the largest block that divides it
     * and the kernel can run, the others 1 (OpenCL leaves this to the
     * runtime; CUDA has no such choice). */
    st = kernel_threads(rt, k, "launch", &cap);
    if (!st)
        st = gpo_rt_geometry(rt->what, k->name, dims, global, local,
                             local ? 0 : gpo_rt_largest_divisor(global[0], cap), rt->max_block,
                             rt->max_grid, cap, g, l);
    if (!st)
        st = opt_in_shared(rt, k);
    if (!st && device_ns)
        st = time_begin(rt, "launch");
    if (!st) {
        gpo_cu_result r = rt->api->cuLaunchKernel(
            k->func, (unsigned)(g[0] / l[0]), (unsigned)(g[1] / l[1]), (unsigned)(g[2] / l[2]),
            (unsigned)l[0], (unsigned)l[1], (unsigned)l[2], k->shared_bytes, rt->stream,
            n ? params : NULL, NULL);
        if (r != GPO_CUDA_SUCCESS)
            st = launch_fail(rt, "launch", "cuLaunchKernel", r);
    }
    if (!st && device_ns)
        st = time_end(rt, "launch", device_ns);
    return rt_leave(rt, st, "launch");
}

const gpo_runtime_ops gpo_cuda_runtime_ops = {
    .language = "cuda",
    .faults_end_process = 1, /* cuda.h: sticky errors (gpo_cuda_result_sticky) */
    GPO_RUNTIME_OPS_FUNCTIONS,
    /* CUDA Programming Guide, "CUDA Graphs" (stream capture); PyTorch docs,
     * "CUDA Graphs" and torch.compile's "reduce-overhead" mode. */
    .graph_api = "a CUDA graph (cuStreamBeginCapture, cuGraphInstantiate, cuGraphLaunch; in "
                 "PyTorch torch.compile(mode=\"reduce-overhead\") or torch.cuda.CUDAGraph)",
    .mark_record = gpo_cuda_mark_record,
    .mark_elapsed = gpo_cuda_mark_elapsed,
    .mark_free = gpo_cuda_mark_free,
};
