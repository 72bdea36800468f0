/* Tier 2 on PoCL for real, through the test-double loader in passthrough
 * mode (every call reaches PoCL; any call can be made to fail): a level-2
 * plan measures; later plans in the same process and in a new one answer
 * from the cache while every runtime call is made to fail (so nothing ran);
 * a driver call failing mid-tier leaves level 1 with the call named and no
 * OpenCL object behind; a changed driver version re-verifies the sweeps. */
#include <dirent.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "ocl_test.h"
#include "tier2/tier2.h"

extern char **environ;

/* Every call a measurement makes and a cache answer must not. */
static const char runtime_calls[] =
    "clCreateContext,clCreateCommandQueue,clCreateCommandQueueWithProperties,clCreateBuffer,"
    "clCreateProgramWithSource,clBuildProgram,clEnqueueNDRangeKernel,clEnqueueWriteBuffer,"
    "clEnqueueReadBuffer";

static const char *const measured[] = {
    "launch.block_size",     "launch.reduce_block_size",  "transfer.pinned",
    "measured.h2d_pageable", "measured.h2d_pinned",       "measured.d2h_pageable",
    "measured.d2h_pinned",   "measured.memory_bandwidth", "measured.launch_latency_ns",
};
#define N_MEASURED (sizeof measured / sizeof measured[0])

static char dir[512];
static char events[8192];

static void hook(const char *event, const char *kind)
{
    size_t n = strlen(events);
    snprintf(events + n, sizeof events - n, "%s:%s;", event, kind);
}

static int count(const char *what)
{
    int c = 0;
    for (const char *p = events; (p = strstr(p, what)); p++)
        c++;
    return c;
}

static gpuopt_context *context(void)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "opencl";
    o.cache_dir = dir;
    o.log_level = "off";
    gpuopt_context *ctx = NULL;
    if (gpuopt_context_create(&o, &ctx) != GPUOPT_OK)
        fail_msg("no context: %s", gpuopt_last_error());
    return ctx;
}

static gpuopt_plan *plan(gpuopt_context *ctx, int applied)
{
    gpuopt_device *d = NULL;
    gpuopt_plan *p = NULL;
    if (gpuopt_device_select(ctx, "opencl:0", &d) != GPUOPT_OK)
        fail_msg("no opencl:0: %s", gpuopt_last_error());
    assert_int_equal(gpuopt_plan_create(ctx, d, 2, &p), GPUOPT_OK);
    int32_t asked, got;
    assert_int_equal(gpuopt_plan_level(p, &asked, &got), GPUOPT_OK);
    if (got != applied) {
        const char *w = "(none)";
        gpuopt_plan_warning_at(p, 0, &w);
        fail_msg("level %d applied, %d expected; warning: %s", (int)got, applied, w);
    }
    return p;
}

static gpuopt_knob knob(const gpuopt_plan *p, const char *name)
{
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    if (gpuopt_plan_knob_find(p, name, &k) != GPUOPT_OK)
        fail_msg("the plan has no knob %s", name);
    return k;
}

/* Returns the number of measured knobs not from `source` (0: all are). */
static int not_from(const gpuopt_plan *p, int32_t source, char *why, size_t cap)
{
    int bad = 0;
    for (size_t i = 0; i < N_MEASURED; i++) {
        gpuopt_knob k;
        memset(&k, 0, sizeof k);
        k.struct_size = sizeof k;
        if (gpuopt_plan_knob_find(p, measured[i], &k) != GPUOPT_OK || k.source != source ||
            k.tier != 2) {
            if (!bad)
                snprintf(why, cap, "%s: source %d tier %d", measured[i], (int)k.source,
                         (int)k.tier);
            bad++;
        }
    }
    return bad;
}

