/* A CUDA GPU's memory now, from the least intrusive source that answers:
 *
 *   1. the calling thread's current context, when it is this GPU's: the
 *      host program made it, so cuMemGetInfo costs nothing more;
 *   2. NVML (nvmlDeviceGetMemoryInfo), which needs no CUDA context at all
 *      and counts every process's allocations, as nvidia-smi shows them;
 *   3. the device's primary context when it is already active
 *      (cuDevicePrimaryCtxGetState): retaining it creates nothing;
 *   4. only with GPO_MEMORY_MAY_CREATE_CONTEXT (plans): the primary context
 *      retained, made current, asked, and released, which creates and
 *      destroys it when no one else holds it (a fraction of a second and
 *      some device memory, paid for one reading).
 *
 * Every path restores what it touched: the thread's context stack and the
 * primary context's reference count are as before. Without a source, the
 * failure names what each said, so "NVML is missing" reaches the user. */
#include <assert.h>
#include <string.h>

#include "cuda_backend.h"
#include "cuda_load.h"
#include "util/strutil.h"

/* cuMemGetInfo in the current context, into *out. */
static gpuopt_status query(const gpo_cuda_state *s, const char *what, gpo_memory_reading *out)
{
    size_t free_now = 0, total = 0;
    gpo_cu_result r = s->api.cuMemGetInfo(&free_now, &total);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuMemGetInfo_v2", r);
    out->total = total;
    out->free = free_now;
    out->used = total > free_now ? total - free_now : 0;
    out->read_ns = gpo_now_ns();
    return GPUOPT_OK;
}

/* *yes 1 when the calling thread's current context belongs to `cu`; a
 * driver without the two calls (before CUDA 4.0) has none to tell. */
static gpuopt_status current_is(const gpo_cuda_state *s, gpo_cu_device cu, const char *what,
                                int *yes)
{
    gpo_cu_context ctx = NULL;
    gpo_cu_device d = -1;
    *yes = 0;
    if (!s->api.cuCtxGetCurrent || !s->api.cuCtxGetDevice || !s->api.cuMemGetInfo)
        return GPUOPT_OK;
    gpo_cu_result r = s->api.cuCtxGetCurrent(&ctx);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxGetCurrent", r);
    if (!ctx)
        return GPUOPT_OK;
    r = s->api.cuCtxGetDevice(&d);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxGetDevice", r);
    *yes = d == cu;
    return GPUOPT_OK;
}

/* The primary context retained, pushed, asked, popped and released. */
static gpuopt_status in_primary(const gpo_cuda_state *s, gpo_cu_device cu, const char *what,
                                gpo_memory_reading *out)
{
    gpo_cu_context ctx = NULL, popped = NULL;
    gpuopt_status st = GPUOPT_OK;
    gpo_cu_result r = s->api.cuDevicePrimaryCtxRetain(&ctx, cu);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDevicePrimaryCtxRetain", r);
    r = s->api.cuCtxPushCurrent(ctx);
    if (r != GPO_CUDA_SUCCESS) {
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxPushCurrent_v2", r);
        goto release;
    }
    st = query(s, what, out);
    /* Pop even after a failure: the caller's thread must get its own
     * current context back. */
    r = s->api.cuCtxPopCurrent(&popped);
    if (r != GPO_CUDA_SUCCESS && st == GPUOPT_OK)
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxPopCurrent_v2", r);
release:
    r = s->api.cuDevicePrimaryCtxRelease(cu);
    if (r != GPO_CUDA_SUCCESS && st == GPUOPT_OK)
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDevicePrimaryCtxRelease_v2", r);
    return st;
}

