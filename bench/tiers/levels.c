/* Levels 0, 1 and 2 on a real workload (issue 5 item 8), on the first
 * OpenCL device (PoCL's CPU device here):
 *
 *   bench_tiers [REPEATS]      everything below
 *   bench_tiers decide         steps 1 and 2 only (the first decision's time)
 *
 * 1. The level-1 plan of a known device, in process: plan create + destroy
 *    on an existing context, 2000 times.
 * 2. Level 2 decided the first time (an empty tuning cache), then from the
 *    cache: the whole level-2 plan on the same context, 300 times, and the
 *    tier-2 part (level-2 plan minus level-1 plan, medians).
 * 3. The SGEMM and the 1-D stencil of bench/tiers/ built with each level's
 *    build options (gpuopt_plan_to_build_options) and launched with its
 *    work-group size (launch.block_size: the stencil's group, the SGEMM's
 *    split into columns x rows), timed by device events, the levels
 *    interleaved round by round (rotated) REPEATS times; median, p20, p80
 *    per level and the speed-up of each over level 0. Twice: plans without
 *    a workload ("precise"), and plans for a workload that accepts reduced
 *    precision ("relaxed"), where level 1 adds fast-math build options.
 *
 * Output: one "name value..." line per figure (bench/run.sh tiers turns
 * them into the tables of docs/benchmarks.md). The cache is a fresh
 * directory under /tmp, removed at exit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "device.h"
#include "util/strutil.h"

#define SGEMM_N 512
#define STENCIL_N (8 << 20)

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double q(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    double pos = p * (n - 1);
    int lo = (int)pos;
    return lo + 1 < n ? v[lo] + (v[lo + 1] - v[lo]) * (pos - lo) : v[lo];
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return gpo_strdup(buf);
}

static int die(const char *what)
{
    fprintf(stderr, "bench_tiers: %s: %s\n", what, gpuopt_last_error());
    exit(1);
}

typedef struct level {
    int64_t block;
    char *options;
    gpo_rt_prog *prog[2];
    gpo_rt_kernel *k[2];
    double *ms[2];
} level;

static int64_t knob_int(gpuopt_plan *p, const char *name)
{
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    return gpuopt_plan_knob_find(p, name, &k) == GPUOPT_OK ? k.int_value : 0;
}

/* launch.block_size as columns x rows: square-ish powers of two, columns
 * the larger; a size that is not a power of two stays one row. */
static void split(int64_t block, size_t *cols, size_t *rows)
{
    *cols = (size_t)block;
    *rows = 1;
    if (block & (block - 1))
        return;
    while (*cols > *rows * 2) {
        *cols /= 2;
        *rows *= 2;
    }
}

/* The SGEMM and the stencil with the settings of levels 0, 1 and 2 for
 * workload `wl` (NULL: none), side by side. */
