/* Results: every evaluated candidate with its status, statistics, compile
 * time and message, the winner, the final re-timing, and how the search
 * ran. Immutable once returned; JSON and CSV in result_export.c. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tune/result_impl.h"

gpuopt_result *gpo_result_new(gpuopt_tuner *t, const gpuopt_space *space)
{
    gpuopt_result *res = calloc(1, sizeof *res);
    if (!res)
        return NULL;
    gpo_space_ref(space);
    res->space = space;
    res->best = -1;
    res->legal = 0;
    gpo_strlcpy(res->device, t->dev->info.id, sizeof res->device);
    gpo_strlcpy(res->device_name, t->dev->info.name, sizeof res->device_name);
    gpo_strlcpy(res->backend, t->dev->info.backend, sizeof res->backend);
    gpo_strlcpy(res->subject, t->subject == GPO_SUBJECT_KERNEL ? "kernel" : "callback",
                sizeof res->subject);
    gpo_strlcpy(res->requested, gpo_strategy_name(t->strategy), sizeof res->requested);
    gpo_strlcpy(res->strategy, res->requested, sizeof res->strategy);
    res->seed = t->seed;
    res->max_evaluations = t->max_evaluations;
    res->max_seconds = t->max_seconds;
    res->max_failures = t->max_failures;
    res->timing = t->timing;
    res->timeout_s = t->timeout_s;
    res->wall_s = -1;
    return res;
}

GPUOPT_API void gpuopt_result_destroy(gpuopt_result *res)
{
    if (!res)
        return;
    for (int32_t i = 0; i < res->n; i++) {
        gpo_point_destroy(res->c[i].config);
        free(res->c[i].message);
    }
    free(res->c);
    free(res->final);
    free(res->workload);
    gpo_space_unref(res->space);
    free(res);
}

int32_t gpo_result_add(gpuopt_result *res, const uint32_t *idx, const gpo_eval *ev, int resumed)
{
    if (res->n == res->cap) {
        int32_t cap = res->cap ? res->cap * 2 : 16;
        gpo_rcand *c = realloc(res->c, (size_t)cap * sizeof *c);
        if (!c)
            return -1;
        res->c = c;
        res->cap = cap;
    }
    gpo_rcand *c = &res->c[res->n];
    memset(c, 0, sizeof *c);
    if (gpo_point_create(res->space, idx, &c->config) != GPUOPT_OK)
        return -1;
    if (!(c->message = gpo_strdup(ev->msg))) {
        gpo_point_destroy(c->config);
        return -1;
    }
    c->status = ev->status;
    c->timed = ev->stats.count > 0;
    c->stats = ev->stats;
    c->compile_ms = ev->compile_ms;
    c->resumed = resumed;
    return res->n++;
}

void gpo_result_set_search(gpuopt_result *res, const gpo_search *s, double wall_s)
{
    const char *name = gpo_strategy_name(gpo_search_strategy(s));
    if (name)
        gpo_strlcpy(res->strategy, name, sizeof res->strategy);
    gpo_strlcpy(res->stop, gpo_search_stop_reason(s), sizeof res->stop);
    res->legal = gpo_search_legal(s);
    res->evaluations = gpo_search_evaluations(s);
    res->failures = gpo_search_failures(s);
    res->wall_s = wall_s;
}

void gpo_result_set_best(gpuopt_result *res, int32_t index)
{
    res->best = index >= 0 && index < res->n ? index : -1;
}

void gpo_result_set_from_cache(gpuopt_result *res, int32_t from_cache)
{
    res->from_cache = from_cache;
}

void gpo_result_set_validated(gpuopt_result *res, int validated)
{
    res->validated = validated;
}

int gpo_result_set_workload(gpuopt_result *res, const char *backend, const char *workload)
{
    if (backend && *backend)
        gpo_strlcpy(res->backend, backend, sizeof res->backend);
    free(res->workload);
    res->workload = workload ? gpo_strdup(workload) : NULL;
    return workload && !res->workload ? -1 : 0;
}

int gpo_result_add_final(gpuopt_result *res, int32_t index, const gpo_stats *stats)
{
    gpo_rfinal *f = realloc(res->final, (size_t)(res->nfinal + 1) * sizeof *f);
    if (!f)
        return -1;
    res->final = f;
    f[res->nfinal].index = index;
    f[res->nfinal].stats = *stats;
    res->nfinal++;
    return 0;
}

int32_t gpo_result_index_of(const gpuopt_result *res, const gpuopt_config *c)
{
    int32_t np = gpo_space_param_count(res->space);
    for (int32_t i = 0; i < res->n; i++)
        if (memcmp(gpo_point_indices(res->c[i].config), gpo_point_indices(c),
                   (size_t)np * sizeof(uint32_t)) == 0)
            return i;
    return -1;
}

int32_t gpo_result_count_of(const gpuopt_result *res)
{
    return res ? res->n : 0;
}

int32_t gpo_result_best_index(const gpuopt_result *res)
{
    return res ? res->best : -1;
}

const gpuopt_config *gpo_result_config(const gpuopt_result *res, int32_t i)
{
    return res && i >= 0 && i < res->n ? res->c[i].config : NULL;
}

void gpo_result_cache_stats(const gpuopt_result *res, int32_t i, gpo_cache_stats *out)
{
    const gpo_rcand *c = &res->c[i];
    out->status = c->status;
    out->runs = c->timed ? c->stats.count : 0;
    out->median_ns = c->timed ? c->stats.median : -1;
    out->min_ns = c->timed ? c->stats.min : -1;
    out->p20_ns = c->timed ? c->stats.p20 : -1;
    out->p80_ns = c->timed ? c->stats.p80 : -1;
    out->compile_ms = c->compile_ms;
}

/* ---- public reading ---------------------------------------------------------- */

