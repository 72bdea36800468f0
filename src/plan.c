/* The plan object: an ordered list of knobs with their tier, source and
 * reason, the warnings, and the setters tier rules use. */
#include "plan.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "util/strutil.h"

/* ---- catalogue lookup ------------------------------------------------------- */

const gpo_knob_def *gpo_plan_knob_def(const struct gpuopt_plan *p, const char *name)
{
    const gpo_knob_def *d = gpo_knob_find_in(gpo_core_knobs, gpo_n_core_knobs, name);
    if (d || !p->device)
        return d;
    for (int r = 0; r < p->device->n_routes; r++) {
        const gpo_backend *b = p->device->routes[r].backend;
        if (b && (d = gpo_knob_find_in(b->knobs, b->n_knobs, name)) != NULL)
            return d;
    }
    return NULL;
}

/* ---- lifecycle ---------------------------------------------------------------- */

/* What a plan reads when it is built outside a context (rule tests): the
 * built-in defaults, and a silent log. */
static const gpo_config default_config = {.all_backends = 1, .device = "auto", .level = 1};
static const gpo_logger silent_log = {GPUOPT_LOG_OFF, NULL, NULL};

struct gpuopt_plan *gpo_plan_new(struct gpuopt_context *ctx, gpuopt_device *dev, int32_t level)
{
    struct gpuopt_plan *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->cfg = &default_config;
    p->log = &silent_log;
    p->ctx = ctx;
    p->device = dev;
    p->level_requested = level;
    p->level_applied = -1;
    return p;
}

static void knob_free(gpo_knob *k)
{
    free(k->name);
    free(k->text);
    free(k->reason);
}

void gpo_knobs_free(gpo_knob *knobs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        knob_free(&knobs[i]);
    free(knobs);
}

void gpo_plan_free(struct gpuopt_plan *p)
{
    if (!p)
        return;
    gpo_knobs_free(p->knobs, p->n_knobs);
    for (size_t i = 0; i < p->n_warnings; i++)
        free(p->warnings[i]);
    free(p->warnings);
    free(p);
}

gpo_knob *gpo_plan_find(const struct gpuopt_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n_knobs; i++)
        if (strcmp(p->knobs[i].name, name) == 0)
            return &p->knobs[i];
    return NULL;
}

gpuopt_status gpo_plan_snapshot(const struct gpuopt_plan *p, gpo_knob **knobs, size_t *n)
{
    *knobs = NULL;
    *n = 0;
    if (!p->n_knobs)
        return GPUOPT_OK;
    gpo_knob *copy = calloc(p->n_knobs, sizeof *copy);
    if (!copy)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < p->n_knobs; i++) {
        copy[i] = p->knobs[i];
        copy[i].name = gpo_strdup(p->knobs[i].name);
        copy[i].text = gpo_strdup(p->knobs[i].text);
        copy[i].reason = gpo_strdup(p->knobs[i].reason);
        if (!copy[i].name || !copy[i].text || !copy[i].reason) {
            gpo_knobs_free(copy, i + 1);
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
        }
    }
    *knobs = copy;
    *n = p->n_knobs;
    return GPUOPT_OK;
}

void gpo_plan_restore(struct gpuopt_plan *p, gpo_knob *knobs, size_t n)
{
    gpo_knobs_free(p->knobs, p->n_knobs);
    p->knobs = knobs;
    p->n_knobs = n;
    p->cap_knobs = n;
}

/* ---- setters used by tier rules ---------------------------------------------- */

static gpuopt_status knob_put(struct gpuopt_plan *p, const char *name, int32_t type, int64_t ival,
                              char *text, const char *fmt, va_list ap)
{
    char *reason = NULL;
    gpuopt_status st = GPUOPT_OK;
    const gpo_knob_def *def = gpo_plan_knob_def(p, name);
    char buf[1024];
    if (!def || def->type != type) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                      def ? "knob %s is declared with another type"
                          : "knob %s is not declared in any catalogue",
                      name);
        goto out;
    }
    /* Derived knobs follow from the final values of their inputs; a rule
     * that set one would be overwritten by the derivation, or would hide an
     * override of an input from it. */
    if (def->derive && !p->deriving && !gpo_knob_source_is_user(p->cur_source)) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                      "knob %s is derived from other knobs: rules set its inputs, not the knob",
                      name);
        goto out;
    }
    if (text && gpo_knob_check(def, ival, text, buf, sizeof buf)) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "knob %s: %s", name, buf);
        goto out;
    }
    vsnprintf(buf, sizeof buf, fmt, ap);
    reason = gpo_strdup(buf);
    if (!text || !reason) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory setting knob %s", name);
        goto out;
    }
    gpo_knob *k = gpo_plan_find(p, name);
    if (!k) {
        if (gpo_grow(&p->knobs, sizeof *p->knobs, p->n_knobs, &p->cap_knobs, 16)) {
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory setting knob %s", name);
            goto out;
        }
        k = &p->knobs[p->n_knobs];
        memset(k, 0, sizeof *k);
        k->name = gpo_strdup(def->name);
        if (!k->name) {
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory setting knob %s", name);
            goto out;
        }
        p->n_knobs++;
    } else {
        free(k->text);
        free(k->reason);
    }
    k->type = type;
    k->ival = ival;
    k->text = text;
    k->reason = reason;
    k->tier = p->cur_tier;
    k->source = p->cur_source;
    k->env = def->env;
    k->def = def;
    return GPUOPT_OK;
