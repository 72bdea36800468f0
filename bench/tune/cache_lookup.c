/* Tuning-cache lookup time (issue 6 target: a hit under 20 us). Builds a
 * cache file of ENTRIES finished tunes (20 candidates each) in a temporary
 * directory, then times:
 *   warm_hit        a hit on an open cache (document in memory, file unchanged)
 *   warm_miss       a miss on the same
 *   warm_hit_after_write  a hit right after another handle replaced the
 *                   file (it is read again, whole)
 *   write           one result stored (read under the lock when another
 *                   handle wrote, print, temp file, fsync, rename)
 *   cold_open_hit   a new cache object in a new process (fork): open, read
 *                   and check the whole file, one hit
 *
 *   bench_cache_lookup [ENTRIES] [RUNS]   prints: name median_us p10_us p90_us */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/strutil.h"
#include "cache/cache.h"
#include "cache/dir.h"

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

static double now_us(void)
{
    return (double)gpo_now_ns() / 1e3;
}

typedef struct key_text {
    char workload[48];
    gpo_cache_key key;
} key_text;

static void make_key(key_text *k, int i)
{
    snprintf(k->workload, sizeof k->workload, "M=%d;N=%d;K=%d;type=f32", 64 * (i + 1), 512, 512);
    k->key.kind = "kernel";
    k->key.backend = "opencl";
    k->key.arch = "pthread-znver3";
    k->key.compute_units = 16;
    k->key.source_hash = "fnv1a64:3f1c9a2b4d5e6f70";
    k->key.options_hash = "fnv1a64:0a1b2c3d4e5f6071";
    k->key.space_hash = "fnv1a64:8899aabbccddeeff";
    k->key.workload = k->workload;
}

static const gpo_cache_soft soft = {"pocl 3.1", "pocl 3.1 LLVM 15", NULL, "cpu-znver3"};

static int fill(gpo_cache *c, key_text *keys, int entries)
{
    gpo_cache_search s = {"exhaustive", 42, 0, 0, 0};
    for (int i = 0; i < entries; i++) {
        gpo_cache_tune *t;
        if (gpo_cache_begin(c, &keys[i].key, &soft, &s, &t))
            return -1;
        cJSON *best = NULL, *second = NULL;
        for (int j = 0; j < 20; j++) {
            cJSON *p = cJSON_CreateObject();
            cJSON_AddNumberToObject(p, "MWG", 16 << (j % 4));
            cJSON_AddNumberToObject(p, "NWG", 16 << (j / 4 % 4));
            cJSON_AddNumberToObject(p, "VWM", 1 << (j % 3));
            cJSON_AddStringToObject(p, "STAGE", j % 2 ? "on" : "off");
            gpo_cache_stats st = {0, 40, 1e5 + j * 1e3, 0.98e5, 0.99e5, 1.02e5, 35.0};
            if (gpo_cache_add_candidate(t, p, &st))
                return -1;
            if (j == 0)
                best = p;
            else if (j == 1)
                second = p;
            else
                cJSON_Delete(p);
        }
        gpo_cache_stats b = {0, 40, 1e5, 0.98e5, 0.99e5, 1.02e5, 35.0}, r = b;
        r.median_ns = 1.01e5;
        int rc = gpo_cache_finish(t, best, &b, second, &r, 1, 12.0, NULL);
        cJSON_Delete(best);
        cJSON_Delete(second);
        if (rc)
            return -1;
    }
    return 0;
}

static gpo_cache *open_dir(const char *dir)
{
    gpo_cache_device dev;
    memset(&dev, 0, sizeof dev);
    strcpy(dev.backend, "opencl");
    strcpy(dev.arch, "pthread-znver3");
    dev.compute_units = 16;
    strcpy(dev.name, "cpu-znver3");
    gpo_cache *c = NULL;
    gpo_cache_open(dir, &dev, NULL, NULL, &c);
    return c;
}

