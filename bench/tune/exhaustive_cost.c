/* The tuner's own cost on an exhaustive search (issue 11, item 7): its
 * wall time against what a search cannot avoid, the sum of the compile
 * times and of five timed runs per candidate, and the winner.
 *
 *   bench_exhaustive_cost SPEC.json        (the caller sets POCL_CACHE_DIR)
 *
 * One tuner, the cache off, the spec's strategy forced to exhaustive, run
 * twice in one process:
 *   cold   programs built now (PoCL's own cache is the caller's choice),
 *          so the wall time holds compiles, the first launch of each
 *          program (PoCL generates its work-group function then) and runs;
 *   warm   the same tuner again: the engine's compile cache reuses every
 *          program (no build, no first-launch code generation), so the
 *          wall time is runs plus the tuner's own work.
 * For each: "run R wall_s W compile_s C runs5_s T ratio W/(C+T)
 * first_launch_s F ratio_with_first_launch W/(C+T+F) candidates N timed M
 * best=\"CONFIG\" best_min_ns B best_median_ns D", where runs5_s is 5 x
 * the median of every timed candidate (what five timed runs of each cost),
 * C sums the candidates' compile times (0 when warm), and F sums what each
 * checked run cost beyond its own measurement (wall minus measured: on
 * PoCL, the code it generates at a program's first launch, outside the
 * event's start-to-end time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune_spec.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* What the checked runs cost outside their measurement (the library's
 * debug line "checked run: N ns measured, W ns wall"): a runtime's work on
 * a program's first launch, such as PoCL's code generation. */
static double checked_extra_s;

static void on_log(int32_t level, const char *message, void *user)
{
    (void)level;
    (void)user;
    double m, w;
    const char *at = strstr(message, "checked run: ");
    if (at && sscanf(at, "checked run: %lf ns measured, %lf ns wall", &m, &w) == 2 && w > m)
        checked_extra_s += (w - m) / 1e9;
}

static int one(gpuopt_tuner *t, const char *label)
{
    checked_extra_s = 0;
    gpuopt_result *res = NULL;
    double t0 = now_s();
    gpuopt_status st = gpuopt_tuner_run(t, &res);
    double wall = now_s() - t0;
    if (st != GPUOPT_OK) {
        fprintf(stderr, "gpuopt_tuner_run: %s: %s\n", gpuopt_strerror(st), gpuopt_last_error());
        return 1;
    }
    int32_t n = 0, timed = 0;
    double compile = 0, runs = 0;
    gpuopt_result_count(res, &n);
    for (int32_t i = 0; i < n; i++) {
        gpuopt_candidate c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        if (gpuopt_result_at(res, i, &c) != GPUOPT_OK)
            continue;
        if (c.compile_ms > 0)
            compile += c.compile_ms / 1e3;
        if (c.median_ns > 0) {
            runs += 5 * c.median_ns / 1e9;
            timed++;
        }
    }
    gpuopt_candidate best;
    memset(&best, 0, sizeof best);
    best.struct_size = sizeof best;
    char *cfg = NULL;
    if (gpuopt_result_best(res, &best) == GPUOPT_OK)
        gpuopt_point_to_string(best.point, &cfg);
    printf("run %s wall_s %.2f compile_s %.2f runs5_s %.2f ratio %.3f first_launch_s %.2f "
           "ratio_with_first_launch %.3f candidates %d timed %d best=\"%s\" best_min_ns %.0f "
           "best_median_ns %.0f\n",
           label, wall, compile, runs, wall / (compile + runs), checked_extra_s,
           wall / (compile + runs + checked_extra_s), (int)n, (int)timed, cfg ? cfg : "",
           best.min_ns, best.median_ns);
    fflush(stdout);
    gpuopt_free(cfg);
    gpuopt_result_destroy(res);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_exhaustive_cost SPEC.json\n");
        return 2;
    }
    char err[1024];
    tune_spec *s = tune_spec_load(argv[1], err, sizeof err);
    if (!s) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    s->strategy = GPUOPT_STRATEGY_EXHAUSTIVE;
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.log_level = "debug";
    o.log_fn = on_log;
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    gpuopt_space *space = NULL;
    gpuopt_tuner *t = NULL;
    int rc = 1;
    setenv("GPUOPT_BACKEND", "opencl", 0);
    if (gpuopt_context_create(&o, &ctx) != GPUOPT_OK ||
        gpuopt_device_select(ctx, NULL, &dev) != GPUOPT_OK) {
        fprintf(stderr, "no OpenCL device: %s\n", gpuopt_last_error());
        goto out;
    }
    if (tune_spec_apply(s, ctx, dev, &space, &t, err, sizeof err) != GPUOPT_OK) {
        fprintf(stderr, "%s\n", err);
        goto out;
    }
    gpuopt_tuner_settings set;
    memset(&set, 0, sizeof set);
    set.struct_size = sizeof set;
    gpuopt_tuner_get_settings(t, &set);
    set.cache_mode = GPUOPT_CACHE_OFF;
    if (gpuopt_tuner_set_settings(t, &set) != GPUOPT_OK)
        goto out;
    rc = one(t, "cold") || one(t, "warm");
out:
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(space);
    gpuopt_context_destroy(ctx);
    tune_spec_free(s);
    return rc;
}