static void workloads(gpuopt_context *ctx, gpuopt_device *dev, const gpuopt_workload *wl,
                      const char *variant, int repeats)
{
    gpuopt_plan *plan[3] = {NULL, NULL, NULL};
    level lv[3];
    memset(lv, 0, sizeof lv);
    for (int l = 0; l < 3; l++) {
        if (gpuopt_plan_create_for(ctx, dev, l, wl, &plan[l]))
            die("plan");
        lv[l].block = knob_int(plan[l], "launch.block_size");
        if (gpuopt_plan_to_build_options(plan[l], &lv[l].options))
            die("build options");
        size_t c, r;
        split(lv[l].block, &c, &r);
        printf("%s level%d block %lld sgemm_group %zux%zu options \"%s\"\n", variant, l,
               (long long)lv[l].block, c, r, lv[l].options);
    }
    const gpo_route *route = &dev->routes[0];
    const gpo_runtime_ops *ops = route->backend->runtime;
    gpo_rt *rt = NULL;
    if (ops->open(route->backend_state, route, &rt))
        die("session");
    char path[1024];
    static const char *const names[2] = {"sgemm", "stencil"};
    char *src[2];
    for (int w = 0; w < 2; w++) {
        snprintf(path, sizeof path, "%s/%s.cl", GPO_BENCH_TIERS_DIR, names[w]);
        if (!(src[w] = slurp(path)))
            die(path);
        for (int l = 0; l < 3; l++) {
            char *log = NULL;
            if (ops->program_build(rt, src[w], lv[l].options, &lv[l].prog[w], &log) ||
                ops->kernel_create(rt, lv[l].prog[w], names[w], &lv[l].k[w]))
                die(names[w]);
            free(log);
            lv[l].ms[w] = calloc((size_t)repeats, sizeof(double));
        }
    }
    /* Data: SGEMM operands, the stencil's input; checked after the runs. */
    size_t nn = (size_t)SGEMM_N * SGEMM_N;
    float *ha = malloc(nn * 4), *hb = malloc(nn * 4), *hc = malloc(nn * 4);
    float *hin = malloc((size_t)STENCIL_N * 4), *hout = malloc((size_t)STENCIL_N * 4);
    for (size_t i = 0; i < nn; i++) {
        ha[i] = (float)((i * 7) % 13) / 13.0f;
        hb[i] = (float)((i * 5) % 11) / 11.0f;
    }
    for (int i = 0; i < STENCIL_N; i++)
        hin[i] = (float)(i % 101);
    gpo_rt_buf *a, *b, *c, *in, *out;
    if (ops->buffer_alloc(rt, nn * 4, &a) || ops->buffer_alloc(rt, nn * 4, &b) ||
        ops->buffer_alloc(rt, nn * 4, &c) || ops->buffer_alloc(rt, (size_t)STENCIL_N * 4, &in) ||
        ops->buffer_alloc(rt, (size_t)STENCIL_N * 4, &out) ||
        ops->buffer_write(rt, a, 0, ha, nn * 4) || ops->buffer_write(rt, b, 0, hb, nn * 4) ||
        ops->buffer_write(rt, in, 0, hin, (size_t)STENCIL_N * 4))
        die("buffers");
    int n = SGEMM_N, sn = STENCIL_N;
    float alpha = 1.0f, beta = 0.0f;
    for (int l = 0; l < 3; l++) {
        gpo_rt_kernel *k = lv[l].k[0];
        if (ops->kernel_set_scalar(rt, k, 0, &n, sizeof n) ||
            ops->kernel_set_scalar(rt, k, 1, &alpha, sizeof alpha) ||
            ops->kernel_set_buffer(rt, k, 2, a) || ops->kernel_set_buffer(rt, k, 3, b) ||
            ops->kernel_set_scalar(rt, k, 4, &beta, sizeof beta) ||
            ops->kernel_set_buffer(rt, k, 5, c))
            die("sgemm arguments");
        k = lv[l].k[1];
        if (ops->kernel_set_scalar(rt, k, 0, &sn, sizeof sn) ||
            ops->kernel_set_buffer(rt, k, 1, in) || ops->kernel_set_buffer(rt, k, 2, out))
            die("stencil arguments");
    }
    /* Rounds: every level once per workload, the order rotated; the first
     * two rounds warm up (PoCL compiles a work-group function per local
     * size on first launch) and are dropped. */
    for (int r = -2; r < repeats; r++) {
        for (int j = 0; j < 3; j++) {
            int l = (j + (r + 3)) % 3;
            for (int w = 0; w < 2; w++) {
                size_t global[3], local[3];
                uint32_t dims;
                if (w == 0) {
                    split(lv[l].block, &local[0], &local[1]);
                    global[0] = (SGEMM_N + local[0] - 1) / local[0] * local[0];
                    global[1] = (SGEMM_N + local[1] - 1) / local[1] * local[1];
                    dims = 2;
                } else {
                    local[0] = (size_t)lv[l].block;
                    global[0] = (STENCIL_N + local[0] - 1) / local[0] * local[0];
                    dims = 1;
                }
                double ns = 0;
                if (ops->launch(rt, lv[l].k[w], dims, global, local, &ns))
                    die(names[w]);
                if (r >= 0)
                    lv[l].ms[w][r] = ns / 1e6;
            }
        }
    }
    /* The results are right (the last run of each wrote them). */
    if (ops->buffer_read(rt, c, 0, hc, nn * 4) ||
        ops->buffer_read(rt, out, 0, hout, (size_t)STENCIL_N * 4))
        die("read back");
    for (int i = 0; i < 16; i++) {
        int row = (i * 37) % SGEMM_N, col = (i * 91) % SGEMM_N;
        double ref = 0;
        for (int k = 0; k < SGEMM_N; k++)
            ref += (double)ha[row * SGEMM_N + k] * hb[k * SGEMM_N + col];
        if (fabs(ref - hc[row * SGEMM_N + col]) > 1e-3 * fabs(ref) + 1e-3) {
            fprintf(stderr, "bench_tiers: sgemm C[%d][%d] = %g, expected %g\n", row, col,
                    hc[row * SGEMM_N + col], ref);
            exit(1);
        }
        int s = (i * 524287) % STENCIL_N;
        static const float wt[7] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};
        double sref = 0;
        for (int k = -3; k <= 3; k++) {
            int j = s + k < 0 ? 0 : s + k >= STENCIL_N ? STENCIL_N - 1 : s + k;
            sref += wt[k + 3] * hin[j];
        }
        if (fabs(sref - hout[s]) > 1e-3 * fabs(sref) + 1e-3) {
            fprintf(stderr, "bench_tiers: stencil out[%d] = %g, expected %g\n", s, hout[s], sref);
            exit(1);
        }
    }
    for (int w = 0; w < 2; w++) {
        double base = 0, med[3], p20[3], p80[3];
        for (int l = 0; l < 3; l++) {
            med[l] = q(lv[l].ms[w], repeats, 0.5);
            p20[l] = q(lv[l].ms[w], repeats, 0.2);
            p80[l] = q(lv[l].ms[w], repeats, 0.8);
            if (l == 0)
                base = med[l];
            printf("%s %s level%d %.3f %.3f %.3f %.3f\n", variant, names[w], l, med[l], p20[l],
                   p80[l], base / med[l]);
        }
        /* Level 2 against level 1 by the tuner's noise rule (gpo_stats_beats,
         * 2% floor): a difference counts only beyond max(2%, the mean
         * p20-p80 spread). */
        double noise = ((p80[1] - p20[1]) + (p80[2] - p20[2])) / 2;
        if (noise < 0.02 * med[1])
            noise = 0.02 * med[1];
        printf("%s %s level2_vs_level1 %.3f %s\n", variant, names[w], med[1] / med[2],
               med[1] - med[2] > noise   ? "faster"
               : med[2] - med[1] > noise ? "slower"
                                         : "within-noise");
    }

    for (int l = 0; l < 3; l++) {
        gpuopt_free(lv[l].options);
        gpuopt_plan_destroy(plan[l]);
        free(lv[l].ms[0]);
        free(lv[l].ms[1]);
    }
    ops->close(rt);
    free(src[0]);
    free(src[1]);
    free(ha);
    free(hb);
    free(hc);
    free(hin);
    free(hout);
}