int main(int argc, char **argv)
{
    int entries = argc > 1 ? atoi(argv[1]) : 500;
    int runs = argc > 2 ? atoi(argv[2]) : 20000;
    if (entries < 2 || runs < 10) {
        fprintf(stderr, "usage: bench_cache_lookup [ENTRIES>=2] [RUNS>=10]\n");
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/gpuopt-bench-cache-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("bench_cache_lookup: mkdtemp");
        return 1;
    }
    key_text *keys = calloc((size_t)entries, sizeof *keys);
    double *us = calloc((size_t)(runs > 50 ? runs : 50), sizeof *us);
    gpo_cache *c = open_dir(dir), *other = open_dir(dir);
    for (int i = 0; i < entries; i++)
        make_key(&keys[i], i);
    if (!keys || !us || !c || !other || fill(c, keys, entries)) {
        fprintf(stderr, "bench_cache_lookup: %s\n", gpo_detail_get());
        return 1;
    }
    struct stat st;
    stat(gpo_cache_file(c), &st);
    printf("# cache file: %d entries x 20 candidates, %lld bytes, %s\n", entries,
           (long long)st.st_size, gpo_cache_file(c));

    gpo_cache_hit *hit;
    gpo_cache_lookup(c, &keys[0].key, &soft, &hit); /* index the file */
    gpo_cache_hit_free(hit);
    for (int r = 0; r < runs; r++) {
        const gpo_cache_key *k = &keys[(r * 7919) % entries].key;
        double t0 = now_us();
        gpuopt_status s = gpo_cache_lookup(c, k, &soft, &hit);
        double t1 = now_us();
        gpo_cache_hit_free(hit);
        if (s) {
            fprintf(stderr, "bench_cache_lookup: a miss where a hit was due\n");
            return 1;
        }
        us[r] = t1 - t0;
    }
    report("warm_hit", us, runs);

    key_text absent;
    make_key(&absent, entries + 1);
    for (int r = 0; r < runs; r++) {
        double t0 = now_us();
        gpo_cache_lookup(c, &absent.key, &soft, &hit);
        us[r] = now_us() - t0;
    }
    report("warm_miss", us, runs);

    int n_write = 50;
    double *wus = calloc((size_t)n_write, sizeof *wus);
    for (int r = 0; wus && r < n_write; r++) {
        double t0 = now_us();
        gpo_cache_record_verify(other, &keys[r % entries].key, &soft, 1, 1e5, 1.01e5);
        wus[r] = now_us() - t0;
        t0 = now_us();
        gpo_cache_lookup(c, &keys[(r * 31) % entries].key, &soft, &hit);
        us[r] = now_us() - t0;
        gpo_cache_hit_free(hit);
    }
    report("warm_hit_after_write", us, n_write);
    if (wus)
        report("write", wus, n_write);
    free(wus);

    int n_cold = 50;
    for (int r = 0; r < n_cold; r++) {
        int fds[2];
        if (pipe(fds))
            return 1;
        pid_t pid = fork();
        if (pid == 0) {
            double t0 = now_us();
            gpo_cache *cc = open_dir(dir);
            gpuopt_status s = gpo_cache_lookup(cc, &keys[r % entries].key, &soft, &hit);
            double dt = now_us() - t0;
            gpo_cache_hit_free(hit);
            gpo_cache_close(cc);
            if (s)
                dt = -1;
            _exit(write(fds[1], &dt, sizeof dt) == sizeof dt ? 0 : 1);
        }
        close(fds[1]);
        double dt = -1;
        if (read(fds[0], &dt, sizeof dt) != sizeof dt || dt < 0) {
            fprintf(stderr, "bench_cache_lookup: a cold lookup failed\n");
            return 1;
        }
        close(fds[0]);
        waitpid(pid, NULL, 0);
        us[r] = dt;
    }
    report("cold_open_hit", us, n_cold);

    gpo_cache_dir_clear(dir, NULL, NULL, NULL);
    rmdir(dir);
    gpo_cache_close(c);
    gpo_cache_close(other);
    free(keys);
    free(us);
    return 0;
}
