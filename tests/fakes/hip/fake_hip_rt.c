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
 *   - hipModuleLaunchKernel checks its arguments like the runtime, then
 *     fails with hipErrorNoDevice: the double has no GPU to run code on, and
 *     that is the point at which a real one is needed.
 *   - Events record the host's monotonic clock on the null stream (other
 *     streams are refused: the backend uses only the null stream).
 * Every object is counted; gpuoptFakeHipLive() tells the tests whether the
 * backend released all it created. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    long long ns; /* -1: not recorded */
} fake_event;

static alloc device_mem[MAX_OBJECTS];
static alloc host_mem[MAX_OBJECTS];
static fake_module *modules[MAX_OBJECTS];
static fake_function *functions[MAX_OBJECTS];
static fake_event *events[MAX_OBJECTS];

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
           live_of(modules, sizeof modules[0]) + live_of(events, sizeof events[0]);
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
    }
    memset(device_mem, 0, sizeof device_mem);
    memset(host_mem, 0, sizeof host_mem);
    memset(modules, 0, sizeof modules);
    memset(functions, 0, sizeof functions);
    memset(events, 0, sizeof events);
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
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
    ENTER("hipMalloc");
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
    ENTER("hipFree");
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

EXPORT hipError_t hipMemcpyHtoD(void *dst, void *src, size_t bytes)
{
    ENTER("hipMemcpyHtoD");
    if (!src || !holding(device_mem, dst, bytes))
        return 1;
    memcpy(dst, src, bytes);
    return 0;
}

EXPORT hipError_t hipMemcpyDtoH(void *dst, void *src, size_t bytes)
{
    ENTER("hipMemcpyDtoH");
    if (!dst || !holding(device_mem, src, bytes))
        return 1;
    memcpy(dst, src, bytes);
    return 0;
}

EXPORT hipError_t hipMemcpyDtoD(void *dst, void *src, size_t bytes)
{
    ENTER("hipMemcpyDtoD");
    if (!holding(device_mem, dst, bytes) || !holding(device_mem, src, bytes))
        return 1;
    memmove(dst, src, bytes);
    return 0;
}

EXPORT hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags)
{
    ENTER("hipHostMalloc");
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
    ENTER("hipHostFree");
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
    ENTER("hipModuleLoadData");
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
    ENTER("hipModuleUnload");
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
    ENTER("hipModuleGetFunction");
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
    ENTER("hipFuncGetAttribute");
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
    ENTER("hipModuleLaunchKernel");
    if (!function_live(f))
        return 400;
    if (stream || extra || !gx || !gy || !gz || !bx || !by || !bz)
        return 1;
    if ((unsigned long long)bx * by * bz >
        (unsigned long long)fake_device_max_threads(fake_current_device()))
        return 1;
    if (shared > 65536)
        return 1;
    (void)params;
    /* Everything a launch needs is in order: only a GPU is missing. */
    return 100; /* hipErrorNoDevice */
}

EXPORT hipError_t hipDeviceSynchronize(void)
{
    ENTER("hipDeviceSynchronize");
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
    ENTER("hipEventCreate");
    if (!event)
        return 1;
    int i = slot((void *const *)events, sizeof events[0]);
    fake_event *e = i < 0 ? NULL : calloc(1, sizeof *e);
    if (!e)
        return 2;
    e->ns = -1;
    events[i] = e;
    *event = e;
    return 0;
}

EXPORT hipError_t hipEventRecord(void *event, void *stream)
{
    ENTER("hipEventRecord");
    fake_event *e = event_live(event);
    if (!e)
        return 400;
    if (stream)
        return 1;
    e->ns = now_ns();
    return 0;
}

EXPORT hipError_t hipEventSynchronize(void *event)
{
    ENTER("hipEventSynchronize");
    return event_live(event) ? 0 : 400;
}

EXPORT hipError_t hipEventElapsedTime(float *ms, void *start, void *stop)
{
    ENTER("hipEventElapsedTime");
    fake_event *a = event_live(start), *b = event_live(stop);
    if (!ms)
        return 1;
    if (!a || !b || a->ns < 0 || b->ns < 0)
        return 400;
    *ms = (float)((double)(b->ns - a->ns) / 1e6);
    return 0;
}

EXPORT hipError_t hipEventDestroy(void *event)
{
    ENTER("hipEventDestroy");
    for (int i = 0; i < MAX_OBJECTS; i++)
        if (event && events[i] == event) {
            free(events[i]);
            events[i] = NULL;
            return 0;
        }
    return 400;
}
