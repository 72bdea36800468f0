/* The timing loop and statistics of tier 2 (tier2.h).
 *
 * Lessons of research/anchors-autotuning.md §(b)3: warm up on a time
 * budget (Triton's do_bench: 25 ms; at least one run, which also absorbs
 * a JIT's first-launch compile), repeat on a time budget bounded by a
 * minimum and maximum run count (TunableOp: min(100 runs, 30 ms)), select
 * on the median and report p20/p80 (Triton), stop a candidate whose short
 * probe is already twice the best (TunableOp), and re-time the finalists
 * side by side in rotated order before picking (helion PR #2626).
 *
 * Quantiles interpolate linearly between order statistics (Hyndman and
 * Fan type 7, numpy's default). This file is meant to give way to the
 * tuner's src/tune/stats.h once that lands; the functions below are the
 * only ones tier 2 calls. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tier2/tier2.h"

/* Run-count ceilings, so a timer that reads 0 cannot spin forever. */
#define MAX_WARMUPS 10000
#define MAX_SAMPLES 100000

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, int32_t n, double q)
{
    double pos = q * (double)(n - 1);
    int32_t lo = (int32_t)floor(pos);
    if (lo >= n - 1)
        return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

gpuopt_status gpo_t2_stats_of(const double *samples, int32_t n, gpo_t2_stats *out)
{
    if (!samples || !out || n < 1)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2 statistics: %s",
                        !out    ? "NULL output"
                        : n < 1 ? "no samples"
                                : "NULL samples");
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 statistics: out of memory");
    double sum = 0;
    for (int32_t i = 0; i < n; i++) {
        double v = samples[i];
        s[i] = isfinite(v) && v > 0 ? v : 0;
        sum += s[i];
    }
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    memset(out, 0, sizeof *out);
    out->count = n;
    out->median = quantile(s, n, 0.5);
    out->p20 = quantile(s, n, 0.2);
    out->p80 = quantile(s, n, 0.8);
    out->min = s[0];
    out->max = s[n - 1];
    out->mean = sum / n;
    if (n > 1 && out->mean > 0) {
        double var = 0;
        for (int32_t i = 0; i < n; i++)
            var += (s[i] - out->mean) * (s[i] - out->mean);
        out->cv = sqrt(var / (n - 1)) / out->mean;
    }
    free(s);
    return GPUOPT_OK;
}

/* Medians closer than 2% are one value on any machine we measured on
 * (Kernel Tuner issue 282: winners 0.101-0.103 ms apart flip run to run). */
#define NOISE_FLOOR 0.02

int gpo_t2_beats(const gpo_t2_stats *inc, const gpo_t2_stats *ch)
{
    if (!inc || !ch || inc->count < 1 || ch->count < 1)
        return 0;
    double spread = ((inc->p80 - inc->p20) + (ch->p80 - ch->p20)) / 2;
    double margin = NOISE_FLOOR * inc->median;
    if (spread > margin)
        margin = spread;
    return inc->median - ch->median > margin;
}

gpuopt_status gpo_t2_time(gpo_t2_run_fn run, void *user, const gpo_t2_timing *t, double best_ns,
                          gpo_t2_stats *out, int *pruned)
{
    if (pruned)
        *pruned = 0;
    if (!run || !t || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2 timing: NULL %s",
                        !run ? "subject"
                        : !t ? "settings"
                             : "output");
    if (t->min_runs < 1 || t->max_runs < t->min_runs || t->max_runs > MAX_SAMPLES ||
        t->warmup_ms < 0 || t->repeat_ms < 0 || t->probe_runs < 0 || t->prune_ratio < 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "tier 2 timing: runs %d..%d (1 <= min <= max <= %d), warm-up %g ms, repeat "
                        "%g ms, probe %d, prune ratio %g (none negative)",
                        (int)t->min_runs, (int)t->max_runs, MAX_SAMPLES, t->warmup_ms, t->repeat_ms,
                        (int)t->probe_runs, t->prune_ratio);
    double *samples = malloc((size_t)t->max_runs * sizeof *samples);
    if (!samples)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 timing: out of memory");
    gpuopt_status st = GPUOPT_OK;
    double ns = 0, warm = 0, timed = 0;
    for (int32_t i = 0; i < MAX_WARMUPS && (i == 0 || warm < t->warmup_ms * 1e6); i++) {
        st = run(user, &ns);
        if (st)
            goto out;
        warm += ns > 0 ? ns : 0;
    }
    int32_t n = 0;
    while (n < t->max_runs && (n < t->min_runs || timed < t->repeat_ms * 1e6)) {
        st = run(user, &samples[n]);
        if (st)
            goto out;
        timed += samples[n] > 0 ? samples[n] : 0;
        n++;
        if (n == t->probe_runs && best_ns > 0 && t->prune_ratio > 0) {
            gpo_t2_stats probe;
            st = gpo_t2_stats_of(samples, n, &probe);
            if (st)
                goto out;
            if (probe.median > t->prune_ratio * best_ns) {
                *out = probe;
                if (pruned)
                    *pruned = 1;
                goto out;
            }
        }
    }
    st = gpo_t2_stats_of(samples, n, out);
out:
    free(samples);
    return st;
}

gpuopt_status gpo_t2_retime(gpuopt_status (*run)(void *user, int32_t i, double *ns), void *user,
                            int32_t k, int32_t rounds, gpo_t2_stats *stats)
{
    if (!run || !stats || k < 1 || rounds < 2 || rounds > MAX_SAMPLES / k)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "tier 2 re-timing: %s (k %d >= 1, rounds %d >= 2)",
                        !run     ? "NULL subject"
                        : !stats ? "NULL output"
                                 : "bad counts",
                        (int)k, (int)rounds);
    int32_t per = rounds - 1;
    double *samples = malloc((size_t)k * (size_t)per * sizeof *samples);
    if (!samples)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 re-timing: out of memory");
    gpuopt_status st = GPUOPT_OK;
    for (int32_t r = 0; r < rounds && !st; r++) {
        for (int32_t j = 0; j < k && !st; j++) {
            int32_t i = (j + r) % k;
            double ns = 0;
            st = run(user, i, &ns);
            if (!st && r > 0)
                samples[(size_t)i * (size_t)per + (size_t)(r - 1)] = ns;
        }
    }
    for (int32_t i = 0; i < k && !st; i++)
        st = gpo_t2_stats_of(samples + (size_t)i * (size_t)per, per, &stats[i]);
    free(samples);
    return st;
}
