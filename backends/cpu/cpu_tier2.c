/* The CPU's tier 2 (the CPU backend has no runtime ops): measured with host
 * threads through the tier-2 engine (src/tier2/tier2.h), cached like every
 * tier-2 result.
 *
 *   memory bandwidth  memcpy between two buffers by the plan's `threads`
 *                     (each its slice) and by one thread, STREAM-style
 *                     counting of bytes read + written; sized like the
 *                     device copy (docs/knobs.md).
 *   cpu.tile_bytes    a cache-blocked kernel (4 passes of x = x*a + b over
 *                     each tile before the next; every thread on its own
 *                     array) timed for tiles of 1/4, 1/2, 1, 2 and 4 times
 *                     tier 1's value; tier 1's tile stays unless another
 *                     beats it beyond noise. Within the cache, tile sizes
 *                     tie; past it every pass goes to the next level, so
 *                     the measurement catches a rule that overshoots.
 * Budget: 500 ms, 40% bandwidth, 60% tiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_pool.h"
#include "util/strutil.h"
#include "tier2/tier2.h"

#define BUDGET_MS 500.0
#define PROBE_BYTES GPO_T2_BW_PROBE_BYTES
#define MAX_BYTES GPO_T2_BW_MAX_BYTES
#define TARGET_MS GPO_T2_BW_TARGET_MS
#define PASSES 4
#define MIN_TILE (4u << 10)
#define MAX_TILE (64ull << 20)
#define N_TILES 5

/* What the kernels are, hashed into the keys: edit it with the code. */
static const char kernels_text[] =
    "cpu tier 2 v1: copy = memcpy of each thread's slice; blocked = per tile, 4 passes of "
    "x[i] = x[i] * 0.999f + 0.001f over float, each thread its own array of 2 x the largest "
    "tile";

typedef struct cpu_t2 {
    const gpo_cpu_facts *facts;
    int threads;
    uint64_t tile1; /* tier 1's cpu.tile_bytes */
    gpo_cpu_pool *pool, *one;
    /* copy */
    unsigned char *src, *dst;
    size_t bytes;
    /* tiles */
    float *arrays[256];
    size_t per_thread; /* floats */
    size_t tile;       /* floats, prepared */
} cpu_t2;

/* ---- memory bandwidth ------------------------------------------------------- */

static void copy_job(void *user, int index, int n)
{
    cpu_t2 *c = user;
    size_t chunk = (c->bytes / (size_t)n) & ~(size_t)63;
    size_t off = chunk * (size_t)index;
    size_t len = index == n - 1 ? c->bytes - off : chunk;
    memcpy(c->dst + off, c->src + off, len);
}

typedef struct copy_run {
    cpu_t2 *c;
    gpo_cpu_pool *pool;
} copy_run;

static gpuopt_status copy_once(void *user, double *ns)
{
    copy_run *r = user;
    *ns = gpo_cpu_pool_round(r->pool, copy_job, r->c);
    return GPUOPT_OK;
}

static gpuopt_status buffers(cpu_t2 *c, size_t bytes)
{
    free(c->src);
    free(c->dst);
    c->src = malloc(bytes);
    c->dst = malloc(bytes);
    c->bytes = bytes;
    if (!c->src || !c->dst)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cpu tier 2: no memory for two buffers of %zu bytes",
                        bytes);
    /* Fault the pages in (the first touch is the kernel's work, not the
     * memory's), with every thread, as the copy runs. */
    memset(c->src, 1, bytes);
    memset(c->dst, 2, bytes);
    return GPUOPT_OK;
}

static gpuopt_status bw_describe(gpo_t2 *t2, void *user, char *workload, size_t wcap, char *space,
                                 size_t scap)
{
    (void)space;
    (void)scap;
    cpu_t2 *c = user;
    gpo_snprintf(workload, wcap,
                 "memcpy;threads=%d and 1;size=pow2 min(4*llc %llu, mem/16 %llu, %llu, "
                 "rate*%gms), >= %llu",
                 c->threads, (unsigned long long)gpo_t2_pow2_floor(4 * t2->dev->info.l2_bytes),
                 (unsigned long long)gpo_t2_pow2_floor(t2->dev->info.memory_bytes / 16),
                 (unsigned long long)MAX_BYTES, TARGET_MS, (unsigned long long)PROBE_BYTES);
    return GPUOPT_OK;
}

static gpuopt_status bw_knob(gpo_t2_job *job, const char *name, const gpo_stats *s, size_t bytes,
                             int threads, const char *note)
{
    double bps = s->median > 0 ? 2.0 * (double)bytes / s->median * 1e9 : 0;
    char size[32], med[32], rate[32];
    gpo_format_bytes(bytes, size, sizeof size);
    gpo_t2_fmt_ns(s->median, med, sizeof med);
    gpo_t2_fmt_rate(bps, rate, sizeof rate);
    return gpo_t2_job_knob_int(job, name, (int64_t)bps,
                               "memcpy of %s by %d thread%s in %s (median of %d runs, p20-p80 "
                               "%.3g-%.3g ms): %s read + written%s",
                               size, threads, threads == 1 ? "" : "s", med, (int)s->count,
                               s->p20 / 1e6, s->p80 / 1e6, rate, note);
}