/* The first released layout ends with `message`. */
static const size_t first_candidate_size =
    offsetof(gpuopt_candidate, message) + sizeof(const char *);

GPUOPT_API size_t gpuopt_candidate_size(void)
{
    return sizeof(gpuopt_candidate);
}

static gpuopt_status fill(const gpuopt_result *res, int32_t i, gpuopt_candidate *out)
{
    const gpo_rcand *c = &res->c[i];
    gpuopt_candidate v;
    memset(&v, 0, sizeof v);
    v.struct_size = out->struct_size < sizeof v ? out->struct_size : sizeof v;
    v.config = c->config;
    v.status = c->status;
    v.runs = c->timed ? c->stats.count : 0;
    v.median_ns = c->timed ? c->stats.median : -1;
    v.p20_ns = c->timed ? c->stats.p20 : -1;
    v.p80_ns = c->timed ? c->stats.p80 : -1;
    v.min_ns = c->timed ? c->stats.min : -1;
    v.compile_ms = c->compile_ms;
    v.message = c->message;
    memcpy(out, &v, v.struct_size);
    return GPUOPT_OK;
}

static gpuopt_status check_out(const gpuopt_result *res, const gpuopt_candidate *out,
                               const char *fn)
{
    if (!res || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                        res ? "candidate" : "result");
    if (out->struct_size < first_candidate_size)
        return gpo_fail(GPUOPT_ERR_STRUCT_SIZE,
                        "%s: gpuopt_candidate.struct_size is %zu; set it to "
                        "sizeof(gpuopt_candidate) (%zu in this library)",
                        fn, out->struct_size, sizeof(gpuopt_candidate));
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_result_best(const gpuopt_result *res, gpuopt_candidate *best)
{
    gpo_detail_clear();
    gpuopt_status st = check_out(res, best, "gpuopt_result_best");
    if (st != GPUOPT_OK)
        return st;
    if (res->best < 0)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "gpuopt_result_best: no valid candidate among the %d evaluated",
                        (int)res->n);
    return fill(res, res->best, best);
}

GPUOPT_API gpuopt_status gpuopt_result_count(const gpuopt_result *res, int32_t *count)
{
    gpo_detail_clear();
    if (!res || !count)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_result_count: %s is NULL",
                        res ? "count" : "result");
    *count = res->n;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_result_at(const gpuopt_result *res, int32_t index,
                                          gpuopt_candidate *candidate)
{
    gpo_detail_clear();
    gpuopt_status st = check_out(res, candidate, "gpuopt_result_at");
    if (st != GPUOPT_OK)
        return st;
    if (index < 0 || index >= res->n)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "gpuopt_result_at: index %d of %d candidates",
                        (int)index, (int)res->n);
    return fill(res, index, candidate);
}

GPUOPT_API gpuopt_status gpuopt_result_from_cache(const gpuopt_result *res, int32_t *cached)
{
    gpo_detail_clear();
    if (!res || !cached)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_result_from_cache: %s is NULL",
                        res ? "cached" : "result");
    *cached = res->from_cache;
    return GPUOPT_OK;
}