out:
    free(text);
    free(reason);
    return st;
}

gpuopt_status gpo_knob_set_bool(struct gpuopt_plan *p, const char *name, int value, const char *fmt,
                                ...)
{
    va_list ap;
    va_start(ap, fmt);
    gpuopt_status st = knob_put(p, name, GPUOPT_KNOB_BOOL, value ? 1 : 0,
                                gpo_strdup(value ? "true" : "false"), fmt, ap);
    va_end(ap);
    return st;
}

gpuopt_status gpo_knob_set_int(struct gpuopt_plan *p, const char *name, int64_t value,
                               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gpuopt_status st =
        knob_put(p, name, GPUOPT_KNOB_INT, value, gpo_asprintf("%" PRId64, value), fmt, ap);
    va_end(ap);
    return st;
}

gpuopt_status gpo_knob_set_bytes(struct gpuopt_plan *p, const char *name, uint64_t value,
                                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gpuopt_status st;
    if (value > (uint64_t)INT64_MAX)
        st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "knob %s: %" PRIu64 " bytes is too large", name,
                      value);
    else
        st = knob_put(p, name, GPUOPT_KNOB_BYTES, (int64_t)value, gpo_asprintf("%" PRIu64, value),
                      fmt, ap);
    va_end(ap);
    return st;
}

gpuopt_status gpo_knob_set_string(struct gpuopt_plan *p, const char *name, const char *value,
                                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    assert(value);
    gpuopt_status st = knob_put(p, name, GPUOPT_KNOB_STRING, 0, gpo_strdup(value), fmt, ap);
    va_end(ap);
    return st;
}

void gpo_knob_unset(struct gpuopt_plan *p, const char *name)
{
    gpo_knob *k = gpo_plan_find(p, name);
    if (!k)
        return;
    size_t i = (size_t)(k - p->knobs);
    knob_free(k);
    memmove(&p->knobs[i], &p->knobs[i + 1], (p->n_knobs - i - 1) * sizeof *k);
    p->n_knobs--;
}

int gpo_knob_get_int(const struct gpuopt_plan *p, const char *name, int64_t *value)
{
    const gpo_knob *k = gpo_plan_find(p, name);
    if (!k || k->type == GPUOPT_KNOB_STRING)
        return 0;
    *value = k->ival;
    return 1;
}

const char *gpo_knob_get_text(const struct gpuopt_plan *p, const char *name)
{
    const gpo_knob *k = gpo_plan_find(p, name);
    return k ? k->text : NULL;
}

gpuopt_status gpo_plan_warn(struct gpuopt_plan *p, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (gpo_grow(&p->warnings, sizeof *p->warnings, p->n_warnings, &p->cap_warnings, 4))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    char *w = gpo_strdup(buf);
    if (!w)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    p->warnings[p->n_warnings++] = w;
    return GPUOPT_OK;
}

const gpo_config *gpo_plan_config(const struct gpuopt_plan *p)
{
    return p->cfg;
}

const gpuopt_workload *gpo_plan_workload(const struct gpuopt_plan *p)
{
    return p->has_workload ? &p->workload : NULL;
}

int gpo_plan_reduced_precision(const struct gpuopt_plan *p, char *why, size_t cap)
{
    const gpuopt_workload *w = gpo_plan_workload(p);
    if (w && w->reduced_precision == 0)
        return gpo_say(0, why, cap, "the workload is precision-sensitive");
    if (w && w->reduced_precision == 1)
        return gpo_say(1, why, cap, "the workload accepts reduced precision");
    int on = p->cfg->reduced_precision;
    return gpo_say(on, why, cap,
                   on ? "reduced precision is allowed by the configuration "
                        "(reduced_precision=true)"
                      : "reduced precision is not enabled (set reduced_precision=true "
                        "in the config, or describe a workload that accepts it)");
}

uint64_t gpo_plan_device_memory(const struct gpuopt_plan *p, const char **what)
{
    if (p->memory_free) {
        *what = "free";
        return p->memory_free;
    }
    *what = "total";
    return p->device ? p->device->info.memory_bytes : 0;
}

const gpo_logger *gpo_plan_log(const struct gpuopt_plan *p)
{
    return p->log;
}

int32_t gpo_plan_level_applied(const struct gpuopt_plan *p)
{
    return p->level_applied;
}

const gpuopt_device *gpo_plan_device(const struct gpuopt_plan *p)
{
    return p->device;
}
