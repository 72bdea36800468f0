/* The CUDA runtime ops for tier 2 (backend.h, gpo_runtime_ops): the
 * session (primary context and two timing events), device buffers and
 * copies, pinned host memory, and the ops table. Programs, kernels and
 * launches are in cuda_rt_kernel.c; what both share is in cuda_rt.h.
 *
 * All work goes to the legacy default stream, in order: synchronous copies
 * (cuMemcpyHtoD_v2/DtoH_v2) wait for earlier launches, and events recorded
 * on it bracket exactly the copy or launch between them (CUDA Driver API,
 * "API synchronization behavior" and "Stream synchronization behavior"). */
#include <stdlib.h>
#include <string.h>

#include "cuda_rt.h"
#include "util/strutil.h"

/* ---- objects ------------------------------------------------------------ */

void gpo_cuda_rt_link(gpo_rt *rt, int list, rt_obj *o, uint32_t kind)
{
    rt_obj *head = &rt->lists[list];
    o->kind = kind;
    o->rt = rt;
    o->prev = head;
    o->next = head->next;
    head->next->prev = o;
    head->next = o;
}

void gpo_cuda_rt_unlink(rt_obj *o)
{
    o->prev->next = o->next;
    o->next->prev = o->prev;
    o->prev = o->next = NULL;
    o->kind = 0; /* a stale handle is refused, never reused */
    o->rt = NULL;
}

/* Looks the handle up in the session's list instead of reading it, so a
 * freed handle (or one of another session) is refused without touching
 * freed memory. Sessions hold a handful of objects: the walk is short. */
int gpo_cuda_rt_owns(const gpo_rt *rt, const void *obj, uint32_t kind)
{
    int list = kind == RT_BUF      ? RT_LIST_BUF
               : kind == RT_PROG   ? RT_LIST_PROG
               : kind == RT_KERNEL ? RT_LIST_KERNEL
                                   : RT_LIST_PIN;
    if (!rt || !obj)
        return 0;
    for (const rt_obj *o = rt->lists[list].next; o != &rt->lists[list]; o = o->next)
        if ((const void *)o == obj)
            return o->kind == kind;
    return 0;
}

/* ---- words and context ----------------------------------------------------- */

gpuopt_status gpo_cuda_rt_fail(gpo_rt *rt, gpuopt_status status, const char *op, const char *call,
                               gpo_cu_result r)
{
    char what[96];
    gpo_snprintf(what, sizeof what, "%s %s", rt->what, op);
    return gpo_cuda_fail_call(rt->s, status, what, call, r);
}

gpuopt_status gpo_cuda_rt_enter(gpo_rt *rt, const char *op)
{
    gpo_cu_result r = rt->api->cuCtxPushCurrent(rt->ctx);
    return r == GPO_CUDA_SUCCESS
               ? GPUOPT_OK
               : gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, op, "cuCtxPushCurrent_v2", r);
}

gpuopt_status gpo_cuda_rt_leave(gpo_rt *rt, gpuopt_status st, const char *op)
{
    gpo_cu_context popped = NULL;
    gpo_cu_result r = rt->api->cuCtxPopCurrent(&popped);
    if (r != GPO_CUDA_SUCCESS && st == GPUOPT_OK)
        return gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, op, "cuCtxPopCurrent_v2", r);
    return st;
}

gpuopt_status gpo_cuda_rt_time_begin(gpo_rt *rt, const char *op)
{
    gpo_cu_result r = rt->api->cuEventRecord(rt->ev_start, NULL);
    return r == GPO_CUDA_SUCCESS ? GPUOPT_OK
                                 : gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, op, "cuEventRecord", r);
}

gpuopt_status gpo_cuda_rt_time_end(gpo_rt *rt, const char *op, double *device_ns)
{
    float ms = 0.0f;
    gpo_cu_result r = rt->api->cuEventRecord(rt->ev_end, NULL);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, op, "cuEventRecord", r);
    /* Errors of the work itself surface here, so they are launch errors. */
    r = rt->api->cuEventSynchronize(rt->ev_end);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_rt_launch_fail(rt, op, "cuEventSynchronize", r);
    r = rt->elapsed(&ms, rt->ev_start, rt->ev_end);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_rt_fail(
            rt, GPUOPT_ERR_DRIVER, op,
            rt->api->cuEventElapsedTime ? "cuEventElapsedTime_v2" : "cuEventElapsedTime", r);
    /* Event resolution is about half a microsecond (CUDA Driver API,
     * cuEventElapsedTime). */
    *device_ns = ms > 0.0f ? (double)ms * 1e6 : 0.0;
    return GPUOPT_OK;
}

