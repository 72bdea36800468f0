/* Sections reach the vendors' profilers: an NVTX tool (the test double
 * tests/fakes/ranges/fake_nvtx.c, found through NVTX_INJECTION64_PATH as
 * Nsight Systems' injection library is) and roctx (the test double
 * fake_roctx.c, through GPUOPT_ROCTX_LIBRARY). The doubles record every
 * range call; the test reads the record through the same library the
 * profiler loaded. Public API only.
 *
 * Run three ways by CTest (argv[1]): "attached" (both tools take ranges),
 * "declined" (the NVTX tool declines to attach), "no-ranges" (it attaches
 * but fills no range slot): a tool attaches once per process. */
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"
#include "prof_test.h"

typedef size_t (*log_fn)(char *out, size_t cap);
typedef void (*reset_fn)(void);

#define ctx prof_test_ctx
static char nvtx_log[1 << 16], roctx_log[1 << 16];

/* A function of a test double the profiler loaded (never loads it here),
 * as the function-pointer type `T`. */
static void *double_fn(const char *variable, const char *symbol)
{
    const char *path = getenv(variable);
    assert_non_null(path);
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    void *f = dlsym(h, symbol);
    assert_non_null(f);
    dlclose(h);
    return f;
}
#define NVTX_FN(T, symbol) ((T)(uintptr_t)double_fn("NVTX_INJECTION64_PATH", symbol))
#define ROCTX_FN(T, symbol) ((T)(uintptr_t)double_fn("GPUOPT_ROCTX_LIBRARY", symbol))

static void read_logs(void)
{
    NVTX_FN(log_fn, "gpo_fake_nvtx_log")(nvtx_log, sizeof nvtx_log);
    ROCTX_FN(log_fn, "gpo_fake_roctx_log")(roctx_log, sizeof roctx_log);
}

static void reset_logs(void)
{
    NVTX_FN(reset_fn, "gpo_fake_nvtx_reset")();
    ROCTX_FN(reset_fn, "gpo_fake_roctx_reset")();
}

static gpuopt_profiler *new_profiler(uint32_t flags)
{
    return prof_test_profiler(ctx, NULL, flags, NULL);
}

/* "push <tid> a\npush <tid> b\n..." with this thread's id filled in. */
static void expect_log(const char *log, const char *pattern)
{
    char want[4096], tid[32];
    snprintf(tid, sizeof tid, "%ld", (long)syscall(SYS_gettid));
    size_t o = 0;
    for (const char *s = pattern; *s && o < sizeof want - 32; s++) {
        if (*s == '@') {
            o += (size_t)snprintf(want + o, sizeof want - o, "%s", tid);
        } else {
            want[o++] = *s;
        }
    }
    want[o] = '\0';
    assert_string_equal(log, want);
}

static const cJSON *tool(const cJSON *j, const char *name)
{
    const cJSON *t;
    cJSON_ArrayForEach(
        t, cJSON_GetObjectItem(
               j, "vendor_ranges")) if (strcmp(cJSON_GetObjectItem(t, "tool")->valuestring, name) ==
                                        0) return t;
    return NULL;
}

#define summary prof_test_summary

/* ---- both tools attached ---------------------------------------------------- */

static void sections_reach_nvtx_and_roctx_as_nested_ranges(void **state)
{
    (void)state;
    gpuopt_profiler *p = new_profiler(0); /* the first one loads the tools */
    reset_logs();
    assert_int_equal(gpuopt_profiler_begin(p, "inference"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_begin(p, "matmul"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "matmul"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "inference"), GPUOPT_OK);
    read_logs();
    expect_log(nvtx_log, "push @ inference\npush @ matmul\npop @\npop @\n");
    expect_log(roctx_log, "push @ inference\npush @ matmul\npop @\npop @\n");

    cJSON *j = summary(p);
    const cJSON *n = tool(j, "nvtx"), *r = tool(j, "roctx");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(n, "attached")));
    assert_non_null(strstr(cJSON_GetObjectItem(n, "note")->valuestring, "NVTX_INJECTION64_PATH="));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "attached")));
    assert_non_null(strstr(cJSON_GetObjectItem(r, "note")->valuestring, "rocprofiler-sdk-roctx"));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
}

static void a_refused_end_pops_no_range(void **state)
{
    (void)state;
    gpuopt_profiler *p = new_profiler(0); /* the first one loads the tools */
    reset_logs();
    assert_int_equal(gpuopt_profiler_end(p, "nothing-open"), GPUOPT_ERR_NESTING);
    assert_int_equal(gpuopt_profiler_begin(p, "a"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "b"), GPUOPT_ERR_NESTING);
    assert_int_equal(gpuopt_profiler_begin(p, "\x01"
                                              "bad"),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_profiler_end(p, "a"), GPUOPT_OK);
    read_logs();
    expect_log(nvtx_log, "push @ a\npop @\n");
    expect_log(roctx_log, "push @ a\npop @\n");
    gpuopt_profiler_destroy(p);
}

