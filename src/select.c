/* Device selection: the "auto" preference order, and the lazy search that
 * stops probing once a native backend offers a discrete GPU (the first
 * clGetPlatformIDs alone costs 16-20 ms on PoCL; a program that has a CUDA
 * or ROCm GPU should not pay it). Selectors are parsed and matched by
 * policy.c. */
#include "select.h"

#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "policy.h"
#include "util/strutil.h"

static int type_rank(const gpuopt_device *d)
{
    switch (d->info.type) {
    case GPUOPT_DEVICE_TYPE_GPU: return d->info.integrated == 1 ? 3 : 4;
    case GPUOPT_DEVICE_TYPE_ACCELERATOR: return 2;
    case GPUOPT_DEVICE_TYPE_CPU: return 1;
    default: return 0;
    }
}

/* A vendor's own API (CUDA, HIP) or the CPU backend's direct view beats the
 * same kind of device reached only through OpenCL. */
static int native_rank(const gpuopt_device *d)
{
    const gpo_backend *b = d->routes[0].backend;
    return b && (b->native_gpu || strcmp(b->name, "cpu") == 0) ? 1 : 0;
}

int gpo_device_prefer(const gpuopt_device *a, size_t pos_a, const gpuopt_device *b, size_t pos_b)
{
    int ra = type_rank(a), rb = type_rank(b);
    if (ra != rb)
        return rb - ra;
    ra = native_rank(a);
    rb = native_rank(b);
    if (ra != rb)
        return rb - ra;
    if (a->est_gflops != b->est_gflops)
        return a->est_gflops > b->est_gflops ? -1 : 1;
    if (a->info.memory_bytes != b->info.memory_bytes)
        return a->info.memory_bytes > b->info.memory_bytes ? -1 : 1;
    return pos_a < pos_b ? -1 : pos_a > pos_b;
}

int gpo_device_is_native_discrete_gpu(const gpuopt_device *dev)
{
    return dev->routes[0].backend && dev->routes[0].backend->native_gpu &&
           dev->info.type == GPUOPT_DEVICE_TYPE_GPU && dev->info.integrated != 1;
}

/* A device listed from the kernel's description while its backend cannot
 * load (driver library missing) can be named explicitly, but a search never
 * chooses it: nothing could run on it. */
static int usable(const struct gpuopt_context *ctx, const gpuopt_device *d)
{
    int s = d->routes[0].backend ? gpo_ctx_slot_of(ctx, d->routes[0].backend->name) : -1;
    return s >= 0 && ctx->slots[s].status == GPUOPT_BACKEND_AVAILABLE;
}

static gpuopt_device *best_match(struct gpuopt_context *ctx, const gpo_policy *pol)
{
    gpuopt_device *best = NULL;
    size_t best_pos = 0;
    for (size_t i = 0; i < ctx->devices.n; i++) {
        gpuopt_device *d = ctx->devices.items[i];
        if (!gpo_policy_matches(pol, d) || (gpo_policy_is_search(pol) && !usable(ctx, d)))
            continue;
        if (!best || gpo_device_prefer(d, i, best, best_pos) < 0) {
            best = d;
            best_pos = i;
        }
    }
    return best;
}

static int any_native_discrete(const struct gpuopt_context *ctx)
{
    for (size_t i = 0; i < ctx->devices.n; i++)
        if (gpo_device_is_native_discrete_gpu(ctx->devices.items[i]) &&
            usable(ctx, ctx->devices.items[i]))
            return 1;
    return 0;
}

/* Why nothing matched, for the caller: what the policy asked for and what the
 * context has. */
static gpuopt_status no_match(struct gpuopt_context *ctx, const char *text, const gpo_policy *pol)
{
    if (pol->kind == GPO_POLICY_BACKEND || pol->kind == GPO_POLICY_INDEX) {
        int s = gpo_ctx_slot_of(ctx, pol->backend);
        if (s >= 0 && ctx->slots[s].status != GPUOPT_BACKEND_AVAILABLE &&
            ctx->slots[s].status != GPUOPT_BACKEND_NOT_PROBED)
            return gpo_fail(
                GPUOPT_ERR_NO_DEVICE, "device '%s': the %s backend is %s: %s", text, pol->backend,
                ctx->slots[s].status == GPUOPT_BACKEND_DISABLED ? "disabled" : "not available",
                ctx->slots[s].report.reason);
    }
    gpo_sbuf have;
    gpo_sbuf_init(&have);
    for (size_t i = 0; i < ctx->devices.n; i++)
        gpo_sbuf_appendf(&have, "%s%s%s", i ? ", " : "", ctx->devices.items[i]->info.id,
                         usable(ctx, ctx->devices.items[i])
                             ? ""
                             : " (seen by the kernel only: its backend is unavailable)");
    gpuopt_status st = gpo_fail(GPUOPT_ERR_NO_DEVICE, "no device matches '%s'; devices here: %s",
                                text, have.data ? have.data : "none");
    gpo_sbuf_free(&have);
    return st;
}

gpuopt_status gpo_ctx_select(struct gpuopt_context *ctx, const char *policy, gpuopt_device **out)
{
    gpo_policy pol;
    char why[512];
    const char *text = policy ? policy : ctx->cfg.device;
    *out = NULL;
    if (gpo_policy_parse(text, ctx->list, ctx->n_backends, &pol, why, sizeof why))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "device policy '%s' is not understood; %s",
                        text, why);
    gpuopt_status st = gpo_ctx_check_fork(ctx);
    if (st)
        return st;

    if (pol.kind == GPO_POLICY_AUTO || pol.kind == GPO_POLICY_GPU) {
        /* Probe in priority order; stop at the first native discrete GPU. */
        for (size_t i = 0; i < ctx->n_backends; i++) {
            if ((st = gpo_ctx_probe_upto(ctx, i)) != GPUOPT_OK)
                return st;
            if (any_native_discrete(ctx))
                break;
        }
    } else if (pol.kind == GPO_POLICY_BACKEND || pol.kind == GPO_POLICY_INDEX) {
        int s = gpo_ctx_slot_of(ctx, pol.backend);
        st = gpo_ctx_probe_upto(ctx, s < 0 ? ctx->n_backends - 1 : (size_t)s);
    } else {
        st = gpo_ctx_probe_all(ctx);
    }
    if (st)
        return st;
    gpuopt_device *best = best_match(ctx, &pol);
    if (!best)
        return no_match(ctx, text, &pol);
    if (pol.kind == GPO_POLICY_UUID) {
        /* A prefix must name one device only. */
        for (size_t i = 0; i < ctx->devices.n; i++)
            if (ctx->devices.items[i] != best && gpo_policy_matches(&pol, ctx->devices.items[i]))
                return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                                "UUID prefix '%s' matches both %s and %s; give more digits", text,
                                best->info.id, ctx->devices.items[i]->info.id);
    }
    gpo_log_debug(&ctx->log, "selected %s (%s) for '%s'", best->info.id, best->info.name, text);
    *out = best;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_device_select(gpuopt_context *ctx, const char *policy,
                                              gpuopt_device **device)
{
    gpo_detail_clear();
    if (device)
        *device = NULL;
    if (!ctx || !device)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", ctx ? "device" : "ctx");
    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_select(ctx, policy, device);
    gpo_ctx_unlock(ctx);
    return st;
}