/* ---- session ---------------------------------------------------------------- */

/* The driver calls a session needs: all of them, or it cannot work. */
static const char *missing_call(const gpo_cuda_api *a)
{
#define NEED_(field, name)                                                                         \
    if (!a->field)                                                                                 \
        return name;
    NEED_(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
    NEED_(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
    NEED_(cuCtxPushCurrent, "cuCtxPushCurrent_v2")
    NEED_(cuCtxPopCurrent, "cuCtxPopCurrent_v2")
    NEED_(cuCtxSynchronize, "cuCtxSynchronize")
    NEED_(cuMemAlloc, "cuMemAlloc_v2")
    NEED_(cuMemFree, "cuMemFree_v2")
    NEED_(cuMemcpyHtoD, "cuMemcpyHtoD_v2")
    NEED_(cuMemcpyDtoH, "cuMemcpyDtoH_v2")
    NEED_(cuMemcpyDtoD, "cuMemcpyDtoD_v2")
    NEED_(cuMemAllocHost, "cuMemAllocHost_v2")
    NEED_(cuMemFreeHost, "cuMemFreeHost")
    NEED_(cuModuleLoadData, "cuModuleLoadData")
    NEED_(cuModuleUnload, "cuModuleUnload")
    NEED_(cuModuleGetFunction, "cuModuleGetFunction")
    NEED_(cuFuncGetAttribute, "cuFuncGetAttribute")
    NEED_(cuLaunchKernel, "cuLaunchKernel")
    NEED_(cuEventCreate, "cuEventCreate")
    NEED_(cuEventDestroy, "cuEventDestroy_v2")
    NEED_(cuEventRecord, "cuEventRecord")
    NEED_(cuEventSynchronize, "cuEventSynchronize")
#undef NEED_
    if (!a->cuEventElapsedTime && !a->cuEventElapsedTime_v1)
        return "cuEventElapsedTime";
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
        LIMIT_(COMPUTE_CAPABILITY_MAJOR, cc_major), LIMIT_(COMPUTE_CAPABILITY_MINOR, cc_minor),
        LIMIT_(MAX_THREADS_PER_BLOCK, max_threads), LIMIT_(MAX_BLOCK_DIM_X, max_block[0]),
        LIMIT_(MAX_BLOCK_DIM_Y, max_block[1]),      LIMIT_(MAX_BLOCK_DIM_Z, max_block[2]),
        LIMIT_(MAX_GRID_DIM_X, max_grid[0]),        LIMIT_(MAX_GRID_DIM_Y, max_grid[1]),
        LIMIT_(MAX_GRID_DIM_Z, max_grid[2]),
#undef LIMIT_
    };
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        int v = 0;
        gpo_cu_result r = rt->api->cuDeviceGetAttribute(&v, reads[i].attr, rt->dev);
        if (r != GPO_CUDA_SUCCESS) {
            char call[96];
            gpo_snprintf(call, sizeof call, "cuDeviceGetAttribute(%s)", reads[i].name);
            return gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "open", call, r);
        }
        memcpy((char *)rt + reads[i].offset, &v, sizeof v);
    }
    return GPUOPT_OK;
}

static void rt_close(gpo_rt *rt);

