/* The raw vendor calls behind each live-memory source, on a real NVIDIA GPU,
 * with nothing but libc and dlopen (a lent GPU machine may lack cJSON and
 * cmocka, which the project needs): nvmlInit_v2 once; nvmlDeviceGetMemoryInfo
 * on a handle, and with the by-UUID lookup gpuopt makes; cuInit once; a
 * primary context created, asked (cuMemGetInfo_v2) and destroyed; the same
 * query in a current context; a read of /proc/meminfo. The figures of
 * docs/benchmarks.md, "Live memory", H200 rows.
 *   cc -O2 -o raw_sources raw_sources.c -ldl && ./raw_sources */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double T()
{
    struct timespec s;
    clock_gettime(1, &s);
    return s.tv_sec * 1e6 + s.tv_nsec / 1e3;
}
static int C(const void *a, const void *b)
{
    double x = *(double *)a, y = *(double *)b;
    return x < y ? -1 : x > y;
}
static double v[2000];
#define MED(n, e)                                                                                  \
    do {                                                                                           \
        for (int i = 0; i < n; i++) {                                                              \
            double t0 = T();                                                                       \
            e;                                                                                     \
            v[i] = T() - t0;                                                                       \
        }                                                                                          \
        qsort(v, n, 8, C);                                                                         \
    } while (0)
#define P(s, n)                                                                                    \
    printf("%s median %.2f us p10 %.2f p90 %.2f\n", s, v[n / 2], v[n / 10], v[n * 9 / 10])
int main()
{
    void *n = dlopen("libnvidia-ml.so.1", 2), *c = dlopen("libcuda.so.1", 2);
    int (*ni)(void) = dlsym(n, "nvmlInit_v2");
    int (*hu)(const char *, void **) = dlsym(n, "nvmlDeviceGetHandleByIndex_v2");
    int (*mi)(void *, unsigned long long *) = dlsym(n, "nvmlDeviceGetMemoryInfo");
    int (*gu)(void *, char *, unsigned) = dlsym(n, "nvmlDeviceGetUUID");
    int (*hh)(const char *, void **) = dlsym(n, "nvmlDeviceGetHandleByUUID");
    int (*ci)(unsigned) = dlsym(c, "cuInit");
    int (*rt)(void **, int) = dlsym(c, "cuDevicePrimaryCtxRetain");
    int (*pu)(void *) = dlsym(c, "cuCtxPushCurrent_v2");
    int (*po)(void **) = dlsym(c, "cuCtxPopCurrent_v2");
    int (*rl)(int) = dlsym(c, "cuDevicePrimaryCtxRelease_v2");
    int (*cm)(size_t *, size_t *) = dlsym(c, "cuMemGetInfo_v2");
    unsigned long long m[3];
    size_t f, t;
    void *d, *x, *y;
    char u[96];
    double t0 = T();
    ni();
    printf("nvmlInit_v2 %.1f us\n", T() - t0);
    hu(0, &d);
    gu(d, u, 96);
    MED(2000, mi(d, m));
    P("nvmlDeviceGetMemoryInfo", 2000);
    MED(2000, (hh(u, &x), mi(x, m)));
    P("nvmlDeviceGetHandleByUUID+GetMemoryInfo", 2000);
    printf("nvml total %llu free %llu used %llu\n", m[0], m[1], m[2]);
    t0 = T();
    ci(0);
    printf("cuInit %.1f us\n", T() - t0);
    MED(5, (rt(&x, 0), pu(x), cm(&f, &t), po(&y), rl(0)));
    P("primary ctx created+cuMemGetInfo+destroyed", 5);
    rt(&x, 0);
    pu(x);
    MED(2000, cm(&f, &t));
    P("cuMemGetInfo current ctx", 2000);
    printf("cuda total %zu free %zu\n", t, f);
    MED(2000, ({
            FILE *F = fopen("/proc/meminfo", "r");
            char b[4096];
            fread(b, 1, 4096, F);
            fclose(F);
        }));
    P("/proc/meminfo read", 2000);
    return 0;
}
