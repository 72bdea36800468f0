/* One tuning run (run.c): the measurement engine of the library. The
 * public tuner (gpuopt_tuner_run, gpuopt_tuner_step) and tier 2's built-in
 * benchmarks are all runs, so every measured answer follows one set of
 * rules for searching, journaling, re-timing and trust-but-verify, and is
 * stored as one kind of record in the tuning cache.
 *
 *   gpo_run_begin(&spec, &r);
 *   switch (gpo_run_lookup(r, &hit)) {    // the cache; nothing runs
 *   case GPO_RUN_HIT:     answer from `hit`
 *   case GPO_RUN_CHANGED: gpo_run_verify(r, &hit) -> kept, or measure
 *   case GPO_RUN_MISS:    measure
 *   }
 *   gpo_run_tune(r, &res);                // the search and the final re-timing
 *   gpo_run_finish(r, payload);           // the record, with the caller's payload
 *   gpo_run_end(r);
 *
 * A run's rules, in order:
 * - the cache first: a plain hit answers without setting the subject up
 *   (no session, no build); a hit whose soft fields changed re-times the
 *   stored winner and runner-up side by side and keeps the winner unless
 *   the runner-up now beats it beyond noise (MIOpen's trust-but-verify;
 *   the outcome is recorded), or, with spec.remeasure_changed, measures
 *   again; a record whose search did not run to its end (a budget cut it,
 *   or the process died) is resumed: its points are kept, the rest is
 *   measured;
 * - the incumbent (spec.incumbent, an earlier decision) is measured first,
 *   whatever the budget;
 * - every point: prepare, a first run whose outputs are checked (no time
 *   counts before the output was checked) and whose time the timing
 *   controller (measure/timing.h) keeps as a timed run when the probe
 *   shows it was not slower, or drops as the warm-up when it was (a JIT's
 *   code generation per launch shape); then probe-and-prune against the
 *   best so far, by the ranking statistic (measure/stats.h: the p20),
 *   re-probing before pruning; journaled at once, one line, so a
 *   killed run loses nothing finished;
 * - the finalists (the incumbent, else the search's best, in slot 0, and
 *   the fastest others) are re-timed side by side and slot 0 is kept
 *   unless beaten by gpo_stats_beats with spec.floor; when the time budget
 *   is already spent, the search's own figures decide by the same rule;
 *   without an incumbent, finalists within the winner's own p20-p80 range tie, and
 *   the first in the space's order wins;
 * - the finished record holds the winner, the runner-up, the search, and
 *   the caller's payload.
 * Rules for one point's timing (see run.c): TIMEOUT, early PRUNED. */
#ifndef GPO_TUNE_RUN_H
#define GPO_TUNE_RUN_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "cache/cache.h"
#include "measure/timing.h"
#include "tune/result.h"
#include "tune/search.h"
#include "tune/subject.h"

/* The final re-timing compares the 8 best: on PoCL five runs per candidate
 * leave several SGEMM configurations within one another's noise, and with
 * 4 finalists which of them reached the final (and so won the tie) changed
 * from search to search (docs/benchmarks.md, "An exhaustive search's cost
 * and winner"). Re-timing is cheap beside a search: 5-30 rounds. */
#define GPO_FINALISTS 8

typedef struct gpo_run_spec {
    /* What is tuned: the space as its owner made it (the run adds the
     * subject's device limits to its own copy) and the subject. */
    const gpuopt_space *space;
    const gpo_subject_ops *ops;
    void *subject;
    const gpo_logger *log;
    /* How: the search (strategy, seed, budgets), each point's timing, the
     * wall-time limit of one run (0: none). */
    gpo_search_settings search;
    gpo_timing_settings timing;
    double timeout_s;
    /* > 0: each point's repeat_ms is this share of the time budget left,
     * split over the points left (a budget stretched by a slow compiler
     * still measures every point); 0: timing.repeat_ms as given. */
    double repeat_share;
    /* The point an earlier decision chose (indices into space; NULL: none):
     * measured first whatever the budget, and kept unless beaten. */
    const uint32_t *incumbent;
    /* gpo_stats_beats' relative floor (GPO_NOISE_FLOOR for the tuner) and
     * how many points the final re-timing compares (GPO_FINALISTS; 1:
     * none). */
    double floor;
    int32_t finalists;
    /* A record whose soft fields changed is measured again, not re-timed
     * (plain values, whose stored figure is the answer itself). */
    int remeasure_changed;
    /* Every point is measured whatever the time budget, which then only
     * sizes their repeats (plain values: each point is a figure asked for). */
    int measure_all;
    /* The cache: NULL for none. key and soft are read through the run. */
    gpo_cache *cache;
    int32_t cache_mode; /* GPUOPT_CACHE_USE / REFRESH / OFF */
    const gpo_cache_key *key;
    const gpo_cache_soft *soft;
    /* The result's description, and the progress callback (may be NULL). */
    gpo_result_info info;
    gpuopt_progress_fn progress;
    void *progress_user;
} gpo_run_spec;