static gpuopt_status rt_open(void *backend_state, const gpo_route *route, gpo_rt **out)
{
    gpo_cuda_state *s = backend_state;
    gpuopt_status st = GPUOPT_OK;
    gpo_rt *rt = NULL;
    char what[48];

    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda open: NULL output");
    *out = NULL;
    if (!s || !route)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda open: NULL backend state or route");
    if (route->index < 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "cuda open: device index %d", (int)route->index);
    gpo_snprintf(what, sizeof what, "cuda:%d runtime", (int)route->index);
    if (s->kernel_only)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: running code needs the CUDA driver library, which is not usable "
                        "here: %s",
                        what, s->why_unusable);
    st = gpo_cuda_check_pid(s, what);
    if (st)
        return st;
    const char *lacking = missing_call(&s->api);
    if (lacking)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the CUDA driver library lacks %s, which running code needs (a driver "
                        "older than CUDA 11.0, or not a full driver)",
                        what, lacking);

    rt = calloc(1, sizeof *rt);
    if (!rt)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "%s: out of memory", what);
    for (int i = 0; i < RT_LIST_COUNT; i++)
        rt->lists[i].prev = rt->lists[i].next = &rt->lists[i];
    rt->s = s;
    rt->api = &s->api;
    rt->ordinal = route->index;
    rt->elapsed =
        s->api.cuEventElapsedTime ? s->api.cuEventElapsedTime : s->api.cuEventElapsedTime_v1;
    gpo_snprintf(rt->what, sizeof rt->what, "cuda:%d", rt->ordinal);

    gpo_cu_result r = s->api.cuDeviceGet(&rt->dev, rt->ordinal);
    if (r != GPO_CUDA_SUCCESS) {
        st = gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "cuDeviceGet", r);
        goto fail;
    }
    st = read_limits(rt);
    if (st)
        goto fail;
    r = s->api.cuDevicePrimaryCtxRetain(&rt->ctx, rt->dev);
    if (r != GPO_CUDA_SUCCESS) {
        rt->ctx = NULL;
        st = gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "cuDevicePrimaryCtxRetain", r);
        goto fail;
    }
    st = gpo_cuda_rt_enter(rt, "open");
    if (st)
        goto fail;
    r = s->api.cuEventCreate(&rt->ev_start, GPO_CU_EVENT_DEFAULT);
    if (r != GPO_CUDA_SUCCESS) {
        rt->ev_start = NULL;
        st = gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "cuEventCreate", r);
    } else {
        r = s->api.cuEventCreate(&rt->ev_end, GPO_CU_EVENT_DEFAULT);
        if (r != GPO_CUDA_SUCCESS) {
            rt->ev_end = NULL;
            st = gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "cuEventCreate", r);
        }
    }
    st = gpo_cuda_rt_leave(rt, st, "open");
    if (st)
        goto fail;
    *out = rt;
    return GPUOPT_OK;
fail:
    rt_close(rt);
    return st;
}

static void buf_release(gpo_rt *rt, gpo_rt_buf *b)
{
    gpo_cuda_rt_unlink(&b->h);
    rt->api->cuMemFree(b->ptr);
    free(b);
}

static void pin_release(gpo_rt *rt, rt_pinned *p)
{
    gpo_cuda_rt_unlink(&p->h);
    rt->api->cuMemFreeHost(p->ptr);
    free(p);
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
        int pushed = gpo_cuda_rt_enter(rt, "close") == GPUOPT_OK;
        if (pushed)
            rt->api->cuCtxSynchronize();
        while (rt->lists[RT_LIST_KERNEL].next != &rt->lists[RT_LIST_KERNEL])
            gpo_cuda_rt_kernel_release(rt, (gpo_rt_kernel *)rt->lists[RT_LIST_KERNEL].next);
        while (rt->lists[RT_LIST_PROG].next != &rt->lists[RT_LIST_PROG])
            gpo_cuda_rt_prog_release(rt, (gpo_rt_prog *)rt->lists[RT_LIST_PROG].next);
        while (rt->lists[RT_LIST_PIN].next != &rt->lists[RT_LIST_PIN])
            pin_release(rt, (rt_pinned *)rt->lists[RT_LIST_PIN].next);
        while (rt->lists[RT_LIST_BUF].next != &rt->lists[RT_LIST_BUF])
            buf_release(rt, (gpo_rt_buf *)rt->lists[RT_LIST_BUF].next);
        if (rt->ev_start)
            rt->api->cuEventDestroy(rt->ev_start);
        if (rt->ev_end)
            rt->api->cuEventDestroy(rt->ev_end);
        if (pushed)
            gpo_cuda_rt_leave(rt, GPUOPT_OK, "close");
        rt->api->cuDevicePrimaryCtxRelease(rt->dev);
    }
    free(rt);
}

static const char *rt_compiler_version(gpo_rt *rt)
{
    const gpo_nvrtc *nv = NULL;
    char compiler[64], driver[16];
    if (!rt)
        return "";
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
    if (!rt)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda finish: NULL session");
    gpuopt_status st = gpo_cuda_rt_enter(rt, "finish");
    if (st)
        return st;
    gpo_cu_result r = rt->api->cuCtxSynchronize();
    if (r != GPO_CUDA_SUCCESS)
        st = gpo_cuda_rt_launch_fail(rt, "finish", "cuCtxSynchronize", r);
    return gpo_cuda_rt_leave(rt, st, "finish");
}

