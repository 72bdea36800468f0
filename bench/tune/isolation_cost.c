/* What measuring kernel candidates in the measurement worker costs against
 * measuring them in the program's process (issue 11, item 1), side by side
 * in one run: the two modes alternate, repetition by repetition.
 *
 *   per candidate  (wall of an exhaustive run over N candidates - wall of a
 *                  run over 1) / (N - 1): build, arguments, copies, launches
 *                  (1 checked run and 5 timed ones each), as a search pays it
 *   session        the wall of a run over 1 candidate on a new tuner: the
 *                  device session (in the worker: posix_spawn, the worker's
 *                  own context and device enumeration) and that candidate
 *
 *   bench_isolation_cost BACKEND LANGUAGE N REPS
 *     BACKEND cuda | rocm | opencl; LANGUAGE cuda | hip | opencl-c.
 *     The device is BACKEND's first (the test doubles through
 *     GPUOPT_CUDA_LIBRARY, GPUOPT_NVRTC_LIBRARY and GPUOPT_FAKE_CUDA_* work).
 *   prints: what in-process worker worker/in-process (medians, us). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuopt/gpuopt.h"
#include "gpuopt/tune.h"

static const char cuda_src[] = "extern \"C\" __global__ void scale(float *x, int n) {\n"
                               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "  if (i < n) x[i] = x[i] * 2.0f + P;\n}\n";
static const char cl_src[] = "__kernel void scale(__global float *x, int n) {\n"
                             "  int i = get_global_id(0);\n"
                             "  if (i < n) x[i] = x[i] * 2.0f + P;\n}\n";

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

/* The wall time (us) of one exhaustive run of n candidates on a new tuner. */
static double one_run(gpuopt_context *ctx, gpuopt_device *dev, int32_t language, int n,
                      int32_t isolation)
{
    int64_t *p = malloc((size_t)n * sizeof *p);
    for (int i = 0; i < n; i++)
        p[i] = i;
    gpuopt_space *s = NULL;
    gpuopt_tuner *t = NULL;
    gpuopt_space_create(&s);
    gpuopt_space_add_int(s, "P", p, n);
    gpuopt_space_set_size(s, "N", 1 << 16);
    free(p);
    if (gpuopt_tuner_create(ctx, dev, s, &t) != GPUOPT_OK) {
        fprintf(stderr, "tuner: %s\n", gpuopt_last_error());
        exit(1);
    }
    gpuopt_kernel_desc k = {.struct_size = sizeof k,
                            .source = language == GPUOPT_LANG_OPENCL_C ? cl_src : cuda_src,
                            .entry = "scale",
                            .language = language};
    k.global[0] = "N";
    k.local[0] = "64";
    gpuopt_tuner_set_kernel(t, &k);
    gpuopt_buffer_desc x = {.struct_size = sizeof x,
                            .type = GPUOPT_ELEM_F32,
                            .count = "N",
                            .init = GPUOPT_INIT_RANDOM,
                            .is_output = 1};
    gpuopt_tuner_set_buffer(t, 0, &x);
    gpuopt_scalar_desc sn = {.struct_size = sizeof sn, .type = GPUOPT_ELEM_I32, .expression = "N"};
    gpuopt_tuner_set_scalar(t, 1, &sn);
    gpuopt_tuner_settings set = {.struct_size = sizeof set};
    gpuopt_tuner_get_settings(t, &set);
    set.cache_mode = GPUOPT_CACHE_OFF;
    set.strategy = GPUOPT_STRATEGY_EXHAUSTIVE;
    set.isolation = isolation;
    set.warmup_ms = 0;
    set.min_runs = set.max_runs = 5;
    gpuopt_tuner_set_settings(t, &set);
    gpuopt_result *r = NULL;
    double t0 = now_us();
    gpuopt_status st = gpuopt_tuner_run(t, &r);
    double us = now_us() - t0;
    if (st != GPUOPT_OK) {
        fprintf(stderr, "run: %s\n", gpuopt_last_error());
        exit(1);
    }
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    return us;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: bench_isolation_cost BACKEND LANGUAGE N REPS\n");
        return 2;
    }
    int32_t language = strcmp(argv[2], "cuda") == 0  ? GPUOPT_LANG_CUDA
                       : strcmp(argv[2], "hip") == 0 ? GPUOPT_LANG_HIP
                                                     : GPUOPT_LANG_OPENCL_C;
    int n = atoi(argv[3]), reps = atoi(argv[4]);
    if (n < 2 || reps < 1)
        return 2;
    gpuopt_options o = {.struct_size = sizeof o, .backends = argv[1], .config_path = ""};
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    if (gpuopt_context_create(&o, &ctx) != GPUOPT_OK ||
        gpuopt_device_select(ctx, "auto", &dev) != GPUOPT_OK) {
        fprintf(stderr, "no device: %s\n", gpuopt_last_error());
        return 1;
    }
    double *cand[2], *sess[2];
    for (int m = 0; m < 2; m++) {
        cand[m] = calloc((size_t)reps, sizeof(double));
        sess[m] = calloc((size_t)reps, sizeof(double));
    }
    const int32_t modes[2] = {GPUOPT_ISOLATION_IN_PROCESS, GPUOPT_ISOLATION_WORKER};
    one_run(ctx, dev, language, 2, modes[0]); /* the driver's and compiler's first costs */
    for (int i = 0; i < reps; i++)
        for (int m = 0; m < 2; m++) {
            int mm = i % 2 ? 1 - m : m; /* alternate which goes first */
            double one = one_run(ctx, dev, language, 1, modes[mm]);
            double all = one_run(ctx, dev, language, n, modes[mm]);
            sess[mm][i] = one;
            cand[mm][i] = (all - one) / (n - 1);
        }
    double c0 = median(cand[0], reps), c1 = median(cand[1], reps);
    double s0 = median(sess[0], reps), s1 = median(sess[1], reps);
    printf("%-14s %12s %12s %8s\n", "what", "in-process", "worker", "ratio");
    printf("%-14s %12.1f %12.1f %8.2f\n", "per candidate", c0, c1, c1 / c0);
    printf("%-14s %12.1f %12.1f %8.2f\n", "session", s0, s1, s1 / s0);
    for (int m = 0; m < 2; m++) {
        free(cand[m]);
        free(sess[m]);
    }
    gpuopt_context_destroy(ctx);
    return 0;
}
