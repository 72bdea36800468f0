/* Memory bandwidth: a copy between two buffers, counting the bytes read
 * and written (as STREAM's "Copy" does). On a device, a copy kernel
 * between two device buffers timed by the runtime (events); on the host,
 * the host's copy (backends/cpu: STREAM's Scale, b = q*a) by the plan's
 * threads (each its slice) and by one thread.
 *
 * Size: the buffers must outgrow the last-level cache, or the figure is
 * the cache's; they must not cost more time than the budget gives. So a
 * 16 MiB copy is timed first, and the buffers become the largest power of
 * two under all of: 4 x the last-level cache, 1/16 of the memory (OpenCL
 * guarantees single allocations of 1/4 of it: OpenCL 3.0 §4.2
 * CL_DEVICE_MAX_MEM_ALLOC_SIZE), 512 MiB, and what the probe's rate moves
 * in 4 ms; never under 16 MiB; and then, whatever the time caps said, at
 * least the smallest power of two past the last-level cache, where the
 * memory allows it (both buffers within 1/8 of it): a copy of two such
 * buffers streams twice the cache's size, so no run finds the last run's
 * data still cached (a 128 MiB pair inside PoCL's 300 MiB L3 here read 50
 * GB/s against a 32 GB/s STREAM triad). The key holds this rule and its
 * inputs; the size it gave is stored with the result ("bytes").
 *
 * Content: the source is written before any run is timed. Memory never
 * written may still be unbacked (Linux maps untouched anonymous pages to
 * one shared zero page, mmap(2)), and a copy that reads it reads the
 * cache: unwritten sources gave 47-60 GB/s in 7 of 9 runs here, written
 * ones never above 38. The destination is written by the first run, which
 * the timing drops as the warm-up when its page faults made it slower. */
#include <stdlib.h>

#include "tier2/bench.h"
#include "util/strutil.h"

#define PROBE_BYTES (16ull << 20)
#define MAX_BYTES (512ull << 20)
#define TARGET_MS 4.0

typedef struct bw {
    gpo_rt_buf *a, *b; /* device */
    size_t bytes;
    int threads; /* host: the point prepared */
} bw;

static uint64_t pow2_floor(uint64_t v)
{
    uint64_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return v ? p : 0;
}

/* The smallest power of two past the last-level cache (0: none known). */
static uint64_t past_llc(const gpuopt_device_info *d)
{
    return d->l2_bytes ? 2 * pow2_floor(d->l2_bytes) : 0;
}

static uint64_t size_for(const gpuopt_device_info *d, double probe_median_ns)
{
    uint64_t bytes = MAX_BYTES;
    double rate = probe_median_ns > 0 ? 2.0 * PROBE_BYTES / probe_median_ns * 1e9 : 0;
    if (rate > 0 && rate * TARGET_MS / 1e3 < (double)bytes)
        bytes = (uint64_t)(rate * TARGET_MS / 1e3);
    if (d->l2_bytes && 4 * d->l2_bytes < bytes)
        bytes = 4 * d->l2_bytes;
    if (d->memory_bytes && d->memory_bytes / 16 < bytes)
        bytes = d->memory_bytes / 16;
    bytes = pow2_floor(bytes);
    if (bytes < PROBE_BYTES)
        bytes = PROBE_BYTES;
    uint64_t past = past_llc(d);
    if (past > bytes && (!d->memory_bytes || past <= d->memory_bytes / 8))
        bytes = past;
    return bytes;
}

