/* The search driver: history, deduplication, budgets, the best so far, and
 * the strategy behind it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "util/strutil.h"
#include "tune/strategy_impl.h"

#define CHUNK 1024                /* history entries per block: pointers stay put */
#define COUNT_LIMIT (1u << 24)    /* legal configurations counted for progress */
#define COUNT_STEPS (1ull << 26)  /* walk steps spent counting them */
#define UNSEEN_STEPS (1ull << 24) /* walk steps looking for an unseen one */
#define UNSEEN_DRAWS 64
#define ELITE_MAX 64

typedef struct entry {
    gpuopt_config cfg; /* borrows idx below */
    int32_t status;    /* -1 outstanding */
    double value;
    int preload;
} entry;

struct gpo_search {
    const gpuopt_space *space;
    int32_t np;
    gpo_search_settings set;
    int32_t strategy;
    const gpo_strategy_ops *ops;
    void *state;
    gpo_rng rng;
    gpo_sampler *sampler;
    gpo_space_iter walk;
    int walk_ready;
    uint64_t start_ns;
    uint64_t legal;
    int32_t budget;
    /* history */
    entry **chunks;
    uint32_t **idx_chunks;
    int32_t nchunks, n;
    /* open-addressing set of history positions, keyed by index vector */
    int32_t *table;
    uint32_t table_cap;
    int32_t handed, failures, best, preloads;
    /* the ELITE_MAX best timed entries (OK and PRUNED), best first: kept
     * as results arrive so strategies read them in O(k) */
    int32_t elite[ELITE_MAX];
    int32_t nelite;
    int started;
    const char *stop;
    uint32_t *scratch;
};

static const char *const strategy_names[] = {"auto", "exhaustive", "random", "annealing", "model"};

const char *gpo_strategy_name(int32_t strategy)
{
    return strategy >= 0 && strategy <= GPO_STRATEGY_MODEL ? strategy_names[strategy] : NULL;
}

int32_t gpo_strategy_parse(const char *name)
{
    for (int32_t i = 0; name && i <= GPO_STRATEGY_MODEL; i++)
        if (gpo_strcaseeq(name, strategy_names[i]))
            return i;
    return -1;
}

void gpo_search_defaults(gpo_search_settings *s)
{
    if (s)
        memset(s, 0, sizeof *s);
}

static uint64_t now(const gpo_search *s)
{
    return s->set.clock_ns ? s->set.clock_ns(s->set.clock_user) : gpo_now_ns();
}

static entry *at(const gpo_search *s, int32_t i)
{
    return &s->chunks[i / CHUNK][i % CHUNK];
}

/* ---- the seen set ---------------------------------------------------------- */

static int32_t find(const gpo_search *s, const uint32_t *idx)
{
    uint32_t mask = s->table_cap - 1;
    for (uint32_t h = (uint32_t)gpo_space_idx_hash(s->space, idx) & mask;; h = (h + 1) & mask) {
        int32_t e = s->table[h];
        if (e < 0)
            return -1;
        if (memcmp(at(s, e)->cfg.idx, idx, (size_t)s->np * sizeof *idx) == 0)
            return e;
    }
}

static void insert(gpo_search *s, int32_t e)
{
    uint32_t mask = s->table_cap - 1;
    uint32_t h = (uint32_t)gpo_space_idx_hash(s->space, at(s, e)->cfg.idx) & mask;
    while (s->table[h] >= 0)
        h = (h + 1) & mask;
    s->table[h] = e;
}

/* Appends an outstanding entry for idx; -1 on allocation failure. */
static int32_t append(gpo_search *s, const uint32_t *idx)
{
    if ((uint32_t)(s->n + 1) * 2 > s->table_cap) {
        uint32_t cap = s->table_cap * 2;
        int32_t *t = malloc(cap * sizeof *t);
        if (!t)
            return -1;
        free(s->table);
        s->table = t;
        s->table_cap = cap;
        memset(t, 0xff, cap * sizeof *t);
        for (int32_t e = 0; e < s->n; e++)
            insert(s, e);
    }
    if (s->n == s->nchunks * CHUNK) {
        entry **c = realloc(s->chunks, (size_t)(s->nchunks + 1) * sizeof *c);
        if (c)
            s->chunks = c;
        uint32_t **ic = realloc(s->idx_chunks, (size_t)(s->nchunks + 1) * sizeof *ic);
        if (ic)
            s->idx_chunks = ic;
        if (!c || !ic)
            return -1;
        s->chunks[s->nchunks] = calloc(CHUNK, sizeof **c);
        s->idx_chunks[s->nchunks] = calloc((size_t)CHUNK * (size_t)(s->np + 1), sizeof **ic);
        if (!s->chunks[s->nchunks] || !s->idx_chunks[s->nchunks]) {
            free(s->chunks[s->nchunks]);
            free(s->idx_chunks[s->nchunks]);
            return -1;
        }
        s->nchunks++;
    }
    int32_t e = s->n++;
    uint32_t *slot = s->idx_chunks[e / CHUNK] + (size_t)(e % CHUNK) * (size_t)(s->np + 1);
    memcpy(slot, idx, (size_t)s->np * sizeof *idx);
    entry *en = at(s, e);
    gpo_point_borrow(&en->cfg, s->space, slot);
    en->status = -1;
    en->value = NAN;
    insert(s, e);
    return e;
}

