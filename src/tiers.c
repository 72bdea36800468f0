/* Building a plan: tier 0, then 1, then 2 as far as asked, each on top of the
 * last; a tier that fails is rolled back and the plan stays at the last tier
 * that succeeded, with the reason as a warning. The user's overrides (config
 * file < GPUOPT_KNOBS < API) replace the values they name and say what they
 * replaced; then the derived knobs are computed from the final values
 * (plan_derive.c). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "memory/live.h"
#include "plan.h"
#include "rules_core.h"
#include "select.h"
#include "util/strutil.h"
#include "tier2/tier2.h"

typedef gpuopt_status (*tier_fn)(void *state, const gpo_route *route, const gpuopt_device *dev,
                                 struct gpuopt_plan *plan);

static tier_fn tier_of(const gpo_backend *b, int tier)
{
    return tier == 0 ? b->tier0 : b->tier1;
}

static const char *const tier_words[] = {"safe defaults", "rules on detected hardware",
                                         "measurements on the device"};

/* Tier 2 measures on the device through one route: the primary first, the
 * first that succeeds decides (measuring twice would only pay twice). A
 * route runs its backend's own tier 2 when it has one, else the generic
 * engine when the backend has runtime ops. A route that fails is rolled
 * back before the next is tried; when all fail, the detail joins every
 * route's reason ("cuda: ...; opencl: ..."). */
static gpuopt_status run_measured(struct gpuopt_plan *p)
{
    gpuopt_device *dev = p->device;
    gpuopt_status first = GPUOPT_OK;
    gpo_sbuf why;
    gpo_sbuf_init(&why);
    for (int r = 0; r < dev->n_routes; r++) {
        const gpo_route *route = &dev->routes[r];
        const gpo_backend *b = route->backend;
        if (!b)
            continue;
        tier_fn fn = b->tier2 ? b->tier2 : b->runtime ? gpo_tier2_generic : NULL;
        gpuopt_status st;
        char dropped[512];
        if (b->toolchain_dropped &&
            b->toolchain_dropped(route->backend_state, route, dev, dropped, sizeof dropped)) {
            /* Compiling would only fail, or build code the device cannot load. */
            st = gpo_fail(GPUOPT_ERR_UNSUPPORTED, "%s", dropped);
        } else if (!fn) {
            st = gpo_fail(GPUOPT_ERR_UNSUPPORTED, "the backend cannot run code on the device (no "
                                                  "runtime ops and no tier-2 rules)");
        } else {
            gpo_knob *saved;
            size_t n_saved;
            st = gpo_plan_snapshot(p, &saved, &n_saved);
            if (st) {
                first = st;
                break;
            }
            gpo_detail_clear();
            st = fn(route->backend_state, route, dev, p);
            if (st == GPUOPT_OK) {
                gpo_knobs_free(saved, n_saved);
                gpo_sbuf_free(&why);
                return gpo_rules_workload(p, 2);
            }
            if (!gpo_detail_get()[0])
                gpo_detail_set("%s", gpuopt_strerror(st));
            gpo_plan_restore(p, saved, n_saved);
            if (st == GPUOPT_ERR_NO_MEMORY) {
                first = st;
                break;
            }
        }
        if (!first)
            first = st;
        /* Backends often start their words with their own name already. */
        const char *d = gpo_detail_get();
        size_t len = strlen(b->name);
        if (strncmp(d, b->name, len) == 0 && d[len] == ':' && d[len + 1] == ' ')
            d += len + 2;
        gpo_sbuf_appendf(&why, "%s%s: %s", why.len ? "; " : "", b->name, d);
    }
    if (why.failed || first == GPUOPT_ERR_NO_MEMORY) {
        gpo_sbuf_free(&why);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory measuring the device");
    }
    if (!first)
        first = gpo_fail(GPUOPT_ERR_UNSUPPORTED, "%s: the device has no route", dev->info.id);
    else
        gpo_detail_set("%s", why.data ? why.data : "");
    gpo_sbuf_free(&why);
    return first;
}

