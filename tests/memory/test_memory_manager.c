/* The memory manager through the public API, on the H100 double with the
 * NVML double answering live memory: its budget comes from the plan (the
 * headroom rule, or the memory.* knobs), allocations are registered by name
 * and place, the stats and JSON say what is held, the check warns (and
 * logs) at the threshold with advice from the plan's workload rules, and a
 * recommendation on live numbers equals the plan's own workload knobs. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "gpuopt/gpuopt.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)
/* h100-sxm5.json */
#define H100_TOTAL 85899345920ull
#define H100_FREE 85362475008ull

static char logged[8192];

static void on_log(int32_t level, const char *message, void *user)
{
    (void)user;
    if (level == GPUOPT_LOG_WARN && strlen(logged) + strlen(message) + 2 < sizeof logged) {
        strcat(logged, message);
        strcat(logged, "\n");
    }
}

static gpuopt_context *context(void)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "cuda";
    o.log_level = "warn";
    o.log_fn = on_log;
    gpuopt_context *ctx = NULL;
    if (gpuopt_context_create(&o, &ctx) != GPUOPT_OK)
        fail_msg("context: %s", gpuopt_last_error());
    return ctx;
}

static gpuopt_plan *plan_for(gpuopt_context *ctx, const gpuopt_workload *w)
{
    gpuopt_plan *p = NULL;
    if (gpuopt_plan_create_for(ctx, NULL, 1, w, &p) != GPUOPT_OK)
        fail_msg("plan: %s", gpuopt_last_error());
    return p;
}

static gpuopt_memory *manager(gpuopt_context *ctx, const gpuopt_workload *w)
{
    gpuopt_plan *p = plan_for(ctx, w);
    gpuopt_memory *m = NULL;
    if (gpuopt_memory_create(p, &m) != GPUOPT_OK)
        fail_msg("memory manager: %s", gpuopt_last_error());
    gpuopt_plan_destroy(p); /* the manager keeps what it needs */
    return m;
}

static gpuopt_memory_stats stats_of(gpuopt_memory *m)
{
    gpuopt_memory_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    assert_int_equal(gpuopt_memory_get_stats(m, &s), GPUOPT_OK);
    return s;
}

static int64_t knob_int(const gpuopt_plan *p, const char *name)
{
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    return gpuopt_plan_knob_find(p, name, &k) == GPUOPT_OK ? k.int_value : -1;
}

static void the_budget_is_the_plan_s_headroom_rule_or_the_user_s_knob(void **state)
{
    (void)state;
    gpuopt_context *ctx = context();
    gpuopt_memory *m = manager(ctx, NULL);
    gpuopt_memory_stats s = stats_of(m);
    /* Free memory read by the plan (NVML) x 0.90, as batch.max_size uses. */
    assert_int_equal(s.budget_bytes, H100_FREE / 100 * 90);
    assert_int_equal(s.threshold_percent, 90);
    assert_int_equal(s.live_source, GPUOPT_MEMORY_SOURCE_MANAGEMENT);
    assert_int_equal(s.live_total_bytes, H100_TOTAL);
    char *json = NULL;
    assert_int_equal(gpuopt_memory_to_json(m, &json), GPUOPT_OK);
    assert_non_null(strstr(json, "\"budget_source\":\"the plan's headroom rule: 79.5 GiB free x "
                                 "0.90 = 71.5 GiB usable\""));
    gpuopt_free(json);
    /* The API changes it, 0 gives the plan's back, above the total is refused. */
    assert_int_equal(gpuopt_memory_set_budget(m, 8 * GIB), GPUOPT_OK);
    assert_int_equal(stats_of(m).budget_bytes, 8 * GIB);
    assert_int_equal(gpuopt_memory_set_budget(m, H100_TOTAL + 1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpuopt_last_error(), "above cuda:0's 80 GiB"));
    assert_int_equal(gpuopt_memory_set_budget(m, 0), GPUOPT_OK);
    assert_int_equal(stats_of(m).budget_bytes, H100_FREE / 100 * 90);
    gpuopt_memory_destroy(m);

    /* The origin's RX 580 budget of 6,656 MiB as a knob; a share of the total. */
    assert_int_equal(gpuopt_context_set_knob(ctx, "memory.budget_bytes", "6656MiB"), GPUOPT_OK);
    assert_int_equal(gpuopt_context_set_knob(ctx, "memory.warn_percent", "80"), GPUOPT_OK);
    m = manager(ctx, NULL);
    s = stats_of(m);
    assert_int_equal(s.budget_bytes, 6656 * MIB);
    assert_int_equal(s.threshold_percent, 80);
    gpuopt_memory_destroy(m);
    assert_int_equal(gpuopt_context_set_knob(ctx, "memory.budget_bytes", NULL), GPUOPT_OK);
    assert_int_equal(gpuopt_context_set_knob(ctx, "memory.budget_percent", "50"), GPUOPT_OK);
    m = manager(ctx, NULL);
    assert_int_equal(stats_of(m).budget_bytes, H100_TOTAL / 100 * 50);
    gpuopt_memory_destroy(m);
    /* Out of its domain, refused in words. */
    assert_int_equal(gpuopt_context_set_knob(ctx, "memory.warn_percent", "101"),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "an integer from 1 to 100 (percent)"));
    gpuopt_context_destroy(ctx);
}

