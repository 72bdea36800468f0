/* Host-device transfers: blocking writes (host to device) and reads
 * (device to host) of 16 MiB from ordinary malloc'd memory and from the
 * runtime's page-locked memory, on the host clock; the four kinds are one
 * space, measured in turn so a drift of the machine's load hits all.
 * `transfer.pinned` is true when pinned memory beats pageable beyond noise
 * in one direction and loses in neither: staging through pinned buffers
 * pays only then (NVIDIA CUDA C++ Best Practices Guide, "Pinned Memory";
 * AMD ROCm HIP documentation, "Host memory": pinned is faster for
 * transfers but scarce, so it is advice a measurement should back). */
#include <stdlib.h>
#include <string.h>

#include "tier2/bench.h"
#include "util/strutil.h"

#define BYTES (16u << 20)

typedef struct xfer {
    gpo_rt_buf *buf;
    void *host[2]; /* pageable, pinned */
    int to_device, pinned;
} xfer;

static const char *const dirs[2] = {"h2d", "d2h"}, *const kinds[2] = {"pageable", "pinned"};
static const char *const dir_words[2] = {"host-to-device", "device-to-host"};
static const char *const knob_names[2][2] = {
    {"measured.h2d_pageable", "measured.h2d_pinned"},
    {"measured.d2h_pageable", "measured.d2h_pinned"},
};

static gpuopt_status describe(gpo_t2 *t2, gpo_t2_job *job)
{
    const gpo_runtime_ops *o = t2->rt.ops;
    if (!o || !o->buffer_write || !o->buffer_read)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "the runtime ops cannot copy to and from the "
                                                "device");
    gpo_snprintf(job->workload, sizeof job->workload,
                 "blocking write and read;bytes=%u;pinned=%s;host clock", BYTES,
                 gpo_t2_has_pinned(o) ? "yes" : "no");
    job->timing = (gpo_timing_settings){0, 0, 5, 15, 5, 0};
    job->repeat_share = 0.8;
    job->remeasure_changed = job->measure_all = 1;
    gpuopt_status st = gpuopt_space_create(&job->space);
    if (!st)
        st = gpuopt_space_add_enum(job->space, "dir", dirs, 2);
    if (!st)
        st = gpuopt_space_add_enum(job->space, "memory", kinds, gpo_t2_has_pinned(o) ? 2 : 1);
    return st;
}

static void teardown(gpo_t2_job *job)
{
    const gpo_t2_rt *g = &job->t2->rt;
    xfer *c = job->state;
    if (c && g->rt) {
        if (c->host[1])
            g->ops->host_free_pinned(g->rt, c->host[1]);
        g->ops->buffer_free(g->rt, c->buf);
    }
    if (c)
        free(c->host[0]);
    free(c);
    job->state = NULL;
}

static gpuopt_status setup(gpo_t2_job *job)
{
    gpo_t2_rt *g = &job->t2->rt;
    gpuopt_status st = gpo_t2_session(g);
    if (st)
        return st;
    xfer *c = calloc(1, sizeof *c);
    if (!(job->state = c) || !(c->host[0] = malloc(BYTES)))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 transfers: out of memory");
    memset(c->host[0], 0x5a, BYTES); /* fault the pages in: paging is not the transfer */
    st = g->ops->buffer_alloc(g->rt, BYTES, &c->buf);
    if (!st && gpo_t2_has_pinned(g->ops)) {
        st = g->ops->host_alloc_pinned(g->rt, BYTES, &c->host[1]);
        if (!st)
            memset(c->host[1], 0x5a, BYTES);
    }
    return st;
}

static gpuopt_status prepare(gpo_t2_job *job, const gpuopt_point *p)
{
    xfer *c = job->state;
    const char *dir = "", *memory = "";
    gpuopt_point_get_text(p, "dir", &dir);
    gpuopt_point_get_text(p, "memory", &memory);
    c->to_device = strcmp(dir, "h2d") == 0;
    c->pinned = strcmp(memory, "pinned") == 0;
    return GPUOPT_OK;
}

static gpuopt_status run(gpo_t2_job *job, double *ns)
{
    const gpo_t2_rt *g = &job->t2->rt;
    xfer *c = job->state;
    void *host = c->host[c->pinned];
    uint64_t t0 = gpo_now_ns();
    gpuopt_status st = c->to_device ? g->ops->buffer_write(g->rt, c->buf, 0, host, BYTES)
                                    : g->ops->buffer_read(g->rt, c->buf, 0, host, BYTES);
    *ns = (double)(gpo_now_ns() - t0);
    return st;
}

static gpuopt_status knobs(gpo_t2_job *job, const gpuopt_result *res)
{
    int kinds_n = gpo_t2_has_pinned(job->t2->rt.ops) ? 2 : 1;
    const gpo_stats *s[2][2] = {{NULL, NULL}, {NULL, NULL}}; /* [dir][pinned] */
    double rate[2][2] = {{0, 0}, {0, 0}};
    char rs[2][2][32];
    gpuopt_status st = GPUOPT_OK;
    for (int32_t i = 0; i < gpo_result_count_of(res); i++) {
        const char *dir = "", *memory = "";
        gpuopt_point_get_text(gpo_result_point(res, i), "dir", &dir);
        gpuopt_point_get_text(gpo_result_point(res, i), "memory", &memory);
        s[strcmp(dir, "h2d") != 0][strcmp(memory, "pinned") == 0] = gpo_result_stats(res, i);
    }
    for (int d = 0; d < 2 && !st; d++)
        for (int k = 0; k < kinds_n && !st; k++) {
            rate[d][k] = s[d][k]->median > 0 ? BYTES / s[d][k]->median * 1e9 : 0;
            gpo_format_rate(rate[d][k], rs[d][k], sizeof rs[d][k]);
            st = gpo_t2_knob(job, "int", knob_names[d][k], (int64_t)rate[d][k],
                             "%s copies of 16 MiB from %s host memory: %s (median of %d "
                             "blocking copies)",
                             dir_words[d], k ? "pinned" : "pageable (malloc)", rs[d][k],
                             (int)s[d][k]->count);
        }
    if (st || kinds_n < 2)
        return st;
    int wins = 0, losses = 0;
    for (int d = 0; d < 2; d++) {
        wins += gpo_stats_beats(s[d][0], s[d][1], GPO_NOISE_FLOOR);
        losses += gpo_stats_beats(s[d][1], s[d][0], GPO_NOISE_FLOOR);
    }
    int pinned = wins > 0 && losses == 0;
    double up = rate[0][0] > 0 ? rate[0][1] / rate[0][0] : 0;
    double down = rate[1][0] > 0 ? rate[1][1] / rate[1][0] : 0;
    return gpo_t2_knob(
        job, "bool", "transfer.pinned", pinned,
        "pinned host memory moved %s host-to-device against %s pageable (x%.2f) and %s "
        "device-to-host against %s (x%.2f): %s",
        rs[0][1], rs[0][0], up, rs[1][1], rs[1][0], down,
        pinned   ? "faster beyond noise, stage transfers through pinned buffers"
        : losses ? "slower beyond noise in one direction, keep pageable memory"
                 : "within noise, pinned memory (scarce, slow to allocate) does not pay");
}

const gpo_t2_bench gpo_t2_bench_transfer = {
    "transfer", 0.15, describe, setup, teardown, prepare, run, NULL, knobs,
};
