/* What a search strategy implements (strategy_*.c). A strategy proposes
 * from what the history holds (history.h); the driver (search.c)
 * deduplicates, enforces the budget and records into the history. */
#ifndef GPO_TUNE_STRATEGY_H
#define GPO_TUNE_STRATEGY_H

#include <math.h>

#include "tune/history.h"

typedef struct gpo_strategy_ops {
    const char *name;
    gpuopt_status (*create)(gpo_history *h, void **state);
    /* Writes an unseen legal configuration into idx and returns 1, or 0
     * when it has nothing left (the space is exhausted). */
    int (*propose)(void *state, gpo_history *h, uint32_t *idx);
    /* A result: the median for OK and PRUNED, INFINITY for anything else
     * (failed or invalid: never to be approached). */
    void (*observe)(void *state, gpo_history *h, const uint32_t *idx, double value);
    void (*destroy)(void *state);
} gpo_strategy_ops;

extern const gpo_strategy_ops gpo_strategy_exhaustive;
extern const gpo_strategy_ops gpo_strategy_random;
extern const gpo_strategy_ops gpo_strategy_anneal;
extern const gpo_strategy_ops gpo_strategy_model;

#endif