static void allocations_are_registered_by_name_and_place(void **state)
{
    (void)state;
    gpuopt_context *ctx = context();
    gpuopt_memory *m = manager(ctx, NULL);
    assert_int_equal(gpuopt_memory_register(m, "weights", GPUOPT_PLACE_DEVICE, 6 * GIB), GPUOPT_OK);
    assert_int_equal(gpuopt_memory_register(m, "kv cache", GPUOPT_PLACE_DEVICE, 2 * GIB),
                     GPUOPT_OK);
    assert_int_equal(gpuopt_memory_register(m, "staging", GPUOPT_PLACE_PINNED, 256 * MIB),
                     GPUOPT_OK);
    assert_int_equal(gpuopt_memory_register(m, "dataset", GPUOPT_PLACE_HOST, 3 * GIB), GPUOPT_OK);
    assert_int_equal(gpuopt_memory_register(m, "weights", GPUOPT_PLACE_HOST, 1),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "\"weights\" is already registered"));
    gpuopt_memory_stats s = stats_of(m);
    assert_int_equal(s.device_bytes, 8 * GIB);
    assert_int_equal(s.pinned_bytes, 256 * MIB);
    assert_int_equal(s.host_bytes, 3 * GIB);
    assert_int_equal(s.allocations, 4);
    assert_true(s.budget_share > 0.11 && s.budget_share < 0.12); /* 8 GiB / 71.5 GiB */
    assert_int_equal(gpuopt_memory_release(m, "kv cache"), GPUOPT_OK);
    assert_int_equal(gpuopt_memory_release(m, "kv cache"), GPUOPT_ERR_NOT_FOUND);
    s = stats_of(m);
    assert_int_equal(s.device_bytes, 6 * GIB);
    assert_int_equal(s.device_high_water_bytes, 8 * GIB);
    assert_int_equal(s.allocations, 3);
    char *json = NULL;
    assert_int_equal(gpuopt_memory_to_json(m, &json), GPUOPT_OK);
    cJSON *root = cJSON_Parse(json);
    assert_non_null(root);
    assert_true(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "registered"), "device")->valuedouble ==
        (double)(6 * GIB));
    assert_true(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "high_water"), "device")->valuedouble ==
        (double)(8 * GIB));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "allocations")), 3);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "live"), "source")->valuestring,
        "management");
    cJSON_Delete(root);
    gpuopt_free(json);
    gpuopt_memory_destroy(m);
    gpuopt_context_destroy(ctx);
}

static void the_check_warns_and_logs_at_the_threshold_with_the_plan_s_advice(void **state)
{
    (void)state;
    gpuopt_context *ctx = context();
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.model_bytes = 40 * GIB;
    w.item_bytes = 512 * MIB;
    w.reduced_precision = 1;
    gpuopt_memory *m = manager(ctx, &w);
    char *warning = NULL;
    assert_int_equal(gpuopt_memory_register(m, "weights", GPUOPT_PLACE_DEVICE, 40 * GIB),
                     GPUOPT_OK);
    assert_int_equal(gpuopt_memory_check(m, &warning), GPUOPT_OK);
    assert_null(warning); /* 40 of 71.5 GiB: 56% */
    logged[0] = '\0';
    assert_int_equal(gpuopt_memory_register(m, "batch", GPUOPT_PLACE_DEVICE, 26 * GIB), GPUOPT_OK);
    assert_int_equal(gpuopt_memory_check(m, &warning), GPUOPT_OK);
    assert_non_null(warning);
    assert_non_null(strstr(warning, "cuda:0: 66 GiB registered on the device is 92% of the "
                                    "71.5 GiB budget"));
    assert_non_null(strstr(warning, "at or above the 90% threshold"));
    /* The plan's rules on what the program can hold now: 71.5 GiB within
     * its budget, the 40 GiB model fits, batches of (71.5 - 40) / 0.5 GiB. */
    assert_non_null(strstr(warning, "Advice from the plan's workload rules"));
    assert_non_null(strstr(warning, "model 40 GiB fits"));
    assert_non_null(strstr(warning, "use batches of at most 63 items"));
    assert_non_null(strstr(logged, "66 GiB registered on the device"));
    gpuopt_free(warning);
    /* A lower threshold, then one the usage is under again. */
    assert_int_equal(gpuopt_memory_release(m, "batch"), GPUOPT_OK);
    assert_int_equal(gpuopt_memory_set_threshold(m, 50), GPUOPT_OK);
    assert_int_equal(gpuopt_memory_check(m, &warning), GPUOPT_OK);
    assert_non_null(warning);
    gpuopt_free(warning);
    assert_int_equal(gpuopt_memory_set_threshold(m, 60), GPUOPT_OK);
    assert_int_equal(gpuopt_memory_check(m, &warning), GPUOPT_OK);
    assert_null(warning);
    gpuopt_memory_destroy(m);
    gpuopt_context_destroy(ctx);
}