/* Runs one tier's rules of every route, secondary routes first so the
 * primary (native) backend has the last word on shared knobs. Returns
 * GPUOPT_ERR_UNSUPPORTED when no route has rules for this tier. Tier 2 is
 * run_measured's. */
static gpuopt_status run_tier(struct gpuopt_plan *p, int tier)
{
    gpuopt_device *dev = p->device;
    int ran = 0;
    p->cur_tier = tier;
    p->cur_source = tier == 0   ? GPUOPT_SOURCE_DEFAULT
                    : tier == 1 ? GPUOPT_SOURCE_DETECTED
                                : GPUOPT_SOURCE_BENCHMARK;
    if (tier == 2)
        return run_measured(p);
    for (int r = dev->n_routes - 1; r >= 0; r--) {
        const gpo_route *route = &dev->routes[r];
        tier_fn fn = route->backend ? tier_of(route->backend, tier) : NULL;
        if (!fn)
            continue;
        gpo_detail_clear();
        gpuopt_status st = fn(route->backend_state, route, dev, p);
        if (st) {
            if (!gpo_detail_get()[0])
                gpo_detail_set("%s", gpuopt_strerror(st));
            return st;
        }
        ran = 1;
    }
    if (!ran)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "the %s backend has no tier-%d rules (%s)",
                        dev->info.backend, tier, tier_words[tier]);
    gpuopt_status st = gpo_rules_workload(p, tier);
    return st ? st : gpo_rules_locality(p, tier);
}

static void read_free_memory(struct gpuopt_context *ctx, struct gpuopt_plan *p)
{
    gpuopt_device *dev = p->device;
    gpo_memory_reading r;
    if (gpo_memory_read(dev, GPO_MEMORY_MAY_CREATE_CONTEXT, &r) == GPUOPT_OK &&
        r.source != GPUOPT_MEMORY_SOURCE_NONE) {
        p->memory_free = r.free;
        /* Where it came from (whether the backend had to create a context). */
        gpo_log_info(&ctx->log, "%s: free memory read from %s", dev->info.id, r.source_text);
    } else {
        gpo_log_debug(&ctx->log, "%s: %s", dev->info.id, r.source_text);
    }
}

/* Applies the user's overrides in precedence order (later wins). */
static gpuopt_status apply_overrides(struct gpuopt_context *ctx, struct gpuopt_plan *p)
{
    for (int i = 0; i < ctx->cfg.n_knobs; i++) {
        const gpo_knob_override *o = &ctx->cfg.knobs[i];
        const gpo_knob_def *def = gpo_plan_knob_def(p, o->name);
        if (!def) {
            gpuopt_status st =
                gpo_plan_warn(p,
                              "%s sets knob %s, which does not apply to %s (%s "
                              "backend); ignored",
                              o->origin_text, o->name, p->device->info.id, p->device->info.routes);
            if (st)
                return st;
            continue;
        }
        int64_t ival;
        char *norm = NULL, why[768];
        int rc = gpo_knob_parse(def, o->value, &ival, &norm, why, sizeof why);
        if (rc == GPO_KNOB_PARSE_NO_MEMORY)
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory applying knob %s", o->name);
        if (rc) {
            gpuopt_status st =
                gpo_plan_warn(p, "%s: knob %s: %s; ignored", o->origin_text, o->name, why);
            if (st)
                return st;
            continue;
        }
        gpo_knob *old = gpo_plan_find(p, o->name);
        char *was =
            old ? gpo_asprintf(" (rules gave %s: %s)", old->text, old->reason) : gpo_strdup("");
        int32_t tier = old ? old->tier : -1;
        p->cur_tier = tier;
        p->cur_source = o->source;
        gpuopt_status st;
        if (!was)
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
        else if (def->type == GPUOPT_KNOB_STRING)
            st = gpo_knob_set_string(p, def->name, norm, "set by %s%s", o->origin_text, was);
        else if (def->type == GPUOPT_KNOB_BOOL)
            st = gpo_knob_set_bool(p, def->name, (int)ival, "set by %s%s", o->origin_text, was);
        else if (def->type == GPUOPT_KNOB_BYTES)
            st = gpo_knob_set_bytes(p, def->name, (uint64_t)ival, "set by %s%s", o->origin_text,
                                    was);
        else
            st = gpo_knob_set_int(p, def->name, ival, "set by %s%s", o->origin_text, was);
        free(was);
        free(norm);
        if (st)
            return st;
    }
    return GPUOPT_OK;
}