static int fresh_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/tests/backends/opencl/tier2-XXXXXX", GPO_BUILD_DIR);
    events[0] = '\0';
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The child process: every runtime call fails, yet level 2 from the cache. */
static int from_cache_child(const char *cache)
{
    snprintf(dir, sizeof dir, "%s", cache);
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "opencl";
    o.cache_dir = dir;
    o.log_level = "off";
    gpuopt_context *ctx = NULL;
    gpuopt_device *d = NULL;
    gpuopt_plan *p = NULL;
    int32_t asked = 0, got = 0;
    char why[256] = "";
    int ok = gpuopt_context_create(&o, &ctx) == GPUOPT_OK &&
             gpuopt_device_select(ctx, "opencl:0", &d) == GPUOPT_OK &&
             gpuopt_plan_create(ctx, d, 2, &p) == GPUOPT_OK &&
             gpuopt_plan_level(p, &asked, &got) == GPUOPT_OK && got == 2 &&
             not_from(p, GPUOPT_SOURCE_CACHE, why, sizeof why) == 0;
    if (!ok) {
        const char *w = "";
        if (p)
            gpuopt_plan_warning_at(p, 0, &w);
        fprintf(stderr, "child: level %d, %s; %s %s\n", (int)got, why, w, gpuopt_last_error());
    }
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
    return ok ? 0 : 1;
}

static void measured_once_then_answered_from_the_cache_with_every_runtime_call_failing(void **state)
{
    (void)state;
    char why[256];
    gpuopt_context *ctx = context();
    gpuopt_plan *p = plan(ctx, 2);
    if (not_from(p, GPUOPT_SOURCE_BENCHMARK, why, sizeof why))
        fail_msg("measured plan: %s", why);
    assert_int_equal(count("measure:"), 6);
    gpuopt_knob b = knob(p, "launch.block_size");
    assert_int_equal(b.int_value % 8, 0); /* PoCL's preferred multiple */
    assert_non_null(strstr(b.reason, "measured"));
    gpuopt_knob r = knob(p, "launch.reduce_block_size");
    assert_int_equal(r.int_value & (r.int_value - 1), 0);
    assert_true(knob(p, "measured.memory_bandwidth").int_value > 0);
    gpuopt_plan_destroy(p);

    ocl_fake_set_faults(GPO_FAKE_OPENCL, runtime_calls);
    events[0] = '\0';
    p = plan(ctx, 2);
    if (not_from(p, GPUOPT_SOURCE_CACHE, why, sizeof why))
        fail_msg("second plan: %s", why);
    assert_int_equal(count("hit:"), 6);
    assert_int_equal(count("measure:"), 0);
    assert_int_equal(knob(p, "launch.block_size").int_value, b.int_value);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);

    /* A new process, the same cache, every runtime call failing there too. */
    char self[600], env_fail[600];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    snprintf(env_fail, sizeof env_fail, "GPUOPT_FAKE_OPENCL_FAIL=%s", runtime_calls);
    char *argv[] = {self, (char *)"--from-cache", dir, NULL};
    size_t ne = 0;
    while (environ[ne])
        ne++;
    char **envp = calloc(ne + 2, sizeof *envp);
    assert_non_null(envp);
    size_t k = 0;
    for (size_t i = 0; i < ne; i++)
        if (strncmp(environ[i], "GPUOPT_FAKE_OPENCL_FAIL=", 24) != 0)
            envp[k++] = environ[i];
    envp[k++] = env_fail;
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, self, NULL, NULL, argv, envp), 0);
    free(envp);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void a_driver_call_failing_mid_tier_leaves_level_1_and_nothing_open(void **state)
{
    (void)state;
    static const char *const faults[] = {"clEnqueueNDRangeKernel@40", "clCreateBuffer@4",
                                         "clBuildProgram", "clEnqueueReadBuffer@3"};
    gpuopt_context *ctx = context();
    gpuopt_device *d = NULL;
    assert_int_equal(gpuopt_device_select(ctx, "opencl:0", &d), GPUOPT_OK);
    long before = ocl_fake_live(GPO_FAKE_OPENCL);
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
        /* Nothing stored by an earlier round: every round measures all. */
        assert_int_equal(gpuopt_cache_clear(ctx, NULL), GPUOPT_OK);
        ocl_fake_set_faults(GPO_FAKE_OPENCL, faults[i]);
        gpuopt_plan *p = plan(ctx, 1);
        const char *w = "";
        assert_int_equal(gpuopt_plan_warning_at(p, 0, &w), GPUOPT_OK);
        char call[64];
        snprintf(call, sizeof call, "%.*s", (int)strcspn(faults[i], "@"), faults[i]);
        if (!strstr(w, call) || !strstr(w, "opencl: ") || !strstr(w, "stays at level 1"))
            fail_msg("%s: warning \"%s\"", faults[i], w);
        assert_int_equal(knob(p, "launch.block_size").tier, 1);
        gpuopt_knob k;
        memset(&k, 0, sizeof k);
        k.struct_size = sizeof k;
        assert_int_equal(gpuopt_plan_knob_find(p, "measured.launch_latency_ns", &k),
                         GPUOPT_ERR_NOT_FOUND);
        assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), before);
        gpuopt_plan_destroy(p);
    }
    gpuopt_context_destroy(ctx);
}

