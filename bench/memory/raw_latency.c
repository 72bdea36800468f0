/* What tier 2 measures for the latency advice (launch latency, pinned
 * transfer rates, the fixed cost of a 4 KiB copy), with raw CUDA driver calls
 * and nothing but libc and dlopen, for a GPU machine that cannot build the
 * project: an empty PTX kernel launched and waited for on a non-blocking
 * stream, 16 MiB pinned copies each way, 4 KiB copies each way, medians.
 * The H200 figures of docs/latency.md.
 *   cc -O2 -o raw_latency raw_latency.c -ldl && ./raw_latency */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double T()
{
    struct timespec s;
    clock_gettime(1, &s);
    return s.tv_sec * 1e9 + s.tv_nsec;
}
static int C(const void *a, const void *b)
{
    double x = *(double *)a, y = *(double *)b;
    return x < y ? -1 : x > y;
}
static double v[500];
#define MED(n, e)                                                                                  \
    do {                                                                                           \
        for (int i = 0; i < n; i++) {                                                              \
            double t0 = T();                                                                       \
            e;                                                                                     \
            v[i] = T() - t0;                                                                       \
        }                                                                                          \
        qsort(v, n, 8, C);                                                                         \
    } while (0)
#define S(f) f = dlsym(c, #f)
const char *ptx = ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry e(){ret;}\n";
int main()
{
    void *c = dlopen("libcuda.so.1", 2);
    int (*cuInit)(unsigned), (*cuDevicePrimaryCtxRetain)(void **, int),
        (*cuCtxPushCurrent_v2)(void *), (*cuModuleLoadData)(void **, const void *),
        (*cuModuleGetFunction)(void **, void *, const char *), (*cuStreamCreate)(void **, unsigned),
        (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                          unsigned, void *, void **, void **),
        (*cuStreamSynchronize)(void *), (*cuMemAlloc_v2)(unsigned long long *, size_t),
        (*cuMemAllocHost_v2)(void **, size_t),
        (*cuMemcpyHtoDAsync_v2)(unsigned long long, const void *, size_t, void *),
        (*cuMemcpyDtoHAsync_v2)(void *, unsigned long long, size_t, void *);
    S(cuInit);
    S(cuDevicePrimaryCtxRetain);
    S(cuCtxPushCurrent_v2);
    S(cuModuleLoadData);
    S(cuModuleGetFunction);
    S(cuStreamCreate);
    S(cuLaunchKernel);
    S(cuStreamSynchronize);
    S(cuMemAlloc_v2);
    S(cuMemAllocHost_v2);
    S(cuMemcpyHtoDAsync_v2);
    S(cuMemcpyDtoHAsync_v2);
    void *x, *m, *f, *s, *h;
    unsigned long long d;
    size_t B = 16 << 20;
    cuInit(0);
    cuDevicePrimaryCtxRetain(&x, 0);
    cuCtxPushCurrent_v2(x);
    printf("load %d\n", cuModuleLoadData(&m, ptx));
    cuModuleGetFunction(&f, m, "e");
    cuStreamCreate(&s, 1);
    cuMemAlloc_v2(&d, B);
    cuMemAllocHost_v2(&h, B);
    MED(500, (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, 0, 0), cuStreamSynchronize(s)));
    printf("launch+sync %.0f ns p20 %.0f p80 %.0f\n", v[250], v[100], v[400]);
    MED(15, (cuMemcpyHtoDAsync_v2(d, h, B, s), cuStreamSynchronize(s)));
    printf("h2d pinned 16MiB %.2f GB/s\n", B / v[7]);
    MED(15, (cuMemcpyDtoHAsync_v2(h, d, B, s), cuStreamSynchronize(s)));
    printf("d2h pinned 16MiB %.2f GB/s\n", B / v[7]);
    MED(300, (cuMemcpyHtoDAsync_v2(d, h, 4096, s), cuStreamSynchronize(s)));
    printf("h2d 4KiB %.0f ns\n", v[150]);
    MED(300, (cuMemcpyDtoHAsync_v2(h, d, 4096, s), cuStreamSynchronize(s)));
    printf("d2h 4KiB %.0f ns\n", v[150]);
    return 0;
}
