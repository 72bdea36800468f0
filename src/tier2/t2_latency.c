/* Launch latency: an empty kernel of one group, from the launch call to
 * its completion, on the host clock (what a program waiting on a small
 * kernel pays: the runtime's enqueue, the device's start, the completion
 * wake-up). Device events would leave out the first and the last. */
#include "util/strutil.h"
#include "tier2/t2_generic.h"

#define MIN_RUNS 20
#define MAX_RUNS 500
#define WARMUP_MS 2.0

typedef struct lat_ctx {
    gpo_t2_rt *g;
    size_t n;
} lat_ctx;

static gpuopt_status lat_run(void *user, double *ns)
{
    lat_ctx *c = user;
    const gpo_runtime_ops *o = c->g->ops;
    size_t global[3] = {c->n, 1, 1}, local[3] = {c->n, 1, 1};
    uint64_t t0 = gpo_now_ns();
    gpuopt_status st = o->launch(c->g->rt, c->g->empty, 1, global, local, NULL);
    if (!st)
        st = o->finish(c->g->rt);
    *ns = (double)(gpo_now_ns() - t0);
    return st;
}

static gpuopt_status lat_describe(gpo_t2 *t2, void *user, char *workload, size_t wcap, char *space,
                                  size_t scap)
{
    (void)t2;
    (void)space;
    (void)scap;
    gpo_t2_rt *g = user;
    gpo_snprintf(workload, wcap, "empty kernel;global=%lld;local=%lld;host clock",
                 (long long)g->multiple, (long long)g->multiple);
    return GPUOPT_OK;
}

static gpuopt_status lat_measure(gpo_t2 *t2, gpo_t2_job *job, void *user)
{
    (void)t2;
    gpo_t2_rt *g = user;
    gpuopt_status st = gpo_t2_rt_session(g);
    if (st)
        return st;
    lat_ctx c = {g, (size_t)g->multiple};
    double left = gpo_t2_job_left_ms(job);
    gpo_timing_settings t = {WARMUP_MS, left * 0.8, MIN_RUNS, MAX_RUNS, MIN_RUNS, 0};
    gpo_stats s;
    st = gpo_measure_time(lat_run, &c, &t, 0, &s, NULL);
    if (st)
        return st;
    char med[32], lo[32], hi[32];
    gpo_t2_fmt_ns(s.median, med, sizeof med);
    gpo_t2_fmt_ns(s.p20, lo, sizeof lo);
    gpo_t2_fmt_ns(s.p80, hi, sizeof hi);
    return gpo_t2_job_knob_int(job, "measured.launch_latency_ns", (int64_t)(s.median + 0.5),
                               "an empty kernel of one group of %lld took %s from launch to "
                               "completion on the host clock (median of %d runs, p20-p80 %s-%s)",
                               (long long)g->multiple, med, (int)s.count, lo, hi);
}

const gpo_t2_bench gpo_t2_bench_latency = {"launch_latency", 0.05, lat_describe, lat_measure, NULL};
