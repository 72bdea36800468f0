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
    const uint64_t usable = (24 * GIB) / 100 * 80; /* level 0: 24 GiB total x 0.80 */
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    /* 30 GiB at 16 bits does not fit in 19.2 GiB; at 8 bits (15 GiB) it
     * does, and the batch is sized for the quantised weights. */
    gpuopt_plan *p = plan_for(ctx, 0, 30 * GIB, 10 * MIB, 1, 0);
    assert_int_equal(find(p, "model.quantize_bits", &k), GPUOPT_OK);
    assert_int_equal(k.int_value, 8);
    assert_non_null(strstr(k.reason, "at 8 bits (from 16) it takes 15 GiB"));
    assert_int_equal(find(p, "batch.max_size", &k), GPUOPT_OK);
    assert_int_equal(k.int_value, (usable - 15 * GIB) / (10 * MIB));
    assert_non_null(strstr(k.reason, "model 30 GiB at 8 bits = 15 GiB"));
    assert_non_null(strstr(k.reason, "model.quantize_bits = 8 (tier 0 default)"));
    assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_ERR_NOT_FOUND);
    gpuopt_plan_destroy(p);
    /* 70 GiB: 4 bits (17.5 GiB) fits. */
    p = plan_for(ctx, 0, 70 * GIB, 10 * MIB, 1, 0);
    assert_int_equal(find(p, "model.quantize_bits", &k), GPUOPT_OK);
    assert_int_equal(k.int_value, 4);
    assert_int_equal(find(p, "batch.max_size", &k), GPUOPT_OK);
    assert_int_equal(k.int_value, (usable - 70 * GIB / 4) / (10 * MIB));
    gpuopt_plan_destroy(p);
    /* 140 GiB: not even at 4 bits (35 GiB): quantise to 4 bits and offload
     * what is left, with the arithmetic. */
    p = plan_for(ctx, 0, 140 * GIB, 0, 1, 0);
    assert_int_equal(find(p, "model.quantize_bits", &k), GPUOPT_OK);
    assert_int_equal(k.int_value, 4);
    assert_non_null(strstr(k.reason, "not even at 4 bits"));
    assert_non_null(strstr(k.reason, "keep the rest in host memory"));
    assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_OK);
    assert_int_equal((uint64_t)k.int_value, 35 * GIB - usable);
    assert_non_null(strstr(k.reason, "model 140 GiB at 4 bits = 35 GiB + one item 0 B = 35 GiB "
                                     "does not fit in 24 GiB total x 0.80 = 19.2 GiB usable: "
                                     "keep 35 GiB - 19.2 GiB = 15.8 GiB of it in host memory"));
    gpuopt_plan_destroy(p);
    /* With an item size, the batch beside the part the device holds. */
    p = plan_for(ctx, 0, 140 * GIB, 100 * MIB, 1, 0);
    assert_int_equal(find(p, "batch.max_size", &k), GPUOPT_OK);
    assert_int_equal(k.int_value, 1);
    assert_non_null(strstr(k.reason, "kept in host memory"));
    gpuopt_plan_destroy(p);
    /* Precision-sensitive: never advise quantisation, offload instead. */
    p = plan_for(ctx, 0, 30 * GIB, 0, 0, 0);
    assert_int_equal(find(p, "model.quantize_bits", &k), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_OK);
    assert_int_equal((uint64_t)k.int_value, 30 * GIB - usable);
    assert_non_null(strstr(k.reason, "precision-sensitive"));
    gpuopt_plan_destroy(p);
    /* Already quantised: offload. */
    p = plan_for(ctx, 0, 30 * GIB, 0, 1, 1);
    assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_OK);
    assert_non_null(strstr(k.reason, "already quantised"));
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

/* Offloading keeps weights in host memory: on a device whose memory is the
 * host's (an integrated GPU, a CPU device) it would move nothing, so the
 * plan says the model does not fit instead. */
