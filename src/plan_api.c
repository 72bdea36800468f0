/* Reading a plan: the public accessors and the plan's exports (JSON, shell
 * export lines). A plan is immutable once built, so none of these lock. */
#include <cjson/cJSON.h>
#include <string.h>

#include "context.h"
#include "plan.h"
#include "util/json.h"
#include "util/strutil.h"

static const char *const source_names[] = {"default", "detected", "benchmark", "cache",
                                           "config",  "env",      "api"};
static const char *const type_names[] = {"", "bool", "int", "bytes", "string"};

static const size_t first_knob_size = offsetof(gpuopt_knob, reason) + sizeof(const char *);

GPUOPT_API void gpuopt_plan_destroy(gpuopt_plan *plan)
{
    gpo_plan_free(plan);
}

GPUOPT_API gpuopt_status gpuopt_plan_level(const gpuopt_plan *plan, int32_t *requested,
                                           int32_t *applied)
{
    gpo_detail_clear();
    if (requested)
        *requested = 0;
    if (applied)
        *applied = 0;
    if (!plan)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "plan is NULL");
    if (!requested && !applied)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "requested and applied are both NULL");
    if (requested)
        *requested = plan->level_requested;
    if (applied)
        *applied = plan->level_applied;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_plan_device(const gpuopt_plan *plan, gpuopt_device **device)
{
    GPO_ENTRY_OUT("", plan, "plan", device, NULL);
    *device = plan->device;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_plan_knob_count(const gpuopt_plan *plan, int32_t *count)
{
    GPO_ENTRY_OUT("", plan, "plan", count, 0);
    *count = (int32_t)plan->n_knobs;
    return GPUOPT_OK;
}

/* Copies knob `k` into the caller's struct, or zeroes it when `k` is NULL
 * (a failed call leaves no output: gpuopt.h). */
static gpuopt_status fill_knob(const gpo_knob *k, gpuopt_knob *out)
{
    GPO_CHECK_STRUCT_SIZE(NULL, gpuopt_knob, out->struct_size, first_knob_size);
    gpuopt_knob v;
    memset(&v, 0, sizeof v);
    v.struct_size = out->struct_size;
    if (k) {
        v.name = k->name;
        v.type = k->type;
        v.tier = k->tier;
        v.source = k->source;
        v.int_value = k->type == GPUOPT_KNOB_STRING ? 0 : k->ival;
        v.value = k->text;
        v.env = k->env;
        v.reason = k->reason;
    }
    memcpy(out, &v, out->struct_size < sizeof v ? out->struct_size : sizeof v);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_plan_knob_at(const gpuopt_plan *plan, int32_t index,
                                             gpuopt_knob *knob)
{
    gpo_detail_clear();
    if (!knob)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "knob is NULL");
    gpuopt_status st = fill_knob(NULL, knob);
    if (st)
        return st;
    if (!plan)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "plan is NULL");
    if (index < 0 || (size_t)index >= plan->n_knobs)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "knob index %d: the plan has %zu knobs",
                        (int)index, plan->n_knobs);
    return fill_knob(&plan->knobs[index], knob);
}

GPUOPT_API gpuopt_status gpuopt_plan_knob_find(const gpuopt_plan *plan, const char *name,
                                               gpuopt_knob *knob)
{
    gpo_detail_clear();
    if (!knob)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "knob is NULL");
    gpuopt_status st = fill_knob(NULL, knob);
    if (st)
        return st;
    if (!plan || !name)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", !plan ? "plan" : "name");
    const gpo_knob *k = gpo_plan_find(plan, name);
    if (!k)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND, "the plan for %s has no knob '%s'",
                        plan->device->info.id, name);
    return fill_knob(k, knob);
}

GPUOPT_API gpuopt_status gpuopt_plan_warning_count(const gpuopt_plan *plan, int32_t *count)
{
    GPO_ENTRY_OUT("", plan, "plan", count, 0);
    *count = (int32_t)plan->n_warnings;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_plan_warning_at(const gpuopt_plan *plan, int32_t index,
                                                const char **text)
{
    GPO_ENTRY_OUT("", plan, "plan", text, NULL);
    if (index < 0 || (size_t)index >= plan->n_warnings)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "warning index %d: the plan has %zu warnings",
                        (int)index, plan->n_warnings);
    *text = plan->warnings[index];
    return GPUOPT_OK;
}