/* Rewrites every "driver":"<was>" of the cache file to another version. */
static void age_driver(const char *was)
{
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    struct dirent *e;
    char path[1024] = "";
    while ((e = readdir(dp)))
        if (strstr(e->d_name, ".json") && !strstr(e->d_name, ".lock") && e->d_name[0] != '.')
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    closedir(dp);
    assert_true(path[0]);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 20], out[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char from[128], to[] = "\"driver\":\"0.0-before-update\"";
    snprintf(from, sizeof from, "\"driver\":\"%s\"", was);
    size_t o = 0, changed = 0;
    for (const char *p = text; *p;) {
        if (strncmp(p, from, strlen(from)) == 0) {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", to);
            p += strlen(from);
            changed++;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    assert_true(changed > 0);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(out, 1, o, f), o);
    fclose(f);
}

static void a_changed_driver_version_re_verifies_the_sweeps(void **state)
{
    (void)state;
    gpuopt_context *ctx = context();
    gpuopt_device *d = NULL;
    assert_int_equal(gpuopt_device_select(ctx, "opencl:0", &d), GPUOPT_OK);
    gpuopt_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    assert_int_equal(gpuopt_device_get_info(d, &info), GPUOPT_OK);
    gpuopt_plan_destroy(plan(ctx, 2));
    gpuopt_context_destroy(ctx);

    age_driver(info.driver_version);
    events[0] = '\0';
    ctx = context();
    gpuopt_plan *p = plan(ctx, 2);
    assert_int_equal(count("verify:bench.block_stream"), 1);
    assert_int_equal(count("verify:bench.block_reduce"), 1);
    /* Each sweep either kept its winner (the reason says so) or measured
     * again right after the verification. */
    static const char *const sweeps[2][2] = {{"launch.block_size", "bench.block_stream"},
                                             {"launch.reduce_block_size", "bench.block_reduce"}};
    for (int i = 0; i < 2; i++) {
        gpuopt_knob k = knob(p, sweeps[i][0]);
        char again[96];
        snprintf(again, sizeof again, "verify:%s;measure:%s;", sweeps[i][1], sweeps[i][1]);
        if (!strstr(k.reason, "re-verified now because the driver changed") &&
            !strstr(events, again))
            fail_msg("%s neither kept nor re-measured: %s (%s)", sweeps[i][0], k.reason, events);
        assert_int_equal(k.source, GPUOPT_SOURCE_BENCHMARK);
    }
    gpuopt_plan_destroy(p);

    events[0] = '\0';
    p = plan(ctx, 2);
    char why[256];
    if (not_from(p, GPUOPT_SOURCE_CACHE, why, sizeof why))
        fail_msg("after verification: %s", why);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    /* The test-double loader in passthrough mode stands in for the ICD
     * loader, so calls can be made to fail and objects counted. */
    setenv("GPUOPT_OPENCL_LIBRARY", GPO_FAKE_OPENCL, 1);
    if (argc == 3 && strcmp(argv[1], "--from-cache") == 0)
        return from_cache_child(argv[2]);
    gpo_tier2_hook = hook;
    /* Sweeps run to their end here even under sanitizers on a busy host. */
    gpo_tier2_budget_scale = 20;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            measured_once_then_answered_from_the_cache_with_every_runtime_call_failing, fresh_dir,
            remove_dir),
        cmocka_unit_test_setup_teardown(
            a_driver_call_failing_mid_tier_leaves_level_1_and_nothing_open, fresh_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_changed_driver_version_re_verifies_the_sweeps, fresh_dir,
                                        remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
