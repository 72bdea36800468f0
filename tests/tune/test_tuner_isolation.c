/* Kernel candidates measured in the measurement worker (src/isolate), on
 * the CUDA and HIP test doubles: the double "runs" launches, and the first
 * launch of 256-wide blocks faults with one sticky error after another
 * (GPUOPT_FAKE_*_FAULT_BLOCK), whichever process runs it. Each time the
 * search goes on: that candidate is FAULT in the driver's words, a new
 * worker measures the rest, and this process's own context is current and
 * healthy afterwards (the double here was given the same fault, so a
 * launch in this process would have poisoned it). Through gpuopt.h and
 * the doubles' own entry points. */
#include <dlfcn.h>
#include <stdlib.h>

#include "tune/tuner_cuda_scale.h"

static const int64_t blocks[] = {64, 128, 256, 512};

/* tuner_gpu_scale's tuner over 2^16 floats, exhaustive, uncached, with
 * `isolation`. */
static gpuopt_tuner *scale_tuner(const char *backend, int32_t language, int32_t isolation,
                                 gpuopt_context **ctx, gpuopt_space **space)
{
    gpuopt_tuner *t = tuner_gpu_scale(backend, language, NULL, blocks, 4, 1 << 16, ctx, space);
    gpuopt_tuner_settings set;
    memset(&set, 0, sizeof set);
    set.struct_size = sizeof set;
    EXPECT_OK(gpuopt_tuner_get_settings(t, &set));
    assert_int_equal(set.isolation, GPUOPT_ISOLATION_AUTO);
    set.cache_mode = GPUOPT_CACHE_OFF;
    set.strategy = GPUOPT_STRATEGY_EXHAUSTIVE;
    set.isolation = isolation;
    set.min_runs = set.max_runs = 3;
    set.warmup_ms = 0;
    EXPECT_OK(gpuopt_tuner_set_settings(t, &set));
    return t;
}

/* Runs the tuner: every block size evaluated, `faulting` with `status`
 * naming `words`, the others OK, and the winner one of them. */
static void expect_isolated(gpuopt_tuner *t, int32_t status, const char *words, int64_t faulting)
{
    gpuopt_result *r = NULL;
    gpuopt_status st = gpuopt_tuner_run(t, &r);
    if (st != GPUOPT_OK)
        print_message("gpuopt_tuner_run: %s: %s\n", gpuopt_status_name(st), gpuopt_last_error());
    assert_int_equal(st, GPUOPT_OK);
    int32_t count = 0, faults = 0;
    EXPECT_OK(gpuopt_result_count(r, &count));
    assert_int_equal(count, 4);
    for (int32_t i = 0; i < count; i++) {
        gpuopt_candidate c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        EXPECT_OK(gpuopt_result_at(r, i, &c));
        int64_t block = 0;
        EXPECT_OK(gpuopt_point_get_int(c.point, "BLOCK", &block));
        if (block == faulting) {
            faults++;
            assert_int_equal(c.status, status);
            if (!strstr(c.message, words))
                print_message("candidate %d: %s\n", (int)faulting, c.message);
            assert_non_null(strstr(c.message, words));
        } else {
            assert_int_equal(c.status, GPUOPT_CANDIDATE_OK);
        }
    }
    assert_int_equal(faults, 1);
    gpuopt_candidate best;
    memset(&best, 0, sizeof best);
    best.struct_size = sizeof best;
    EXPECT_OK(gpuopt_result_best(r, &best));
    int64_t block = 0;
    EXPECT_OK(gpuopt_point_get_int(best.point, "BLOCK", &block));
    assert_true(block != faulting);
    gpuopt_result_destroy(r);
}

static void expect_256_isolated(gpuopt_tuner *t, const char *words)
{
    expect_isolated(t, GPUOPT_CANDIDATE_FAULT, words, 256);
}

/* ---- CUDA ----------------------------------------------------------------------- */

typedef int (*cu_ctx_fn)(void **);
typedef int (*cu_int_fn)(void);
typedef int (*cu_retain_fn)(void **, int);
typedef int (*cu_push_fn)(void *);
typedef int (*cu_alloc_fn)(unsigned long long *, size_t);
typedef int (*cu_free_fn)(unsigned long long);

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    assert_non_null(p);
    return p;
}

