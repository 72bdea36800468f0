/* Statistics, the per-candidate timing controller and the final re-timing. */
#include "tune/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"

#define MAX_RUNS 100000
#define MAX_WARMUP_RUNS 10000

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double gpo_quantile_sorted(const double *sorted, int32_t n, double q)
{
    if (!sorted || n < 1 || !(q >= 0.0 && q <= 1.0))
        return NAN;
    double pos = q * (double)(n - 1);
    int32_t lo = (int32_t)floor(pos);
    if (lo >= n - 1)
        return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

gpuopt_status gpo_stats_compute(const double *samples, int32_t n, gpo_stats *out)
{
    if (!samples || !out || n < 1)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "statistics: no samples");
    for (int32_t i = 0; i < n; i++)
        if (!isfinite(samples[i]) || samples[i] < 0)
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "statistics: sample %d is %g, not a finite duration", (int)i,
                            samples[i]);
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory computing statistics");
    memcpy(s, samples, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double sum = 0, sq = 0;
    for (int32_t i = 0; i < n; i++)
        sum += s[i];
    double mean = sum / n;
    for (int32_t i = 0; i < n; i++)
        sq += (s[i] - mean) * (s[i] - mean);
    memset(out, 0, sizeof *out);
    out->count = n;
    out->median = gpo_quantile_sorted(s, n, 0.5);
    out->p20 = gpo_quantile_sorted(s, n, 0.2);
    out->p80 = gpo_quantile_sorted(s, n, 0.8);
    out->min = s[0];
    out->max = s[n - 1];
    out->mean = mean;
    /* Sample standard deviation (n - 1). */
    out->cv = n > 1 && mean > 0 ? sqrt(sq / (n - 1)) / mean : 0;
    free(s);
    return GPUOPT_OK;
}

int gpo_stats_beats(const gpo_stats *inc, const gpo_stats *ch, double rel_floor)
{
    if (!inc || !ch || inc->count < 1 || ch->count < 1)
        return 0;
    double noise = 0.5 * ((inc->p80 - inc->p20) + (ch->p80 - ch->p20));
    double floor_ns = (rel_floor > 0 ? rel_floor : 0) * inc->median;
    if (noise < floor_ns)
        noise = floor_ns;
    return inc->median - ch->median > noise;
}

/* ---- timing controller --------------------------------------------------- */

void gpo_timing_defaults(gpo_timing_settings *t)
{
    if (!t)
        return;
    t->warmup_ms = 5;
    t->repeat_ms = 50;
    t->min_runs = 3;
    t->max_runs = 100;
    t->probe_runs = 3;
    t->prune_ratio = 2;
}

gpuopt_status gpo_timing_check(const gpo_timing_settings *t)
{
    if (!t)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "timing settings: NULL");
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
    if (!t)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "timing: NULL controller");
    memset(t, 0, sizeof *t);
    gpuopt_status st = gpo_timing_check(settings);
    if (st != GPUOPT_OK)
        return st;
    t->set = *settings;
    t->best_ns = isfinite(best_ns) && best_ns > 0 ? best_ns : -1;
    t->samples = malloc((size_t)settings->max_runs * sizeof *t->samples);
    if (!t->samples)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory timing a candidate");
    return GPUOPT_OK;
}

static double sorted_median(const double *x, int32_t n)
{
    double tmp[64];
    double *s = n <= 64 ? tmp : malloc((size_t)n * sizeof *s);
    if (!s)
        return x[0];
    memcpy(s, x, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = gpo_quantile_sorted(s, n, 0.5);
    if (s != tmp)
        free(s);
    return m;
}

int gpo_timing_next(const gpo_timing *t)
{
    if (!t || !t->samples || t->pruned)
        return GPO_TIMING_DONE;
    if (t->warmups < 1 ||
        (t->warm_ns < t->set.warmup_ms * 1e6 && t->warmups < MAX_WARMUP_RUNS && t->n == 0))
        return GPO_TIMING_WARMUP;
    if (t->n >= t->set.max_runs)
        return GPO_TIMING_DONE;
    if (t->n >= t->set.min_runs && t->n >= t->set.probe_runs &&
        t->timed_ns >= t->set.repeat_ms * 1e6)
        return GPO_TIMING_DONE;
    return GPO_TIMING_TIMED;
}

void gpo_timing_record(gpo_timing *t, double run_ns)
{
    if (!t || !t->samples)
        return;
    if (isnan(run_ns) || run_ns < 0)
        run_ns = 0;
    else if (isinf(run_ns))
        run_ns = 1e18; /* an endless run is slow, not free */
    int step = gpo_timing_next(t);
    if (step == GPO_TIMING_WARMUP) {
        t->warmups++;
        t->warm_ns += run_ns;
    } else if (step == GPO_TIMING_TIMED) {
        t->samples[t->n++] = run_ns;
        t->timed_ns += run_ns;
        if (t->n == t->set.probe_runs && t->best_ns > 0 && t->set.prune_ratio > 0 &&
            sorted_median(t->samples, t->n) > t->set.prune_ratio * t->best_ns)
            t->pruned = 1;
    }
}

int32_t gpo_timing_finish(gpo_timing *t, gpo_stats *stats)
{
    if (!t || !t->samples || t->n < 1)
        return -1;
    if (stats && gpo_stats_compute(t->samples, t->n, stats) != GPUOPT_OK)
        return -1;
    return t->pruned ? GPO_CAND_PRUNED : GPO_CAND_OK;
}

void gpo_timing_free(gpo_timing *t)
{
    if (!t)
        return;
    free(t->samples);
    t->samples = NULL;
}

/* ---- re-timing ----------------------------------------------------------- */

gpuopt_status gpo_retime_begin(gpo_retime *r, int32_t k, int32_t rounds)
{
    if (!r)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "re-timing: NULL");
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
    if (!r || !r->samples || !which || r->round >= r->rounds)
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
    if (!r || !r->samples)
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
            (win == 0 || local[i].median < local[win].median))
            win = i;
    return win;
}

void gpo_retime_free(gpo_retime *r)
{
    if (!r)
        return;
    free(r->samples);
    free(r->count);
    r->samples = NULL;
    r->count = NULL;
}
