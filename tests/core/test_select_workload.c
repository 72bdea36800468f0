/* Selection on synthetic backends with two native GPU vendors (syncuda,
 * synrocm), OpenCL and a CPU: the same device whatever was probed before,
 * ranking for a described workload, the reason the winner won, and the
 * warnings for backends that are present but broken. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "context.h"
#include "support/synthetic.h"
#include "support/testutil.h"

#define GIB (1024ull * 1024 * 1024)

static int setup(void **state)
{
    (void)state;
    syn_reset();
    return 0;
}

static gpuopt_status ctx4(const char *backends, log_capture *log, gpuopt_context **ctx)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE | GPUOPT_OPTION_IGNORE_ENV;
    o.backends = backends;
    if (log) {
        o.log_fn = capture_log;
        o.log_user = log;
    }
    return gpo_context_create_with(&o, syn_list4, 4, ctx);
}

static const char *id_of(gpuopt_device *d)
{
    static gpuopt_device_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    assert_int_equal(gpuopt_device_get_info(d, &i), GPUOPT_OK);
    return i.id;
}

/* The device a plan for `w` is made for, in a fresh context; with
 * `list_first` the context lists every device before planning. */
static void plan_device(const gpuopt_workload *w, int list_first, char *id, size_t cap, char **json)
{
    gpuopt_context *ctx;
    gpuopt_plan *plan;
    gpuopt_device *d;
    assert_int_equal(ctx4(NULL, NULL, &ctx), GPUOPT_OK);
    if (list_first) {
        char *all;
        assert_int_equal(gpuopt_context_to_json(ctx, &all), GPUOPT_OK);
        gpuopt_free(all);
    }
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 0, w, &plan), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_device(plan, &d), GPUOPT_OK);
    snprintf(id, cap, "%s", id_of(d));
    if (json)
        assert_int_equal(gpuopt_plan_to_json(plan, json), GPUOPT_OK);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

/* A plan in `ctx` for `w` on `dev` (NULL: the one selected) is for the
 * device `want`, and its JSON holds each of `words` (NULL-terminated). */
static void expect_plan(gpuopt_context *ctx, gpuopt_device *dev, const gpuopt_workload *w,
                        const char *want, ...)
{
    gpuopt_plan *plan;
    gpuopt_device *d;
    char *json;
    va_list ap;
    assert_int_equal(gpuopt_plan_create_for(ctx, dev, 0, w, &plan), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_device(plan, &d), GPUOPT_OK);
    assert_string_equal(id_of(d), want);
    assert_int_equal(gpuopt_plan_to_json(plan, &json), GPUOPT_OK);
    va_start(ap, want);
    for (const char *words = va_arg(ap, const char *); words; words = va_arg(ap, const char *))
        if (!strstr(json, words))
            fail_msg("'%s' not in %s", words, json);
    va_end(ap);
    gpuopt_free(json);
    gpuopt_plan_destroy(plan);
}

/* Two vendors' GPUs: syncuda has the bigger memory and the faster matrix
 * units, synrocm the higher fp32 peak; OpenCL lists a third GPU faster
 * than both, reached only through OpenCL, and the PoCL-like CPU. */
static void two_vendors(void)
{
    gpuopt_device_info *h100 =
        syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "h100", NULL, "0000:18:00.0", 66900, 80 * GIB);
    h100->integrated = 0;
    syn_cuda.matrix[0][GPO_PREC_BF16] = 1070000;
    syn_cuda.bandwidth[0] = 3352;
    gpuopt_device_info *rx =
        syn_add(&syn_rocm, GPUOPT_DEVICE_TYPE_GPU, "rx", NULL, "0000:03:00.0", 82600, 24 * GIB);
    rx->integrated = 0;
    syn_rocm.matrix[0][GPO_PREC_BF16] = 165000;
    syn_rocm.bandwidth[0] = 1008;
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_GPU, "arc", NULL, "0000:65:00.0", 99000, 96 * GIB)
        ->integrated = 0;
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_CPU, "pocl", NULL, NULL, 300, 64 * GIB);
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 260, 64 * GIB);
}

