/* Plans: tiers applied in order, a failing tier rolled back with the reason,
 * user overrides in precedence order, and the exports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "context.h"
#include "plan.h"
#include "support/synthetic.h"
#include "support/testutil.h"

static int setup(void **state)
{
    (void)state;
    syn_reset();
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 1, 1u << 30);
    unsetenv("GPUOPT_KNOBS");
    return 0;
}

static gpuopt_knob knob(gpuopt_plan *p, const char *name, gpuopt_status want)
{
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    assert_int_equal(gpuopt_plan_knob_find(p, name, &k), want);
    return k;
}

static void levels(gpuopt_plan *p, int asked, int applied)
{
    int32_t a, b;
    assert_int_equal(gpuopt_plan_level(p, &a, &b), GPUOPT_OK);
    assert_int_equal(a, asked);
    assert_int_equal(b, applied);
}

static void each_level_adds_its_tier_and_names_tier_and_source(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    gpuopt_plan *p;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 0, &p), GPUOPT_OK);
    levels(p, 0, 0);
    knob(p, "syn.tier1", GPUOPT_ERR_NOT_FOUND);
    gpuopt_plan_destroy(p);

    assert_int_equal(gpuopt_plan_create(ctx, NULL, 2, &p), GPUOPT_OK);
    levels(p, 2, 2);
    gpuopt_knob k = knob(p, "syn.tier0", GPUOPT_OK);
    assert_int_equal(k.tier, 0);
    assert_int_equal(k.source, GPUOPT_SOURCE_DEFAULT);
    assert_int_equal(k.int_value, 10);
    k = knob(p, "syn.tier1", GPUOPT_OK);
    assert_int_equal(k.source, GPUOPT_SOURCE_DETECTED);
    assert_string_equal(k.value, "true");
    assert_string_equal(k.env, "SYN_TIER1");
    k = knob(p, "syn.tier2", GPUOPT_OK);
    assert_int_equal(k.tier, 2);
    assert_int_equal(k.source, GPUOPT_SOURCE_BENCHMARK);
    assert_string_equal(k.reason, "tier 2 measurement");
    int32_t n;
    assert_int_equal(gpuopt_plan_warning_count(p, &n), GPUOPT_OK);
    assert_int_equal(n, 0);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void a_failing_tier_is_rolled_back_and_the_plan_says_why(void **state)
{
    (void)state;
    syn_cpu.tier_result[2] = GPUOPT_ERR_DRIVER;
    gpuopt_context *ctx;
    gpuopt_plan *p;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 2, &p), GPUOPT_OK);
    levels(p, 2, 1);
    knob(p, "syn.tier2", GPUOPT_ERR_NOT_FOUND);
    knob(p, "syn.tier1", GPUOPT_OK);
    const char *w;
    assert_int_equal(gpuopt_plan_warning_at(p, 0, &w), GPUOPT_OK);
    assert_non_null(strstr(w, "level 2"));
    assert_non_null(strstr(w, "synthetic tier 2 failure"));
    assert_non_null(strstr(w, "stays at level 1"));
    assert_int_equal(gpuopt_plan_warning_at(p, 1, &w), GPUOPT_ERR_OUT_OF_RANGE);
    gpuopt_plan_destroy(p);

    syn_cpu.tier_result[1] = GPUOPT_ERR_UNSUPPORTED;
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 2, &p), GPUOPT_OK);
    levels(p, 2, 0);
    knob(p, "syn.tier1", GPUOPT_ERR_NOT_FOUND);
    gpuopt_plan_destroy(p);

    syn_cpu.tier_result[0] = GPUOPT_ERR_DRIVER;
    p = (gpuopt_plan *)1;
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &p), GPUOPT_ERR_DRIVER);
    assert_null(p);
    assert_non_null(strstr(gpuopt_last_error(), "tier 0 failed"));
    gpuopt_context_destroy(ctx);
}

static void user_overrides_apply_config_then_env_then_api(void **state)
{
    (void)state;
    const char *cfg = write_temp_file(0, "knobs.json",
                                      "{\"knobs\": {\"syn.tier0\": 20, \"syn.text\": \"file\","
                                      " \"syn.tier1\": false}}");
    setenv("GPUOPT_KNOBS", "syn.tier0=30; syn.tier2=1MiB", 1);
    gpuopt_context *ctx;
    gpuopt_plan *p;
    assert_int_equal(syn_context(NULL, cfg, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_context_set_knob(ctx, "syn.tier0", "40"), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &p), GPUOPT_OK);
    gpuopt_knob k = knob(p, "syn.tier0", GPUOPT_OK);
    assert_int_equal(k.int_value, 40);
    assert_int_equal(k.source, GPUOPT_SOURCE_API);
    assert_int_equal(k.tier, 0);
    assert_non_null(strstr(k.reason, "gpuopt_context_set_knob"));
    assert_non_null(strstr(k.reason, "rules gave 10"));
    k = knob(p, "syn.tier2", GPUOPT_OK); /* not produced at level 1: user-only */
    assert_int_equal(k.int_value, 1 << 20);
    assert_int_equal(k.tier, -1);
    assert_int_equal(k.source, GPUOPT_SOURCE_ENV);
    k = knob(p, "syn.text", GPUOPT_OK);
    assert_string_equal(k.value, "file");
    assert_int_equal(k.source, GPUOPT_SOURCE_CONFIG);
    k = knob(p, "syn.tier1", GPUOPT_OK);
    assert_int_equal(k.int_value, 0);
    gpuopt_plan_destroy(p);
    /* Removing the API override falls back to the environment's. */
    assert_int_equal(gpuopt_context_set_knob(ctx, "syn.tier0", NULL), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &p), GPUOPT_OK);
    k = knob(p, "syn.tier0", GPUOPT_OK);
    assert_int_equal(k.int_value, 30);
    assert_int_equal(k.source, GPUOPT_SOURCE_ENV);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
    unsetenv("GPUOPT_KNOBS");
}

