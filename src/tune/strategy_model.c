/* Model-guided search: a random-forest surrogate of log(time), choosing the
 * next candidate by a lower confidence bound, in the manner of SMAC
 * (Hutter, Hoos and Leyton-Brown, "Sequential model-based optimization for
 * general algorithm configuration", 2011).
 *
 * Why a forest rather than a Gaussian process or a genetic algorithm:
 * tuning landscapes are discrete, full of cliffs (register spills, a tile
 * that stops dividing the problem) and of failed regions; trees split on
 * exactly such thresholds, need no kernel or length scales, treat an enum
 * by position without pretending it is smooth, and fit a few hundred points
 * in microseconds in plain C. The spread between trees gives the
 * uncertainty that drives exploration. A genetic algorithm needs
 * populations of evaluations per generation, which a 30% budget cannot
 * afford on small spaces, and re-proposes duplicates (CLTune's PSO).
 *
 * Features are value indices (trees only need the order, so 8, 16, 32 and
 * 0, 1, 2 split alike). Failed candidates are taught to the model as the
 * slowest time seen times 2, so it learns to stay away from them.
 *
 * Loop: INIT_SHARE of the budget (8 to 30) uniform draws; then, refitting
 * whenever the results have grown by 1/8 since the last fit, score a pool
 * of unseen candidates (POOL uniform draws, the single-move neighbours of
 * the ELITE best, and the pair moves of the best) by mean - KAPPA * spread
 * and evaluate the lowest. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "util/strutil.h"
#include "tune/strategy.h"

#define TREES 24
#define MAX_DEPTH 14
#define MIN_LEAF 2
#define MAX_BINS 256
#define POOL 128
#define ELITE 5
#define KAPPA 1.0
#define INIT_SHARE 0.1
#define INIT_MIN 8
#define INIT_MAX 30

typedef struct node {
    int32_t feat; /* -1: leaf */
    uint32_t thr; /* bin <= thr goes left */
    int32_t left, right;
    double value;
} node;

typedef struct tree {
    node *nodes;
    int32_t n;
    size_t cap;
} tree;

typedef struct mstate {
    int32_t np, n_init;
    uint32_t *bins; /* bins per feature */
    tree trees[TREES];
    int32_t fitted_n;
    /* training set */
    uint32_t *X;
    double *y;
    int32_t n, cap;
    int32_t *work, *feats;
    double *hsum;
    int32_t *hcnt;
    uint32_t *cand, *nb;
    int32_t nb_max;
    int failed;
} mstate;

/* Features with more than MAX_BINS values share bins, in order. */
static uint32_t bin_of(int32_t p, uint32_t k, const gpuopt_space *space)
{
    uint32_t count = (uint32_t)gpo_space_value_count(space, p);
    return count > MAX_BINS ? (uint32_t)((uint64_t)k * MAX_BINS / count) : k;
}

static void destroy(void *state)
{
    mstate *m = state;
    for (int t = 0; t < TREES; t++)
        free(m->trees[t].nodes);
    free(m->bins), free(m->feats), free(m->hsum), free(m->hcnt), free(m->cand), free(m->nb);
    free(m->X), free(m->y), free(m->work);
    free(m);
}

static gpuopt_status create(gpo_history *s, void **state)
{
    const gpuopt_space *space = gpo_history_space(s);
    mstate *m = calloc(1, sizeof *m);
    if (!m)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting a search");
    m->np = gpo_space_param_count(space);
    m->n_init = (int32_t)(INIT_SHARE * gpo_history_budget(s));
    m->n_init = m->n_init < INIT_MIN ? INIT_MIN : m->n_init > INIT_MAX ? INIT_MAX : m->n_init;
    m->nb_max = gpo_space_neighbour_max(space, GPO_NB_NEAREST_LEGAL | GPO_NB_PAIRS);
    m->bins = calloc((size_t)m->np + 1, sizeof *m->bins);
    m->feats = calloc((size_t)m->np + 1, sizeof *m->feats);
    m->hsum = calloc(MAX_BINS, sizeof *m->hsum);
    m->hcnt = calloc(MAX_BINS, sizeof *m->hcnt);
    m->cand = calloc((size_t)m->np + 1, sizeof *m->cand);
    m->nb = calloc((size_t)(m->nb_max + 1) * (size_t)(m->np + 1), sizeof *m->nb);
    if (!m->bins || !m->feats || !m->hsum || !m->hcnt || !m->cand || !m->nb) {
        destroy(m);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting a search");
    }
    for (int32_t p = 0; p < m->np; p++) {
        int32_t c = gpo_space_value_count(space, p);
        m->bins[p] = (uint32_t)(c > MAX_BINS ? MAX_BINS : c);
    }
    *state = m;
    return GPUOPT_OK;
}