static void select_alone_and_after_a_full_listing_choose_the_same_device(void **state)
{
    (void)state;
    two_vendors();
    gpuopt_context *alone, *listed;
    gpuopt_device *a, *b;
    int32_t n;
    assert_int_equal(ctx4(NULL, NULL, &alone), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(alone, "auto", &a), GPUOPT_OK);
    /* Both native GPU backends were asked, OpenCL and the CPU never. */
    assert_int_equal(syn_cuda.loads, 1);
    assert_int_equal(syn_rocm.loads, 1);
    assert_int_equal(syn_ocl.loads + syn_cpu.loads, 0);
    assert_int_equal(ctx4(NULL, NULL, &listed), GPUOPT_OK);
    assert_int_equal(gpuopt_device_count(listed, &n), GPUOPT_OK);
    assert_int_equal(n, 5);
    assert_int_equal(gpuopt_device_select(listed, "auto", &b), GPUOPT_OK);
    /* The higher fp32 peak wins without a workload, in both. */
    assert_string_equal(id_of(a), "synrocm:0");
    assert_string_equal(id_of(b), "synrocm:0");
    assert_int_equal(gpuopt_device_select(alone, "gpu", &a), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(listed, "gpu", &b), GPUOPT_OK);
    assert_string_equal(id_of(a), id_of(b));
    gpuopt_context_destroy(alone);
    gpuopt_context_destroy(listed);
}

static void every_workload_plans_for_the_same_device_with_or_without_a_listing(void **state)
{
    (void)state;
    gpuopt_workload w[5];
    for (int i = 0; i < 5; i++)
        gpuopt_workload_init(&w[i]);
    w[1].reduced_precision = 1;
    w[2].bound = GPUOPT_BOUND_MEMORY;
    w[3].model_bytes = 30 * GIB;
    w[4].model_bytes = 200 * GIB; /* fits nowhere */
    static const char *const want[] = {"synrocm:0", "syncuda:0", "syncuda:0", "syncuda:0",
                                       "synrocm:0"};
    for (int i = 0; i < 5; i++) {
        char a[32], b[32];
        syn_reset();
        two_vendors();
        plan_device(&w[i], 0, a, sizeof a, NULL);
        plan_device(&w[i], 1, b, sizeof b, NULL);
        print_message("workload %d: %s / %s\n", i, a, b);
        assert_string_equal(a, want[i]);
        assert_string_equal(b, want[i]);
    }
}

static void a_model_that_fits_only_in_host_memory_moves_the_plan_to_the_cpu(void **state)
{
    (void)state;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "small gpu", NULL, NULL, 80000, 24 * GIB)
        ->integrated = 0;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 300, 256 * GIB);
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.model_bytes = 40 * GIB;
    char id[32], *json;
    plan_device(&w, 0, id, sizeof id, &json);
    /* The GPU it does not fit on cannot end the search: the CPU was probed. */
    assert_string_equal(id, "syncpu:0");
    assert_non_null(strstr(json, "fits in its 256 GiB"));
    assert_non_null(strstr(json, "not in the 24 GiB of syncuda:0"));
    gpuopt_free(json);
    syn_reset();
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "small gpu", NULL, NULL, 80000, 24 * GIB)
        ->integrated = 0;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 300, 256 * GIB);
    plan_device(&w, 1, id, sizeof id, NULL);
    assert_string_equal(id, "syncpu:0");
}

static void reduced_precision_ranks_by_the_matrix_rate_of_the_precision_used(void **state)
{
    (void)state;
    /* syncuda:0 has fp16 and bf16 matrix units, syncuda:1 only fp16 ones
     * but faster, syncuda:2 none and the highest fp32 peak. */
    for (int i = 0; i < 3; i++)
        syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "gpu", NULL, NULL, 10000 + 30000 * i, 16 * GIB)
            ->integrated = 0;
    syn_cuda.matrix[0][GPO_PREC_FP16] = 300000;
    syn_cuda.matrix[0][GPO_PREC_BF16] = 150000;
    syn_cuda.matrix[0][GPO_PREC_FP8] = 900000;
    syn_cuda.matrix[1][GPO_PREC_FP16] = 200000;
    gpuopt_context *ctx;
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.reduced_precision = 1;
    assert_int_equal(ctx4(NULL, NULL, &ctx), GPUOPT_OK);
    /* bf16 where there is bf16 (150), else fp16 (200): syncuda:1. */
    expect_plan(ctx, NULL, &w, "syncuda:1",
                "fp16 200.0 TFLOP/s against bf16 150.0 TFLOP/s for syncuda:0", NULL);
    /* A quantised model runs in fp8 where the matrix units have it. */
    w.quantized = 1;
    expect_plan(ctx, NULL, &w, "syncuda:0", "fp8 900.0 TFLOP/s", NULL);
    /* Precision-sensitive: fp32 decides, today's rule. */
    w.quantized = 0;
    w.reduced_precision = 0;
    expect_plan(ctx, NULL, &w, "syncuda:2", "peak fp32 throughput", NULL);
    gpuopt_context_destroy(ctx);
}