/* The thread teams, started on first need: a plan answered from the
 * cache starts no thread. */
static gpuopt_status teams(cpu_t2 *c)
{
    gpuopt_status st = c->pool ? GPUOPT_OK : gpo_cpu_pool_start(c->threads, &c->pool);
    if (!st && !c->one)
        st = gpo_cpu_pool_start(1, &c->one);
    return st;
}

static gpuopt_status bw_measure(gpo_t2 *t2, gpo_t2_job *job, void *user)
{
    cpu_t2 *c = user;
    gpo_stats s, one;
    gpuopt_status st = teams(c);
    if (st)
        return st;
    copy_run r = {c, c->pool};
    st = buffers(c, PROBE_BYTES);
    gpo_timing_settings probe = {0, 0, 3, 3, 3, 0};
    if (!st)
        st = gpo_measure_time(copy_once, &r, &probe, 0, &s, NULL);
    if (st)
        return st;
    const gpuopt_device_info *d = &t2->dev->info;
    uint64_t bytes = gpo_t2_bandwidth_bytes(d, s.median);
    if (bytes != c->bytes)
        st = buffers(c, (size_t)bytes);
    double left = gpo_t2_job_left_ms(job);
    gpo_timing_settings t = {1.0, left * 0.4, 5, 20, 5, 0};
    if (!st)
        st = gpo_measure_time(copy_once, &r, &t, 0, &s, NULL);
    r.pool = c->one;
    t.repeat_ms = gpo_t2_job_left_ms(job) * 0.8;
    if (!st)
        st = gpo_measure_time(copy_once, &r, &t, 0, &one, NULL);
    if (st)
        return st;
    char note[160] = "", llc[32];
    if (d->l2_bytes >= bytes) {
        gpo_format_bytes(d->l2_bytes, llc, sizeof llc);
        gpo_snprintf(note, sizeof note,
                     "; the %s last-level cache holds the buffers, so this is partly cache "
                     "bandwidth",
                     llc);
    }
    st = gpo_t2_job_note(job, "bytes", (double)bytes);
    if (!st)
        st = bw_knob(job, "measured.memory_bandwidth", &s, (size_t)bytes, c->threads, note);
    if (!st)
        st = bw_knob(job, "measured.memory_bandwidth_1thread", &one, (size_t)bytes, 1, note);
    free(c->src);
    free(c->dst);
    c->src = c->dst = NULL;
    return st;
}

/* ---- cache-blocking tile ------------------------------------------------------ */

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

static gpuopt_status tile_prepare(void *user, int64_t bytes)
{
    cpu_t2 *c = user;
    c->tile = (size_t)bytes / sizeof(float);
    return GPUOPT_OK;
}

static gpuopt_status tile_run(void *user, double *ns)
{
    cpu_t2 *c = user;
    *ns = gpo_cpu_pool_round(c->pool, blocked_job, c);
    return GPUOPT_OK;
}

/* 1/4, 1/2, 1, 2, 4 times tier 1's tile, in 4 KiB steps, nearest first. */
static int32_t tile_candidates(const cpu_t2 *c, int64_t *v)
{
    static const double factor[N_TILES] = {1, 0.5, 2, 0.25, 4};
    int32_t n = 0;
    for (int i = 0; i < N_TILES; i++) {
        uint64_t b = (uint64_t)((double)c->tile1 * factor[i]) / MIN_TILE * MIN_TILE;
        if (b < MIN_TILE || b > MAX_TILE)
            continue;
        int dup = 0;
        for (int32_t j = 0; j < n; j++)
            dup |= v[j] == (int64_t)b;
        if (!dup)
            v[n++] = (int64_t)b;
    }
    return n;
}

static gpuopt_status tile_describe(gpo_t2 *t2, void *user, char *workload, size_t wcap, char *space,
                                   size_t scap)
{
    (void)t2;
    cpu_t2 *c = user;
    int64_t v[N_TILES];
    int32_t n = tile_candidates(c, v);
    if (n < 1)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "no tile size around tier 1's %llu bytes",
                        (unsigned long long)c->tile1);
    gpo_snprintf(workload, wcap, "blocked fma;passes=%d;threads=%d;incumbent=%llu", PASSES,
                 c->threads, (unsigned long long)c->tile1);
    size_t len = 0;
    len += (size_t)snprintf(space, scap, "int tile");
    for (int32_t i = 0; i < n && len < scap; i++)
        len += (size_t)snprintf(space + len, scap - len, "%s%lld", i ? "," : " ", (long long)v[i]);
    return GPUOPT_OK;
}

static void tiles_free(cpu_t2 *c)
{
    for (int i = 0; i < 256; i++) {
        free(c->arrays[i]);
        c->arrays[i] = NULL;
    }
}

