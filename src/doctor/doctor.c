/* gpuopt_context_diagnose: probes every backend, runs the vendor checks over what the
 * machine shows (device nodes, kernel drivers, PCI, libraries, variables),
 * and answers with findings as JSON (doctor_json.c, docs/doctor.md). */
#include <stdlib.h>
#include <string.h>

#include "backend_env.h"
#include "doctor.h"
#include "doctor_backend.h"
#include "doctor_json.h"
#include "util/strutil.h"

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

GPUOPT_API gpuopt_status gpuopt_context_diagnose(gpuopt_context *ctx, char **json)
{
    gpo_detail_clear();
    if (json)
        *json = NULL;
    if (!ctx || !json)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s is NULL: pass a context and the address of a char pointer",
                        ctx ? "json" : "ctx");
    gpo_dr_report rep = {0};
    gpo_dr_run *run = calloc(1, sizeof *run);
    gpo_backend_slot *slots = calloc(ctx->n_backends, sizeof *slots);
    if (!run || !slots) {
        free(run);
        free(slots);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting the doctor");
    }

    gpo_ctx_lock(ctx);
    gpo_backend_env env = {&ctx->cfg, &ctx->log};
    gpuopt_status st = gpo_ctx_probe_all(ctx);
    if (st)
        goto out;
    gpo_dr_slots_read(ctx, slots);
    run->slots = slots;
    run->n_slots = ctx->n_backends;
    run->env = &env;
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
        gpo_dr_check_toolchain(run, ctx, ctx->list[i]);
    }
    link_overviews(&rep);
    if (rep.failed) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory while diagnosing");
        goto out;
    }
    st = gpo_dr_to_json(run, ctx, json);
    gpo_log_debug(&ctx->log, "doctor: %zu findings", rep.n);
out:
    gpo_ctx_unlock(ctx);
    gpo_dr_report_free(&rep);
    free(slots);
    free(run);
    return st;
}
