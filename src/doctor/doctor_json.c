/* The doctor's answer as JSON. Key names are a public format
 * (docs/doctor.md): add keys, never rename them. */
#include <stdlib.h>
#include <string.h>

#include "doctor_backend.h"
#include "doctor_json.h"
#include "util/json.h"
#include "util/strutil.h"

static void finding_json(gpo_json *b, cJSON *o, const gpo_dr_finding *f)
{
    gpo_json_text(b, o, "backend", f->backend);
    gpo_json_text(b, o, "check", f->check);
    gpo_json_text(b, o, "status", gpo_dr_status_word(f->status));
    gpo_json_text(b, o, "summary", f->summary);
    cJSON *ev = gpo_json_array(b, o, "evidence");
    for (size_t i = 0; !b->failed && i < f->n_evidence; i++)
        gpo_json_str(b, ev, NULL, f->evidence[i]);
    gpo_json_text(b, o, "path", f->path);
    gpo_json_text(b, o, "fix", f->fix);
}

static gpo_dr_status worst(const gpo_dr_report *r, const char *backend)
{
    gpo_dr_status w = GPO_DR_OK;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].backend, backend) == 0 && r->items[i].status > w)
            w = r->items[i].status;
    return w;
}

static void backend_json(gpo_json *b, cJSON *o, const gpo_dr_run *run, const gpo_backend_slot *s)
{
    gpo_json_text(b, o, "name", s->name);
    gpo_json_bool(b, o, "compiled_in", 1);
    gpo_json_text(b, o, "status", gpo_ctx_status_word(s->status));
    gpo_json_text(b, o, "reason", s->report.reason);
    gpo_json_text(b, o, "library", s->report.library);
    gpo_json_text(b, o, "driver_version", s->report.driver_version);
    gpo_json_text(b, o, "runtime_version", s->report.runtime_version);
    gpo_json_num(b, o, "device_count", s->n_found);
    gpo_json_num(b, o, "usable_accelerators", s->usable);
    gpo_json_text(b, o, "worst", gpo_dr_status_word(worst(run->rep, s->name)));
}

static void user_json(gpo_json *b, cJSON *o, const gpo_dr_run *run)
{
    const gpo_dr_user *u = &run->user;
    gpo_json_text(b, o, "name", u->name);
    gpo_json_num_or_null(b, o, "uid", u->uid, u->known);
    gpo_json_text(b, o, "source", u->source);
    cJSON *groups = gpo_json_array(b, o, "groups");
    for (size_t i = 0; !b->failed && i <= u->n_groups; i++) {
        gid_t g = i == 0 ? u->gid : u->groups[i - 1];
        int dup = i == 0 && !u->known;
        for (size_t k = 1; k < i && !dup; k++)
            dup = u->groups[k - 1] == g;
        if (i > 0 && g == u->gid && u->known)
            dup = 1;
        if (dup)
            continue;
        char name[64];
        gpo_dr_group_name(run->fs, g, name, sizeof name);
        gpo_json_str(b, groups, NULL, name);
    }
}

/* The usable accelerators' ids and a one-line verdict. */
static void accelerators_json(gpo_json *b, const gpo_dr_run *run, const struct gpuopt_context *ctx,
                              cJSON *root)
{
    int n = 0;
    for (size_t i = 0; i < ctx->devices.n; i++)
        n += gpo_dr_device_usable(ctx, ctx->devices.items[i], NULL) != 0;
    gpo_json_num(b, root, "accelerators_usable", n);
    cJSON *ids = gpo_json_array(b, root, "accelerators");
    gpo_sbuf verdict;
    gpo_sbuf_init(&verdict);
    gpo_sbuf_appendf(&verdict, n ? "%d accelerator%s usable: " : "no accelerator is usable: ", n,
                     n == 1 ? "" : "s");
    int listed = 0;
    for (size_t i = 0; i < ctx->devices.n; i++) {
        const gpuopt_device *d = ctx->devices.items[i];
        if (!gpo_dr_device_usable(ctx, d, NULL))
            continue;
        gpo_json_str(b, ids, NULL, d->info.id);
        gpo_sbuf_appendf(&verdict, "%s%s (%s)", listed++ ? ", " : "", d->info.id, d->info.name);
    }
    if (!n) {
        /* Name the problems, so the one line says where to look. */
        int problems = 0;
        for (size_t i = 0; i < run->rep->n; i++) {
            const gpo_dr_finding *f = &run->rep->items[i];
            if (f->status != GPO_DR_PROBLEM || strcmp(f->check, "backend") == 0)
                continue;
            int seen = 0;
            for (size_t k = 0; k < i && !seen; k++)
                seen = run->rep->items[k].status == GPO_DR_PROBLEM &&
                       strcmp(run->rep->items[k].backend, f->backend) == 0 &&
                       strcmp(run->rep->items[k].check, f->check) == 0;
            if (seen)
                continue;
            gpo_sbuf_appendf(&verdict, "%s%s/%s", problems ? ", " : "", f->backend, f->check);
            problems++;
        }
        if (!problems)
            gpo_sbuf_append(&verdict, "no check found a problem: this machine shows no GPU");
    }
    char *text = gpo_sbuf_take(&verdict);
    if (!text)
        b->failed = 1; /* the line is the verdict: never written in part */
    gpo_json_str(b, root, "verdict", text);
    free(text);
}

gpuopt_status gpo_dr_to_json(const gpo_dr_run *run, const struct gpuopt_context *ctx, char **json)
{
    gpo_json b = {0};
    cJSON *root = cJSON_CreateObject();
    gpo_json_str(&b, root, "gpuopt_version", gpuopt_version());
    gpo_json_text(&b, root, "sysfs_root", run->fs->root);
    gpo_json_text(&b, root, "container", run->facts.container);
    accelerators_json(&b, run, ctx, root);
    user_json(&b, gpo_json_object(&b, root, "user"), run);
    cJSON *backends = gpo_json_array(&b, root, "backends");
    /* One block per backend of the context, in its (the registry's) order. */
    for (size_t i = 0; !b.failed && i < run->n_slots; i++)
        backend_json(&b, gpo_json_object(&b, backends, NULL), run, &run->slots[i]);
    cJSON *findings = gpo_json_array(&b, root, "findings");
    for (size_t i = 0; !b.failed && i < run->rep->n; i++)
        finding_json(&b, gpo_json_object(&b, findings, NULL), &run->rep->items[i]);
    char *text = b.failed ? NULL : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing the doctor's findings");
    *json = text;
    return GPUOPT_OK;
}
