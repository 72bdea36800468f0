/* The cache-blocking tile of a host that measures itself (gpo_t2_host):
 * its blocked kernel (passes of x = x*a + b over each tile before the
 * next; every thread on its own array) timed for tiles of 1/4, 1/2, 1, 2
 * and 4 times the earlier tier's value, in 4 KiB steps, nearest first;
 * the earlier tile stays unless another beats it beyond noise side by side
 * (GPO_T2_SWITCH_FLOOR). Within the cache, tile sizes tie; past it every
 * pass goes to the next level, so the measurement catches a rule that
 * overshoots. */
#include "tier2/bench.h"
#include "util/strutil.h"

#define MIN_TILE (4u << 10)
#define MAX_TILE (64ull << 20)
#define N_TILES 5

static uint64_t incumbent_of(const gpo_t2 *t2)
{
    int64_t v;
    return gpo_knob_get_int(t2->plan, t2->host->tile_knob, &v) && v > 0 ? (uint64_t)v : 128u << 10;
}

static gpuopt_status describe(gpo_t2 *t2, gpo_t2_job *job)
{
    if (!t2->host)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "the route does not measure on the host");
    static const double factor[N_TILES] = {1, 0.5, 2, 0.25, 4};
    uint64_t tile1 = incumbent_of(t2);
    int64_t v[N_TILES];
    int32_t n = 0, at;
    for (int i = 0; i < N_TILES; i++) {
        uint64_t b = (uint64_t)((double)tile1 * factor[i]) / MIN_TILE * MIN_TILE;
        int dup = 0;
        for (int32_t j = 0; j < n; j++)
            dup |= v[j] == (int64_t)b;
        if (b >= MIN_TILE && b <= MAX_TILE && !dup)
            v[n++] = (int64_t)b;
    }
    if (n < 1)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "no tile size around tier 1's %llu bytes",
                        (unsigned long long)tile1);
    gpo_snprintf(job->workload, sizeof job->workload,
                 "blocked fma;passes=%d;threads=%d;incumbent=%llu", t2->host->passes,
                 t2->host->threads, (unsigned long long)tile1);
    job->timing = (gpo_timing_settings){0, 0, 3, 20, 3, 2.0};
    job->repeat_share = 0.5;
    job->finalists = 3;
    job->floor = GPO_T2_SWITCH_FLOOR;
    gpuopt_status st = gpo_t2_space_int("tile", v, n, (int64_t)tile1, &job->space, &at);
    job->has_incumbent = at >= 0;
    job->incumbent = (uint32_t)(at >= 0 ? at : 0);
    return st;
}

static gpuopt_status setup(gpo_t2_job *job)
{
    int64_t most = 0;
    for (uint32_t k = 0; k < (uint32_t)gpo_space_value_count(job->space, 0); k++)
        if (gpo_space_value(job->space, 0, k) > most)
            most = gpo_space_value(job->space, 0, k);
    const gpo_t2_host *h = job->t2->host;
    return h->tile_arrays(h->user, (uint64_t)most);
}

static void teardown(gpo_t2_job *job)
{
    const gpo_t2_host *h = job->t2->host;
    h->release(h->user);
}

static gpuopt_status run(gpo_t2_job *job, double *ns)
{
    const gpo_t2_host *h = job->t2->host;
    int64_t tile = 0;
    gpuopt_point_get_int(job->current, "tile", &tile);
    return h->blocked(h->user, (uint64_t)tile, ns);
}

static gpuopt_status knobs(gpo_t2_job *job, const gpuopt_result *res)
{
    const gpo_t2_host *h = job->t2->host;
    char tried[512], w[32], i[32] = "", sz[32], one[32];
    gpo_t2_tried(job, res, "tile", "invalid", tried, sizeof tried);
    uint64_t tile1 = incumbent_of(job->t2);
    gpo_t2_verdict v;
    gpo_t2_judge(job, res, "tile", (int64_t)tile1, &v);
    const char *word = gpo_t2_verdict_word(v.what);
    int32_t b = gpo_result_best_index(res), inc = v.incumbent;
    uint64_t win = (uint64_t)gpo_t2_value(res, b, "tile");
    uint64_t pick = (uint64_t)gpo_t2_value(res, v.pick, "tile");
    gpo_format_ns(gpo_result_stats(res, b)->median, w, sizeof w);
    if (inc >= 0)
        gpo_format_ns(gpo_result_stats(res, inc)->median, i, sizeof i);
    gpo_format_bytes(win, sz, sizeof sz);
    gpo_format_bytes(tile1, one, sizeof one);
    if (v.what == GPO_T2_NOT_MEASURED)
        return gpo_t2_knob(job, "bytes", h->tile_knob, pick,
                           "%s: tier 1's %s tiles stand; a cache-blocked kernel (%d passes per "
                           "tile, %d threads) ran with them in %s, and the time budget ran out "
                           "before another size ran; tiles (bytes): %s; noise: %s",
                           word, one, h->passes, h->threads, i, tried, v.noise);
    if (v.kept)
        return gpo_t2_knob(job, "bytes", h->tile_knob, pick,
                           "%s: a cache-blocked kernel (%d passes per tile, %d threads) ran with "
                           "%s tiles against tier 1's %s: %s; tier 1's size kept; tiles (bytes): "
                           "%s; noise: %s",
                           word, h->passes, h->threads, sz, one, v.gain, tried, v.noise);
    if (v.what == GPO_T2_WITHIN_NOISE)
        return gpo_t2_knob(job, "bytes", h->tile_knob, pick,
                           "%s: a cache-blocked kernel (%d passes per tile, %d threads) ran with "
                           "tier 1's %s tiles in %s; of the %d other sizes measured none beat it "
                           "beyond noise side by side; tiles (bytes): %s; noise: %s",
                           word, h->passes, h->threads, sz, w, (int)v.others, tried, v.noise);
    if (inc < 0)
        return gpo_t2_knob(job, "bytes", h->tile_knob, pick,
                           "%s: a cache-blocked kernel (%d passes per tile, %d "
                           "threads) ran fastest with %s tiles (%s); tiles (bytes): %s; noise: %s",
                           word, h->passes, h->threads, sz, w, tried, v.noise);
    return gpo_t2_knob(job, "bytes", h->tile_knob, pick,
                       "%s: a cache-blocked kernel (%d passes per tile, %d threads) "
                       "ran fastest with %s tiles: %s against %s with tier 1's %s side by "
                       "side; tiles (bytes): %s; noise: %s",
                       word, h->passes, h->threads, sz, w, i, one, tried, v.noise);
}

const gpo_t2_bench gpo_t2_bench_tile = {
    "tile", 0.35, describe, setup, teardown, NULL, run, NULL, knobs,
};
