/* The strategy side of the search: what a strategy implements and the
 * services the driver (strategy.c) gives it. A strategy proposes; the
 * driver deduplicates, enforces the budget and keeps the history. */
#ifndef GPO_TUNE_STRATEGY_IMPL_H
#define GPO_TUNE_STRATEGY_IMPL_H

#include <math.h>

#include "util/rng.h"
#include "tune/strategy.h"

typedef struct gpo_strategy_ops {
    const char *name;
    gpuopt_status (*create)(gpo_search *s, void **state);
    /* Writes an unseen legal configuration into idx and returns 1, or 0
     * when it has nothing left (the space is exhausted). */
    int (*propose)(void *state, gpo_search *s, uint32_t *idx);
    /* A result: the median for OK and PRUNED, INFINITY for anything else
     * (failed or invalid: never to be approached). */
    void (*observe)(void *state, gpo_search *s, const uint32_t *idx, double value);
    void (*destroy)(void *state);
} gpo_strategy_ops;

extern const gpo_strategy_ops gpo_strategy_exhaustive;
extern const gpo_strategy_ops gpo_strategy_random;
extern const gpo_strategy_ops gpo_strategy_anneal;
extern const gpo_strategy_ops gpo_strategy_model;

const gpuopt_space *gpo_search_space(const gpo_search *s);
gpo_rng *gpo_search_rng(gpo_search *s);
/* The evaluation budget in force (the default one for non-exhaustive
 * strategies); 0 when unbounded. */
int32_t gpo_search_budget(const gpo_search *s);
/* Candidates handed out so far (outstanding included). */
int32_t gpo_search_spent(const gpo_search *s);
/* 0: never seen. 1: seen; *value is its result (INFINITY when failed, NAN
 * while outstanding). */
int gpo_search_known(const gpo_search *s, const uint32_t *idx, double *value);
/* A uniformly drawn legal configuration not seen yet (after 64 seen draws,
 * the next unseen one in walk order from a random point): 1, or 0 when
 * every legal configuration has been seen. */
int gpo_search_draw_unseen(gpo_search *s, uint32_t *idx);
/* Up to k known results with finite values (OK and PRUNED), best first:
 * index vectors (pointers into the search) and values. */
int32_t gpo_search_elite(const gpo_search *s, int32_t k, const uint32_t **idx, double *values);
/* History entry i (0 .. gpo_search_history_count - 1) for models: its
 * index vector and value (INFINITY when failed). 1: a result; 0: still
 * outstanding; -1: i out of range. */
int gpo_search_result_at(const gpo_search *s, int32_t i, const uint32_t **idx, double *value);

/* Fisher-Yates shuffle of n index vectors of width w (neighbour lists). */
void gpo_shuffle_rows(gpo_rng *rng, uint32_t *rows, int32_t n, int32_t w);

#endif
