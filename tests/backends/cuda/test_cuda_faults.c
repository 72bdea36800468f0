/* The fault sweep: every driver call the backend makes is failed at every
 * one of its uses (and at all of them), through the test double's fault
 * injection, across a whole session (load, enumerate, free memory of each
 * device, unload). Each failure must come back as a status with a reason
 * that names the call and the driver's error, leave no primary context or
 * pushed context behind, and leak nothing (this test runs under ASan/LSan
 * in the sanitizer build). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_internal.h"
#include "cuda_test_util.h"

#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"
#define ERR "CUDA_ERROR_UNKNOWN"

static fake_cuda full, legacy;
static int injections; /* faults injected, so a silent no-op sweep shows */

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    return fake_cuda_open(&full, FAKE_CUDA_FULL) || fake_cuda_open(&legacy, FAKE_CUDA_LEGACY);
}

/* One session's outcome: the first failing step and its words. */
typedef struct session {
    gpuopt_status status;
    char step[16]; /* "load", "enumerate", "memory_free" or "" */
    char message[1024];
    char note[512]; /* report reason of a successful load */
    size_t devices;
} session;

static void run_session(const char *library, const fake_cuda *f, const char *fail, session *out)
{
    cuda_env e;
    gpo_backend_report rep;
    gpo_device_list list = {0};
    void *st = NULL;
    memset(out, 0, sizeof *out);
    cuda_env_init(&e, library, NO_KERNEL_DRIVER);
    fake_cuda_configure(f, fake_devices("h100-sxm5.json", "k80.json", "t4.json", NULL), NULL, fail);

    out->status = gpo_backend_cuda.load(&e.env, &st, &rep);
    if (out->status) {
        strcpy(out->step, "load");
        snprintf(out->message, sizeof out->message, "%s", rep.reason);
        assert_null(st);
        goto out;
    }
    snprintf(out->note, sizeof out->note, "%s", rep.reason);
    out->status = gpo_backend_cuda.enumerate(st, &e.env, &list);
    out->devices = list.n;
    if (out->status) {
        strcpy(out->step, "enumerate");
        snprintf(out->message, sizeof out->message, "%s", gpo_detail_get());
        goto out;
    }
    for (size_t i = 0; i < list.n; i++) {
        gpo_route route;
        uint64_t free_bytes = 1;
        memset(&route, 0, sizeof route);
        route.index = list.items[i]->info.index;
        gpuopt_status s = gpo_backend_cuda.memory_free(st, &route, &free_bytes);
        if (s == GPUOPT_ERR_UNSUPPORTED) /* the legacy driver cannot tell */
            continue;
        if (s) {
            out->status = s;
            strcpy(out->step, "memory_free");
            snprintf(out->message, sizeof out->message, "%s", gpo_detail_get());
            assert_int_equal(free_bytes, 0);
            break;
        }
        assert_true(free_bytes > 0);
    }
out:
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

/* A reason names the failed call ("cuX failed" or "cuX(ATTR) failed"). */
static int names_call(const char *message, const char *sym)
{
    char a[96], b[96];
    snprintf(a, sizeof a, "%s failed", sym);
    snprintf(b, sizeof b, "%s(", sym);
    return strstr(message, a) || strstr(message, b);
}

/* Fails `sym` at use `nth` (0: every use) and checks the outcome. */
static void inject(const char *library, const fake_cuda *f, const char *sym, long nth)
{
    char rule[128];
    session s;
    injections++;
    if (nth)
        snprintf(rule, sizeof rule, "%s:%ld:%s", sym, nth, ERR);
    else
        snprintf(rule, sizeof rule, "%s:*:%s", sym, ERR);
    run_session(library, f, rule, &s);

    if (strcmp(sym, "cuDriverGetVersion") == 0) {
        /* Not fatal by design: the version is unknown, the load says so. */
        assert_int_equal(s.status, GPUOPT_OK);
        if (!names_call(s.note, sym) || !strstr(s.note, ERR))
            fail_msg("%s: note '%s' does not name the failure", rule, s.note);
    } else {
        if (s.status == GPUOPT_OK)
            fail_msg("%s: the session succeeded", rule);
        if (!names_call(s.message, sym) || !strstr(s.message, ERR))
            fail_msg("%s: %s failed with '%s', which does not name the call and error", rule,
                     s.step, s.message);
        if (strcmp(s.step, "load") != 0 && s.status != GPUOPT_ERR_DRIVER)
            fail_msg("%s: %s returned %d, not GPUOPT_ERR_DRIVER", rule, s.step, (int)s.status);
    }
    /* Everything the backend retained or pushed is given back, unless the
     * driver refused exactly that (then it holds one, and nothing more). */
    int live = f->live_contexts(), depth = f->stack_depth();
    if (strcmp(sym, "cuDevicePrimaryCtxRelease_v2") == 0)
        assert_true(live <= 1);
    else if (live != 0)
        fail_msg("%s: %d primary context references left", rule, live);
    if (strcmp(sym, "cuCtxPopCurrent_v2") == 0)
        assert_true(depth <= 1);
    else if (depth != 0)
        fail_msg("%s: %d contexts left pushed", rule, depth);
}

static void sweep(const char *library, const fake_cuda *f, int *covered)
{
    session clean;
    long counts[64];
    run_session(library, f, NULL, &clean);
    assert_int_equal(clean.status, GPUOPT_OK);
    assert_int_equal(clean.devices, 3);
    assert_true(gpo_cuda_n_syms <= 64);
    for (size_t i = 0; i < gpo_cuda_n_syms; i++)
        counts[i] = f->calls(gpo_cuda_syms[i].symbol);
    for (size_t i = 0; i < gpo_cuda_n_syms; i++) {
        if (counts[i] == 0)
            continue;
        covered[i] = 1;
        for (long n = 1; n <= counts[i]; n++)
            inject(library, f, gpo_cuda_syms[i].symbol, n);
        inject(library, f, gpo_cuda_syms[i].symbol, 0);
    }
}

static void every_driver_call_failing_at_every_use_gives_a_reason(void **state)
{
    (void)state;
    int covered[64] = {0};
    sweep(FAKE_CUDA_FULL, &full, covered);
    sweep(FAKE_CUDA_LEGACY, &legacy, covered);

    /* The error-naming calls run only after a failure: fail cuInit and
     * them, and the built-in table still names the result. */
    for (size_t i = 0; i < gpo_cuda_n_syms; i++) {
        const char *sym = gpo_cuda_syms[i].symbol;
        if (strncmp(sym, "cuGetError", 10) != 0)
            continue;
        char rule[128];
        session s;
        snprintf(rule, sizeof rule, "cuInit:1:%s,%s:*:CUDA_ERROR_INVALID_VALUE", ERR, sym);
        run_session(FAKE_CUDA_FULL, &full, rule, &s);
        assert_int_equal(s.status, GPUOPT_ERR_DRIVER);
        assert_non_null(strstr(s.message, "cuInit failed with " ERR));
        assert_true(full.calls(sym) > 0);
        covered[i] = 1;
    }
    /* Every use of every call: a few hundred sessions with three GPUs. */
    assert_true(injections > 300);
    /* Every symbol the backend resolves was failed somewhere. */
    for (size_t i = 0; i < gpo_cuda_n_syms; i++)
        if (!covered[i])
            fail_msg("%s is never called in the sweep", gpo_cuda_syms[i].symbol);
}

static void unknown_attribute_is_tolerated_but_other_errors_are_not(void **state)
{
    (void)state;
    session s;
    /* INVALID_VALUE is what an older driver says for a newer attribute: the
     * fact is unknown and listing goes on. The 3rd attribute is the SM count. */
    run_session(FAKE_CUDA_FULL, &full, "cuDeviceGetAttribute:3:CUDA_ERROR_INVALID_VALUE", &s);
    assert_int_equal(s.status, GPUOPT_OK);
    assert_int_equal(s.devices, 3);
    /* ...except for the compute capability, without which nothing is known. */
    run_session(FAKE_CUDA_FULL, &full, "cuDeviceGetAttribute:1:CUDA_ERROR_INVALID_VALUE", &s);
    assert_int_equal(s.status, GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(s.message, "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR) failed: "
                                      "CUDA_ERROR_INVALID_VALUE"));
    /* A failure on the second device names that device. */
    run_session(FAKE_CUDA_FULL, &full, "cuDeviceGetName:2:CUDA_ERROR_UNKNOWN", &s);
    assert_int_equal(s.status, GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(s.message, "cuda: device 1: cuDeviceGetName failed"));
    run_session(FAKE_CUDA_FULL, &full, "cuDeviceTotalMem_v2:2:CUDA_ERROR_UNKNOWN", &s);
    assert_non_null(strstr(s.message, "cuda: device 1 (Tesla K80): cuDeviceTotalMem_v2 failed"));
}

static void malformed_fault_configuration_is_caught_by_the_fake(void **state)
{
    (void)state;
    session s;
    /* A broken rule makes every call fail: the test itself would notice. */
    run_session(FAKE_CUDA_FULL, &full, "cuInit:zero:NOPE", &s);
    assert_string_not_equal(full.config_error(), "");
    assert_int_equal(s.status, GPUOPT_ERR_DRIVER);
    fake_cuda_configure(&full, NULL, NULL, NULL);
    assert_string_equal(full.config_error(), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_driver_call_failing_at_every_use_gives_a_reason),
        cmocka_unit_test(unknown_attribute_is_tolerated_but_other_errors_are_not),
        cmocka_unit_test(malformed_fault_configuration_is_caught_by_the_fake),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
