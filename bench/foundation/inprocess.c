/* In-process cost of create + enumerate + level-1 plan + destroy, median of
 * many runs (target: under 200 us with the CPU backend). Also the level-1
 * plan alone on an existing context (the tiers issue's 50 us target).
 *
 *   bench_inprocess [RUNS]     prints: name median_us p10_us p90_us */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpuopt/gpuopt.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *name, double *us, int n)
{
    qsort(us, (size_t)n, sizeof *us, cmp);
    printf("%s %.2f %.2f %.2f\n", name, us[n / 2], us[n / 10], us[n * 9 / 10]);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 2000;
    if (runs < 10)
        runs = 10;
    double *full = calloc((size_t)runs, sizeof *full), *plan_only = calloc((size_t)runs, sizeof *plan_only);
    for (int r = -20; r < runs; r++) {
        double t0 = now_us();
        gpuopt_context *ctx;
        gpuopt_plan *plan;
        int32_t n;
        if (gpuopt_context_create(NULL, &ctx) || gpuopt_device_count(ctx, &n) ||
            gpuopt_plan_create(ctx, NULL, 1, &plan)) {
            fprintf(stderr, "bench_inprocess: %s\n", gpuopt_last_error());
            return 1;
        }
        gpuopt_plan_destroy(plan);
        double t1 = now_us();
        if (gpuopt_plan_create(ctx, NULL, 1, &plan))
            return 1;
        double t2 = now_us();
        gpuopt_plan_destroy(plan);
        gpuopt_context_destroy(ctx);
        double t3 = now_us();
        if (r >= 0) {
            full[r] = (t1 - t0) + (t3 - t2);
            plan_only[r] = t2 - t1;
        }
    }
    report("create+enumerate+plan1+destroy", full, runs);
    report("plan1_on_existing_context", plan_only, runs);
    free(full);
    free(plan_only);
    return 0;
}
