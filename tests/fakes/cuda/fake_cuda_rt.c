/* The runtime half of the libcuda.so.1 test double: what the backend's
 * tier-2 runtime calls, emulated as far as a machine without a GPU allows
 * (modules and launches are in fake_cuda_module.c).
 *   memory    cuMemAlloc_v2 and friends hand out host memory, bounded by the
 *             device's free memory; copies check that they stay inside an
 *             allocation and really copy
 *   streams   cuStreamCreate makes a stream of the current context; calls that
 *             take one accept NULL (the legacy default stream) or a live
 *             stream of the current context; the work is done at once, so
 *             a stream is always idle when waited for
 *   events    record a virtual clock that copies between device buffers
 *             advance at the device's datasheet bandwidth (2 x memory clock
 *             x bus width / 8, for reads plus writes) and launches that run
 *             advance by GPUOPT_FAKE_CUDA_LAUNCH_NS, so timings are
 *             plausible and repeatable
 * Every live object is counted so tests can prove nothing leaks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"

/* Every object belongs to the context (device) it was made in, and dies
 * with it, as the driver frees a context's memory, modules and events when
 * the context is destroyed. */
typedef struct fake_alloc {
    struct fake_alloc *next;
    unsigned char *ptr;
    size_t size;
    fake_device *dev;
    int host; /* pinned host memory, not device memory */
} fake_alloc;

typedef struct fake_event {
    struct fake_event *next;
    fake_device *dev;
    int recorded;
    double at_ns;
} fake_event;

typedef struct fake_stream {
    struct fake_stream *next;
    fake_device *dev;
    unsigned int flags;
} fake_stream;

static fake_alloc *allocs;
static fake_event *events;
static fake_stream *streams;
static double clock_ns;

/* Frees the objects of device `d` (NULL: of every device). */
static void free_objects(const fake_device *d)
{
    for (fake_alloc **pp = &allocs; *pp;) {
        fake_alloc *a = *pp;
        if (d && a->dev != d) {
            pp = &a->next;
            continue;
        }
        *pp = a->next;
        free(a->ptr);
        free(a);
    }
    fake_modules_free(d);
    for (fake_event **pp = &events; *pp;) {
        fake_event *e = *pp;
        if (d && e->dev != d) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        free(e);
    }
    for (fake_stream **pp = &streams; *pp;) {
        fake_stream *st = *pp;
        if (d && st->dev != d) {
            pp = &st->next;
            continue;
        }
        *pp = st->next;
        free(st);
    }
}

void fake_rt_reset(void)
{
    free_objects(NULL);
    fake_launches_reset();
    clock_ns = 0.0;
}

void fake_rt_context_destroyed(const fake_device *d)
{
    free_objects(d);
}

/* ---- memory ------------------------------------------------------------------ */

static size_t device_used(const fake_device *d)
{
    size_t n = 0;
    for (fake_alloc *a = allocs; a; a = a->next)
        if (a->dev == d && !a->host)
            n += a->size;
    return n;
}

