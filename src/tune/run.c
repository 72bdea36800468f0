/* One tuning run (run.h): the cache, the search loop, one point's
 * evaluation, the side-by-side re-timing, trust-but-verify, resuming, and
 * the journal.
 *
 * One point's timing:
 * - TIMEOUT: any single run (the first included) whose wall time, reset
 *   included, passes the timeout ends the point at once: wall time, not
 *   the measurement, since a callback's own measurement may cover only
 *   part of the call. A run cannot be interrupted, so the check follows
 *   each run;
 * - PRUNED: the controller's probe rule (the p20 of the probe's runs,
 *   and of a second probe, over prune_ratio x the best), and, before it, two runs in a row each
 * over 10 x that bound and over 1 ms (a point 20x slower than the best is not worth the rest of its
 * warm-up and probe). Two, because one sample on a shared machine can be a scheduling hiccup; over
 * 1 ms, because below that the runs it saves cost nothing worth the risk;
 * - a PRUNED or failed point is released at once; nothing of it is kept
 *   but its statistics and message. */
#include "tune/run.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

#define EARLY_PRUNE_FACTOR 10.0
#define EARLY_PRUNE_MIN_NS 1e6
#define EARLY_PRUNE_RUNS 2
/* Timed rounds of a side-by-side re-timing (a warm-up round comes first):
 * as many as the time allowed pays for, within these bounds. */
#define RETIME_MIN_ROUNDS 5
#define RETIME_MAX_ROUNDS 30
#define MAX_SLOTS 16

struct gpo_run {
    gpo_run_spec spec;
    gpuopt_space *space; /* the spec's, plus the subject's limits */
    gpo_subject_ctx sc;
    int set_up, keyed;
    gpuopt_status fatal;
    uint64_t start_ns;
    double seconds; /* the time budget from start_ns; 0: none */
    double best_ns; /* the probe rule's reference, -1 none */
    gpo_search *search;
    gpuopt_result *result;
    int32_t best, runner; /* result indices after tune, -1 none */
    int32_t incumbent;    /* the incumbent's result index, -1 none */
    gpo_cache_hit *hit;   /* the record a lookup found, for verify */
    int resume_finished;  /* a finished record cut short is resumed too */
    gpo_cache_tune *journal;
    cJSON *resume;
};

static void eval_init(gpo_eval *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->status = GPO_CAND_OK;
    ev->compile_ms = -1;
}

/* The search's clock (tests inject one). */
static uint64_t now(const gpo_run *r)
{
    const gpo_search_settings *s = &r->spec.search;
    return s->clock_ns ? s->clock_ns(s->clock_user) : gpo_now_ns();
}

static double left_ms(const gpo_run *r)
{
    double used = (double)(now(r) - r->start_ns) / 1e6;
    return r->seconds * 1e3 > used ? r->seconds * 1e3 - used : 0;
}

static int budget_spent(const gpo_run *r)
{
    return r->seconds > 0 && left_ms(r) <= 0;
}

/* ---- a run's life --------------------------------------------------------------- */

gpuopt_status gpo_run_begin(const gpo_run_spec *spec, gpo_run **out)
{
    assert(spec && spec->space && spec->ops && out);
    *out = NULL;
    gpo_run *r = calloc(1, sizeof *r);
    if (!r)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting a tuning run");
    r->spec = *spec;
    r->sc.def = spec->subject;
    r->sc.log = spec->log;
    r->start_ns = now(r);
    r->seconds = spec->search.max_seconds;
    r->best_ns = -1;
    r->best = r->runner = r->incumbent = -1;
    r->keyed = spec->cache && spec->key && spec->cache_mode != GPUOPT_CACHE_OFF;
    *out = r;
    return GPUOPT_OK;
}

/* The run's own space, made on first need (a cache hit needs none): the
 * spec's with the subject's limits added. */
static gpuopt_status own_space(gpo_run *r)
{
    if (r->space)
        return GPUOPT_OK;
    gpuopt_status st = gpo_space_clone(r->spec.space, &r->space);
    if (st == GPUOPT_OK && r->spec.ops->constrain)
        st = r->spec.ops->constrain(&r->sc, r->space);
    r->sc.space = r->space;
    return st;
}

void gpo_run_set_seconds(gpo_run *r, double seconds)
{
    r->start_ns = now(r);
    r->seconds = seconds > 0 ? seconds : 0;
}

static gpuopt_status setup(gpo_run *r)
{
    if (r->set_up)
        return GPUOPT_OK;
    gpuopt_status st = own_space(r);
    if (st == GPUOPT_OK)
        st = r->spec.ops->setup(&r->sc);
    r->set_up = st == GPUOPT_OK;
    return st;
}

void gpo_run_end(gpo_run *r)
{
    if (!r)
        return;
    gpo_cache_abandon(r->journal);
    if (r->set_up && r->spec.ops->teardown)
        r->spec.ops->teardown(&r->sc);
    gpo_search_destroy(r->search);
    if (r->space)
        gpo_space_unref(r->space);
    gpuopt_result_destroy(r->result);
    gpo_cache_hit_free(r->hit);
    cJSON_Delete(r->resume);
    free(r);
}

gpo_search *gpo_run_search(gpo_run *r)
{
    return r->search;
}

gpuopt_status gpo_run_space(gpo_run *r, const gpuopt_space **out)
{
    gpuopt_status st = own_space(r);
    *out = r->space;
    return st;
}

