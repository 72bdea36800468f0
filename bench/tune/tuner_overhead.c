/* The tuner's own costs (issue 6 targets: under 1 ms per candidate apart
 * from building and running, under 20 us for a cache hit).
 *
 *   callback_overhead_us  per candidate: a host callback that does nothing
 *                         (its own measurement: 1 us), 1000 candidates,
 *                         exhaustive, timing cut to 1 warm-up and 3 timed
 *                         runs; wall time minus the time inside the
 *                         callback, over candidates; with the cache off and
 *                         with the cache on (candidates saved at
 *                         checkpoints)
 *   kernel_overhead_us    per candidate on the OpenCL device (PoCL): wall
 *                         time minus the time inside every runtime call
 *                         (builds, kernel creation, arguments, copies,
 *                         launches), over candidates
 *   hit_us                gpuopt_tuner_run answered from the cache, on a
 *                         tuner that has answered before (the cache's index
 *                         in memory); and create + run + destroy of a new
 *                         tuner each time, the only one of its context, so
 *                         it opens the cache and reads its file (one
 *                         tune of 50 candidates, 6 kB) again each time
 *
 *   bench_tuner_overhead [RUNS]   prints: name median p10 p90 (us) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "util/strutil.h"
#include "tune/tuner.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *name, double *us, int n)
{
    qsort(us, (size_t)n, sizeof *us, cmp);
    printf("%-34s %9.2f %9.2f %9.2f\n", name, us[n / 2], us[n / 10], us[n * 9 / 10]);
}

static double inside_ns; /* time spent in the subject (callback or runtime) */

static gpuopt_status empty_run(const gpuopt_point *c, void *user, double *ns)
{
    (void)c, (void)user;
    uint64_t t0 = gpo_now_ns();
    *ns = 1000;
    inside_ns += (double)(gpo_now_ns() - t0);
    return GPUOPT_OK;
}

static void pre(const gpuopt_point *c, void *user)
{
    (void)c, (void)user;
}

static gpuopt_context *context(const char *backend, const char *dir, gpuopt_device **dev)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = backend;
    o.cache_dir = dir;
    o.config_path = "";
    o.log_level = "error";
    gpuopt_context *ctx = NULL;
    if (gpuopt_context_create(&o, &ctx) || gpuopt_device_select(ctx, backend, dev)) {
        fprintf(stderr, "no %s device: %s\n", backend, gpuopt_last_error());
        exit(1);
    }
    return ctx;
}

static gpuopt_tuner *callback_tuner(gpuopt_context *ctx, gpuopt_device *dev, int n, int mode)
{
    gpuopt_space *s = NULL;
    int64_t *v = malloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = i;
    gpuopt_space_create(&s);
    gpuopt_space_add_int(s, "X", v, n);
    free(v);
    gpuopt_tuner *t = NULL;
    gpuopt_tuner_create(ctx, dev, s, &t);
    gpuopt_space_destroy(s);
    gpuopt_callback_desc cb = {sizeof cb, empty_run, pre, NULL, NULL};
    gpuopt_tuner_set_callback(t, &cb);
    gpuopt_tuner_settings set = {.struct_size = sizeof set};
    gpuopt_tuner_get_settings(t, &set);
    set.warmup_ms = set.repeat_ms = 0;
    set.min_runs = set.max_runs = 3;
    set.workload_key = "overhead";
    set.cache_mode = mode;
    gpuopt_tuner_set_settings(t, &set);
    return t;
}

static void callback_overhead(gpuopt_context *ctx, gpuopt_device *dev, int mode, const char *name)
{
    enum { N = 1000, REPS = 5 };
    double us[REPS];
    for (int r = 0; r < REPS; r++) {
        gpuopt_tuner *t = callback_tuner(ctx, dev, N, mode);
        gpuopt_result *res = NULL;
        inside_ns = 0;
        uint64_t t0 = gpo_now_ns();
        if (gpuopt_tuner_run(t, &res) != GPUOPT_OK) {
            fprintf(stderr, "run: %s\n", gpuopt_last_error());
            exit(1);
        }
        double wall = (double)(gpo_now_ns() - t0);
        us[r] = (wall - inside_ns) / N / 1e3;
        gpuopt_result_destroy(res);
        gpuopt_tuner_destroy(t);
    }
    report(name, us, REPS);
}

/* ---- every runtime call timed ------------------------------------------------- */

static const gpo_runtime_ops *real;
static gpo_runtime_ops timed;

#define TIMED(expr)                                                                                \
    do {                                                                                           \
        uint64_t t0_ = gpo_now_ns();                                                               \
        expr;                                                                                      \
        __atomic_add_fetch(&inside_int, gpo_now_ns() - t0_, __ATOMIC_RELAXED);                     \
    } while (0)