/* Another process holds 95% of the GPU (NVML counts every process's
 * memory): the check says so even with nothing registered. */
static void the_check_sees_what_other_processes_hold(void **state)
{
    (void)state;
    char used[32];
    snprintf(used, sizeof used, "%llu", (unsigned long long)(H100_TOTAL / 100 * 95));
    setenv("GPUOPT_FAKE_NVML_USED", used, 1);
    gpuopt_context *ctx = context();
    gpuopt_memory *m = manager(ctx, NULL);
    char *warning = NULL;
    assert_int_equal(gpuopt_memory_check(m, &warning), GPUOPT_OK);
    assert_non_null(warning);
    assert_non_null(strstr(warning, "in use on the device (96%, NVML nvmlDeviceGetMemoryInfo"));
    assert_non_null(strstr(warning, "other processes hold it"));
    gpuopt_free(warning);
    gpuopt_memory_destroy(m);
    gpuopt_context_destroy(ctx);
    unsetenv("GPUOPT_FAKE_NVML_USED");
}

/* recommend() on live free memory gives what the plan's knobs give for the
 * same workload when the plan read the same free memory: one set of rules. */
static void recommendations_equal_the_plan_s_workload_knobs(void **state)
{
    (void)state;
    static const struct {
        uint64_t model, item;
        int32_t reduced;
    } cases[] = {
        {100 * GIB, 64 * MIB, 1},  /* quantise to 8 bits */
        {100 * GIB, 64 * MIB, 0},  /* precision-sensitive: offload */
        {300 * GIB, 64 * MIB, 1},  /* 4 bits and offload */
        {20 * GIB, 256 * MIB, -1}, /* fits: a batch */
    };
    gpuopt_context *ctx = context();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpuopt_workload w;
        gpuopt_workload_init(&w);
        w.model_bytes = cases[i].model;
        w.item_bytes = cases[i].item;
        w.reduced_precision = cases[i].reduced;
        gpuopt_plan *p = plan_for(ctx, &w);
        gpuopt_memory *m = NULL;
        assert_int_equal(gpuopt_memory_create(p, &m), GPUOPT_OK);
        gpuopt_memory_advice a;
        memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        assert_int_equal(gpuopt_memory_recommend(m, w.model_bytes, w.item_bytes, &a), GPUOPT_OK);
        int64_t bits = knob_int(p, "model.quantize_bits");
        int64_t off = knob_int(p, "model.offload_bytes");
        int64_t batch = knob_int(p, "batch.max_size");
        if ((bits < 0 ? 0 : bits) != a.quantize_bits ||
            (off < 0 ? 0 : off) != (int64_t)a.offload_bytes ||
            (batch < 0 ? 0 : batch) != a.max_batch)
            fail_msg("case %zu: plan bits %lld offload %lld batch %lld; recommend %d %llu %lld: %s",
                     i, (long long)bits, (long long)off, (long long)batch, (int)a.quantize_bits,
                     (unsigned long long)a.offload_bytes, (long long)a.max_batch, a.reason);
        assert_int_equal(a.free_bytes, H100_FREE);
        assert_int_equal(a.usable_bytes, H100_FREE / 100 * 90);
        assert_non_null(strstr(a.reason, "(live: NVML nvmlDeviceGetMemoryInfo (by UUID))"));
        gpuopt_memory_destroy(m);
        gpuopt_plan_destroy(p);
    }
    gpuopt_context_destroy(ctx);
}

typedef struct worker {
    gpuopt_memory *m;
    int id, failures;
} worker;

static void *hammer(void *arg)
{
    worker *w = arg;
    char name[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof name, "t%d-%d", w->id, (i / 2) % 7);
        if (i % 2 == 0)
            w->failures += gpuopt_memory_register(w->m, name, GPUOPT_PLACE_DEVICE,
                                                  1 + (uint64_t)i) != GPUOPT_OK;
        else
            w->failures += gpuopt_memory_release(w->m, name) != GPUOPT_OK;
    }
    return NULL;
}

static void threads_register_and_release_on_one_manager(void **state)
{
    (void)state;
    gpuopt_context *ctx = context();
    gpuopt_memory *m = manager(ctx, NULL);
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){m, i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, hammer, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(w[i].failures, 0);
    }
    gpuopt_memory_stats s = stats_of(m);
    assert_int_equal(s.allocations, 0);
    assert_int_equal(s.device_bytes, 0);
    assert_true(s.device_high_water_bytes > 0);
    gpuopt_memory_destroy(m);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    unsetenv("CUDA_VISIBLE_DEVICES");
    setenv("GPUOPT_NVML_LIBRARY", GPO_FAKE_NVML, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_budget_is_the_plan_s_headroom_rule_or_the_user_s_knob),
        cmocka_unit_test(allocations_are_registered_by_name_and_place),
        cmocka_unit_test(the_check_warns_and_logs_at_the_threshold_with_the_plan_s_advice),
        cmocka_unit_test(the_check_sees_what_other_processes_hold),
        cmocka_unit_test(recommendations_equal_the_plan_s_workload_knobs),
        cmocka_unit_test(threads_register_and_release_on_one_manager),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