/* ---- services for strategies ---------------------------------------------- */

const gpuopt_space *gpo_search_space(const gpo_search *s)
{
    return s->space;
}

gpo_rng *gpo_search_rng(gpo_search *s)
{
    return &s->rng;
}

int32_t gpo_search_budget(const gpo_search *s)
{
    return s->budget;
}

int32_t gpo_search_spent(const gpo_search *s)
{
    return s->handed;
}

int gpo_search_known(const gpo_search *s, const uint32_t *idx, double *value)
{
    int32_t e = find(s, idx);
    if (e < 0)
        return 0;
    if (value) {
        const entry *en = at(s, e);
        *value = en->status < 0                                               ? NAN
                 : en->status == GPO_CAND_OK || en->status == GPO_CAND_PRUNED ? en->value
                                                                              : INFINITY;
    }
    return 1;
}

int gpo_search_draw_unseen(gpo_search *s, uint32_t *idx)
{
    for (int i = 0; i < UNSEEN_DRAWS; i++) {
        if (!gpo_sampler_draw(s->sampler, &s->rng, idx))
            return 0;
        if (find(s, idx) < 0)
            return 1;
    }
    /* Mostly seen: walk on from a random legal point to the next unseen
     * one, wrapping once. */
    if (!s->walk_ready) {
        if (gpo_space_iter_init(&s->walk, s->space) != GPUOPT_OK)
            return 0;
        s->walk_ready = 1;
    }
    s->walk.steps = 0;
    s->walk.max_steps = UNSEEN_STEPS;
    gpo_space_iter_seek(&s->walk, idx);
    for (int pass = 0; pass < 2; pass++) {
        while (gpo_space_iter_next(&s->walk))
            if (find(s, s->walk.idx) < 0) {
                memcpy(idx, s->walk.idx, (size_t)s->np * sizeof *idx);
                return 1;
            }
        if (s->walk.gave_up)
            return 0;
        memset(s->scratch, 0, (size_t)s->np * sizeof *s->scratch);
        gpo_space_iter_seek(&s->walk, s->scratch);
    }
    return 0;
}

int32_t gpo_search_elite(const gpo_search *s, int32_t k, const uint32_t **idx, double *values)
{
    int32_t n = k < s->nelite ? k : s->nelite;
    for (int32_t i = 0; i < n; i++) {
        const entry *en = at(s, s->elite[i]);
        idx[i] = en->cfg.idx;
        values[i] = en->value;
    }
    return n < 0 ? 0 : n;
}

/* Inserts entry e (timed) into the elite list; ties keep arrival order. */
static void elite_insert(gpo_search *s, int32_t e)
{
    double v = at(s, e)->value;
    int32_t pos;
    if (s->nelite < ELITE_MAX)
        pos = s->nelite++;
    else if (v < at(s, s->elite[ELITE_MAX - 1])->value)
        pos = ELITE_MAX - 1;
    else
        return;
    while (pos > 0 && v < at(s, s->elite[pos - 1])->value) {
        s->elite[pos] = s->elite[pos - 1];
        pos--;
    }
    s->elite[pos] = e;
}

int gpo_search_result_at(const gpo_search *s, int32_t i, const uint32_t **idx, double *value)
{
    if (i < 0 || i >= s->n)
        return -1;
    const entry *en = at(s, i);
    *idx = en->cfg.idx;
    if (en->status < 0)
        return 0;
    *value = en->status == GPO_CAND_OK || en->status == GPO_CAND_PRUNED ? en->value : INFINITY;
    return 1;
}

void gpo_shuffle_rows(gpo_rng *rng, uint32_t *rows, int32_t n, int32_t w)
{
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)gpo_rng_below(rng, (uint64_t)i + 1);
        for (int32_t c = 0; c < w; c++) {
            uint32_t t = rows[(size_t)i * (size_t)w + (size_t)c];
            rows[(size_t)i * (size_t)w + (size_t)c] = rows[(size_t)j * (size_t)w + (size_t)c];
            rows[(size_t)j * (size_t)w + (size_t)c] = t;
        }
    }
}

