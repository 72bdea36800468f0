/* One candidate from configuration to status and statistics, whatever the
 * subject: prepare (build), one run, check against the reference, then the
 * timing controller (warm-up, probe, repeats); and the final side-by-side
 * re-timing of the best few.
 *
 * Rules:
 * - no time counts before the candidate's output was checked: the first
 *   run is the checked one, untimed (it also pays first-launch costs such
 *   as PoCL's per-work-group-size code generation);
 * - TIMEOUT: any single run (the first included) whose wall time, reset
 *   included, passes the tuner's timeout ends the candidate at once: wall
 *   time, not the measurement, since a callback's own measurement may
 *   cover only part of the call. A run cannot be interrupted, so the check
 *   follows each run;
 * - PRUNED: the controller's probe rule (probe median over prune_ratio x
 *   the best), and, before it, two runs in a row each over 10 x that bound
 *   and over 1 ms (a candidate 20x slower than the best is not worth the
 *   rest of its warm-up and probe). Two, because one sample on a shared
 *   machine can be a scheduling hiccup; over 1 ms, because below that
 *   the runs it saves cost nothing worth the risk;
 * - a PRUNED or failed candidate is released at once; nothing of it is
 *   kept but its statistics and message. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tune/tuner.h"

#define EARLY_PRUNE_FACTOR 10.0
#define EARLY_PRUNE_MIN_NS 1e6
#define EARLY_PRUNE_RUNS 2
#define RETIME_MIN_ROUNDS 5
#define RETIME_MAX_ROUNDS 30

static void eval_init(gpo_eval *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->status = GPO_CAND_OK;
    ev->compile_ms = -1;
}

static int timed_out(const gpo_trun *r, double wall_ns, gpo_eval *ev, const char *which)
{
    double limit = r->t->timeout_s;
    if (limit <= 0 || wall_ns <= limit * 1e9)
        return 0;
    gpo_snprintf(ev->msg, sizeof ev->msg, "%s run took %.3f s, over the timeout of %g s", which,
                 wall_ns / 1e9, limit);
    return 1;
}

int32_t gpo_eval_run(gpo_trun *r, gpo_prep *p, double *ns, double *wall_ns, gpo_eval *ev)
{
    uint64_t t0 = gpo_now_ns();
    int32_t s = r->ops->run(r, p, ns, ev);
    *wall_ns = (double)(gpo_now_ns() - t0);
    return s;
}

int32_t gpo_eval_ready(gpo_trun *r, const gpuopt_config *c, gpo_prep **p, gpo_eval *ev)
{
    *p = NULL;
    int32_t s = r->ops->prepare(r, c, p, ev);
    if (s != GPO_CAND_OK)
        return s;
    double ns = 0, wall = 0;
    if ((s = gpo_eval_run(r, *p, &ns, &wall, ev)) == GPO_CAND_OK) {
        if (timed_out(r, wall, ev, "the first"))
            s = GPO_CAND_TIMEOUT;
        else
            s = r->ops->check(r, *p, ev);
    }
    if (s != GPO_CAND_OK) {
        r->ops->release(r, *p);
        *p = NULL;
    }
    return s;
}

int gpo_eval_candidate(gpo_trun *r, const gpuopt_config *c, double best_ns, gpo_eval *ev)
{
    eval_init(ev);
    gpo_prep *p = NULL;
    int32_t s = gpo_eval_ready(r, c, &p, ev);
    if (s == GPO_FATAL)
        return -1;
    if (s != GPO_CAND_OK) {
        ev->status = s;
        return 0;
    }
    gpo_timing tm;
    if ((r->fatal = gpo_timing_begin(&tm, &r->t->timing, best_ns)) != GPUOPT_OK) {
        r->ops->release(r, p);
        return -1;
    }
    const gpo_timing_settings *set = &r->t->timing;
    double slow_bound = EARLY_PRUNE_FACTOR * set->prune_ratio * best_ns;
    if (slow_bound < EARLY_PRUNE_MIN_NS)
        slow_bound = EARLY_PRUNE_MIN_NS;
    double slow[EARLY_PRUNE_RUNS];
    int nslow = 0, step;
    double ns = 0, wall = 0;
    s = GPO_CAND_OK;
    while ((step = gpo_timing_next(&tm)) != GPO_TIMING_DONE) {
        if ((s = gpo_eval_run(r, p, &ns, &wall, ev)) != GPO_CAND_OK)
            break;
        if (timed_out(r, wall, ev, step == GPO_TIMING_WARMUP ? "a warm-up" : "a timed")) {
            s = GPO_CAND_TIMEOUT;
            break;
        }
        nslow = best_ns > 0 && set->prune_ratio > 0 && ns > slow_bound ? nslow + 1 : 0;
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
        s = gpo_timing_finish(&tm, &ev->stats);
        s = s == GPO_TIMED_PRUNED ? GPO_CAND_PRUNED : s == GPO_TIMED_OK ? GPO_CAND_OK : -1;
        if (s < 0) {
            /* Nothing timed (max_runs reached during the warm-up cannot
             * happen: min_runs >= 1); treat as a failed run. */
            s = GPO_CAND_LAUNCH_FAILED;
            gpo_snprintf(ev->msg, sizeof ev->msg, "no timed run");
        } else if (s == GPO_CAND_PRUNED) {
            gpo_snprintf(ev->msg, sizeof ev->msg,
                         "probe median %.0f ns is over %gx the best (%.0f ns): not timed further",
                         ev->stats.median, set->prune_ratio, best_ns);
        }
    }
    if (s == GPO_FATAL) {
        gpo_timing_free(&tm);
        r->ops->release(r, p);
        return -1;
    }
    if (s != GPO_CAND_OK && s != GPO_CAND_PRUNED)
        memset(&ev->stats, 0, sizeof ev->stats);
    ev->status = s;
    gpo_timing_free(&tm);
    r->ops->release(r, p);
    return 0;
}

