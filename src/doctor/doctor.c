/* gpuopt_context_diagnose: probes every backend, runs the vendor checks over what the
 * machine shows (device nodes, kernel drivers, PCI, libraries, variables),
 * and answers with findings as JSON (doctor_json.c, docs/doctor.md). */
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "util/strutil.h"

static const char *const slot_words[] = {"not probed", "available", "unavailable", "error",
                                         "disabled"};

const gpo_backend_slot *gpo_dr_slot(const gpo_dr_run *run, const char *backend)
{
    int i = gpo_ctx_slot_of(run->ctx, backend);
    return i < 0 ? NULL : &run->ctx->slots[i];
}

/* A device counts when it is not a CPU, one of its routes goes through an
 * available backend, and that backend does not mark it unusable
 * (details.<backend>.usable = false, as kernel-only listings are). */
static int route_usable(const gpo_dr_run *run, const gpuopt_device *d, const gpo_route *rt)
{
    const char *name = rt->backend->name;
    const gpo_backend_slot *s = gpo_dr_slot(run, name);
    if (!s || s->status != GPUOPT_BACKEND_AVAILABLE)
        return 0;
    const cJSON *details = d->details ? cJSON_GetObjectItemCaseSensitive(d->details, name) : NULL;
    const cJSON *usable = cJSON_GetObjectItemCaseSensitive(details, "usable");
    return !cJSON_IsFalse(usable);
}

int gpo_dr_device_usable(const gpo_dr_run *run, const gpuopt_device *d, const char *backend)
{
    if (d->info.type == GPUOPT_DEVICE_TYPE_CPU)
        return 0;
    for (int r = 0; r < d->n_routes; r++) {
        if (backend && strcmp(d->routes[r].backend->name, backend) != 0)
            continue;
        if (route_usable(run, d, &d->routes[r]))
            return 1;
    }
    return 0;
}

int gpo_dr_usable_count(const gpo_dr_run *run, const char *backend)
{
    int n = 0;
    for (size_t i = 0; i < run->ctx->devices.n; i++)
        n += gpo_dr_device_usable(run, run->ctx->devices.items[i], backend);
    return n;
}

/* Devices a backend listed that are CPUs (PoCL's OpenCL device). */
static int cpu_count(const gpo_dr_run *run, const char *backend)
{
    int n = 0;
    for (size_t i = 0; i < run->ctx->devices.n; i++) {
        const gpuopt_device *d = run->ctx->devices.items[i];
        for (int r = 0; r < d->n_routes; r++)
            n += d->info.type == GPUOPT_DEVICE_TYPE_CPU &&
                 strcmp(d->routes[r].backend->name, backend) == 0;
    }
    return n;
}

static void slot_evidence(gpo_dr_run *run, gpo_dr_finding *f, const gpo_backend_slot *s)
{
    gpo_dr_report *r = run->rep;
    gpo_dr_evidence(r, f, "status: %s", slot_words[s->status]);
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
    int usable = gpo_dr_usable_count(run, backend);
    int cpus = cpu_count(run, backend);
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

/* A problem overview points at the findings that say what to do. */
static void link_overviews(gpo_dr_report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        gpo_dr_finding *o = &r->items[i];
        if (strcmp(o->check, "backend") != 0 || o->fix || o->status < GPO_DR_WARNING)
            continue;
        gpo_sbuf names;
        gpo_sbuf_init(&names);
        for (size_t k = 0; k < r->n; k++) {
            const gpo_dr_finding *f = &r->items[k];
            if (k == i || strcmp(f->backend, o->backend) != 0 || f->status < GPO_DR_WARNING ||
                !f->fix)
                continue;
            if (names.len && strstr(names.data, f->check))
                continue;
            gpo_sbuf_appendf(&names, "%s%s", names.len ? ", " : "", f->check);
        }
        if (names.len)
            gpo_dr_fix(r, o, "see the %s finding%s below: %s", o->backend,
                       strchr(names.data, ',') ? "s" : "", names.data);
        else
            gpo_dr_fix(r, o,
                       "the reason above is the backend's own account; docs/doctor.md "
                       "lists what each check looks at");
        if (names.failed)
            r->failed = 1;
        gpo_sbuf_free(&names);
    }
}

const char *gpo_dr_library(const gpo_dr_run *run, const char *key)
{
    return gpo_config_library(run->cfg, key);
}

GPUOPT_API gpuopt_status gpuopt_context_diagnose(gpuopt_context *ctx, char **json)
{
    gpo_detail_clear();
    if (json)
        *json = NULL;
    if (!ctx || !json)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s is NULL: pass a context and the address of a char pointer",
                        ctx ? "json" : "ctx");
    gpo_dr_report rep;
    memset(&rep, 0, sizeof rep);
    gpo_dr_run *run = calloc(1, sizeof *run);
    if (!run)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting the doctor");

    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_probe_all(ctx);
    if (st)
        goto out;
    run->ctx = ctx;
    run->cfg = &ctx->cfg;
    run->fs = &ctx->cfg.fs;
    run->rep = &rep;
    gpo_dr_user_read(run->fs, &run->user);
    gpo_dr_facts_read(run->fs, &run->facts);

    /* Each backend's block, in the registry's order; a backend without
     * checks of its own gets the generic one (status, reason, devices). */
    for (size_t i = 0; i < ctx->n_backends; i++) {
        if (ctx->list[i]->diagnose)
            ctx->list[i]->diagnose(run);
        else
            gpo_dr_check_backend(run, ctx->list[i]->name, 1);
    }
    link_overviews(&rep);
    if (rep.failed) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory while diagnosing");
        goto out;
    }
    st = gpo_dr_to_json(run, json);
    gpo_log_debug(&ctx->log, "doctor: %zu findings", rep.n);
out:
    gpo_ctx_unlock(ctx);
    gpo_dr_report_free(&rep);
    free(run);
    return st;
}
