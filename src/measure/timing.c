/* Measuring a subject (timing.h). */
#include "measure/timing.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"

#define MAX_RUNS 100000
#define MAX_WARMUP_RUNS 10000

/* ---- timing controller --------------------------------------------------- */

void gpo_timing_defaults(gpo_timing_settings *t)
{
    assert(t);
    t->warmup_ms = 5;
    t->repeat_ms = 50;
    t->min_runs = 3;
    t->max_runs = 100;
    t->probe_runs = 3;
    t->prune_ratio = 2;
}

gpuopt_status gpo_timing_check(const gpo_timing_settings *t)
{
    assert(t);
    if (!(t->warmup_ms >= 0 && t->warmup_ms <= 3.6e6))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "timing: warmup_ms %g outside 0..3600000",
                        t->warmup_ms);
    if (!(t->repeat_ms >= 0 && t->repeat_ms <= 3.6e6))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "timing: repeat_ms %g outside 0..3600000",
                        t->repeat_ms);
    if (t->min_runs < 1 || t->min_runs > MAX_RUNS)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "timing: min_runs %d outside 1..%d",
                        (int)t->min_runs, MAX_RUNS);
    if (t->max_runs < t->min_runs || t->max_runs > MAX_RUNS)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "timing: max_runs %d outside min_runs (%d)..%d",
                        (int)t->max_runs, (int)t->min_runs, MAX_RUNS);
    if (t->probe_runs < 1 || t->probe_runs > t->max_runs)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "timing: probe_runs %d outside 1..max_runs",
                        (int)t->probe_runs);
    if (!(t->prune_ratio == 0 || (t->prune_ratio > 1 && t->prune_ratio < 1e6)))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "timing: prune_ratio %g must be 0 (off) or above 1", t->prune_ratio);
    return GPUOPT_OK;
}

gpuopt_status gpo_timing_begin(gpo_timing *t, const gpo_timing_settings *settings, double best_ns)
{
    assert(t && settings);
    memset(t, 0, sizeof *t);
    gpuopt_status st = gpo_timing_check(settings);
    if (st != GPUOPT_OK)
        return st;
    t->set = *settings;
    t->best_ns = isfinite(best_ns) && best_ns > 0 ? best_ns : -1;
    t->probe_at = settings->probe_runs;
    /* The samples (max_runs, and one more when the checked run counts as
     * timed) and, after them, as much room to sort them: once begun, a
     * measurement allocates nothing, so it never ends half-way. */
    t->samples = malloc(2 * ((size_t)settings->max_runs + 1) * sizeof *t->samples);
    if (!t->samples)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory timing a candidate");
    return GPUOPT_OK;
}

static double clean(double run_ns)
{
    if (isnan(run_ns) || run_ns < 0)
        return 0;
    return isinf(run_ns) ? 1e18 : run_ns; /* an endless run is slow, not free */
}

void gpo_timing_first(gpo_timing *t, double run_ns)
{
    assert(t && t->first == GPO_FIRST_NONE && t->n == 0 && t->warmups == 0);
    t->first = GPO_FIRST_PENDING;
    t->first_ns = clean(run_ns);
}

int gpo_timing_next(const gpo_timing *t)
{
    assert(t);
    if (!t->samples || t->pruned)
        return GPO_TIMING_DONE;
    if (t->first == GPO_FIRST_NONE &&
        (t->warmups < 1 ||
         (t->warm_ns < t->set.warmup_ms * 1e6 && t->warmups < MAX_WARMUP_RUNS && t->n == 0)))
        return GPO_TIMING_WARMUP;
    if (t->n >= t->set.max_runs)
        return GPO_TIMING_DONE;
    if (t->n >= t->set.min_runs && t->probed >= t->probe_at &&
        t->timed_ns >= t->set.repeat_ms * 1e6)
        return GPO_TIMING_DONE;
    return GPO_TIMING_TIMED;
}

/* The first run's verdict, once the first probe is in: a timed run when
 * not slower than the slowest probe run, else the warm-up. */
static void settle_first(gpo_timing *t)
{
    if (t->first != GPO_FIRST_PENDING)
        return;
    double slowest = t->samples[0];
    for (int32_t i = 1; i < t->n; i++)
        if (t->samples[i] > slowest)
            slowest = t->samples[i];
    if (t->first_ns <= slowest) {
        t->first = GPO_FIRST_TIMED;
        t->samples[t->n++] = t->first_ns;
        t->timed_ns += t->first_ns;
    } else {
        t->first = GPO_FIRST_WARMUP;
        t->warmups = 1;
        t->warm_ns = t->first_ns;
    }
}

/* The probe rule, when a probe is complete: over the bound once, probe
 * again; over it after the second probe too, pruned. */