static uint64_t inside_int;

static gpuopt_status t_build(gpo_rt *rt, const char *s, const char *o, gpo_rt_prog **p, char **l)
{
    gpuopt_status st;
    TIMED(st = real->program_build(rt, s, o, p, l));
    return st;
}
static gpuopt_status t_kernel(gpo_rt *rt, gpo_rt_prog *p, const char *n, gpo_rt_kernel **k)
{
    gpuopt_status st;
    TIMED(st = real->kernel_create(rt, p, n, k));
    return st;
}
static void t_kfree(gpo_rt *rt, gpo_rt_kernel *k)
{
    TIMED(real->kernel_free(rt, k));
}
static gpuopt_status t_setbuf(gpo_rt *rt, gpo_rt_kernel *k, uint32_t i, gpo_rt_buf *b)
{
    gpuopt_status st;
    TIMED(st = real->kernel_set_buffer(rt, k, i, b));
    return st;
}
static gpuopt_status t_setscalar(gpo_rt *rt, gpo_rt_kernel *k, uint32_t i, const void *v, size_t n)
{
    gpuopt_status st;
    TIMED(st = real->kernel_set_scalar(rt, k, i, v, n));
    return st;
}
static gpuopt_status t_maxgroup(gpo_rt *rt, gpo_rt_kernel *k, size_t *m)
{
    gpuopt_status st;
    TIMED(st = real->kernel_max_group(rt, k, m));
    return st;
}
static gpuopt_status t_launch(gpo_rt *rt, gpo_rt_kernel *k, uint32_t d, const size_t g[3],
                              const size_t *l, double *ns)
{
    gpuopt_status st;
    TIMED(st = real->launch(rt, k, d, g, l, ns));
    return st;
}
static gpuopt_status t_write(gpo_rt *rt, gpo_rt_buf *b, size_t off, const void *src, size_t n)
{
    gpuopt_status st;
    TIMED(st = real->buffer_write(rt, b, off, src, n));
    return st;
}
static gpuopt_status t_read(gpo_rt *rt, gpo_rt_buf *b, size_t off, void *dst, size_t n)
{
    gpuopt_status st;
    TIMED(st = real->buffer_read(rt, b, off, dst, n));
    return st;
}
static gpuopt_status t_alloc(gpo_rt *rt, size_t n, gpo_rt_buf **b)
{
    gpuopt_status st;
    TIMED(st = real->buffer_alloc(rt, n, b));
    return st;
}
static void t_free(gpo_rt *rt, gpo_rt_buf *b)
{
    TIMED(real->buffer_free(rt, b));
}
static gpuopt_status t_open(void *s, const gpo_route *r, gpo_rt **rt)
{
    gpuopt_status st;
    TIMED(st = real->open(s, r, rt));
    return st;
}

static const gpo_runtime_ops *hook(const gpo_runtime_ops *r)
{
    real = r;
    timed = *r;
    timed.open = t_open;
    timed.program_build = t_build;
    timed.kernel_create = t_kernel;
    timed.kernel_free = t_kfree;
    timed.kernel_set_buffer = t_setbuf;
    timed.kernel_set_scalar = t_setscalar;
    timed.kernel_max_group = t_maxgroup;
    timed.launch = t_launch;
    timed.buffer_write = t_write;
    timed.buffer_read = t_read;
    timed.buffer_alloc = t_alloc;
    timed.buffer_free = t_free;
    return &timed;
}

static const char *const kernel_src =
    "__kernel void k(__global const float *a, __global float *out, int n)\n"
    "{ int i = get_global_id(0); if (i < n) out[i] = a[i] * (float)X; }\n";
static const char *const ref_src =
    "__kernel void r(__global const float *a, __global float *out, int n)\n"
    "{ int i = get_global_id(0); if (i < n) out[i] = a[i] * 1.0f; }\n";