/* ---- buffers ---------------------------------------------------------------- */

static gpuopt_status rt_buffer_alloc(gpo_rt *rt, size_t bytes, gpo_rt_buf **out)
{
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda buffer_alloc: NULL output");
    *out = NULL;
    if (!rt)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda buffer_alloc: NULL session");
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "cuda buffer_alloc: size 0 (at least 1 byte)");
    gpo_rt_buf *b = calloc(1, sizeof *b);
    if (!b)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda buffer_alloc: out of memory");
    gpuopt_status st = gpo_cuda_rt_enter(rt, "buffer_alloc");
    if (st) {
        free(b);
        return st;
    }
    gpo_cu_result r = rt->api->cuMemAlloc(&b->ptr, bytes);
    if (r != GPO_CUDA_SUCCESS) {
        char call[64];
        gpo_snprintf(call, sizeof call, "cuMemAlloc_v2(%zu bytes)", bytes);
        /* Device memory running out is the device's answer, not the host's:
         * GPUOPT_ERR_DRIVER, so a tier falls back instead of failing the plan. */
        st = gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "buffer_alloc", call, r);
    }
    st = gpo_cuda_rt_leave(rt, st, "buffer_alloc");
    if (st) {
        if (r == GPO_CUDA_SUCCESS) /* allocated, then the pop failed */
            rt->api->cuMemFree(b->ptr);
        free(b);
        return st;
    }
    b->size = bytes;
    gpo_cuda_rt_link(rt, RT_LIST_BUF, &b->h, RT_BUF);
    *out = b;
    return GPUOPT_OK;
}

static void rt_buffer_free(gpo_rt *rt, gpo_rt_buf *b)
{
    if (!gpo_cuda_rt_owns(rt, b, RT_BUF))
        return;
    int pushed = gpo_cuda_rt_enter(rt, "buffer_free") == GPUOPT_OK;
    buf_release(rt, b);
    if (pushed)
        gpo_cuda_rt_leave(rt, GPUOPT_OK, "buffer_free");
}

static gpuopt_status check_range(gpo_rt *rt, const gpo_rt_buf *b, size_t offset, size_t bytes,
                                 const void *host, const char *op)
{
    if (!gpo_cuda_rt_owns(rt, b, RT_BUF) || !host)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "cuda %s: NULL session or host pointer, or not a buffer of this session",
                        op);
    if (bytes == 0 || offset > b->size || bytes > b->size - offset)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "cuda %s: %zu bytes at offset %zu do not fit a buffer of %zu bytes "
                        "(1 byte at least)",
                        op, bytes, offset, b->size);
    return GPUOPT_OK;
}

static gpuopt_status rt_buffer_write(gpo_rt *rt, gpo_rt_buf *b, size_t offset, const void *src,
                                     size_t bytes)
{
    gpuopt_status st = check_range(rt, b, offset, bytes, src, "buffer_write");
    if (!st)
        st = gpo_cuda_rt_enter(rt, "buffer_write");
    if (st)
        return st;
    gpo_cu_result r = rt->api->cuMemcpyHtoD(b->ptr + offset, src, bytes);
    if (r != GPO_CUDA_SUCCESS)
        st = gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "buffer_write", "cuMemcpyHtoD_v2", r);
    return gpo_cuda_rt_leave(rt, st, "buffer_write");
}

static gpuopt_status rt_buffer_read(gpo_rt *rt, gpo_rt_buf *b, size_t offset, void *dst,
                                    size_t bytes)
{
    gpuopt_status st = check_range(rt, b, offset, bytes, dst, "buffer_read");
    if (!st)
        st = gpo_cuda_rt_enter(rt, "buffer_read");
    if (st)
        return st;
    gpo_cu_result r = rt->api->cuMemcpyDtoH(dst, b->ptr + offset, bytes);
    if (r != GPO_CUDA_SUCCESS)
        st = gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "buffer_read", "cuMemcpyDtoH_v2", r);
    return gpo_cuda_rt_leave(rt, st, "buffer_read");
}

