/* gpuopt_tuner_run: the cache first (a hit answers without building or
 * running anything; a hit whose soft fields changed is re-verified), then
 * the search loop, the final side-by-side re-timing, and the finished
 * record.
 *
 * The loop keeps a fixed number of candidates handed out ahead of the one
 * being measured (2 when the subject builds on a worker thread, else 0),
 * so their builds overlap its timing. The number does not depend on how
 * fast anything runs, so a seed still gives one sequence. */
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tune/online.h"
#include "tune/progcache.h"
#include "tune/result_impl.h"
#include "tune/subject_kernel.h"
#include "tune/tuner.h"

#define AHEAD 2
#define FINALISTS 4

/* ---- a run's life ----------------------------------------------------------- */

gpuopt_status gpo_trun_begin(gpuopt_tuner *t, gpo_trun **out)
{
    *out = NULL;
    if (t->subject == GPO_SUBJECT_NONE)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "the tuner has nothing to tune: give it gpuopt_tuner_set_kernel or "
                        "gpuopt_tuner_set_callback");
    gpo_ctx_lock(t->ctx);
    gpuopt_status st = gpo_ctx_check_fork(t->ctx);
    gpo_ctx_unlock(t->ctx);
    if (st != GPUOPT_OK)
        return st;
    gpo_trun *r = calloc(1, sizeof *r);
    if (!r)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting a tuning run");
    r->t = t;
    r->ops = t->subject == GPO_SUBJECT_KERNEL ? &gpo_subject_kernel : &gpo_subject_callback;
    r->best_ns = -1;
    r->start_ns = gpo_now_ns();
    *out = r;
    return GPUOPT_OK;
}

gpuopt_status gpo_trun_space(gpo_trun *r)
{
    if (r->space)
        return GPUOPT_OK;
    gpuopt_status st = gpo_space_clone(r->t->space, &r->space);
    if (st == GPUOPT_OK && r->ops->constrain)
        st = r->ops->constrain(r);
    return st;
}

gpuopt_status gpo_trun_search(gpo_trun *r)
{
    const gpuopt_tuner *t = r->t;
    gpo_search_settings set;
    gpo_search_defaults(&set);
    set.strategy = t->strategy;
    set.seed = t->seed;
    set.max_evaluations = t->max_evaluations;
    set.max_seconds = t->max_seconds;
    set.max_failures = t->max_failures;
    set.clock_ns = t->clock_ns;
    set.clock_user = t->clock_user;
    return gpo_search_create(r->space, &set, &r->search);
}

gpuopt_status gpo_trun_setup(gpo_trun *r)
{
    if (r->set_up)
        return GPUOPT_OK;
    gpuopt_status st = r->ops->setup(r);
    if (st == GPUOPT_OK)
        r->set_up = 1;
    return st;
}

void gpo_trun_end(gpo_trun *r)
{
    if (!r)
        return;
    gpo_cache_abandon(r->journal);
    if (r->set_up)
        r->ops->teardown(r);
    gpo_search_destroy(r->search);
    if (r->space)
        gpo_space_unref(r->space);
    cJSON_Delete(r->resume);
    gpo_tkey_free(&r->key);
    free(r);
}

/* ---- the loop ----------------------------------------------------------------- */

static void progress(gpo_trun *r)
{
    const gpuopt_tuner *t = r->t;
    if (!t->progress)
        return;
    int32_t done = gpo_search_evaluations(r->search);
    int32_t total = gpo_search_planned(r->search);
    double elapsed = (double)(gpo_now_ns() - r->start_ns) / 1e9, left = -1;
    if (done > 0 && total >= done)
        left = elapsed / done * (total - done);
    if (t->max_seconds > 0) {
        double budget_left = t->max_seconds - elapsed;
        budget_left = budget_left > 0 ? budget_left : 0;
        left = left < 0 || budget_left < left ? budget_left : left;
    }
    t->progress(done, total, gpo_search_best_value(r->search), left, t->progress_user);
}

int gpo_trun_record(gpo_trun *r, const gpuopt_config *c, const gpo_eval *ev)
{
    int timed = ev->status == GPO_CAND_OK || ev->status == GPO_CAND_PRUNED;
    if ((r->fatal = gpo_search_report(r->search, c, ev->status, timed ? ev->stats.median : 0)) !=
        GPUOPT_OK)
        return -1;
    if (gpo_result_add(r->result, gpo_point_indices(c), ev, 0) < 0) {
        r->fatal = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory recording a candidate");
        return -1;
    }
    if (r->journal) {
        cJSON *params = gpo_point_params_json(c);
        gpo_cache_stats cs;
        gpo_eval_to_cache_stats(ev, &cs);
        /* Written at once, one line: a killed run loses nothing finished. */
        if (params)
            gpo_cache_add_candidate(r->journal, params, &cs);
        cJSON_Delete(params);
    }
    r->best_ns = gpo_search_best_value(r->search);
    gpo_log_debug(&r->t->ctx->log, "tuner: candidate %d: %s, median %.0f ns%s%s",
                  (int)r->result->n - 1, gpo_cache_status_name(ev->status),
                  timed ? ev->stats.median : -1.0, ev->msg[0] ? ": " : "", ev->msg);
    progress(r);
    return 0;
}