static void kernel_overhead(gpuopt_context *ctx, gpuopt_device *dev)
{
    enum { N = 24, REPS = 3 };
    double us[REPS];
    for (int r = 0; r < REPS; r++) {
        gpuopt_space *s = NULL;
        int64_t v[N];
        for (int i = 0; i < N; i++)
            v[i] = i + 1;
        gpuopt_space_create(&s);
        gpuopt_space_add_int(s, "X", v, N);
        gpuopt_space_set_size(s, "N", 4096);
        gpuopt_tuner *t = NULL;
        gpuopt_tuner_create(ctx, dev, s, &t);
        gpo_tuner_test_wrap(t, hook);
        gpuopt_kernel_desc k = {.struct_size = sizeof k};
        k.source = kernel_src;
        k.entry = "k";
        k.language = GPUOPT_LANG_OPENCL_C;
        k.global[0] = "N";
        k.local[0] = "64";
        gpuopt_tuner_set_kernel(t, &k);
        gpuopt_buffer_desc in = {.struct_size = sizeof in}, out = {.struct_size = sizeof out};
        in.type = out.type = GPUOPT_ELEM_F32;
        in.count = out.count = "N";
        in.init = GPUOPT_INIT_CONSTANT;
        in.constant = 1;
        out.init = GPUOPT_INIT_ZEROS;
        out.is_output = 1;
        gpuopt_tuner_set_buffer(t, 0, &in);
        gpuopt_tuner_set_buffer(t, 1, &out);
        gpuopt_scalar_desc n = {.struct_size = sizeof n};
        n.type = GPUOPT_ELEM_I32;
        n.expression = "N";
        gpuopt_tuner_set_scalar(t, 2, &n);
        gpuopt_reference_desc ref = {.struct_size = sizeof ref};
        ref.source = ref_src;
        ref.entry = "r";
        ref.global[0] = "N";
        ref.local[0] = "64";
        gpuopt_tuner_set_reference_kernel(t, &ref);
        gpuopt_tuner_settings set = {.struct_size = sizeof set};
        gpuopt_tuner_get_settings(t, &set);
        set.abs_tol = 1e9; /* every X is "right" */
        set.rel_tol = 0;
        set.warmup_ms = set.repeat_ms = 0;
        set.min_runs = set.max_runs = 3;
        set.cache_mode = GPUOPT_CACHE_OFF;
        gpuopt_tuner_set_settings(t, &set);
        gpuopt_result *res = NULL;
        inside_int = 0;
        uint64_t t0 = gpo_now_ns();
        if (gpuopt_tuner_run(t, &res) != GPUOPT_OK) {
            fprintf(stderr, "kernel run: %s\n", gpuopt_last_error());
            exit(1);
        }
        double wall = (double)(gpo_now_ns() - t0);
        gpuopt_result_destroy(res);
        gpuopt_tuner_destroy(t);
        gpuopt_space_destroy(s);
        us[r] = (wall - (double)inside_int) / N / 1e3;
    }
    report("kernel_overhead_us_per_candidate", us, REPS);
}

static void hits(gpuopt_context *ctx, gpuopt_device *dev, int runs)
{
    gpuopt_tuner *t = callback_tuner(ctx, dev, 50, GPUOPT_CACHE_USE);
    gpuopt_result *res = NULL;
    gpuopt_tuner_run(t, &res); /* tuned (or already cached) */
    gpuopt_result_destroy(res);
    double *us = malloc((size_t)runs * sizeof *us);
    for (int i = 0; i < runs; i++) {
        uint64_t t0 = gpo_now_ns();
        gpuopt_tuner_run(t, &res);
        us[i] = (double)(gpo_now_ns() - t0) / 1e3;
        int32_t origin = GPUOPT_ORIGIN_TUNED;
        gpuopt_result_get_origin(res, &origin);
        if (origin != GPUOPT_ORIGIN_CACHE_HIT) {
            fprintf(stderr, "not a hit\n");
            exit(1);
        }
        gpuopt_result_destroy(res);
    }
    report("hit_us_tuner_run", us, runs);
    gpuopt_tuner_destroy(t);
    for (int i = 0; i < runs; i++) {
        uint64_t t0 = gpo_now_ns();
        t = callback_tuner(ctx, dev, 50, GPUOPT_CACHE_USE);
        gpuopt_tuner_run(t, &res);
        gpuopt_result_destroy(res);
        gpuopt_tuner_destroy(t);
        us[i] = (double)(gpo_now_ns() - t0) / 1e3;
    }
    report("hit_us_new_tuner_create_run_destroy", us, runs);
    free(us);
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 2000;
    char dir[] = "/tmp/gpuopt-bench-tuner-XXXXXX";
    if (!mkdtemp(dir) || runs < 10)
        return 1;
    gpuopt_device *dev = NULL;
    gpuopt_context *ctx = context("cpu", dir, &dev);
    printf("%-34s %9s %9s %9s\n", "name", "median", "p10", "p90");
    callback_overhead(ctx, dev, GPUOPT_CACHE_OFF, "callback_overhead_us_cache_off");
    callback_overhead(ctx, dev, GPUOPT_CACHE_REFRESH, "callback_overhead_us_cache_on");
    gpuopt_context_destroy(ctx);
    char sub[64];
    snprintf(sub, sizeof sub, "%s/hits", dir);
    ctx = context("cpu", sub, &dev);
    hits(ctx, dev, runs);
    gpuopt_context_destroy(ctx);
    ctx = context("opencl", dir, &dev);
    kernel_overhead(ctx, dev);
    gpuopt_context_destroy(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