/* ---- lifecycle ----------------------------------------------------------------- */

gpuopt_status gpo_search_create(const gpuopt_space *space, const gpo_search_settings *set,
                                gpo_search **out)
{
    gpuopt_status st = GPUOPT_OK;
    gpo_search *s = NULL;
    if (out)
        *out = NULL;
    if (!space || !set || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "search: NULL argument");
    if (set->strategy < GPO_STRATEGY_AUTO || set->strategy > GPO_STRATEGY_MODEL)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "search: strategy %d unknown (0..4 accepted)",
                        (int)set->strategy);
    if (set->max_evaluations < 0 || set->max_failures < 0 || !(set->max_seconds >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "search: budgets must be >= 0 (evaluations %d, seconds %g, failures %d)",
                        (int)set->max_evaluations, set->max_seconds, (int)set->max_failures);
    s = calloc(1, sizeof *s);
    if (!s)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a search");
    gpo_space_ref(space);
    s->space = space;
    s->np = gpo_space_param_count(space);
    s->set = *set;
    s->best = -1;
    s->stop = "";
    gpo_rng_seed(&s->rng, set->seed);
    s->table_cap = 64;
    s->table = malloc(s->table_cap * sizeof *s->table);
    s->scratch = calloc((size_t)s->np + 1, sizeof *s->scratch);
    if (!s->table || !s->scratch) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a search");
        goto out;
    }
    memset(s->table, 0xff, s->table_cap * sizeof *s->table);
    if ((st = gpo_sampler_create(space, &s->sampler)) != GPUOPT_OK)
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
    static const gpo_strategy_ops *const table[] = {NULL, &gpo_strategy_exhaustive,
                                                    &gpo_strategy_random, &gpo_strategy_anneal,
                                                    &gpo_strategy_model};
    s->ops = table[s->strategy];
    if ((st = s->ops->create(s, &s->state)) != GPUOPT_OK)
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
    for (int32_t c = 0; c < s->nchunks; c++) {
        free(s->chunks[c]);
        free(s->idx_chunks[c]);
    }
    free(s->chunks);
    free(s->idx_chunks);
    free(s->table);
    free(s->scratch);
    if (s->walk_ready)
        gpo_space_iter_free(&s->walk);
    gpo_sampler_destroy(s->sampler);
    gpo_space_unref(s->space);
    free(s);
}

/* ---- results --------------------------------------------------------------------- */

static gpuopt_status check_result(int32_t status, double value)
{
    if (status < GPO_CAND_OK || status > GPO_CAND_PRUNED)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "search: candidate status %d unknown",
                        (int)status);
    if ((status == GPO_CAND_OK || status == GPO_CAND_PRUNED) && !(isfinite(value) && value >= 0))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "search: a timed candidate needs a finite time >= 0, not %g", value);
    return GPUOPT_OK;
}

static void record(gpo_search *s, int32_t e, int32_t status, double value, int observe)
{
    entry *en = at(s, e);
    en->status = status;
    en->value = status == GPO_CAND_OK || status == GPO_CAND_PRUNED ? value : NAN;
    if (gpo_cand_failed(status) && !en->preload)
        s->failures++;
    if (status == GPO_CAND_OK && (s->best < 0 || value < at(s, s->best)->value))
        s->best = e;
    if (status == GPO_CAND_OK || status == GPO_CAND_PRUNED)
        elite_insert(s, e);
    if (observe)
        s->ops->observe(s->state, s, en->cfg.idx,
                        status == GPO_CAND_OK || status == GPO_CAND_PRUNED ? value : INFINITY);
}

gpuopt_status gpo_search_preload(gpo_search *s, const uint32_t *idx, int32_t status,
                                 double value_ns)
{
    if (!s || !idx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "search preload: NULL argument");
    if (s->started)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "search preload: the search has already handed out candidates");
    gpuopt_status st = check_result(status, value_ns);
    if (st != GPUOPT_OK)
        return st;
    if (!gpo_space_is_legal(s->space, idx))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "search preload: the configuration is not legal in this space");
    if (find(s, idx) >= 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "search preload: configuration given twice");
    int32_t e = append(s, idx);
    if (e < 0)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory recording a result");
    at(s, e)->preload = 1;
    s->preloads++;
    record(s, e, status, value_ns, 1);
    return GPUOPT_OK;
}

static int out_of_budget(gpo_search *s)
{
    if (s->budget > 0 && s->handed >= s->budget)
        s->stop = "evaluation budget";
    else if (s->set.max_failures > 0 && s->failures >= s->set.max_failures)
        s->stop = "failure budget";
    else if (s->set.max_seconds > 0 && (double)(now(s) - s->start_ns) >= s->set.max_seconds * 1e9)
        s->stop = "time budget";
    return s->stop[0] != '\0';
}