static void each_sticky_cuda_error_is_isolated_named_and_the_host_context_kept(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int value;
    } sticky[] = {
        {"CUDA_ERROR_CONTAINED", 226},
        {"CUDA_ERROR_ILLEGAL_ADDRESS", 700},
        {"CUDA_ERROR_LAUNCH_TIMEOUT", 702},
        {"CUDA_ERROR_ASSERT", 710},
        {"CUDA_ERROR_HARDWARE_STACK_ERROR", 714},
        {"CUDA_ERROR_ILLEGAL_INSTRUCTION", 715},
        {"CUDA_ERROR_MISALIGNED_ADDRESS", 716},
        {"CUDA_ERROR_INVALID_ADDRESS_SPACE", 717},
        {"CUDA_ERROR_INVALID_PC", 718},
        {"CUDA_ERROR_LAUNCH_FAILED", 719},
        {"CUDA_ERROR_TENSOR_MEMORY_LEAK", 721},
        {"CUDA_ERROR_MPS_CLIENT_TERMINATED", 810},
        {"CUDA_ERROR_EXTERNAL_DEVICE", 911},
    };
    /* The host program's own context: the primary one, current. */
    void *h = dlopen(getenv("GPUOPT_CUDA_LIBRARY"), RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    cu_int_fn sync = (cu_int_fn)(uintptr_t)sym(h, "cuCtxSynchronize");
    cu_ctx_fn current = (cu_ctx_fn)(uintptr_t)sym(h, "cuCtxGetCurrent");
    cu_alloc_fn alloc = (cu_alloc_fn)(uintptr_t)sym(h, "cuMemAlloc_v2");
    cu_free_fn release = (cu_free_fn)(uintptr_t)sym(h, "cuMemFree_v2");
    assert_int_equal(((int (*)(unsigned))(uintptr_t)sym(h, "cuInit"))(0), 0);
    void *mine = NULL, *now = NULL;
    assert_int_equal(((cu_retain_fn)(uintptr_t)sym(h, "cuDevicePrimaryCtxRetain"))(&mine, 0), 0);
    assert_int_equal(((cu_push_fn)(uintptr_t)sym(h, "cuCtxPushCurrent_v2"))(mine), 0);
    for (size_t i = 0; i < sizeof sticky / sizeof sticky[0]; i++) {
        char rule[64];
        snprintf(rule, sizeof rule, "1:%d", sticky[i].value);
        setenv("GPUOPT_FAKE_CUDA_FAULT", rule, 1);
        gpuopt_context *ctx = NULL;
        gpuopt_space *s = NULL;
        gpuopt_tuner *t = scale_tuner("cuda", GPUOPT_LANG_CUDA, GPUOPT_ISOLATION_AUTO, &ctx, &s);
        expect_256_isolated(t, sticky[i].name);
        gpuopt_tuner_destroy(t);
        gpuopt_space_destroy(s);
        gpuopt_context_destroy(ctx);
        /* This process's context: still current, and it still works. */
        assert_int_equal(current(&now), 0);
        assert_ptr_equal(now, mine);
        assert_int_equal(sync(), 0);
        unsigned long long p = 0;
        assert_int_equal(alloc(&p, 4096), 0);
        assert_int_equal(release(p), 0);
    }
    setenv("GPUOPT_FAKE_CUDA_FAULT", "1:700", 1);
    assert_int_equal(((cu_ctx_fn)(uintptr_t)sym(h, "cuCtxPopCurrent_v2"))(&now), 0);
    assert_int_equal(((int (*)(int))(uintptr_t)sym(h, "cuDevicePrimaryCtxRelease_v2"))(0), 0);
    dlclose(h);
}

/* In the program's own process (asked for), the same fault ends the
 * search with GPUOPT_ERR_FAULT, never as a build failure. */
static void in_process_a_sticky_error_still_ends_the_search(void **state)
{
    (void)state;
    gpuopt_context *ctx = NULL;
    gpuopt_space *s = NULL;
    gpuopt_tuner *t = scale_tuner("cuda", GPUOPT_LANG_CUDA, GPUOPT_ISOLATION_IN_PROCESS, &ctx, &s);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_ERR_FAULT);
    assert_null(r);
    EXPECT_DETAIL_NAMES("CUDA_ERROR_ILLEGAL_ADDRESS");
    assert_null(strstr(gpuopt_last_error(), "build failed"));
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    gpuopt_context_destroy(ctx);
}

