/* The tuned SGEMM example against OpenBLAS's sgemm on the same machine, in
 * one process, interleaved (issue 6 target: at least half of OpenBLAS).
 *
 * The best configuration comes from the tuning cache (run the exhaustive
 * tune first: bench_tune_examples, or gpuopt tune); the spec's space is cut
 * to that one configuration and timed through the tuner (validated against
 * the reference, device events, the median), alternating with OpenBLAS's
 * cblas_sgemm on the same sizes, timed with the monotonic clock over the
 * same time budget. Run it with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
 * unset (bench/run.sh does): OpenBLAS reads them once, at load.
 *
 *   bench_sgemm_blas SPEC.json [ROUNDS]
 *
 * Prints per round and then:
 *   sgemm_vs_blas M=.. N=.. K=.. tuned_gflops=.. blas_gflops=.. ratio=.. config="..." */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune_spec.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int64_t size_of(const tune_spec *s, const char *name)
{
    for (int32_t i = 0; i < s->n_sizes; i++)
        if (!strcmp(s->sizes[i].name, name))
            return s->sizes[i].value;
    return -1;
}

static int fail(const char *what, gpuopt_status st)
{
    fprintf(stderr, "bench_sgemm_blas: %s: %s: %s\n", what, gpuopt_strerror(st),
            gpuopt_last_error());
    return 1;
}

/* Cuts every parameter of the spec to the best configuration's value. */
static int pin(tune_spec *s, const gpuopt_point *best)
{
    for (int32_t i = 0; i < s->n_params; i++) {
        ts_param *p = &s->params[i];
        int64_t v;
        if (p->is_enum || gpuopt_point_get_int(best, p->name, &v))
            return -1;
        p->ints[0] = v;
        p->count = 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_sgemm_blas SPEC.json [ROUNDS]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    if (rounds < 1 || rounds > 100)
        rounds = 7;
    char err[1024];
    tune_spec *spec = tune_spec_load(argv[1], err, sizeof err);
    if (!spec) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    int rc = 1;
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    gpuopt_space *space = NULL, *space1 = NULL;
    gpuopt_tuner *t = NULL, *t1 = NULL;
    gpuopt_result *res = NULL;
    float *a = NULL, *b = NULL, *c = NULL;
    char *cfg = NULL;
    gpuopt_status st;
    if ((st = gpuopt_context_create(NULL, &ctx)) ||
        (st = gpuopt_device_select(ctx, "opencl", &dev))) {
        rc = fail("no OpenCL device", st);
        goto out;
    }
    /* The cached answer (a miss would tune: say so rather than wait). */
    if ((st = tune_spec_apply(spec, ctx, dev, &space, &t, err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        goto out;
    }
    gpuopt_tuner_settings set = {.struct_size = sizeof set};
    gpuopt_tuner_get_settings(t, &set);
    set.cache_mode = GPUOPT_CACHE_USE;
    set.max_evaluations = 1;
    set.max_seconds = 0;
    set.max_failures = 0;
    gpuopt_tuner_set_settings(t, &set);
    if ((st = gpuopt_tuner_run(t, &res))) {
        rc = fail("the cached tune", st);
        goto out;
    }
    int32_t origin = GPUOPT_ORIGIN_TUNED;
    gpuopt_result_get_origin(res, &origin);
    gpuopt_candidate best;
    memset(&best, 0, sizeof best);
    best.struct_size = sizeof best;
    if (origin == GPUOPT_ORIGIN_TUNED || gpuopt_result_best(res, &best)) {
        fprintf(stderr,
                "bench_sgemm_blas: no cached tune of %s for these sizes: run "
                "bench_tune_examples (or gpuopt tune) with the same GPUOPT_CACHE_DIR first\n",
                argv[1]);
        goto out;
    }
    gpuopt_point_to_string(best.point, &cfg);
    if (pin(spec, best.point)) {
        fprintf(stderr, "bench_sgemm_blas: the spec's parameters are not all integers\n");
        goto out;
    }
    spec->strategy = GPUOPT_STRATEGY_EXHAUSTIVE;
    spec->has_timing = 1;
    spec->warmup_ms = 20;
    spec->repeat_ms = 200;
    spec->min_runs = 10;
    spec->max_runs = 1000;
    if ((st = tune_spec_apply(spec, ctx, dev, &space1, &t1, err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        goto out;
    }
    gpuopt_tuner_get_settings(t1, &set);
    set.cache_mode = GPUOPT_CACHE_OFF;
    gpuopt_tuner_set_settings(t1, &set);

    const int64_t M = size_of(spec, "M"), N = size_of(spec, "N"), K = size_of(spec, "K");
    a = malloc(sizeof *a * (size_t)(M * K));
    b = malloc(sizeof *b * (size_t)(K * N));
    c = calloc((size_t)(M * N), sizeof *c);
    if (!a || !b || !c)
        goto out;
    for (int64_t i = 0; i < M * K; i++)
        a[i] = (float)((i * 7919) % 2001) / 1000.0f - 1.0f;
    for (int64_t i = 0; i < K * N; i++)
        b[i] = (float)((i * 104729) % 2001) / 1000.0f - 1.0f;
    const double flop = 2.0 * (double)M * (double)N * (double)K;
    double tuned[100], blas[100];
    for (int r = 0; r < rounds; r++) {
        gpuopt_result *one = NULL;
        if ((st = gpuopt_tuner_run(t1, &one)) || (gpuopt_result_best(one, &best) != GPUOPT_OK)) {
            gpuopt_result_destroy(one);
            rc = fail("timing the tuned configuration", st ? st : GPUOPT_ERR_LAUNCH);
            goto out;
        }
        tuned[r] = best.median_ns;
        gpuopt_result_destroy(one);
        /* OpenBLAS: warm-up 20 ms, then runs for 200 ms (at least 10). */
        double t0 = now_ns(), runs[4096];
        while (now_ns() - t0 < 20e6)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, a,
                        (int)K, b, (int)N, 0.0f, c, (int)N);
        int n = 0;
        t0 = now_ns();
        while (n < 4096 && (n < 10 || now_ns() - t0 < 200e6)) {
            double s = now_ns();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, a,
                        (int)K, b, (int)N, 0.0f, c, (int)N);
            runs[n++] = now_ns() - s;
        }
        blas[r] = median(runs, n);
        printf("round %d tuned_gflops=%.1f blas_gflops=%.1f\n", r + 1, flop / tuned[r],
               flop / blas[r]);
    }
    double tm = median(tuned, rounds), bm = median(blas, rounds);
    printf("sgemm_vs_blas M=%lld N=%lld K=%lld rounds=%d tuned_gflops=%.1f blas_gflops=%.1f "
           "ratio=%.3f config=\"%s\"\n",
           (long long)M, (long long)N, (long long)K, rounds, flop / tm, flop / bm, bm / tm,
           cfg ? cfg : "");
    rc = 0;
out:
    free(a);
    free(b);
    free(c);
    gpuopt_free(cfg);
    gpuopt_result_destroy(res);
    gpuopt_tuner_destroy(t1);
    gpuopt_space_destroy(space1);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(space);
    gpuopt_context_destroy(ctx);
    tune_spec_free(spec);
    return rc;
}