/* Below this device footprint a workload finishes before measuring could
 * pay for itself: tier 2 is skipped (docs/knobs.md, "Levels"). */
#define TIER2_MIN_FOOTPRINT (1ull << 20)

static int tier2_skipped(struct gpuopt_plan *p, gpuopt_status *st)
{
    const gpuopt_workload *w = gpo_plan_workload(p);
    *st = GPUOPT_OK;
    if (!w || p->level_requested < 2)
        return 0;
    uint64_t footprint = w->model_bytes + w->item_bytes;
    if (footprint >= TIER2_MIN_FOOTPRINT || (!w->model_bytes && !w->item_bytes))
        return 0;
    char have[32];
    gpo_format_bytes(footprint, have, sizeof have);
    *st = gpo_plan_warn(p,
                        "level 2 (measurements on the device) was skipped: the workload's "
                        "device footprint is %s, under the 1 MiB below which measuring costs "
                        "more than it can save; the plan stays at level 1",
                        have);
    return 1;
}

static gpuopt_status build_plan(struct gpuopt_context *ctx, struct gpuopt_plan *p)
{
    gpuopt_status skip_st;
    int last = p->level_requested;
    if (tier2_skipped(p, &skip_st))
        last = 1;
    if (skip_st)
        return skip_st;
    if (p->level_requested >= 1)
        read_free_memory(ctx, p);
    for (int tier = 0; tier <= last; tier++) {
        gpo_knob *saved;
        size_t n_saved;
        gpuopt_status st = gpo_plan_snapshot(p, &saved, &n_saved);
        if (st)
            return st;
        st = run_tier(p, tier);
        if (st == GPUOPT_ERR_NO_MEMORY) {
            gpo_knobs_free(saved, n_saved);
            return st;
        }
        if (st) {
            char why[1024];
            gpo_strlcpy(why, gpo_detail_get(), sizeof why);
            gpo_plan_restore(p, saved, n_saved);
            if (tier == 0)
                return gpo_fail(st, "no plan for %s: tier 0 failed: %s", p->device->info.id, why);
            st = gpo_plan_warn(p, "level %d (%s) was not applied: %s; the plan stays at level %d",
                               tier, tier_words[tier], why, tier - 1);
            if (st)
                return st;
            gpo_log_info(&ctx->log, "%s: level %d not applied: %s", p->device->info.id, tier, why);
            break;
        }
        gpo_knobs_free(saved, n_saved);
        p->level_applied = tier;
    }
    gpuopt_status st = apply_overrides(ctx, p);
    return st ? st : gpo_plan_derive(p);
}

static void log_plan(struct gpuopt_context *ctx, const struct gpuopt_plan *p)
{
    if (!gpo_log_enabled(&ctx->log, GPUOPT_LOG_INFO))
        return;
    for (size_t i = 0; i < p->n_knobs; i++)
        gpo_log_info(&ctx->log, "%s: %s = %s (tier %d): %s", p->device->info.id, p->knobs[i].name,
                     p->knobs[i].text, (int)p->knobs[i].tier, p->knobs[i].reason);
    gpo_log_info(&ctx->log,
                 "plan: backend %s, device %s (%s), level %d asked -> %d applied, %zu "
                 "knobs set",
                 p->device->info.backend, p->device->info.id, p->device->info.name,
                 (int)p->level_requested, (int)p->level_applied, p->n_knobs);
}

