/* Timing statistics (stats.c): what every measurement of the library
 * reports and how two are compared.
 *
 * Two statistics, two jobs. The p20 (the 20th percentile) ranks: the
 * search's order, the probe-and-prune rule, and the "within noise"
 * comparison of finalists. Interference from other work (a shared
 * machine, the host's own threads on a CPU device) mostly makes runs
 * slower, so a low quantile is the figure it disturbs least; but a run can
 * also be luckier than the kernel's typical run: PoCL's kernels here run
 * in two modes (a copy kernel about 0.6 or 1.2 ms on an idle machine), and
 * ranking by the minimum let one fast run in five crown a configuration
 * whose median was 3x its minimum (4.54 against 1.54 ms, an exhaustive
 * SGEMM search, docs/benchmarks.md "An exhaustive search's cost and
 * winner"). One lucky run moves the p20 of 5 runs a fifth as far as the
 * minimum, and that of 6 or more not at all. It orders candidates as
 * well as the minimum does otherwise (bench/tune/rank_stat.c, two 2-thread
 * kernels 9% apart, one round of 5 runs each: at load ~13, right in 64%
 * of the pairs against 66% for the minimum and 57% for the median; on a
 * quiet machine over 4 x 200 rounds, 0.94-0.99 against 0.96-0.99 and
 * 0.93-0.99). The median is what a result reports (a typical run, p20-p80
 * beside it); the mean is dragged by slow outliers and neither ranks nor
 * reports.
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

/* The ranking statistic of computed statistics (the p20, see above). */
double gpo_stats_rank(const gpo_stats *s);
/* The same statistic of n >= 1 raw samples (not modified), sorted into
 * `scratch` (n doubles): never allocates. */
double gpo_rank_of(const double *samples, int32_t n, double *scratch);

/* The "within noise" rule of the final re-timing. A challenger beats the
 * incumbent only when its ranking statistic (rank) is lower by more than
 * the noise:
 *   rank(incumbent) - rank(challenger)
 *       > max(rel_floor * rank(incumbent),
 *             (incumbent spread + challenger spread) / 2)
 * where spread = p80 - p20. This is the symmetric form of "the p20-p80
 * ranges do not overlap", with a floor for very steady timings, so two
 * configurations a hair apart (Kernel Tuner issue 282: 0.101 vs 0.103 ms)
 * do not flip the winner from run to run. Returns 1 when the challenger
 * wins. */
int gpo_stats_beats(const gpo_stats *incumbent, const gpo_stats *challenger, double rel_floor);
#define GPO_NOISE_FLOOR 0.02

#endif
