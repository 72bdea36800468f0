/* Timing statistics (stats.h). */
#include "measure/stats.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double gpo_quantile_sorted(const double *sorted, int32_t n, double q)
{
    assert(sorted && n >= 1 && q >= 0.0 && q <= 1.0);
    double pos = q * (double)(n - 1);
    int32_t lo = (int32_t)floor(pos);
    if (lo >= n - 1)
        return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

gpuopt_status gpo_stats_compute_in(const double *samples, int32_t n, double *scratch,
                                   gpo_stats *out)
{
    assert(samples && scratch && out && n >= 1);
    for (int32_t i = 0; i < n; i++)
        if (!isfinite(samples[i]) || samples[i] < 0)
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "statistics: sample %d is %g, not a finite duration", (int)i,
                            samples[i]);
    double *s = scratch;
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
    return GPUOPT_OK;
}

double gpo_stats_rank(const gpo_stats *s)
{
    assert(s);
    return s->p20;
}

double gpo_rank_of(const double *samples, int32_t n, double *scratch)
{
    assert(samples && scratch && n >= 1);
    /* Insertion sort: a probe is a handful of runs. */
    for (int32_t i = 0; i < n; i++) {
        int32_t j = i;
        while (j > 0 && scratch[j - 1] > samples[i]) {
            scratch[j] = scratch[j - 1];
            j--;
        }
        scratch[j] = samples[i];
    }
    return gpo_quantile_sorted(scratch, n, 0.2);
}

gpuopt_status gpo_stats_compute(const double *samples, int32_t n, gpo_stats *out)
{
    assert(samples && out && n >= 1);
    /* The usual counts (a candidate's default is 100 runs) need no
     * allocation, so they cannot fail for want of memory. */
    double local[128];
    double *s = n <= 128 ? local : malloc((size_t)n * sizeof *s);
    if (!s)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory computing statistics");
    gpuopt_status st = gpo_stats_compute_in(samples, n, s, out);
    if (s != local)
        free(s);
    return st;
}

int gpo_stats_beats(const gpo_stats *inc, const gpo_stats *ch, double rel_floor)
{
    assert(inc && ch);
    if (inc->count < 1 || ch->count < 1)
        return 0;
    double noise = 0.5 * ((inc->p80 - inc->p20) + (ch->p80 - ch->p20));
    double a = gpo_stats_rank(inc), b = gpo_stats_rank(ch);
    double floor_ns = (rel_floor > 0 ? rel_floor : 0) * a;
    if (noise < floor_ns)
        noise = floor_ns;
    return a - b > noise;
}