/* Why the plan is for its device, and what the choice passed over or
 * cannot do there: the selection's reason and warnings, and a compiler
 * that no longer targets the device (docs/selection.md). */
static gpuopt_status note_selection(struct gpuopt_plan *p, const gpo_selection *sel)
{
    gpuopt_status st = GPUOPT_OK;
    char dropped[1024];
    gpo_strlcpy(p->selection_policy, sel->policy, sizeof p->selection_policy);
    gpo_strlcpy(p->selection_reason, sel->reason, sizeof p->selection_reason);
    for (int i = 0; st == GPUOPT_OK && i < sel->n_warnings; i++)
        st = gpo_plan_warn(p, "%s", sel->warnings[i]);
    if (st == GPUOPT_OK && gpo_device_toolchain_dropped(p->device, dropped, sizeof dropped))
        st = gpo_plan_warn(p, "%s (%s) is no longer a compiler target: %s", p->device->info.id,
                           p->device->info.name, dropped);
    return st;
}

static const size_t first_workload_size = offsetof(gpuopt_workload, fixed_shapes) + sizeof(int32_t);

/* Workload fields that cannot both hold. Each field alone is valid; the pair
 * is refused rather than one silently winning. (Precision-sensitive and
 * accepting reduced precision are one field, reduced_precision, so they
 * cannot contradict.) */
static const struct {
    size_t a;
    int32_t a_value;
    const char *a_words;
    size_t b;
    int32_t b_value;
    const char *b_words;
    const char *why;
} contradictions[] = {
    {offsetof(gpuopt_workload, reduced_precision), 0, "reduced_precision = 0 (precision-sensitive)",
     offsetof(gpuopt_workload, quantized), 1, "quantized = 1",
     "a quantised model already trades precision"},
};

static int32_t field_at(const gpuopt_workload *w, size_t offset)
{
    int32_t v;
    memcpy(&v, (const char *)w + offset, sizeof v);
    return v;
}

static gpuopt_status check_contradictions(const gpuopt_workload *w)
{
    for (size_t i = 0; i < sizeof contradictions / sizeof contradictions[0]; i++)
        if (field_at(w, contradictions[i].a) == contradictions[i].a_value &&
            field_at(w, contradictions[i].b) == contradictions[i].b_value)
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "gpuopt_workload: %s and %s contradict each other (%s); describe one "
                            "of them",
                            contradictions[i].a_words, contradictions[i].b_words,
                            contradictions[i].why);
    return GPUOPT_OK;
}

