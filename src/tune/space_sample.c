/* Uniform sampling of legal configurations without materialising the space.
 *
 * Three modes, chosen by what the space turns out to be:
 *
 * rejection  Draw every index uniformly from the raw product and keep the
 *            draw if it is legal. Exact, no memory, and fast while the
 *            legal fraction is not tiny: 1/f tries per draw on average.
 * index      When rejection keeps failing (under 1 legal in 32 over at
 *            least 256 tries, or 256 misses in a row), walk the space once
 *            up to its last constrained parameter and keep every legal
 *            prefix, bit-packed into one uint64 (each parameter takes
 *            ceil(log2(count)) bits). A draw picks a prefix uniformly and
 *            completes it with uniform free parameters: every prefix has
 *            the same number of completions, so the draw is uniform over
 *            the legal space. At most GPO_SAMPLER_INDEX_MAX prefixes
 *            (8 bytes each, 16 MiB).
 * walk       When the index does not fit (too many prefixes, more than
 *            64 bits of prefix, or more than 2^26 walk steps to build):
 *            a uniform raw point, then the next legal configuration in
 *            walk order, wrapping. Favours configurations that follow long
 *            illegal runs, and gives up (no draw) after 2^24 steps: a
 *            space whose constraints only close on its last parameters
 *            while nearly all of it is illegal cannot be sampled cheaply
 *            by any of the three.
 */
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "tune/space_impl.h"

#define GPO_SAMPLER_INDEX_MAX (1u << 21)
#define GPO_SAMPLER_INDEX_STEPS (1ull << 26) /* walk steps to build the index */
#define GPO_SAMPLER_WALK_STEPS (1ull << 24)  /* walk steps per draw in walk mode */
#define REJECT_STREAK 256
#define REJECT_MIN_TRIES 256
#define REJECT_MIN_RATE (1.0 / 32)

enum { MODE_REJECT, MODE_INDEX, MODE_WALK, MODE_EMPTY };

struct gpo_sampler {
    const gpuopt_space *space;
    int mode;
    uint64_t tries, hits;
    uint64_t *index;
    uint64_t nindex;
    int32_t prefix; /* last parameter stored in the index */
    uint8_t bits[GPO_SPACE_MAX_PARAMS];
    gpo_space_iter walk;
    int walk_ready;
};

gpuopt_status gpo_sampler_create(const gpuopt_space *space, gpo_sampler **out)
{
    if (out)
        *out = NULL;
    if (!space || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "sampler: NULL argument");
    gpo_sampler *sm = calloc(1, sizeof *sm);
    if (!sm)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a sampler");
    gpo_space_ref(space);
    sm->space = space;
    sm->mode = gpo_space_sizes_hold(space) ? MODE_REJECT : MODE_EMPTY;
    *out = sm;
    return GPUOPT_OK;
}

void gpo_sampler_destroy(gpo_sampler *sm)
{
    if (!sm)
        return;
    free(sm->index);
    if (sm->walk_ready)
        gpo_space_iter_free(&sm->walk);
    gpo_space_unref(sm->space);
    free(sm);
}

const char *gpo_sampler_mode(const gpo_sampler *sm)
{
    static const char *const names[] = {"rejection", "index", "walk", "empty"};
    return sm ? names[sm->mode] : "none";
}

uint64_t gpo_sampler_bytes(const gpo_sampler *sm)
{
    return sm ? sm->nindex * sizeof *sm->index : 0;
}

static void draw_raw(const gpuopt_space *s, gpo_rng *rng, int32_t from, uint32_t *idx)
{
    for (int32_t p = from; p < s->nparams; p++)
        idx[p] = (uint32_t)gpo_rng_below(rng, (uint64_t)s->params[p].count);
}

static int bits_for(int32_t count)
{
    int b = 0;
    while (b < 31 && ((int64_t)1 << b) < count)
        b++;
    return b;
}