static gpuopt_status live(void *state, const gpo_route *route, uint32_t flags,
                          gpo_memory_reading *out)
{
    gpo_cuda_state *s = state;
    char what[64], nvml_why[600] = "", ctx_why[300] = "";
    assert(s && route && route->index >= 0 && out);
    memset(out, 0, sizeof *out);
    gpo_snprintf(what, sizeof what, "cuda:%d: reading its memory", (int)route->index);
    gpuopt_status st = gpo_cuda_check_pid(s, what);
    if (st)
        return st;

    gpo_cu_device cu = 0;
    int driver = !s->kernel_only;
    if (driver) {
        gpo_cu_result r = s->api.cuDeviceGet(&cu, route->index);
        if (r != GPO_CUDA_SUCCESS)
            return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDeviceGet", r);
        int current = 0;
        st = current_is(s, cu, what, &current);
        if (st)
            return st;
        if (current) {
            st = query(s, what, out);
            if (st == GPUOPT_OK) {
                out->source = GPUOPT_MEMORY_SOURCE_CONTEXT;
                gpo_strlcpy(out->source_text,
                            "CUDA cuMemGetInfo in the calling thread's current context",
                            sizeof out->source_text);
            }
            return st;
        }
    }

    const gpo_nvml *nv = NULL;
    st = gpo_cuda_nvml(s, &nv);
    if (st == GPUOPT_ERR_NO_MEMORY)
        return st;
    if (st == GPUOPT_OK)
        st = gpo_nvml_read_memory(nv, route->info.uuid, route->info.pci_bus_id, out);
    if (st == GPUOPT_OK)
        return st;
    gpo_strlcpy(nvml_why, gpo_detail_get(), sizeof nvml_why);

    if (!driver)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: %s; and the CUDA driver library is not "
                        "usable here (%s)",
                        what, nvml_why, s->why_unusable);
    const char *lacking = !s->api.cuDevicePrimaryCtxRetain    ? "cuDevicePrimaryCtxRetain"
                          : !s->api.cuDevicePrimaryCtxRelease ? "cuDevicePrimaryCtxRelease_v2"
                          : !s->api.cuCtxPushCurrent          ? "cuCtxPushCurrent_v2"
                          : !s->api.cuCtxPopCurrent           ? "cuCtxPopCurrent_v2"
                          : !s->api.cuMemGetInfo              ? "cuMemGetInfo_v2"
                                                              : NULL;
    if (lacking)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: %s; and the CUDA driver library lacks %s (a driver older than CUDA "
                        "11.0)",
                        what, nvml_why, lacking);
    /* -1: the driver cannot say (no cuDevicePrimaryCtxGetState). */
    int active = -1;
    unsigned int ctx_flags = 0;
    if (s->api.cuDevicePrimaryCtxGetState) {
        gpo_cu_result r = s->api.cuDevicePrimaryCtxGetState(cu, &ctx_flags, &active);
        if (r != GPO_CUDA_SUCCESS)
            return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDevicePrimaryCtxGetState", r);
        active = active != 0;
    }
    if (active == 1 || (flags & GPO_MEMORY_MAY_CREATE_CONTEXT)) {
        st = in_primary(s, cu, what, out);
        if (st)
            return st;
        out->source = active == 1 ? GPUOPT_MEMORY_SOURCE_CONTEXT : GPUOPT_MEMORY_SOURCE_NEW_CONTEXT;
        gpo_strlcpy(out->source_text,
                    active == 1   ? "CUDA cuMemGetInfo in the device's primary context, which was "
                                    "already active (no context created)"
                    : active == 0 ? "CUDA cuMemGetInfo in the device's primary context, created "
                                    "for this reading and destroyed after it (no CUDA context was "
                                    "active and NVML did not answer)"
                                  : "CUDA cuMemGetInfo in the device's primary context (the driver "
                                    "lacks cuDevicePrimaryCtxGetState, so whether one was created "
                                    "is unknown)",
                    sizeof out->source_text);
        return GPUOPT_OK;
    }
    gpo_snprintf(ctx_why, sizeof ctx_why,
                 "no CUDA context is %s on the device, and creating one only to read it would "
                 "cost the program device memory (a plan at level 1 does)",
                 active == 0 ? "active" : "known to be active");
    return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "%s: %s; %s", what, nvml_why, ctx_why);
}

gpuopt_status gpo_cuda_memory_live(void *state, const gpo_route *route, uint32_t flags,
                                   gpo_memory_reading *out)
{
    gpuopt_status st = live(state, route, flags, out);
    if (st) /* a failure late in a path (a release) leaves no half reading */
        memset(out, 0, sizeof *out);
    return st;
}
