/* A search's memory (history.c): every point handed out or known before
 * the search started, with its result, deduplicated by index vector; the
 * best few timed results kept in order; the random stream; and drawing a
 * point not seen yet. The driver (search.c) records into it; the
 * strategies (strategy.h) read it to choose. Neither calls the other
 * through it, so the arrows point down: driver -> strategies -> history.
 *
 * Values: a result's median in ns for OK and PRUNED points, INFINITY for
 * anything else (failed or invalid: never to be approached), NAN while
 * the point is still outstanding. */
#ifndef GPO_TUNE_HISTORY_H
#define GPO_TUNE_HISTORY_H

#include <stdint.h>

#include "tune/space.h"
#include "util/rng.h"

typedef struct gpo_history gpo_history;

/* Takes a reference on `space`. */
gpuopt_status gpo_history_create(const gpuopt_space *space, uint64_t seed, gpo_history **out);
void gpo_history_destroy(gpo_history *h);

/* ---- what strategies read ---------------------------------------------------- */

const gpuopt_space *gpo_history_space(const gpo_history *h);
gpo_rng *gpo_history_rng(gpo_history *h);
/* The evaluation budget in force (the default one for non-exhaustive
 * strategies); 0 when unbounded. Set by the driver. */
int32_t gpo_history_budget(const gpo_history *h);
/* Points handed out so far (outstanding included; preloads excluded). */
int32_t gpo_history_spent(const gpo_history *h);
/* Entries, preloads included. */
int32_t gpo_history_count(const gpo_history *h);
/* 0: never seen. 1: seen; *value (may be NULL) is its value. */
int gpo_history_known(const gpo_history *h, const uint32_t *idx, double *value);
/* A uniformly drawn legal point not seen yet (after 64 seen draws, the
 * next unseen one in walk order from a random point): 1, or 0 when every
 * legal point has been seen. */
int gpo_history_draw_unseen(gpo_history *h, uint32_t *idx);
/* Up to k known results with finite values (OK and PRUNED), best first:
 * index vectors (pointers into the history) and values. */
int32_t gpo_history_elite(const gpo_history *h, int32_t k, const uint32_t **idx, double *values);
/* Entry i's index vector and value. 1: a result; 0: still outstanding;
 * -1: i out of range. */
int gpo_history_result_at(const gpo_history *h, int32_t i, const uint32_t **idx, double *value);

/* Fisher-Yates shuffle of n index vectors of width w (neighbour lists). */
void gpo_shuffle_rows(gpo_rng *rng, uint32_t *rows, int32_t n, int32_t w);

/* ---- what the driver writes and reads ------------------------------------------ */

void gpo_history_set_budget(gpo_history *h, int32_t budget);
/* Appends an outstanding entry for idx (counted as spent unless it is a
 * preload); its position, or -1 on allocation failure. */
int32_t gpo_history_add(gpo_history *h, const uint32_t *idx, int preload);
/* The position of idx, or -1. */
int32_t gpo_history_find(const gpo_history *h, const uint32_t *idx);
/* Records entry e's GPO_CAND_* status and, for OK and PRUNED, its median. */
void gpo_history_set(gpo_history *h, int32_t e, int32_t status, double value_ns);
/* Entry e: its point (valid while the history lives), status (-1 while
 * outstanding), value as recorded (NAN unless OK or PRUNED), preload flag. */
const gpuopt_point *gpo_history_point(const gpo_history *h, int32_t e);
int32_t gpo_history_status(const gpo_history *h, int32_t e);
double gpo_history_value(const gpo_history *h, int32_t e);
int gpo_history_preloaded(const gpo_history *h, int32_t e);
/* The best OK entry, or -1. */
int32_t gpo_history_best(const gpo_history *h);

#endif
