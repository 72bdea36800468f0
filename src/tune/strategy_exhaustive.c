/* Exhaustive search: the lazy walk in walk order, skipping preloaded
 * results. The default whenever the legal space fits the budget: on a
 * 260-configuration SGEMM space it was the only CLTune strategy that found
 * the optimum reliably (anchors-autotuning.md, lesson 4). */
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "tune/strategy.h"

static gpuopt_status create(gpo_history *s, void **state)
{
    gpo_space_iter *it = calloc(1, sizeof *it);
    if (!it)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting a search");
    gpuopt_status st = gpo_space_iter_init(it, gpo_history_space(s));
    if (st != GPUOPT_OK) {
        free(it);
        return st;
    }
    *state = it;
    return GPUOPT_OK;
}

static int propose(void *state, gpo_history *s, uint32_t *idx)
{
    gpo_space_iter *it = state;
    while (gpo_space_iter_next(it))
        if (!gpo_history_known(s, it->idx, NULL)) {
            memcpy(idx, it->idx, (size_t)gpo_space_param_count(gpo_history_space(s)) * sizeof *idx);
            return 1;
        }
    return 0;
}

static void observe(void *state, gpo_history *s, const uint32_t *idx, double value)
{
    (void)state, (void)s, (void)idx, (void)value;
}

static void destroy(void *state)
{
    gpo_space_iter_free(state);
    free(state);
}

const gpo_strategy_ops gpo_strategy_exhaustive = {"exhaustive", create, propose, observe, destroy};