gpuopt_status gpo_run_fatal(const gpo_run *r)
{
    return r->fatal;
}

/* ---- one point -------------------------------------------------------------------- */

static int timed_out(const gpo_run *r, double wall_ns, gpo_eval *ev, const char *which)
{
    double limit = r->spec.timeout_s;
    if (limit <= 0 || wall_ns <= limit * 1e9)
        return 0;
    return gpo_say(1, ev->msg, sizeof ev->msg, "%s run took %.3f s, over the timeout of %g s",
                   which, wall_ns / 1e9, limit);
}

/* One run: its measurement in *ns, the wall time of the call in *wall. */
static int32_t run_once(gpo_run *r, gpo_prep *p, double *ns, double *wall, gpo_eval *ev)
{
    uint64_t t0 = gpo_now_ns();
    int32_t s = r->spec.ops->run(&r->sc, p, ns, ev);
    *wall = (double)(gpo_now_ns() - t0);
    if (s == GPO_FATAL)
        r->fatal = r->sc.fatal;
    return s;
}

void gpo_run_release(gpo_run *r, gpo_prep *p)
{
    if (p && r->spec.ops->release)
        r->spec.ops->release(&r->sc, p);
}

int32_t gpo_run_ready(gpo_run *r, const gpuopt_point *c, gpo_prep **p, double *ns, gpo_eval *ev)
{
    *p = NULL;
    if ((r->fatal = setup(r)) != GPUOPT_OK)
        return GPO_FATAL;
    double t = 0, wall = 0;
    int32_t s = r->spec.ops->prepare(&r->sc, c, p, ev);
    if (s == GPO_CAND_OK && (s = run_once(r, *p, &t, &wall, ev)) == GPO_CAND_OK) {
        /* The wall time beside the measurement shows what a runtime does
         * outside it on a first launch (PoCL generates code then). */
        gpo_log_debug(r->spec.log, "tuner: checked run: %.0f ns measured, %.0f ns wall", t, wall);
        if (timed_out(r, wall, ev, "the first"))
            s = GPO_CAND_TIMEOUT;
        else
            s = r->spec.ops->check(&r->sc, *p, ev);
    }
    if (s == GPO_FATAL)
        r->fatal = r->sc.fatal;
    if (s != GPO_CAND_OK) {
        gpo_run_release(r, *p);
        *p = NULL;
    } else if (ns) {
        *ns = t;
    }
    return s;
}

int32_t gpo_run_again(gpo_run *r, gpo_prep *p, gpo_eval *ev)
{
    double ns = 0, wall = 0;
    return run_once(r, p, &ns, &wall, ev);
}

/* Evaluates c: ready, then the timing controller with the probe rule
 * against best_ns (-1: none); `remaining` points (this one included)
 * share the time left when spec.repeat_share asks. 0, or -1 when the run
 * must stop (r->fatal). */
static int evaluate(gpo_run *r, const gpuopt_point *c, double best_ns, int32_t remaining,
                    gpo_eval *ev)
{
    eval_init(ev);
    gpo_prep *p = NULL;
    double first_ns = 0;
    int32_t s = gpo_run_ready(r, c, &p, &first_ns, ev);
    if (s == GPO_FATAL)
        return -1;
    if (s != GPO_CAND_OK) {
        ev->status = s;
        return 0;
    }
    gpo_timing_settings set = r->spec.timing;
    if (r->spec.repeat_share > 0 && r->seconds > 0)
        set.repeat_ms = left_ms(r) * r->spec.repeat_share / (remaining > 0 ? remaining : 1);
    gpo_timing tm;
    if ((r->fatal = gpo_timing_begin(&tm, &set, best_ns)) != GPUOPT_OK) {
        gpo_run_release(r, p);
        return -1;
    }
    /* The checked run is the first timed one; the probe says whether it
     * was a warm-up (measure/timing.h). */
    gpo_timing_first(&tm, first_ns);
    double slow_bound = EARLY_PRUNE_FACTOR * set.prune_ratio * best_ns;
    if (slow_bound < EARLY_PRUNE_MIN_NS)
        slow_bound = EARLY_PRUNE_MIN_NS;
    double slow[EARLY_PRUNE_RUNS];
    int nslow = 0, step;
    double ns = 0, wall = 0;
    s = GPO_CAND_OK;
    while ((step = gpo_timing_next(&tm)) != GPO_TIMING_DONE) {
        if ((s = run_once(r, p, &ns, &wall, ev)) != GPO_CAND_OK)
            break;
        if (timed_out(r, wall, ev, step == GPO_TIMING_WARMUP ? "a warm-up" : "a timed")) {
            s = GPO_CAND_TIMEOUT;
            break;
        }
        nslow = best_ns > 0 && set.prune_ratio > 0 && ns > slow_bound ? nslow + 1 : 0;
        if (nslow > 0)
            slow[nslow - 1] = ns;
        if (nslow == EARLY_PRUNE_RUNS) {
            gpo_stats_compute(slow, nslow, &ev->stats);
            gpo_snprintf(ev->msg, sizeof ev->msg,
                         "%d runs in a row took over %.0fx the best (%.0f ns; median %.0f ns): not "
                         "timed further",
                         EARLY_PRUNE_RUNS, ev->stats.median / best_ns, best_ns, ev->stats.median);
            s = GPO_CAND_PRUNED;
            break;
        }
        gpo_timing_record(&tm, ns);
    }
    if (step == GPO_TIMING_DONE) {
        /* min_runs >= 1: something was timed. */
        s = gpo_timing_finish(&tm, &ev->stats) == GPO_TIMED_PRUNED ? GPO_CAND_PRUNED : GPO_CAND_OK;
        if (s == GPO_CAND_PRUNED)
            gpo_snprintf(ev->msg, sizeof ev->msg,
                         "probed twice: the p20 of %d runs, %.0f ns, is over %gx the best "
                         "(%.0f ns): not timed further",
                         (int)ev->stats.count, gpo_stats_rank(&ev->stats), set.prune_ratio,
                         best_ns);
    }
    gpo_log_debug(r->spec.log, "tuner: first run %.0f ns: %s", first_ns,
                  tm.first == GPO_FIRST_TIMED    ? "timed"
                  : tm.first == GPO_FIRST_WARMUP ? "the warm-up (slower than the probe)"
                                                 : "no verdict (stopped before the probe)");
    gpo_timing_free(&tm);
    gpo_run_release(r, p);
    if (s == GPO_FATAL)
        return -1;
    if (s != GPO_CAND_OK && s != GPO_CAND_PRUNED)
        memset(&ev->stats, 0, sizeof ev->stats);
    ev->status = s;
    return 0;
}

