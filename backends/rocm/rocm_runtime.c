/* The ROCm runtime ops for tier 2 (backend.h, gpo_runtime_ops): the session
 * (the device made current, two timing events), device buffers and copies,
 * pinned host memory, and the ops table. Programs, kernels and launches are
 * in rocm_runtime_kernel.c; what both share is in rocm_runtime.h. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocm_runtime.h"
#include "util/strutil.h"

/* ---- objects ------------------------------------------------------------ */

void gpo_rocm_rt_link(gpo_rt *rt, int list, rt_obj *o, uint32_t kind)
{
    rt_obj *head = &rt->lists[list];
    o->kind = kind;
    o->rt = rt;
    o->prev = head;
    o->next = head->next;
    head->next->prev = o;
    head->next = o;
}

void gpo_rocm_rt_unlink(rt_obj *o)
{
    o->prev->next = o->next;
    o->next->prev = o->prev;
    o->prev = o->next = NULL;
    o->kind = 0; /* a stale handle is refused, never reused */
    o->rt = NULL;
}

int gpo_rocm_rt_owns(const gpo_rt *rt, const void *obj, uint32_t kind)
{
    const rt_obj *o = obj;
    return rt && o && o->kind == kind && o->rt == rt;
}

/* ---- words, thread, timing ----------------------------------------------------- */

/* Codes with which a runtime says there is no GPU to run on: what the
 * runtime answers for work it cannot place (and the test double's answer
 * to a launch, since it emulates memory but runs no code). */
static int no_gpu(gpo_hip_error e)
{
    return e == GPO_hipErrorNoDevice || e == GPO_hipErrorInvalidDevice;
}

gpuopt_status gpo_rocm_rt_fail(const gpo_rt *rt, gpuopt_status status, const char *op,
                               const char *call, gpo_hip_error e)
{
    char words[256];
    gpo_hip_error_text(rt->hip, e, words, sizeof words);
    if (e == GPO_hipErrorOutOfMemory)
        status = GPUOPT_ERR_NO_MEMORY;
    const char *hint = "";
    if (no_gpu(e))
        hint = "; running code needs a real AMD GPU that this HIP runtime drives, and it has "
               "none to run this on";
    else if (e == GPO_hipErrorNoBinaryForGpu)
        hint = "; the code object was not built for this GPU's target ID (xnack/sramecc modes "
               "included)";
    return gpo_fail(status, "%s %s: %s returned %s%s", rt->what, op, call, words, hint);
}

gpuopt_status gpo_rocm_rt_enter(const gpo_rt *rt, const char *op)
{
    if (!rt)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "rocm %s: NULL session", op);
    gpuopt_status st = gpo_rocm_check_fork(rt->st, op);
    if (st != GPUOPT_OK)
        return st;
    if (!pthread_equal(pthread_self(), rt->thread))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s %s: the session was opened on another thread; HIP's current device "
                        "is per thread, so a session is used only on the thread that opened it",
                        rt->what, op);
    return GPUOPT_OK;
}

gpuopt_status gpo_rocm_rt_time_begin(gpo_rt *rt, const char *op)
{
    gpo_hip_error e = rt->fn.event_record(rt->ev_start, NULL);
    return e == GPO_HIP_SUCCESS ? GPUOPT_OK
                                : gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, op, "hipEventRecord", e);
}

gpuopt_status gpo_rocm_rt_time_end(gpo_rt *rt, const char *op, double *device_ns)
{
    float ms = 0.0f;
    gpo_hip_error e = rt->fn.event_record(rt->ev_stop, NULL);
    if (e != GPO_HIP_SUCCESS)
        return gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, op, "hipEventRecord", e);
    e = rt->fn.event_synchronize(rt->ev_stop);
    if (e != GPO_HIP_SUCCESS)
        return gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, op, "hipEventSynchronize", e);
    e = rt->fn.event_elapsed_time(&ms, rt->ev_start, rt->ev_stop);
    if (e != GPO_HIP_SUCCESS)
        return gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, op, "hipEventElapsedTime", e);
    if (!(ms >= 0.0f))
        return gpo_fail(GPUOPT_ERR_DRIVER, "%s %s: hipEventElapsedTime gave %g ms", rt->what, op,
                        (double)ms);
    *device_ns = (double)ms * 1e6;
    return GPUOPT_OK;
}

/* ---- session ---------------------------------------------------------------------- */

