/* The derivation phase of a plan: after the rules (tier 0, 1, 2) proposed
 * values and the user's overrides replaced the ones they name, every
 * derived knob of the plan's catalogues is computed from the final values
 * of its inputs, in dependency order (an input may itself be derived). So
 * OMP_NUM_THREADS follows a user's `threads`, PYTORCH_CUDA_ALLOC_CONF a
 * user's cuda.alloc.max_split_mb, and what a plan exports always equals
 * what it shows.
 *
 * The reason names the inputs and who set them: "OMP_NUM_THREADS = threads
 * = 1, set by GPUOPT_KNOBS". A derived knob the user overrode keeps the
 * user's value, and its reason says what the derivation would have given.
 * A derived knob shows the highest tier among its inputs and the source of
 * the input that decided it (a user's, when one is); without inputs, the
 * level whose facts it read (0, or 1 for plans at level 1 and 2). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "plan.h"
#include "util/strutil.h"

#define MAX_DERIVED 64
#define MAX_INPUTS 8

typedef struct derived {
    const gpo_knob_def *def;
    void *state; /* the backend state of the route whose catalogue declares it */
    int done;
} derived;

/* Adds the derived entries of one catalogue that the plan resolves to that
 * catalogue (a name declared twice resolves to its first declaration). */
static void collect(const struct gpuopt_plan *p, const gpo_knob_def *defs, size_t n, void *state,
                    derived *out, size_t *count)
{
    for (size_t i = 0; i < n; i++) {
        if (!defs[i].derive || gpo_plan_knob_def(p, defs[i].name) != &defs[i])
            continue;
        assert(*count < MAX_DERIVED);
        out[(*count)++] = (derived){&defs[i], state, 0};
    }
}

/* 1 when every input of `d` that is itself derived has been computed. */
static int ready(const derived *all, size_t n, const derived *d)
{
    for (size_t i = 0; d->def->inputs[i]; i++)
        for (size_t j = 0; j < n; j++)
            if (!all[j].done && strcmp(all[j].def->name, d->def->inputs[i]) == 0)
                return 0;
    return 1;
}

/* Who set a knob, in the words a reason uses. */
static void origin_text(const struct gpuopt_plan *p, const gpo_knob *k, char *out, size_t cap)
{
    if (gpo_knob_source_is_user(k->source)) {
        /* The last override of that source names its origin exactly
         * ("config file /etc/x.json"). */
        const char *origin = NULL;
        for (int i = 0; i < p->cfg->n_knobs; i++)
            if (p->cfg->knobs[i].source == k->source && strcmp(p->cfg->knobs[i].name, k->name) == 0)
                origin = p->cfg->knobs[i].origin_text;
        gpo_snprintf(out, cap, "set by %s",
                     origin                           ? origin
                     : k->source == GPUOPT_SOURCE_API ? "gpuopt_context_set_knob"
                     : k->source == GPUOPT_SOURCE_ENV ? "GPUOPT_KNOBS"
                                                      : "the config file");
        return;
    }
    if (k->def && k->def->derive) {
        gpo_snprintf(out, cap, "derived");
        return;
    }
    static const char *const by_source[] = {"tier 0 default", "tier 1 rule",
                                            "measured on the device", "from the tuning cache"};
    gpo_snprintf(out, cap, "%s",
                 k->source >= 0 && k->source <= GPUOPT_SOURCE_CACHE ? by_source[k->source] : "set");
}

/* "OMP_NUM_THREADS = threads = 1, set by GPUOPT_KNOBS" for a copy of one
 * input; otherwise "PYTORCH_CUDA_ALLOC_CONF from cuda.alloc.max_split_mb =
 * 256 (set by GPUOPT_KNOBS), ...: how". Absent inputs are left out. */
static void compose(const struct gpuopt_plan *p, const gpo_knob_def *def, const gpo_knob *const *ks,
                    size_t n_in, const gpo_derivation *d, gpo_sbuf *b)
{
    const char *target = def->env ? def->env : def->name;
    size_t present = 0;
    for (size_t i = 0; i < n_in; i++)
        present += ks[i] != NULL;
    char origin[GPO_PATH_MAX + 32];
    if (n_in == 1 && ks[0] && d->present && strcmp(ks[0]->text, d->value) == 0) {
        origin_text(p, ks[0], origin, sizeof origin);
        gpo_sbuf_appendf(b, "%s = %s = %s, %s", target, ks[0]->name, ks[0]->text, origin);
        if (d->how[0])
            gpo_sbuf_appendf(b, "; %s", d->how);
        return;
    }
    if (present) {
        gpo_sbuf_appendf(b, "%s from ", target);
        size_t shown = 0;
        for (size_t i = 0; i < n_in; i++) {
            if (!ks[i])
                continue;
            origin_text(p, ks[i], origin, sizeof origin);
            gpo_sbuf_appendf(b, "%s%s = %s (%s)", shown++ ? ", " : "", ks[i]->name, ks[i]->text,
                             origin);
        }
        if (d->how[0])
            gpo_sbuf_appendf(b, ": %s", d->how);
        return;
    }
    gpo_sbuf_appendf(b, "%s", d->how[0] ? d->how : "derived from no value");
}