/* ---- exports ----------------------------------------------------------------------- */

static void knob_json(gpo_json *b, cJSON *o, const gpo_knob *k)
{
    gpo_json_str(b, o, "name", k->name);
    gpo_json_str(b, o, "type", type_names[k->type]);
    if (k->type == GPUOPT_KNOB_BOOL)
        gpo_json_bool(b, o, "value", k->ival != 0);
    else if (k->type == GPUOPT_KNOB_STRING)
        gpo_json_str(b, o, "value", k->text);
    else
        gpo_json_num(b, o, "value", (double)k->ival);
    gpo_json_num_or_null(b, o, "tier", k->tier, k->tier >= 0);
    gpo_json_str(b, o, "source", source_names[k->source]);
    gpo_json_str(b, o, "reason", k->reason);
    gpo_json_str(b, o, "env", k->env);
    /* Additions: what the catalogue declares of the knob (docs/json.md). */
    char dom[512];
    gpo_knob_domain_text(k->def, dom, sizeof dom);
    gpo_json_str(b, o, "domain", dom);
    gpo_json_str(b, o, "maps_to", k->def->maps_to);
    if (k->def->inputs) {
        cJSON *in = gpo_json_array(b, o, "inputs");
        for (size_t i = 0; k->def->inputs[i]; i++)
            gpo_json_str(b, in, NULL, k->def->inputs[i]);
    } else {
        gpo_json_null(b, o, "inputs");
    }
}

GPUOPT_API gpuopt_status gpuopt_plan_to_json(const gpuopt_plan *plan, char **json)
{
    GPO_ENTRY_OUT("", plan, "plan", json, NULL);
    gpo_json b = {0};
    cJSON *root = cJSON_CreateObject();
    gpo_json_num(&b, root, "level_requested", plan->level_requested);
    gpo_json_num(&b, root, "level_applied", plan->level_applied);
    gpo_json_str(&b, root, "device", plan->device->info.id);
    gpo_json_str(&b, root, "device_name", plan->device->info.name);
    gpo_json_str(&b, root, "backend", plan->device->info.backend);
    cJSON *sel = gpo_json_object(&b, root, "selection");
    gpo_json_str(&b, sel, "policy", plan->selection_policy);
    gpo_json_str(&b, sel, "reason", plan->selection_reason);
    cJSON *knobs = gpo_json_array(&b, root, "knobs");
    for (size_t i = 0; !b.failed && i < plan->n_knobs; i++)
        knob_json(&b, gpo_json_object(&b, knobs, NULL), &plan->knobs[i]);
    cJSON *warnings = gpo_json_array(&b, root, "warnings");
    for (size_t i = 0; !b.failed && i < plan->n_warnings; i++)
        gpo_json_str(&b, warnings, NULL, plan->warnings[i]);
    char *text = b.failed ? NULL : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing the plan as JSON");
    *json = text;
    return GPUOPT_OK;
}

/* Appends s as the word of a double-quoted "${NAME=word}": POSIX sh (XCU
 * 2.6.2, 2.2.3) keeps a backslash there only before $ ` " \ and, inside the
 * braces, before }; single quotes would stay in the value. */
static void shell_word(gpo_sbuf *b, const char *s)
{
    for (; *s; s++) {
        char c[3] = {'\\', *s, 0};
        gpo_sbuf_append(b, strchr("$`\"\\}", *s) ? c : c + 1);
    }
}

GPUOPT_API gpuopt_status gpuopt_plan_to_env(const gpuopt_plan *plan, char **text)
{
    GPO_ENTRY_OUT("", plan, "plan", text, NULL);
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    gpo_sbuf_append(&b, "");
    /* ${NAME=value} assigns only when NAME is unset, the rule of
     * gpuopt_plan_apply: what the user set, even to "", is kept. */
    for (size_t i = 0; i < plan->n_knobs; i++) {
        const gpo_knob *k = &plan->knobs[i];
        if (!k->env)
            continue;
        gpo_sbuf_appendf(&b, ": \"${%s=", k->env);
        shell_word(&b, k->text);
        gpo_sbuf_appendf(&b, "}\"; export %s\n", k->env);
    }
    char *out = gpo_sbuf_take(&b);
    if (!out)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing environment lines");
    *text = out;
    return GPUOPT_OK;
}
