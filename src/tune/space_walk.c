/* The lazy walk over the legal space, counting, and neighbourhoods.
 *
 * The walk is an odometer over value indices, parameter 0 outermost. At
 * level d it assigns parameter d and tests the constraints whose deepest
 * parameter is d; a failure advances parameter d without descending, which
 * skips every completion of that prefix at once. Memory is O(parameters +
 * constraints) whatever the size of the space. */
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "tune/space_impl.h"

enum { FRESH = 0, CHECK = 1, RETURNED = 2, DONE = 3 };

gpuopt_status gpo_space_iter_init_depth(gpo_space_iter *it, const gpuopt_space *s, int32_t depth)
{
    if (!it)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "space walk: NULL iterator");
    memset(it, 0, sizeof *it);
    if (!s)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "space walk: NULL space");
    int32_t n = s->nparams;
    it->space = s;
    it->depth = depth < n - 1 ? depth : n - 1;
    it->idx = calloc((size_t)n + 1, sizeof *it->idx);
    it->vals = calloc((size_t)n + 1, sizeof *it->vals);
    it->order = calloc((size_t)s->ncons + 1, sizeof *it->order);
    it->first = calloc((size_t)n + 2, sizeof *it->first);
    if (!it->idx || !it->vals || !it->order || !it->first) {
        gpo_space_iter_free(it);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory walking a space");
    }
    /* Counting sort of the constraints by depth (-1 .. n-1). */
    for (int32_t i = 0; i < s->ncons; i++)
        it->first[gpo_constraint_depth(s, &s->cons[i]) + 1 + 1]++;
    for (int32_t d = 1; d <= n + 1; d++)
        it->first[d] += it->first[d - 1];
    int32_t *fill = calloc((size_t)n + 2, sizeof *fill);
    if (!fill) {
        gpo_space_iter_free(it);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory walking a space");
    }
    memcpy(fill, it->first, ((size_t)n + 1) * sizeof *fill);
    /* Within a depth, expressions before callbacks: callbacks are the
     * user's code and may be slow, and the header promises they only see
     * configurations every expression accepted. */
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < s->ncons; i++)
            if ((s->cons[i].expr != NULL) == (pass == 0))
                it->order[fill[gpo_constraint_depth(s, &s->cons[i]) + 1]++] = i;
    free(fill);
    it->state = FRESH;
    return GPUOPT_OK;
}

gpuopt_status gpo_space_iter_init(gpo_space_iter *it, const gpuopt_space *space)
{
    return gpo_space_iter_init_depth(it, space, space ? space->nparams - 1 : 0);
}

void gpo_space_iter_free(gpo_space_iter *it)
{
    if (!it)
        return;
    free(it->idx);
    free(it->vals);
    free(it->order);
    free(it->first);
    memset(it, 0, sizeof *it);
}

void gpo_space_iter_seek(gpo_space_iter *it, const uint32_t *idx)
{
    if (!it || !it->idx || !idx)
        return;
    memcpy(it->idx, idx, (size_t)it->space->nparams * sizeof *idx);
    it->level = 0;
    it->seeking = 1;
    it->gave_up = 0;
    it->state = gpo_space_sizes_hold(it->space) ? CHECK : DONE;
}

static int level_holds(gpo_space_iter *it, int32_t d)
{
    const gpuopt_space *s = it->space;
    for (int32_t k = it->first[d + 1]; k < it->first[d + 2]; k++)
        if (!gpo_constraint_holds(s, &s->cons[it->order[k]], it->idx, it->vals))
            return 0;
    return 1;
}

int gpo_space_iter_next(gpo_space_iter *it)
{
    if (!it || !it->idx || it->state == DONE)
        return 0;
    const gpuopt_space *s = it->space;
    if (it->depth < 0) { /* no parameters: only the empty configuration */
        int first = it->state != RETURNED && gpo_space_sizes_hold(s);
        it->state = first ? RETURNED : DONE;
        return first;
    }
    if (it->state == FRESH) {
        if (!gpo_space_sizes_hold(s)) {
            it->state = DONE;
            return 0;
        }
        memset(it->idx, 0, (size_t)s->nparams * sizeof *it->idx);
        it->level = 0;
        it->seeking = 0;
    } else if (it->state == RETURNED) {
        it->idx[it->level]++;
    }
    it->state = CHECK;
    int32_t d = it->level;
    for (;; it->steps++) {
        if (it->max_steps && it->steps >= it->max_steps) {
            it->gave_up = 1;
            it->state = DONE;
            return 0;
        }
        if (it->idx[d] >= (uint32_t)s->params[d].count) {
            if (d == 0) {
                it->state = DONE;
                return 0;
            }
            it->seeking = 0;
            d--;
            it->idx[d]++;
            continue;
        }
        it->vals[d] = s->params[d].values[it->idx[d]];
        if (!level_holds(it, d)) {
            it->seeking = 0;
            it->idx[d]++;
            continue;
        }
        if (d == it->depth)
            break;
        d++;
        if (!it->seeking)
            it->idx[d] = 0;
    }
    it->seeking = 0;
    it->level = d;
    it->state = RETURNED;
    return 1;
}