/* The tier and source a derived value shows (see the top of the file). */
static void tier_and_source(const struct gpuopt_plan *p, const gpo_knob *const *ks, size_t n_in,
                            int32_t *tier, int32_t *source)
{
    *tier = -2;
    *source = -1;
    int32_t user = -1;
    for (size_t i = 0; i < n_in; i++) {
        if (!ks[i])
            continue;
        if (gpo_knob_source_is_user(ks[i]->source) && ks[i]->source > user)
            user = ks[i]->source;
        if (ks[i]->tier > *tier) {
            *tier = ks[i]->tier;
            if (!gpo_knob_source_is_user(ks[i]->source))
                *source = ks[i]->source;
        }
    }
    int32_t fact_level = p->level_applied >= 1 ? 1 : 0;
    if (*tier == -2)
        *tier = user >= 0 ? -1 : fact_level;
    if (user >= 0)
        *source = user;
    else if (*source < 0)
        *source = *tier >= 1 ? GPUOPT_SOURCE_DETECTED : GPUOPT_SOURCE_DEFAULT;
}

static gpuopt_status set_text(struct gpuopt_plan *p, const gpo_knob_def *def, const char *value,
                              const char *reason)
{
    int64_t ival;
    char *norm = NULL, why[512];
    int rc = gpo_knob_parse(def, value, &ival, &norm, why, sizeof why);
    if (rc == GPO_KNOB_PARSE_NO_MEMORY)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory deriving knob %s", def->name);
    /* A derivation that leaves its own domain is a bug in the catalogue. */
    if (rc) {
        assert(!"a derivation gave a value outside its knob's domain");
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "derived knob %s: %s", def->name, why);
    }
    gpuopt_status st;
    switch (def->type) {
    case GPUOPT_KNOB_BOOL: st = gpo_knob_set_bool(p, def->name, (int)ival, "%s", reason); break;
    case GPUOPT_KNOB_BYTES:
        st = gpo_knob_set_bytes(p, def->name, (uint64_t)ival, "%s", reason);
        break;
    case GPUOPT_KNOB_INT: st = gpo_knob_set_int(p, def->name, ival, "%s", reason); break;
    default: st = gpo_knob_set_string(p, def->name, norm, "%s", reason); break;
    }
    free(norm);
    return st;
}

/* A user overrode the derived knob itself: keep the value, say what the
 * derivation gives. */
static gpuopt_status note_override(gpo_knob *k, const gpo_derivation *d, const char *derived_reason)
{
    char *reason = d->present ? gpo_asprintf("%s, overriding its derivation (which gives %s: %s)",
                                             k->reason, d->value, derived_reason)
                              : gpo_asprintf("%s, overriding its derivation (which leaves it "
                                             "unset: %s)",
                                             k->reason, derived_reason);
    if (!reason)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    free(k->reason);
    k->reason = reason;
    return GPUOPT_OK;
}

static gpuopt_status derive_one(struct gpuopt_plan *p, const gpo_derive_env *base, const derived *d)
{
    const gpo_knob_def *def = d->def;
    gpo_knob_input in[MAX_INPUTS];
    const gpo_knob *ks[MAX_INPUTS];
    size_t n_in = 0;
    for (; def->inputs[n_in]; n_in++) {
        assert(n_in < MAX_INPUTS);
        const gpo_knob *k = gpo_plan_find(p, def->inputs[n_in]);
        ks[n_in] = k;
        in[n_in] = (gpo_knob_input){
            def->inputs[n_in], k != NULL,       k && gpo_knob_source_is_user(k->source),
            k ? k->tier : -1,  k ? k->ival : 0, k ? k->text : NULL};
    }
    gpo_derivation out = {0};
    gpo_derive_env env = *base;
    env.state = d->state;
    gpuopt_status st = def->derive(in, &env, &out);
    if (!st && out.warning[0])
        st = gpo_plan_warn(p, "%s", out.warning);
    if (st)
        return st;
    gpo_sbuf reason;
    gpo_sbuf_init(&reason);
    compose(p, def, ks, n_in, &out, &reason);
    if (reason.failed) {
        gpo_sbuf_free(&reason);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    }
    gpo_knob *have = gpo_plan_find(p, def->name);
    if (have && gpo_knob_source_is_user(have->source)) {
        st = note_override(have, &out, reason.data);
    } else if (!out.present) {
        gpo_knob_unset(p, def->name);
    } else {
        tier_and_source(p, ks, n_in, &p->cur_tier, &p->cur_source);
        st = set_text(p, def, out.value, reason.data);
    }
    gpo_sbuf_free(&reason);
    return st;
}

gpuopt_status gpo_plan_derive(struct gpuopt_plan *p)
{
    derived all[MAX_DERIVED];
    size_t n = 0;
    collect(p, gpo_core_knobs, gpo_n_core_knobs, NULL, all, &n);
    for (int r = 0; r < p->device->n_routes; r++) {
        const gpo_route *route = &p->device->routes[r];
        if (route->backend)
            collect(p, route->backend->knobs, route->backend->n_knobs, route->backend_state, all,
                    &n);
    }
    char reduced_why[256];
    gpo_derive_env env = {0};
    env.plan = p;
    env.dev = p->device;
    env.workload = gpo_plan_workload(p);
    env.level = p->level_applied;
    env.memory = gpo_plan_device_memory(p, &env.memory_what);
    env.memory_total = p->device->info.memory_bytes;
    env.reduced = gpo_plan_reduced_precision(p, reduced_why, sizeof reduced_why);
    env.reduced_why = reduced_why;
    gpuopt_status st = GPUOPT_OK;
    p->deriving = 1;
    for (size_t left = n; !st && left > 0; left--) {
        derived *next = NULL;
        for (size_t i = 0; !next && i < n; i++)
            if (!all[i].done && ready(all, n, &all[i]))
                next = &all[i];
        /* A cycle among derived knobs is a catalogue bug; the catalogue
         * test walks every catalogue for one. */
        assert(next);
        if (!next) {
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the derived knobs depend on each other");
            break;
        }
        st = derive_one(p, &env, next);
        next->done = 1;
    }
    p->deriving = 0;
    return st;
}