/* Builds the prefix index; falls back to MODE_WALK when it cannot. */
static void build_index(gpo_sampler *sm)
{
    const gpuopt_space *s = sm->space;
    int32_t last = gpo_space_last_constrained(s);
    int total = 0;
    for (int32_t p = 0; p <= last; p++)
        total += sm->bits[p] = (uint8_t)bits_for(s->params[p].count);
    sm->mode = MODE_WALK;
    if (last < 0 || total > 64)
        return;
    gpo_space_iter it;
    if (gpo_space_iter_init_depth(&it, s, last) != GPUOPT_OK)
        return;
    it.max_steps = GPO_SAMPLER_INDEX_STEPS;
    uint64_t cap = 0, n = 0;
    uint64_t *index = NULL;
    int ok = 1;
    while (ok && gpo_space_iter_next(&it)) {
        if (n == GPO_SAMPLER_INDEX_MAX) {
            ok = 0;
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            uint64_t *g = realloc(index, cap * sizeof *g);
            if (!g) {
                ok = 0;
                break;
            }
            index = g;
        }
        uint64_t key = 0;
        for (int32_t p = 0; p <= last; p++)
            key = (sm->bits[p] == 64 ? 0 : key << sm->bits[p]) | it.idx[p];
        index[n++] = key;
    }
    if (it.gave_up)
        ok = 0;
    gpo_space_iter_free(&it);
    if (!ok) {
        free(index);
        return;
    }
    if (n == 0) {
        free(index);
        sm->mode = MODE_EMPTY;
        return;
    }
    uint64_t *fit = realloc(index, n * sizeof *fit);
    sm->index = fit ? fit : index;
    sm->nindex = n;
    sm->prefix = last;
    sm->mode = MODE_INDEX;
}

static int draw_walk(gpo_sampler *sm, gpo_rng *rng, uint32_t *idx)
{
    const gpuopt_space *s = sm->space;
    if (!sm->walk_ready) {
        if (gpo_space_iter_init(&sm->walk, s) != GPUOPT_OK)
            return 0;
        sm->walk_ready = 1;
    }
    draw_raw(s, rng, 0, idx);
    sm->walk.steps = 0;
    sm->walk.max_steps = GPO_SAMPLER_WALK_STEPS;
    gpo_space_iter_seek(&sm->walk, idx);
    if (!gpo_space_iter_next(&sm->walk)) {
        if (sm->walk.gave_up)
            return 0;
        memset(idx, 0, (size_t)s->nparams * sizeof *idx);
        gpo_space_iter_seek(&sm->walk, idx);
        if (!gpo_space_iter_next(&sm->walk)) {
            if (!sm->walk.gave_up)
                sm->mode = MODE_EMPTY;
            return 0;
        }
    }
    memcpy(idx, sm->walk.idx, (size_t)s->nparams * sizeof *idx);
    return 1;
}

int gpo_sampler_draw(gpo_sampler *sm, gpo_rng *rng, uint32_t *idx)
{
    if (!sm || !rng || !idx)
        return 0;
    const gpuopt_space *s = sm->space;
    if (sm->mode == MODE_REJECT) {
        for (int streak = 0; streak < REJECT_STREAK; streak++) {
            sm->tries++;
            draw_raw(s, rng, 0, idx);
            if (gpo_space_is_legal(s, idx)) {
                sm->hits++;
                return 1;
            }
            if (sm->tries >= REJECT_MIN_TRIES && (double)sm->hits < REJECT_MIN_RATE * sm->tries)
                break;
        }
        build_index(sm);
    }
    if (sm->mode == MODE_INDEX) {
        uint64_t key = sm->index[gpo_rng_below(rng, sm->nindex)];
        for (int32_t p = sm->prefix; p >= 0; p--) {
            idx[p] = (uint32_t)(key & ((1ull << sm->bits[p]) - 1));
            key = sm->bits[p] >= 64 ? 0 : key >> sm->bits[p];
        }
        draw_raw(s, rng, sm->prefix + 1, idx);
        return 1;
    }
    if (sm->mode == MODE_WALK)
        return draw_walk(sm, rng, idx);
    return 0;
}