static void probe_rule(gpo_timing *t)
{
    if (t->probed != t->probe_at)
        return;
    settle_first(t);
    if (t->best_ns <= 0 || t->set.prune_ratio <= 0 ||
        gpo_rank_of(t->samples, t->n, t->samples + t->set.max_runs + 1) <=
            t->set.prune_ratio * t->best_ns)
        return;
    int32_t room = t->set.max_runs - t->n;
    if (t->probe_at == t->set.probe_runs && room > 0)
        /* Probe again before giving it up, within max_runs (a point with no
         * room left is measured in full: there is nothing to save). */
        t->probe_at += room < t->set.probe_runs ? room : t->set.probe_runs;
    else if (t->probe_at != t->set.probe_runs)
        t->pruned = 1;
}

void gpo_timing_record(gpo_timing *t, double run_ns)
{
    assert(t);
    if (!t->samples)
        return;
    run_ns = clean(run_ns);
    int step = gpo_timing_next(t);
    if (step == GPO_TIMING_WARMUP) {
        t->warmups++;
        t->warm_ns += run_ns;
    } else if (step == GPO_TIMING_TIMED) {
        t->samples[t->n++] = run_ns;
        t->timed_ns += run_ns;
        t->probed++;
        probe_rule(t);
    }
}

int32_t gpo_timing_finish(gpo_timing *t, gpo_stats *stats)
{
    assert(t);
    if (!t->samples || t->n < 1)
        return -1;
    if (stats && gpo_stats_compute_in(t->samples, t->n, t->samples + t->set.max_runs + 1, stats) !=
                     GPUOPT_OK)
        return -1;
    return t->pruned ? GPO_TIMED_PRUNED : GPO_TIMED_OK;
}

void gpo_timing_free(gpo_timing *t)
{
    assert(t);
    free(t->samples);
    t->samples = NULL;
}

/* ---- re-timing ----------------------------------------------------------- */

gpuopt_status gpo_retime_begin(gpo_retime *r, int32_t k, int32_t rounds)
{
    assert(r);
    memset(r, 0, sizeof *r);
    if (k < 1 || k > 64 || rounds < 2 || rounds > 10000)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "re-timing: %d candidates, %d rounds; 1..64 and 2..10000 accepted", (int)k,
                        (int)rounds);
    r->samples = malloc((size_t)k * (size_t)(rounds - 1) * sizeof *r->samples);
    r->count = calloc((size_t)k, sizeof *r->count);
    if (!r->samples || !r->count) {
        gpo_retime_free(r);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory re-timing");
    }
    r->k = k;
    r->rounds = rounds;
    return GPUOPT_OK;
}

int gpo_retime_next(gpo_retime *r, int32_t *which)
{
    assert(r && which);
    if (!r->samples || r->round >= r->rounds)
        return 0;
    *which = (r->pos + r->round) % r->k;
    return 1;
}

void gpo_retime_record(gpo_retime *r, int32_t which, double run_ns)
{
    int32_t expected;
    if (!gpo_retime_next(r, &expected) || which != expected)
        return; /* out of turn: ignored, so the rounds stay interleaved */
    if (r->round > 0 && isfinite(run_ns) && run_ns >= 0)
        r->samples[(size_t)which * (size_t)(r->rounds - 1) + (size_t)r->count[which]++] = run_ns;
    if (++r->pos == r->k) {
        r->pos = 0;
        r->round++;
    }
}

int32_t gpo_retime_pick(const gpo_retime *r, double rel_floor, gpo_stats *stats)
{
    assert(r);
    if (!r->samples)
        return -1;
    gpo_stats local[64];
    for (int32_t i = 0; i < r->k; i++) {
        memset(&local[i], 0, sizeof local[i]);
        if (r->count[i] > 0)
            gpo_stats_compute(r->samples + (size_t)i * (size_t)(r->rounds - 1), r->count[i],
                              &local[i]);
    }
    if (stats)
        memcpy(stats, local, (size_t)r->k * sizeof *stats);
    if (local[0].count < 1)
        return -1;
    int32_t win = 0;
    for (int32_t i = 1; i < r->k; i++)
        if (gpo_stats_beats(&local[0], &local[i], rel_floor) &&
            (win == 0 || gpo_stats_rank(&local[i]) < gpo_stats_rank(&local[win])))
            win = i;
    return win;
}

void gpo_retime_free(gpo_retime *r)
{
    assert(r);
    free(r->samples);
    free(r->count);
    r->samples = NULL;
    r->count = NULL;
}

/* ---- the loop ---------------------------------------------------------------- */

gpuopt_status gpo_measure_time(gpo_measure_fn run, void *user, const gpo_timing_settings *t,
                               double best_ns, gpo_stats *out, int *pruned)
{
    assert(run && t && out);
    if (pruned)
        *pruned = 0;
    gpo_timing tm;
    gpuopt_status st = gpo_timing_begin(&tm, t, best_ns);
    if (st)
        return st;
    while (gpo_timing_next(&tm) != GPO_TIMING_DONE) {
        double ns = 0;
        st = run(user, &ns);
        if (st)
            goto out;
        gpo_timing_record(&tm, ns);
    }
    int32_t result = gpo_timing_finish(&tm, out);
    assert(result >= 0); /* min_runs >= 1 */
    if (pruned)
        *pruned = result == GPO_TIMED_PRUNED;
out:
    gpo_timing_free(&tm);
    return st;
}
