/* The best group (block, work-group) size for a streaming kernel and for a
 * reduction, measured: powers-of-two multiples of launch.block_multiple up
 * to the device's limit (and each kernel's, kernel_max_group), swept from
 * tier 1's launch.block_size outwards. Tier 1's value is the incumbent: a
 * size replaces it only by beating it beyond noise side by side (tier2.h).
 *
 * Streaming: the copy kernel over 16 MiB, one element per work-item.
 * Reduction: 16 Ki work-items, each summing a grid-stride share of 64 of
 * 1 Mi ones, then a local-memory tree per group (the first pass of a
 * two-pass reduction); the group size sets how many groups share the
 * work. Every size's result is checked once before it may win. */
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tier2/t2_generic.h"

#define BYTES (16u << 20)
#define N (BYTES / 4)
/* The reduction: 1 Mi integers (a quarter of the copy's bytes: on a CPU
 * device a badly sized reduction is slow enough to dominate the budget). */
#define RN (1u << 20)
#define ITEMS (RN / 64)
#define MAX_CANDIDATES 16

typedef struct grp_ctx {
    gpo_t2_rt *g;
    gpo_t2 *t2;
    int reduce;
    gpo_rt_buf *in, *out;
    size_t groups; /* reduction: groups of the prepared size */
    size_t kmax;   /* the kernel's limit */
    size_t local;  /* prepared */
    int64_t checked[MAX_CANDIDATES];
    int n_checked;
    uint32_t *partial;
} grp_ctx;

static gpuopt_status grp_launch(grp_ctx *c, double *ns)
{
    size_t global = (c->reduce ? ITEMS : N + c->local - 1) / c->local * c->local;
    size_t g3[3] = {global, 1, 1}, l3[3] = {c->local, 1, 1};
    return c->g->ops->launch(c->g->rt, c->reduce ? c->g->reduce : c->g->copy, 1, g3, l3, ns);
}

static gpuopt_status grp_run(void *user, double *ns)
{
    return grp_launch(user, ns);
}

/* A reduction size's result, once: the partial sums must add up to N. */
static gpuopt_status check_sum(grp_ctx *c, int64_t v)
{
    for (int i = 0; i < c->n_checked; i++)
        if (c->checked[i] == v)
            return GPUOPT_OK;
    double ns;
    const gpo_runtime_ops *o = c->g->ops;
    gpuopt_status st = grp_launch(c, &ns);
    if (!st)
        st = o->buffer_read(c->g->rt, c->out, 0, c->partial, c->groups * sizeof *c->partial);
    if (st)
        return st;
    uint64_t sum = 0;
    for (size_t i = 0; i < c->groups; i++)
        sum += c->partial[i];
    if (sum != RN)
        return gpo_fail(GPUOPT_ERR_LAUNCH,
                        "%s: the reduction kernel with groups of %lld summed %u ones to %llu: the "
                        "device computes wrong results",
                        c->t2->backend, (long long)v, (unsigned)RN, (unsigned long long)sum);
    if (c->n_checked < MAX_CANDIDATES)
        c->checked[c->n_checked++] = v;
    return GPUOPT_OK;
}

static gpuopt_status grp_prepare(void *user, int64_t v)
{
    grp_ctx *c = user;
    if (v < 1 || (size_t)v > c->kmax || (c->reduce && (size_t)v > ITEMS))
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the kernel runs at most %zu work-items per "
                        "group",
                        c->t2->backend, c->kmax);
    c->local = (size_t)v;
    if (!c->reduce)
        return GPUOPT_OK;
    c->groups = ITEMS / c->local;
    gpuopt_status st =
        c->g->ops->kernel_set_local(c->g->rt, c->g->reduce, 3, (size_t)v * sizeof(uint32_t));
    return st ? st : check_sum(c, v);
}

static int64_t incumbent_of(const gpo_t2_rt *g, int reduce)
{
    int64_t v = g->block;
    if (reduce) /* the tree needs a power of two: the one at or below */
        while (v & (v - 1))
            v &= v - 1;
    return v;
}

