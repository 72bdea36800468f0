/* The HIP test double's runtime part: what the tier-2 runtime ops call,
 * exercised as far as a machine without a GPU allows.
 *   - Device memory is emulated with host memory: hipMalloc hands out host
 *     allocations it remembers; the copies check that every byte lies in a
 *     live allocation (hipErrorInvalidValue otherwise, as the runtime does
 *     for a pointer it does not know) and move the bytes, so data written,
 *     copied and read back round-trips. hipMalloc beyond the device's free
 *     memory fails with hipErrorOutOfMemory.
 *   - hipModuleLoadData accepts only the code-object stand-in that the
 *     double's hiprtc writes (fake_hiprtc.c): anything else is
 *     hipErrorInvalidImage, and a stand-in built for another target than the
 *     current device's is hipErrorNoBinaryForGpu, as a real code object for
 *     the wrong target ID would be.
 *   - Streams (hipStreamCreateWithFlags) belong to the device current when
 *     they are made; calls that take one accept NULL (the null stream) or a
 *     live stream of the current device. Work is done at once, so a stream
 *     is always idle when waited for.
 *   - hipModuleLaunchKernel checks its arguments like the runtime, then
 *     fails with hipErrorNoDevice: the double has no GPU to run code on, and
 *     that is the point at which a real one is needed. With
 *     GPUOPT_FAKE_HIP_LAUNCH_NS set, launches "run" instead (nothing is
 *     computed) and take that many ns of the virtual clock; with
 *     GPUOPT_FAKE_HIP_FAULT=N:error the N-th launch faults: it is enqueued
 *     fine, the next call that waits (hipStreamSynchronize,
 *     hipEventSynchronize, hipFree, hipModuleLoadData, hipModuleUnload)
 *     returns the error, and every call doing device work returns it from
 *     then on (a sticky error; a reset clears it). With the error "abort" the
 *     launch ends the process as ROCr's default handler does on a GPU
 *     memory fault (its message, then abort()); with
 *     GPUOPT_FAKE_HIP_FAULT_BLOCK=B only launches of blocks B wide count.
 *   - Events record a virtual clock that device-to-device copies advance at
 *     1 byte per ns each way and running launches by their
 *     GPUOPT_FAKE_HIP_LAUNCH_NS, so timings are repeatable.
 * Every object is counted; gpuoptFakeHipLive() tells the tests whether the
 * backend released all it created. Every call taking a stream is traced
 * (gpuoptFakeHipTrace) with the stream and the calling thread's device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hip.h"

#define MAX_OBJECTS 256
#define CODE_MAGIC "GPUOPT-FAKE-CODE-OBJECT\n"

typedef struct alloc {
    unsigned char *ptr;
    size_t size;
} alloc;

typedef struct fake_module {
    char target[64];
    char kernels[1024]; /* "name\n" each */
    int live;
} fake_module;

typedef struct fake_function {
    fake_module *module;
    char name[128];
} fake_function;

typedef struct fake_event {
    double ns;
    int recorded;
} fake_event;

typedef struct fake_stream {
    int device;
    unsigned int flags;
} fake_stream;

#define TRACE_MAX 4096
typedef struct trace_entry {
    const char *call;
    int has_stream;
    const void *stream;
    int device; /* the calling thread's current device */
} trace_entry;

static alloc device_mem[MAX_OBJECTS];
static alloc host_mem[MAX_OBJECTS];
static fake_module *modules[MAX_OBJECTS];
static fake_function *functions[MAX_OBJECTS];
static fake_event *events[MAX_OBJECTS];
static fake_stream *streams[MAX_OBJECTS];
static double clock_ns;
static int launch_runs;
static double launch_ns;
static long launches, fault_nth, fault_block;
static int fault_abort;
static int fault_error, pending_fault, sticky_fault;
static trace_entry trace[TRACE_MAX];
static long trace_len;

/* The calls at which a pending fault surfaces: they wait for the device. */
static const char *const waiting[] = {"hipStreamSynchronize", "hipEventSynchronize", "hipFree",
                                      "hipModuleLoadData", "hipModuleUnload"};