/* Asked for a worker where none can be found: UNAVAILABLE, saying where
 * it looked; AUTO measures in this process instead, where the fault ends
 * the search. */
static void a_worker_asked_for_and_missing_is_unavailable(void **state)
{
    (void)state;
    const char *was = getenv("GPUOPT_WORKER");
    char *keep = was ? strdup(was) : NULL;
    setenv("GPUOPT_WORKER", "/nonexistent/gpuopt-worker", 1);
    gpuopt_context *ctx = NULL;
    gpuopt_space *s = NULL;
    gpuopt_tuner *t = scale_tuner("cuda", GPUOPT_LANG_CUDA, GPUOPT_ISOLATION_WORKER, &ctx, &s);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_ERR_UNAVAILABLE);
    EXPECT_DETAIL_NAMES("no measurement worker");
    EXPECT_DETAIL_NAMES("/nonexistent/gpuopt-worker");
    gpuopt_tuner_settings set;
    memset(&set, 0, sizeof set);
    set.struct_size = sizeof set;
    EXPECT_OK(gpuopt_tuner_get_settings(t, &set));
    set.isolation = GPUOPT_ISOLATION_AUTO;
    EXPECT_OK(gpuopt_tuner_set_settings(t, &set));
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_ERR_FAULT);
    EXPECT_DETAIL_NAMES("CUDA_ERROR_ILLEGAL_ADDRESS");
    set.isolation = 3;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_ERR_OUT_OF_RANGE);
    EXPECT_DETAIL_NAMES("isolation 3");
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    gpuopt_context_destroy(ctx);
    if (keep)
        setenv("GPUOPT_WORKER", keep, 1);
    else
        unsetenv("GPUOPT_WORKER");
    free(keep);
}

/* ---- HIP ------------------------------------------------------------------------ */

