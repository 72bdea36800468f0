/* Which statistic should rank candidates (issue 11, item 7)? A fixed
 * two-thread workload (a 160^3 float matrix product split over two
 * threads, as PoCL splits a kernel over the cores) timed in rounds of 5
 * runs, the tuner's count per candidate, first on the machine as it is,
 * then with a competing load of LOAD busy processes the bench forks
 * itself. Each round times two candidates one after the other, the
 * workload above and a 9% smaller one (155^3), as a search meets them.
 * For each statistic of a round (min, p20, median, mean, the mean of the
 * lowest 3): over the slower candidate's rounds, the median (its level)
 * and the p10-p90 spread relative to that level (how far two rounds of
 * the same candidate disagree), and over the pairs, how often it ranked
 * them right (the smaller one lower): what a ranking statistic is for.
 *
 *   bench_rank_stat [ROUNDS] [LOAD]
 *
 * prints per statistic: level, spread and right without and with the
 * load, and ratio, the level under load over the level without it. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DIM 160
#define RUNS 5
#define NSTAT 5

#define DIM_B 155 /* the faster candidate: (155/160)^3 = 0.91 of the work */

static float a[DIM * DIM], b[DIM * DIM], c[DIM * DIM];
static int dim = DIM;
static volatile float sink;
static const char *const names[NSTAT] = {"min", "p20", "median", "mean", "low3_mean"};

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void *half(void *arg)
{
    int lo = *(int *)arg, hi = lo == 0 ? dim / 2 : dim;
    for (int i = lo; i < hi; i++)
        for (int j = 0; j < dim; j++) {
            float s = 0;
            for (int k = 0; k < dim; k++)
                s += a[i * dim + k] * b[k * dim + j];
            c[i * dim + j] = s;
        }
    return NULL;
}

static double run_once(void)
{
    pthread_t th;
    int lo0 = 0, lo1 = dim / 2;
    double t0 = now_us();
    pthread_create(&th, NULL, half, &lo1);
    half(&lo0);
    pthread_join(th, NULL);
    double t = now_us() - t0;
    sink += c[(int)t % (DIM * DIM)]; /* the product is used: not optimised away */
    return t;
}

static int cmp(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

static double quant(const double *s, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)pos;
    return lo >= n - 1 ? s[n - 1] : s[lo] + (pos - lo) * (s[lo + 1] - s[lo]);
}

/* One round's statistics. */
static void round_stats(double *out)
{
    double s[RUNS];
    for (int i = 0; i < RUNS; i++)
        s[i] = run_once();
    qsort(s, RUNS, sizeof *s, cmp);
    double sum = 0;
    for (int i = 0; i < RUNS; i++)
        sum += s[i];
    out[0] = s[0];
    out[1] = quant(s, RUNS, 0.2);
    out[2] = quant(s, RUNS, 0.5);
    out[3] = sum / RUNS;
    out[4] = (s[0] + s[1] + s[2]) / 3;
}

/* Rounds of the slower (DIM) and the faster (DIM_B) candidate, alternated:
 * each statistic's level and spread over the slower one's rounds, and how
 * often it ordered the pair right (the faster one lower). */
static void measure(int rounds, double *level, double *spread, double *right)
{
    double *v = malloc(sizeof *v * (size_t)rounds * NSTAT), col[4096], fast[NSTAT];
    for (int k = 0; k < NSTAT; k++)
        right[k] = 0;
    for (int r = 0; r < rounds; r++) {
        dim = DIM;
        round_stats(v + r * NSTAT);
        dim = DIM_B;
        round_stats(fast);
        for (int k = 0; k < NSTAT; k++)
            right[k] += fast[k] < v[r * NSTAT + k];
    }
    dim = DIM;
    for (int k = 0; k < NSTAT; k++) {
        for (int r = 0; r < rounds; r++)
            col[r] = v[r * NSTAT + k];
        qsort(col, (size_t)rounds, sizeof *col, cmp);
        level[k] = quant(col, rounds, 0.5);
        spread[k] = (quant(col, rounds, 0.9) - quant(col, rounds, 0.1)) / level[k];
        right[k] /= rounds;
    }
    free(v);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 60, load = argc > 2 ? atoi(argv[2]) : 1;
    if (rounds < 3 || rounds > 4096 || load < 0 || load > 64) {
        fprintf(stderr, "usage: bench_rank_stat [ROUNDS 3..4096] [LOAD 0..64]\n");
        return 2;
    }
    for (int i = 0; i < DIM * DIM; i++) {
        a[i] = (float)(i % 7) * 0.5f;
        b[i] = (float)(i % 5) * 0.25f;
    }
    for (int i = 0; i < 20; i++)
        run_once(); /* warm */
    double quiet[NSTAT], qspread[NSTAT], qright[NSTAT], busy[NSTAT], bspread[NSTAT], bright[NSTAT];
    measure(rounds, quiet, qspread, qright);
    pid_t kids[64];
    for (int i = 0; i < load; i++)
        if ((kids[i] = fork()) == 0) {
            volatile unsigned long x = 0;
            for (;;)
                x++;
        }
    measure(rounds, busy, bspread, bright);
    for (int i = 0; i < load; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    double la[3] = {0};
    getloadavg(la, 3);
    printf("# %d rounds of %d runs; load %d busy processes; loadavg at the end %.2f\n", rounds,
           RUNS, load, la[0]);
    for (int k = 0; k < NSTAT; k++)
        printf("%-10s quiet %9.1f us spread %.3f right %.2f | loaded %9.1f us spread %.3f right "
               "%.2f | ratio %.2f\n",
               names[k], quiet[k], qspread[k], qright[k], busy[k], bspread[k], bright[k],
               busy[k] / quiet[k]);
    return 0;
}
