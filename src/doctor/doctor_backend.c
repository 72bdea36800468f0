/* One backend as the doctor sees it: its slot copied from the probed
 * context, which devices it makes usable, the generic "backend" finding
 * every block starts with, and its library path. */
#include "doctor_backend.h"

#include <string.h>

/* A device counts when it is not a CPU, one of its routes goes through an
 * available backend, and that backend does not mark it unusable
 * (details.<backend>.usable = false, as kernel-only listings are). */
static int route_usable(const struct gpuopt_context *ctx, const gpuopt_device *d,
                        const gpo_route *rt)
{
    const char *name = rt->backend->name;
    int s = gpo_ctx_slot_of(ctx, name);
    if (s < 0 || ctx->slots[s].status != GPUOPT_BACKEND_AVAILABLE)
        return 0;
    const cJSON *details = d->details ? cJSON_GetObjectItemCaseSensitive(d->details, name) : NULL;
    const cJSON *usable = cJSON_GetObjectItemCaseSensitive(details, "usable");
    return !cJSON_IsFalse(usable);
}

int gpo_dr_device_usable(const struct gpuopt_context *ctx, const gpuopt_device *d,
                         const char *backend)
{
    if (d->info.type == GPUOPT_DEVICE_TYPE_CPU)
        return 0;
    for (int r = 0; r < d->n_routes; r++) {
        if (backend && strcmp(d->routes[r].backend->name, backend) != 0)
            continue;
        if (route_usable(ctx, d, &d->routes[r]))
            return 1;
    }
    return 0;
}

/* Devices a backend listed that are CPUs (PoCL's OpenCL device). */
static int cpu_count(const struct gpuopt_context *ctx, const char *backend)
{
    int n = 0;
    for (size_t i = 0; i < ctx->devices.n; i++) {
        const gpuopt_device *d = ctx->devices.items[i];
        for (int r = 0; r < d->n_routes; r++)
            n += d->info.type == GPUOPT_DEVICE_TYPE_CPU &&
                 strcmp(d->routes[r].backend->name, backend) == 0;
    }
    return n;
}

void gpo_dr_slots_read(const struct gpuopt_context *ctx, gpo_backend_slot *slots)
{
    for (size_t i = 0; i < ctx->n_backends; i++) {
        const gpo_ctx_slot *c = &ctx->slots[i];
        gpo_backend_slot *s = &slots[i];
        memset(s, 0, sizeof *s);
        s->name = c->ops->name;
        s->status = c->status;
        s->report = c->report;
        s->n_found = c->n_found;
        s->state = c->state;
        for (size_t k = 0; k < ctx->devices.n; k++)
            s->usable += gpo_dr_device_usable(ctx, ctx->devices.items[k], s->name);
        s->cpus = cpu_count(ctx, s->name);
    }
}

const gpo_backend_slot *gpo_dr_slot(const gpo_dr_run *run, const char *backend)
{
    for (size_t i = 0; i < run->n_slots; i++)
        if (strcmp(run->slots[i].name, backend) == 0)
            return &run->slots[i];
    return NULL;
}

const char *gpo_dr_library(const gpo_dr_run *run, const char *key)
{
    return gpo_env_library(run->env, key);
}

static void slot_evidence(gpo_dr_run *run, gpo_dr_finding *f, const gpo_backend_slot *s)
{
    gpo_dr_report *r = run->rep;
    gpo_dr_evidence(r, f, "status: %s", gpo_ctx_status_word(s->status));
    if (s->report.reason[0])
        gpo_dr_evidence(r, f, "reason: %s", s->report.reason);
    if (s->report.library[0])
        gpo_dr_evidence(r, f, "library: %s", s->report.library);
    if (s->report.driver_version[0])
        gpo_dr_evidence(r, f, "driver version: %s", s->report.driver_version);
    if (s->report.runtime_version[0])
        gpo_dr_evidence(r, f, "runtime version: %s", s->report.runtime_version);
    if (s->status == GPUOPT_BACKEND_AVAILABLE || s->n_found)
        gpo_dr_evidence(r, f, "devices listed: %d", (int)s->n_found);
}

void gpo_dr_check_backend(gpo_dr_run *run, const char *backend, int hardware)
{
    gpo_dr_report *r = run->rep;
    const gpo_backend_slot *s = gpo_dr_slot(run, backend);
    gpo_dr_finding *f;
    if (!s) {
        f = gpo_dr_add(r, backend, "backend", GPO_DR_INFO);
        gpo_dr_say(r, f, "this build of libgpuopt has no %s backend", backend);
        gpo_dr_evidence(r, f, "not among the compiled-in backends");
        return;
    }
    int usable = s->usable;
    int cpus = s->cpus;
    switch (s->status) {
    case GPUOPT_BACKEND_AVAILABLE:
        if (usable > 0) {
            f = gpo_dr_add(r, backend, "backend", GPO_DR_OK);
            gpo_dr_say(r, f, "%s can use %d GPU%s", backend, usable, usable == 1 ? "" : "s");
        } else if (cpus > 0) {
            f = gpo_dr_add(r, backend, "backend",
                           strcmp(backend, "cpu") == 0 ? GPO_DR_OK : GPO_DR_INFO);
            gpo_dr_say(r, f, "%s works and offers %d CPU device%s%s", backend, cpus,
                       cpus == 1 ? "" : "s",
                       strcmp(backend, "cpu") == 0 ? "" : " (not an accelerator)");
        } else {
            f = gpo_dr_add(r, backend, "backend", hardware ? GPO_DR_PROBLEM : GPO_DR_INFO);
            gpo_dr_say(r, f, "%s loaded but lists no usable device", backend);
        }
        break;
    case GPUOPT_BACKEND_DISABLED:
        f = gpo_dr_add(r, backend, "backend", hardware ? GPO_DR_WARNING : GPO_DR_INFO);
        gpo_dr_say(r, f, "%s is excluded by configuration", backend);
        gpo_dr_fix(r, f,
                   "unset GPUOPT_BACKEND (or add %s to it, or to the config file's "
                   "\"backend\")",
                   backend);
        break;
    default:
        f = gpo_dr_add(r, backend, "backend", hardware ? GPO_DR_PROBLEM : GPO_DR_INFO);
        gpo_dr_say(r, f, "%s cannot be used%s", backend,
                   hardware ? "" : " (and nothing here suggests this machine has such a GPU)");
        break;
    }
    slot_evidence(run, f, s);
}

void gpo_dr_check_toolchain(gpo_dr_run *run, const struct gpuopt_context *ctx, const gpo_backend *b)
{
    if (!b->toolchain_dropped)
        return;
    for (size_t i = 0; i < ctx->devices.n; i++) {
        const gpuopt_device *d = ctx->devices.items[i];
        for (int r = 0; r < d->n_routes; r++) {
            const gpo_route *rt = &d->routes[r];
            char why[512];
            if (rt->backend != b ||
                !b->toolchain_dropped(rt->backend_state, rt, d, why, sizeof why))
                continue;
            gpo_dr_finding *f = gpo_dr_add(run->rep, b->name, "toolchain_support", GPO_DR_WARNING);
            gpo_dr_say(run->rep, f, "%s (%s) is no longer a target of the %s compiler found here",
                       d->info.id, d->info.name, b->name);
            gpo_dr_evidence(run->rep, f, "%s", why);
            gpo_dr_fix(run->rep, f,
                       "plans for this device stay at level 1 (tier 2 would compile): install the "
                       "last release named above for it, or use a device the current release "
                       "supports");
        }
    }
}