static void each_sticky_hip_error_is_isolated_named_and_the_host_device_kept(void **state)
{
    (void)state;
    static const char *const sticky[] = {"hipErrorIllegalAddress", "hipErrorLaunchTimeOut",
                                         "hipErrorAssert", "hipErrorLaunchFailure"};
    void *h = dlopen(getenv("GPUOPT_HIP_LIBRARY"), RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    int (*get_device)(int *) = (int (*)(int *))(uintptr_t)sym(h, "hipGetDevice");
    int (*set_device)(int) = (int (*)(int))(uintptr_t)sym(h, "hipSetDevice");
    int (*hmalloc)(void **, size_t) = (int (*)(void **, size_t))(uintptr_t)sym(h, "hipMalloc");
    int (*hfree)(void *) = (int (*)(void *))(uintptr_t)sym(h, "hipFree");
    /* The program works on device 1; the tuner's device is 0. */
    assert_int_equal(set_device(1), 0);
    for (size_t i = 0; i < sizeof sticky / sizeof sticky[0]; i++) {
        char rule[64];
        snprintf(rule, sizeof rule, "1:%s", sticky[i]);
        setenv("GPUOPT_FAKE_HIP_FAULT", rule, 1);
        gpuopt_context *ctx = NULL;
        gpuopt_space *s = NULL;
        gpuopt_tuner *t = scale_tuner("rocm", GPUOPT_LANG_HIP, GPUOPT_ISOLATION_AUTO, &ctx, &s);
        expect_256_isolated(t, sticky[i]);
        gpuopt_tuner_destroy(t);
        gpuopt_space_destroy(s);
        gpuopt_context_destroy(ctx);
        int d = -1;
        assert_int_equal(get_device(&d), 0);
        assert_int_equal(d, 1);
        void *p = NULL;
        assert_int_equal(hmalloc(&p, 4096), 0);
        assert_int_equal(hfree(p), 0);
    }
    setenv("GPUOPT_FAKE_HIP_FAULT", "1:hipErrorIllegalAddress", 1);
    assert_int_equal(set_device(0), 0);
    dlclose(h);
}

/* The last candidate of a run faults, so its worker is not replaced within
 * that run: the next run of the same tuner starts a new one. */
static void a_worker_a_last_fault_ended_is_replaced_by_the_next_run(void **state)
{
    (void)state;
    setenv("GPUOPT_FAKE_CUDA_FAULT_BLOCK", "512", 1);
    gpuopt_context *ctx = NULL;
    gpuopt_space *s = NULL;
    gpuopt_tuner *t = scale_tuner("cuda", GPUOPT_LANG_CUDA, GPUOPT_ISOLATION_AUTO, &ctx, &s);
    expect_isolated(t, GPUOPT_CANDIDATE_FAULT, "CUDA_ERROR_ILLEGAL_ADDRESS", 512);
    expect_isolated(t, GPUOPT_CANDIDATE_FAULT, "CUDA_ERROR_ILLEGAL_ADDRESS", 512);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    gpuopt_context_destroy(ctx);
    setenv("GPUOPT_FAKE_CUDA_FAULT_BLOCK", "256", 1);
}

/* A kernel that never ends (an endless loop on a GPU without a watchdog)
 * blocks the wait for it. In the worker it is stopped at the tuner's
 * timeout_s by ending the worker: TIMEOUT, and the search goes on. */
static void a_kernel_that_never_ends_is_stopped_with_its_worker(void **state)
{
    (void)state;
    setenv("GPUOPT_FAKE_CUDA_FAULT", "1:hang", 1);
    gpuopt_context *ctx = NULL;
    gpuopt_space *s = NULL;
    gpuopt_tuner *t = scale_tuner("cuda", GPUOPT_LANG_CUDA, GPUOPT_ISOLATION_AUTO, &ctx, &s);
    gpuopt_tuner_settings set;
    memset(&set, 0, sizeof set);
    set.struct_size = sizeof set;
    EXPECT_OK(gpuopt_tuner_get_settings(t, &set));
    set.timeout_s = 5;
    EXPECT_OK(gpuopt_tuner_set_settings(t, &set));
    expect_isolated(t, GPUOPT_CANDIDATE_TIMEOUT, "took longer than the timeout", 256);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    gpuopt_context_destroy(ctx);
    setenv("GPUOPT_FAKE_CUDA_FAULT", "1:700", 1);
}

/* ROCr ends the process on a GPU memory fault (its default handler calls
 * abort()): the worker dies, the candidate is FAULT saying how, and the
 * search goes on in a new worker. */
static void an_aborting_runtime_ends_only_the_worker(void **state)
{
    (void)state;
    setenv("GPUOPT_FAKE_HIP_FAULT", "1:abort", 1);
    gpuopt_context *ctx = NULL;
    gpuopt_space *s = NULL;
    gpuopt_tuner *t = scale_tuner("rocm", GPUOPT_LANG_HIP, GPUOPT_ISOLATION_AUTO, &ctx, &s);
    expect_256_isolated(t, "was killed by signal 6");
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    gpuopt_context_destroy(ctx);
    setenv("GPUOPT_FAKE_HIP_FAULT", "1:hipErrorIllegalAddress", 1);
}

int main(void)
{
    /* The doubles in this process read their fault once, now: a launch of
     * 256-wide blocks here would poison this process's device. */
    setenv("GPUOPT_FAKE_CUDA_FAULT_BLOCK", "256", 1);
    setenv("GPUOPT_FAKE_CUDA_FAULT", "1:700", 1);
    setenv("GPUOPT_FAKE_HIP_FAULT_BLOCK", "256", 1);
    setenv("GPUOPT_FAKE_HIP_FAULT", "1:hipErrorIllegalAddress", 1);
    /* The last two poison this process's CUDA double, as a GPU would be. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_sticky_cuda_error_is_isolated_named_and_the_host_context_kept),
        cmocka_unit_test(each_sticky_hip_error_is_isolated_named_and_the_host_device_kept),
        cmocka_unit_test(an_aborting_runtime_ends_only_the_worker),
        cmocka_unit_test(a_worker_a_last_fault_ended_is_replaced_by_the_next_run),
        cmocka_unit_test(a_kernel_that_never_ends_is_stopped_with_its_worker),
        cmocka_unit_test(in_process_a_sticky_error_still_ends_the_search),
        cmocka_unit_test(a_worker_asked_for_and_missing_is_unavailable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
