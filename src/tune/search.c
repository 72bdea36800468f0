/* The search driver (search.h): budgets, deduplication, the best so far,
 * and the strategy behind it; what was seen lives in the history
 * (history.h), which the strategies read. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/history.h"
#include "tune/search.h"
#include "tune/strategy.h"
#include "util/detail.h"
#include "util/strutil.h"

#define COUNT_LIMIT (1u << 24)   /* legal configurations counted for progress */
#define COUNT_STEPS (1ull << 26) /* walk steps spent counting them */

struct gpo_search {
    const gpuopt_space *space;
    gpo_history *h;
    gpo_search_settings set;
    int32_t strategy;
    const gpo_strategy_ops *ops;
    void *state;
    uint64_t start_ns;
    uint64_t legal;
    int32_t budget;
    int32_t failures, preloads;
    int started;
    const char *stop;
    uint32_t *scratch;
};

static const char *const strategy_names[] = {"auto", "exhaustive", "random", "annealing", "model"};

const char *gpo_strategy_name(int32_t strategy)
{
    return strategy >= 0 && strategy <= GPO_STRATEGY_MODEL ? strategy_names[strategy] : NULL;
}

void gpo_search_defaults(gpo_search_settings *s)
{
    memset(s, 0, sizeof *s);
}

static uint64_t now(const gpo_search *s)
{
    return s->set.clock_ns ? s->set.clock_ns(s->set.clock_user) : gpo_now_ns();
}

/* ---- lifecycle ----------------------------------------------------------------- */

gpuopt_status gpo_search_create(const gpuopt_space *space, const gpo_search_settings *set,
                                gpo_search **out)
{
    assert(space && set && out);
    *out = NULL;
    if (set->strategy < GPO_STRATEGY_AUTO || set->strategy > GPO_STRATEGY_MODEL)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "search: strategy %d unknown (0..4 accepted)",
                        (int)set->strategy);
    if (set->max_evaluations < 0 || set->max_failures < 0 || !(set->max_seconds >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "search: budgets must be >= 0 (evaluations %d, seconds %g, failures %d)",
                        (int)set->max_evaluations, set->max_seconds, (int)set->max_failures);
    gpo_search *s = calloc(1, sizeof *s);
    if (!s)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a search");
    gpo_space_ref(space);
    s->space = space;
    s->set = *set;
    s->stop = "";
    gpuopt_status st = gpo_history_create(space, set->seed, &s->h);
    if (st == GPUOPT_OK &&
        !(s->scratch = calloc((size_t)gpo_space_param_count(space) + 1, sizeof *s->scratch)))
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a search");
    if (st != GPUOPT_OK)
        goto out;

    /* Resolve AUTO and the default budget; count the legal space where that
     * decides something or feeds progress. */
    uint64_t count = 0;
    int exact = 0;
    uint64_t limit = set->max_evaluations > 0 && set->strategy == GPO_STRATEGY_AUTO
                         ? (uint64_t)set->max_evaluations
                         : COUNT_LIMIT;
    if ((st = gpo_space_count_legal(space, limit, COUNT_STEPS, &count, &exact)) != GPUOPT_OK)
        goto out;
    s->legal = exact ? count : 0;
    s->strategy = set->strategy;
    if (s->strategy == GPO_STRATEGY_AUTO)
        s->strategy =
            set->max_evaluations == 0 || exact ? GPO_STRATEGY_EXHAUSTIVE : GPO_STRATEGY_RANDOM;
    s->budget = set->max_evaluations;
    if (s->budget == 0 && s->strategy != GPO_STRATEGY_EXHAUSTIVE && exact) {
        double b = ceil(GPO_DEFAULT_FRACTION * (double)count);
        s->budget = b < 1 ? 1 : b > INT32_MAX ? INT32_MAX : (int32_t)b;
    } else if (s->budget == 0 && s->strategy != GPO_STRATEGY_EXHAUSTIVE) {
        s->budget = (int32_t)(GPO_DEFAULT_FRACTION * COUNT_LIMIT);
    }
    gpo_history_set_budget(s->h, s->budget);
    static const gpo_strategy_ops *const table[] = {NULL, &gpo_strategy_exhaustive,
                                                    &gpo_strategy_random, &gpo_strategy_anneal,
                                                    &gpo_strategy_model};
    s->ops = table[s->strategy];
    if ((st = s->ops->create(s->h, &s->state)) != GPUOPT_OK)
        goto out;
    s->start_ns = now(s);
    *out = s;
    s = NULL;
out:
    gpo_search_destroy(s);
    return st;
}

void gpo_search_destroy(gpo_search *s)
{
    if (!s)
        return;
    if (s->ops && s->state)
        s->ops->destroy(s->state);
    gpo_history_destroy(s->h);
    free(s->scratch);
    gpo_space_unref(s->space);
    free(s);
}

/* ---- results --------------------------------------------------------------------- */

static gpuopt_status check_result(int32_t status, double value)
{
    if (status < GPO_CAND_OK || status > GPO_CAND_FAULT)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "search: candidate status %d unknown",
                        (int)status);
    if ((status == GPO_CAND_OK || status == GPO_CAND_PRUNED) && !(isfinite(value) && value >= 0))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "search: a timed candidate needs a finite time >= 0, not %g", value);
    return GPUOPT_OK;
}

