/* The runtime-ops session tier 2's device benchmarks share (bench.h):
 * opened and its kernels built only when a benchmark measures, so a plan
 * answered from the cache touches no driver beyond discovery. Opening and
 * building count against the tier's budget (PoCL: about 50 ms with its
 * kernel cache warm, about 1 s cold). */
#include <assert.h>
#include <stdlib.h>

#include "tier2/bench.h"

gpuopt_status gpo_t2_session(gpo_t2_rt *g)
{
    assert(g->ops);
    if (g->reduce)
        return GPUOPT_OK;
    const gpo_runtime_ops *o = g->ops;
    uint64_t t0 = gpo_now_ns();
    gpuopt_status st = GPUOPT_OK;
    if (!g->rt) {
        st = o->open(g->state, g->route, &g->rt);
        g->open_ms = (double)(gpo_now_ns() - t0) / 1e6;
        if (st)
            return st;
    }
    if (!g->prog) {
        char *log = NULL;
        t0 = gpo_now_ns();
        st = o->program_build(g->rt, g->source, "", &g->prog, &log);
        g->build_ms = (double)(gpo_now_ns() - t0) / 1e6;
        free(log);
        if (st)
            return st;
    }
    if (!g->copy)
        st = o->kernel_create(g->rt, g->prog, "gpo_t2_copy", &g->copy);
    if (!st && !g->empty)
        st = o->kernel_create(g->rt, g->prog, "gpo_t2_empty", &g->empty);
    if (!st)
        st = o->kernel_create(g->rt, g->prog, "gpo_t2_reduce", &g->reduce);
    return st;
}

void gpo_t2_session_close(gpo_t2_rt *g)
{
    if (!g->rt)
        return;
    g->ops->kernel_free(g->rt, g->copy);
    g->ops->kernel_free(g->rt, g->empty);
    g->ops->kernel_free(g->rt, g->reduce);
    g->ops->program_free(g->rt, g->prog);
    g->ops->close(g->rt);
    g->rt = NULL;
}
