/* What a live memory reading costs, per source, side by side in one run:
 * gpuopt_device_memory on every device of the context (whatever source
 * answers it: NVML, amdgpu sysfs, /proc/meminfo, ...), and, on the first
 * CUDA device when libcuda.so.1 loads, the same call with the device's
 * primary context current on this thread (the driver's cuMemGetInfo), next
 * to the raw vendor calls it wraps (nvmlDeviceGetMemoryInfo through
 * GPUOPT_NVML_LIBRARY or libnvidia-ml.so.1, and cuMemGetInfo_v2), so the
 * library's own share shows as a ratio.
 *
 *   bench_memory_live [RUNS]   prints: name source median_us p10_us p90_us */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuopt/gpuopt.h"

static const char *const source_words[] = {"none",        "management", "kernel", "context",
                                           "new_context", "runtime",    "host"};

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *name, const char *source, double *us, int n)
{
    qsort(us, (size_t)n, sizeof *us, cmp);
    printf("%s %s %.2f %.2f %.2f\n", name, source, us[n / 2], us[n / 10], us[n * 9 / 10]);
}

/* Times gpuopt_device_memory on `dev`; the source of the last reading. */
static int32_t time_library(gpuopt_device *dev, const char *name, double *us, int runs)
{
    gpuopt_memory_info m;
    memset(&m, 0, sizeof m);
    m.struct_size = sizeof m;
    for (int i = 0; i < runs; i++) {
        double t0 = now_us();
        if (gpuopt_device_memory(dev, &m) != GPUOPT_OK)
            return -1;
        us[i] = now_us() - t0;
    }
    int32_t s = m.source >= 0 && m.source <= GPUOPT_MEMORY_SOURCE_HOST ? m.source : 0;
    report(name, source_words[s], us, runs);
    return m.source;
}

typedef struct nvml_mem {
    unsigned long long total, free, used;
} nvml_mem;

/* The raw NVML call on GPU 0, as the library makes it. */
static void time_raw_nvml(double *us, int runs)
{
    const char *path = getenv("GPUOPT_NVML_LIBRARY");
    void *h = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    int (*init)(void), (*by_index)(unsigned, void **), (*info)(void *, nvml_mem *);
    void *s[3] = {h ? dlsym(h, "nvmlInit_v2") : NULL,
                  h ? dlsym(h, "nvmlDeviceGetHandleByIndex_v2") : NULL,
                  h ? dlsym(h, "nvmlDeviceGetMemoryInfo") : NULL};
    if (!s[0] || !s[2])
        return;
    memcpy(&init, &s[0], sizeof s[0]);
    memcpy(&info, &s[2], sizeof s[2]);
    void *dev = NULL;
    if (init() != 0)
        return;
    if (s[1]) {
        memcpy(&by_index, &s[1], sizeof s[1]);
        if (by_index(0, &dev) != 0)
            return;
    } else {
        return; /* the NVML double has no index lookup: the library's row stands alone */
    }
    nvml_mem m;
    for (int i = 0; i < runs; i++) {
        double t0 = now_us();
        if (info(dev, &m) != 0)
            return;
        us[i] = now_us() - t0;
    }
    report("raw_nvmlDeviceGetMemoryInfo", "management", us, runs);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 2000;
    if (runs < 10)
        runs = 10;
    double *us = calloc((size_t)runs, sizeof *us);
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.log_level = "off";
    gpuopt_context *ctx = NULL;
    if (!us || gpuopt_context_create(&o, &ctx) != GPUOPT_OK)
        return 1;
    int32_t n = 0;
    gpuopt_device_count(ctx, &n);
    gpuopt_device *cuda0 = NULL;
    for (int32_t i = 0; i < n; i++) {
        gpuopt_device *dev = NULL;
        gpuopt_device_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (gpuopt_device_at(ctx, i, &dev) || gpuopt_device_get_info(dev, &info))
            continue;
        char name[64];
        snprintf(name, sizeof name, "gpuopt_device_memory(%s)", info.id);
        time_library(dev, name, us, runs);
        if (!cuda0 && !strcmp(info.backend, "cuda"))
            cuda0 = dev;
    }
    if (cuda0) {
        time_raw_nvml(us, runs);
        /* A framework's context, current on this thread: the driver answers. */
        const char *lib = getenv("GPUOPT_CUDA_LIBRARY");
        void *h = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        int (*init)(unsigned), (*retain)(void **, int), (*push)(void *), (*pop)(void **),
            (*release)(int), (*meminfo)(size_t *, size_t *);
        void *s[6] = {h ? dlsym(h, "cuInit") : NULL,
                      h ? dlsym(h, "cuDevicePrimaryCtxRetain") : NULL,
                      h ? dlsym(h, "cuCtxPushCurrent_v2") : NULL,
                      h ? dlsym(h, "cuCtxPopCurrent_v2") : NULL,
                      h ? dlsym(h, "cuDevicePrimaryCtxRelease_v2") : NULL,
                      h ? dlsym(h, "cuMemGetInfo_v2") : NULL};
        int ok = 1;
        for (int i = 0; i < 6; i++)
            ok &= s[i] != NULL;
        void *c = NULL, *popped = NULL;
        if (ok) {
            memcpy(&init, &s[0], sizeof s[0]);
            memcpy(&retain, &s[1], sizeof s[1]);
            memcpy(&push, &s[2], sizeof s[2]);
            memcpy(&pop, &s[3], sizeof s[3]);
            memcpy(&release, &s[4], sizeof s[4]);
            memcpy(&meminfo, &s[5], sizeof s[5]);
            ok = init(0) == 0 && retain(&c, 0) == 0 && push(c) == 0;
        }
        if (ok) {
            time_library(cuda0, "gpuopt_device_memory(cuda:0,current_context)", us, runs);
            size_t f, t;
            for (int i = 0; i < runs; i++) {
                double t0 = now_us();
                meminfo(&f, &t);
                us[i] = now_us() - t0;
            }
            report("raw_cuMemGetInfo_v2", "context", us, runs);
            pop(&popped);
            release(0);
        }
    }
    gpuopt_context_destroy(ctx);
    free(us);
    return 0;
}
