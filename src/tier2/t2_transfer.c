/* Host-device transfers: blocking writes (host to device) and reads
 * (device to host) of 16 MiB from ordinary malloc'd memory and from the
 * runtime's page-locked memory, on the host clock. `transfer.pinned` is
 * true when pinned memory beats pageable beyond noise in one direction
 * and loses in neither: staging through pinned buffers pays only then
 * (NVIDIA CUDA C++ Best Practices Guide, "Pinned Memory"; AMD ROCm HIP
 * documentation, "Host memory": pinned is faster for transfers but scarce,
 * so it is advice a measurement should back). */
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tier2/t2_generic.h"

#define BYTES (16u << 20)
#define MIN_RUNS 5
#define MAX_RUNS 15

typedef struct xfer_ctx {
    gpo_t2_rt *g;
    gpo_rt_buf *buf;
    void *host;
    int to_device;
} xfer_ctx;

static gpuopt_status xfer_run(void *user, double *ns)
{
    xfer_ctx *c = user;
    const gpo_runtime_ops *o = c->g->ops;
    uint64_t t0 = gpo_now_ns();
    gpuopt_status st = c->to_device ? o->buffer_write(c->g->rt, c->buf, 0, c->host, BYTES)
                                    : o->buffer_read(c->g->rt, c->buf, 0, c->host, BYTES);
    *ns = (double)(gpo_now_ns() - t0);
    return st;
}

static int has_pinned(const gpo_runtime_ops *o)
{
    return o->host_alloc_pinned && o->host_free_pinned;
}

static gpuopt_status xfer_describe(gpo_t2 *t2, void *user, char *workload, size_t wcap, char *space,
                                   size_t scap)
{
    (void)t2;
    (void)space;
    (void)scap;
    gpo_t2_rt *g = user;
    if (!g->ops->buffer_write || !g->ops->buffer_read)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "the runtime ops cannot copy to and from the "
                                                "device");
    gpo_snprintf(workload, wcap, "blocking write and read;bytes=%u;pinned=%s;host clock", BYTES,
                 has_pinned(g->ops) ? "yes" : "no");
    return GPUOPT_OK;
}

static const char *const dir_words[2] = {"device-to-host", "host-to-device"};
static const char *const knob_names[2][2] = {
    {"measured.d2h_pageable", "measured.d2h_pinned"},
    {"measured.h2d_pageable", "measured.h2d_pinned"},
};

static gpuopt_status xfer_measure(gpo_t2 *t2, gpo_t2_job *job, void *user)
{
    (void)t2;
    gpo_t2_rt *g = user;
    const gpo_runtime_ops *o = g->ops;
    gpuopt_status st = gpo_t2_rt_session(g);
    if (st)
        return st;
    int kinds = has_pinned(o) ? 2 : 1;
    void *host[2] = {malloc(BYTES), NULL};
    gpo_rt_buf *buf = NULL;
    gpo_stats s[2][2]; /* [to_device][pinned] */
    if (!host[0]) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 transfers: out of memory");
        goto out;
    }
    memset(host[0], 0x5a, BYTES); /* fault the pages in: paging is not the transfer */
    st = o->buffer_alloc(g->rt, BYTES, &buf);
    if (!st && kinds == 2) {
        st = o->host_alloc_pinned(g->rt, BYTES, &host[1]);
        if (!st)
            memset(host[1], 0x5a, BYTES);
    }
    if (st)
        goto out;
    /* Interleaved by kind so a drift of the machine's load hits both. */
    for (int dir = 1; dir >= 0 && !st; dir--) {
        for (int k = 0; k < kinds && !st; k++) {
            xfer_ctx c = {g, buf, host[k], dir};
            int left_subjects = dir * kinds + (kinds - k);
            gpo_timing_settings t = {
                0, gpo_t2_job_left_ms(job) * 0.8 / left_subjects, MIN_RUNS, MAX_RUNS, MIN_RUNS, 0};
            st = gpo_measure_time(xfer_run, &c, &t, 0, &s[dir][k], NULL);
        }
    }
    if (st)
        goto out;
    double rate[2][2];
    char rs[2][2][32];
    for (int dir = 0; dir < 2 && !st; dir++) {
        for (int k = 0; k < kinds && !st; k++) {
            rate[dir][k] = s[dir][k].median > 0 ? BYTES / s[dir][k].median * 1e9 : 0;
            gpo_t2_fmt_rate(rate[dir][k], rs[dir][k], sizeof rs[dir][k]);
            st = gpo_t2_job_knob_int(job, knob_names[dir][k], (int64_t)rate[dir][k],
                                     "%s copies of 16 MiB from %s host memory: %s (median of %d "
                                     "blocking copies)",
                                     dir_words[dir], k ? "pinned" : "pageable (malloc)", rs[dir][k],
                                     (int)s[dir][k].count);
        }
    }
    if (st || kinds < 2)
        goto out;
    int wins = 0, losses = 0;
    for (int dir = 0; dir < 2; dir++) {
        wins += gpo_stats_beats(&s[dir][0], &s[dir][1], GPO_NOISE_FLOOR);
        losses += gpo_stats_beats(&s[dir][1], &s[dir][0], GPO_NOISE_FLOOR);
    }
    int pinned = wins > 0 && losses == 0;
    double up = rate[1][0] > 0 ? rate[1][1] / rate[1][0] : 0;
    double down = rate[0][0] > 0 ? rate[0][1] / rate[0][0] : 0;
    st = gpo_t2_job_knob_bool(
        job, "transfer.pinned", pinned,
        "pinned host memory moved %s host-to-device against %s pageable (x%.2f) and %s "
        "device-to-host against %s (x%.2f): %s",
        rs[1][1], rs[1][0], up, rs[0][1], rs[0][0], down,
        pinned   ? "faster beyond noise, stage transfers through pinned buffers"
        : losses ? "slower beyond noise in one direction, keep pageable memory"
                 : "within noise, pinned memory (scarce, slow to allocate) does not pay");
out:
    if (host[1])
        o->host_free_pinned(g->rt, host[1]);
    o->buffer_free(g->rt, buf);
    free(host[0]);
    return st;
}

const gpo_t2_bench gpo_t2_bench_transfer = {"transfer", 0.15, xfer_describe, xfer_measure, NULL};
