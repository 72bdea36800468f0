/* gpuopt_tune_step: online tuning (KTT's dynamic tuning, cuTENSOR's
 * incremental autotuning). Each call does the caller's real work once:
 * with the next candidate while the search lasts, then with the best. The
 * candidate's time is that one run's (noisier than gpuopt_tuner_run's
 * repeats, but free: the work had to be done anyway).
 *
 * A candidate that fails (build, launch, wrong result, timeout) left the
 * caller's output wrong or missing, so the same call runs again: with the
 * best so far when there is one, else with the next candidate. A call
 * that returns GPUOPT_OK has run a configuration that passed its check.
 *
 * The cache: a hit (no soft change) answers from the first call; the
 * candidates are journaled as they run, and the finished record is written
 * when the search ends. */
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tune/online.h"
#include "tune/result_impl.h"
#include "tune/tuner.h"

struct gpo_online {
    gpo_trun *r;
    int done;
    gpuopt_config *best; /* owned, once done */
    gpo_prep *best_prep;
};

void gpo_online_free(struct gpo_online *o)
{
    if (!o)
        return;
    if (o->best_prep)
        o->r->ops->release(o->r, o->best_prep);
    gpo_point_destroy(o->best);
    if (o->r && o->r->result)
        gpuopt_result_destroy(o->r->result);
    gpo_trun_end(o->r);
    free(o);
}

static gpuopt_status start(gpuopt_tuner *t, struct gpo_online **out)
{
    struct gpo_online *o = calloc(1, sizeof *o);
    if (!o)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting online tuning");
    gpuopt_status st = gpo_trun_begin(t, &o->r);
    if (st == GPUOPT_OK)
        st = gpo_trun_space(o->r);
    if (st == GPUOPT_OK)
        st = gpo_tkey_make(o->r);
    gpo_cache_hit *hit = NULL;
    if (st == GPUOPT_OK && o->r->key.usable && t->cache_mode == GPUOPT_CACHE_USE &&
        gpo_cache_lookup(t->cache, &o->r->key.key, &o->r->key.soft, &hit) == GPUOPT_OK &&
        !hit->changed && hit->best) {
        uint32_t idx[GPO_SPACE_MAX_PARAMS + 1];
        if (gpo_space_params_idx(o->r->space, cJSON_GetObjectItemCaseSensitive(hit->best, "params"),
                              idx) == 0 &&
            gpo_space_is_legal(o->r->space, idx)) {
            st = gpo_point_create(o->r->space, idx, &o->best);
            o->done = st == GPUOPT_OK;
        }
    }
    gpo_cache_hit_free(hit);
    /* A soft change is not verified online: the search runs again, each
     * step doing real work anyway. */
    if (st == GPUOPT_OK && !o->done)
        st = gpo_trun_start_search(o->r);
    if (st != GPUOPT_OK) {
        gpo_online_free(o);
        return st;
    }
    *out = o;
    return GPUOPT_OK;
}

/* The search is over: the best (by its single-run times; no re-timing,
 * which would run work nobody asked for) becomes the answer. */
static gpuopt_status conclude(struct gpo_online *o)
{
    gpo_trun *r = o->r;
    const gpuopt_config *top[2];
    int32_t k = gpo_search_top(r->search, 2, top, NULL);
    int32_t best = k > 0 ? gpo_result_index_of(r->result, top[0]) : -1;
    int32_t runner = k > 1 ? gpo_result_index_of(r->result, top[1]) : -1;
    gpo_trun_finish_journal(r, best, runner, (double)(gpo_now_ns() - r->start_ns) / 1e9);
    if (k < 1)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "online tuning: no valid candidate among the %d evaluated",
                        (int)gpo_search_evaluations(r->search));
    gpuopt_status st = gpo_point_create(r->space, gpo_point_indices(top[0]), &o->best);
    if (st == GPUOPT_OK)
        o->done = 1;
    return st;
}

/* Runs the best once (prepared on first use). */
static gpuopt_status run_best(struct gpo_online *o)
{
    gpo_trun *r = o->r;
    gpo_eval ev;
    memset(&ev, 0, sizeof ev);
    gpuopt_status st = gpo_trun_setup(r);
    if (st != GPUOPT_OK)
        return st;
    double ns = 0;
    int32_t s;
    if (!o->best_prep) {
        s = gpo_eval_ready(r, o->best, &o->best_prep, &ev);
    } else {
        s = r->ops->run(r, o->best_prep, &ns, &ev);
    }
    if (s == GPO_FATAL)
        return r->fatal;
    if (s != GPO_CAND_OK)
        return gpo_fail(GPUOPT_ERR_LAUNCH, "online tuning: the best configuration failed: %s",
                        ev.msg);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tune_step(gpuopt_tuner *t, const gpuopt_config **config,
                                          int32_t *done)
{
    gpo_detail_clear();
    if (config)
        *config = NULL;
    if (done)
        *done = 0;
    if (!t)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tune_step: tuner is NULL");
    gpuopt_status st = GPUOPT_OK;
    if (!t->online && (st = start(t, &t->online)) != GPUOPT_OK)
        return st;
    struct gpo_online *o = t->online;
    gpo_trun *r = o->r;
    while (!o->done) {
        const gpuopt_config *c = NULL;
        st = gpo_search_next(r->search, &c);
        if (st == GPUOPT_ERR_NOT_FOUND) {
            if ((st = conclude(o)) != GPUOPT_OK)
                return st;
            break;
        }
        if (st != GPUOPT_OK)
            return st;
        gpo_eval ev;
        memset(&ev, 0, sizeof ev);
        ev.compile_ms = -1;
        gpo_prep *p = NULL;
        double ns = 0, wall = 0;
        int32_t s = r->ops->prepare(r, c, &p, &ev);
        if (s == GPO_CAND_OK) {
            s = gpo_eval_run(r, p, &ns, &wall, &ev);
            if (s == GPO_CAND_OK && t->timeout_s > 0 && wall > t->timeout_s * 1e9) {
                gpo_snprintf(ev.msg, sizeof ev.msg, "the run took %.3f s, over the timeout of %g s",
                             wall / 1e9, t->timeout_s);
                s = GPO_CAND_TIMEOUT;
            }
            if (s == GPO_CAND_OK)
                s = r->ops->check(r, p, &ev);
            r->ops->release(r, p);
        }
        if (s == GPO_FATAL)
            return r->fatal;
        ev.status = s;
        if (s == GPO_CAND_OK)
            gpo_stats_compute(&ns, 1, &ev.stats);
        if (gpo_trun_record(r, c, &ev) != 0)
            return r->fatal;
        if (s == GPO_CAND_OK) {
            if (config)
                *config = c;
            return GPUOPT_OK;
        }
        /* The work is not done yet: the best so far redoes it. */
        const gpuopt_config *best = gpo_search_best(r->search);
        if (best) {
            gpo_prep *bp = NULL;
            s = gpo_eval_ready(r, best, &bp, &ev);
            if (bp)
                r->ops->release(r, bp);
            if (s == GPO_FATAL)
                return r->fatal;
            if (s == GPO_CAND_OK) {
                if (config)
                    *config = best;
                return GPUOPT_OK;
            }
        }
    }
    if ((st = run_best(o)) != GPUOPT_OK)
        return st;
    if (config)
        *config = o->best;
    if (done)
        *done = 1;
    return GPUOPT_OK;
}