static int32_t candidates(gpo_t2 *t2, gpo_t2_rt *g, int reduce, int64_t *out)
{
    int64_t limit = gpo_t2_rt_max_group(t2);
    uint64_t shared = t2->dev->info.shared_mem_per_block;
    if (reduce && shared && (int64_t)(shared / 4) < limit)
        limit = (int64_t)(shared / 4);
    return gpo_t2_ladder(g->multiple, limit, incumbent_of(g, reduce), reduce, out, MAX_CANDIDATES);
}

static gpuopt_status describe(gpo_t2 *t2, void *user, int reduce, char *workload, size_t wcap,
                              char *space, size_t scap)
{
    gpo_t2_rt *g = user;
    int64_t v[MAX_CANDIDATES];
    int32_t n = candidates(t2, g, reduce, v);
    if (n < 1)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "no %sgroup size is a multiple of %lld within the device's limit",
                        reduce ? "power-of-two " : "", (long long)g->multiple);
    char list[256];
    gpo_t2_ladder_text(v, n, list, sizeof list);
    if (reduce)
        gpo_snprintf(workload, wcap, "reduce u32;n=%u;items=%u;incumbent=%lld", (unsigned)RN,
                     (unsigned)ITEMS, (long long)incumbent_of(g, 1));
    else
        gpo_snprintf(workload, wcap, "copy u32;bytes=%u;incumbent=%lld", BYTES,
                     (long long)incumbent_of(g, 0));
    gpo_snprintf(space, scap, "int block %s", list);
    return GPUOPT_OK;
}

static gpuopt_status ctx_open(gpo_t2 *t2, gpo_t2_rt *g, int reduce, grp_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->g = g;
    c->t2 = t2;
    c->reduce = reduce;
    gpuopt_status st = gpo_t2_rt_session(g);
    if (st)
        return st;
    const gpo_runtime_ops *o = g->ops;
    gpo_rt_kernel *k = reduce ? g->reduce : g->copy;
    st = o->kernel_max_group(g->rt, k, &c->kmax);
    if (!st)
        st = o->buffer_alloc(g->rt, BYTES, &c->in);
    if (st)
        return st;
    uint32_t n = reduce ? RN : N;
    if (!reduce) {
        st = o->buffer_alloc(g->rt, BYTES, &c->out);
        if (!st)
            st = o->kernel_set_buffer(g->rt, k, 0, c->in);
        if (!st)
            st = o->kernel_set_buffer(g->rt, k, 1, c->out);
        if (!st)
            st = o->kernel_set_scalar(g->rt, k, 2, &n, sizeof n);
        return st;
    }
    /* Partial sums: at most one per work-item. */
    size_t most = ITEMS;
    uint32_t *ones = malloc(RN * sizeof *ones);
    c->partial = malloc(most * sizeof *c->partial);
    if (!ones || !c->partial) {
        free(ones);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 reduction: out of memory");
    }
    for (size_t i = 0; i < RN; i++)
        ones[i] = 1;
    st = o->buffer_write(g->rt, c->in, 0, ones, RN * sizeof *ones);
    free(ones);
    if (!st)
        st = o->buffer_alloc(g->rt, most * sizeof(uint32_t), &c->out);
    if (!st)
        st = o->kernel_set_buffer(g->rt, k, 0, c->in);
    if (!st)
        st = o->kernel_set_buffer(g->rt, k, 1, c->out);
    if (!st)
        st = o->kernel_set_scalar(g->rt, k, 2, &n, sizeof n);
    return st;
}

static void ctx_close(grp_ctx *c)
{
    if (c->g && c->g->rt) {
        c->g->ops->buffer_free(c->g->rt, c->in);
        c->g->ops->buffer_free(c->g->rt, c->out);
    }
    free(c->partial);
}

static gpuopt_status sweep_of(gpo_t2 *t2, gpo_t2_rt *g, int reduce, grp_ctx *c, int64_t *v,
                              gpo_t2_sweep *s)
{
    gpuopt_status st = ctx_open(t2, g, reduce, c);
    memset(s, 0, sizeof *s);
    s->param = "block";
    s->values = v;
    s->n = candidates(t2, g, reduce, v);
    s->incumbent = incumbent_of(g, reduce);
    s->prepare = grp_prepare;
    s->run = grp_run;
    s->user = c;
    return st;
}