/* Evaluates one candidate and records it. -1 when the run must stop. */
static int measure(gpo_trun *r, const gpuopt_config *c)
{
    gpo_eval ev;
    if (gpo_eval_candidate(r, c, gpo_search_best_value(r->search), &ev) != 0)
        return -1;
    return gpo_trun_record(r, c, &ev);
}

static int search_loop(gpo_trun *r)
{
    int ahead = r->ops->prefetch && r->t->ks && gpo_progcache_overlaps(r->t->ks->pc) ? AHEAD : 0;
    const gpuopt_config *queue[AHEAD + 1];
    int qn = 0, over = 0;
    for (;;) {
        while (!over && qn < 1 + ahead) {
            const gpuopt_config *c = NULL;
            gpuopt_status st = gpo_search_next(r->search, &c);
            if (st == GPUOPT_ERR_NOT_FOUND) {
                over = 1;
                break;
            }
            if (st != GPUOPT_OK) {
                r->fatal = st;
                return -1;
            }
            queue[qn++] = c;
            if (ahead)
                r->ops->prefetch(r, c);
        }
        if (qn == 0)
            break;
        /* Out of time or failures: what was handed out ahead is dropped. */
        const char *stop = gpo_search_stop_reason(r->search);
        if (over && (!strcmp(stop, "time budget") || !strcmp(stop, "failure budget")))
            break;
        const gpuopt_config *c = queue[0];
        memmove(queue, queue + 1, (size_t)--qn * sizeof queue[0]);
        if (measure(r, c) != 0)
            return -1;
    }
    return 0;
}

/* The best few re-timed side by side; the winner's result index, the
 * runner-up's in *runner (-1 none). -1 with r->fatal on a fatal failure. */
static int32_t finalists(gpo_trun *r, int32_t *runner)
{
    const gpuopt_config *top[FINALISTS];
    double values[FINALISTS];
    gpo_prep *prep[FINALISTS] = {NULL};
    gpo_stats stats[FINALISTS];
    int32_t k = gpo_search_top(r->search, FINALISTS, top, values), slot[FINALISTS], n = 0;
    *runner = -1;
    if (k <= 1) {
        *runner = -1;
        return k == 1 ? gpo_result_index_of(r->result, top[0]) : -1;
    }
    /* Ready again (built: the program cache has them; checked again). */
    for (int32_t i = 0; i < k; i++) {
        gpo_eval ev;
        memset(&ev, 0, sizeof ev);
        int32_t s = gpo_eval_ready(r, top[i], &prep[n], &ev);
        if (s == GPO_FATAL) {
            for (int32_t j = 0; j < n; j++)
                r->ops->release(r, prep[j]);
            return -1;
        }
        if (s != GPO_CAND_OK) {
            gpo_log_warn(&r->t->ctx->log, "tuner: a finalist failed when run again: %s", ev.msg);
            continue;
        }
        slot[n++] = i;
    }
    int32_t win = n ? gpo_eval_retime(r, prep, n, stats) : -1;
    for (int32_t j = 0; j < n; j++)
        r->ops->release(r, prep[j]);
    if (win < 0)
        return r->fatal != GPUOPT_OK ? -1 : gpo_result_index_of(r->result, top[0]);
    int32_t best_runner = -1;
    for (int32_t j = 0; j < n; j++) {
        int32_t ix = gpo_result_index_of(r->result, top[slot[j]]);
        if (ix >= 0)
            gpo_result_add_final(r->result, ix, &stats[j]);
        if (j != win && stats[j].count > 0 &&
            (best_runner < 0 || stats[j].median < stats[best_runner].median))
            best_runner = j;
    }
    if (best_runner >= 0)
        *runner = gpo_result_index_of(r->result, top[slot[best_runner]]);
    if (win != 0)
        gpo_log_info(&r->t->ctx->log,
                     "tuner: the re-timing changed the winner (%.0f ns beat the "
                     "incumbent's %.0f ns beyond noise)",
                     stats[win].median, stats[0].median);
    return gpo_result_index_of(r->result, top[slot[win]]);
}

