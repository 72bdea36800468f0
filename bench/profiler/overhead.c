/* What a profiler section costs the program, measured side by side in one
 * run (docs/benchmarks.md, "Profiler"): a begin/end pair of a host-timed
 * section, of a disabled profiler, of a NULL profiler through the
 * GPUOPT_PROFILE_* macros (one branch, no call), and of a section that is
 * also an NVTX range; against an empty loop and against NVTX-style
 * push/pop, i.e. the tool's own range calls through function pointers, as
 * a program calls them once NVTX has attached.
 *
 *   bench_profiler [ITERATIONS] [NVTX_TOOL.so]
 *
 * NVTX_TOOL.so is an NVTX injection library (the tests' double,
 * tests/fakes/ranges/fake_nvtx.c, which takes a timestamp per push as a
 * tool does); without it the NVTX rows are skipped. Prints one line per
 * row: name, median ns per pair over 11 runs, p10, p90. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpuopt/gpuopt.h>

#define RUNS 11

static long iterations = 200000;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Keeps the compiler from removing or merging the loop body. */
#define BARRIER() __asm__ __volatile__("" ::: "memory")

typedef void (*pair_fn)(void *arg);

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void measure(const char *name, pair_fn fn, void *arg)
{
    double per[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iterations; i++) {
            fn(arg);
            BARRIER();
        }
        per[r] = (now_ns() - t0) / (double)iterations;
    }
    qsort(per, RUNS, sizeof per[0], cmp);
    printf("%s %.2f %.2f %.2f\n", name, per[RUNS / 2], per[1], per[RUNS - 2]);
    fflush(stdout);
}

/* Each row is one begin/end pair, called through the same kind of
 * non-inlined function so the loop's own cost is the same everywhere. */
__attribute__((noinline)) static void empty(void *arg)
{
    (void)arg;
    BARRIER();
}

__attribute__((noinline)) static void clock_pair(void *arg)
{
    (void)arg;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    BARRIER();
}

__attribute__((noinline)) static void macros(void *arg)
{
    gpuopt_profiler *p = arg;
    GPUOPT_PROFILE_BEGIN(p, "section");
    GPUOPT_PROFILE_END(p, "section");
}

__attribute__((noinline)) static void calls(void *arg)
{
    gpuopt_profiler *p = arg;
    gpuopt_profiler_begin(p, "section");
    gpuopt_profiler_end(p, "section");
}

__attribute__((noinline)) static void calls_nested(void *arg)
{
    gpuopt_profiler *p = arg;
    gpuopt_profiler_begin(p, "inference");
    gpuopt_profiler_begin(p, "matmul");
    gpuopt_profiler_end(p, "matmul");
    gpuopt_profiler_end(p, "inference");
}

typedef int (*push_fn)(const char *);
typedef int (*pop_fn)(void);
static push_fn tool_push;
static pop_fn tool_pop;

__attribute__((noinline)) static void nvtx_style(void *arg)
{
    (void)arg;
    tool_push("section");
    tool_pop();
}

static gpuopt_profiler *make(gpuopt_context *ctx, uint32_t flags, int32_t max_sections)
{
    gpuopt_profiler_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = flags;
    o.trace_path = "";
    o.max_sections = max_sections;
    gpuopt_profiler *p = NULL;
    if (gpuopt_profiler_create(ctx, NULL, &o, &p) != GPUOPT_OK) {
        fprintf(stderr, "bench_profiler: %s\n", gpuopt_last_error());
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iterations = atol(argv[1]);
    const char *tool = argc > 2 ? argv[2] : NULL;
    gpuopt_options co;
    memset(&co, 0, sizeof co);
    co.struct_size = sizeof co;
    co.backends = "cpu";
    gpuopt_context *ctx = NULL;
    if (gpuopt_context_create(&co, &ctx) != GPUOPT_OK)
        return 1;
    /* Every pair is kept (the default keeps a million, then counts the
     * rest as dropped, which is cheaper): RUNS x iterations sections. */
    int32_t keep = (int32_t)(RUNS * iterations + 16);
    gpuopt_profiler *off =
        make(ctx, GPUOPT_PROFILER_START_DISABLED | GPUOPT_PROFILER_NO_VENDOR_RANGES, 0);
    gpuopt_profiler *host = make(ctx, GPUOPT_PROFILER_NO_VENDOR_RANGES, keep);
    gpuopt_profiler *nested = make(ctx, GPUOPT_PROFILER_NO_VENDOR_RANGES, 2 * keep);

    measure("empty_loop", empty, NULL);
    measure("clock_gettime_pair", clock_pair, NULL);
    measure("macros_null_profiler", macros, NULL);
    measure("disabled_profiler", calls, off);
    measure("host_section", calls, host);
    measure("host_section_nested_pair", calls_nested, nested);

    if (tool) {
        void *h = dlopen(tool, RTLD_NOW | RTLD_LOCAL);
        void *push = h ? dlsym(h, "gpo_fake_nvtx_push") : NULL;
        void *pop = h ? dlsym(h, "gpo_fake_nvtx_pop") : NULL;
        if (!push || !pop) {
            fprintf(stderr, "bench_profiler: %s is not the NVTX test double\n", tool);
            return 1;
        }
        memcpy(&tool_push, &push, sizeof push);
        memcpy(&tool_pop, &pop, sizeof pop);
        measure("nvtx_style_push_pop", nvtx_style, NULL);
        /* The profiler attaches to the tool the first time it looks. */
        setenv("NVTX_INJECTION64_PATH", tool, 1);
        gpuopt_profiler *ranged = make(ctx, 0, keep);
        char *json = NULL;
        gpuopt_profiler_report(ranged, GPUOPT_PROFILE_JSON, &json);
        if (!json || !strstr(json, "\"tool\":\"nvtx\",\"attached\":true")) {
            fprintf(stderr, "bench_profiler: the profiler did not attach to %s\n", tool);
            return 1;
        }
        gpuopt_free(json);
        measure("host_section_with_nvtx", calls, ranged);
        gpuopt_profiler_destroy(ranged);
    }
    gpuopt_profiler_destroy(nested);
    gpuopt_profiler_destroy(host);
    gpuopt_profiler_destroy(off);
    gpuopt_context_destroy(ctx);
    return 0;
}