/* ---- fitting ------------------------------------------------------------ */

static int32_t new_node(mstate *m, tree *t)
{
    if (gpo_grow(&t->nodes, sizeof *t->nodes, (size_t)t->n, &t->cap, 64)) {
        m->failed = 1;
        return -1;
    }
    t->nodes[t->n] = (node){-1, 0, -1, -1, 0};
    return t->n++;
}

static int32_t build(mstate *m, gpo_rng *rng, tree *t, int32_t lo, int32_t hi, int depth)
{
    int32_t id = new_node(m, t);
    if (id < 0)
        return -1;
    double sum = 0, sq = 0;
    for (int32_t i = lo; i < hi; i++) {
        sum += m->y[m->work[i]];
        sq += m->y[m->work[i]] * m->y[m->work[i]];
    }
    int32_t cnt = hi - lo;
    t->nodes[id].value = sum / cnt;
    if (cnt < 2 * MIN_LEAF || depth >= MAX_DEPTH || sq - sum * sum / cnt < 1e-12)
        return id;
    /* mtry = half the features, at least one (features with one value
     * cannot split and were left out of feats). */
    int32_t nf = 0;
    for (int32_t p = 0; p < m->np; p++)
        if (m->bins[p] > 1)
            m->feats[nf++] = p;
    int32_t mtry = (nf + 1) / 2;
    double best_score = sum * sum / cnt + 1e-12;
    int32_t best_f = -1;
    uint32_t best_thr = 0;
    for (int32_t j = 0; j < mtry; j++) {
        int32_t r = j + (int32_t)gpo_rng_below(rng, (uint64_t)(nf - j));
        int32_t f = m->feats[r];
        m->feats[r] = m->feats[j];
        m->feats[j] = f;
        uint32_t nb = m->bins[f];
        memset(m->hsum, 0, nb * sizeof *m->hsum);
        memset(m->hcnt, 0, nb * sizeof *m->hcnt);
        for (int32_t i = lo; i < hi; i++) {
            uint32_t b = m->X[(size_t)m->work[i] * (size_t)m->np + (size_t)f];
            m->hsum[b] += m->y[m->work[i]];
            m->hcnt[b]++;
        }
        double ls = 0;
        int32_t lc = 0;
        for (uint32_t b = 0; b + 1 < nb; b++) {
            ls += m->hsum[b];
            lc += m->hcnt[b];
            if (m->hcnt[b] == 0 || lc < MIN_LEAF)
                continue;
            if (cnt - lc < MIN_LEAF)
                break;
            double score = ls * ls / lc + (sum - ls) * (sum - ls) / (cnt - lc);
            if (score > best_score) {
                best_score = score;
                best_f = f;
                best_thr = b;
            }
        }
    }
    if (best_f < 0)
        return id;
    int32_t mid = lo;
    for (int32_t i = lo; i < hi; i++)
        if (m->X[(size_t)m->work[i] * (size_t)m->np + (size_t)best_f] <= best_thr) {
            int32_t tmp = m->work[i];
            m->work[i] = m->work[mid];
            m->work[mid++] = tmp;
        }
    int32_t l = build(m, rng, t, lo, mid, depth + 1);
    int32_t r = build(m, rng, t, mid, hi, depth + 1);
    if (l < 0 || r < 0)
        return -1;
    /* build may have moved t->nodes */
    t->nodes[id].feat = best_f;
    t->nodes[id].thr = best_thr;
    t->nodes[id].left = l;
    t->nodes[id].right = r;
    return id;
}

