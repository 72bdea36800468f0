/* The best group (block, work-group) size for a streaming kernel and for a
 * reduction, measured: powers-of-two multiples of launch.block_multiple up
 * to the device's limit (and each kernel's, kernel_max_group: sizes past it
 * are invalid points), swept from tier 1's launch.block_size outwards.
 * Tier 1's value is the incumbent: a size replaces it only by beating it
 * beyond noise side by side (GPO_T2_SWITCH_FLOOR).
 *
 * Streaming: the copy kernel over 16 MiB, one element per work-item.
 * Reduction: 16 Ki work-items, each summing a grid-stride share of 64 of
 * 1 Mi ones, then a local-memory tree per group (the first pass of a
 * two-pass reduction); the group size sets how many groups share the
 * work. Every size's partial sums are checked after its first run: a
 * wrong sum fails the tier. */
#include <stdlib.h>

#include "tier2/bench.h"
#include "util/strutil.h"

#define BYTES (16u << 20)
#define N (BYTES / 4)
/* The reduction: 1 Mi integers (a quarter of the copy's bytes: on a CPU
 * device a badly sized reduction is slow enough to dominate the budget). */
#define RN (1u << 20)
#define ITEMS (RN / 64)

typedef struct grp {
    int reduce;
    gpo_rt_buf *in, *out;
    size_t kmax;  /* the kernel's limit */
    size_t local; /* prepared */
    uint32_t *partial;
} grp;

static int is_reduce(const gpo_t2_job *job)
{
    return job->bench == &gpo_t2_bench_reduce;
}

static double ratio_to(int64_t a, int64_t b)
{
    return a > b ? (double)a / (double)b : (double)b / (double)a;
}

int32_t gpo_t2_ladder(int64_t multiple, int64_t limit, int64_t incumbent, int pow2_only,
                      int64_t *out, int32_t cap)
{
    int32_t n = 0;
    int have_inc = 0;
    if (multiple < 1 || limit < multiple || cap < 1)
        return 0;
    for (int64_t v = multiple; v <= limit && n < cap; v *= 2) {
        if (pow2_only && (v & (v - 1)))
            continue;
        out[n++] = v;
        have_inc |= v == incumbent;
    }
    if (!have_inc && incumbent >= 1 && incumbent <= limit && n < cap &&
        (!pow2_only || !(incumbent & (incumbent - 1))))
        out[n++] = incumbent;
    /* Nearest to the incumbent first (insertion sort: a dozen values). */
    for (int32_t i = 1; i < n; i++) {
        int64_t v = out[i];
        int32_t j = i;
        while (j > 0 && incumbent > 0 && ratio_to(out[j - 1], incumbent) > ratio_to(v, incumbent)) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = v;
    }
    return n;
}

static int64_t incumbent_of(const gpo_t2 *t2, int reduce)
{
    int64_t v = t2->block;
    if (reduce) /* the tree needs a power of two: the one at or below */
        while (v & (v - 1))
            v &= v - 1;
    return v;
}

static gpuopt_status describe(gpo_t2 *t2, gpo_t2_job *job)
{
    int reduce = is_reduce(job);
    if (!t2->rt.ops)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "the route runs no kernels");
    int64_t limit =
        t2->dev->info.max_threads_per_block > 0 ? t2->dev->info.max_threads_per_block : 256;
    uint64_t shared = t2->dev->info.shared_mem_per_block;
    if (reduce && shared && (int64_t)(shared / 4) < limit)
        limit = (int64_t)(shared / 4);
    int64_t v[GPO_T2_MAX_VALUES], inc = incumbent_of(t2, reduce);
    int32_t n = gpo_t2_ladder(t2->multiple, limit, inc, reduce, v, GPO_T2_MAX_VALUES), at;
    if (n < 1)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "no %sgroup size is a multiple of %lld within the device's limit",
                        reduce ? "power-of-two " : "", (long long)t2->multiple);
    if (reduce)
        gpo_snprintf(job->workload, sizeof job->workload, "reduce u32;n=%u;items=%u;incumbent=%lld",
                     (unsigned)RN, (unsigned)ITEMS, (long long)inc);
    else
        gpo_snprintf(job->workload, sizeof job->workload, "copy u32;bytes=%u;incumbent=%lld", BYTES,
                     (long long)inc);
    /* A size's warm-up absorbs a JIT's compile for a new launch shape (PoCL
     * compiles a work-group function per local size); then a 3-run probe,
     * pruned at twice the best; then runs until its share, at most 20. */
    job->timing = (gpo_timing_settings){0, 0, 3, 20, 3, 2.0};
    job->repeat_share = 0.5;
    job->finalists = 3;
    job->floor = GPO_T2_SWITCH_FLOOR;
    gpuopt_status st = gpo_t2_space_int("block", v, n, inc, &job->space, &at);
    job->has_incumbent = at >= 0;
    job->incumbent = (uint32_t)(at >= 0 ? at : 0);
    return st;
}