int main(int argc, char **argv)
{
    int decide_only = argc > 1 && strcmp(argv[1], "decide") == 0;
    int repeats = argc > 1 && !decide_only ? atoi(argv[1]) : 15;
    if (repeats < 3)
        return 2;
    char dir[] = "/tmp/gpuopt-bench-tiers-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "opencl";
    o.cache_dir = dir;
    o.log_level = "error";
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    gpuopt_plan *plan[3] = {NULL, NULL, NULL};
    if (gpuopt_context_create(&o, &ctx) || gpuopt_device_select(ctx, "opencl:0", &dev))
        die("no OpenCL device");
    printf("device %s\n", dev->info.name);

    /* 1. Level 1, in process, on a known device. */
    enum { PLANS = 2000, CACHED = 300 };
    static double t[PLANS];
    gpuopt_plan *p = NULL;
    if (gpuopt_plan_create(ctx, dev, 1, &p))
        die("level 1");
    gpuopt_plan_destroy(p);
    for (int i = 0; i < PLANS; i++) {
        uint64_t t0 = gpo_now_ns();
        if (gpuopt_plan_create(ctx, dev, 1, &p))
            die("level 1");
        gpuopt_plan_destroy(p);
        t[i] = (double)(gpo_now_ns() - t0) / 1e3;
    }
    double plan1 = q(t, PLANS, 0.5);
    printf("plan1_us %.2f %.2f %.2f\n", plan1, q(t, PLANS, 0.1), q(t, PLANS, 0.9));

    /* 2. Level 2: the first time, then from the cache. */
    uint64_t t0 = gpo_now_ns();
    if (gpuopt_plan_create(ctx, dev, 2, &plan[2]))
        die("level 2");
    printf("decide_first_ms %.1f\n", (double)(gpo_now_ns() - t0) / 1e6);
    int32_t asked, applied;
    gpuopt_plan_level(plan[2], &asked, &applied);
    if (applied != 2) {
        const char *w = "";
        gpuopt_plan_warning_at(plan[2], 0, &w);
        fprintf(stderr, "bench_tiers: level 2 not applied: %s\n", w);
        return 1;
    }
    if (decide_only) {
        printf("level2_block %lld reduce %lld\n", (long long)knob_int(plan[2], "launch.block_size"),
               (long long)knob_int(plan[2], "launch.reduce_block_size"));
        gpuopt_plan_destroy(plan[2]);
        gpuopt_context_destroy(ctx);
        char rm[128];
        snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
        return system(rm) == 0 ? 0 : 1;
    }
    for (int i = 0; i < CACHED; i++) {
        t0 = gpo_now_ns();
        if (gpuopt_plan_create(ctx, dev, 2, &p))
            die("level 2 from the cache");
        gpuopt_plan_destroy(p);
        t[i] = (double)(gpo_now_ns() - t0) / 1e3;
    }
    double plan2 = q(t, CACHED, 0.5);
    printf("plan2_cached_us %.2f %.2f %.2f\n", plan2, q(t, CACHED, 0.1), q(t, CACHED, 0.9));
    printf("tier2_cached_us %.2f\n", plan2 - plan1);

    /* 3. The workloads with each level's settings: as planned without a
     * workload (precision kept), and for a workload that accepts reduced
     * precision (level 1 adds fast-math build options). */
    gpuopt_plan_destroy(plan[2]);
    gpuopt_workload relaxed;
    gpuopt_workload_init(&relaxed);
    relaxed.item_bytes = 64u << 20;
    relaxed.reduced_precision = 1;
    workloads(ctx, dev, NULL, "precise", repeats);
    workloads(ctx, dev, &relaxed, "relaxed", repeats);
    gpuopt_context_destroy(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