static void the_tool_meets_nvtx_3_with_every_modules_table_once_per_process(void **state)
{
    (void)state;
    gpuopt_profiler *p = new_profiler(0), *q = new_profiler(0);
    int (*inits)(void) = NVTX_FN(int (*)(void), "gpo_fake_nvtx_inits");
    uint32_t (*version)(void) = NVTX_FN(uint32_t(*)(void), "gpo_fake_nvtx_client_version");
    unsigned (*size)(int) = NVTX_FN(unsigned (*)(int), "gpo_fake_nvtx_module_size");
    assert_int_equal(inits(), 1);
    assert_int_equal(version(), 3);
    /* NvtxCallbackIdCore .. Sync sizes (nvtxTypes.h, CUDA 13.0). */
    static const unsigned sizes[] = {0, 16, 9, 15, 7, 16, 7};
    for (int m = 1; m <= 6; m++)
        assert_int_equal(size(m), sizes[m]);
    gpuopt_profiler_destroy(q);
    gpuopt_profiler_destroy(p);
}

static void no_vendor_ranges_keeps_the_tools_out(void **state)
{
    (void)state;
    gpuopt_profiler *p = new_profiler(GPUOPT_PROFILER_NO_VENDOR_RANGES);
    reset_logs();
    assert_int_equal(gpuopt_profiler_begin(p, "quiet"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "quiet"), GPUOPT_OK);
    read_logs();
    assert_string_equal(nvtx_log, "");
    assert_string_equal(roctx_log, "");
    cJSON *j = summary(p);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "vendor_ranges")), 0);
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
}

static void *nested_on_a_thread(void *arg)
{
    gpuopt_profiler *p = arg;
    for (int i = 0; i < 50; i++) {
        if (gpuopt_profiler_begin(p, "outer") || gpuopt_profiler_begin(p, "inner") ||
            gpuopt_profiler_end(p, "inner") || gpuopt_profiler_end(p, "outer"))
            return (void *)1;
    }
    return NULL;
}

/* Per thread, the ranges a tool sees are balanced and nested as begun. */
static void each_threads_ranges_stay_nested_when_threads_interleave(void **state)
{
    (void)state;
    gpuopt_profiler *p = new_profiler(0); /* the first one loads the tools */
    reset_logs();
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, nested_on_a_thread, p), 0);
    for (int i = 0; i < 4; i++) {
        void *failed = NULL;
        assert_int_equal(pthread_join(t[i], &failed), 0);
        assert_null(failed);
    }
    read_logs();
    /* Replay each thread's pushes and pops. */
    struct {
        long tid;
        int depth;
        char top[2][16];
        int lines;
    } seen[4];
    int n_seen = 0;
    for (char *line = strtok(nvtx_log, "\n"); line; line = strtok(NULL, "\n")) {
        char op[8], name[64] = "";
        long tid = 0;
        assert_true(sscanf(line, "%7s %ld %63s", op, &tid, name) >= 2);
        int k = 0;
        while (k < n_seen && seen[k].tid != tid)
            k++;
        if (k == n_seen) {
            assert_true(n_seen < 4);
            seen[n_seen].tid = tid;
            seen[n_seen].depth = 0;
            seen[n_seen].lines = 0;
            n_seen++;
        }
        seen[k].lines++;
        if (strcmp(op, "push") == 0) {
            assert_true(seen[k].depth < 2);
            assert_string_equal(name, seen[k].depth == 0 ? "outer" : "inner");
            seen[k].depth++;
        } else {
            assert_true(seen[k].depth > 0);
            seen[k].depth--;
        }
    }
    assert_int_equal(n_seen, 4);
    for (int k = 0; k < 4; k++) {
        assert_int_equal(seen[k].depth, 0);
        assert_int_equal(seen[k].lines, 50 * 4);
    }
    gpuopt_profiler_destroy(p);
}

/* ---- the NVTX tool declines, or takes no ranges ----------------------------- */

static void a_declining_tool_gets_no_ranges_and_the_outputs_say_so(void **state)
{
    (void)state;
    const char *want = state && *state ? *state : "declined to attach";
    gpuopt_profiler *p = new_profiler(0); /* the first one loads the tools */
    reset_logs();
    assert_int_equal(gpuopt_profiler_begin(p, "x"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "x"), GPUOPT_OK);
    read_logs();
    assert_string_equal(nvtx_log, "");
    expect_log(roctx_log, "push @ x\npop @\n"); /* roctx is another tool */
    cJSON *j = summary(p);
    const cJSON *n = tool(j, "nvtx");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(n, "attached")));
    assert_non_null(strstr(cJSON_GetObjectItem(n, "note")->valuestring, want));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "attached";
    if (strcmp(mode, "attached") == 0) {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(sections_reach_nvtx_and_roctx_as_nested_ranges),
            cmocka_unit_test(a_refused_end_pops_no_range),
            cmocka_unit_test(the_tool_meets_nvtx_3_with_every_modules_table_once_per_process),
            cmocka_unit_test(no_vendor_ranges_keeps_the_tools_out),
            cmocka_unit_test(each_threads_ranges_stay_nested_when_threads_interleave),
        };
        return cmocka_run_group_tests(tests, prof_test_group_setup, prof_test_group_teardown);
    }
    static const char *declined = "declined to attach";
    static const char *no_ranges = "takes no ranges";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(a_declining_tool_gets_no_ranges_and_the_outputs_say_so,
                                  (void *)(strcmp(mode, "declined") == 0 ? declined : no_ranges)),
    };
    return cmocka_run_group_tests(tests, prof_test_group_setup, prof_test_group_teardown);
}