static void teardown(gpo_t2_job *job)
{
    const gpo_t2_rt *g = &job->t2->rt;
    grp *c = job->state;
    if (c && g->rt) {
        g->ops->buffer_free(g->rt, c->in);
        g->ops->buffer_free(g->rt, c->out);
    }
    if (c)
        free(c->partial);
    free(c);
    job->state = NULL;
}

static gpuopt_status setup(gpo_t2_job *job)
{
    gpo_t2_rt *g = &job->t2->rt;
    gpuopt_status st = gpo_t2_session(g);
    if (st)
        return st;
    grp *c = calloc(1, sizeof *c);
    if (!(job->state = c))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 group sizes: out of memory");
    const gpo_runtime_ops *o = g->ops;
    c->reduce = is_reduce(job);
    gpo_rt_kernel *k = c->reduce ? g->reduce : g->copy;
    uint32_t n = c->reduce ? RN : N;
    /* The reduction's partial sums: at most one per work-item. */
    size_t out_bytes = c->reduce ? ITEMS * sizeof(uint32_t) : BYTES;
    st = o->kernel_max_group(g->rt, k, &c->kmax);
    if (!st)
        st = o->buffer_alloc(g->rt, BYTES, &c->in);
    if (!st)
        st = o->buffer_alloc(g->rt, out_bytes, &c->out);
    if (!st && c->reduce) {
        uint32_t *ones = malloc(RN * sizeof *ones);
        if (!ones || !(c->partial = malloc(out_bytes))) {
            free(ones);
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 reduction: out of memory");
        }
        for (size_t i = 0; i < RN; i++)
            ones[i] = 1;
        st = o->buffer_write(g->rt, c->in, 0, ones, RN * sizeof *ones);
        free(ones);
    } else if (!st) {
        st = gpo_t2_fill(g, c->in, BYTES); /* the copy reads memory, not a zero page */
    }
    if (!st)
        st = o->kernel_set_buffer(g->rt, k, 0, c->in);
    if (!st)
        st = o->kernel_set_buffer(g->rt, k, 1, c->out);
    if (!st)
        st = o->kernel_set_scalar(g->rt, k, 2, &n, sizeof n);
    return st;
}

static gpuopt_status prepare(gpo_t2_job *job, const gpuopt_point *p)
{
    const gpo_t2_rt *g = &job->t2->rt;
    grp *c = job->state;
    int64_t v = 0;
    gpuopt_point_get_int(p, "block", &v);
    if (v < 1 || (size_t)v > c->kmax || (c->reduce && (size_t)v > ITEMS))
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the kernel runs at most %zu work-items per group", job->t2->backend,
                        c->kmax);
    c->local = (size_t)v;
    return c->reduce ? g->ops->kernel_set_local(g->rt, g->reduce, 3, c->local * sizeof(uint32_t))
                     : GPUOPT_OK;
}

static gpuopt_status run(gpo_t2_job *job, double *ns)
{
    const gpo_t2_rt *g = &job->t2->rt;
    grp *c = job->state;
    size_t global = (c->reduce ? ITEMS : N + c->local - 1) / c->local * c->local;
    size_t g3[3] = {global, 1, 1}, l3[3] = {c->local, 1, 1};
    return g->ops->launch(g->rt, c->reduce ? g->reduce : g->copy, 1, g3, l3, ns);
}

