/* The fixed cost of one host-device copy: blocking writes (host to device)
 * and reads (device to host) of 4 KiB, on the host clock, from pinned
 * memory where the runtime has it (else malloc'd memory). A copy this small
 * is all overhead (the call, the DMA set-up, the completion wake-up), so its
 * time is what every transfer of a step pays once on top of bytes / rate
 * (bench_transfer.c): the latency advice adds the two (src/latency.c). */
#include <stdlib.h>
#include <string.h>

#include "tier2/bench.h"
#include "util/strutil.h"

#define BYTES 4096u

typedef struct copy {
    gpo_rt_buf *buf;
    void *host;
    int pinned, to_device;
} copy;

static const char *const dirs[2] = {"h2d", "d2h"};
static const char *const knob_names[2] = {"measured.h2d_latency_ns", "measured.d2h_latency_ns"};
static const char *const dir_words[2] = {"host-to-device", "device-to-host"};

static gpuopt_status describe(gpo_t2 *t2, gpo_t2_job *job)
{
    const gpo_runtime_ops *o = t2->rt.ops;
    if (!o || !o->buffer_write || !o->buffer_read)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "the runtime ops cannot copy to and from the "
                                                "device");
    gpo_snprintf(job->workload, sizeof job->workload,
                 "blocking write and read;bytes=%u;%s;host "
                 "clock",
                 BYTES, gpo_t2_has_pinned(o) ? "pinned" : "pageable");
    job->timing = (gpo_timing_settings){1.0, 0, 20, 300, 20, 0};
    job->repeat_share = 0.8;
    job->remeasure_changed = job->measure_all = 1;
    gpuopt_status st = gpuopt_space_create(&job->space);
    if (!st)
        st = gpuopt_space_add_enum(job->space, "dir", dirs, 2);
    return st;
}

static void teardown(gpo_t2_job *job)
{
    const gpo_t2_rt *g = &job->t2->rt;
    copy *c = job->state;
    if (c && g->rt) {
        if (c->pinned && c->host)
            g->ops->host_free_pinned(g->rt, c->host);
        if (c->buf)
            g->ops->buffer_free(g->rt, c->buf);
    }
    if (c && !c->pinned)
        free(c->host);
    free(c);
    job->state = NULL;
}

static gpuopt_status setup(gpo_t2_job *job)
{
    gpo_t2_rt *g = &job->t2->rt;
    gpuopt_status st = gpo_t2_session(g);
    if (st)
        return st;
    copy *c = calloc(1, sizeof *c);
    if (!(job->state = c))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 copy latency: out of memory");
    st = g->ops->buffer_alloc(g->rt, BYTES, &c->buf);
    if (st)
        return st;
    if (gpo_t2_has_pinned(g->ops)) {
        st = g->ops->host_alloc_pinned(g->rt, BYTES, &c->host);
        c->pinned = st == GPUOPT_OK;
        if (st)
            return st;
    } else if (!(c->host = malloc(BYTES))) {
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 copy latency: out of memory");
    }
    memset(c->host, 0x5a, BYTES);
    return GPUOPT_OK;
}

static gpuopt_status prepare(gpo_t2_job *job, const gpuopt_point *p)
{
    copy *c = job->state;
    const char *dir = "";
    gpuopt_point_get_text(p, "dir", &dir);
    c->to_device = strcmp(dir, "h2d") == 0;
    return GPUOPT_OK;
}

static gpuopt_status run(gpo_t2_job *job, double *ns)
{
    const gpo_t2_rt *g = &job->t2->rt;
    copy *c = job->state;
    uint64_t t0 = gpo_now_ns();
    gpuopt_status st = c->to_device ? g->ops->buffer_write(g->rt, c->buf, 0, c->host, BYTES)
                                    : g->ops->buffer_read(g->rt, c->buf, 0, c->host, BYTES);
    *ns = (double)(gpo_now_ns() - t0);
    return st;
}

static gpuopt_status knobs(gpo_t2_job *job, const gpuopt_result *res)
{
    const char *memory = gpo_t2_has_pinned(job->t2->rt.ops) ? "pinned" : "pageable (malloc)";
    gpuopt_status st = GPUOPT_OK;
    for (int32_t i = 0; i < gpo_result_count_of(res) && !st; i++) {
        const char *dir = "";
        gpuopt_point_get_text(gpo_result_point(res, i), "dir", &dir);
        int d = strcmp(dir, "h2d") != 0;
        const gpo_stats *s = gpo_result_stats(res, i);
        char med[32], lo[32], hi[32];
        gpo_format_ns(s->median, med, sizeof med);
        gpo_format_ns(s->p20, lo, sizeof lo);
        gpo_format_ns(s->p80, hi, sizeof hi);
        st = gpo_t2_knob(job, "int", knob_names[d], (int64_t)(s->median + 0.5),
                         "a blocking %s copy of 4 KiB from %s host memory took %s on the host "
                         "clock (median of %d copies, p20-p80 %s-%s): the fixed cost every "
                         "transfer pays",
                         dir_words[d], memory, med, (int)s->count, lo, hi);
    }
    return st;
}

const gpo_t2_bench gpo_t2_bench_copy = {
    "copy_latency", 0.05, describe, setup, teardown, prepare, run, NULL, knobs,
};
