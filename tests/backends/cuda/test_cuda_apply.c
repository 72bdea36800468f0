/* gpuopt_plan_apply(GPUOPT_APPLY_DEVICE) on CUDA, through the public API:
 * the plan's L2 set-aside becomes the persisting-L2 limit of the calling
 * thread's current context, which the test makes current as a framework
 * would (the fake's make_current), and nothing else: no context is created,
 * retained or pushed by the library. CTest points GPUOPT_CUDA_LIBRARY at the
 * full fake describing cuda:0 H100, cuda:1 RTX 4090, cuda:2 T4 and cuda:3 an
 * A100 whose contexts are MPS clients (synthetic/a100-mps.json). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"

#define H100_L2_SET_ASIDE "39321600"    /* min(3/4 of 50 MiB, the maximum 37.5 MiB) */
#define RTX4090_L2_SET_ASIDE "56623104" /* min(3/4 of 72 MiB, the maximum 54 MiB) */

/* The fake's controls and the driver calls the test checks the limit with,
 * from the same library object the backend loads. */
static struct {
    void *handle;
    void (*reset)(void);
    long (*calls)(const char *sym);
    int (*make_current)(int index);
    int (*clear_current)(void);
    int (*stack_depth)(void);
    int (*live_contexts)(void);
    int (*get_limit)(size_t *value, int limit);
} fake;

#define PERSISTING_L2_CACHE_SIZE 0x06 /* CU_LIMIT_PERSISTING_L2_CACHE_SIZE */

static int sym(void *dst, const char *name)
{
    void *p = dlsym(fake.handle, name);
    memcpy(dst, &p, sizeof p);
    return p ? 0 : -1;
}

static int setup(void **state)
{
    (void)state;
    fake.handle = dlopen(getenv("GPUOPT_CUDA_LIBRARY"), RTLD_NOW | RTLD_LOCAL);
    if (!fake.handle)
        return -1;
    return sym(&fake.reset, "gpo_fake_cuda_reset") || sym(&fake.calls, "gpo_fake_cuda_calls") ||
           sym(&fake.make_current, "gpo_fake_cuda_make_current") ||
           sym(&fake.clear_current, "gpo_fake_cuda_clear_current") ||
           sym(&fake.stack_depth, "gpo_fake_cuda_stack_depth") ||
           sym(&fake.live_contexts, "gpo_fake_cuda_live_contexts") ||
           sym(&fake.get_limit, "cuCtxGetLimit");
}

/* Each test starts from a freshly configured driver. */
static int fresh(void **state)
{
    (void)state;
    unsetenv("GPUOPT_FAKE_CUDA_FAIL");
    unsetenv("GPUOPT_FAKE_CUDA_DRIVER_VERSION");
    fake.reset();
    return 0;
}

static char log_lines[4096];

static void keep_log(int32_t level, const char *message, void *user)
{
    (void)user;
    size_t n = strlen(log_lines);
    if (level == GPUOPT_LOG_INFO)
        snprintf(log_lines + n, sizeof log_lines - n, "%s\n", message);
}

static gpuopt_context *context(void)
{
    gpuopt_options o;
    gpuopt_context *ctx = NULL;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = "cuda";
    o.config_path = "";
    o.log_level = "info";
    o.log_fn = keep_log;
    log_lines[0] = '\0';
    assert_int_equal(gpuopt_context_create(&o, &ctx), GPUOPT_OK);
    return ctx;
}

static gpuopt_plan *plan_for(gpuopt_context *ctx, const char *id, int level)
{
    gpuopt_device *dev = NULL;
    gpuopt_plan *plan = NULL;
    assert_int_equal(gpuopt_device_select(ctx, id, &dev), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, dev, level, &plan), GPUOPT_OK);
    return plan;
}

/* Applies the device settings; returns the status, the report in *report
 * (the caller's; NULL after a failure, whose words are in the detail).
 * Checks the library made, kept and pushed no context. */