static gpuopt_status measure(gpo_t2 *t2, gpo_t2_job *job, void *user, int reduce)
{
    gpo_t2_rt *g = user;
    grp_ctx c;
    int64_t v[MAX_CANDIDATES];
    gpo_t2_sweep s;
    gpo_t2_sweep_result r;
    gpuopt_status st = sweep_of(t2, g, reduce, &c, v, &s);
    if (!st)
        st = gpo_t2_sweep_run(t2, job, &s, &r);
    if (st)
        goto out;
    const char *knob = reduce ? "launch.reduce_block_size" : "launch.block_size";
    const char *what =
        reduce ? "a reduction of 1 Mi integers by 16 Ki work-items" : "a copy kernel over 16 MiB";
    char w[32], i[32], ru[32];
    gpo_t2_fmt_ns(r.winner_st.median, w, sizeof w);
    gpo_t2_fmt_ns(r.incumbent_st.median, i, sizeof i);
    gpo_t2_fmt_ns(r.runner_st.median, ru, sizeof ru);
    if (r.incumbent_won)
        st = gpo_t2_job_knob_int(job, knob, r.winner,
                                 "measured: %s ran with groups of %lld (tier 1's size) in %s; no "
                                 "other size beat it beyond noise side by side (next best %lld: "
                                 "%s); sizes tried: %s",
                                 what, (long long)r.winner, w, (long long)r.runner, ru, r.tried);
    else if (r.incumbent_st.count > 0)
        st = gpo_t2_job_knob_int(
            job, knob, r.winner,
            "measured: %s ran fastest with groups of %lld: %s against %s for "
            "tier 1's %lld side by side (x%.2f); sizes tried: %s",
            what, (long long)r.winner, w, i, (long long)s.incumbent,
            r.winner_st.median > 0 ? r.incumbent_st.median / r.winner_st.median : 0.0, r.tried);
    else
        st = gpo_t2_job_knob_int(job, knob, r.winner,
                                 "measured: %s ran fastest with groups of %lld (%s); sizes tried: "
                                 "%s",
                                 what, (long long)r.winner, w, r.tried);
out:
    ctx_close(&c);
    return st;
}

static gpuopt_status verify(gpo_t2 *t2, gpo_t2_job *job, void *user, int *keep, int reduce)
{
    grp_ctx c;
    int64_t v[MAX_CANDIDATES];
    gpo_t2_sweep s;
    gpuopt_status st = sweep_of(t2, user, reduce, &c, v, &s);
    if (!st)
        st = gpo_t2_sweep_verify(job, &s, keep);
    ctx_close(&c);
    return st;
}

static gpuopt_status stream_describe(gpo_t2 *t2, void *user, char *w, size_t wc, char *s, size_t sc)
{
    return describe(t2, user, 0, w, wc, s, sc);
}

static gpuopt_status stream_measure(gpo_t2 *t2, gpo_t2_job *job, void *user)
{
    return measure(t2, job, user, 0);
}

static gpuopt_status stream_verify(gpo_t2 *t2, gpo_t2_job *job, void *user, int *keep)
{
    return verify(t2, job, user, keep, 0);
}

static gpuopt_status reduce_describe(gpo_t2 *t2, void *user, char *w, size_t wc, char *s, size_t sc)
{
    return describe(t2, user, 1, w, wc, s, sc);
}

static gpuopt_status reduce_measure(gpo_t2 *t2, gpo_t2_job *job, void *user)
{
    return measure(t2, job, user, 1);
}

static gpuopt_status reduce_verify(gpo_t2 *t2, gpo_t2_job *job, void *user, int *keep)
{
    return verify(t2, job, user, keep, 1);
}

const gpo_t2_bench gpo_t2_bench_stream = {"block_stream", 0.30, stream_describe, stream_measure,
                                          stream_verify};
const gpo_t2_bench gpo_t2_bench_reduce = {"block_reduce", 0.35, reduce_describe, reduce_measure,
                                          reduce_verify};