/* A reduction size's result: the partial sums must add up to RN. */
static gpuopt_status check(gpo_t2_job *job)
{
    const gpo_t2_rt *g = &job->t2->rt;
    grp *c = job->state;
    if (!c->reduce)
        return GPUOPT_OK;
    size_t groups = ITEMS / c->local;
    gpuopt_status st =
        g->ops->buffer_read(g->rt, c->out, 0, c->partial, groups * sizeof *c->partial);
    if (st)
        return st;
    uint64_t sum = 0;
    for (size_t i = 0; i < groups; i++)
        sum += c->partial[i];
    if (sum != RN)
        return gpo_fail(GPUOPT_ERR_LAUNCH,
                        "%s: the reduction kernel with groups of %zu summed %u ones to %llu: the "
                        "device computes wrong results",
                        job->t2->backend, c->local, (unsigned)RN, (unsigned long long)sum);
    return GPUOPT_OK;
}

static gpuopt_status knobs(gpo_t2_job *job, const gpuopt_result *res)
{
    int reduce = is_reduce(job);
    const char *knob = reduce ? "launch.reduce_block_size" : "launch.block_size";
    const char *what =
        reduce ? "a reduction of 1 Mi integers by 16 Ki work-items" : "a copy kernel over 16 MiB";
    char tried[512];
    gpo_t2_tried(job, res, "block", "beyond the kernel's limit", tried, sizeof tried);
    int64_t one = incumbent_of(job->t2, reduce);
    gpo_t2_verdict v;
    gpo_t2_judge(job, res, "block", one, &v);
    const char *word = gpo_t2_verdict_word(v.what);
    int32_t w = gpo_result_best_index(res), r = gpo_result_runner_index(res), i = v.incumbent;
    int64_t win = gpo_t2_value(res, w, "block"), pick = gpo_t2_value(res, v.pick, "block");
    const gpo_stats *ws = gpo_result_stats(res, w);
    const gpo_stats *is = i >= 0 ? gpo_result_stats(res, i) : NULL;
    char wt[32], it[32], next[96] = "";
    gpo_format_ns(ws->median, wt, sizeof wt);
    if (is)
        gpo_format_ns(is->median, it, sizeof it);
    if (r >= 0 && r != i) {
        char rt[32];
        gpo_format_ns(gpo_result_stats(res, r)->median, rt, sizeof rt);
        gpo_snprintf(next, sizeof next, " (next best %lld: %s)",
                     (long long)gpo_t2_value(res, r, "block"), rt);
    }
    if (v.what == GPO_T2_NOT_MEASURED)
        return gpo_t2_knob(job, "int", knob, pick,
                           "%s: tier 1's groups of %lld stand; %s ran with them in %s, and the "
                           "time budget ran out before another size ran; sizes: %s; noise: %s",
                           word, (long long)pick, what, it, tried, v.noise);
    if (v.kept)
        return gpo_t2_knob(job, "int", knob, pick,
                           "%s: %s ran with groups of %lld against tier 1's %lld: %s; tier "
                           "1's size kept; sizes: %s; noise: %s",
                           word, what, (long long)win, (long long)one, v.gain, tried, v.noise);
    if (v.what == GPO_T2_WITHIN_NOISE)
        return gpo_t2_knob(job, "int", knob, pick,
                           "%s: %s ran with groups of %lld (tier 1's size) in %s; of the %d "
                           "other sizes measured none beat it beyond noise side by side%s; "
                           "sizes: %s; noise: %s",
                           word, what, (long long)pick, wt, (int)v.others, next, tried, v.noise);
    if (is)
        return gpo_t2_knob(job, "int", knob, pick,
                           "%s: %s ran fastest with groups of %lld: %s against %s for tier 1's "
                           "%lld side by side (x%.2f); sizes: %s; noise: %s",
                           word, what, (long long)pick, wt, it, (long long)one,
                           ws->median > 0 ? is->median / ws->median : 0.0, tried, v.noise);
    return gpo_t2_knob(job, "int", knob, pick,
                       "%s: %s ran fastest with groups of %lld (%s); sizes: %s; noise: %s", word,
                       what, (long long)pick, wt, tried, v.noise);
}

const gpo_t2_bench gpo_t2_bench_stream = {
    "block_stream", 0.30, describe, setup, teardown, prepare, run, check, knobs,
};
const gpo_t2_bench gpo_t2_bench_reduce = {
    "block_reduce", 0.35, describe, setup, teardown, prepare, run, check, knobs,
};
