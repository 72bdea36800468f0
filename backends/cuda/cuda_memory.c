/* Free device memory. CUDA answers it only inside a context, so this retains
 * the device's primary context (the one the CUDA runtime and most frameworks
 * share, so a host program that uses CUDA pays nothing extra), makes it
 * current, asks, and restores everything: the thread's context stack and the
 * primary context's reference count are as before. Creating a context costs
 * time and device memory, which is why the core asks only for plans at
 * level 1 and above, never while listing. */
#include <assert.h>
#include <string.h>

#include "cuda_backend.h"
#include "cuda_load.h"
#include "util/strutil.h"

gpuopt_status gpo_cuda_memory_free(void *state, const gpo_route *route, uint64_t *free_bytes)
{
    gpo_cuda_state *s = state;
    gpuopt_status st = GPUOPT_OK;
    gpo_cu_device cu = 0;
    gpo_cu_context ctx = NULL, popped = NULL;
    size_t free_now = 0, total = 0;
    char what[64];

    assert(s && route && route->index >= 0 && free_bytes);
    *free_bytes = 0;
    gpo_snprintf(what, sizeof what, "cuda:%d: reading free memory", (int)route->index);
    st = gpo_cuda_driver_ready(s, what);
    if (st)
        return st;
    const char *lacking = !s->api.cuDevicePrimaryCtxRetain    ? "cuDevicePrimaryCtxRetain"
                          : !s->api.cuDevicePrimaryCtxRelease ? "cuDevicePrimaryCtxRelease_v2"
                          : !s->api.cuCtxPushCurrent          ? "cuCtxPushCurrent_v2"
                          : !s->api.cuCtxPopCurrent           ? "cuCtxPopCurrent_v2"
                          : !s->api.cuMemGetInfo              ? "cuMemGetInfo_v2"
                                                              : NULL;
    if (lacking)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the CUDA driver library lacks %s (a driver older than CUDA 11.0); "
                        "the device's total memory stands in for its free memory",
                        what, lacking);

    gpo_cu_result r = s->api.cuDeviceGet(&cu, route->index);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDeviceGet", r);
    r = s->api.cuDevicePrimaryCtxRetain(&ctx, cu);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDevicePrimaryCtxRetain", r);

    r = s->api.cuCtxPushCurrent(ctx);
    if (r != GPO_CUDA_SUCCESS) {
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxPushCurrent_v2", r);
        goto release;
    }
    r = s->api.cuMemGetInfo(&free_now, &total);
    if (r != GPO_CUDA_SUCCESS)
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuMemGetInfo_v2", r);
    /* Pop even after a failure: the caller's thread must get its own
     * current context back. */
    r = s->api.cuCtxPopCurrent(&popped);
    if (r != GPO_CUDA_SUCCESS && st == GPUOPT_OK)
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxPopCurrent_v2", r);
release:
    r = s->api.cuDevicePrimaryCtxRelease(cu);
    if (r != GPO_CUDA_SUCCESS && st == GPUOPT_OK)
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDevicePrimaryCtxRelease_v2", r);
    if (st == GPUOPT_OK)
        *free_bytes = free_now;
    return st;
}
