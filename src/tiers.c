/* Building a plan: tier 0, then 1, then 2 as far as asked, each on top of the
 * last; a tier that fails is rolled back and the plan stays at the last tier
 * that succeeded, with the reason as a warning. The user's overrides (config
 * file < GPUOPT_KNOBS < API) are applied last and say what they replaced. */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "plan.h"
#include "strutil.h"

typedef gpuopt_status (*tier_fn)(void *state, const gpo_route *route, const gpuopt_device *dev,
                                 struct gpuopt_plan *plan);

static tier_fn tier_of(const gpo_backend *b, int tier)
{
    return tier == 0 ? b->tier0 : tier == 1 ? b->tier1 : b->tier2;
}

static const char *const tier_words[] = {"safe defaults", "rules on detected hardware",
                                         "measurements on the device"};

/* Runs one tier's rules of every route, secondary routes first so the
 * primary (native) backend has the last word on shared knobs. Returns
 * GPUOPT_ERR_UNSUPPORTED when no route has rules for this tier. */
static gpuopt_status run_tier(struct gpuopt_plan *p, int tier)
{
    gpuopt_device *dev = p->device;
    int ran = 0;
    p->cur_tier = tier;
    p->cur_source = tier == 0 ? GPUOPT_SOURCE_DEFAULT :
                    tier == 1 ? GPUOPT_SOURCE_DETECTED :
                                GPUOPT_SOURCE_BENCHMARK;
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
    return GPUOPT_OK;
}

static void read_free_memory(struct gpuopt_context *ctx, struct gpuopt_plan *p)
{
    gpuopt_device *dev = p->device;
    const gpo_route *route = &dev->routes[0];
    if (!route->backend || !route->backend->memory_free)
        return;
    uint64_t free_bytes = 0;
    gpo_detail_clear();
    if (route->backend->memory_free(route->backend_state, route, &free_bytes) == GPUOPT_OK) {
        p->memory_free = free_bytes;
        dev->info.memory_free_bytes = free_bytes;
    } else {
        gpo_log_debug(&ctx->log, "%s: free memory not read: %s", dev->info.id, gpo_detail_get());
    }
}

/* Applies the user's overrides in precedence order (later wins). */
static gpuopt_status apply_overrides(struct gpuopt_context *ctx, struct gpuopt_plan *p)
{
    for (int i = 0; i < ctx->cfg.n_knobs; i++) {
        const gpo_knob_override *o = &ctx->cfg.knobs[i];
        const gpo_knob_def *def = gpo_plan_knob_def(p, o->name);
        if (!def) {
            gpuopt_status st = gpo_plan_warn(p, "%s sets knob %s, which does not apply to %s (%s "
                                                "backend); ignored",
                                             o->origin_text, o->name, p->device->info.id,
                                             p->device->info.routes);
            if (st)
                return st;
            continue;
        }
        int64_t ival;
        char *norm = NULL, why[256];
        if (gpo_knob_parse(def->type, o->value, &ival, &norm, why, sizeof why)) {
            gpuopt_status st = gpo_plan_warn(p, "%s: knob %s: %s; ignored", o->origin_text,
                                             o->name, why);
            if (st)
                return st;
            continue;
        }
        gpo_knob *old = gpo_plan_find(p, o->name);
        char *was = old ? gpo_asprintf(" (rules gave %s: %s)", old->text, old->reason) :
                          gpo_strdup("");
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

static gpuopt_status build_plan(struct gpuopt_context *ctx, struct gpuopt_plan *p)
{
    if (p->level_requested >= 1)
        read_free_memory(ctx, p);
    for (int tier = 0; tier <= p->level_requested; tier++) {
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
    return apply_overrides(ctx, p);
}

static void log_plan(struct gpuopt_context *ctx, const struct gpuopt_plan *p)
{
    if (!gpo_log_enabled(&ctx->log, GPUOPT_LOG_INFO))
        return;
    for (size_t i = 0; i < p->n_knobs; i++)
        gpo_log_info(&ctx->log, "%s: %s = %s (tier %d): %s", p->device->info.id, p->knobs[i].name,
                     p->knobs[i].text, (int)p->knobs[i].tier, p->knobs[i].reason);
    gpo_log_info(&ctx->log, "plan: backend %s, device %s (%s), level %d asked -> %d applied, %zu "
                            "knobs set",
                 p->device->info.backend, p->device->info.id, p->device->info.name,
                 (int)p->level_requested, (int)p->level_applied, p->n_knobs);
}

GPUOPT_API gpuopt_status gpuopt_plan_create(gpuopt_context *ctx, gpuopt_device *device,
                                            int32_t level, gpuopt_plan **out)
{
    gpo_detail_clear();
    if (!ctx || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", ctx ? "out" : "ctx");
    *out = NULL;
    if (level < GPUOPT_LEVEL_DEFAULT || level > GPUOPT_LEVEL_MAX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "level %d: accepted 0, 1, 2, or GPUOPT_LEVEL_DEFAULT (-1)", (int)level);
    if (device && device->ctx != ctx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "the device belongs to another context");
    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_check_fork(ctx);
    struct gpuopt_plan *p = NULL;
    if (st == GPUOPT_OK && !device)
        st = gpo_ctx_select(ctx, NULL, &device);
    if (st == GPUOPT_OK) {
        p = gpo_plan_new(ctx, device, level < 0 ? ctx->cfg.level : level);
        if (!p)
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a plan");
    }
    if (st == GPUOPT_OK) {
        p->cfg = &ctx->cfg;
        p->log = &ctx->log;
        st = build_plan(ctx, p);
    }
    if (st == GPUOPT_OK) {
        log_plan(ctx, p);
        *out = p;
    } else {
        gpo_plan_free(p);
    }
    gpo_ctx_unlock(ctx);
    return st;
}