/* ENTER for the calls that do device work: counted, traced, faults
 * injected, and a sticky fault returned once one has shown. */
static int rt_enter(const char *call, int has_stream, const void *stream)
{
    int injected = fake_enter(call);
    if (trace_len < TRACE_MAX)
        trace[trace_len++] = (trace_entry){call, has_stream, stream, fake_current_device()};
    for (size_t i = 0; pending_fault && i < sizeof waiting / sizeof waiting[0]; i++)
        if (strcmp(waiting[i], call) == 0) {
            sticky_fault = pending_fault;
            pending_fault = 0;
        }
    return sticky_fault ? sticky_fault : injected;
}

#define RT_ENTER(name)                                                                             \
    do {                                                                                           \
        int e_ = rt_enter(name, 0, NULL);                                                          \
        if (e_)                                                                                    \
            return e_;                                                                             \
    } while (0)
#define RT_ENTER_ON(name, stream)                                                                  \
    do {                                                                                           \
        int e_ = rt_enter(name, 1, stream);                                                        \
        if (e_)                                                                                    \
            return e_;                                                                             \
    } while (0)

static int live_of(const void *table, size_t stride)
{
    int n = 0;
    for (int i = 0; i < MAX_OBJECTS; i++)
        n += *(void *const *)((const char *)table + (size_t)i * stride) != NULL;
    return n;
}

int fake_rt_live(void)
{
    /* Functions belong to their module (freed with it), as in HIP. */
    return live_of(device_mem, sizeof device_mem[0]) + live_of(host_mem, sizeof host_mem[0]) +
           live_of(modules, sizeof modules[0]) + live_of(events, sizeof events[0]) +
           live_of(streams, sizeof streams[0]);
}

void fake_rt_reset(void)
{
    /* What a previous run left (a release the tests made fail on purpose)
     * is freed here, between runs, so leak checkers see only the
     * backend's own leaks. */
    for (int i = 0; i < MAX_OBJECTS; i++) {
        free(device_mem[i].ptr);
        free(host_mem[i].ptr);
        free(modules[i]);
        free(functions[i]);
        free(events[i]);
        free(streams[i]);
    }
    memset(device_mem, 0, sizeof device_mem);
    memset(host_mem, 0, sizeof host_mem);
    memset(modules, 0, sizeof modules);
    memset(functions, 0, sizeof functions);
    memset(events, 0, sizeof events);
    memset(streams, 0, sizeof streams);
    clock_ns = 0.0;
    launches = trace_len = 0;
    pending_fault = sticky_fault = 0;
    const char *env = getenv("GPUOPT_FAKE_HIP_LAUNCH_NS");
    launch_runs = env && *env;
    launch_ns = launch_runs ? strtod(env, NULL) : 0.0;
    env = getenv("GPUOPT_FAKE_HIP_FAULT");
    fault_nth = fault_block = 0;
    fault_abort = 0;
    if (env && *env) {
        char *end;
        fault_nth = strtol(env, &end, 10);
        const char *name = *end == ':' ? end + 1 : "";
        fault_error = 0;
        for (int v = 1; v < 2000 && !fault_error; v++)
            if (fake_error_name(v) && strcmp(fake_error_name(v), name) == 0)
                fault_error = v;
        fault_abort = strcmp(name, "abort") == 0;
        if (!fault_error)
            fault_error = fault_abort ? 719 : atoi(name);
        const char *block = getenv("GPUOPT_FAKE_HIP_FAULT_BLOCK");
        fault_block = block && *block ? strtol(block, NULL, 10) : 0;
        if (!launch_runs) {
            launch_runs = 1;
            launch_ns = 1000.0;
        }
    }
}

static int slot(void *const *table, size_t stride)
{
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (!*(void *const *)((const char *)table + (size_t)i * stride))
            return i;
    return -1;
}