static gpuopt_status check_workload(const gpuopt_workload *w, gpuopt_workload *copy)
{
    if (w->struct_size < first_workload_size)
        return gpo_fail(GPUOPT_ERR_STRUCT_SIZE,
                        "gpuopt_workload.struct_size is %zu; call gpuopt_workload_init or set it "
                        "to sizeof(gpuopt_workload) (%zu in this library)",
                        w->struct_size, sizeof(gpuopt_workload));
    gpuopt_workload_init(copy);
    memcpy(copy, w, w->struct_size < sizeof *copy ? w->struct_size : sizeof *copy);
    copy->struct_size = sizeof *copy;
    if (copy->reduced_precision < -1 || copy->reduced_precision > 1)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_workload.reduced_precision is %d: accepted -1 (unset), 0 "
                        "(precision-sensitive), 1 (acceptable)",
                        (int)copy->reduced_precision);
    if (copy->quantized < 0 || copy->quantized > 1)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "gpuopt_workload.quantized is %d: accepted 0, 1",
                        (int)copy->quantized);
    if (copy->fixed_shapes < 0 || copy->fixed_shapes > 1)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_workload.fixed_shapes is %d: accepted 0, 1",
                        (int)copy->fixed_shapes);
    if (copy->objective != GPUOPT_OBJECTIVE_THROUGHPUT &&
        copy->objective != GPUOPT_OBJECTIVE_LATENCY)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_workload.objective is %d: accepted 0 (throughput), 1 (latency)",
                        (int)copy->objective);
    if (copy->bound < GPUOPT_BOUND_UNKNOWN || copy->bound > GPUOPT_BOUND_MEMORY)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_workload.bound is %d: accepted 0 (unknown), 1 (compute), 2 "
                        "(memory)",
                        (int)copy->bound);
    if (copy->model_bytes > (uint64_t)INT64_MAX || copy->item_bytes > (uint64_t)INT64_MAX ||
        copy->h2d_bytes_per_step > (uint64_t)INT64_MAX ||
        copy->d2h_bytes_per_step > (uint64_t)INT64_MAX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "gpuopt_workload sizes above 2^63 bytes");
    if (copy->launches_per_step < 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_workload.launches_per_step is %d: accepted 0 (unknown) or more",
                        (int)copy->launches_per_step);
    if (copy->items_per_step < 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_workload.items_per_step is %d: accepted 0 (unknown) or more",
                        (int)copy->items_per_step);
    /* An hour per step is no latency target; a larger value is a unit slip. */
    if (copy->step_time_ns > UINT64_C(3600000000000))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_workload.step_time_ns is %llu: accepted 0 (none) to 3.6e12 (one "
                        "hour), in nanoseconds",
                        (unsigned long long)copy->step_time_ns);
    return check_contradictions(copy);
}

GPUOPT_API gpuopt_status gpuopt_plan_create(gpuopt_context *ctx, gpuopt_device *device,
                                            int32_t level, gpuopt_plan **out)
{
    return gpuopt_plan_create_for(ctx, device, level, NULL, out);
}

GPUOPT_API gpuopt_status gpuopt_plan_create_for(gpuopt_context *ctx, gpuopt_device *device,
                                                int32_t level, const gpuopt_workload *workload,
                                                gpuopt_plan **out)
{
    gpuopt_workload wl;
    GPO_ENTRY_OUT("", ctx, "ctx", out, NULL);
    if (workload) {
        gpuopt_status wst = check_workload(workload, &wl);
        if (wst)
            return wst;
    }
    if (level < GPUOPT_LEVEL_DEFAULT || level > GPUOPT_LEVEL_MAX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "level %d: accepted 0, 1, 2, or GPUOPT_LEVEL_DEFAULT (-1)", (int)level);
    if (device && device->ctx != ctx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the device belongs to another context");
    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_check_fork(ctx);
    struct gpuopt_plan *p = NULL;
    gpo_selection *sel = calloc(1, sizeof *sel);
    if (!sel)
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a plan");
    else if (st == GPUOPT_OK && !device)
        st = gpo_ctx_select_for(ctx, NULL, workload ? &wl : NULL, &device, sel);
    else if (st == GPUOPT_OK)
        gpo_ctx_explain(ctx, device, workload ? &wl : NULL, sel);
    if (st == GPUOPT_OK) {
        p = gpo_plan_new(ctx, device, level < 0 ? ctx->cfg.level : level);
        if (!p)
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a plan");
    }
    if (st == GPUOPT_OK) {
        p->cfg = &ctx->cfg;
        p->log = &ctx->log;
        if (workload) {
            p->has_workload = 1;
            p->workload = wl;
        }
        st = note_selection(p, sel);
    }
    free(sel);
    if (st == GPUOPT_OK)
        st = build_plan(ctx, p);
    if (st == GPUOPT_OK) {
        log_plan(ctx, p);
        *out = p;
    } else {
        gpo_plan_free(p);
    }
    gpo_ctx_unlock(ctx);
    return st;
}