static void release_all(gpo_rt *rt)
{
    for (int l = 0; l < RT_LIST_COUNT; l++) {
        rt_obj *head = &rt->lists[l];
        while (head->next != head) {
            rt_obj *o = head->next;
            switch (l) {
            case RT_LIST_KERNEL: gpo_rocm_rt_kernel_release(rt, (gpo_rt_kernel *)o); break;
            case RT_LIST_PROG: gpo_rocm_rt_prog_release(rt, (gpo_rt_prog *)o); break;
            case RT_LIST_PIN: {
                rt_pinned *p = (rt_pinned *)o;
                rt->fn.host_free(p->ptr);
                gpo_rocm_rt_unlink(o);
                free(p);
                break;
            }
            default: {
                gpo_rt_buf *b = (gpo_rt_buf *)o;
                rt->fn.free(b->ptr);
                gpo_rocm_rt_unlink(o);
                free(b);
                break;
            }
            }
        }
    }
}

static void rocm_rt_close(gpo_rt *rt)
{
    if (!rt)
        return;
    /* After fork() the parent's runtime must not be touched: only our own
     * memory is freed. Objects are released by pointer, which HIP accepts
     * from any thread; the current device is given back only on the thread
     * it was taken from (it is per thread). */
    if (gpo_rocm_check_fork(rt->st, "close") == GPUOPT_OK) {
        release_all(rt);
        if (rt->ev_start)
            rt->fn.event_destroy(rt->ev_start);
        if (rt->ev_stop)
            rt->fn.event_destroy(rt->ev_stop);
        if (pthread_equal(pthread_self(), rt->thread) && rt->previous >= 0 &&
            rt->previous != rt->ordinal)
            rt->fn.set_device(rt->previous);
    } else {
        /* The child owns none of the parent's device objects; drop our
         * bookkeeping of them. */
        for (int l = 0; l < RT_LIST_COUNT; l++) {
            rt_obj *head = &rt->lists[l];
            while (head->next != head) {
                rt_obj *o = head->next;
                gpo_rocm_rt_unlink(o);
                if (l == RT_LIST_KERNEL) {
                    gpo_rt_kernel *k = (gpo_rt_kernel *)o;
                    for (int i = 0; i < GPO_ROCM_MAX_ARGS; i++)
                        free(k->arg[i]);
                }
                free(o);
            }
        }
    }
    free(rt);
}

static gpuopt_status rocm_rt_open(void *backend_state, const gpo_route *route, gpo_rt **out)
{
    gpo_rocm_state *st = backend_state;
    gpo_rt *rt = NULL;
    char missing[256];
    gpo_hip_error e;
    gpuopt_status status = GPUOPT_OK;
    int device_set = 0;

    if (out)
        *out = NULL;
    if (!st || !route || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "rocm runtime open: NULL %s",
                        !st      ? "backend state"
                        : !route ? "route"
                                 : "output");
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
    rt->hip = &st->hip;
    rt->ordinal = route->index;
    rt->previous = -1;
    rt->thread = pthread_self();
    for (int l = 0; l < RT_LIST_COUNT; l++)
        rt->lists[l].prev = rt->lists[l].next = &rt->lists[l];
    gpo_snprintf(rt->what, sizeof rt->what, "rocm:%d", rt->ordinal);
    if (gpo_dl_resolve(st->hip.handle, gpo_hip_rt_syms, gpo_hip_rt_n_syms, &rt->fn, missing,
                       sizeof missing) != GPUOPT_OK) {
        status = gpo_fail(GPUOPT_ERR_UNAVAILABLE, "%s cannot run code: the HIP runtime %s lacks %s",
                          rt->what, st->hip.library, missing);
        goto out;
    }
    e = rt->fn.get_device(&rt->previous);
    if (e != GPO_HIP_SUCCESS) {
        rt->previous = -1;
        status = gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "hipGetDevice", e);
        goto out;
    }
    e = rt->fn.set_device(rt->ordinal);
    if (e != GPO_HIP_SUCCESS) {
        status = gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "hipSetDevice", e);
        goto out;
    }
    device_set = 1;
    e = rt->fn.event_create(&rt->ev_start);
    if (e == GPO_HIP_SUCCESS)
        e = rt->fn.event_create(&rt->ev_stop);
    if (e != GPO_HIP_SUCCESS) {
        status = gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "open", "hipEventCreate", e);
        goto out;
    }
    gpo_hip_target(&st->hip, rt->ordinal, rt->target, sizeof rt->target);
    if (!rt->target[0])
        gpo_strlcpy(rt->target, route->info.arch_name, sizeof rt->target);
    rt->max_threads =
        route->info.max_threads_per_block > 0 ? route->info.max_threads_per_block : 1024;
    rt->lds_per_block = route->info.shared_mem_per_block;