static void bad_overrides_are_refused_or_warned_never_applied(void **state)
{
    (void)state;
    setenv("GPUOPT_KNOBS", "syn.tier0=abc;nosuch.knob=1;novalue;syn.tier1=maybe", 1);
    log_capture log = {0};
    gpuopt_context *ctx;
    gpuopt_plan *p;
    assert_int_equal(syn_context(NULL, NULL, &log, &ctx), GPUOPT_OK);
    assert_non_null(strstr(log.text, "GPUOPT_KNOBS: ignoring 'syn.tier0=abc'"));
    assert_non_null(strstr(log.text, "no knob is called 'nosuch.knob'"));
    assert_non_null(strstr(log.text, "'novalue' is not name=value"));
    assert_non_null(strstr(log.text, "its domain: true or false"));
    assert_int_equal(gpuopt_context_set_knob(ctx, "nosuch", "1"), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(gpuopt_context_set_knob(ctx, "syn.tier0", "1.5"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "not an integer"));
    assert_int_equal(gpuopt_context_set_knob(ctx, "syn.tier2", "-4"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_context_set_knob(NULL, "syn.tier0", "1"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_context_set_knob(ctx, NULL, "1"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &p), GPUOPT_OK);
    assert_int_equal(knob(p, "syn.tier0", GPUOPT_OK).int_value, 10);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
    unsetenv("GPUOPT_KNOBS");
}

static void plan_exports_json_and_quoted_shell_lines(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    gpuopt_plan *p;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_context_set_knob(ctx, "syn.text", "it's $HOME \"`a}b\\"), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &p), GPUOPT_OK);
    char *env, *json;
    /* Each line sets its variable only where it is unset (as
     * gpuopt_plan_apply); $ ` " } and \ are escaped for the double quotes. */
    assert_int_equal(gpuopt_plan_to_env(p, &env), GPUOPT_OK);
    assert_string_equal(env, ": \"${SYN_TIER1=true}\"; export SYN_TIER1\n"
                             ": \"${SYN_TEXT=it's \\$HOME \\\"\\`a\\}b\\\\}\"; export SYN_TEXT\n");
    assert_int_equal(gpuopt_plan_to_json(p, &json), GPUOPT_OK);
    cJSON *root = cJSON_Parse(json);
    assert_non_null(root);
    assert_int_equal(cJSON_GetObjectItem(root, "level_requested")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(root, "level_applied")->valueint, 1);
    assert_string_equal(cJSON_GetObjectItem(root, "device")->valuestring, "syncpu:0");
    cJSON *k = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "knobs"), 0);
    assert_string_equal(cJSON_GetObjectItem(k, "name")->valuestring, "syn.tier0");
    assert_string_equal(cJSON_GetObjectItem(k, "type")->valuestring, "int");
    assert_int_equal(cJSON_GetObjectItem(k, "value")->valueint, 10);
    assert_string_equal(cJSON_GetObjectItem(k, "source")->valuestring, "default");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(k, "env")));
    /* The additions: the domain in words, the mapping, the inputs of a derived knob. */
    assert_string_equal(cJSON_GetObjectItem(k, "domain")->valuestring, "an integer from 0 to 1000");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(k, "maps_to")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(k, "inputs")));
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(root, "warnings")));
    cJSON_Delete(root);
    gpuopt_free(env);
    gpuopt_free(json);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void plan_functions_refuse_bad_input(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    gpuopt_plan *p = NULL;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 3, &p), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, -2, &p), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_plan_create(NULL, NULL, 1, &p), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, GPUOPT_LEVEL_DEFAULT, &p), GPUOPT_OK);
    levels(p, 1, 1);
    gpuopt_knob k;
    k.struct_size = 4;
    assert_int_equal(gpuopt_plan_knob_at(p, 0, &k), GPUOPT_ERR_STRUCT_SIZE);
    k.struct_size = sizeof k;
    assert_int_equal(gpuopt_plan_knob_at(p, 99, &k), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_plan_knob_at(p, -1, &k), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_plan_knob_find(p, NULL, &k), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_plan_knob_find(p, "nope", &k), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(gpuopt_plan_level(p, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_plan_level(NULL, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    int32_t n;
    assert_int_equal(gpuopt_plan_knob_count(NULL, &n), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_plan_to_json(p, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_plan_to_env(NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    gpuopt_plan_destroy(p);
    gpuopt_plan_destroy(NULL);
    gpuopt_context_destroy(ctx);
}

static void rules_setting_undeclared_or_mistyped_knobs_fail(void **state)
{
    (void)state;
    gpuopt_device *dev = gpo_device_new();
    struct gpuopt_plan *p = gpo_plan_new(NULL, dev, 1);
    assert_int_equal(gpo_knob_set_int(p, "no.such.knob", 1, "x"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_knob_set_bool(p, "launch.block_size", 1, "x"),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_knob_set_string(p, "launch.block_size", "256", "x"),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_knob_set_int(p, "launch.block_size", 256, "warp %d", 32), GPUOPT_OK);
    assert_int_equal(gpo_knob_set_int(p, "launch.block_size", 128, "again"), GPUOPT_OK);
    int64_t v;
    assert_true(gpo_knob_get_int(p, "launch.block_size", &v));
    assert_int_equal(v, 128);
    assert_string_equal(gpo_knob_get_text(p, "launch.block_size"), "128");
    assert_int_equal(p->n_knobs, 1);
    gpo_knob_unset(p, "launch.block_size");
    gpo_knob_unset(p, "launch.block_size");
    assert_int_equal(p->n_knobs, 0);
    assert_false(gpo_knob_get_int(p, "launch.block_size", &v));
    assert_int_equal(gpo_plan_config(p)->level, 1);
    gpo_plan_free(p);
    gpo_device_free(dev);
}

static void workloads_are_checked_and_tiny_ones_skip_measurement(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    gpuopt_plan *p = NULL;
    gpuopt_workload w;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    gpuopt_workload_init(&w);
    assert_int_equal(w.reduced_precision, -1);
    w.reduced_precision = 2;
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 1, &w, &p), GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpuopt_last_error(), "reduced_precision is 2"));
    gpuopt_workload_init(&w);
    w.objective = 7;
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 1, &w, &p), GPUOPT_ERR_OUT_OF_RANGE);
    gpuopt_workload_init(&w);
    w.struct_size = 4;
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 1, &w, &p), GPUOPT_ERR_STRUCT_SIZE);
    assert_null(p);
    /* Fields that contradict each other are refused, both named: neither wins. */
    gpuopt_workload_init(&w);
    w.reduced_precision = 0;
    w.quantized = 1;
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 1, &w, &p), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "reduced_precision = 0 (precision-sensitive) and "
                                                "quantized = 1 contradict each other"));
    assert_null(p);
    w.reduced_precision = 1; /* each alone is fine */
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 1, &w, &p), GPUOPT_OK);
    gpuopt_plan_destroy(p);
    p = NULL;

    /* 64 KiB of model: level 2 is not worth it, and the plan says so. */
    gpuopt_workload_init(&w);
    w.model_bytes = 65536;
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 2, &w, &p), GPUOPT_OK);
    levels(p, 2, 1);
    knob(p, "syn.tier2", GPUOPT_ERR_NOT_FOUND);
    const char *text;
    assert_int_equal(gpuopt_plan_warning_at(p, 0, &text), GPUOPT_OK);
    assert_non_null(strstr(text, "64 KiB, under the 1 MiB"));
    assert_int_equal(syn_cpu.tier_result[2], GPUOPT_OK);
    gpuopt_plan_destroy(p);
    /* A large one is measured; no workload at all is measured too. */
    w.model_bytes = 7000000000ull;
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 2, &w, &p), GPUOPT_OK);
    levels(p, 2, 2);
    assert_int_equal(gpo_plan_workload(p)->model_bytes, 7000000000ull);
    gpuopt_plan_destroy(p);
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 2, NULL, &p), GPUOPT_OK);
    levels(p, 2, 2);
    assert_null(gpo_plan_workload(p));
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void reduced_precision_follows_the_workload_then_the_configuration(void **state)
{
    (void)state;
    gpuopt_device *dev = gpo_device_new();
    struct gpuopt_plan *p = gpo_plan_new(NULL, dev, 1);
    char why[256];
    assert_false(gpo_plan_reduced_precision(p, why, sizeof why));
    assert_non_null(strstr(why, "not enabled"));
    gpo_config cfg = *gpo_plan_config(p);
    cfg.reduced_precision = 1;
    p->cfg = &cfg;
    assert_true(gpo_plan_reduced_precision(p, why, sizeof why));
    assert_non_null(strstr(why, "configuration"));
    p->has_workload = 1;
    gpuopt_workload_init(&p->workload);
    p->workload.reduced_precision = 0;
    assert_false(gpo_plan_reduced_precision(p, why, sizeof why));
    assert_string_equal(why, "the workload is precision-sensitive");
    const char *what;
    dev->info.memory_bytes = 1000;
    assert_int_equal(gpo_plan_device_memory(p, &what), 1000);
    assert_string_equal(what, "total");
    p->memory_free = 600;
    assert_int_equal(gpo_plan_device_memory(p, &what), 600);
    assert_string_equal(what, "free");
    gpo_plan_free(p);
    gpo_device_free(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(each_level_adds_its_tier_and_names_tier_and_source, setup),
        cmocka_unit_test_setup(a_failing_tier_is_rolled_back_and_the_plan_says_why, setup),
        cmocka_unit_test_setup(user_overrides_apply_config_then_env_then_api, setup),
        cmocka_unit_test_setup(bad_overrides_are_refused_or_warned_never_applied, setup),
        cmocka_unit_test_setup(plan_exports_json_and_quoted_shell_lines, setup),
        cmocka_unit_test_setup(plan_functions_refuse_bad_input, setup),
        cmocka_unit_test_setup(rules_setting_undeclared_or_mistyped_knobs_fail, setup),
        cmocka_unit_test_setup(workloads_are_checked_and_tiny_ones_skip_measurement, setup),
        cmocka_unit_test_setup(reduced_precision_follows_the_workload_then_the_configuration,
                               setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