/* Rounds for re-timing k slots whose runs take about `per_round` ns in
 * all: as many as the time left (or, without a time budget, the timing's
 * repeat_ms) pays for, within bounds, plus the warm-up round. */
static int32_t retime_rounds(const gpo_run *r, double per_round)
{
    double allowed_ms = r->seconds > 0 ? left_ms(r) : r->spec.timing.repeat_ms;
    double want = per_round > 0 ? allowed_ms * 1e6 / per_round : RETIME_MAX_ROUNDS;
    int32_t rounds = want < RETIME_MIN_ROUNDS   ? RETIME_MIN_ROUNDS
                     : want > RETIME_MAX_ROUNDS ? RETIME_MAX_ROUNDS
                                                : (int32_t)want;
    return rounds + 1;
}

/* Slot 0 (the incumbent) unless another beats it beyond noise; among those
 * that do, the lowest ranking statistic. Slots without statistics cannot win; without
 * slot 0, the fastest standing. -1 when none stands. */
static int32_t pick(const gpo_stats *stats, const int *alive, int32_t k, double floor)
{
    int32_t win = -1;
    if (alive[0] && stats[0].count > 0) {
        win = 0;
        for (int32_t i = 1; i < k; i++)
            if (alive[i] && gpo_stats_beats(&stats[0], &stats[i], floor) &&
                (win == 0 || gpo_stats_rank(&stats[i]) < gpo_stats_rank(&stats[win])))
                win = i;
        return win;
    }
    for (int32_t i = 1; i < k; i++)
        if (alive[i] && stats[i].count > 0 &&
            (win < 0 || gpo_stats_rank(&stats[i]) < gpo_stats_rank(&stats[win])))
            win = i;
    return win;
}

/* Re-times k prepared points side by side (slot 0 the incumbent);
 * stats[k] receive each slot's statistics. Returns the winning slot, or
 * -1 (r->fatal set when a run failed fatally; a point whose run fails here
 * loses). */
static int32_t retime(gpo_run *r, gpo_prep **preps, int32_t k, double per_round, gpo_stats *stats)
{
    assert(k >= 1 && k <= MAX_SLOTS);
    for (int32_t i = 0; i < k; i++)
        memset(&stats[i], 0, sizeof stats[i]);
    gpo_retime rt;
    if ((r->fatal = gpo_retime_begin(&rt, k, retime_rounds(r, per_round))) != GPUOPT_OK)
        return -1;
    int alive[MAX_SLOTS];
    for (int32_t i = 0; i < k; i++)
        alive[i] = preps[i] != NULL;
    int32_t which;
    gpo_eval ev;
    while (gpo_retime_next(&rt, &which)) {
        double ns = NAN, wall = 0;
        if (alive[which]) {
            eval_init(&ev);
            int32_t s = run_once(r, preps[which], &ns, &wall, &ev);
            if (s == GPO_FATAL) {
                gpo_retime_free(&rt);
                return -1;
            }
            if (s != GPO_CAND_OK || timed_out(r, wall, &ev, "a re-timing")) {
                alive[which] = 0;
                ns = NAN;
                gpo_log_warn(r->spec.log, "tuner: a finalist failed while re-timed: %s", ev.msg);
            }
        }
        gpo_retime_record(&rt, which, ns);
    }
    gpo_retime_pick(&rt, r->spec.floor, stats);
    gpo_retime_free(&rt);
    return pick(stats, alive, k, r->spec.floor);
}

/* ---- recording ------------------------------------------------------------------------ */

/* Result entry i, written at once, one line: a killed run loses nothing
 * finished. */
static void journal(gpo_run *r, const cJSON *params, int32_t i)
{
    if (!r->journal || !params)
        return;
    gpo_cache_stats cs;
    gpo_result_cache_stats(r->result, i, &cs);
    gpo_cache_add_candidate(r->journal, params, &cs);
}