static gpuopt_status describe(gpo_t2 *t2, gpo_t2_job *job)
{
    if (!t2->host && (!t2->rt.ops || !t2->rt.ops->buffer_write))
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "the route can neither run kernels and write buffers nor copy");
    /* The caps as powers of two, as the size is one: a device whose memory
     * total moves a little between runs (PoCL reports a share of the
     * host's free memory) keeps its key. */
    char rule[160];
    const gpuopt_device_info *d = &t2->dev->info;
    gpo_snprintf(rule, sizeof rule,
                 "size=pow2 min(4*llc %llu, mem/16 %llu, %llu, rate*%gms), >= %llu, >= "
                 "past llc %llu if <= mem/8 %llu;source written",
                 (unsigned long long)pow2_floor(4 * d->l2_bytes),
                 (unsigned long long)pow2_floor(d->memory_bytes / 16),
                 (unsigned long long)MAX_BYTES, TARGET_MS, (unsigned long long)PROBE_BYTES,
                 (unsigned long long)past_llc(d),
                 (unsigned long long)pow2_floor(d->memory_bytes / 8));
    int64_t v[2];
    int32_t n = 1, at;
    if (t2->host) {
        gpo_snprintf(job->workload, sizeof job->workload, "host copy;threads=%d and 1;%s",
                     t2->host->threads, rule);
        v[0] = t2->host->threads;
        v[1] = 1;
        n = v[0] > 1 ? 2 : 1;
    } else {
        gpo_snprintf(job->workload, sizeof job->workload, "copy u32;local=%lld;%s",
                     (long long)t2->block, rule);
        v[0] = 1;
    }
    /* Three timed runs: at these sizes a run streams a gigabyte and they
     * agree (PoCL: 43.4-45.1 ms p20-p80 over 512 MiB), while the cost is
     * mostly fixed: writing the source (about 300 ms for 512 MiB here, page
     * faults included) and the first run, slower as it faults the
     * destination in (about 160 ms), which the timing drops as the warm-up.
     * Two more runs cost 90 ms of a 1.5 s tier for no better figure. */
    job->timing = (gpo_timing_settings){1.0, 0, 3, 20, 3, 0};
    job->repeat_share = 0.8;
    job->remeasure_changed = job->measure_all = 1;
    return gpo_t2_space_int("threads", v, n, v[0], &job->space, &at);
}

static gpuopt_status buffers(gpo_t2_job *job, size_t bytes)
{
    gpo_t2 *t2 = job->t2;
    bw *c = job->state;
    c->bytes = bytes;
    if (t2->host)
        return t2->host->copy_buffers(t2->host->user, bytes);
    const gpo_t2_rt *g = &t2->rt;
    g->ops->buffer_free(g->rt, c->a);
    g->ops->buffer_free(g->rt, c->b);
    c->a = c->b = NULL;
    gpuopt_status st = g->ops->buffer_alloc(g->rt, bytes, &c->a);
    if (!st)
        st = g->ops->buffer_alloc(g->rt, bytes, &c->b);
    uint32_t n = (uint32_t)(bytes / 4);
    if (!st)
        st = gpo_t2_fill(g, c->a, bytes);
    if (!st)
        st = g->ops->kernel_set_buffer(g->rt, g->copy, 0, c->a);
    if (!st)
        st = g->ops->kernel_set_buffer(g->rt, g->copy, 1, c->b);
    if (!st)
        st = g->ops->kernel_set_scalar(g->rt, g->copy, 2, &n, sizeof n);
    return st;
}

static gpuopt_status run(gpo_t2_job *job, double *ns)
{
    gpo_t2 *t2 = job->t2;
    bw *c = job->state;
    if (t2->host)
        return t2->host->copy(t2->host->user, c->threads, ns);
    const gpo_t2_rt *g = &t2->rt;
    size_t local = (size_t)t2->block, n = c->bytes / 4;
    size_t global[3] = {(n + local - 1) / local * local, 1, 1}, loc[3] = {local, 1, 1};
    return g->ops->launch(g->rt, g->copy, 1, global, loc, ns);
}

static gpuopt_status run_probe(void *user, double *ns)
{
    return run(user, ns);
}

static void teardown(gpo_t2_job *job)
{
    gpo_t2 *t2 = job->t2;
    bw *c = job->state;
    if (t2->host)
        t2->host->release(t2->host->user);
    else if (c && t2->rt.rt) {
        t2->rt.ops->buffer_free(t2->rt.rt, c->a);
        t2->rt.ops->buffer_free(t2->rt.rt, c->b);
    }
    free(c);
    job->state = NULL;
}

