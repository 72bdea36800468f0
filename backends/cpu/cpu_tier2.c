/* The CPU's tier 2 (the CPU backend has no runtime ops): its host
 * measurements, which tier 2's built-in benchmarks run (src/tier2/tier2.h,
 * gpo_t2_host) and cache like every tier-2 result:
 *
 *   copy     b[i] = q * a[i] over doubles (STREAM's "Scale"), by the plan's
 *            `threads` (each its slice) or by one thread (the memory-bandwidth
 *            benchmark). Not memcpy: past its non-temporal threshold glibc's
 *            memcpy stores around the cache and skips the destination's
 *            read-for-ownership that STREAM's loops (and a program's) pay, so
 *            it read 1.4-1.8x a STREAM triad beside it on this 2-core Xeon
 *            (docs/benchmarks.md, "Bandwidth against a triad"); a plain copy
 *            loop would be turned into a memcpy call by the compiler;
 *   blocked  a cache-blocked kernel: PASSES passes of x = x*a + b over each
 *            tile before the next, every thread on its own array of twice
 *            the largest tile (the cache-blocking tile benchmark, which
 *            sets cpu.tile_bytes).
 * The thread teams start on first need: a plan answered from the cache
 * starts no thread. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_pool.h"
#include "cpu/cpu_state.h"
#include "tier2/tier2.h"
#include "util/strutil.h"

#define PASSES 4
#define MAX_THREADS 256

/* What the functions are, hashed into the keys: edit it with the code. */
static const char kernels_text[] =
    "cpu tier 2 v2: copy = b[i] = q * a[i] over double, q = 3, each thread its slice; blocked = "
    "per tile, 4 passes of "
    "x[i] = x[i] * 0.999f + 0.001f over float, each thread its own array of 2 x the largest "
    "tile";

typedef struct cpu_t2 {
    int threads;
    gpo_cpu_pool *pool, *one;
    double *src, *dst; /* copy */
    size_t bytes;
    double scale;
    float *arrays[MAX_THREADS]; /* blocked */
    size_t per_thread;          /* floats */
    size_t tile;                /* floats, this round's */
} cpu_t2;

/* The thread teams, started on first need. */
static gpuopt_status teams(cpu_t2 *c)
{
    gpuopt_status st = c->pool ? GPUOPT_OK : gpo_cpu_pool_start(c->threads, &c->pool);
    if (!st && !c->one)
        st = gpo_cpu_pool_start(1, &c->one);
    return st;
}

static void release(void *user)
{
    cpu_t2 *c = user;
    free(c->src);
    free(c->dst);
    c->src = c->dst = NULL;
    for (int i = 0; i < MAX_THREADS; i++) {
        free(c->arrays[i]);
        c->arrays[i] = NULL;
    }
}

static void copy_job(void *user, int index, int n)
{
    const cpu_t2 *c = user;
    size_t count = c->bytes / sizeof(double);
    size_t chunk = (count / (size_t)n) & ~(size_t)7;
    size_t off = chunk * (size_t)index;
    size_t len = index == n - 1 ? count - off : chunk;
    const double *restrict a = c->src + off;
    double *restrict b = c->dst + off;
    const double q = c->scale;
    for (size_t i = 0; i < len; i++)
        b[i] = q * a[i];
}

static gpuopt_status copy_buffers(void *user, size_t bytes)
{
    cpu_t2 *c = user;
    gpuopt_status st = teams(c);
    if (st)
        return st;
    free(c->src);
    free(c->dst);
    c->src = malloc(bytes);
    c->dst = malloc(bytes);
    c->bytes = bytes;
    c->scale = 3.0;
    if (!c->src || !c->dst)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cpu tier 2: no memory for two buffers of %zu bytes",
                        bytes);
    /* Fault the pages in: the first touch is the kernel's work, not the
     * memory's. */
    memset(c->src, 1, bytes);
    memset(c->dst, 2, bytes);
    return GPUOPT_OK;
}

static gpuopt_status copy(void *user, int threads, double *ns)
{
    cpu_t2 *c = user;
    *ns = gpo_cpu_pool_round(threads == 1 ? c->one : c->pool, copy_job, c);
    return GPUOPT_OK;
}

static void blocked_job(void *user, int index, int n)
{
    (void)n;
    cpu_t2 *c = user;
    float *x = c->arrays[index];
    size_t len = c->per_thread, tile = c->tile;
    for (size_t t = 0; t < len; t += tile) {
        size_t end = t + tile < len ? t + tile : len;
        for (int p = 0; p < PASSES; p++)
            for (size_t i = t; i < end; i++)
                x[i] = x[i] * 0.999f + 0.001f;
    }
}

static gpuopt_status tile_arrays(void *user, uint64_t max_tile)
{
    cpu_t2 *c = user;
    gpuopt_status st = teams(c);
    if (st)
        return st;
    c->per_thread = 2 * (size_t)max_tile / sizeof(float);
    for (int i = 0; i < c->threads; i++) {
        free(c->arrays[i]);
        if (!(c->arrays[i] = malloc(c->per_thread * sizeof(float))))
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cpu tier 2: no memory for the tile arrays");
        for (size_t k = 0; k < c->per_thread; k++)
            c->arrays[i][k] = 1.0f;
    }
    return GPUOPT_OK;
}

static gpuopt_status blocked(void *user, uint64_t tile, double *ns)
{
    cpu_t2 *c = user;
    c->tile = (size_t)tile / sizeof(float);
    *ns = gpo_cpu_pool_round(c->pool, blocked_job, c);
    return GPUOPT_OK;
}

gpuopt_status gpo_cpu_tier2(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan)
{
    if (gpo_cpu_state_recorded(state))
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "the CPU's facts come from a recorded tree (GPUOPT_SYSFS_ROOT): "
                        "measuring this host would not describe that CPU");
    cpu_t2 c;
    memset(&c, 0, sizeof c);
    int64_t v;
    c.threads = gpo_knob_get_int(plan, "threads", &v) && v >= 1
                    ? (int)(v > MAX_THREADS ? MAX_THREADS : v)
                    : 1;
    const gpo_t2_host host = {&c,           kernels_text, c.threads,   "cpu.tile_bytes", PASSES,
                              copy_buffers, copy,         tile_arrays, blocked,          release};
    gpuopt_status st = gpo_tier2_host(route, dev, plan, &host);
    gpo_cpu_pool_stop(c.pool);
    gpo_cpu_pool_stop(c.one);
    release(&c);
    return st;
}