static void progress(gpo_run *r)
{
    if (!r->spec.progress)
        return;
    int32_t done = gpo_search_evaluations(r->search);
    int32_t total = gpo_search_planned(r->search);
    double elapsed = (double)(now(r) - r->start_ns) / 1e9, left = -1;
    if (done > 0 && total >= done)
        left = elapsed / done * (total - done);
    if (r->seconds > 0) {
        double budget_left = left_ms(r) / 1e3;
        left = left < 0 || budget_left < left ? budget_left : left;
    }
    r->spec.progress(done, total, gpo_search_best_value(r->search), left, r->spec.progress_user);
}

static void log_point(const gpo_run *r, const gpo_eval *ev)
{
    int timed = ev->status == GPO_CAND_OK || ev->status == GPO_CAND_PRUNED;
    gpo_log_debug(r->spec.log, "tuner: candidate %d: %s, median %.0f ns%s%s",
                  (int)gpo_result_count_of(r->result) - 1, gpo_cache_status_name(ev->status),
                  timed ? ev->stats.median : -1.0, ev->msg[0] ? ": " : "", ev->msg);
}

gpuopt_status gpo_run_record(gpo_run *r, const gpuopt_point *c, const gpo_eval *ev)
{
    int timed = ev->status == GPO_CAND_OK || ev->status == GPO_CAND_PRUNED;
    if ((r->fatal = gpo_search_report(r->search, c, ev->status,
                                      timed ? gpo_stats_rank(&ev->stats) : 0)) != GPUOPT_OK)
        return r->fatal;
    int32_t i = gpo_result_add(r->result, gpo_point_indices(c), ev, 0);
    if (i < 0)
        return r->fatal = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory recording a candidate");
    cJSON *params = gpo_point_params_json(c);
    journal(r, params, i);
    cJSON_Delete(params);
    r->best_ns = gpo_search_best_value(r->search);
    log_point(r, ev);
    progress(r);
    return GPUOPT_OK;
}

/* A point known before the search starts (resumed, or the incumbent
 * measured now): into the search, the result and the journal. -1 when it
 * does not fit (another space's, a duplicate); -2 on allocation failure. */
static int preload(gpo_run *r, const uint32_t *idx, const gpo_eval *ev, int resumed,
                   const cJSON *params)
{
    if (!gpo_space_is_legal(r->space, idx) ||
        gpo_search_preload(r->search, idx, ev->status,
                           ev->stats.count ? gpo_stats_rank(&ev->stats) : 0) != GPUOPT_OK)
        return -1;
    int32_t i = gpo_result_add(r->result, idx, ev, resumed);
    if (i < 0)
        return -2;
    journal(r, params, i);
    r->best_ns = gpo_search_best_value(r->search);
    return i;
}

/* ---- the cache ------------------------------------------------------------------------ */

static double num(const cJSON *o, const char *name, double fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : fallback;
}

/* A stored point ({"params", "status", "runs", "median_ns", ...}) as an
 * evaluation with its index vector in the run's space; -1 when it does
 * not read or does not map. */
static int stored(const gpo_run *r, const cJSON *o, uint32_t *idx, gpo_eval *ev)
{
    eval_init(ev);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "status");
    ev->status = cJSON_IsString(s) ? gpo_cache_status_parse(s->valuestring) : -1;
    if (ev->status < 0 ||
        gpo_space_params_idx(r->spec.space, cJSON_GetObjectItemCaseSensitive(o, "params"), idx) !=
            0)
        return -1;
    ev->compile_ms = num(o, "compile_ms", -1);
    double median = num(o, "median_ns", -1), runs = num(o, "runs", 0);
    if ((ev->status == GPO_CAND_OK || ev->status == GPO_CAND_PRUNED) && !(median >= 0))
        return -1;
    if (median >= 0) {
        ev->stats.count = runs >= 1 && runs < 1e9 ? (int32_t)runs : 1;
        ev->stats.median = median;
        ev->stats.min = num(o, "min_ns", median);
        ev->stats.p20 = num(o, "p20_ns", median);
        ev->stats.p80 = num(o, "p80_ns", median);
        ev->stats.max = ev->stats.p80;
        ev->stats.mean = median;
    }
    return 0;
}

/* The hit's payload, taken out of its record (the hit is ours, freed soon
 * after): no copy. */
static cJSON *take_payload(gpo_cache_hit *hit)
{
    cJSON *p = cJSON_DetachItemFromObjectCaseSensitive(hit->record, "payload");
    hit->payload = NULL;
    if (cJSON_IsObject(p))
        return p;
    cJSON_Delete(p);
    return NULL;
}

static gpuopt_result *new_result(gpo_run *r)
{
    gpuopt_result *res = gpo_result_new(&r->spec.info, r->spec.space);
    if (!res)
        gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for a tuning result");
    return res;
}

/* The stored winner and runner-up as the answer; NULL with *st when the
 * record cannot serve (GPUOPT_ERR_NOT_FOUND: its winner does not fit). */