/* The buffers at the probe's size, the probe, then the buffers at the size
 * the rule gives. */
static gpuopt_status setup(gpo_t2_job *job)
{
    gpo_t2 *t2 = job->t2;
    gpuopt_status st = t2->host ? GPUOPT_OK : gpo_t2_session(&t2->rt);
    if (st)
        return st;
    bw *c = calloc(1, sizeof *c);
    if (!(job->state = c))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 bandwidth: out of memory");
    c->threads = t2->host ? t2->host->threads : 1;
    gpo_stats s;
    gpo_timing_settings probe = {0, 0, 3, 3, 3, 0};
    st = buffers(job, PROBE_BYTES);
    if (!st)
        st = gpo_measure_time(run_probe, job, &probe, 0, &s, NULL);
    uint64_t bytes = st ? 0 : size_for(&t2->dev->info, s.median);
    if (!st && bytes != PROBE_BYTES)
        st = buffers(job, (size_t)bytes);
    if (!st)
        st = gpo_t2_note(job, "bytes", (double)bytes);
    return st;
}

static gpuopt_status prepare(gpo_t2_job *job, const gpuopt_point *c)
{
    int64_t threads = 1;
    gpuopt_point_get_int(c, "threads", &threads);
    ((bw *)job->state)->threads = (int)threads;
    return GPUOPT_OK;
}

static gpuopt_status knob(gpo_t2_job *job, const char *name, const gpo_stats *s, int threads)
{
    const gpuopt_device_info *d = &job->t2->dev->info;
    size_t bytes = ((bw *)job->state)->bytes;
    double bps = s->median > 0 ? 2.0 * (double)bytes / s->median * 1e9 : 0;
    char size[32], med[32], lo[32], hi[32], rate[32], llc[32], note[160] = "";
    gpo_format_bytes(bytes, size, sizeof size);
    gpo_format_ns(s->median, med, sizeof med);
    gpo_format_ns(s->p20, lo, sizeof lo);
    gpo_format_ns(s->p80, hi, sizeof hi);
    gpo_format_rate(bps, rate, sizeof rate);
    if (d->l2_bytes >= bytes) {
        gpo_format_bytes(d->l2_bytes, llc, sizeof llc);
        gpo_snprintf(note, sizeof note,
                     "; the %s last-level cache holds the buffers, so this is partly cache "
                     "bandwidth",
                     llc);
    }
    if (!job->t2->host)
        return gpo_t2_knob(job, "int", name, (int64_t)bps,
                           "a copy kernel read and wrote %s each way in %s (median of %d "
                           "runs, p20-p80 %s-%s): %s%s",
                           size, med, (int)s->count, lo, hi, rate, note);
    return gpo_t2_knob(job, "int", name, (int64_t)bps,
                       "a copy (b = q*a, STREAM's Scale) of %s by %d thread%s in %s (median "
                       "of %d runs, p20-p80 %s-%s): %s read + written%s",
                       size, threads, threads == 1 ? "" : "s", med, (int)s->count, lo, hi, rate,
                       note);
}

static gpuopt_status knobs(gpo_t2_job *job, const gpuopt_result *res)
{
    int threads = job->t2->host ? job->t2->host->threads : 1;
    const gpo_stats *all = gpo_result_stats(res, gpo_t2_find(res, "threads", threads));
    const gpo_stats *one = gpo_result_stats(res, gpo_t2_find(res, "threads", 1));
    gpuopt_status st = knob(job, "measured.memory_bandwidth", all, threads);
    if (!st && job->t2->host)
        st = knob(job, "measured.memory_bandwidth_1thread", one, 1);
    return st;
}

const gpo_t2_bench gpo_t2_bench_bandwidth = {
    "memory_bandwidth", 0.15, describe, setup, teardown, prepare, run, NULL, knobs,
};
