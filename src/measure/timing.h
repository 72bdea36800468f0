/* Measuring a subject (timing.c): the per-candidate timing controller,
 * the side-by-side re-timing of finalists, and the loop that drives the
 * first over a function. One copy, used by the tuner's evaluation of
 * candidates and by tier 2's plain measurements alike (research/
 * anchors-autotuning.md §(b)3: warm-up and repeats on time budgets
 * bounded by run counts, the median with p20/p80, probe-and-prune, a
 * side-by-side re-timing of the finalists). */
#ifndef GPO_MEASURE_TIMING_H
#define GPO_MEASURE_TIMING_H

#include <stdint.h>

#include "measure/stats.h"

/* ---- per-candidate timing ------------------------------------------------ */

typedef struct gpo_timing_settings {
    double warmup_ms;   /* warm up until this much run time (>= 1 run); default 5 */
    double repeat_ms;   /* then time runs until this much run time; default 50 */
    int32_t min_runs;   /* ... but at least this many timed runs; default 3 */
    int32_t max_runs;   /* ... and at most this many; default 100 */
    int32_t probe_runs; /* the probe: first timed runs; default 3 */
    double prune_ratio; /* probe median > ratio * best: PRUNED; default 2; 0 disables */
} gpo_timing_settings;

void gpo_timing_defaults(gpo_timing_settings *t);
/* GPUOPT_ERR_OUT_OF_RANGE naming the field when a value is outside what
 * makes sense (negative times, min_runs < 1, max_runs < min_runs, more than
 * 100000 runs, ratio in (0, 1]). */
gpuopt_status gpo_timing_check(const gpo_timing_settings *t);

/* The controller: the engine asks what to do next, runs the subject once,
 * and records how long that run took. It never reads a clock itself, so it
 * serves device events and host timers alike, and tests drive it with
 * synthetic durations.
 *
 *   gpo_timing_begin(&t, &settings, gpo_search_best_value(search));
 *   gpo_timing_first(&t, first_ns);           // optional: the checked run
 *   while ((step = gpo_timing_next(&t)) != GPO_TIMING_DONE) {
 *       run once (pre_run hook first);   // untimed when step is WARMUP
 *       gpo_timing_record(&t, ns);
 *   }
 *   status = gpo_timing_finish(&t, &stats);  // OK or PRUNED
 *
 * The first run. A point's first run is the one whose outputs are
 * checked; its time, given with gpo_timing_first, waits for the probe's
 * verdict: when it is not slower than the slowest probe run it counts as
 * a timed run and no warm-up runs at all (the probe showed none was
 * needed); when it is slower (a JIT's code generation, cold caches) it
 * was the warm-up and is dropped. Without a first run, the warm-up runs
 * until warmup_ms of run time and at least one run (at most 10000 runs,
 * so a zero-duration timer cannot spin).
 *
 * Measurement: the probe (probe_runs timed runs) first; when a best exists
 * and the probe's ranking statistic (gpo_rank_of: the p20 of its runs) is over
 * prune_ratio times it, the point is probed again before it is given up:
 * it stops as PRUNED (TunableOp's rule) only when the statistic of both
 * probes is still over, with their statistics; one probe taken while the
 * machine was busy prunes nothing. Otherwise runs continue until
 * repeat_ms of run time with at least min_runs, or max_runs. */
enum { GPO_TIMING_WARMUP = 1, GPO_TIMING_TIMED = 2, GPO_TIMING_DONE = 0 };
enum { GPO_TIMED_OK = 0, GPO_TIMED_PRUNED = 1 };

/* What became of the first run (gpo_timing.first). */
enum { GPO_FIRST_NONE = 0, GPO_FIRST_PENDING, GPO_FIRST_TIMED, GPO_FIRST_WARMUP };

typedef struct gpo_timing {
    gpo_timing_settings set;
    double best_ns;
    int32_t warmups;
    double warm_ns;
    double *samples; /* max_runs + 1: a kept first run joins the probe */
    int32_t n;
    double timed_ns;
    int pruned;
    int first; /* GPO_FIRST_* */
    double first_ns;
    int32_t probed;   /* timed runs asked for by gpo_timing_next */
    int32_t probe_at; /* probed count at which the probe rule looks next */
} gpo_timing;

gpuopt_status gpo_timing_begin(gpo_timing *t, const gpo_timing_settings *settings, double best_ns);
/* The point's first run, checked and timed, before the first step. */
void gpo_timing_first(gpo_timing *t, double run_ns);
int gpo_timing_next(const gpo_timing *t);
/* Records the run gpo_timing_next asked for; negative or NaN durations are
 * taken as 0. */
void gpo_timing_record(gpo_timing *t, double run_ns);
/* GPO_TIMED_OK, or GPO_TIMED_PRUNED when the probe stopped it (-1 when
 * nothing was timed); fills stats from the timed runs. */
int32_t gpo_timing_finish(gpo_timing *t, gpo_stats *stats);
void gpo_timing_free(gpo_timing *t);

/* ---- final re-timing, side by side --------------------------------------- */

/* The top K candidates (slot 0 the incumbent: the search's best, or the
 * cached winner) re-timed in interleaved rounds, each round in a rotated
 * order so no slot always runs first after an idle gap or a neighbour's
 * cache pollution; round 0 is a warm-up whose samples are dropped. Then
 * the incumbent is kept unless a challenger beats it by gpo_stats_beats;
 * among several that do, the lowest ranking statistic wins. */
typedef struct gpo_retime {
    int32_t k, rounds; /* rounds counts the warm-up round */
    int32_t round, pos;
    double *samples; /* k * (rounds - 1) */
    int32_t *count;
} gpo_retime;

gpuopt_status gpo_retime_begin(gpo_retime *r, int32_t k, int32_t rounds);
/* 1 with the slot to run next in *which; 0 when every round is done. */
int gpo_retime_next(gpo_retime *r, int32_t *which);
void gpo_retime_record(gpo_retime *r, int32_t which, double run_ns);
/* The winning slot; per-slot statistics into stats (k entries) when not
 * NULL. -1 when nothing was recorded. */
int32_t gpo_retime_pick(const gpo_retime *r, double rel_floor, gpo_stats *stats);
void gpo_retime_free(gpo_retime *r);

/* ---- driving the controller over a function ------------------------------ */

/* Runs the subject once; stores how long the run took (device time when
 * the runtime can tell, else host time). */
typedef gpuopt_status (*gpo_measure_fn)(void *user, double *ns);

/* Measures `run` under `t` with the controller above (probe-and-prune
 * against best_ns > 0; no first run: the warm-up runs). *pruned (may be NULL) says whether the
 * probe stopped it. Fails with the first failing run's status; the settings are checked
 * (gpo_timing_check). */
gpuopt_status gpo_measure_time(gpo_measure_fn run, void *user, const gpo_timing_settings *t,
                               double best_ns, gpo_stats *out, int *pruned);

#endif