static int fit(mstate *m, gpo_history *s)
{
    const gpuopt_space *space = gpo_history_space(s);
    int32_t total = gpo_history_count(s);
    if (total > m->cap) {
        uint32_t *X = realloc(m->X, (size_t)total * (size_t)m->np * sizeof *X + 1);
        if (X)
            m->X = X;
        double *y = realloc(m->y, (size_t)total * sizeof *y);
        if (y)
            m->y = y;
        int32_t *w = realloc(m->work, (size_t)total * sizeof *w);
        if (w)
            m->work = w;
        if (!X || !y || !w)
            return 0;
        m->cap = total;
    }
    m->n = 0;
    double worst = -INFINITY;
    for (int32_t i = 0; i < total; i++) {
        const uint32_t *idx;
        double v;
        if (gpo_history_result_at(s, i, &idx, &v) != 1)
            continue;
        for (int32_t p = 0; p < m->np; p++)
            m->X[(size_t)m->n * (size_t)m->np + (size_t)p] = bin_of(p, idx[p], space);
        m->y[m->n] = isfinite(v) ? log(v > 1e-3 ? v : 1e-3) : INFINITY;
        if (isfinite(m->y[m->n]) && m->y[m->n] > worst)
            worst = m->y[m->n];
        m->n++;
    }
    if (m->n < 2)
        return 0;
    double fail_y = isfinite(worst) ? worst + log(2.0) : 0;
    for (int32_t i = 0; i < m->n; i++)
        if (!isfinite(m->y[i]))
            m->y[i] = fail_y;
    gpo_rng *rng = gpo_history_rng(s);
    for (int t = 0; t < TREES; t++) {
        m->trees[t].n = 0;
        for (int32_t i = 0; i < m->n; i++) /* bootstrap */
            m->work[i] = (int32_t)gpo_rng_below(rng, (uint64_t)m->n);
        if (build(m, rng, &m->trees[t], 0, m->n, 0) < 0)
            return 0;
    }
    m->fitted_n = m->n;
    return !m->failed;
}

/* ---- prediction and choice ---------------------------------------------- */

static double lcb(const mstate *m, const gpuopt_space *space, const uint32_t *idx)
{
    double sum = 0, sq = 0;
    for (int t = 0; t < TREES; t++) {
        const tree *tr = &m->trees[t];
        int32_t k = 0;
        while (tr->nodes[k].feat >= 0)
            k = bin_of(tr->nodes[k].feat, idx[tr->nodes[k].feat], space) <= tr->nodes[k].thr
                    ? tr->nodes[k].left
                    : tr->nodes[k].right;
        sum += tr->nodes[k].value;
        sq += tr->nodes[k].value * tr->nodes[k].value;
    }
    double mean = sum / TREES, var = sq / TREES - mean * mean;
    return mean - KAPPA * sqrt(var > 0 ? var : 0);
}

static void consider(const mstate *m, gpo_history *s, const uint32_t *c, uint32_t *best,
                     double *best_score)
{
    if (gpo_history_known(s, c, NULL))
        return;
    double score = lcb(m, gpo_history_space(s), c);
    if (score < *best_score) {
        *best_score = score;
        memcpy(best, c, (size_t)m->np * sizeof *best);
    }
}

static int propose(void *state, gpo_history *s, uint32_t *idx)
{
    mstate *m = state;
    const gpuopt_space *space = gpo_history_space(s);
    if (gpo_history_spent(s) < m->n_init || m->failed)
        return gpo_history_draw_unseen(s, idx);
    int32_t results = gpo_history_count(s);
    int32_t due = m->fitted_n + (m->fitted_n / 8 > 1 ? m->fitted_n / 8 : 1);
    if ((m->fitted_n == 0 || results >= due) && !fit(m, s)) {
        if (m->fitted_n == 0)
            return gpo_history_draw_unseen(s, idx);
    }
    double best_score = INFINITY;
    int found = 0;
    for (int i = 0; i < POOL; i++) {
        if (!gpo_history_draw_unseen(s, m->cand))
            break;
        found = 1;
        consider(m, s, m->cand, idx, &best_score);
    }
    if (!found)
        return 0; /* every legal configuration has been seen */
    const uint32_t *elite[ELITE];
    double values[ELITE];
    int32_t ne = gpo_history_elite(s, ELITE, elite, values);
    for (int32_t e = 0; e < ne; e++) {
        int32_t n = 0;
        int flags = GPO_NB_NEAREST_LEGAL | (e == 0 ? GPO_NB_PAIRS : 0);
        if (gpo_space_neighbours(space, elite[e], flags, m->nb, m->nb_max, &n) != GPUOPT_OK)
            continue;
        for (int32_t i = 0; i < n; i++)
            consider(m, s, m->nb + (size_t)i * (size_t)m->np, idx, &best_score);
    }
    return 1;
}

static void observe(void *state, gpo_history *s, const uint32_t *idx, double value)
{
    (void)state, (void)s, (void)idx, (void)value;
}

const gpo_strategy_ops gpo_strategy_model = {"model", create, propose, observe, destroy};