gpuopt_status gpo_space_count_legal(const gpuopt_space *s, uint64_t limit, uint64_t max_steps,
                                    uint64_t *count, int *exact)
{
    if (!s || !count || !exact)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "space count: NULL argument");
    *count = 0;
    *exact = 1;
    /* Parameters after the last constrained one never make a prefix
     * illegal: each legal prefix stands for the product of their counts. */
    int32_t last = gpo_space_last_constrained(s);
    uint64_t tail = 1;
    for (int32_t p = last + 1; p < s->nparams; p++)
        if (__builtin_mul_overflow(tail, (uint64_t)s->params[p].count, &tail))
            tail = UINT64_MAX;
    if (last < 0) {
        *count = gpo_space_sizes_hold(s) ? tail : 0;
        if (limit && *count > limit)
            *exact = 0;
        return GPUOPT_OK;
    }
    gpo_space_iter it;
    gpuopt_status st = gpo_space_iter_init_depth(&it, s, last);
    if (st != GPUOPT_OK)
        return st;
    it.max_steps = max_steps;
    uint64_t n = 0;
    while (gpo_space_iter_next(&it)) {
        if (__builtin_add_overflow(n, tail, &n))
            n = UINT64_MAX;
        if (limit && n > limit) {
            *exact = 0;
            break;
        }
    }
    if (it.gave_up)
        *exact = 0;
    gpo_space_iter_free(&it);
    *count = n;
    return GPUOPT_OK;
}

/* ---- neighbours ----------------------------------------------------------------- */

int32_t gpo_space_neighbour_max(const gpuopt_space *s, int flags)
{
    if (!s)
        return 0;
    int32_t n = s->nparams;
    return 2 * n + ((flags & GPO_NB_PAIRS) ? 2 * n * (n - 1) : 0);
}

gpuopt_status gpo_space_neighbours(const gpuopt_space *s, const uint32_t *idx, int flags,
                                   uint32_t *out, int32_t max, int32_t *n)
{
    if (n)
        *n = 0;
    if (!s || !idx || !out || !n || max < 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "neighbours: NULL argument or negative max");
    int32_t np = s->nparams;
    uint32_t cand[GPO_SPACE_MAX_PARAMS];
    for (int32_t p = 0; p < np; p++)
        if (idx[p] >= (uint32_t)s->params[p].count)
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "neighbours: index %u of %s out of range",
                            idx[p], s->params[p].name);
    int32_t got = 0;
    for (int32_t p = 0; p < np && got < max; p++) {
        for (int dir = -1; dir <= 1 && got < max; dir += 2) {
            memcpy(cand, idx, (size_t)np * sizeof *cand);
            for (int64_t k = (int64_t)idx[p] + dir; k >= 0 && k < s->params[p].count; k += dir) {
                cand[p] = (uint32_t)k;
                if (gpo_space_is_legal(s, cand)) {
                    memcpy(out + (size_t)got * (size_t)np, cand, (size_t)np * sizeof *cand);
                    got++;
                    break;
                }
                if (!(flags & GPO_NB_NEAREST_LEGAL))
                    break;
            }
        }
    }
    if (flags & GPO_NB_PAIRS) {
        for (int32_t p = 0; p < np; p++)
            for (int32_t q = p + 1; q < np; q++)
                for (int dp = -1; dp <= 1; dp += 2)
                    for (int dq = -1; dq <= 1 && got < max; dq += 2) {
                        int64_t a = (int64_t)idx[p] + dp, b = (int64_t)idx[q] + dq;
                        if (a < 0 || a >= s->params[p].count || b < 0 || b >= s->params[q].count)
                            continue;
                        memcpy(cand, idx, (size_t)np * sizeof *cand);
                        cand[p] = (uint32_t)a;
                        cand[q] = (uint32_t)b;
                        if (gpo_space_is_legal(s, cand))
                            memcpy(out + (size_t)got++ * (size_t)np, cand,
                                   (size_t)np * sizeof *cand);
                    }
    }
    *n = got;
    return GPUOPT_OK;
}
