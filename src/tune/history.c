/* A search's memory (history.h). */
#include "tune/history.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/status.h"
#include "util/detail.h"

#define CHUNK 1024                /* entries per block: pointers stay put */
#define UNSEEN_STEPS (1ull << 24) /* walk steps looking for an unseen one */
#define UNSEEN_DRAWS 64
#define ELITE_MAX 64

typedef struct entry {
    gpuopt_point cfg; /* borrows idx below */
    int32_t status;   /* -1 outstanding */
    double value;
    int preload;
} entry;

struct gpo_history {
    const gpuopt_space *space;
    int32_t np;
    gpo_rng rng;
    gpo_sampler *sampler;
    gpo_space_iter walk;
    int walk_ready;
    int32_t budget, spent;
    entry **chunks;
    uint32_t **idx_chunks;
    int32_t nchunks, n;
    /* open-addressing set of positions, keyed by index vector */
    int32_t *table;
    uint32_t table_cap;
    int32_t best;
    /* the ELITE_MAX best timed entries (OK and PRUNED), best first: kept
     * as results arrive so strategies read them in O(k) */
    int32_t elite[ELITE_MAX];
    int32_t nelite;
    uint32_t *scratch;
};

static entry *at(const gpo_history *s, int32_t i)
{
    return &s->chunks[i / CHUNK][i % CHUNK];
}

/* ---- the seen set ---------------------------------------------------------- */

int32_t gpo_history_find(const gpo_history *s, const uint32_t *idx)
{
    uint32_t mask = s->table_cap - 1;
    for (uint32_t h = (uint32_t)gpo_space_idx_hash(s->space, idx) & mask;; h = (h + 1) & mask) {
        int32_t e = s->table[h];
        if (e < 0)
            return -1;
        if (memcmp(at(s, e)->cfg.idx, idx, (size_t)s->np * sizeof *idx) == 0)
            return e;
    }
}

static void insert(gpo_history *s, int32_t e)
{
    uint32_t mask = s->table_cap - 1;
    uint32_t h = (uint32_t)gpo_space_idx_hash(s->space, at(s, e)->cfg.idx) & mask;
    while (s->table[h] >= 0)
        h = (h + 1) & mask;
    s->table[h] = e;
}

int32_t gpo_history_add(gpo_history *s, const uint32_t *idx, int preload)
{
    if ((uint32_t)(s->n + 1) * 2 > s->table_cap) {
        uint32_t cap = s->table_cap * 2;
        int32_t *t = malloc(cap * sizeof *t);
        if (!t)
            return -1;
        free(s->table);
        s->table = t;
        s->table_cap = cap;
        memset(t, 0xff, cap * sizeof *t);
        for (int32_t e = 0; e < s->n; e++)
            insert(s, e);
    }
    if (s->n == s->nchunks * CHUNK) {
        entry **c = realloc(s->chunks, (size_t)(s->nchunks + 1) * sizeof *c);
        if (c)
            s->chunks = c;
        uint32_t **ic = realloc(s->idx_chunks, (size_t)(s->nchunks + 1) * sizeof *ic);
        if (ic)
            s->idx_chunks = ic;
        if (!c || !ic)
            return -1;
        s->chunks[s->nchunks] = calloc(CHUNK, sizeof **c);
        s->idx_chunks[s->nchunks] = calloc((size_t)CHUNK * (size_t)(s->np + 1), sizeof **ic);
        if (!s->chunks[s->nchunks] || !s->idx_chunks[s->nchunks]) {
            free(s->chunks[s->nchunks]);
            free(s->idx_chunks[s->nchunks]);
            return -1;
        }
        s->nchunks++;
    }
    int32_t e = s->n++;
    uint32_t *slot = s->idx_chunks[e / CHUNK] + (size_t)(e % CHUNK) * (size_t)(s->np + 1);
    memcpy(slot, idx, (size_t)s->np * sizeof *idx);
    entry *en = at(s, e);
    gpo_point_borrow(&en->cfg, s->space, slot);
    en->status = -1;
    en->value = NAN;
    en->preload = preload;
    s->spent += !preload;
    insert(s, e);
    return e;
}

/* ---- what strategies read ---------------------------------------------- */

const gpuopt_space *gpo_history_space(const gpo_history *s)
{
    return s->space;
}

gpo_rng *gpo_history_rng(gpo_history *s)
{
    return &s->rng;
}

int32_t gpo_history_budget(const gpo_history *s)
{
    return s->budget;
}

int32_t gpo_history_count(const gpo_history *s)
{
    return s->n;
}

int32_t gpo_history_spent(const gpo_history *s)
{
    return s->spent;
}

int gpo_history_known(const gpo_history *s, const uint32_t *idx, double *value)
{
    int32_t e = gpo_history_find(s, idx);
    if (e < 0)
        return 0;
    if (value) {
        const entry *en = at(s, e);
        *value = en->status < 0                                               ? NAN
                 : en->status == GPO_CAND_OK || en->status == GPO_CAND_PRUNED ? en->value
                                                                              : INFINITY;
    }
    return 1;
}

