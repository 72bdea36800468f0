/* Device memory bandwidth: a copy kernel between two device buffers,
 * timed by the runtime (events), counting the bytes read and written (as
 * STREAM's "Copy" does).
 *
 * Size: the buffers must outgrow the last-level cache, or the figure is
 * the cache's; they must not cost more time than the budget gives. So a
 * 16 MiB copy is timed first, and the buffers become the largest power of
 * two under all of: 4 x the last-level cache, 1/16 of the device memory
 * (OpenCL guarantees single allocations of 1/4 of it: OpenCL 3.0 §4.2
 * CL_DEVICE_MAX_MEM_ALLOC_SIZE), 512 MiB, and what the probe's rate moves
 * in 4 ms; never under 16 MiB. The key holds this rule and its inputs;
 * the size it gave is stored with the result. */
#include <stdlib.h>

#include "util/strutil.h"
#include "tier2/t2_generic.h"

#define PROBE_BYTES GPO_T2_BW_PROBE_BYTES
#define MAX_BYTES GPO_T2_BW_MAX_BYTES
#define TARGET_MS GPO_T2_BW_TARGET_MS
#define MIN_RUNS 5
#define MAX_RUNS 20

typedef struct bw_ctx {
    gpo_t2_rt *g;
    gpo_rt_buf *a, *b;
    size_t n; /* uint elements */
} bw_ctx;

static gpuopt_status bw_run(void *user, double *ns)
{
    bw_ctx *c = user;
    const gpo_runtime_ops *o = c->g->ops;
    size_t local = (size_t)c->g->block;
    size_t global[3] = {(c->n + local - 1) / local * local, 1, 1}, loc[3] = {local, 1, 1};
    return o->launch(c->g->rt, c->g->copy, 1, global, loc, ns);
}

static gpuopt_status bw_buffers(bw_ctx *c, size_t bytes)
{
    const gpo_runtime_ops *o = c->g->ops;
    o->buffer_free(c->g->rt, c->a);
    o->buffer_free(c->g->rt, c->b);
    c->a = c->b = NULL;
    gpuopt_status st = o->buffer_alloc(c->g->rt, bytes, &c->a);
    if (!st)
        st = o->buffer_alloc(c->g->rt, bytes, &c->b);
    if (st)
        return st;
    c->n = bytes / 4;
    uint32_t n = (uint32_t)c->n;
    st = o->kernel_set_buffer(c->g->rt, c->g->copy, 0, c->a);
    if (!st)
        st = o->kernel_set_buffer(c->g->rt, c->g->copy, 1, c->b);
    if (!st)
        st = o->kernel_set_scalar(c->g->rt, c->g->copy, 2, &n, sizeof n);
    return st;
}

uint64_t gpo_t2_pow2_floor(uint64_t v)
{
    uint64_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return v ? p : 0;
}

uint64_t gpo_t2_bandwidth_bytes(const gpuopt_device_info *d, double probe_median_ns)
{
    uint64_t bytes = MAX_BYTES;
    double rate = probe_median_ns > 0 ? 2.0 * PROBE_BYTES / probe_median_ns * 1e9 : 0;
    if (rate > 0 && rate * TARGET_MS / 1e3 < (double)bytes)
        bytes = (uint64_t)(rate * TARGET_MS / 1e3);
    if (d->l2_bytes && 4 * d->l2_bytes < bytes)
        bytes = 4 * d->l2_bytes;
    if (d->memory_bytes && d->memory_bytes / 16 < bytes)
        bytes = d->memory_bytes / 16;
    bytes = gpo_t2_pow2_floor(bytes);
    return bytes < PROBE_BYTES ? PROBE_BYTES : bytes;
}

static gpuopt_status bw_describe(gpo_t2 *t2, void *user, char *workload, size_t wcap, char *space,
                                 size_t scap)
{
    (void)space;
    (void)scap;
    gpo_t2_rt *g = user;
    /* The caps as powers of two, as the size is one: a device whose
     * memory total moves a little between runs (PoCL reports a share of
     * the host's free memory) keeps its key. */
    gpo_snprintf(workload, wcap,
                 "copy u32;local=%lld;size=pow2 min(4*llc %llu, mem/16 %llu, %llu, rate*%gms), "
                 ">= %llu",
                 (long long)g->block, (unsigned long long)gpo_t2_pow2_floor(4 * t2->dev->info.l2_bytes),
                 (unsigned long long)gpo_t2_pow2_floor(t2->dev->info.memory_bytes / 16),
                 (unsigned long long)MAX_BYTES, TARGET_MS, (unsigned long long)PROBE_BYTES);
    return GPUOPT_OK;
}

static gpuopt_status bw_measure(gpo_t2 *t2, gpo_t2_job *job, void *user)
{
    gpo_t2_rt *g = user;
    gpuopt_status st = gpo_t2_rt_session(g);
    if (st)
        return st;
    bw_ctx c = {g, NULL, NULL, 0};
    gpo_stats s;
    st = bw_buffers(&c, PROBE_BYTES);
    gpo_timing_settings probe = {0, 0, 3, 3, 3, 0};
    if (!st)
        st = gpo_measure_time(bw_run, &c, &probe, 0, &s, NULL);
    if (st)
        goto out;
    const gpuopt_device_info *d = &t2->dev->info;
    uint64_t bytes = gpo_t2_bandwidth_bytes(d, s.median);
    if (bytes != PROBE_BYTES)
        st = bw_buffers(&c, (size_t)bytes);
    gpo_timing_settings t = {1.0, gpo_t2_job_left_ms(job) * 0.8, MIN_RUNS, MAX_RUNS, MIN_RUNS, 0};
    if (!st)
        st = gpo_measure_time(bw_run, &c, &t, 0, &s, NULL);
    if (st)
        goto out;
    double bps = s.median > 0 ? 2.0 * (double)bytes / s.median * 1e9 : 0;
    char size[32], llc[32], med[32], lo[32], hi[32], rate_s[32], note[160] = "";
    gpo_format_bytes(bytes, size, sizeof size);
    gpo_t2_fmt_ns(s.median, med, sizeof med);
    gpo_t2_fmt_ns(s.p20, lo, sizeof lo);
    gpo_t2_fmt_ns(s.p80, hi, sizeof hi);
    gpo_t2_fmt_rate(bps, rate_s, sizeof rate_s);
    if (d->l2_bytes >= bytes) {
        gpo_format_bytes(d->l2_bytes, llc, sizeof llc);
        gpo_snprintf(note, sizeof note,
                     "; the %s last-level cache holds the buffers, so this is partly cache "
                     "bandwidth",
                     llc);
    }
    st = gpo_t2_job_note(job, "bytes", (double)bytes);
    if (!st)
        st = gpo_t2_job_knob_int(job, "measured.memory_bandwidth", (int64_t)bps,
                                 "a copy kernel read and wrote %s each way in %s (median of %d "
                                 "runs, p20-p80 %s-%s): %s%s",
                                 size, med, (int)s.count, lo, hi, rate_s, note);
out:
    g->ops->buffer_free(g->rt, c.a);
    g->ops->buffer_free(g->rt, c.b);
    return st;
}

const gpo_t2_bench gpo_t2_bench_bandwidth = {"memory_bandwidth", 0.15, bw_describe, bw_measure,
                                             NULL};