/* The live allocation holding [p, p + n), or NULL. */
static alloc *holding(alloc *table, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (table[i].ptr && b >= table[i].ptr && n <= table[i].size &&
            (size_t)(b - table[i].ptr) <= table[i].size - n)
            return &table[i];
    return NULL;
}

/* ---- memory ------------------------------------------------------------------ */

EXPORT hipError_t hipMalloc(void **ptr, size_t size)
{
    RT_ENTER("hipMalloc");
    if (!ptr)
        return 1;
    *ptr = NULL;
    if (size == 0)
        return 0; /* the runtime's answer: success and NULL */
    if ((long long)size > fake_device_free_memory(fake_current_device()))
        return 2;
    int i = slot((void *const *)device_mem, sizeof device_mem[0]);
    if (i < 0 || !(device_mem[i].ptr = calloc(1, size)))
        return 2;
    device_mem[i].size = size;
    *ptr = device_mem[i].ptr;
    return 0;
}

EXPORT hipError_t hipFree(void *ptr)
{
    RT_ENTER("hipFree");
    if (!ptr)
        return 0;
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (device_mem[i].ptr == ptr) {
            free(ptr);
            device_mem[i].ptr = NULL;
            return 0;
        }
    return 1;
}

/* ---- streams -------------------------------------------------------------------- */

static fake_stream *stream_live(const void *s)
{
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (s && streams[i] == s)
            return streams[i];
    return NULL;
}

/* NULL (the null stream) or a live stream of the current device. */
static int stream_ok(const void *s)
{
    fake_stream *st = stream_live(s);
    return !s || (st && st->device == fake_current_device());
}

EXPORT hipError_t hipStreamCreateWithFlags(void **stream, unsigned int flags)
{
    RT_ENTER("hipStreamCreateWithFlags");
    if (!stream || flags > 1) /* hipStreamDefault 0, hipStreamNonBlocking 1 */
        return 1;
    int i = slot((void *const *)streams, sizeof streams[0]);
    fake_stream *st = i < 0 ? NULL : calloc(1, sizeof *st);
    if (!st)
        return 2;
    st->device = fake_current_device();
    st->flags = flags;
    streams[i] = st;
    *stream = st;
    return 0;
}

EXPORT hipError_t hipStreamDestroy(void *stream)
{
    RT_ENTER_ON("hipStreamDestroy", stream);
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (stream && streams[i] == stream) {
            free(streams[i]);
            streams[i] = NULL;
            return 0;
        }
    return 400;
}

EXPORT hipError_t hipStreamSynchronize(void *stream)
{
    RT_ENTER_ON("hipStreamSynchronize", stream);
    return stream_ok(stream) ? 0 : 400;
}

/* ---- copies: done at once ------------------------------------------------------- */

EXPORT hipError_t hipMemcpyHtoDAsync(void *dst, void *src, size_t bytes, void *stream)
{
    RT_ENTER_ON("hipMemcpyHtoDAsync", stream);
    if (!stream_ok(stream))
        return 400;
    if (!src || !holding(device_mem, dst, bytes))
        return 1;
    memcpy(dst, src, bytes);
    return 0;
}

EXPORT hipError_t hipMemcpyDtoHAsync(void *dst, void *src, size_t bytes, void *stream)
{
    RT_ENTER_ON("hipMemcpyDtoHAsync", stream);
    if (!stream_ok(stream))
        return 400;
    if (!dst || !holding(device_mem, src, bytes))
        return 1;
    memcpy(dst, src, bytes);
    return 0;
}

EXPORT hipError_t hipMemcpyDtoDAsync(void *dst, void *src, size_t bytes, void *stream)
{
    RT_ENTER_ON("hipMemcpyDtoDAsync", stream);
    if (!stream_ok(stream))
        return 400;
    if (!holding(device_mem, dst, bytes) || !holding(device_mem, src, bytes))
        return 1;
    memmove(dst, src, bytes);
    clock_ns += 2.0 * (double)bytes; /* 1 byte per ns each way */
    return 0;
}

EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
    RT_ENTER("hipHostMalloc");
    if (!ptr)
        return 1;
    *ptr = NULL;
    if (flags > 0xff)
        return 1;
    if (size == 0)
        return 0;
    int i = slot((void *const *)host_mem, sizeof host_mem[0]);
    if (i < 0 || !(host_mem[i].ptr = calloc(1, size)))
        return 2;
    host_mem[i].size = size;
    *ptr = host_mem[i].ptr;
    return 0;
}

EXPORT hipError_t hipHostFree(void *ptr)
{
    RT_ENTER("hipHostFree");
    if (!ptr)
        return 0;
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (host_mem[i].ptr == ptr) {
            free(ptr);
            host_mem[i].ptr = NULL;
            return 0;
        }
    return 1;
}

/* ---- modules and launches ------------------------------------------------------------ */

static int bare_equal(const char *a, const char *b)
{
    size_t na = strcspn(a, ":"), nb = strcspn(b, ":");
    return na == nb && strncmp(a, b, na) == 0;
}

EXPORT hipError_t hipModuleLoadData(void **module, const void *image)
{
    RT_ENTER("hipModuleLoadData");
    if (!module || !image)
        return 1;
    *module = NULL;
    const char *text = image;
    if (strncmp(text, CODE_MAGIC, strlen(CODE_MAGIC)) != 0)
        return 200; /* hipErrorInvalidImage */
    fake_module *m = calloc(1, sizeof *m);
    if (!m)
        return 2;
    const char *t = strstr(text, "target=");
    const char *k = strstr(text, "kernels=");
    if (t)
        sscanf(t, "target=%63s", m->target);
    if (k) {
        size_t n = strlen(k + 8);
        if (n >= sizeof m->kernels)
            n = sizeof m->kernels - 1;
        memcpy(m->kernels, k + 8, n);
    }
    if (!bare_equal(m->target, fake_device_arch(fake_current_device()))) {
        free(m);
        return 209; /* hipErrorNoBinaryForGpu */
    }
    int i = slot((void *const *)modules, sizeof modules[0]);
    if (i < 0) {
        free(m);
        return 2;
    }
    modules[i] = m;
    *module = m;
    return 0;
}

EXPORT hipError_t hipModuleUnload(void *module)
{
    RT_ENTER("hipModuleUnload");
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (module && modules[i] == module) {
            for (int f = 0; f < MAX_OBJECTS; f++)
                if (functions[f] && functions[f]->module == module) {
                    free(functions[f]);
                    functions[f] = NULL;
                }
            free(module);
            modules[i] = NULL;
            return 0;
        }
    return 400; /* hipErrorInvalidHandle */
}

static int module_live(const void *m)
{
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (m && modules[i] == m)
            return 1;
    return 0;
}

EXPORT hipError_t hipModuleGetFunction(void **function, void *module, const char *name)
{
    RT_ENTER("hipModuleGetFunction");
    if (!function || !name)
        return 1;
    *function = NULL;
    if (!module_live(module))
        return 400;
    fake_module *m = module;
    size_t n = strlen(name);
    int found = 0;
    /* The stand-in lists one kernel name per line. */
    for (const char *p = m->kernels; *p && n > 0 && n < 128;) {
        size_t len = strcspn(p, "\n");
        if (len == n && strncmp(p, name, n) == 0)
            found = 1;
        p += len + (p[len] == '\n');
    }
    if (!found)
        return 500; /* hipErrorNotFound */
    int i = slot((void *const *)functions, sizeof functions[0]);
    fake_function *f = i < 0 ? NULL : calloc(1, sizeof *f);
    if (!f)
        return 2;
    f->module = m;
    memcpy(f->name, name, n + 1);
    functions[i] = f;
    *function = f;
    return 0;
}

static int function_live(const void *f)
{
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (f && functions[i] == f)
            return 1;
    return 0;
}

