/* What the real-GPU tests (label `gpu`) share: finding an NVIDIA GPU the
 * library can run code on, through the library itself, and the few
 * driver calls a host program makes around it, resolved from the very
 * libcuda.so.1 the library loaded. Without a usable GPU a test exits 77
 * (skipped, with the library's reason). tools/gpu-check.sh runs these
 * binaries; with GPUOPT_GPU_TEST_ON_DOUBLES=1 it runs them on the test
 * doubles (its dry run), where kernels compute nothing. */
#ifndef GPO_TESTS_GPU_CUDA_H
#define GPO_TESTS_GPU_CUDA_H

#include <stddef.h>

#include "gpuopt/gpuopt.h"

/* The driver calls a host program makes (CUDA driver API, cuda.h 13.0
 * prototypes with plain C types). */
typedef struct gpu_driver {
    int (*cuInit)(unsigned int flags);
    int (*cuDeviceGet)(int *dev, int ordinal);
    int (*cuDevicePrimaryCtxGetState)(int dev, unsigned int *flags, int *active);
    int (*cuDevicePrimaryCtxRetain)(void **ctx, int dev);
    int (*cuDevicePrimaryCtxRelease)(int dev); /* _v2 */
    int (*cuCtxPushCurrent)(void *ctx);        /* _v2 */
    int (*cuCtxPopCurrent)(void **ctx);        /* _v2 */
    int (*cuCtxGetCurrent)(void **ctx);
    int (*cuCtxSynchronize)(void);
    int (*cuMemAlloc)(unsigned long long *ptr, size_t bytes);                   /* _v2 */
    int (*cuMemFree)(unsigned long long ptr);                                   /* _v2 */
    int (*cuMemcpyHtoD)(unsigned long long dst, const void *src, size_t bytes); /* _v2 */
    int (*cuMemcpyDtoH)(void *dst, unsigned long long src, size_t bytes);       /* _v2 */
} gpu_driver;

/* A context on the CUDA backend and its device cuda:0, and the driver it
 * loaded; 0 on success, 77 (after printing why) when there is no GPU to
 * test. */
int gpu_cuda_open(gpuopt_context **ctx, gpuopt_device **dev, gpu_driver *drv);

/* 1 when running on the test doubles (the gpu-check dry run). */
int gpu_on_doubles(void);

#endif