out:
    if (status != GPUOPT_OK) {
        if (rt->ev_start)
            rt->fn.event_destroy(rt->ev_start);
        if (rt->ev_stop)
            rt->fn.event_destroy(rt->ev_stop);
        if (device_set && rt->previous >= 0 && rt->previous != rt->ordinal)
            rt->fn.set_device(rt->previous);
        free(rt);
        return status;
    }
    *out = rt;
    return GPUOPT_OK;
}

static gpuopt_status rocm_rt_finish(gpo_rt *rt)
{
    gpuopt_status st = gpo_rocm_rt_enter(rt, "finish");
    if (st != GPUOPT_OK)
        return st;
    gpo_hip_error e = rt->fn.device_synchronize();
    return e == GPO_HIP_SUCCESS
               ? GPUOPT_OK
               : gpo_rocm_rt_fail(rt, GPUOPT_ERR_LAUNCH, "finish", "hipDeviceSynchronize", e);
}

/* ---- buffers ------------------------------------------------------------------------ */

static gpuopt_status rocm_rt_buffer_alloc(gpo_rt *rt, size_t bytes, gpo_rt_buf **out)
{
    gpuopt_status st = gpo_rocm_rt_enter(rt, "buffer_alloc");
    if (out)
        *out = NULL;
    if (st != GPUOPT_OK)
        return st;
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s buffer_alloc: NULL output", rt->what);
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s buffer_alloc: 0 bytes", rt->what);
    gpo_rt_buf *b = calloc(1, sizeof *b);
    if (!b)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    gpo_hip_error e = rt->fn.malloc(&b->ptr, bytes);
    if (e != GPO_HIP_SUCCESS || !b->ptr) {
        free(b);
        if (e == GPO_HIP_SUCCESS)
            return gpo_fail(GPUOPT_ERR_DRIVER, "%s buffer_alloc: hipMalloc(%zu) gave NULL",
                            rt->what, bytes);
        return gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "buffer_alloc", "hipMalloc", e);
    }
    b->size = bytes;
    gpo_rocm_rt_link(rt, RT_LIST_BUF, &b->h, RT_BUF);
    *out = b;
    return GPUOPT_OK;
}

static void rocm_rt_buffer_free(gpo_rt *rt, gpo_rt_buf *b)
{
    if (gpo_rocm_rt_enter(rt, "buffer_free") != GPUOPT_OK || !gpo_rocm_rt_owns(rt, b, RT_BUF))
        return;
    rt->fn.free(b->ptr);
    gpo_rocm_rt_unlink(&b->h);
    free(b);
}

/* offset + bytes within the buffer, without overflow. */
static gpuopt_status in_range(const gpo_rt *rt, const char *op, const gpo_rt_buf *b, size_t offset,
                              size_t bytes)
{
    if (!gpo_rocm_rt_owns(rt, b, RT_BUF))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s %s: not a buffer of this session (NULL, freed, or another's)", rt->what,
                        op);
    if (offset > b->size || bytes > b->size - offset)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s %s: %zu bytes at offset %zu pass the end of a %zu-byte buffer",
                        rt->what, op, bytes, offset, b->size);
    return GPUOPT_OK;
}

static gpuopt_status rocm_rt_buffer_write(gpo_rt *rt, gpo_rt_buf *b, size_t offset, const void *src,
                                          size_t bytes)
{
    gpuopt_status st = gpo_rocm_rt_enter(rt, "buffer_write");
    if (st == GPUOPT_OK)
        st = in_range(rt, "buffer_write", b, offset, bytes);
    if (st != GPUOPT_OK)
        return st;
    if (!src)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s buffer_write: NULL source", rt->what);
    if (bytes == 0)
        return GPUOPT_OK;
    void *host;
    memcpy(&host, &src, sizeof host); /* hipMemcpyHtoD takes void * before HIP 7 */
    gpo_hip_error e = rt->fn.memcpy_htod((char *)b->ptr + offset, host, bytes);
    return e == GPO_HIP_SUCCESS
               ? GPUOPT_OK
               : gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "buffer_write", "hipMemcpyHtoD", e);
}

static gpuopt_status rocm_rt_buffer_read(gpo_rt *rt, gpo_rt_buf *b, size_t offset, void *dst,
                                         size_t bytes)
{
    gpuopt_status st = gpo_rocm_rt_enter(rt, "buffer_read");
    if (st == GPUOPT_OK)
        st = in_range(rt, "buffer_read", b, offset, bytes);
    if (st != GPUOPT_OK)
        return st;
    if (!dst)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s buffer_read: NULL destination", rt->what);
    if (bytes == 0)
        return GPUOPT_OK;
    gpo_hip_error e = rt->fn.memcpy_dtoh(dst, (char *)b->ptr + offset, bytes);
    return e == GPO_HIP_SUCCESS
               ? GPUOPT_OK
               : gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "buffer_read", "hipMemcpyDtoH", e);
}