static gpuopt_status rt_buffer_copy(gpo_rt *rt, gpo_rt_buf *dst, gpo_rt_buf *src, size_t bytes,
                                    double *device_ns)
{
    if (!gpo_cuda_rt_owns(rt, dst, RT_BUF) || !gpo_cuda_rt_owns(rt, src, RT_BUF))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "cuda buffer_copy: NULL session, or a buffer not of this session");
    if (dst == src)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "cuda buffer_copy: source and destination are the same buffer");
    if (bytes == 0 || bytes > dst->size || bytes > src->size)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "cuda buffer_copy: %zu bytes between buffers of %zu and %zu bytes", bytes,
                        src->size, dst->size);
    gpuopt_status st = gpo_cuda_rt_enter(rt, "buffer_copy");
    if (st)
        return st;
    if (device_ns) {
        *device_ns = 0.0;
        st = gpo_cuda_rt_time_begin(rt, "buffer_copy");
    }
    if (!st) {
        gpo_cu_result r = rt->api->cuMemcpyDtoD(dst->ptr, src->ptr, bytes);
        if (r != GPO_CUDA_SUCCESS)
            st = gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "buffer_copy", "cuMemcpyDtoD_v2", r);
    }
    if (!st && device_ns)
        st = gpo_cuda_rt_time_end(rt, "buffer_copy", device_ns);
    return gpo_cuda_rt_leave(rt, st, "buffer_copy");
}

/* ---- pinned host memory --------------------------------------------------------
 * Page-locked memory from cuMemAllocHost_v2: copies from it run at full
 * link speed and need no staging copy (CUDA C++ Best Practices Guide,
 * "Pinned Memory"). */

static gpuopt_status rt_host_alloc_pinned(gpo_rt *rt, size_t bytes, void **ptr)
{
    if (!ptr)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda host_alloc_pinned: NULL output");
    *ptr = NULL;
    if (!rt)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda host_alloc_pinned: NULL session");
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "cuda host_alloc_pinned: size 0");
    rt_pinned *p = calloc(1, sizeof *p);
    if (!p)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda host_alloc_pinned: out of memory");
    gpuopt_status st = gpo_cuda_rt_enter(rt, "host_alloc_pinned");
    if (st) {
        free(p);
        return st;
    }
    gpo_cu_result r = rt->api->cuMemAllocHost(&p->ptr, bytes);
    if (r != GPO_CUDA_SUCCESS) {
        p->ptr = NULL;
        st = gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "host_alloc_pinned", "cuMemAllocHost_v2", r);
    }
    st = gpo_cuda_rt_leave(rt, st, "host_alloc_pinned");
    if (st) {
        if (p->ptr)
            rt->api->cuMemFreeHost(p->ptr);
        free(p);
        return st;
    }
    gpo_cuda_rt_link(rt, RT_LIST_PIN, &p->h, RT_PIN);
    *ptr = p->ptr;
    return GPUOPT_OK;
}

static void rt_host_free_pinned(gpo_rt *rt, void *ptr)
{
    if (!rt || !ptr)
        return;
    for (rt_obj *o = rt->lists[RT_LIST_PIN].next; o != &rt->lists[RT_LIST_PIN]; o = o->next) {
        if (((rt_pinned *)o)->ptr != ptr)
            continue;
        int pushed = gpo_cuda_rt_enter(rt, "host_free_pinned") == GPUOPT_OK;
        pin_release(rt, (rt_pinned *)o);
        if (pushed)
            gpo_cuda_rt_leave(rt, GPUOPT_OK, "host_free_pinned");
        return;
    }
}

const gpo_runtime_ops gpo_cuda_runtime_ops = {
    .language = "cuda",
    .open = rt_open,
    .close = rt_close,
    .buffer_alloc = rt_buffer_alloc,
    .buffer_free = rt_buffer_free,
    .buffer_write = rt_buffer_write,
    .buffer_read = rt_buffer_read,
    .buffer_copy = rt_buffer_copy,
    .host_alloc_pinned = rt_host_alloc_pinned,
    .host_free_pinned = rt_host_free_pinned,
    .program_build = gpo_cuda_rt_program_build,
    .program_free = gpo_cuda_rt_program_free,
    .kernel_create = gpo_cuda_rt_kernel_create,
    .kernel_free = gpo_cuda_rt_kernel_free,
    .kernel_set_buffer = gpo_cuda_rt_kernel_set_buffer,
    .kernel_set_scalar = gpo_cuda_rt_kernel_set_scalar,
    .kernel_set_local = gpo_cuda_rt_kernel_set_local,
    .kernel_max_group = gpo_cuda_rt_kernel_max_group,
    .launch = gpo_cuda_rt_launch,
    .finish = rt_finish,
    .compiler_version = rt_compiler_version,
};
