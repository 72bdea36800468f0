/* See gpu_cuda.h. */
#include "gpu_cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gpu_on_doubles(void)
{
    const char *v = getenv("GPUOPT_GPU_TEST_ON_DOUBLES");
    return v && strcmp(v, "1") == 0;
}

/* POSIX lets a dlsym result become a function pointer; the bytes are
 * copied so -Wpedantic stays quiet. */
static int sym(void *h, const char *name, void *slot)
{
    void *p = dlsym(h, name);
    if (!p) {
        printf("skipped: the CUDA library lacks %s\n", name);
        return -1;
    }
    memcpy(slot, &p, sizeof p);
    return 0;
}

int gpu_cuda_open(gpuopt_context **ctx, gpuopt_device **dev, gpu_driver *drv)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = "cuda";
    o.config_path = "";
    *ctx = NULL;
    *dev = NULL;
    if (gpuopt_context_create(&o, ctx) != GPUOPT_OK) {
        printf("skipped: no context: %s\n", gpuopt_last_error());
        return 77;
    }
    gpuopt_backend_info b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    int32_t n = 0;
    gpuopt_backend_count(*ctx, &n);
    for (int32_t i = 0; i < n; i++) {
        gpuopt_backend_info one;
        memset(&one, 0, sizeof one);
        one.struct_size = sizeof one;
        if (gpuopt_backend_at(*ctx, i, &one) == GPUOPT_OK && strcmp(one.name, "cuda") == 0)
            b = one;
    }
    if (b.status != GPUOPT_BACKEND_AVAILABLE || b.device_count < 1 ||
        gpuopt_device_select(*ctx, "cuda:0", dev) != GPUOPT_OK) {
        printf("skipped: no NVIDIA GPU the library can use here: %s\n",
               b.reason[0] ? b.reason : "the CUDA backend lists no device");
        gpuopt_context_destroy(*ctx);
        *ctx = NULL;
        return 77;
    }
    /* The same object the library loaded (dlopen of the same path). */
    void *h = dlopen(b.library, RTLD_NOW | RTLD_LOCAL);
    if (!h || sym(h, "cuInit", &drv->cuInit) || sym(h, "cuDeviceGet", &drv->cuDeviceGet) ||
        sym(h, "cuDevicePrimaryCtxGetState", &drv->cuDevicePrimaryCtxGetState) ||
        sym(h, "cuDevicePrimaryCtxRetain", &drv->cuDevicePrimaryCtxRetain) ||
        sym(h, "cuDevicePrimaryCtxRelease_v2", &drv->cuDevicePrimaryCtxRelease) ||
        sym(h, "cuCtxPushCurrent_v2", &drv->cuCtxPushCurrent) ||
        sym(h, "cuCtxPopCurrent_v2", &drv->cuCtxPopCurrent) ||
        sym(h, "cuCtxGetCurrent", &drv->cuCtxGetCurrent) ||
        sym(h, "cuCtxSynchronize", &drv->cuCtxSynchronize) ||
        sym(h, "cuMemAlloc_v2", &drv->cuMemAlloc) || sym(h, "cuMemFree_v2", &drv->cuMemFree) ||
        sym(h, "cuMemcpyHtoD_v2", &drv->cuMemcpyHtoD) ||
        sym(h, "cuMemcpyDtoH_v2", &drv->cuMemcpyDtoH) || drv->cuInit(0) != 0) {
        printf("skipped: cannot use %s as a host program would: %s\n", b.library,
               h ? "a call failed" : dlerror());
        gpuopt_context_destroy(*ctx);
        *ctx = NULL;
        return 77;
    }
    return 0;
}