static void memory_bound_ranks_by_bandwidth_and_says_when_one_is_unknown(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++)
        syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "gpu", NULL, NULL, 50000 - 10000 * i, 16 * GIB)
            ->integrated = 0;
    syn_cuda.bandwidth[0] = 900;
    syn_cuda.bandwidth[1] = 2000;
    gpuopt_context *ctx;
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.bound = GPUOPT_BOUND_MEMORY;
    assert_int_equal(ctx4(NULL, NULL, &ctx), GPUOPT_OK);
    expect_plan(ctx, NULL, &w, "syncuda:1",
                "peak memory bandwidth (the workload is memory-bound), 2000 GB/s against 900 GB/s "
                "for syncuda:0",
                NULL);
    gpuopt_context_destroy(ctx);

    /* A bandwidth nobody knows ranks nothing: fp32 decides, and says so. */
    syn_cuda.bandwidth[1] = 0;
    assert_int_equal(ctx4(NULL, NULL, &ctx), GPUOPT_OK);
    expect_plan(ctx, NULL, &w, "syncuda:0", "the peak bandwidth of syncuda:1", "is not known",
                NULL);
    gpuopt_context_destroy(ctx);
}

static void the_reason_names_the_criterion_that_decided(void **state)
{
    (void)state;
    static const struct {
        const char *backends;
        const char *policy;
        const char *words;
    } cases[] = {
        {"syncuda,synrocm", "auto",
         "syncuda:0 (dgpu): a discrete GPU, ranked above synrocm:0 (only), an integrated GPU (no "
         "workload was described)"},
        {"synrocm,synocl", "auto",
         "synrocm:0 (only): reached through its own backend (synrocm), ranked above synocl:1 "
         "(igpu), the same kind of device reached only through synocl"},
        {NULL, "syncuda:0", "syncuda:0 (dgpu): named by the selector 'syncuda:0'"},
        {NULL, "synrocm", "synrocm:0 (only): the only usable device that matches"},
    };
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "dgpu", NULL, NULL, 100, GIB)->integrated = 0;
    syn_add(&syn_rocm, GPUOPT_DEVICE_TYPE_GPU, "only", NULL, NULL, 100, GIB)->integrated = 1;
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_CPU, "pocl", NULL, NULL, 900, GIB);
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_GPU, "igpu", NULL, NULL, 900, GIB)->integrated = 1;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 100, GIB);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpuopt_options o;
        gpuopt_context *ctx;
        gpuopt_plan *plan;
        char *json;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE | GPUOPT_OPTION_IGNORE_ENV;
        o.backends = cases[i].backends;
        o.device = cases[i].policy;
        assert_int_equal(gpo_context_create_with(&o, syn_list4, 4, &ctx), GPUOPT_OK);
        assert_int_equal(gpuopt_plan_create(ctx, NULL, 0, &plan), GPUOPT_OK);
        assert_int_equal(gpuopt_plan_to_json(plan, &json), GPUOPT_OK);
        if (!strstr(json, cases[i].words))
            fail_msg("%s: '%s' not in %s", cases[i].policy, cases[i].words, json);
        gpuopt_free(json);
        /* The device list, which probes everything, says the same. */
        assert_int_equal(gpuopt_context_to_json(ctx, &json), GPUOPT_OK);
        assert_non_null(strstr(json, cases[i].words));
        gpuopt_free(json);
        gpuopt_plan_destroy(plan);
        gpuopt_context_destroy(ctx);
    }
}

static void a_device_the_caller_chose_is_explained_against_the_selector(void **state)
{
    (void)state;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "fast", NULL, NULL, 900, GIB)->integrated = 0;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "slow", NULL, NULL, 100, GIB)->integrated = 0;
    gpuopt_context *ctx;
    gpuopt_device *d;
    assert_int_equal(ctx4(NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, "syncuda:1", &d), GPUOPT_OK);
    expect_plan(ctx, d, NULL, "syncuda:1",
                "syncuda:1 (slow): chosen by the caller; the selector 'auto' would choose "
                "syncuda:0 (fast)",
                NULL);
    /* The device auto selects, passed in, carries auto's reason. */
    assert_int_equal(gpuopt_device_select(ctx, NULL, &d), GPUOPT_OK);
    expect_plan(ctx, d, NULL, "syncuda:0",
                "\"reason\":\"syncuda:0 (fast): highest estimated peak fp32", NULL);
    gpuopt_context_destroy(ctx);
}