static gpo_cu_result alloc(fake_device *d, int host, size_t bytes, void **out)
{
    gpo_cu_result r = GPO_CUDA_SUCCESS;
    fake_lock();
    if (!host && bytes > d->free_mem - device_used(d)) {
        r = GPO_CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    fake_alloc *a = calloc(1, sizeof *a);
    unsigned char *p = calloc(1, bytes);
    if (!a || !p) {
        free(a);
        free(p);
        r = GPO_CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    a->ptr = p;
    a->size = bytes;
    a->dev = d;
    a->host = host;
    a->next = allocs;
    allocs = a;
    *out = p;
out:
    fake_unlock();
    return r;
}

static gpo_cu_result release(void *ptr, int host)
{
    gpo_cu_result r = GPO_CUDA_ERROR_INVALID_VALUE;
    fake_lock();
    for (fake_alloc **pp = &allocs; *pp; pp = &(*pp)->next) {
        fake_alloc *a = *pp;
        if (a->ptr != ptr || a->host != host)
            continue;
        *pp = a->next;
        free(a->ptr);
        free(a);
        r = GPO_CUDA_SUCCESS;
        break;
    }
    fake_unlock();
    return r;
}

/* The device allocation holding [p, p + bytes), or NULL. */
static fake_alloc *device_range(gpo_cu_deviceptr p, size_t bytes)
{
    fake_alloc *found = NULL;
    fake_lock();
    for (fake_alloc *a = allocs; a; a = a->next) {
        uintptr_t base = (uintptr_t)a->ptr;
        if (!a->host && p >= base && p - base <= a->size && bytes <= a->size - (p - base))
            found = a;
    }
    fake_unlock();
    return found;
}

gpo_cu_result cuMemAlloc_v2(gpo_cu_deviceptr *dptr, size_t bytes)
{
    fake_device *d;
    void *p = NULL;
    FAKE_ENTER("cuMemAlloc_v2");
    FAKE_NEED_CONTEXT(d);
    if (!dptr || bytes == 0)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    gpo_cu_result r = alloc(d, 0, bytes, &p);
    if (r == GPO_CUDA_SUCCESS)
        *dptr = (gpo_cu_deviceptr)(uintptr_t)p;
    return r;
}

gpo_cu_result cuMemFree_v2(gpo_cu_deviceptr dptr)
{
    fake_device *d;
    FAKE_ENTER("cuMemFree_v2");
    FAKE_NEED_CONTEXT(d);
    return release((void *)(uintptr_t)dptr, 0);
}

gpo_cu_result cuMemAllocHost_v2(void **ptr, size_t bytes)
{
    fake_device *d;
    FAKE_ENTER("cuMemAllocHost_v2");
    FAKE_NEED_CONTEXT(d);
    if (!ptr || bytes == 0)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    return alloc(d, 1, bytes, ptr);
}

gpo_cu_result cuMemFreeHost(void *ptr)
{
    FAKE_ENTER("cuMemFreeHost");
    FAKE_NEED_INIT();
    return release(ptr, 1);
}

/* Datasheet bandwidth of the current device in bytes per ns. */
static double bytes_per_ns(const fake_device *d)
{
    double clock_khz = d->attrs[GPO_CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE];
    double bus_bits = d->attrs[GPO_CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH];
    if (clock_khz <= 0 || bus_bits <= 0)
        return 100.0; /* 100 GB/s when the description leaves them out */
    return 2.0 * clock_khz * 1e3 * bus_bits / 8.0 / 1e9;
}

gpo_cu_result cuMemcpyHtoD_v2(gpo_cu_deviceptr dst, const void *src, size_t bytes)
{
    fake_device *d;
    FAKE_ENTER("cuMemcpyHtoD_v2");
    FAKE_NEED_CONTEXT(d);
    if (!src || !device_range(dst, bytes))
        return GPO_CUDA_ERROR_INVALID_VALUE;
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuMemcpyDtoH_v2(void *dst, gpo_cu_deviceptr src, size_t bytes)
{
    fake_device *d;
    FAKE_ENTER("cuMemcpyDtoH_v2");
    FAKE_NEED_CONTEXT(d);
    if (!dst || !device_range(src, bytes))
        return GPO_CUDA_ERROR_INVALID_VALUE;
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuMemcpyDtoD_v2(gpo_cu_deviceptr dst, gpo_cu_deviceptr src, size_t bytes)
{
    fake_device *d;
    FAKE_ENTER("cuMemcpyDtoD_v2");
    FAKE_NEED_CONTEXT(d);
    if (!device_range(dst, bytes) || !device_range(src, bytes))
        return GPO_CUDA_ERROR_INVALID_VALUE;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    fake_lock();
    clock_ns += 2.0 * (double)bytes / bytes_per_ns(d);
    fake_unlock();
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuCtxSynchronize(void)
{
    fake_device *d;
    FAKE_ENTER("cuCtxSynchronize");
    FAKE_NEED_CONTEXT(d);
    return GPO_CUDA_SUCCESS;
}

void fake_clock_advance(double ns)
{
    fake_lock();
    clock_ns += ns;
    fake_unlock();
}

/* ---- streams ------------------------------------------------------------------------ */

static fake_stream *find_stream(const void *handle)
{
    fake_stream *found = NULL;
    fake_lock();
    for (fake_stream *st = streams; st; st = st->next)
        if ((const void *)st == handle)
            found = st;
    fake_unlock();
    return found;
}

int fake_stream_ok(const fake_device *d, const void *stream)
{
    if (!stream)
        return 1;
    fake_stream *st = find_stream(stream);
    return st && st->dev == d;
}

gpo_cu_result cuStreamCreate(gpo_cu_stream *stream, unsigned int flags)
{
    fake_device *d;
    FAKE_ENTER("cuStreamCreate");
    FAKE_NEED_CONTEXT(d);
    /* CU_STREAM_DEFAULT (0) and CU_STREAM_NON_BLOCKING (1) are the flags. */
    if (!stream || flags > GPO_CU_STREAM_NON_BLOCKING)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    fake_stream *st = calloc(1, sizeof *st);
    if (!st)
        return GPO_CUDA_ERROR_OUT_OF_MEMORY;
    st->dev = d;
    st->flags = flags;
    fake_lock();
    st->next = streams;
    streams = st;
    fake_unlock();
    *stream = (gpo_cu_stream)(void *)st;
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuStreamDestroy_v2(gpo_cu_stream stream)
{
    gpo_cu_result r = GPO_CUDA_ERROR_INVALID_HANDLE;
    FAKE_ENTER_ON("cuStreamDestroy_v2", stream);
    FAKE_NEED_INIT();
    fake_lock();
    for (fake_stream **pp = &streams; *pp; pp = &(*pp)->next) {
        if ((void *)*pp != (void *)stream)
            continue;
        fake_stream *st = *pp;
        *pp = st->next;
        free(st);
        r = GPO_CUDA_SUCCESS;
        break;
    }
    fake_unlock();
    return r;
}

gpo_cu_result cuStreamSynchronize(gpo_cu_stream stream)
{
    fake_device *d;
    FAKE_ENTER_ON("cuStreamSynchronize", stream);
    FAKE_NEED_CONTEXT(d);
    return fake_stream_ok(d, stream) ? GPO_CUDA_SUCCESS : GPO_CUDA_ERROR_INVALID_HANDLE;
}

/* The async copies: done at once (a stream is never busy here). */
gpo_cu_result cuMemcpyHtoDAsync_v2(gpo_cu_deviceptr dst, const void *src, size_t bytes,
                                   gpo_cu_stream stream)
{
    fake_device *d;
    FAKE_ENTER_ON("cuMemcpyHtoDAsync_v2", stream);
    FAKE_NEED_CONTEXT(d);
    if (!fake_stream_ok(d, stream))
        return GPO_CUDA_ERROR_INVALID_HANDLE;
    if (!src || !device_range(dst, bytes))
        return GPO_CUDA_ERROR_INVALID_VALUE;
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuMemcpyDtoHAsync_v2(void *dst, gpo_cu_deviceptr src, size_t bytes,
                                   gpo_cu_stream stream)
{
    fake_device *d;
    FAKE_ENTER_ON("cuMemcpyDtoHAsync_v2", stream);
    FAKE_NEED_CONTEXT(d);
    if (!fake_stream_ok(d, stream))
        return GPO_CUDA_ERROR_INVALID_HANDLE;
    if (!dst || !device_range(src, bytes))
        return GPO_CUDA_ERROR_INVALID_VALUE;
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuMemcpyDtoDAsync_v2(gpo_cu_deviceptr dst, gpo_cu_deviceptr src, size_t bytes,
                                   gpo_cu_stream stream)
{
    fake_device *d;
    FAKE_ENTER_ON("cuMemcpyDtoDAsync_v2", stream);
    FAKE_NEED_CONTEXT(d);
    if (!fake_stream_ok(d, stream))
        return GPO_CUDA_ERROR_INVALID_HANDLE;
    if (!device_range(dst, bytes) || !device_range(src, bytes))
        return GPO_CUDA_ERROR_INVALID_VALUE;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    fake_clock_advance(2.0 * (double)bytes / bytes_per_ns(d));
    return GPO_CUDA_SUCCESS;
}
/* ---- events ------------------------------------------------------------------------ */

static fake_event *find_event(gpo_cu_event handle)
{
    fake_event *found = NULL;
    fake_lock();
    for (fake_event *e = events; e; e = e->next)
        if ((void *)e == (void *)handle)
            found = e;
    fake_unlock();
    return found;
}

gpo_cu_result cuEventCreate(gpo_cu_event *event, unsigned int flags)
{
    fake_device *d;
    FAKE_ENTER("cuEventCreate");
    FAKE_NEED_CONTEXT(d);
    if (!event || flags > 0xf)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    fake_event *e = calloc(1, sizeof *e);
    if (!e)
        return GPO_CUDA_ERROR_OUT_OF_MEMORY;
    e->dev = d;
    fake_lock();
    e->next = events;
    events = e;
    fake_unlock();
    *event = (gpo_cu_event)(void *)e;
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuEventDestroy_v2(gpo_cu_event event)
{
    gpo_cu_result r = GPO_CUDA_ERROR_INVALID_HANDLE;
    FAKE_ENTER("cuEventDestroy_v2");
    FAKE_NEED_INIT();
    fake_lock();
    for (fake_event **pp = &events; *pp; pp = &(*pp)->next) {
        if ((void *)*pp != (void *)event)
            continue;
        fake_event *e = *pp;
        *pp = e->next;
        free(e);
        r = GPO_CUDA_SUCCESS;
        break;
    }
    fake_unlock();
    return r;
}

gpo_cu_result cuEventRecord(gpo_cu_event event, gpo_cu_stream stream)
{
    fake_device *d;
    FAKE_ENTER_ON("cuEventRecord", stream);
    FAKE_NEED_CONTEXT(d);
    fake_event *e = find_event(event);
    if (!e || !fake_stream_ok(d, stream))
        return GPO_CUDA_ERROR_INVALID_HANDLE;
    fake_lock();
    e->recorded = 1;
    e->at_ns = clock_ns;
    fake_unlock();
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuEventSynchronize(gpo_cu_event event)
{
    FAKE_ENTER("cuEventSynchronize");
    FAKE_NEED_INIT();
    return find_event(event) ? GPO_CUDA_SUCCESS : GPO_CUDA_ERROR_INVALID_HANDLE;
}

static gpo_cu_result elapsed(float *ms, gpo_cu_event start, gpo_cu_event end)
{
    FAKE_NEED_INIT();
    fake_event *a = find_event(start), *b = find_event(end);
    if (!ms)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    if (!a || !b || !a->recorded || !b->recorded)
        return GPO_CUDA_ERROR_INVALID_HANDLE;
    *ms = (float)((b->at_ns - a->at_ns) / 1e6);
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuEventElapsedTime_v2(float *ms, gpo_cu_event start, gpo_cu_event end)
{
    FAKE_ENTER("cuEventElapsedTime_v2");
    return elapsed(ms, start, end);
}

gpo_cu_result cuEventElapsedTime(float *ms, gpo_cu_event start, gpo_cu_event end)
{
    FAKE_ENTER("cuEventElapsedTime");
    return elapsed(ms, start, end);
}

/* ---- control, for tests --------------------------------------------------------------- */

/* The flags a live stream was created with, or -1 for no live stream. */
int gpo_fake_cuda_stream_flags(const void *stream)
{
    fake_stream *st = stream ? find_stream(stream) : NULL;
    return st ? (int)st->flags : -1;
}

/* Live runtime objects of a kind: "device_memory", "host_memory",
 * "modules", "events", "streams"; NULL: all of them. */
long gpo_fake_cuda_live_objects(const char *kind)
{
    long n = 0;
    fake_lock();
    for (fake_alloc *a = allocs; a; a = a->next)
        if (!kind || strcmp(kind, a->host ? "host_memory" : "device_memory") == 0)
            n++;
    for (fake_event *e = events; e; e = e->next)
        if (!kind || strcmp(kind, "events") == 0)
            n++;
    for (fake_stream *st = streams; st; st = st->next)
        if (!kind || strcmp(kind, "streams") == 0)
            n++;
    fake_unlock();
    if (!kind || strcmp(kind, "modules") == 0)
        n += fake_modules_count();
    return n;
}