static void no_offload_advice_where_device_memory_is_host_memory(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    gpuopt_knob k;
    int32_t n = 0;
    const char *w = NULL;
    syn_reset();
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "igpu", NULL, NULL, 1000, 24 * GIB)->integrated = 1;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "host", NULL, NULL, 100, 24 * GIB);
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    static const char *const devices[] = {"syncuda:0", "syncpu:0"};
    for (size_t i = 0; i < 2; i++) {
        gpuopt_device *dev = NULL;
        gpuopt_plan *p = NULL;
        gpuopt_workload wl;
        gpuopt_workload_init(&wl);
        wl.model_bytes = 30 * GIB;
        wl.item_bytes = 10 * MIB;
        wl.reduced_precision = 0;
        assert_int_equal(gpuopt_device_select(ctx, devices[i], &dev), GPUOPT_OK);
        assert_int_equal(gpuopt_plan_create_for(ctx, dev, 0, &wl, &p), GPUOPT_OK);
        assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_ERR_NOT_FOUND);
        assert_int_equal(find(p, "batch.max_size", &k), GPUOPT_ERR_NOT_FOUND);
        assert_int_equal(gpuopt_plan_warning_count(p, &n), GPUOPT_OK);
        assert_int_equal(n, 1);
        assert_int_equal(gpuopt_plan_warning_at(p, 0, &w), GPUOPT_OK);
        assert_non_null(strstr(w, "offloading to host memory does not apply"));
        assert_non_null(strstr(w, i == 0 ? "integrated GPU" : "CPU device"));
        gpuopt_plan_destroy(p);
        /* Accepting reduced precision: 4 bits (7.5 GiB) fits, so the batch is sized. */
        wl.reduced_precision = 1;
        wl.model_bytes = 60 * GIB;
        assert_int_equal(gpuopt_plan_create_for(ctx, dev, 0, &wl, &p), GPUOPT_OK);
        assert_int_equal(find(p, "model.quantize_bits", &k), GPUOPT_OK);
        assert_int_equal(k.int_value, 4);
        assert_int_equal(find(p, "batch.max_size", &k), GPUOPT_OK);
        assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_ERR_NOT_FOUND);
        gpuopt_plan_destroy(p);
        /* Too big even at 4 bits: 4 bits is still the advice, the warning says it does not fit. */
        wl.model_bytes = 200 * GIB;
        assert_int_equal(gpuopt_plan_create_for(ctx, dev, 0, &wl, &p), GPUOPT_OK);
        assert_int_equal(find(p, "model.quantize_bits", &k), GPUOPT_OK);
        assert_non_null(strstr(k.reason, "though it still does not fit"));
        assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_ERR_NOT_FOUND);
        assert_int_equal(gpuopt_plan_warning_at(p, 0, &w), GPUOPT_OK);
        assert_non_null(strstr(w, "model 200 GiB at 4 bits = 50 GiB"));
        gpuopt_plan_destroy(p);
    }
    gpuopt_context_destroy(ctx);
}

/* The user's quantisation replaces the advice, and what follows from it is
 * computed again: the offload and the batch. */
static void overriding_the_bit_width_recomputes_offload_and_batch(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    gpuopt_knob k;
    const uint64_t usable = (24 * GIB) / 100 * 80;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_context_set_knob(ctx, "model.quantize_bits", "8"), GPUOPT_OK);
    /* 140 GiB: the rule says 4 bits + offload; at the user's 8 bits the
     * offload is 70 GiB - usable. */
    gpuopt_plan *p = plan_for(ctx, 0, 140 * GIB, 100 * MIB, 1, 0);
    assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_OK);
    assert_int_equal((uint64_t)k.int_value, 70 * GIB + 100 * MIB - usable);
    assert_non_null(strstr(k.reason, "model.quantize_bits = 8 (set by gpuopt_context_set_knob)"));
    assert_int_equal(k.source, GPUOPT_SOURCE_API);
    gpuopt_plan_destroy(p);
    /* Overriding the derived offload itself: it wins and says so, and the
     * batch follows it. */
    assert_int_equal(gpuopt_context_set_knob(ctx, "model.offload_bytes", "60GiB"), GPUOPT_OK);
    p = plan_for(ctx, 0, 140 * GIB, 100 * MIB, 1, 0);
    assert_int_equal(find(p, "model.offload_bytes", &k), GPUOPT_OK);
    assert_int_equal((uint64_t)k.int_value, 60 * GIB);
    assert_non_null(strstr(k.reason, "overriding its derivation (which gives"));
    assert_int_equal(find(p, "batch.max_size", &k), GPUOPT_OK);
    assert_int_equal(k.int_value, (usable - 10 * GIB) / (100 * MIB));
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
    assert_int_equal(gpuopt_plan_apply(NULL, GPUOPT_APPLY_ENV, &report),
                     GPUOPT_ERR_INVALID_ARGUMENT);
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
        cmocka_unit_test_setup(no_offload_advice_where_device_memory_is_host_memory, setup),
        cmocka_unit_test_setup(overriding_the_bit_width_recomputes_offload_and_batch, setup),
        cmocka_unit_test_setup(apply_sets_environment_knobs_but_never_a_users_variable, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
