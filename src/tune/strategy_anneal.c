/* Simulated annealing (Kirkpatrick, Gelatt and Vecchi, 1983) over the
 * neighbourhood graph of the space.
 *
 * Energy is log(time), so a step's cost is a ratio: d = ln(t_new/t_cur),
 * accepted when d <= 0 or with probability exp(-d / T). T falls
 * geometrically from T0 to T1 over the evaluation budget: at T0 = 0.1 a
 * move 10% slower is taken 39% of the time, at the end almost never.
 * Failed candidates are never accepted.
 *
 * Moves: a random neighbour (single nearest-legal moves; 15% of the time
 * the wider set with pair moves). A neighbour already evaluated costs no
 * budget: its known time goes through the acceptance test and the walk
 * moves on for free. When the walk circles among known configurations, or
 * has not improved the best for PATIENCE of the budget, it restarts from
 * the best known configuration (or, half the time when stuck, from a
 * fresh uniform draw). Starts from the best of a few uniform draws. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "tune/strategy.h"

#define T0 0.1
#define T1 0.003
#define PAIR_SHARE 0.15
#define FREE_STEPS 64
#define PATIENCE 0.1
#define INIT_SHARE 0.05
#define INIT_MIN 4

typedef struct astate {
    int32_t np;
    int32_t n_init;
    uint32_t *cur;
    double cur_v;
    int have;
    double best_v;
    int32_t last_gain;
    uint32_t *nb; /* one candidate */
} astate;

static void destroy(void *state)
{
    astate *a = state;
    free(a->nb);
    free(a->cur);
    free(a);
}

static gpuopt_status create(gpo_history *s, void **state)
{
    const gpuopt_space *space = gpo_history_space(s);
    astate *a = calloc(1, sizeof *a);
    if (!a)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting a search");
    a->np = gpo_space_param_count(space);
    a->n_init = (int32_t)(INIT_SHARE * gpo_history_budget(s));
    if (a->n_init < INIT_MIN)
        a->n_init = INIT_MIN;
    a->best_v = INFINITY;
    a->nb = calloc((size_t)a->np + 1, sizeof *a->nb);
    a->cur = calloc((size_t)a->np + 1, sizeof *a->cur);
    if (!a->nb || !a->cur) {
        destroy(a);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting a search");
    }
    *state = a;
    return GPUOPT_OK;
}

static double temperature(gpo_history *s)
{
    int32_t budget = gpo_history_budget(s);
    double t = budget > 0 ? (double)gpo_history_spent(s) / budget : 0;
    if (t > 1)
        t = 1;
    return T0 * pow(T1 / T0, t);
}

static int accept(astate *a, gpo_history *s, double v)
{
    if (!isfinite(v))
        return 0;
    if (v <= a->cur_v)
        return 1;
    double d = log(v / a->cur_v);
    return gpo_rng_unit(gpo_history_rng(s)) < exp(-d / temperature(s));
}

static void move_to(astate *a, const uint32_t *idx, double v)
{
    memcpy(a->cur, idx, (size_t)a->np * sizeof *idx);
    a->cur_v = v;
    a->have = 1;
}

static void restart_from_best(astate *a, gpo_history *s)
{
    const uint32_t *e[1];
    double v[1];
    if (gpo_history_elite(s, 1, e, v) == 1)
        move_to(a, e[0], v[0]);
}

/* A random legal neighbour of the current point, without listing them
 * all: a random parameter moved to its nearest legal value in a random
 * direction, or (PAIR_SHARE of the time) two parameters one step each.
 * 0 after 4 * parameters fruitless tries. */
static int random_neighbour(astate *a, gpo_history *s, uint32_t *out)
{
    const gpuopt_space *space = gpo_history_space(s);
    gpo_rng *rng = gpo_history_rng(s);
    if (a->np == 0)
        return 0;
    for (int32_t attempt = 0; attempt < 4 * a->np; attempt++) {
        memcpy(out, a->cur, (size_t)a->np * sizeof *out);
        if (a->np >= 2 && gpo_rng_unit(rng) < PAIR_SHARE) {
            int32_t p = (int32_t)gpo_rng_below(rng, (uint64_t)a->np);
            int32_t q = (int32_t)gpo_rng_below(rng, (uint64_t)a->np - 1);
            q += q >= p;
            int64_t x = (int64_t)out[p] + (gpo_rng_below(rng, 2) ? 1 : -1);
            int64_t y = (int64_t)out[q] + (gpo_rng_below(rng, 2) ? 1 : -1);
            if (x < 0 || x >= gpo_space_value_count(space, p) || y < 0 ||
                y >= gpo_space_value_count(space, q))
                continue;
            out[p] = (uint32_t)x;
            out[q] = (uint32_t)y;
            if (gpo_space_is_legal(space, out))
                return 1;
            continue;
        }
        int32_t p = (int32_t)gpo_rng_below(rng, (uint64_t)a->np);
        int dir = gpo_rng_below(rng, 2) ? 1 : -1;
        for (int64_t k = (int64_t)a->cur[p] + dir; k >= 0 && k < gpo_space_value_count(space, p);
             k += dir) {
            out[p] = (uint32_t)k;
            if (gpo_space_is_legal(space, out))
                return 1;
        }
    }
    return 0;
}

static int propose(void *state, gpo_history *s, uint32_t *idx)
{
    astate *a = state;
    gpo_rng *rng = gpo_history_rng(s);
    if (!a->have || gpo_history_spent(s) < a->n_init)
        return gpo_history_draw_unseen(s, idx);
    int32_t budget = gpo_history_budget(s);
    if (budget > 0 && gpo_history_spent(s) - a->last_gain > PATIENCE * budget) {
        restart_from_best(a, s);
        a->last_gain = gpo_history_spent(s);
    }
    for (int step = 0; step < FREE_STEPS; step++) {
        if (!random_neighbour(a, s, a->nb))
            break;
        const uint32_t *c = a->nb;
        double v;
        if (!gpo_history_known(s, c, &v)) {
            memcpy(idx, c, (size_t)a->np * sizeof *idx);
            return 1;
        }
        if (!isnan(v) && accept(a, s, v)) /* known: a free step */
            move_to(a, c, v);
    }
    /* Circling among known configurations. */
    if (gpo_rng_unit(rng) < 0.5)
        restart_from_best(a, s);
    return gpo_history_draw_unseen(s, idx);
}

static void observe(void *state, gpo_history *s, const uint32_t *idx, double value)
{
    astate *a = state;
    if (value < a->best_v) {
        a->best_v = value;
        a->last_gain = gpo_history_spent(s);
    }
    if (!a->have || gpo_history_spent(s) <= a->n_init) {
        if (isfinite(value) && (!a->have || value < a->cur_v))
            move_to(a, idx, value);
        return;
    }
    if (accept(a, s, value))
        move_to(a, idx, value);
}

const gpo_strategy_ops gpo_strategy_anneal = {"annealing", create, propose, observe, destroy};