static gpuopt_status tile_sweep(cpu_t2 *c, int64_t *v, gpo_t2_sweep *s)
{
    memset(s, 0, sizeof *s);
    gpuopt_status st = teams(c);
    if (st)
        return st;
    s->n = tile_candidates(c, v);
    s->values = v;
    s->param = "tile";
    s->incumbent = (int64_t)c->tile1;
    s->prepare = tile_prepare;
    s->run = tile_run;
    s->user = c;
    int64_t most = 0;
    for (int32_t i = 0; i < s->n; i++)
        most = v[i] > most ? v[i] : most;
    c->per_thread = 2 * (size_t)most / sizeof(float);
    for (int i = 0; i < c->threads; i++) {
        c->arrays[i] = malloc(c->per_thread * sizeof(float));
        if (!c->arrays[i])
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cpu tier 2: no memory for the tile arrays");
        for (size_t k = 0; k < c->per_thread; k++)
            c->arrays[i][k] = 1.0f;
    }
    return GPUOPT_OK;
}

static gpuopt_status tile_measure(gpo_t2 *t2, gpo_t2_job *job, void *user)
{
    cpu_t2 *c = user;
    int64_t v[N_TILES];
    gpo_t2_sweep s;
    gpo_t2_sweep_result r;
    gpuopt_status st = tile_sweep(c, v, &s);
    if (!st)
        st = gpo_t2_sweep_run(t2, job, &s, &r);
    if (!st) {
        char w[32], i[32], sz[32], one[32];
        gpo_t2_fmt_ns(r.winner_st.median, w, sizeof w);
        gpo_t2_fmt_ns(r.incumbent_st.median, i, sizeof i);
        gpo_format_bytes((uint64_t)r.winner, sz, sizeof sz);
        gpo_format_bytes(c->tile1, one, sizeof one);
        if (r.incumbent_won)
            st = gpo_t2_job_knob_bytes(job, "cpu.tile_bytes", (uint64_t)r.winner,
                                       "measured: a cache-blocked kernel (%d passes per tile, %d "
                                       "threads) ran as fast with tier 1's %s tiles (%s) as with "
                                       "any other, within noise; tiles tried (bytes): %s",
                                       PASSES, c->threads, sz, w, r.tried);
        else
            st = gpo_t2_job_knob_bytes(job, "cpu.tile_bytes", (uint64_t)r.winner,
                                       "measured: a cache-blocked kernel (%d passes per tile, %d "
                                       "threads) ran fastest with %s tiles: %s against %s with "
                                       "tier 1's %s side by side; tiles tried (bytes): %s",
                                       PASSES, c->threads, sz, w, i, one, r.tried);
    }
    tiles_free(c);
    return st;
}

static gpuopt_status tile_verify(gpo_t2 *t2, gpo_t2_job *job, void *user, int *keep)
{
    (void)t2;
    cpu_t2 *c = user;
    int64_t v[N_TILES];
    gpo_t2_sweep s;
    gpuopt_status st = tile_sweep(c, v, &s);
    if (!st)
        st = gpo_t2_sweep_verify(job, &s, keep);
    tiles_free(c);
    return st;
}

static const gpo_t2_bench bench_bandwidth = {"cpu_memory_bandwidth", 0.4, bw_describe, bw_measure,
                                             NULL};
static const gpo_t2_bench bench_tile = {"cpu_tile", 0.6, tile_describe, tile_measure, tile_verify};
static const gpo_t2_bench *const benches[] = {&bench_bandwidth, &bench_tile};

gpuopt_status gpo_cpu_tier2(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan)
{
    if (!state || !route || !dev || !plan)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cpu tier 2: NULL %s",
                        !state   ? "backend state"
                        : !route ? "route"
                        : !dev   ? "device"
                                 : "plan");
    if (gpo_cpu_state_recorded(state))
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "the CPU's facts come from a recorded tree (GPUOPT_SYSFS_ROOT): "
                        "measuring this host would not describe that CPU");
    cpu_t2 c;
    memset(&c, 0, sizeof c);
    c.facts = gpo_cpu_state_facts(state);
    int64_t v;
    c.threads = gpo_knob_get_int(plan, "threads", &v) && v >= 1 ? (int)(v > 256 ? 256 : v) : 1;
    c.tile1 = gpo_knob_get_int(plan, "cpu.tile_bytes", &v) && v > 0 ? (uint64_t)v : 128u << 10;
    char hash[32];
    gpuopt_status st = gpo_cache_hash_text(kernels_text, strlen(kernels_text), hash, sizeof hash);
    if (!st) {
        gpo_t2 t2;
        gpo_t2_init(&t2, plan, route, dev, hash, "");
        st = gpo_t2_run(&t2, benches, sizeof benches / sizeof benches[0], &c, BUDGET_MS);
    }
    gpo_cpu_pool_stop(c.pool);
    gpo_cpu_pool_stop(c.one);
    free(c.src);
    free(c.dst);
    tiles_free(&c);
    return st;
}