static gpuopt_result *from_hit(gpo_run *r, gpo_cache_hit *hit, gpuopt_status *st)
{
    uint32_t idx[GPO_SPACE_MAX_PARAMS + 1];
    gpo_eval ev;
    *st = GPUOPT_OK;
    /* A tune that found no valid candidate (every one failed, faulted or
     * was wrong) stays stored, so 'gpuopt cache show' tells what became of
     * each, but never answers: whatever made them fail may be gone. */
    if (!hit->best) {
        gpo_log_info(r->spec.log, "tuner: the cached tune of this key found no valid candidate: "
                                  "tuning again");
        *st = GPUOPT_ERR_NOT_FOUND;
        return NULL;
    }
    if (stored(r, hit->best, idx, &ev) != 0 || ev.status != GPO_CAND_OK) {
        *st = GPUOPT_ERR_NOT_FOUND;
        return NULL;
    }
    gpuopt_result *res = new_result(r);
    if (!res)
        goto nomem;
    if (gpo_result_add(res, idx, &ev, 0) < 0)
        goto nomem;
    gpo_result_set_best(res, 0);
    if (hit->runner_up && stored(r, hit->runner_up, idx, &ev) == 0 && ev.status == GPO_CAND_OK) {
        if (gpo_result_add(res, idx, &ev, 0) < 0)
            goto nomem;
        gpo_result_set_runner(res, 1);
    }
    gpo_result_set_record(res, hit->record, "cached");
    gpo_result_set_origin(res, GPUOPT_ORIGIN_CACHE_HIT, hit->time, hit->changed, take_payload(hit));
    return res;
nomem:
    gpuopt_result_destroy(res);
    *st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory answering from the cache");
    return NULL;
}

int gpo_run_lookup(gpo_run *r, gpuopt_result **out)
{
    if (out)
        *out = NULL;
    if (!r->keyed || r->spec.cache_mode != GPUOPT_CACHE_USE)
        return GPO_RUN_MISS;
    gpo_cache_hit *hit = NULL;
    gpuopt_status st = gpo_cache_lookup(r->spec.cache, r->spec.key, r->spec.soft, &hit);
    if (st == GPUOPT_ERR_NO_MEMORY)
        return -st;
    if (st != GPUOPT_OK)
        return GPO_RUN_MISS;
    if (!hit->complete) {
        /* A budget cut it short: resume it (measure what is missing). */
        r->resume_finished = 1;
        gpo_cache_hit_free(hit);
        return GPO_RUN_MISS;
    }
    if (hit->changed) {
        int verify = hit->best && !r->spec.remeasure_changed;
        if (verify)
            r->hit = hit;
        else
            gpo_cache_hit_free(hit);
        return verify ? GPO_RUN_CHANGED : GPO_RUN_MISS;
    }
    if (!out) {
        r->hit = hit; /* the caller reads the record itself (gpo_run_hit) */
        return GPO_RUN_HIT;
    }
    *out = from_hit(r, hit, &st);
    gpo_cache_hit_free(hit);
    if (st == GPUOPT_ERR_NO_MEMORY)
        return -st;
    /* A winner that no longer maps is measured again. */
    return *out ? GPO_RUN_HIT : GPO_RUN_MISS;
}

const gpo_cache_hit *gpo_run_hit(const gpo_run *r)
{
    return r->hit;
}

/* The stored point `o` as a point of the run's space, legal there; NULL
 * when it does not map (or no memory: r->fatal). */
static gpuopt_point *stored_point(gpo_run *r, const cJSON *o)
{
    uint32_t idx[GPO_SPACE_MAX_PARAMS + 1];
    gpuopt_point *c = NULL;
    gpo_eval ev;
    if (!o || stored(r, o, idx, &ev) != 0 || !gpo_space_is_legal(r->space, idx))
        return NULL;
    r->fatal = gpo_point_create(r->space, idx, &c);
    return c;
}

gpuopt_status gpo_run_verify(gpo_run *r, gpuopt_result **out)
{
    const gpo_cache_hit *hit = r->hit;
    assert(hit && hit->best);
    gpuopt_point *cfg[2] = {NULL, NULL};
    gpo_prep *prep[2] = {NULL, NULL};
    gpo_stats stats[2];
    gpo_eval ev[2];
    int32_t k = 0, win = -1;
    gpuopt_status st = GPUOPT_OK;
    *out = NULL;
    memset(stats, 0, sizeof stats);
    char changed[80];
    gpo_cache_soft_words(hit->changed, changed, sizeof changed);
    gpo_log_info(r->spec.log,
                 "tuner: cached result found, but the %s changed: re-timing the stored winner "
                 "and runner-up",
                 changed);
    if ((st = own_space(r)) != GPUOPT_OK)
        goto out;
    if (!(cfg[0] = stored_point(r, hit->best))) {
        st = r->fatal;
        goto verdict;
    }
    cfg[1] = stored_point(r, hit->runner_up);
    if ((st = r->fatal) != GPUOPT_OK || (st = setup(r)) != GPUOPT_OK)
        goto out;
    r->best_ns = num(hit->best, "min_ns", num(hit->best, "median_ns", -1));
    double per_round = 0;
    for (int i = 0; i < 2; i++) {
        eval_init(&ev[i]);
        if (!cfg[i])
            continue;
        int32_t s = gpo_run_ready(r, cfg[i], &prep[i], NULL, &ev[i]);
        if (s == GPO_FATAL) {
            st = r->fatal;
            goto out;
        }
        if (s != GPO_CAND_OK) {
            gpo_log_info(r->spec.log, "tuner: the stored %s fails now: %s",
                         i ? "runner-up" : "winner", ev[i].msg);
            if (i == 0)
                goto verdict;
        }
        per_round += num(i ? hit->runner_up : hit->best, "median_ns", 0);
        ev[i].status = s;
    }
    k = prep[1] ? 2 : 1;
    win = retime(r, prep, k, per_round, stats);
    if (win < 0 && r->fatal != GPUOPT_OK) {
        st = r->fatal;
        goto out;
    }
verdict:;
    int good = win == 0;
    if (gpo_cache_record_verify(r->spec.cache, r->spec.key, r->spec.soft, good,
                                stats[0].count ? stats[0].median : -1,
                                k > 1 && stats[1].count ? stats[1].median : -1) != GPUOPT_OK)
        gpo_log_warn(r->spec.log, "tuner: verification not recorded: %s", gpo_detail_get());
    if (!good) {
        gpo_log_info(r->spec.log, "tuner: the stored winner did not hold: tuning again");
        st = GPUOPT_ERR_NOT_FOUND;
        goto out;
    }
    gpuopt_result *res = new_result(r);
    if (!res) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory answering from the cache");
        goto out;
    }
    gpo_result_set_origin(res, GPUOPT_ORIGIN_CACHE_VERIFIED, hit->time, hit->changed,
                          take_payload(r->hit));
    gpo_result_set_validated(res, r->sc.validated);
    gpo_result_set_record(res, hit->record, "cached, re-verified");
    for (int32_t i = 0; i < k; i++) {
        ev[i].stats = stats[i];
        gpo_snprintf(ev[i].msg, sizeof ev[i].msg, "re-timed after a change of the %s", changed);
        if (gpo_result_add(res, gpo_point_indices(cfg[i]), &ev[i], 0) < 0 ||
            gpo_result_add_final(res, i, &stats[i]) != 0) {
            gpuopt_result_destroy(res);
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory answering from the cache");
            goto out;
        }
    }
    gpo_result_set_best(res, 0);
    gpo_result_set_runner(res, k > 1 ? 1 : -1);
    *out = res;
