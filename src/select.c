/* Device selection: policy syntax, the "auto" preference order, and the lazy
 * search that stops probing once a native backend offers a discrete GPU (the
 * first clGetPlatformIDs alone costs 16-20 ms on PoCL; a program that has a
 * CUDA or ROCm GPU should not pay it). */
#include "select.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "util/strutil.h"

static const char accepted_policies[] =
    "accepted: auto, gpu, a backend name (%s), backend:index (e.g. %s:0), a UUID (GPU-... "
    "or a unique prefix of at least 8 characters), or a PCI bus id (0000:3b:00.0 or 3b:00.0)";

static void why_accepted(const struct gpo_backend *const *list, size_t n, char *why, size_t cap)
{
    char names[128] = "";
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(names);
        gpo_snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", list[i]->name);
    }
    gpo_snprintf(why, cap, accepted_policies, names, n ? list[0]->name : "cpu");
}

static int looks_like_uuid(const char *s)
{
    size_t digits = 0;
    if (strncmp(s, "GPU-", 4) == 0 || strncmp(s, "MIG-", 4) == 0)
        s += 4;
    for (; *s; s++) {
        if (isxdigit((unsigned char)*s))
            digits++;
        else if (*s != '-')
            return 0;
    }
    return digits >= 8;
}

int gpo_policy_parse(const char *text, const struct gpo_backend *const *list, size_t n,
                     gpo_policy *out, char *why, size_t cap)
{
    char buf[GPO_POLICY_MAX];
    memset(out, 0, sizeof *out);
    out->index = -1;
    if (!text || gpo_strlcpy(buf, text, sizeof buf) >= sizeof buf)
        goto bad;
    gpo_trim(buf);
    if (!*buf)
        goto bad;
    if (gpo_strcaseeq(buf, "auto")) {
        out->kind = GPO_POLICY_AUTO;
        return 0;
    }
    if (gpo_strcaseeq(buf, "gpu")) {
        out->kind = GPO_POLICY_GPU;
        return 0;
    }
    char *colon = strchr(buf, ':');
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(list[i]->name);
        if (strncasecmp(buf, list[i]->name, len) != 0)
            continue;
        if (buf[len] == '\0') {
            out->kind = GPO_POLICY_BACKEND;
            gpo_strlcpy(out->backend, list[i]->name, sizeof out->backend);
            return 0;
        }
        if (buf[len] == ':') {
            int64_t idx;
            const char *digits = buf + len + 1;
            /* Digits only: "cpu: 0" and "cpu:+0" are typos, not indices. */
            for (const char *c = digits; *c; c++)
                if (!isdigit((unsigned char)*c))
                    goto bad;
            if (gpo_parse_i64(digits, 0, INT32_MAX, &idx))
                goto bad;
            out->kind = GPO_POLICY_INDEX;
            gpo_strlcpy(out->backend, list[i]->name, sizeof out->backend);
            out->index = (int32_t)idx;
            return 0;
        }
    }
    if (colon && gpo_pci_normalise(buf, out->key, sizeof out->key) == 0) {
        out->kind = GPO_POLICY_PCI;
        return 0;
    }
    if (looks_like_uuid(buf)) {
        out->kind = GPO_POLICY_UUID;
        gpo_strlcpy(out->key, buf, sizeof out->key);
        return 0;
    }
bad:
    why_accepted(list, n, why, cap);
    return -1;
}

/* Hex digits of a UUID, lower case, without "GPU-" and dashes. */
static void uuid_hex(const char *in, char *out, size_t cap)
{
    size_t k = 0;
    if (strncmp(in, "GPU-", 4) == 0 || strncmp(in, "MIG-", 4) == 0)
        in += 4;
    for (; *in && k + 1 < cap; in++)
        if (isxdigit((unsigned char)*in))
            out[k++] = (char)tolower((unsigned char)*in);
    out[k] = '\0';
}

int gpo_policy_matches(const gpo_policy *pol, const gpuopt_device *dev)
{
    switch (pol->kind) {
    case GPO_POLICY_AUTO: return 1;
    case GPO_POLICY_GPU: return dev->info.type == GPUOPT_DEVICE_TYPE_GPU;
    case GPO_POLICY_BACKEND:
    case GPO_POLICY_INDEX:
        /* Any route counts: "opencl:0" still finds a GPU listed as cuda:0. */
        for (int r = 0; r < dev->n_routes; r++) {
            if (!dev->routes[r].backend || strcmp(dev->routes[r].backend->name, pol->backend))
                continue;
            if (pol->kind == GPO_POLICY_BACKEND || dev->routes[r].index == pol->index)
                return 1;
        }
        return 0;
    case GPO_POLICY_UUID: {
        char want[64], have[64];
        if (!dev->info.uuid[0])
            return 0;
        uuid_hex(pol->key, want, sizeof want);
        uuid_hex(dev->info.uuid, have, sizeof have);
        return strncmp(have, want, strlen(want)) == 0;
    }
    case GPO_POLICY_PCI: {
        char have[32];
        return gpo_pci_normalise(dev->info.pci_bus_id, have, sizeof have) == 0 &&
               strcmp(have, pol->key) == 0;
    }
    }
    return 0;
}

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

static int is_search(const gpo_policy *pol)
{
    return pol->kind == GPO_POLICY_AUTO || pol->kind == GPO_POLICY_GPU ||
           pol->kind == GPO_POLICY_BACKEND;
}

static gpuopt_device *best_match(struct gpuopt_context *ctx, const gpo_policy *pol)
{
    gpuopt_device *best = NULL;
    size_t best_pos = 0;
    for (size_t i = 0; i < ctx->devices.n; i++) {
        gpuopt_device *d = ctx->devices.items[i];
        if (!gpo_policy_matches(pol, d) || (is_search(pol) && !usable(ctx, d)))
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
            return gpo_fail(GPUOPT_ERR_NO_DEVICE, "device '%s': the %s backend is %s: %s", text,
                            pol->backend,
                            ctx->slots[s].status == GPUOPT_BACKEND_DISABLED ? "disabled" :
                                                                               "not available",
                            ctx->slots[s].report.reason);
    }
    gpo_sbuf have;
    gpo_sbuf_init(&have);
    for (size_t i = 0; i < ctx->devices.n; i++)
        gpo_sbuf_appendf(&have, "%s%s%s", i ? ", " : "", ctx->devices.items[i]->info.id,
                         usable(ctx, ctx->devices.items[i]) ?
                             "" :
                             " (seen by the kernel only: its backend is unavailable)");
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
                                "UUID prefix '%s' matches both %s and %s; give more digits",
                                text, best->info.id, ctx->devices.items[i]->info.id);
    }
    gpo_log_debug(&ctx->log, "selected %s (%s) for '%s'", best->info.id, best->info.name, text);
    *out = best;
    return GPUOPT_OK;
}