typedef struct gpo_run gpo_run;

/* Starts a run. Nothing is copied or set up yet: a cache hit needs nothing
 * more. The spec's pointers must stay valid until gpo_run_end. */
gpuopt_status gpo_run_begin(const gpo_run_spec *spec, gpo_run **out);
/* Sets the time budget (seconds from now; 0: none) before tuning. */
void gpo_run_set_seconds(gpo_run *r, double seconds);
/* Ends a run: abandons an unfinished journal (its points stay, to
 * resume), tears the subject down, frees what the run still owns. NULL
 * does nothing. */
void gpo_run_end(gpo_run *r);

enum { GPO_RUN_MISS = 0, GPO_RUN_HIT = 1, GPO_RUN_CHANGED = 2 };

/* The cache, without running anything: GPO_RUN_HIT with *out the stored
 * answer (from GPUOPT_ORIGIN_CACHE_HIT, the record's payload in it), GPO_RUN_CHANGED
 * when a soft field changed and the winner can be re-verified, or
 * GPO_RUN_MISS (also when the stored winner no longer fits the space, or
 * the record is unfinished or cut short). Negative: a fatal status
 * (-status; allocation). With out NULL a hit builds no answer: the caller
 * reads the record (gpo_run_hit), as tier 2 does for its payload. */
int gpo_run_lookup(gpo_run *r, gpuopt_result **out);
/* The record of a hit found with out NULL, or of a changed one; NULL
 * otherwise. */
const gpo_cache_hit *gpo_run_hit(const gpo_run *r);

/* Trust-but-verify of a GPO_RUN_CHANGED record: GPUOPT_OK with *out the
 * answer (GPUOPT_ORIGIN_CACHE_VERIFIED, the payload in it) when the stored
 * winner holds; GPUOPT_ERR_NOT_FOUND when it does not (measure); another
 * status when the run cannot go on. The outcome is recorded. */
gpuopt_status gpo_run_verify(gpo_run *r, gpuopt_result **out);

/* Measures: the subject set up, resumed points, the incumbent, the search,
 * the final re-timing. GPUOPT_OK with *res (owned by the run until
 * finish) whether or not a valid point was found (gpo_result_best_index
 * says); another status when the run cannot go on. */
gpuopt_status gpo_run_tune(gpo_run *r, const gpuopt_result **res);

/* Writes the finished record with `payload` (a JSON object, may be NULL)
 * and hands the result over (*out, the caller's to destroy). */
gpuopt_status gpo_run_finish(gpo_run *r, const cJSON *payload, gpuopt_result **out);

/* ---- step by step (online.c) ------------------------------------------------- */

/* Sets the subject up, creates the search, the result and the journal
 * (resuming a killed run's points). */
gpuopt_status gpo_run_start(gpo_run *r);
gpo_search *gpo_run_search(gpo_run *r);
/* The run's space: the spec's with the subject's limits (made on first
 * need). */
gpuopt_status gpo_run_space(gpo_run *r, const gpuopt_space **out);
/* Prepares c (the subject set up first, once) and runs it once, checked:
 * GPO_CAND_* or GPO_FATAL (then gpo_run_fatal says why); *p set on OK, released with
 * gpo_run_release. *ns (may be NULL) receives the run's time. */
int32_t gpo_run_ready(gpo_run *r, const gpuopt_point *c, gpo_prep **p, double *ns, gpo_eval *ev);
/* One more run of a prepared point. */
int32_t gpo_run_again(gpo_run *r, gpo_prep *p, gpo_eval *ev);
void gpo_run_release(gpo_run *r, gpo_prep *p);
/* Records an evaluated point: search, result, journal, progress.
 * GPUOPT_OK, or the status that stops the run. */
gpuopt_status gpo_run_record(gpo_run *r, const gpuopt_point *c, const gpo_eval *ev);
/* Writes the finished record of a search stepped by the caller: best and
 * runner-up are points of the search (NULL: none). */
gpuopt_status gpo_run_close(gpo_run *r, const gpuopt_point *best, const gpuopt_point *runner);
gpuopt_status gpo_run_fatal(const gpo_run *r);

#endif