static void record(gpo_search *s, int32_t e, int32_t status, double value)
{
    if (gpo_cand_failed(status) && !gpo_history_preloaded(s->h, e))
        s->failures++;
    gpo_history_set(s->h, e, status, value);
    s->ops->observe(s->state, s->h, gpo_point_indices(gpo_history_point(s->h, e)),
                    status == GPO_CAND_OK || status == GPO_CAND_PRUNED ? value : INFINITY);
}

gpuopt_status gpo_search_preload(gpo_search *s, const uint32_t *idx, int32_t status,
                                 double value_ns)
{
    assert(s && idx);
    if (s->started)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "search preload: the search has already handed out candidates");
    gpuopt_status st = check_result(status, value_ns);
    if (st != GPUOPT_OK)
        return st;
    if (!gpo_space_is_legal(s->space, idx))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "search preload: the configuration is not legal in this space");
    if (gpo_history_find(s->h, idx) >= 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "search preload: configuration given twice");
    int32_t e = gpo_history_add(s->h, idx, 1);
    if (e < 0)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory recording a result");
    s->preloads++;
    record(s, e, status, value_ns);
    return GPUOPT_OK;
}

static int out_of_budget(gpo_search *s)
{
    if (s->budget > 0 && gpo_history_spent(s->h) >= s->budget)
        s->stop = "evaluation budget";
    else if (s->set.max_failures > 0 && s->failures >= s->set.max_failures)
        s->stop = "failure budget";
    else if (s->set.max_seconds > 0 && (double)(now(s) - s->start_ns) >= s->set.max_seconds * 1e9)
        s->stop = "time budget";
    return s->stop[0] != '\0';
}

gpuopt_status gpo_search_next(gpo_search *s, const gpuopt_point **config)
{
    assert(s && config);
    *config = NULL;
    if (s->stop[0] || out_of_budget(s))
        return gpo_fail(GPUOPT_ERR_NOT_FOUND, "search over: %s", s->stop);
    s->started = 1;
    uint32_t *idx = s->scratch;
    int got = s->ops->propose(s->state, s->h, idx);
    /* The driver trusts no strategy with the two promises: legal, unseen. */
    if (got && (gpo_history_find(s->h, idx) >= 0 || !gpo_space_is_legal(s->space, idx)))
        got = gpo_history_draw_unseen(s->h, idx);
    if (!got) {
        s->stop = "space exhausted";
        return gpo_fail(GPUOPT_ERR_NOT_FOUND, "search over: %s", s->stop);
    }
    int32_t e = gpo_history_add(s->h, idx, 0);
    if (e < 0)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory recording a candidate");
    *config = gpo_history_point(s->h, e);
    return GPUOPT_OK;
}

gpuopt_status gpo_search_report(gpo_search *s, const gpuopt_point *config, int32_t status,
                                double value_ns)
{
    assert(s && config);
    if (!config->idx || config->space != s->space)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "search report: a configuration of another space");
    gpuopt_status st = check_result(status, value_ns);
    if (st != GPUOPT_OK)
        return st;
    int32_t e = gpo_history_find(s->h, config->idx);
    if (e < 0 || gpo_history_status(s->h, e) >= 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "search report: %s",
                        e < 0 ? "the search never handed out this configuration"
                              : "this configuration was already reported");
    record(s, e, status, value_ns);
    return GPUOPT_OK;
}

/* ---- reading ------------------------------------------------------------------------ */

const char *gpo_search_stop_reason(const gpo_search *s)
{
    return s->stop;
}

int32_t gpo_search_strategy(const gpo_search *s)
{
    return s->strategy;
}

uint64_t gpo_search_legal(const gpo_search *s)
{
    return s->legal;
}

int32_t gpo_search_planned(const gpo_search *s)
{
    uint64_t legal = s->legal > (uint64_t)s->preloads ? s->legal - (uint64_t)s->preloads : 0;
    if (s->budget > 0 && (s->legal == 0 || (uint64_t)s->budget < legal))
        return s->budget;
    return legal > INT32_MAX ? 0 : (int32_t)legal;
}

double gpo_search_best_value(const gpo_search *s)
{
    int32_t b = gpo_history_best(s->h);
    return b >= 0 ? gpo_history_value(s->h, b) : -1;
}

const gpuopt_point *gpo_search_best(const gpo_search *s)
{
    int32_t b = gpo_history_best(s->h);
    return b >= 0 ? gpo_history_point(s->h, b) : NULL;
}

int32_t gpo_search_top(const gpo_search *s, int32_t k, const gpuopt_point **configs, double *values)
{
    assert(s && configs);
    if (k <= 0)
        return 0;
    double *v = malloc((size_t)k * sizeof *v);
    if (!v)
        return 0;
    int32_t got = 0, n = gpo_history_count(s->h);
    for (int32_t e = 0; e < n; e++) {
        if (gpo_history_status(s->h, e) != GPO_CAND_OK)
            continue;
        double value = gpo_history_value(s->h, e);
        int32_t pos;
        if (got < k)
            pos = got++;
        else if (value < v[k - 1])
            pos = k - 1;
        else
            continue;
        /* Insertion; ties keep history order. */
        while (pos > 0 && value < v[pos - 1]) {
            v[pos] = v[pos - 1];
            configs[pos] = configs[pos - 1];
            pos--;
        }
        v[pos] = value;
        configs[pos] = gpo_history_point(s->h, e);
    }
    if (values)
        memcpy(values, v, (size_t)got * sizeof *v);
    free(v);
    return got;
}

int32_t gpo_search_evaluations(const gpo_search *s)
{
    return gpo_history_spent(s->h);
}

int32_t gpo_search_failures(const gpo_search *s)
{
    return s->failures;
}
