/* Online tuning (online.c), the engine of gpuopt_tuner_step (KTT's dynamic
 * tuning, cuTENSOR's incremental autotuning): each step does the caller's
 * real work once, with the next point while the search lasts, then with
 * the best. A point's time is that one run's (noisier than a tuning run's
 * repeats, but free: the work had to be done anyway).
 *
 * A point that fails (build, launch, wrong result, timeout) left the
 * caller's output wrong or missing, so the same step runs again: with the
 * best so far when there is one, else with the next point. A step that
 * returns GPUOPT_OK has run a point that passed its check.
 *
 * The cache: a plain hit answers from the first step; a soft change is not
 * verified online (the search runs again, each step doing real work
 * anyway); points are journaled as they run, and the finished record is
 * written when the search ends. */
#ifndef GPO_TUNE_ONLINE_H
#define GPO_TUNE_ONLINE_H

#include <stdint.h>

#include "tune/run.h"

typedef struct gpo_online gpo_online;

/* Starts an online search described by `spec` (its pointers must stay
 * valid until gpo_online_free). */
gpuopt_status gpo_online_start(const gpo_run_spec *spec, gpo_online **out);
/* One step: *point (may be NULL) receives the point run, valid until the
 * search is freed; *done (may be NULL) 1 once the best is known. */
gpuopt_status gpo_online_step(gpo_online *o, const gpuopt_point **point, int32_t *done);
/* Ends it (an unfinished journal stays, to resume). NULL does nothing. */
void gpo_online_free(gpo_online *o);

#endif
