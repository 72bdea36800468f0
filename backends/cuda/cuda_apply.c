/* gpuopt_plan_apply(GPUOPT_APPLY_DEVICE) for CUDA: the plan's L2 set-aside
 * for persisting accesses (cuda.l2_persisting_bytes) becomes the
 * CU_LIMIT_PERSISTING_L2_CACHE_SIZE limit of the calling thread's current
 * context, read back to say what the driver made of it.
 *
 * Only the current context, never one of gpuopt's: the context belongs to
 * the host program's framework (the CUDA runtime's primary context, which
 * PyTorch and most libraries share), and a limit set on a context gpuopt
 * made or switched to would not be the one the program's kernels run under.
 * So nothing is created, retained, pushed or switched here; a thread without
 * a context, or with one on another device, is refused in words.
 *
 * Where nothing can be applied for a reason the program cannot change (the
 * device or driver lacks the feature, MPS owns the setting), the report says
 * why and the status is GPUOPT_OK: the plan is still right for the device. */
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "cuda_backend.h"
#include "cuda_load.h"
#include "plan.h"
#include "util/strutil.h"

#define L2_KNOB "cuda.l2_persisting_bytes"
#define L2_LIMIT "CU_LIMIT_PERSISTING_L2_CACHE_SIZE"
/* CUDA C++ Programming Guide, "L2 Cache Set-Aside for Persisting Accesses":
 * the set-aside exists from compute capability 8.0, and under MPS only the
 * MPS server's environment sets it. */
#define L2_SOURCE "CUDA C++ Programming Guide, \"L2 Cache Set-Aside for Persisting Accesses\""

/* Appends one line to the report and logs it at info. */
static void say(const struct gpuopt_plan *plan, gpo_sbuf *report, const char *fmt, ...)
    GPO_PRINTF(3, 4);
static void say(const struct gpuopt_plan *plan, gpo_sbuf *report, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    gpo_sbuf_appendf(report, "%s\n", line);
    gpo_log_info(gpo_plan_log(plan), "cuda: %s", line);
}

/* A refusal: the report line and the detail say the same words. */
static gpuopt_status refuse(const struct gpuopt_plan *plan, gpo_sbuf *report, const char *id,
                            const char *fmt, ...) GPO_PRINTF(4, 5);
static gpuopt_status refuse(const struct gpuopt_plan *plan, gpo_sbuf *report, const char *id,
                            const char *fmt, ...)
{
    char words[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(words, sizeof words, fmt, ap);
    va_end(ap);
    say(plan, report, "refused on %s: %s", id, words);
    return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "refused on %s: %s", id, words);
}

static int mps_enabled(const gpuopt_device *dev)
{
    const cJSON *d = dev->details ? cJSON_GetObjectItem(dev->details, "cuda") : NULL;
    const cJSON *v = d ? cJSON_GetObjectItem(d, "mps_enabled") : NULL;
    return cJSON_IsTrue(v) || (cJSON_IsNumber(v) && v->valuedouble == 1);
}

/* 1 with the reason in `why` when there is nothing to apply, decided
 * without a driver call. The checks run from the device to the driver. */
static int nothing_to_apply(const gpo_cuda_state *s, const struct gpuopt_plan *plan, int has,
                            char *why, size_t cap)
{
    const gpuopt_device *dev = gpo_plan_device(plan);
    const gpuopt_device_info *in = &dev->info;
    char v[16];
    if (in->cc_major > 0 && in->cc_major < 8) {
        gpo_snprintf(why, cap,
                     "compute capability %d.%d has no L2 set-aside for persisting accesses "
                     "(it needs 8.0; %s)%s",
                     in->cc_major, in->cc_minor, L2_SOURCE,
                     has ? ": the plan's " L2_KNOB " is ignored" : "");
        return 1;
    }
    if (!has) {
        gpo_snprintf(why, cap, "the plan has no " L2_KNOB " (%s)",
                     gpo_plan_level_applied(plan) < 1
                         ? "a level-0 plan reads no device fact"
                         : "the device reports no persisting set-aside: "
                           "CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE is 0 or unknown");
        return 1;
    }
    if (s->kernel_only) {
        gpo_snprintf(why, cap, "the CUDA driver library is not usable here: %s", s->why_unusable);
        return 1;
    }
    const char *lacking = !s->api.cuCtxGetCurrent  ? "cuCtxGetCurrent"
                          : !s->api.cuCtxGetDevice ? "cuCtxGetDevice"
                          : !s->api.cuCtxSetLimit  ? "cuCtxSetLimit"
                          : !s->api.cuCtxGetLimit  ? "cuCtxGetLimit"
                                                   : NULL;
    if (lacking) {
        gpo_snprintf(why, cap,
                     "the CUDA driver library lacks %s (all four context calls apply needs "
                     "exist since CUDA 4.0: this is not a complete NVIDIA driver)",
                     lacking);
        return 1;
    }
    if (s->driver_version > 0 && s->driver_version < 11000) {
        gpo_cuda_version_text(s->driver_version, v, sizeof v);
        gpo_snprintf(why, cap, "the CUDA %s driver predates " L2_LIMIT " (CUDA 11.0)", v);
        return 1;
    }
    if (mps_enabled(dev)) {
        gpo_snprintf(why, cap,
                     "MPS is on: a client cannot change the set-aside; only the MPS server's "
                     "CUDA_DEVICE_DEFAULT_PERSISTING_L2_CACHE_PERCENTAGE_LIMIT sets it (%s)",
                     L2_SOURCE);
        return 1;
    }
    return 0;
}

