/* Timing statistics (stats.c): what every measurement of the library
 * reports and how two are compared.
 *
 * Statistic: the median selects (Triton's do_bench does the same); p20,
 * p80, min, count and the coefficient of variation are reported. The min
 * rewards lucky samples (CLTune), the mean is dragged by slow outliers
 * (Kernel Tuner, TunableOp).
 *
 * Quantiles interpolate linearly between order statistics (Hyndman and
 * Fan's type 7, numpy's default): q at position q * (n - 1) of the sorted
 * samples. */
#ifndef GPO_MEASURE_STATS_H
#define GPO_MEASURE_STATS_H

#include <stdint.h>

#include "gpuopt/gpuopt.h"

typedef struct gpo_stats {
    int32_t count;
    double median, p20, p80, min, max, mean;
    double cv; /* standard deviation / mean; 0 for fewer than two samples */
} gpo_stats;

/* Statistics of n >= 1 finite, non-negative samples (not modified).
 * GPUOPT_ERR_INVALID_ARGUMENT names a sample that is not a duration; up to
 * 128 samples it allocates nothing (no GPUOPT_ERR_NO_MEMORY). */
gpuopt_status gpo_stats_compute(const double *samples, int32_t n, gpo_stats *out);

/* The same with `scratch` of n doubles for the sorting: never allocates. */
gpuopt_status gpo_stats_compute_in(const double *samples, int32_t n, double *scratch,
                                   gpo_stats *out);

/* Quantile q in [0, 1] of sorted samples (n >= 1). */
double gpo_quantile_sorted(const double *sorted, int32_t n, double q);

/* The "within noise" rule of the final re-timing. A challenger beats the
 * incumbent only when its median is lower by more than the noise:
 *   incumbent.median - challenger.median
 *       > max(rel_floor * incumbent.median,
 *             (incumbent spread + challenger spread) / 2)
 * where spread = p80 - p20. This is the symmetric form of "the p20-p80
 * ranges do not overlap", with a floor for very steady timings, so two
 * configurations a hair apart (Kernel Tuner issue 282: 0.101 vs 0.103 ms)
 * do not flip the winner from run to run. Returns 1 when the challenger
 * wins. */
int gpo_stats_beats(const gpo_stats *incumbent, const gpo_stats *challenger, double rel_floor);
#define GPO_NOISE_FLOOR 0.02

#endif