gpuopt_status gpo_search_next(gpo_search *s, const gpuopt_config **config)
{
    if (config)
        *config = NULL;
    if (!s || !config)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "search next: NULL argument");
    if (s->stop[0] || out_of_budget(s))
        return gpo_fail(GPUOPT_ERR_NOT_FOUND, "search over: %s", s->stop);
    s->started = 1;
    uint32_t *idx = s->scratch;
    int got = s->ops->propose(s->state, s, idx);
    /* The driver trusts no strategy with the two promises: legal, unseen. */
    if (got && (find(s, idx) >= 0 || !gpo_space_is_legal(s->space, idx)))
        got = gpo_search_draw_unseen(s, idx);
    if (!got) {
        s->stop = "space exhausted";
        return gpo_fail(GPUOPT_ERR_NOT_FOUND, "search over: %s", s->stop);
    }
    int32_t e = append(s, idx);
    if (e < 0)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory recording a candidate");
    s->handed++;
    *config = &at(s, e)->cfg;
    return GPUOPT_OK;
}

gpuopt_status gpo_search_report(gpo_search *s, const gpuopt_config *config, int32_t status,
                                double value_ns)
{
    if (!s || !config || !config->idx || config->space != s->space)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "search report: NULL, or a configuration of another space");
    gpuopt_status st = check_result(status, value_ns);
    if (st != GPUOPT_OK)
        return st;
    int32_t e = find(s, config->idx);
    if (e < 0 || at(s, e)->status >= 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "search report: %s",
                        e < 0 ? "the search never handed out this configuration"
                              : "this configuration was already reported");
    record(s, e, status, value_ns, 1);
    return GPUOPT_OK;
}

/* ---- reading ------------------------------------------------------------------------ */

int gpo_search_finished(const gpo_search *s)
{
    return !s || s->stop[0] != '\0';
}

const char *gpo_search_stop_reason(const gpo_search *s)
{
    return s ? s->stop : "";
}

int32_t gpo_search_strategy(const gpo_search *s)
{
    return s ? s->strategy : -1;
}

uint64_t gpo_search_legal(const gpo_search *s)
{
    return s ? s->legal : 0;
}

int32_t gpo_search_planned(const gpo_search *s)
{
    if (!s)
        return 0;
    uint64_t legal = s->legal > (uint64_t)s->preloads ? s->legal - (uint64_t)s->preloads : 0;
    if (s->budget > 0 && (s->legal == 0 || (uint64_t)s->budget < legal))
        return s->budget;
    return legal > INT32_MAX ? 0 : (int32_t)legal;
}

double gpo_search_best_value(const gpo_search *s)
{
    return s && s->best >= 0 ? at(s, s->best)->value : -1;
}

const gpuopt_config *gpo_search_best(const gpo_search *s)
{
    return s && s->best >= 0 ? &at(s, s->best)->cfg : NULL;
}

int32_t gpo_search_top(const gpo_search *s, int32_t k, const gpuopt_config **configs,
                       double *values)
{
    if (!s || k <= 0 || !configs)
        return 0;
    double *v = malloc((size_t)k * sizeof *v);
    if (!v)
        return 0;
    int32_t got = 0;
    for (int32_t e = 0; e < s->n; e++) {
        const entry *en = at(s, e);
        if (en->status != GPO_CAND_OK)
            continue;
        int32_t pos;
        if (got < k)
            pos = got++;
        else if (en->value < v[k - 1])
            pos = k - 1;
        else
            continue;
        /* Insertion; ties keep history order. */
        while (pos > 0 && en->value < v[pos - 1]) {
            v[pos] = v[pos - 1];
            configs[pos] = configs[pos - 1];
            pos--;
        }
        v[pos] = en->value;
        configs[pos] = &en->cfg;
    }
    if (values)
        memcpy(values, v, (size_t)got * sizeof *v);
    free(v);
    return got;
}

int32_t gpo_search_evaluations(const gpo_search *s)
{
    return s ? s->handed : 0;
}

int32_t gpo_search_failures(const gpo_search *s)
{
    return s ? s->failures : 0;
}

int32_t gpo_search_history_count(const gpo_search *s)
{
    return s ? s->n : 0;
}

gpuopt_status gpo_search_history_at(const gpo_search *s, int32_t i, const gpuopt_config **config,
                                    int32_t *status, double *value_ns)
{
    if (!s || !config || !status || !value_ns)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "search history: NULL argument");
    if (i < 0 || i >= s->n)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "search history: entry %d of %d", (int)i,
                        (int)s->n);
    const entry *en = at(s, i);
    *config = &en->cfg;
    *status = en->status;
    *value_ns = en->value;
    return GPUOPT_OK;
}
