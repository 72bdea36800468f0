/* spawn: runs a command many times, side by side with others, and prints
 * the median / p10 / p90 wall time and the peak RSS of each.
 *
 *   spawn [-n RUNS] [-w WARMUP] -- NAME CMD ARGS... [-- NAME CMD ARGS...]...
 *
 * Runs are interleaved (A B C A B C ...) so drift on a shared, noisy machine
 * hits every command alike; only ratios within one run are meaningful. Output
 * is one line per command: name median_ms p10_ms p90_ms max_rss_kib. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct cmd {
    const char *name;
    char **argv;
    double *ms;
    long max_rss;
} cmd;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int run_once(cmd *c, double *ms)
{
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        execvp(c->argv[0], c->argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    *ms = now_ms() - t0;
    if (ru.ru_maxrss > c->max_rss)
        c->max_rss = ru.ru_maxrss;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int runs = 200, warmup = 10, i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            warmup = atoi(argv[++i]);
    }
    /* Each "-- NAME CMD ARGS..." segment becomes one command with its own
     * NULL-terminated argv. */
    cmd cmds[16];
    int n = 0;
    while (i < argc && n < 16) {
        int start = i + 1, end = start;
        while (end < argc && strcmp(argv[end], "--"))
            end++;
        if (end - start < 2)
            break;
        cmds[n].name = argv[start];
        cmds[n].argv = calloc((size_t)(end - start), sizeof(char *));
        memcpy(cmds[n].argv, &argv[start + 1], (size_t)(end - start - 1) * sizeof(char *));
        cmds[n].ms = calloc((size_t)(runs > 0 ? runs : 1), sizeof(double));
        cmds[n].max_rss = 0;
        n++;
        i = end;
    }
    if (n == 0 || runs <= 0) {
        fprintf(stderr, "usage: spawn [-n RUNS] [-w WARMUP] -- NAME CMD ARGS... [-- NAME CMD...]\n");
        return 2;
    }
    for (int r = -warmup; r < runs; r++) {
        for (int c = 0; c < n; c++) {
            double ms;
            int rc = run_once(&cmds[c], &ms);
            if (rc != 0) {
                fprintf(stderr, "spawn: %s exited with %d\n", cmds[c].name, rc);
                return 1;
            }
            if (r >= 0)
                cmds[c].ms[r] = ms;
        }
    }
    for (int c = 0; c < n; c++) {
        qsort(cmds[c].ms, (size_t)runs, sizeof(double), cmp);
        printf("%s %.3f %.3f %.3f %ld\n", cmds[c].name, cmds[c].ms[runs / 2],
               cmds[c].ms[runs / 10], cmds[c].ms[runs * 9 / 10], cmds[c].max_rss);
    }
    return 0;
}