static void a_broken_backend_passed_over_is_a_plan_warning_and_logged_once(void **state)
{
    (void)state;
    syn_cuda.load_result = GPUOPT_ERR_DRIVER;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 100, GIB);
    log_capture log;
    memset(&log, 0, sizeof log);
    gpuopt_context *ctx;
    gpuopt_plan *plan;
    gpuopt_device *d;
    char *json;
    assert_int_equal(ctx4(NULL, &log, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 0, &plan), GPUOPT_OK);
    gpuopt_plan_device(plan, &d);
    assert_string_equal(id_of(d), "syncpu:0");
    assert_int_equal(gpuopt_plan_to_json(plan, &json), GPUOPT_OK);
    assert_non_null(strstr(json, "the syncuda backend is present but not working, so syncpu:0 "
                                 "was chosen instead: synthetic failure 303"));
    assert_non_null(strstr(json, "`gpuopt doctor`"));
    gpuopt_free(json);
    gpuopt_plan_destroy(plan);
    /* On the log at warning level (the default), once per context. */
    assert_non_null(strstr(log.text, "2:the syncuda backend is present but not working"));
    assert_int_equal(gpuopt_device_select(ctx, NULL, &d), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 0, &plan), GPUOPT_OK);
    gpuopt_plan_destroy(plan);
    assert_int_equal(log.count, 1);
    gpuopt_context_destroy(ctx);
}

static void gpus_the_kernel_lists_but_no_driver_can_use_are_passed_over_with_a_warning(void **state)
{
    (void)state;
    syn_rocm.load_result = GPUOPT_ERR_UNAVAILABLE;
    syn_rocm.kernel_side = 1;
    syn_add(&syn_rocm, GPUOPT_DEVICE_TYPE_GPU, "seen by kfd", NULL, "0000:03:00.0", 0, 0);
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 100, GIB);
    gpuopt_context *ctx;
    gpuopt_plan *plan;
    const char *w = NULL;
    int32_t n = 0;
    assert_int_equal(ctx4(NULL, NULL, &ctx), GPUOPT_OK);
    gpuopt_context_set_log(ctx, GPUOPT_LOG_OFF, NULL, NULL);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 0, &plan), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_warning_count(plan, &n), GPUOPT_OK);
    assert_int_equal(n, 1);
    assert_int_equal(gpuopt_plan_warning_at(plan, 0, &w), GPUOPT_OK);
    assert_non_null(strstr(w, "the synrocm backend sees a device it cannot use"));
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);

    /* An absent backend is not worth a word. */
    syn_reset();
    syn_rocm.load_result = GPUOPT_ERR_UNAVAILABLE;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 100, GIB);
    assert_int_equal(ctx4(NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 0, &plan), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_warning_count(plan, &n), GPUOPT_OK);
    assert_int_equal(n, 0);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void asking_for_an_unavailable_backend_names_its_reason(void **state)
{
    (void)state;
    syn_cuda.load_result = GPUOPT_ERR_UNAVAILABLE;
    gpuopt_context *ctx;
    gpuopt_device *d;
    assert_int_equal(ctx4("syncuda", NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, "auto", &d), GPUOPT_ERR_NO_DEVICE);
    const char *why = gpuopt_last_error();
    assert_non_null(strstr(why, "no device matches 'auto': syncuda: synthetic failure 301"));
    assert_non_null(strstr(why, "not probed: synrocm, synocl, syncpu (excluded by"));
    assert_null(strstr(why, "devices here: none"));
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(select_alone_and_after_a_full_listing_choose_the_same_device, setup),
        cmocka_unit_test_setup(every_workload_plans_for_the_same_device_with_or_without_a_listing,
                               setup),
        cmocka_unit_test_setup(a_model_that_fits_only_in_host_memory_moves_the_plan_to_the_cpu,
                               setup),
        cmocka_unit_test_setup(reduced_precision_ranks_by_the_matrix_rate_of_the_precision_used,
                               setup),
        cmocka_unit_test_setup(memory_bound_ranks_by_bandwidth_and_says_when_one_is_unknown, setup),
        cmocka_unit_test_setup(the_reason_names_the_criterion_that_decided, setup),
        cmocka_unit_test_setup(a_device_the_caller_chose_is_explained_against_the_selector, setup),
        cmocka_unit_test_setup(a_broken_backend_passed_over_is_a_plan_warning_and_logged_once,
                               setup),
        cmocka_unit_test_setup(
            gpus_the_kernel_lists_but_no_driver_can_use_are_passed_over_with_a_warning, setup),
        cmocka_unit_test_setup(asking_for_an_unavailable_backend_names_its_reason, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