static gpuopt_status apply(gpuopt_plan *plan, uint32_t flags, char **report)
{
    long retains = fake.calls("cuDevicePrimaryCtxRetain");
    long pushes = fake.calls("cuCtxPushCurrent_v2");
    int depth = fake.stack_depth(), live = fake.live_contexts();
    gpuopt_status st = gpuopt_plan_apply(plan, flags, report);
    if (st == GPUOPT_OK)
        assert_non_null(*report);
    else
        assert_null(*report);
    assert_int_equal(fake.calls("cuDevicePrimaryCtxRetain"), retains);
    assert_int_equal(fake.calls("cuCtxPushCurrent_v2"), pushes);
    assert_int_equal(fake.stack_depth(), depth);
    assert_int_equal(fake.live_contexts(), live);
    return st;
}

static size_t current_limit(void)
{
    size_t v = 12345;
    assert_int_equal(fake.get_limit(&v, PERSISTING_L2_CACHE_SIZE), 0);
    return v;
}

static void without_a_current_context_nothing_is_set_and_the_detail_says_why(void **state)
{
    (void)state;
    char *report = NULL;
    gpuopt_context *ctx = context();
    gpuopt_plan *plan = plan_for(ctx, "cuda:0", 1);
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuopt_last_error(), "refused on cuda:0: the calling thread has no "
                                                "current CUDA context, and gpuopt never creates "
                                                "one"));
    assert_non_null(strstr(gpuopt_last_error(), "cudaSetDevice(0)"));
    assert_int_equal(fake.calls("cuCtxSetLimit"), 0);
    assert_int_equal(fake.calls("cuCtxGetDevice"), 0);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void a_context_of_another_device_is_refused_naming_both(void **state)
{
    (void)state;
    char *report = NULL;
    gpuopt_context *ctx = context();
    gpuopt_plan *plan = plan_for(ctx, "cuda:0", 1);
    assert_int_equal(fake.make_current(1), 0); /* the RTX 4090's */
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuopt_last_error(), "refused on cuda:0: the calling thread's current "
                                                "CUDA context is on cuda:1, but the plan is for "
                                                "cuda:0 (NVIDIA H100 80GB HBM3)"));
    assert_int_equal(fake.calls("cuCtxSetLimit"), 0);
    assert_int_equal(current_limit(), 0); /* the 4090's context is untouched */
    assert_int_equal(fake.clear_current(), 0);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void the_plan_devices_current_context_gets_the_limit_read_back(void **state)
{
    (void)state;
    char *report = NULL;
    gpuopt_context *ctx = context();
    gpuopt_plan *plan = plan_for(ctx, "cuda:0", 1);
    gpuopt_knob knob;
    knob.struct_size = sizeof knob;
    assert_int_equal(gpuopt_plan_knob_find(plan, "cuda.l2_persisting_bytes", &knob), GPUOPT_OK);
    assert_string_equal(knob.value, H100_L2_SET_ASIDE);

    assert_int_equal(fake.make_current(0), 0);
    log_lines[0] = '\0';
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_string_equal(report, "set cuda L2 persisting limit to " H100_L2_SET_ASIDE
                                " bytes on cuda:0 (was 0)\n");
    gpuopt_free(report);
    assert_int_equal(current_limit(), 39321600);
    assert_int_equal(fake.calls("cuCtxSetLimit"), 1);
    /* One info line per action. */
    assert_string_equal(log_lines, "cuda: set cuda L2 persisting limit to " H100_L2_SET_ASIDE
                                   " bytes on cuda:0 (was 0)\n");
    /* Again: the report tells the value it replaced. */
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_string_equal(report, "set cuda L2 persisting limit to " H100_L2_SET_ASIDE
                                " bytes on cuda:0 (was " H100_L2_SET_ASIDE ")\n");
    gpuopt_free(report);
    assert_int_equal(fake.clear_current(), 0);

    /* The 4090's plan on the 4090's context. */
    gpuopt_plan *ada = plan_for(ctx, "cuda:1", 1);
    assert_int_equal(fake.make_current(1), 0);
    assert_int_equal(apply(ada, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_string_equal(report, "set cuda L2 persisting limit to " RTX4090_L2_SET_ASIDE
                                " bytes on cuda:1 (was 0)\n");
    gpuopt_free(report);
    assert_int_equal(current_limit(), 56623104);
    assert_int_equal(fake.clear_current(), 0);
    gpuopt_plan_destroy(ada);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void a_value_above_the_maximum_is_reported_as_the_driver_kept_it(void **state)
{
    (void)state;
    char *report = NULL;
    gpuopt_context *ctx = context();
    assert_int_equal(gpuopt_context_set_knob(ctx, "cuda.l2_persisting_bytes", "64MiB"), GPUOPT_OK);
    gpuopt_plan *plan = plan_for(ctx, "cuda:0", 1);
    assert_int_equal(fake.make_current(0), 0);
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_string_equal(report, "set cuda L2 persisting limit to 39321600 bytes on cuda:0 (was 0; "
                                "the plan asked for 67108864 and the driver kept 39321600)\n");
    gpuopt_free(report);
    assert_int_equal(fake.clear_current(), 0);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void a_t4_has_no_set_aside_so_nothing_is_applied(void **state)
{
    (void)state;
    char *report = NULL;
    gpuopt_context *ctx = context();
    gpuopt_plan *plan = plan_for(ctx, "cuda:2", 1);
    gpuopt_knob knob;
    knob.struct_size = sizeof knob;
    assert_int_equal(gpuopt_plan_knob_find(plan, "cuda.l2_persisting_bytes", &knob),
                     GPUOPT_ERR_NOT_FOUND);
    /* No context needed to say so, and none touched. */
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_string_equal(report, "nothing applied on cuda:2: compute capability 7.5 has no L2 "
                                "set-aside for persisting accesses (it needs 8.0; CUDA C++ "
                                "Programming Guide, \"L2 Cache Set-Aside for Persisting "
                                "Accesses\")\n");
    gpuopt_free(report);
    gpuopt_plan_destroy(plan);

    /* A user's value does not make the T4 grow one. */
    assert_int_equal(gpuopt_context_set_knob(ctx, "cuda.l2_persisting_bytes", "1MiB"), GPUOPT_OK);
    plan = plan_for(ctx, "cuda:2", 1);
    assert_int_equal(gpuopt_plan_knob_find(plan, "cuda.l2_persisting_bytes", &knob), GPUOPT_OK);
    assert_int_equal(fake.make_current(2), 0);
    /* (Making the plans read live memory, which asks whether a context is
     * current: applying asks nothing.) */
    long asked = fake.calls("cuCtxGetCurrent");
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_non_null(strstr(report, "compute capability 7.5 has no L2 set-aside"));
    assert_non_null(strstr(report, ": the plan's cuda.l2_persisting_bytes is ignored\n"));
    gpuopt_free(report);
    assert_int_equal(fake.clear_current(), 0);
    assert_int_equal(fake.calls("cuCtxGetCurrent") - asked + fake.calls("cuCtxSetLimit"), 0);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void a_level0_plan_has_nothing_to_apply(void **state)
{
    (void)state;
    char *report = NULL;
    gpuopt_context *ctx = context();
    gpuopt_plan *plan = plan_for(ctx, "cuda:0", 0);
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_string_equal(report, "nothing applied on cuda:0: the plan has no "
                                "cuda.l2_persisting_bytes (a level-0 plan reads no device fact)\n");
    gpuopt_free(report);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void a_driver_before_cuda_11_has_no_such_limit(void **state)
{
    (void)state;
    char *report = NULL;
    setenv("GPUOPT_FAKE_CUDA_DRIVER_VERSION", "10020", 1);
    fake.reset();
    gpuopt_context *ctx = context();
    gpuopt_plan *plan = plan_for(ctx, "cuda:0", 1);
    assert_int_equal(fake.make_current(0), 0);
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_string_equal(report, "nothing applied on cuda:0: the CUDA 10.2 driver predates "
                                "CU_LIMIT_PERSISTING_L2_CACHE_SIZE (CUDA 11.0)\n");
    gpuopt_free(report);
    assert_int_equal(fake.calls("cuCtxSetLimit"), 0);
    assert_int_equal(fake.clear_current(), 0);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void under_mps_the_server_owns_the_set_aside(void **state)
{
    (void)state;
    char *report = NULL;
    gpuopt_context *ctx = context();
    gpuopt_plan *plan = plan_for(ctx, "cuda:3", 1);
    assert_int_equal(fake.make_current(3), 0);
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_non_null(strstr(report, "nothing applied on cuda:3: MPS is on: a client cannot change "
                                   "the set-aside; only the MPS server's "
                                   "CUDA_DEVICE_DEFAULT_PERSISTING_L2_CACHE_PERCENTAGE_LIMIT"));
    gpuopt_free(report);
    assert_int_equal(fake.calls("cuCtxSetLimit"), 0);
    assert_int_equal(fake.clear_current(), 0);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void the_driver_refusing_the_limit_is_reported_not_failed(void **state)
{
    (void)state;
    char *report = NULL;
    setenv("GPUOPT_FAKE_CUDA_FAIL", "cuCtxSetLimit:*:CUDA_ERROR_UNSUPPORTED_LIMIT", 1);
    fake.reset();
    gpuopt_context *ctx = context();
    gpuopt_plan *plan = plan_for(ctx, "cuda:0", 1);
    assert_int_equal(fake.make_current(0), 0);
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_string_equal(report, "nothing applied on cuda:0: the driver does not support "
                                "CU_LIMIT_PERSISTING_L2_CACHE_SIZE on this context (cuCtxSetLimit "
                                "answered CUDA_ERROR_UNSUPPORTED_LIMIT (described in cuda.h))\n");
    gpuopt_free(report);
    assert_int_equal(fake.clear_current(), 0);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void a_failing_driver_call_is_an_error_naming_it(void **state)
{
    (void)state;
    char *report = NULL;
    setenv("GPUOPT_FAKE_CUDA_FAIL", "cuCtxGetDevice:*:CUDA_ERROR_UNKNOWN", 1);
    fake.reset();
    gpuopt_context *ctx = context();
    gpuopt_plan *plan = plan_for(ctx, "cuda:0", 1);
    assert_int_equal(fake.make_current(0), 0);
    assert_int_equal(apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_ERR_DRIVER);
    assert_string_equal(gpuopt_last_error(), "setting the L2 persisting limit on cuda:0: "
                                             "cuCtxGetDevice failed: CUDA_ERROR_UNKNOWN (unknown "
                                             "error)");
    assert_int_equal(fake.calls("cuCtxSetLimit"), 0);
    assert_int_equal(fake.clear_current(), 0);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void environment_and_device_settings_apply_together(void **state)
{
    (void)state;
    char *report = NULL;
    gpuopt_context *ctx = context();
    gpuopt_plan *plan = plan_for(ctx, "cuda:0", 1);
    setenv("CUDA_MODULE_LOADING", "EAGER", 1); /* the user's: kept */
    assert_int_equal(fake.make_current(0), 0);
    assert_int_equal(apply(plan, GPUOPT_APPLY_ENV | GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_non_null(strstr(report, "kept CUDA_MODULE_LOADING=EAGER (already set; the plan had "
                                   "LAZY)\n"));
    assert_non_null(strstr(report, "set cuda L2 persisting limit to " H100_L2_SET_ASIDE
                                   " bytes on cuda:0 (was 0)\n"));
    gpuopt_free(report);
    /* Unknown flag bits are refused before anything is applied. */
    assert_int_equal(gpuopt_plan_apply(plan, 0x80u, &report), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(report);
    assert_int_equal(fake.calls("cuCtxSetLimit"), 1);
    assert_int_equal(fake.clear_current(), 0);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(without_a_current_context_nothing_is_set_and_the_detail_says_why,
                               fresh),
        cmocka_unit_test_setup(a_context_of_another_device_is_refused_naming_both, fresh),
        cmocka_unit_test_setup(the_plan_devices_current_context_gets_the_limit_read_back, fresh),
        cmocka_unit_test_setup(a_value_above_the_maximum_is_reported_as_the_driver_kept_it, fresh),
        cmocka_unit_test_setup(a_t4_has_no_set_aside_so_nothing_is_applied, fresh),
        cmocka_unit_test_setup(a_level0_plan_has_nothing_to_apply, fresh),
        cmocka_unit_test_setup(a_driver_before_cuda_11_has_no_such_limit, fresh),
        cmocka_unit_test_setup(under_mps_the_server_owns_the_set_aside, fresh),
        cmocka_unit_test_setup(the_driver_refusing_the_limit_is_reported_not_failed, fresh),
        cmocka_unit_test_setup(a_failing_driver_call_is_an_error_naming_it, fresh),
        cmocka_unit_test_setup(environment_and_device_settings_apply_together, fresh),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