out:
    for (int i = 0; i < 2; i++) {
        gpo_run_release(r, prep[i]);
        gpo_point_destroy(cfg[i]);
    }
    return st;
}

/* Reads the points of an unfinished tune of this key (a run that was
 * killed, or a finished one a budget cut short) before this run's journal
 * begins. */
static void resume_fetch(gpo_run *r)
{
    cJSON *arr = NULL;
    int finished = 0;
    if (gpo_cache_candidates(r->spec.cache, r->spec.key, &arr, &finished) != GPUOPT_OK)
        return; /* nothing stored: a fresh start */
    if (finished && !r->resume_finished) {
        cJSON_Delete(arr);
        return;
    }
    r->resume = arr;
}

/* Once this run's journal has begun and before the first point: the
 * fetched points into the search and the result, journaled again under
 * this run's tune (so a run killed again still resumes from all of them). */
static gpuopt_status resume_apply(gpo_run *r)
{
    if (!r->resume)
        return GPUOPT_OK;
    uint32_t idx[GPO_SPACE_MAX_PARAMS + 1];
    int32_t used = 0, skipped = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, r->resume)
    {
        gpo_eval ev;
        int i = stored(r, c, idx, &ev) == 0
                    ? preload(r, idx, &ev, 1, cJSON_GetObjectItemCaseSensitive(c, "params"))
                    : -1;
        if (i == -2)
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory resuming a run");
        skipped += i < 0; /* another space's, a duplicate, or unreadable */
        used += i >= 0;
    }
    gpo_log_info(r->spec.log, "tuner: resumed %d candidates of an unfinished run (%d skipped)",
                 (int)used, (int)skipped);
    cJSON_Delete(r->resume);
    r->resume = NULL;
    return GPUOPT_OK;
}

/* ---- measuring ------------------------------------------------------------------------ */

gpuopt_status gpo_run_start(gpo_run *r)
{
    r->best_ns = -1; /* a verification's stored figure is not this search's */
    gpuopt_status st = setup(r);
    /* The search gets what is left of the budget once the subject is set up
     * (a session opened, a reference run). */
    gpo_search_settings set = r->spec.search;
    set.max_seconds = r->seconds > 0 && !r->spec.measure_all ? fmax(left_ms(r) / 1e3, 1e-9) : 0;
    if (st == GPUOPT_OK)
        st = gpo_search_create(r->space, &set, &r->search);
    if (st != GPUOPT_OK)
        return st;
    if (!(r->result = new_result(r)))
        return GPUOPT_ERR_NO_MEMORY;
    gpo_result_set_validated(r->result, r->sc.validated);
    if (r->keyed) {
        const gpo_search_settings *s = &r->spec.search;
        gpo_cache_search cs = {gpo_strategy_name(gpo_search_strategy(r->search)), s->seed,
                               s->max_evaluations, r->seconds, s->max_failures};
        resume_fetch(r);
        if (gpo_cache_begin(r->spec.cache, r->spec.key, r->spec.soft, &cs, &r->journal) !=
            GPUOPT_OK)
            gpo_log_warn(r->spec.log, "tuner: the run is not journaled: %s", gpo_detail_get());
    }
    return resume_apply(r);
}

/* The incumbent, measured before the search whatever the budget (unless
 * resumed), into the search as known. */