static gpuopt_status rocm_rt_buffer_copy(gpo_rt *rt, gpo_rt_buf *dst, gpo_rt_buf *src, size_t bytes,
                                         double *device_ns)
{
    gpuopt_status st = gpo_rocm_rt_enter(rt, "buffer_copy");
    if (st == GPUOPT_OK)
        st = in_range(rt, "buffer_copy", dst, 0, bytes);
    if (st == GPUOPT_OK)
        st = in_range(rt, "buffer_copy", src, 0, bytes);
    if (st != GPUOPT_OK)
        return st;
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s buffer_copy: 0 bytes", rt->what);
    if (device_ns && (st = gpo_rocm_rt_time_begin(rt, "buffer_copy")) != GPUOPT_OK)
        return st;
    gpo_hip_error e = rt->fn.memcpy_dtod(dst->ptr, src->ptr, bytes);
    if (e != GPO_HIP_SUCCESS)
        return gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "buffer_copy", "hipMemcpyDtoD", e);
    return device_ns ? gpo_rocm_rt_time_end(rt, "buffer_copy", device_ns) : GPUOPT_OK;
}

/* ---- pinned host memory --------------------------------------------------------------- */

static gpuopt_status rocm_rt_host_alloc_pinned(gpo_rt *rt, size_t bytes, void **out)
{
    gpuopt_status st = gpo_rocm_rt_enter(rt, "host_alloc_pinned");
    if (out)
        *out = NULL;
    if (st != GPUOPT_OK)
        return st;
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s host_alloc_pinned: NULL output", rt->what);
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s host_alloc_pinned: 0 bytes", rt->what);
    if (!rt->fn.host_malloc || !rt->fn.host_free)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s host_alloc_pinned: the HIP runtime %s lacks hipHostMalloc or "
                        "hipHostFree",
                        rt->what, rt->hip->library);
    rt_pinned *p = calloc(1, sizeof *p);
    if (!p)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    gpo_hip_error e = rt->fn.host_malloc(&p->ptr, bytes, GPO_HIP_HOST_MALLOC_DEFAULT);
    if (e != GPO_HIP_SUCCESS || !p->ptr) {
        free(p);
        if (e == GPO_HIP_SUCCESS)
            return gpo_fail(GPUOPT_ERR_DRIVER, "%s host_alloc_pinned: hipHostMalloc gave NULL",
                            rt->what);
        return gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "host_alloc_pinned", "hipHostMalloc", e);
    }
    gpo_rocm_rt_link(rt, RT_LIST_PIN, &p->h, RT_PIN);
    *out = p->ptr;
    return GPUOPT_OK;
}

static void rocm_rt_host_free_pinned(gpo_rt *rt, void *ptr)
{
    if (!ptr || gpo_rocm_rt_enter(rt, "host_free_pinned") != GPUOPT_OK)
        return;
    rt_obj *head = &rt->lists[RT_LIST_PIN];
    for (rt_obj *o = head->next; o != head; o = o->next) {
        rt_pinned *p = (rt_pinned *)o;
        if (p->ptr == ptr) {
            rt->fn.host_free(p->ptr);
            gpo_rocm_rt_unlink(o);
            free(p);
            return;
        }
    }
}

const gpo_runtime_ops gpo_rocm_runtime = {
    .language = "hip",
    .open = rocm_rt_open,
    .close = rocm_rt_close,
    .buffer_alloc = rocm_rt_buffer_alloc,
    .buffer_free = rocm_rt_buffer_free,
    .buffer_write = rocm_rt_buffer_write,
    .buffer_read = rocm_rt_buffer_read,
    .buffer_copy = rocm_rt_buffer_copy,
    .host_alloc_pinned = rocm_rt_host_alloc_pinned,
    .host_free_pinned = rocm_rt_host_free_pinned,
    .program_build = gpo_rocm_rt_program_build,
    .program_free = gpo_rocm_rt_program_free,
    .kernel_create = gpo_rocm_rt_kernel_create,
    .kernel_free = gpo_rocm_rt_kernel_free,
    .kernel_set_buffer = gpo_rocm_rt_kernel_set_buffer,
    .kernel_set_scalar = gpo_rocm_rt_kernel_set_scalar,
    .kernel_set_local = gpo_rocm_rt_kernel_set_local,
    .kernel_max_group = gpo_rocm_rt_kernel_max_group,
    .launch = gpo_rocm_rt_launch,
    .finish = rocm_rt_finish,
    .compiler_version = gpo_rocm_rt_compiler_version,
};
