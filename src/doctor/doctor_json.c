/* The doctor's answer as JSON. Key names are a public format
 * (docs/doctor.md): add keys, never rename them. */
#include <stdlib.h>
#include <string.h>

#include "doctor_backend.h"
#include "doctor_json.h"
#include "util/strutil.h"

/* Adds a string, or null when empty or NULL; 0 on success. */
static int add_str(cJSON *o, const char *key, const char *v)
{
    return (v && *v ? cJSON_AddStringToObject(o, key, v) : cJSON_AddNullToObject(o, key)) ? 0 : -1;
}

static int add_num(cJSON *o, const char *key, double v)
{
    return cJSON_AddNumberToObject(o, key, v) ? 0 : -1;
}

static cJSON *finding_json(const gpo_dr_finding *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *ev = cJSON_CreateArray();
    int bad = !o || !ev;
    for (size_t i = 0; !bad && i < f->n_evidence; i++) {
        cJSON *s = cJSON_CreateString(f->evidence[i]);
        bad = !s || !cJSON_AddItemToArray(ev, s);
        if (!s)
            break;
    }
    if (!bad) {
        bad |= add_str(o, "backend", f->backend);
        bad |= add_str(o, "check", f->check);
        bad |= add_str(o, "status", gpo_dr_status_word(f->status));
        bad |= add_str(o, "summary", f->summary);
        if (cJSON_AddItemToObject(o, "evidence", ev))
            ev = NULL;
        else
            bad = 1;
        bad |= add_str(o, "path", f->path);
        bad |= add_str(o, "fix", f->fix);
    }
    cJSON_Delete(ev);
    if (bad) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static gpo_dr_status worst(const gpo_dr_report *r, const char *backend)
{
    gpo_dr_status w = GPO_DR_OK;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].backend, backend) == 0 && r->items[i].status > w)
            w = r->items[i].status;
    return w;
}

static cJSON *backend_json(const gpo_dr_run *run, const gpo_backend_slot *s)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    int bad = add_str(o, "name", s->name);
    bad |= !cJSON_AddBoolToObject(o, "compiled_in", 1);
    bad |= add_str(o, "status", gpo_ctx_status_word(s->status));
    bad |= add_str(o, "reason", s->report.reason);
    bad |= add_str(o, "library", s->report.library);
    bad |= add_str(o, "driver_version", s->report.driver_version);
    bad |= add_str(o, "runtime_version", s->report.runtime_version);
    bad |= add_num(o, "device_count", s->n_found);
    bad |= add_num(o, "usable_accelerators", s->usable);
    bad |= add_str(o, "worst", gpo_dr_status_word(worst(run->rep, s->name)));
    if (bad) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* One block per backend of the context, in its (the registry's) order. */
static cJSON *backends_json(const gpo_dr_run *run)
{
    cJSON *a = cJSON_CreateArray();
    int bad = !a;
    for (size_t i = 0; !bad && i < run->n_slots; i++) {
        cJSON *b = backend_json(run, &run->slots[i]);
        bad = !b || !cJSON_AddItemToArray(a, b);
    }
    if (bad) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

static cJSON *user_json(const gpo_dr_run *run)
{
    const gpo_dr_user *u = &run->user;
    cJSON *o = cJSON_CreateObject(), *groups = cJSON_CreateArray();
    int bad = !o || !groups;
    if (!bad) {
        bad |= add_str(o, "name", u->name);
        bad |= u->known ? add_num(o, "uid", u->uid) : !cJSON_AddNullToObject(o, "uid");
        bad |= add_str(o, "source", u->source);
        for (size_t i = 0; !bad && i <= u->n_groups; i++) {
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
            cJSON *s = cJSON_CreateString(name);
            bad = !s || !cJSON_AddItemToArray(groups, s);
        }
        if (!bad && cJSON_AddItemToObject(o, "groups", groups))
            groups = NULL;
        else
            bad = 1;
    }
    cJSON_Delete(groups);
    if (bad) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The usable accelerators' ids and a one-line verdict. */
static int accelerators_json(const gpo_dr_run *run, const struct gpuopt_context *ctx, cJSON *root)
{
    cJSON *ids = cJSON_CreateArray();
    gpo_sbuf verdict;
    int n = 0, bad = !ids;
    gpo_sbuf_init(&verdict);
    for (size_t i = 0; !bad && i < ctx->devices.n; i++) {
        const gpuopt_device *d = ctx->devices.items[i];
        if (!gpo_dr_device_usable(ctx, d, NULL))
            continue;
        cJSON *s = cJSON_CreateString(d->info.id);
        bad = !s || !cJSON_AddItemToArray(ids, s);
        gpo_sbuf_appendf(&verdict, "%s%s (%s)", n ? ", " : "", d->info.id, d->info.name);
        n++;
    }
    bad |= add_num(root, "accelerators_usable", n);
    if (!bad && cJSON_AddItemToObject(root, "accelerators", ids))
        ids = NULL;
    else
        bad = 1;
    cJSON_Delete(ids);
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
        if (!problems) {
            gpo_sbuf_free(&verdict);
            gpo_sbuf_init(&verdict);
            gpo_sbuf_append(&verdict, "no check found a problem: this machine shows no GPU");
        }
    }
    char *list = gpo_sbuf_take(&verdict);
    char *text =
        n ? gpo_asprintf("%d accelerator%s usable: %s", n, n == 1 ? "" : "s", list ? list : "")
          : gpo_asprintf("no accelerator is usable: %s", list ? list : "");
    bad |= !text || add_str(root, "verdict", text);
    free(text);
    free(list);
    gpo_sbuf_free(&verdict);
    return bad ? -1 : 0;
}

gpuopt_status gpo_dr_to_json(const gpo_dr_run *run, const struct gpuopt_context *ctx, char **json)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *findings = cJSON_CreateArray();
    cJSON *backends = NULL, *user = NULL;
    char *text = NULL;
    int bad = !root || !findings;
    if (!bad) {
        bad |= add_str(root, "gpuopt_version", gpuopt_version());
        bad |= add_str(root, "sysfs_root", run->fs->root);
        bad |= add_str(root, "container", run->facts.container);
        bad |= accelerators_json(run, ctx, root);
    }
    if (!bad) {
        user = user_json(run);
        bad = !user || !cJSON_AddItemToObject(root, "user", user);
        if (!bad)
            user = NULL;
    }
    if (!bad) {
        backends = backends_json(run);
        bad = !backends || !cJSON_AddItemToObject(root, "backends", backends);
        if (!bad)
            backends = NULL;
    }
    for (size_t i = 0; !bad && i < run->rep->n; i++) {
        cJSON *f = finding_json(&run->rep->items[i]);
        bad = !f || !cJSON_AddItemToArray(findings, f);
    }
    if (!bad) {
        bad = !cJSON_AddItemToObject(root, "findings", findings);
        if (!bad)
            findings = NULL;
    }
    if (!bad)
        text = cJSON_PrintUnformatted(root);
    cJSON_Delete(findings);
    cJSON_Delete(backends);
    cJSON_Delete(user);
    cJSON_Delete(root);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing the doctor's findings");
    *json = text;
    return GPUOPT_OK;
}