EXPORT hipError_t hipFuncGetAttribute(int *value, int attrib, void *function)
{
    RT_ENTER("hipFuncGetAttribute");
    if (!value || attrib != 0) /* HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
        return 1;
    if (!function_live(function))
        return 400;
    *value = fake_device_max_threads(fake_current_device());
    return 0;
}

EXPORT hipError_t hipModuleLaunchKernel(void *f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz,
                                        unsigned int shared, void *stream, void **params,
                                        void **extra)
{
    RT_ENTER_ON("hipModuleLaunchKernel", stream);
    if (!function_live(f))
        return 400;
    if (!stream_ok(stream))
        return 400;
    if (extra || !gx || !gy || !gz || !bx || !by || !bz)
        return 1;
    if ((unsigned long long)bx * by * bz >
        (unsigned long long)fake_device_max_threads(fake_current_device()))
        return 1;
    if (shared > 65536)
        return 1;
    (void)params;
    /* Everything a launch needs is in order: only a GPU is missing. */
    if (!launch_runs)
        return 100; /* hipErrorNoDevice */
    if ((!fault_block || (long)bx == fault_block) && ++launches == fault_nth) {
        if (fault_abort) {
            /* ROCr's default system-event handler (ROCm/pytorch#797). */
            fprintf(stderr, "Memory access fault by GPU node-1 (Agent handle: 0x1) on address "
                            "0x7f0000000000. Reason: Page not present or supervisor privilege.\n");
            abort();
        }
        pending_fault = fault_error;
    }
    clock_ns += launch_ns;
    return 0;
}

/* ---- events ----------------------------------------------------------------------------- */

static fake_event *event_live(void *e)
{
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (e && events[i] == e)
            return events[i];
    return NULL;
}

EXPORT hipError_t hipEventCreate(void **event)
{
    RT_ENTER("hipEventCreate");
    if (!event)
        return 1;
    int i = slot((void *const *)events, sizeof events[0]);
    fake_event *e = i < 0 ? NULL : calloc(1, sizeof *e);
    if (!e)
        return 2;
    events[i] = e;
    *event = e;
    return 0;
}

EXPORT hipError_t hipEventRecord(void *event, void *stream)
{
    RT_ENTER_ON("hipEventRecord", stream);
    fake_event *e = event_live(event);
    if (!e || !stream_ok(stream))
        return 400;
    e->ns = clock_ns;
    e->recorded = 1;
    return 0;
}

EXPORT hipError_t hipEventSynchronize(void *event)
{
    RT_ENTER("hipEventSynchronize");
    return event_live(event) ? 0 : 400;
}

EXPORT hipError_t hipEventElapsedTime(float *ms, void *start, void *stop)
{
    RT_ENTER("hipEventElapsedTime");
    fake_event *a = event_live(start), *b = event_live(stop);
    if (!ms)
        return 1;
    if (!a || !b || !a->recorded || !b->recorded)
        return 400;
    *ms = (float)((b->ns - a->ns) / 1e6);
    return 0;
}

EXPORT hipError_t hipEventDestroy(void *event)
{
    RT_ENTER("hipEventDestroy");
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (event && events[i] == event) {
            free(events[i]);
            events[i] = NULL;
            return 0;
        }
    return 400;
}

/* ---- test controls ------------------------------------------------------------------------ */

/* Calls that do device work since the last reset (at most TRACE_MAX). */
EXPORT long gpuoptFakeHipTraceLength(void)
{
    return trace_len;
}

/* The i-th of them: its name, whether it takes a stream and which (NULL:
 * the null stream), and the calling thread's device then; NULL past the
 * end. */
EXPORT const char *gpuoptFakeHipTrace(long i, int *has_stream, const void **stream, int *device)
{
    if (i < 0 || i >= trace_len)
        return NULL;
    *has_stream = trace[i].has_stream;
    *stream = trace[i].stream;
    *device = trace[i].device;
    return trace[i].call;
}

/* The flags a live stream was created with, or -1 for no live stream. */
EXPORT int gpuoptFakeHipStreamFlags(const void *stream)
{
    fake_stream *st = stream_live(stream);
    return st ? (int)st->flags : -1;
}
