/* Workload-derived knobs (batch size, quantise/offload advice) and applying
 * a plan: the arithmetic is in the reason, nothing is guessed without a
 * workload, and a user's environment variable is never overwritten. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "context.h"
#include "support/synthetic.h"
#include "support/testutil.h"

#define GIB (1024ull * 1024 * 1024)
#define MIB (1024ull * 1024)

static int setup(void **state)
{
    (void)state;
    syn_reset();
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "gpu24", NULL, NULL, 1000, 24 * GIB)->integrated = 0;
    unsetenv("SYN_TIER1");
    unsetenv("SYN_TEXT");
    return 0;
}

static gpuopt_plan *plan_for(gpuopt_context *ctx, int level, uint64_t model, uint64_t item,
                             int reduced, int quantized)
{
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.model_bytes = model;
    w.item_bytes = item;
    w.reduced_precision = reduced;
    w.quantized = quantized;
    gpuopt_plan *p = NULL;
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, level, &w, &p), GPUOPT_OK);
    return p;
}

static gpuopt_status find(gpuopt_plan *p, const char *name, gpuopt_knob *k)
{
    memset(k, 0, sizeof *k);
    k->struct_size = sizeof *k;
    return gpuopt_plan_knob_find(p, name, k);
}

static void batch_size_fits_beside_the_model_with_headroom(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    gpuopt_knob k;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    /* Level 0: 24 GiB total x 0.80 = 19.2 GiB; (19.2 GiB - 7 GiB) / 100 MiB = 124. */
    gpuopt_plan *p = plan_for(ctx, 0, 7 * GIB, 100 * MIB, -1, 0);
    assert_int_equal(find(p, "batch.max_size", &k), GPUOPT_OK);
    assert_int_equal(k.int_value, ((24 * GIB) / 100 * 80 - 7 * GIB) / (100 * MIB));
    assert_non_null(strstr(k.reason, "24 GiB total x 0.80"));
    assert_non_null(strstr(k.reason, "100 MiB per item"));
    assert_int_equal(find(p, "model.quantize_bits", &k), GPUOPT_ERR_NOT_FOUND);
    gpuopt_plan_destroy(p);
    /* No workload: no batch knob at all. */
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &p), GPUOPT_OK);
    assert_int_equal(find(p, "batch.max_size", &k), GPUOPT_ERR_NOT_FOUND);
    gpuopt_plan_destroy(p);
    /* A model without an item size: nothing to size a batch with. */
    p = plan_for(ctx, 1, 7 * GIB, 0, -1, 0);
    assert_int_equal(find(p, "batch.max_size", &k), GPUOPT_ERR_NOT_FOUND);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void a_model_too_big_gets_quantisation_or_offload_advice(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    gpuopt_knob k;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    /* 30 GiB at 16 bits does not fit in 19.2 GiB; at 8 bits (15 GiB) it does. */
    gpuopt_plan *p = plan_for(ctx, 0, 30 * GIB, 10 * MIB, 1, 0);
    assert_int_equal(find(p, "model.quantize_bits", &k), GPUOPT_OK);
    assert_int_equal(k.int_value, 8);
    assert_non_null(strstr(k.reason, "at 8 bits (from 16) it takes 15 GiB"));
    assert_int_equal(find(p, "batch.max_size", &k), GPUOPT_ERR_NOT_FOUND);
    gpuopt_plan_destroy(p);
    /* 70 GiB: 4 bits (17.5 GiB) fits. */
    p = plan_for(ctx, 0, 70 * GIB, 10 * MIB, 1, 0);
    assert_int_equal(find(p, "model.quantize_bits", &k), GPUOPT_OK);
    assert_int_equal(k.int_value, 4);
    gpuopt_plan_destroy(p);
    /* 140 GiB: not even at 4 bits: offload the rest. */
    p = plan_for(ctx, 0, 140 * GIB, 0, 1, 0);
    assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_OK);
    assert_int_equal((uint64_t)k.int_value, 140 * GIB - (24 * GIB) / 100 * 80);
    assert_non_null(strstr(k.reason, "not even at 4 bits"));
    gpuopt_plan_destroy(p);
    /* Precision-sensitive: never advise quantisation, offload instead. */
    p = plan_for(ctx, 0, 30 * GIB, 0, 0, 0);
    assert_int_equal(find(p, "model.quantize_bits", &k), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_OK);
    assert_non_null(strstr(k.reason, "precision-sensitive"));
    gpuopt_plan_destroy(p);
    /* Already quantised: offload. */
    p = plan_for(ctx, 0, 30 * GIB, 0, 1, 1);
    assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_OK);
    assert_non_null(strstr(k.reason, "already quantised"));
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void apply_sets_environment_knobs_but_never_a_users_variable(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    gpuopt_plan *p;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_context_set_knob(ctx, "syn.text", "from-plan"), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &p), GPUOPT_OK);
    setenv("SYN_TEXT", "", 1); /* set by the user, even empty */
    char *report = NULL;
    assert_int_equal(gpuopt_plan_apply(p, GPUOPT_APPLY_ENV, &report), GPUOPT_OK);
    assert_string_equal(getenv("SYN_TIER1"), "true");
    assert_string_equal(getenv("SYN_TEXT"), "");
    assert_non_null(strstr(report, "set SYN_TIER1=true\n"));
    assert_non_null(strstr(report, "kept SYN_TEXT= (already set; the plan had from-plan)"));
    gpuopt_free(report);
    assert_int_equal(gpuopt_plan_apply(p, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_non_null(strstr(report, "the syncuda backend owns none"));
    gpuopt_free(report);
    assert_int_equal(gpuopt_plan_apply(p, 0x80, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "accepted GPUOPT_APPLY_ENV"));
    assert_int_equal(gpuopt_plan_apply(NULL, GPUOPT_APPLY_ENV, &report), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(report);
    assert_int_equal(gpuopt_plan_apply(p, 0, NULL), GPUOPT_OK);
    char *opts;
    assert_int_equal(gpuopt_plan_to_build_options(p, &opts), GPUOPT_OK);
    assert_string_equal(opts, ""); /* no opencl.build_options on this device */
    gpuopt_free(opts);
    assert_int_equal(gpuopt_plan_to_build_options(p, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
    unsetenv("SYN_TIER1");
    unsetenv("SYN_TEXT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(batch_size_fits_beside_the_model_with_headroom, setup),
        cmocka_unit_test_setup(a_model_too_big_gets_quantisation_or_offload_advice, setup),
        cmocka_unit_test_setup(apply_sets_environment_knobs_but_never_a_users_variable, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