static gpuopt_status measure_incumbent(gpo_run *r)
{
    const uint32_t *idx = r->spec.incumbent;
    gpuopt_point *c = NULL;
    if (!idx || !gpo_space_is_legal(r->space, idx))
        return GPUOPT_OK;
    gpuopt_status st = gpo_point_create(r->space, idx, &c);
    if (st != GPUOPT_OK)
        return st;
    r->incumbent = gpo_result_index_of(r->result, c);
    if (r->incumbent < 0) {
        gpo_eval ev;
        int32_t planned = gpo_search_planned(r->search);
        cJSON *params = gpo_point_params_json(c);
        if (!params)
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory measuring the incumbent");
        else if (evaluate(r, c, r->best_ns, planned > 0 ? planned : 1, &ev) != 0)
            st = r->fatal;
        else if ((r->incumbent = preload(r, idx, &ev, 0, params)) == -2)
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory measuring the incumbent");
        else if (r->incumbent >= 0)
            log_point(r, &ev);
        cJSON_Delete(params);
    }
    gpo_point_destroy(c);
    if (r->incumbent >= 0 && gpo_result_status(r->result, r->incumbent) != GPO_CAND_OK)
        r->incumbent = -1; /* beyond a limit, or failed: no incumbent to keep */
    return st;
}

static int search_loop(gpo_run *r)
{
    int ahead = r->spec.ops->prefetch ? r->sc.ahead : 0;
    const gpuopt_point *queue[8];
    int qn = 0, over = 0;
    assert(ahead < 8);
    for (;;) {
        while (!over && qn < 1 + ahead) {
            const gpuopt_point *c = NULL;
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
                r->spec.ops->prefetch(&r->sc, c);
        }
        if (qn == 0)
            break;
        /* Out of time or failures: what was handed out ahead is dropped. */
        const char *stop = gpo_search_stop_reason(r->search);
        if (over && (!strcmp(stop, "time budget") || !strcmp(stop, "failure budget")))
            break;
        const gpuopt_point *c = queue[0];
        memmove(queue, queue + 1, (size_t)--qn * sizeof queue[0]);
        /* Points left, this one included (the planned count excludes
         * preloads; this one is handed out already). */
        int32_t left = gpo_search_planned(r->search) - gpo_search_evaluations(r->search) + 1 + qn;
        gpo_eval ev;
        if (evaluate(r, c, gpo_search_best_value(r->search), left, &ev) != 0 ||
            gpo_run_record(r, c, &ev) != GPUOPT_OK)
            return -1;
    }
    return 0;
}

/* The finalists' result indices: the incumbent (or the search's best) in
 * slot 0, then the fastest others. */
static int32_t finalists(gpo_run *r, int32_t *slot)
{
    const gpuopt_point *top[MAX_SLOTS];
    int32_t want = r->spec.finalists < 1               ? 1
                   : r->spec.finalists > MAX_SLOTS - 1 ? MAX_SLOTS - 1
                                                       : r->spec.finalists;
    int32_t k = gpo_search_top(r->search, want + 1, top, NULL), n = 0;
    if (r->incumbent >= 0)
        slot[n++] = r->incumbent;
    for (int32_t i = 0; i < k && n < want; i++) {
        int32_t ix = gpo_result_index_of(r->result, top[i]);
        if (ix >= 0 && ix != r->incumbent)
            slot[n++] = ix;
    }
    return n;
}

/* 1 when point a comes before point b in the space's order (its index
 * vector, first parameter first). */
static int space_before(const gpuopt_point *a, const gpuopt_point *b)
{
    const uint32_t *x = gpo_point_indices(a), *y = gpo_point_indices(b);
    for (int32_t p = 0; p < gpo_space_param_count(gpo_point_space(a)); p++)
        if (x[p] != y[p])
            return x[p] < y[p];
    return 0;
}

/* Ties: a finalist whose p20 falls within the winner's own p20-p80 range
 * (or the floor above its p20) is as fast as the winner as far as the
 * winner's runs can tell, and which of them ranked first is the noise's
 * choice: five exhaustive SGEMM searches on an idle PoCL crowned five
 * configurations (docs/benchmarks.md, "An exhaustive search's cost and
 * winner"). The first of them in the space's order wins, so searches that
 * meet the same ties agree. The band is the winner's spread, not the
 * pair's (gpo_stats_beats): a slow finalist's wide spread on a busy
 * machine must not tie it with one many times faster. An incumbent (an
 * earlier decision) keeps its place instead: it is what a tie would
 * change. */
static int32_t break_ties(const gpo_run *r, const int32_t *slot, const gpo_stats *stats, int32_t n,
                          int32_t win)
{
    if (r->incumbent >= 0)
        return win;
    double w = gpo_stats_rank(&stats[win]), band = stats[win].p80 - stats[win].p20;
    if (band < r->spec.floor * w)
        band = r->spec.floor * w;
    int32_t pick = win;
    for (int32_t j = 0; j < n; j++)
        if (j != win && stats[j].count > 0 && gpo_stats_rank(&stats[j]) - w <= band &&
            space_before(gpo_result_point(r->result, slot[j]),
                         gpo_result_point(r->result, slot[pick])))
            pick = j;
    return pick;
}

/* The final decision: the finalists re-timed side by side (or, with the
 * time budget spent, judged by the search's figures), ties broken by the
 * space's order, r->best and r->runner set. 0, or -1 on a fatal failure. */