void gpo_trun_finish_journal(gpo_trun *r, int32_t best, int32_t runner, double wall_s)
{
    if (!r->journal)
        return;
    gpo_cache_stats bs, rs;
    cJSON *bp = NULL, *rp = NULL;
    if (best >= 0) {
        gpo_result_cache_stats(r->result, best, &bs);
        bp = gpo_point_params_json(gpo_result_config(r->result, best));
    }
    if (runner >= 0 && bp) {
        gpo_result_cache_stats(r->result, runner, &rs);
        rp = gpo_point_params_json(gpo_result_config(r->result, runner));
    }
    const char *stop = gpo_search_stop_reason(r->search);
    int complete = !strcmp(stop, "space exhausted") || !strcmp(stop, "evaluation budget");
    if (best < 0 || bp)
        gpo_cache_finish(r->journal, bp, bp ? &bs : NULL, rp, rp ? &rs : NULL, complete, wall_s,
                         NULL);
    else
        gpo_cache_abandon(r->journal);
    r->journal = NULL;
    cJSON_Delete(bp);
    cJSON_Delete(rp);
}

gpuopt_status gpo_trun_start_search(gpo_trun *r)
{
    gpuopt_tuner *t = r->t;
    gpuopt_status st;
    if ((st = gpo_trun_space(r)) != GPUOPT_OK || (st = gpo_trun_setup(r)) != GPUOPT_OK ||
        (st = gpo_trun_search(r)) != GPUOPT_OK)
        return st;
    if (!(r->result = gpo_result_new(t, t->space)) ||
        gpo_result_set_workload(r->result, r->key.backend[0] ? r->key.backend : NULL,
                                r->key.workload) != 0)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting a result");
    gpo_result_set_validated(r->result, r->validated);
    if (r->key.usable) {
        gpo_cache_search cs = {gpo_strategy_name(gpo_search_strategy(r->search)), t->seed,
                               t->max_evaluations, t->max_seconds, t->max_failures};
        if ((st = gpo_resume_fetch(r)) != GPUOPT_OK)
            return st;
        if (gpo_cache_begin(t->cache, &r->key.key, &r->key.soft, &cs, &r->journal) != GPUOPT_OK)
            gpo_log_warn(&t->ctx->log, "tuner: the run is not journaled: %s", gpo_detail_get());
        if ((st = gpo_resume_apply(r)) != GPUOPT_OK)
            return st;
    }
    return GPUOPT_OK;
}

/* Tunes: the search from the start (or from a killed run's journal). */
static gpuopt_status tune(gpo_trun *r, gpuopt_result **out)
{
    gpuopt_status st = gpo_trun_start_search(r);
    if (st != GPUOPT_OK)
        return st;
    if (search_loop(r) != 0)
        return r->fatal;
    int32_t runner = -1, best = finalists(r, &runner);
    if (best < 0 && r->fatal != GPUOPT_OK)
        return r->fatal;
    double wall_s = (double)(gpo_now_ns() - r->start_ns) / 1e9;
    gpo_result_set_best(r->result, best);
    gpo_result_set_search(r->result, r->search, wall_s);
    gpo_trun_finish_journal(r, best, runner, wall_s);
    *out = r->result;
    r->result = NULL;
    if (best < 0)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "no valid candidate among the %d evaluated (the result lists each with "
                        "its status and message)",
                        (int)(*out)->n);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_run(gpuopt_tuner *t, gpuopt_result **out)
{
    gpo_detail_clear();
    if (out)
        *out = NULL;
    if (!t || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tuner_run: %s is NULL",
                        t ? "out" : "tuner");
    gpo_online_free(t->online);
    t->online = NULL;
    gpo_trun *r = NULL;
    gpuopt_status st = gpo_trun_begin(t, &r);
    if (st != GPUOPT_OK)
        return st;
    if ((st = gpo_tkey_make(r)) != GPUOPT_OK)
        goto out;
    if (r->key.usable && t->cache_mode == GPUOPT_CACHE_USE) {
        gpo_cache_hit *hit = NULL;
        if (gpo_cache_lookup(t->cache, &r->key.key, &r->key.soft, &hit) == GPUOPT_OK) {
            st = hit->changed ? gpo_verify_hit(r, hit, out) : gpo_result_from_hit(r, hit, 1, out);
            gpo_cache_hit_free(hit);
            /* A plain hit that cannot serve (its winner no longer maps)
             * and a failed verification both tune again. */
            if (st == GPUOPT_OK || *out)
                goto out;
            if (st != GPUOPT_ERR_NOT_FOUND)
                goto out;
        }
    }
    st = tune(r, out);
out:
    if (r && r->result)
        gpuopt_result_destroy(r->result);
    gpo_trun_end(r);
    return st;
}