int32_t gpo_eval_retime(gpo_trun *r, gpo_prep **preps, int32_t k, gpo_stats *stats)
{
    if (k < 1 || k > 64)
        return -1;
    for (int32_t i = 0; i < k; i++)
        memset(&stats[i], 0, sizeof stats[i]);
    /* Enough rounds for about one repeat budget over all slots, bounded. */
    double per = r->best_ns > 0 ? r->best_ns : 1e6;
    double want = r->t->timing.repeat_ms * 1e6 / (per * (double)k);
    int32_t rounds = want < RETIME_MIN_ROUNDS   ? RETIME_MIN_ROUNDS
                     : want > RETIME_MAX_ROUNDS ? RETIME_MAX_ROUNDS
                                                : (int32_t)want;
    gpo_retime rt;
    if ((r->fatal = gpo_retime_begin(&rt, k, rounds + 1)) != GPUOPT_OK)
        return -1;
    int alive[64];
    for (int32_t i = 0; i < k; i++)
        alive[i] = preps[i] != NULL;
    int32_t which;
    gpo_eval ev;
    while (gpo_retime_next(&rt, &which)) {
        double ns = NAN, wall = 0;
        if (alive[which]) {
            eval_init(&ev);
            int32_t s = gpo_eval_run(r, preps[which], &ns, &wall, &ev);
            if (s == GPO_FATAL) {
                gpo_retime_free(&rt);
                return -1;
            }
            if (s != GPO_CAND_OK || timed_out(r, wall, &ev, "a re-timing")) {
                /* A candidate that fails now cannot win. */
                alive[which] = 0;
                ns = NAN;
                gpo_log_warn(&r->t->ctx->log, "tuner: a finalist failed while re-timed: %s",
                             ev.msg);
            }
        }
        gpo_retime_record(&rt, which, ns);
    }
    gpo_retime_pick(&rt, GPO_NOISE_FLOOR, stats);
    gpo_retime_free(&rt);
    /* gpo_retime_pick's rule among the candidates still standing: the
     * incumbent unless beaten beyond noise; without it, the fastest. */
    int32_t win = -1;
    if (alive[0] && stats[0].count > 0) {
        win = 0;
        for (int32_t i = 1; i < k; i++)
            if (alive[i] && gpo_stats_beats(&stats[0], &stats[i], GPO_NOISE_FLOOR) &&
                (win == 0 || stats[i].median < stats[win].median))
                win = i;
    } else {
        for (int32_t i = 1; i < k; i++)
            if (alive[i] && stats[i].count > 0 && (win < 0 || stats[i].median < stats[win].median))
                win = i;
    }
    return win;
}