/* The driver answers CUDA_ERROR_UNSUPPORTED_LIMIT for a limit this context
 * cannot have (cuCtxSetLimit in cuda.h): a fact of the platform, not a
 * failure. Anything else is. */
static gpuopt_status limit_call(const gpo_cuda_state *s, const struct gpuopt_plan *plan,
                                gpo_sbuf *report, const char *id, const char *what,
                                const char *call, gpo_cu_result r)
{
    char words[256];
    if (r == GPO_CUDA_ERROR_UNSUPPORTED_LIMIT) {
        gpo_cuda_result_words(&s->api, r, words, sizeof words);
        say(plan, report,
            "nothing applied on %s: the driver does not support " L2_LIMIT
            " on this context (%s answered %s)",
            id, call, words);
        return GPUOPT_OK;
    }
    return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, call, r);
}

static gpuopt_status set_l2_limit(const gpo_cuda_state *s, const gpo_route *route,
                                  const struct gpuopt_plan *plan, uint64_t want, const char *id,
                                  const char *what, gpo_sbuf *report)
{
    gpo_cu_context ctx = NULL;
    gpo_cu_device current = -1, planned = -1;
    size_t was = 0, now = 0;
    int k = (int)route->index;

    gpo_cu_result r = s->api.cuCtxGetCurrent(&ctx);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxGetCurrent", r);
    if (!ctx)
        return refuse(plan, report, id,
                      "the calling thread has no current CUDA context, and gpuopt never creates "
                      "one (the program's framework owns it): make %s's context current first "
                      "(cudaSetDevice(%d) and a first CUDA call, torch.cuda.set_device(%d), or "
                      "cuCtxSetCurrent)",
                      id, k, k);
    r = s->api.cuCtxGetDevice(&current);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxGetDevice", r);
    r = s->api.cuDeviceGet(&planned, k);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDeviceGet", r);
    /* NVIDIA's driver hands out the ordinal as the CUdevice handle
     * (cuDeviceGet(&d, i) gives d == i), so the current context's device
     * reads as its cuda:N. */
    if (current != planned)
        return refuse(plan, report, id,
                      "the calling thread's current CUDA context is on cuda:%d, but the plan is "
                      "for %s (%s): make %s's context current first, or apply a plan made for "
                      "cuda:%d",
                      (int)current, id, gpo_plan_device(plan)->info.name, id, (int)current);

    r = s->api.cuCtxGetLimit(&was, GPO_CU_LIMIT_PERSISTING_L2_CACHE_SIZE);
    if (r != GPO_CUDA_SUCCESS)
        return limit_call(s, plan, report, id, what, "cuCtxGetLimit", r);
    r = s->api.cuCtxSetLimit(GPO_CU_LIMIT_PERSISTING_L2_CACHE_SIZE, (size_t)want);
    if (r != GPO_CUDA_SUCCESS)
        return limit_call(s, plan, report, id, what, "cuCtxSetLimit", r);
    /* The limit is a hint the driver may clamp or round (cuCtxSetLimit in
     * cuda.h): what it kept is what the report says. */
    r = s->api.cuCtxGetLimit(&now, GPO_CU_LIMIT_PERSISTING_L2_CACHE_SIZE);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuCtxGetLimit", r);
    if ((uint64_t)now == want)
        say(plan, report, "set cuda L2 persisting limit to %zu bytes on %s (was %zu)", now, id,
            was);
    else
        say(plan, report,
            "set cuda L2 persisting limit to %zu bytes on %s (was %zu; the plan asked for "
            "%" PRIu64 " and the driver kept %zu)",
            now, id, was, want, now);
    return GPUOPT_OK;
}

gpuopt_status gpo_cuda_apply_device(void *state, const gpo_route *route,
                                    const struct gpuopt_plan *plan, gpo_sbuf *report)
{
    gpo_cuda_state *s = state;
    gpuopt_status st;
    char id[32], what[96], why[768];
    int64_t want = 0;

    assert(s && route && route->index >= 0 && plan && gpo_plan_device(plan) && report);
    gpo_snprintf(id, sizeof id, "cuda:%d", (int)route->index);
    int has = gpo_knob_get_int(plan, L2_KNOB, &want);
    if (has && want < 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda: %s: " L2_KNOB " is %" PRId64 " bytes",
                        id, want);
    if (nothing_to_apply(s, plan, has, why, sizeof why)) {
        say(plan, report, "nothing applied on %s: %s", id, why);
        return GPUOPT_OK;
    }
    gpo_snprintf(what, sizeof what, "setting the L2 persisting limit on %s", id);
    st = gpo_cuda_check_pid(s, what);
    if (!st)
        st = set_l2_limit(s, route, plan, (uint64_t)want, id, what, report);
    /* Refusals wrote their own line. */
    if (st && st != GPUOPT_ERR_UNSUPPORTED)
        say(plan, report, "failed: %s", gpo_detail_get());
    return st;
}
