/* Launch latency: an empty kernel of one group, from the launch call to
 * its completion, on the host clock (what a program waiting on a small
 * kernel pays: the runtime's enqueue, the device's start, the completion
 * wake-up). Device events would leave out the first and the last. */
#include "tier2/bench.h"
#include "util/strutil.h"

static gpuopt_status describe(gpo_t2 *t2, gpo_t2_job *job)
{
    if (!t2->rt.ops)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "the route runs no kernels");
    gpo_snprintf(job->workload, sizeof job->workload,
                 "empty kernel;global=%lld;local=%lld;host clock", (long long)t2->multiple,
                 (long long)t2->multiple);
    int32_t at;
    job->timing = (gpo_timing_settings){2.0, 0, 20, 500, 20, 0};
    job->repeat_share = 0.8;
    job->remeasure_changed = job->measure_all = 1;
    return gpo_t2_space_int("group", &t2->multiple, 1, t2->multiple, &job->space, &at);
}

static gpuopt_status setup(gpo_t2_job *job)
{
    return gpo_t2_session(&job->t2->rt);
}

static gpuopt_status run(gpo_t2_job *job, double *ns)
{
    const gpo_t2_rt *g = &job->t2->rt;
    size_t n = (size_t)job->t2->multiple;
    size_t global[3] = {n, 1, 1}, local[3] = {n, 1, 1};
    uint64_t t0 = gpo_now_ns();
    gpuopt_status st = g->ops->launch(g->rt, g->empty, 1, global, local, NULL);
    if (!st)
        st = g->ops->finish(g->rt);
    *ns = (double)(gpo_now_ns() - t0);
    return st;
}

static gpuopt_status knobs(gpo_t2_job *job, const gpuopt_result *res)
{
    const gpo_stats *s = gpo_result_stats(res, gpo_result_best_index(res));
    char med[32], lo[32], hi[32];
    gpo_format_ns(s->median, med, sizeof med);
    gpo_format_ns(s->p20, lo, sizeof lo);
    gpo_format_ns(s->p80, hi, sizeof hi);
    return gpo_t2_knob(job, "int", "measured.launch_latency_ns", (int64_t)(s->median + 0.5),
                       "an empty kernel of one group of %lld took %s from launch to "
                       "completion on the host clock (median of %d runs, p20-p80 %s-%s)",
                       (long long)job->t2->multiple, med, (int)s->count, lo, hi);
}

const gpo_t2_bench gpo_t2_bench_latency = {
    "launch_latency", 0.05, describe, setup, NULL, NULL, run, NULL, knobs,
};