int gpo_history_draw_unseen(gpo_history *s, uint32_t *idx)
{
    for (int i = 0; i < UNSEEN_DRAWS; i++) {
        if (!gpo_sampler_draw(s->sampler, &s->rng, idx))
            return 0;
        if (gpo_history_find(s, idx) < 0)
            return 1;
    }
    /* Mostly seen: walk on from a random legal point to the next unseen
     * one, wrapping once. */
    if (!s->walk_ready) {
        if (gpo_space_iter_init(&s->walk, s->space) != GPUOPT_OK)
            return 0;
        s->walk_ready = 1;
    }
    s->walk.steps = 0;
    s->walk.max_steps = UNSEEN_STEPS;
    gpo_space_iter_seek(&s->walk, idx);
    for (int pass = 0; pass < 2; pass++) {
        while (gpo_space_iter_next(&s->walk))
            if (gpo_history_find(s, s->walk.idx) < 0) {
                memcpy(idx, s->walk.idx, (size_t)s->np * sizeof *idx);
                return 1;
            }
        if (s->walk.gave_up)
            return 0;
        memset(s->scratch, 0, (size_t)s->np * sizeof *s->scratch);
        gpo_space_iter_seek(&s->walk, s->scratch);
    }
    return 0;
}

int32_t gpo_history_elite(const gpo_history *s, int32_t k, const uint32_t **idx, double *values)
{
    int32_t n = k < s->nelite ? k : s->nelite;
    for (int32_t i = 0; i < n; i++) {
        const entry *en = at(s, s->elite[i]);
        idx[i] = en->cfg.idx;
        values[i] = en->value;
    }
    return n < 0 ? 0 : n;
}

/* Inserts entry e (timed) into the elite list; ties keep arrival order. */
static void elite_insert(gpo_history *s, int32_t e)
{
    double v = at(s, e)->value;
    int32_t pos;
    if (s->nelite < ELITE_MAX)
        pos = s->nelite++;
    else if (v < at(s, s->elite[ELITE_MAX - 1])->value)
        pos = ELITE_MAX - 1;
    else
        return;
    while (pos > 0 && v < at(s, s->elite[pos - 1])->value) {
        s->elite[pos] = s->elite[pos - 1];
        pos--;
    }
    s->elite[pos] = e;
}

int gpo_history_result_at(const gpo_history *s, int32_t i, const uint32_t **idx, double *value)
{
    if (i < 0 || i >= s->n)
        return -1;
    const entry *en = at(s, i);
    *idx = en->cfg.idx;
    if (en->status < 0)
        return 0;
    *value = en->status == GPO_CAND_OK || en->status == GPO_CAND_PRUNED ? en->value : INFINITY;
    return 1;
}

void gpo_shuffle_rows(gpo_rng *rng, uint32_t *rows, int32_t n, int32_t w)
{
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)gpo_rng_below(rng, (uint64_t)i + 1);
        for (int32_t c = 0; c < w; c++) {
            uint32_t t = rows[(size_t)i * (size_t)w + (size_t)c];
            rows[(size_t)i * (size_t)w + (size_t)c] = rows[(size_t)j * (size_t)w + (size_t)c];
            rows[(size_t)j * (size_t)w + (size_t)c] = t;
        }
    }
}

/* ---- what the driver writes --------------------------------------------------- */

gpuopt_status gpo_history_create(const gpuopt_space *space, uint64_t seed, gpo_history **out)
{
    assert(space && out);
    *out = NULL;
    gpo_history *s = calloc(1, sizeof *s);
    if (!s)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a search");
    gpo_space_ref(space);
    s->space = space;
    s->np = gpo_space_param_count(space);
    s->best = -1;
    gpo_rng_seed(&s->rng, seed);
    s->table_cap = 64;
    s->table = malloc(s->table_cap * sizeof *s->table);
    s->scratch = calloc((size_t)s->np + 1, sizeof *s->scratch);
    gpuopt_status st = GPUOPT_OK;
    if (!s->table || !s->scratch)
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a search");
    else
        st = gpo_sampler_create(space, &s->sampler);
    if (st) {
        gpo_history_destroy(s);
        return st;
    }
    memset(s->table, 0xff, s->table_cap * sizeof *s->table);
    *out = s;
    return GPUOPT_OK;
}

void gpo_history_destroy(gpo_history *s)
{
    if (!s)
        return;
    for (int32_t c = 0; c < s->nchunks; c++) {
        free(s->chunks[c]);
        free(s->idx_chunks[c]);
    }
    free(s->chunks);
    free(s->idx_chunks);
    free(s->table);
    free(s->scratch);
    if (s->walk_ready)
        gpo_space_iter_free(&s->walk);
    gpo_sampler_destroy(s->sampler);
    gpo_space_unref(s->space);
    free(s);
}

void gpo_history_set_budget(gpo_history *s, int32_t budget)
{
    s->budget = budget;
}

void gpo_history_set(gpo_history *s, int32_t e, int32_t status, double value)
{
    entry *en = at(s, e);
    en->status = status;
    en->value = status == GPO_CAND_OK || status == GPO_CAND_PRUNED ? value : NAN;
    if (status == GPO_CAND_OK && (s->best < 0 || value < at(s, s->best)->value))
        s->best = e;
    if (status == GPO_CAND_OK || status == GPO_CAND_PRUNED)
        elite_insert(s, e);
}

const gpuopt_point *gpo_history_point(const gpo_history *s, int32_t e)
{
    return &at(s, e)->cfg;
}

int32_t gpo_history_status(const gpo_history *s, int32_t e)
{
    return at(s, e)->status;
}

double gpo_history_value(const gpo_history *s, int32_t e)
{
    return at(s, e)->value;
}

int gpo_history_preloaded(const gpo_history *s, int32_t e)
{
    return at(s, e)->preload;
}

int32_t gpo_history_best(const gpo_history *s)
{
    return s->best;
}
