/* Tier 2's memory bandwidth beside a STREAM-style triad (issue 11, item 4:
 * the figure must land within +-15% of the triad measured beside it).
 *
 *   bench_bandwidth_triad [ROUNDS] [BACKEND...]   (default: 5 rounds; opencl cpu)
 *
 * Each round, for each backend: a level-2 plan of that backend's first
 * device on a fresh tuning cache (GPUOPT_CACHE_DIR is a new directory per
 * plan), its measured.memory_bandwidth read; then a triad a = b + s * c by
 * two threads (each its half; the machine's core count here) over arrays
 * of doubles of 4 x the last-level cache each (STREAM's rule), written
 * before timing, 10 iterations: STREAM's figure is the best iteration (24
 * bytes counted per element), the median is printed too. Rounds interleave
 * the two, so load on the shared machine touches both.
 *
 * Output: "round R backend B tier2_gbs X triad_best_gbs Y triad_median_gbs Z
 * ratio X/Y ratio_to_median X/Z", then "summary backend B median_ratio ...
 * min ... max ...; to the triad's median: median ... min ... max ...". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpuopt/gpuopt.h"

#define ITER 10
#define MAX_ROUNDS 64

typedef struct part {
    double *a, *b, *c;
    size_t lo, hi;
} part;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *triad_part(void *arg)
{
    part *p = arg;
    for (size_t i = p->lo; i < p->hi; i++)
        p->a[i] = p->b[i] + 3.0 * p->c[i];
    return NULL;
}

static void *fill_part(void *arg)
{
    part *p = arg;
    for (size_t i = p->lo; i < p->hi; i++) {
        p->a[i] = 1.0;
        p->b[i] = 2.0;
        p->c[i] = 0.5;
    }
    return NULL;
}

/* Runs fn over [0, n) on two threads (the first-touch fill does too, so
 * each half's pages sit where its thread runs). */
static double two_threads(void *(*fn)(void *), double *a, double *b, double *c, size_t n)
{
    part p[2] = {{a, b, c, 0, n / 2}, {a, b, c, n / 2, n}};
    pthread_t t;
    double t0 = now_s();
    pthread_create(&t, NULL, fn, &p[1]);
    fn(&p[0]);
    pthread_join(t, NULL);
    return now_s() - t0;
}

static int cmp(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

static size_t llc_bytes(void)
{
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v <= 0)
        v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? (size_t)v : (size_t)32 << 20;
}

/* The triad: best and median rate over ITER iterations, in GB/s. */
static void triad(double *a, double *b, double *c, size_t n, double *best, double *median)
{
    double t[ITER];
    for (int i = 0; i < ITER; i++)
        t[i] = two_threads(triad_part, a, b, c, n);
    qsort(t, ITER, sizeof *t, cmp);
    *best = 24.0 * (double)n / t[0] / 1e9;
    *median = 24.0 * (double)n / ((t[ITER / 2 - 1] + t[ITER / 2]) / 2) / 1e9;
}

/* Tier 2's figure on `backend`'s first device, fresh cache; -1 on failure. */
static double tier2(const char *backend)
{
    char dir[] = "/tmp/gpuopt-bw-XXXXXX", cmd[64];
    if (!mkdtemp(dir))
        return -1;
    setenv("GPUOPT_BACKEND", backend, 1);
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.cache_dir = dir;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    gpuopt_context *ctx = NULL;
    gpuopt_device *d = NULL;
    gpuopt_plan *p = NULL;
    double gbs = -1;
    if (gpuopt_context_create(&o, &ctx) == GPUOPT_OK &&
        gpuopt_device_select(ctx, NULL, &d) == GPUOPT_OK &&
        gpuopt_plan_create(ctx, d, 2, &p) == GPUOPT_OK) {
        gpuopt_knob k;
        memset(&k, 0, sizeof k);
        k.struct_size = sizeof k;
        if (gpuopt_plan_knob_find(p, "measured.memory_bandwidth", &k) == GPUOPT_OK)
            gbs = (double)k.int_value / 1e9;
    }
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return gbs;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    const char *def[] = {"opencl", "cpu"};
    const char **backends = argc > 2 ? (const char **)argv + 2 : def;
    int nb = argc > 2 ? argc - 2 : 2;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: bench_bandwidth_triad [ROUNDS 1..%d] [BACKEND...]\n", MAX_ROUNDS);
        return 2;
    }
    size_t n = 4 * llc_bytes() / sizeof(double);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "out of memory for 3 x %zu MiB\n", n * sizeof *a >> 20);
        return 1;
    }
    two_threads(fill_part, a, b, c, n);
    printf("# triad arrays: 3 x %zu MiB (4 x the %zu MiB last-level cache), 2 threads\n",
           n * sizeof *a >> 20, llc_bytes() >> 20);
    /* Tier 2 states the median of its runs: beside the triad's median it
     * compares like with like; beside STREAM's best iteration it compares a
     * typical run with the luckiest. Both are printed. */
    double ratio[8][MAX_ROUNDS], like[8][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < nb && k < 8; k++) {
            double la[3] = {0}, best, median, t2 = tier2(backends[k]);
            triad(a, b, c, n, &best, &median);
            getloadavg(la, 3);
            ratio[k][r] = t2 / best;
            like[k][r] = t2 / median;
            printf("round %d backend %s tier2_gbs %.2f triad_best_gbs %.2f triad_median_gbs "
                   "%.2f ratio %.3f ratio_to_median %.3f load %.2f\n",
                   r + 1, backends[k], t2, best, median, ratio[k][r], like[k][r], la[0]);
            fflush(stdout);
        }
    for (int k = 0; k < nb && k < 8; k++) {
        qsort(ratio[k], (size_t)rounds, sizeof ratio[k][0], cmp);
        qsort(like[k], (size_t)rounds, sizeof like[k][0], cmp);
        printf("summary backend %s median_ratio %.3f min %.3f max %.3f; to the triad's median: "
               "median %.3f min %.3f max %.3f\n",
               backends[k], ratio[k][rounds / 2], ratio[k][0], ratio[k][rounds - 1],
               like[k][rounds / 2], like[k][0], like[k][rounds - 1]);
    }
    free(a);
    free(b);
    free(c);
    return 0;
}