static int decide(gpo_run *r)
{
    int32_t slot[MAX_SLOTS], n = finalists(r, slot), win = -1;
    gpo_prep *prep[MAX_SLOTS] = {NULL};
    gpo_stats stats[MAX_SLOTS];
    int alive[MAX_SLOTS];
    r->best = r->runner = -1;
    if (n == 0)
        return 0;
    if (n == 1 || budget_spent(r)) {
        for (int32_t i = 0; i < n; i++) {
            stats[i] = *gpo_result_stats(r->result, slot[i]);
            alive[i] = 1;
        }
        win = pick(stats, alive, n, r->spec.floor);
    } else {
        /* Ready again (built: the program cache has them; checked again). */
        double per_round = 0;
        int32_t m = 0;
        for (int32_t i = 0; i < n; i++) {
            gpo_eval ev;
            eval_init(&ev);
            int32_t s = gpo_run_ready(r, gpo_result_point(r->result, slot[i]), &prep[m], NULL, &ev);
            if (s == GPO_FATAL) {
                for (int32_t j = 0; j < m; j++)
                    gpo_run_release(r, prep[j]);
                return -1;
            }
            if (s != GPO_CAND_OK) {
                gpo_log_warn(r->spec.log, "tuner: a finalist failed when run again: %s", ev.msg);
                continue;
            }
            per_round += gpo_result_stats(r->result, slot[i])->median;
            slot[m++] = slot[i];
        }
        n = m;
        win = n ? retime(r, prep, n, per_round, stats) : -1;
        for (int32_t j = 0; j < n; j++)
            gpo_run_release(r, prep[j]);
        if (win < 0 && r->fatal != GPUOPT_OK)
            return -1;
        for (int32_t j = 0; j < n; j++)
            if (gpo_result_add_final(r->result, slot[j], &stats[j]) != 0) {
                r->fatal = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory recording finalists");
                return -1;
            }
        if (win < 0 && n)
            win = 0; /* every finalist failed now: the search's figures stand */
        if (win > 0)
            gpo_log_info(r->spec.log,
                         "tuner: the re-timing changed the winner (%.0f ns beat the incumbent's "
                         "%.0f ns beyond noise)",
                         stats[win].median, stats[0].median);
    }
    if (win < 0)
        return 0;
    int32_t tie = break_ties(r, slot, stats, n, win);
    if (tie != win)
        gpo_log_debug(r->spec.log,
                      "tuner: finalists within noise of each other (%.0f and %.0f ns): the "
                      "first in the space's order wins",
                      gpo_stats_rank(&stats[tie]), gpo_stats_rank(&stats[win]));
    win = tie;
    int32_t runner = -1;
    for (int32_t j = 0; j < n; j++)
        if (j != win && stats[j].count > 0 &&
            (runner < 0 || gpo_stats_rank(&stats[j]) < gpo_stats_rank(&stats[runner])))
            runner = j;
    r->best = slot[win];
    r->runner = runner >= 0 ? slot[runner] : -1;
    return 0;
}

gpuopt_status gpo_run_tune(gpo_run *r, const gpuopt_result **res)
{
    gpuopt_status st = gpo_run_start(r);
    if (st == GPUOPT_OK)
        st = measure_incumbent(r);
    if (st != GPUOPT_OK)
        return st;
    if (search_loop(r) != 0 || decide(r) != 0)
        return r->fatal;
    gpo_result_set_best(r->result, r->best);
    gpo_result_set_runner(r->result, r->runner);
    gpo_result_set_search(r->result, r->search, (double)(now(r) - r->start_ns) / 1e9);
    *res = r->result;
    return GPUOPT_OK;
}

/* ---- the record ------------------------------------------------------------------------ */

static gpuopt_status write_record(gpo_run *r, int32_t best, int32_t runner, const cJSON *payload)
{
    if (!r->journal)
        return GPUOPT_OK;
    gpo_cache_stats bs, rs;
    cJSON *bp = NULL, *rp = NULL;
    if (best >= 0) {
        gpo_result_cache_stats(r->result, best, &bs);
        bp = gpo_point_params_json(gpo_result_point(r->result, best));
    }
    if (runner >= 0 && bp) {
        gpo_result_cache_stats(r->result, runner, &rs);
        rp = gpo_point_params_json(gpo_result_point(r->result, runner));
    }
    const char *stop = gpo_search_stop_reason(r->search);
    int complete = !strcmp(stop, "space exhausted") || !strcmp(stop, "evaluation budget");
    gpuopt_status st = GPUOPT_OK;
    if (best < 0 || bp)
        st = gpo_cache_finish(r->journal, bp, bp ? &bs : NULL, rp, rp ? &rs : NULL, complete,
                              (double)(now(r) - r->start_ns) / 1e9, payload);
    else
        gpo_cache_abandon(r->journal);
    r->journal = NULL;
    cJSON_Delete(bp);
    cJSON_Delete(rp);
    return st == GPUOPT_ERR_NO_MEMORY ? st : GPUOPT_OK;
}

gpuopt_status gpo_run_finish(gpo_run *r, const cJSON *payload, gpuopt_result **out)
{
    gpuopt_status st = write_record(r, r->best, r->runner, payload);
    *out = r->result;
    r->result = NULL;
    return st;
}

gpuopt_status gpo_run_close(gpo_run *r, const gpuopt_point *best, const gpuopt_point *runner)
{
    return write_record(r, best ? gpo_result_index_of(r->result, best) : -1,
                        runner ? gpo_result_index_of(r->result, runner) : -1, NULL);
}
