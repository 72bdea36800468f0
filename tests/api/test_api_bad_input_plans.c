/* Plans, knobs, warnings, exports and knob overrides, called through the
 * public API with NULL, out-of-range and malformed input. */
#include <stdlib.h>

#include "api_check.h"

typedef struct fixture {
    gpuopt_context *ctx;
    gpuopt_plan *plan; /* level 1 for the CPU */
} fixture;

static int setup(void **state)
{
    static fixture f;
    f.ctx = api_cpu_context();
    f.plan = NULL;
    if (gpuopt_plan_create(f.ctx, NULL, 1, &f.plan) != GPUOPT_OK || !f.plan)
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0; /* setup failed */
    gpuopt_plan_destroy(f->plan);
    gpuopt_context_destroy(f->ctx);
    return 0;
}

static gpuopt_knob sized_knob(void)
{
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    return k;
}

static void plan_create_rejects_null_context_and_out(void **state)
{
    fixture *f = *state;
    gpuopt_plan *plan = NULL;
    EXPECT_STATUS(gpuopt_plan_create(NULL, NULL, 1, &plan), GPUOPT_ERR_INVALID_ARGUMENT,
                  "ctx|context");
    EXPECT_STATUS(gpuopt_plan_create(f->ctx, NULL, 1, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "out|plan");
}

static void plan_create_rejects_levels_outside_minus_1_to_2(void **state)
{
    static const int32_t bad[] = {INT32_MIN, -2, GPUOPT_LEVEL_MAX + 1, 7, INT32_MAX};
    fixture *f = *state;
    char num[32];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpuopt_plan *plan = NULL;
        EXPECT_STATUS(gpuopt_plan_create(f->ctx, NULL, bad[i], &plan), GPUOPT_ERR_OUT_OF_RANGE,
                      api_itoa(bad[i], num, sizeof num));
        assert_null(plan);
    }
}

static void plan_create_rejects_a_device_of_another_context(void **state)
{
    fixture *f = *state;
    gpuopt_context *other = api_cpu_context();
    gpuopt_device *foreign = NULL;
    gpuopt_plan *plan = NULL;
    EXPECT_OK(gpuopt_device_select(other, "cpu", &foreign));
    EXPECT_STATUS(gpuopt_plan_create(f->ctx, foreign, 1, &plan), GPUOPT_ERR_INVALID_ARGUMENT,
                  "context");
    assert_null(plan);
    gpuopt_context_destroy(other);
}

static void workload_init_sets_every_field_unknown_and_accepts_null(void **state)
{
    gpuopt_workload w;
    (void)state;
    assert_int_equal(gpuopt_workload_size(), sizeof(gpuopt_workload));
    gpuopt_workload_init(NULL);
    memset(&w, 0xA5, sizeof w);
    gpuopt_workload_init(&w);
    assert_int_equal(w.struct_size, sizeof w);
    assert_int_equal(w.model_bytes, 0);
    assert_int_equal(w.item_bytes, 0);
    assert_int_equal(w.reduced_precision, -1);
    assert_int_equal(w.quantized, 0);
    assert_int_equal(w.objective, GPUOPT_OBJECTIVE_THROUGHPUT);
    assert_int_equal(w.fixed_shapes, 0);
}

static void plan_create_for_rejects_null_and_malformed_workloads(void **state)
{
    static const struct {
        const char *field;
        size_t offset;
        int32_t value;
    } bad[] = {
        {"reduced_precision", offsetof(gpuopt_workload, reduced_precision), -2},
        {"reduced_precision", offsetof(gpuopt_workload, reduced_precision), 2},
        {"quantized", offsetof(gpuopt_workload, quantized), -1},
        {"quantized", offsetof(gpuopt_workload, quantized), 2},
        {"objective", offsetof(gpuopt_workload, objective), -1},
        {"objective", offsetof(gpuopt_workload, objective), GPUOPT_OBJECTIVE_LATENCY + 1},
        {"fixed_shapes", offsetof(gpuopt_workload, fixed_shapes), 2},
        {"fixed_shapes", offsetof(gpuopt_workload, fixed_shapes), INT32_MIN},
        {"bound", offsetof(gpuopt_workload, bound), -1},
        {"bound", offsetof(gpuopt_workload, bound), GPUOPT_BOUND_MEMORY + 1},
    };
    /* The first layout (0.1.0) ends with fixed_shapes: anything shorter is
     * refused, that layout itself is accepted (below). */
    static const size_t first_layout = offsetof(gpuopt_workload, fixed_shapes) + sizeof(int32_t);
    static const size_t sizes[] = {0, 1, sizeof(size_t), first_layout - 1};
    fixture *f = *state;
    gpuopt_workload w;
    gpuopt_plan *plan = NULL;
    gpuopt_workload_init(&w);

    EXPECT_STATUS(gpuopt_plan_create_for(NULL, NULL, 1, &w, &plan), GPUOPT_ERR_INVALID_ARGUMENT,
                  "ctx|context");
    EXPECT_STATUS(gpuopt_plan_create_for(f->ctx, NULL, 1, &w, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "out|plan");
    EXPECT_STATUS(gpuopt_plan_create_for(f->ctx, NULL, 3, &w, &plan), GPUOPT_ERR_OUT_OF_RANGE, "3");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gpuopt_workload_init(&w);
        w.struct_size = sizes[i];
        EXPECT_STATUS(gpuopt_plan_create_for(f->ctx, NULL, 1, &w, &plan), GPUOPT_ERR_STRUCT_SIZE,
                      "struct_size");
        assert_null(plan);
    }
    /* A 0.1.0 caller's struct stops before `bound`: whatever lies beyond
     * its struct_size is not read. */
    gpuopt_workload_init(&w);
    w.struct_size = first_layout;
    w.bound = 77;
    assert_int_equal(gpuopt_plan_create_for(f->ctx, NULL, 0, &w, &plan), GPUOPT_OK);
    gpuopt_plan_destroy(plan);
    plan = NULL;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpuopt_workload_init(&w);
        memcpy((char *)&w + bad[i].offset, &bad[i].value, sizeof bad[i].value);
        print_message("workload.%s = %d\n", bad[i].field, (int)bad[i].value);
        EXPECT_STATUS(gpuopt_plan_create_for(f->ctx, NULL, 1, &w, &plan), GPUOPT_ERR_OUT_OF_RANGE,
                      bad[i].field);
        assert_null(plan);
    }
    gpuopt_workload_init(&w);
    w.model_bytes = UINT64_MAX;
    EXPECT_STATUS(gpuopt_plan_create_for(f->ctx, NULL, 1, &w, &plan), GPUOPT_ERR_OUT_OF_RANGE,
                  NULL);

    /* No workload is plan_create; a zeroed one (but struct_size) is valid. */
    EXPECT_OK(gpuopt_plan_create_for(f->ctx, NULL, 1, NULL, &plan));
    gpuopt_plan_destroy(plan);
    memset(&w, 0, sizeof w);
    w.struct_size = sizeof w;
    EXPECT_OK(gpuopt_plan_create_for(f->ctx, NULL, 1, &w, &plan));
    gpuopt_plan_destroy(plan);
}

static void plan_level_rejects_null_plan_and_two_null_outputs(void **state)
{
    fixture *f = *state;
    int32_t requested = -7, applied = -7;
    EXPECT_STATUS(gpuopt_plan_level(NULL, &requested, &applied), GPUOPT_ERR_INVALID_ARGUMENT,
                  "plan");
    EXPECT_STATUS(gpuopt_plan_level(f->plan, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "requested|applied");
    EXPECT_OK(gpuopt_plan_level(f->plan, &requested, NULL));
    assert_int_equal(requested, 1);
    EXPECT_OK(gpuopt_plan_level(f->plan, NULL, &applied));
    assert_true(applied >= 0 && applied <= requested);
}

static void plan_device_rejects_null(void **state)
{
    fixture *f = *state;
    gpuopt_device *dev = NULL, *selected = NULL;
    EXPECT_STATUS(gpuopt_plan_device(NULL, &dev), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    EXPECT_STATUS(gpuopt_plan_device(f->plan, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "device");
    EXPECT_OK(gpuopt_plan_device(f->plan, &dev));
    EXPECT_OK(gpuopt_device_select(f->ctx, NULL, &selected));
    assert_ptr_equal(dev, selected);
}

static void knob_count_and_knob_at_reject_null_and_indices_outside_the_plan(void **state)
{
    fixture *f = *state;
    int32_t count = 0;
    char num[32];
    gpuopt_knob k = sized_knob();
    EXPECT_STATUS(gpuopt_plan_knob_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    EXPECT_STATUS(gpuopt_plan_knob_count(f->plan, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "count");
    EXPECT_OK(gpuopt_plan_knob_count(f->plan, &count));
    assert_true(count >= 1);
    EXPECT_STATUS(gpuopt_plan_knob_at(NULL, 0, &k), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    EXPECT_STATUS(gpuopt_plan_knob_at(f->plan, 0, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "knob");
    const int32_t bad[] = {API_INT32_EDGES, count, count + 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_STATUS(gpuopt_plan_knob_at(f->plan, bad[i], &k), GPUOPT_ERR_OUT_OF_RANGE,
                      api_itoa(bad[i], num, sizeof num));
}

static void knob_at_and_find_reject_struct_size_below_the_first_layout(void **state)
{
    static const size_t sizes[] = {0, 1, sizeof(size_t), sizeof(gpuopt_knob) - 1};
    fixture *f = *state;
    gpuopt_knob first = sized_knob();
    EXPECT_OK(gpuopt_plan_knob_at(f->plan, 0, &first));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gpuopt_knob k = sized_knob();
        k.struct_size = sizes[i];
        EXPECT_STATUS(gpuopt_plan_knob_at(f->plan, 0, &k), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
        EXPECT_STATUS(gpuopt_plan_knob_find(f->plan, first.name, &k), GPUOPT_ERR_STRUCT_SIZE,
                      "struct_size");
    }
}

static void knob_at_writes_no_more_than_it_knows(void **state)
{
    fixture *f = *state;
    int32_t count = 0;
    EXPECT_OK(gpuopt_plan_knob_count(f->plan, &count));
    for (int32_t i = 0; i < count; i++) {
        struct {
            gpuopt_knob k;
            unsigned char tail[32];
        } big;
        memset(&big, 0xA5, sizeof big);
        big.k.struct_size = sizeof big;
        EXPECT_OK(gpuopt_plan_knob_at(f->plan, i, &big.k));
        for (size_t j = 0; j < sizeof big.tail; j++)
            assert_int_equal(big.tail[j], 0xA5);
        assert_non_null(big.k.name);
        assert_non_null(big.k.value);
        assert_non_null(big.k.reason);
        assert_true(big.k.type >= GPUOPT_KNOB_BOOL && big.k.type <= GPUOPT_KNOB_STRING);
        assert_true(big.k.tier >= -1 && big.k.tier <= GPUOPT_LEVEL_MAX);
        assert_true(big.k.source >= GPUOPT_SOURCE_DEFAULT && big.k.source <= GPUOPT_SOURCE_API);
    }
}

static void knob_find_rejects_null_and_reports_unknown_names(void **state)
{
    static const char *const unknown[] = {"", "no.such.knob", "threads ", ".", "THREADS.X"};
    fixture *f = *state;
    gpuopt_knob k = sized_knob();
    EXPECT_OK(gpuopt_plan_knob_at(f->plan, 0, &k));
    const char *name = k.name;
    EXPECT_STATUS(gpuopt_plan_knob_find(NULL, name, &k), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    EXPECT_STATUS(gpuopt_plan_knob_find(f->plan, NULL, &k), GPUOPT_ERR_INVALID_ARGUMENT, "name");
    EXPECT_STATUS(gpuopt_plan_knob_find(f->plan, name, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "knob");
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        EXPECT_STATUS(gpuopt_plan_knob_find(f->plan, unknown[i], &k), GPUOPT_ERR_NOT_FOUND,
                      unknown[i][0] && unknown[i][0] != '.' ? unknown[i] : NULL);
    EXPECT_OK(gpuopt_plan_knob_find(f->plan, name, &k));
    assert_string_equal(k.name, name);
}

static void warnings_reject_null_and_indices_outside_the_plan(void **state)
{
    fixture *f = *state;
    int32_t count = -7;
    const char *text = NULL;
    char num[32];
    EXPECT_STATUS(gpuopt_plan_warning_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    EXPECT_STATUS(gpuopt_plan_warning_count(f->plan, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "count");
    EXPECT_OK(gpuopt_plan_warning_count(f->plan, &count));
    assert_true(count >= 0);
    EXPECT_STATUS(gpuopt_plan_warning_at(NULL, 0, &text), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    EXPECT_STATUS(gpuopt_plan_warning_at(f->plan, 0, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "text");
    const int32_t bad[] = {API_INT32_EDGES, count, count + 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_STATUS(gpuopt_plan_warning_at(f->plan, bad[i], &text), GPUOPT_ERR_OUT_OF_RANGE,
                      api_itoa(bad[i], num, sizeof num));
}

static void plan_exports_reject_null(void **state)
{
    fixture *f = *state;
    char *text = NULL;
    EXPECT_STATUS(gpuopt_plan_to_json(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    EXPECT_STATUS(gpuopt_plan_to_json(f->plan, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "json");
    EXPECT_STATUS(gpuopt_plan_to_env(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    EXPECT_STATUS(gpuopt_plan_to_env(f->plan, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "text");
    EXPECT_OK(gpuopt_plan_to_json(f->plan, &text));
    assert_non_null(text);
    assert_int_equal(text[0], '{');
    gpuopt_free(text);
    text = NULL;
    EXPECT_OK(gpuopt_plan_to_env(f->plan, &text));
    assert_non_null(text);
    gpuopt_free(text);
}

static void plan_apply_rejects_null_plan_and_unknown_flags(void **state)
{
    static const uint32_t bad[] = {0x4u, 0x80u, 0x80000000u, 0xFFFFFFFFu};
    fixture *f = *state;
    char *report = (char *)"untouched";
    EXPECT_STATUS(gpuopt_plan_apply(NULL, GPUOPT_APPLY_ENV, &report), GPUOPT_ERR_INVALID_ARGUMENT,
                  "plan");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_STATUS(gpuopt_plan_apply(f->plan, bad[i], &report), GPUOPT_ERR_INVALID_ARGUMENT,
                      "flags");
    /* Nothing asked, nothing done; the report is optional. */
    report = NULL;
    EXPECT_OK(gpuopt_plan_apply(f->plan, 0, &report));
    assert_non_null(report);
    assert_string_equal(report, "");
    gpuopt_free(report);
    EXPECT_OK(gpuopt_plan_apply(f->plan, 0, NULL));
}

static void plan_apply_env_never_overwrites_a_variable_the_user_set(void **state)
{
    fixture *f = *state;
    int32_t count = 0;
    char *report = NULL;
    const char *var = NULL;
    EXPECT_OK(gpuopt_plan_knob_count(f->plan, &count));
    for (int32_t i = 0; i < count && !var; i++) {
        gpuopt_knob k = sized_knob();
        EXPECT_OK(gpuopt_plan_knob_at(f->plan, i, &k));
        var = k.env;
    }
    if (!var)
        skip(); /* the plan exports nothing */
    /* Set, even to "", is the user's choice. */
    assert_int_equal(setenv(var, "", 1), 0);
    EXPECT_OK(gpuopt_plan_apply(f->plan, GPUOPT_APPLY_ENV, &report));
    assert_string_equal(getenv(var), "");
    assert_non_null(strstr(report, var));
    gpuopt_free(report);
    unsetenv(var);
}

static void plan_to_build_options_rejects_null(void **state)
{
    fixture *f = *state;
    char *options = NULL;
    EXPECT_STATUS(gpuopt_plan_to_build_options(NULL, &options), GPUOPT_ERR_INVALID_ARGUMENT,
                  "plan");
    EXPECT_STATUS(gpuopt_plan_to_build_options(f->plan, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "options");
    EXPECT_OK(gpuopt_plan_to_build_options(f->plan, &options));
    assert_non_null(options);
    gpuopt_free(options);
}

static void set_knob_rejects_null_context_and_name_and_unknown_names(void **state)
{
    static const char *const unknown[] = {"no.such.knob", "threads.no.such", "x"};
    fixture *f = *state;
    EXPECT_STATUS(gpuopt_context_set_knob(NULL, "threads", "1"), GPUOPT_ERR_INVALID_ARGUMENT,
                  "ctx|context");
    EXPECT_STATUS(gpuopt_context_set_knob(f->ctx, NULL, "1"), GPUOPT_ERR_INVALID_ARGUMENT, "name");
    EXPECT_STATUS(gpuopt_context_set_knob(f->ctx, "", "1"), GPUOPT_ERR_NOT_FOUND, NULL);
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        EXPECT_STATUS(gpuopt_context_set_knob(f->ctx, unknown[i], "1"), GPUOPT_ERR_NOT_FOUND,
                      unknown[i]);
}

/* Values that do not parse as each knob type of the plan; every knob of
 * the plan is tried, so the test follows the catalogue as it grows. */
static const char *const bad_bool[] = {"", "maybe", "2", "yes please", "truefalse"};
static const char *const bad_int[] = {"", "abc", "12abc", "1.5", "0x", "99999999999999999999999"};
static const char *const bad_bytes[] = {
    "", "lots", "-1", "12 parsecs", "256XiB", "1e999", "99999999999999999999999"};

static void set_knob_rejects_values_that_do_not_parse_as_the_knobs_type(void **state)
{
    fixture *f = *state;
    int32_t count = 0, tried = 0;
    EXPECT_OK(gpuopt_plan_knob_count(f->plan, &count));
    for (int32_t i = 0; i < count; i++) {
        gpuopt_knob k = sized_knob();
        const char *const *bad = NULL;
        size_t n = 0;
        EXPECT_OK(gpuopt_plan_knob_at(f->plan, i, &k));
        switch (k.type) {
        case GPUOPT_KNOB_BOOL: bad = bad_bool, n = sizeof bad_bool / sizeof *bad_bool; break;
        case GPUOPT_KNOB_INT: bad = bad_int, n = sizeof bad_int / sizeof *bad_int; break;
        case GPUOPT_KNOB_BYTES: bad = bad_bytes, n = sizeof bad_bytes / sizeof *bad_bytes; break;
        default: continue; /* any text is a string */
        }
        for (size_t j = 0; j < n; j++) {
            print_message("%s = \"%s\"\n", k.name, bad[j]);
            EXPECT_STATUS(gpuopt_context_set_knob(f->ctx, k.name, bad[j]),
                          GPUOPT_ERR_INVALID_ARGUMENT, k.name);
            tried++;
        }
    }
    assert_true(tried > 0);
}

static void set_knob_override_reaches_the_next_plan_and_null_removes_it(void **state)
{
    fixture *f = *state;
    int32_t count = 0;
    EXPECT_OK(gpuopt_plan_knob_count(f->plan, &count));
    for (int32_t i = 0; i < count; i++) {
        gpuopt_knob k = sized_knob(), after = sized_knob();
        gpuopt_plan *plan = NULL;
        EXPECT_OK(gpuopt_plan_knob_at(f->plan, i, &k));
        /* Its own value, set again from the API: accepted, and the next
         * plan says where it came from. */
        EXPECT_OK(gpuopt_context_set_knob(f->ctx, k.name, k.value));
        EXPECT_OK(gpuopt_plan_create(f->ctx, NULL, 1, &plan));
        EXPECT_OK(gpuopt_plan_knob_find(plan, k.name, &after));
        assert_int_equal(after.source, GPUOPT_SOURCE_API);
        assert_string_equal(after.value, k.value);
        gpuopt_plan_destroy(plan);

        EXPECT_OK(gpuopt_context_set_knob(f->ctx, k.name, NULL));
        EXPECT_OK(gpuopt_plan_create(f->ctx, NULL, 1, &plan));
        after = sized_knob();
        EXPECT_OK(gpuopt_plan_knob_find(plan, k.name, &after));
        assert_int_equal(after.source, k.source);
        gpuopt_plan_destroy(plan);
    }
    /* Removing an override that is not there is not an error. */
    gpuopt_knob k = sized_knob();
    EXPECT_OK(gpuopt_plan_knob_at(f->plan, 0, &k));
    EXPECT_OK(gpuopt_context_set_knob(f->ctx, k.name, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_create_rejects_null_context_and_out),
        cmocka_unit_test(plan_create_rejects_levels_outside_minus_1_to_2),
        cmocka_unit_test(plan_create_rejects_a_device_of_another_context),
        cmocka_unit_test(workload_init_sets_every_field_unknown_and_accepts_null),
        cmocka_unit_test(plan_create_for_rejects_null_and_malformed_workloads),
        cmocka_unit_test(plan_level_rejects_null_plan_and_two_null_outputs),
        cmocka_unit_test(plan_device_rejects_null),
        cmocka_unit_test(knob_count_and_knob_at_reject_null_and_indices_outside_the_plan),
        cmocka_unit_test(knob_at_and_find_reject_struct_size_below_the_first_layout),
        cmocka_unit_test(knob_at_writes_no_more_than_it_knows),
        cmocka_unit_test(knob_find_rejects_null_and_reports_unknown_names),
        cmocka_unit_test(warnings_reject_null_and_indices_outside_the_plan),
        cmocka_unit_test(plan_exports_reject_null),
        cmocka_unit_test(plan_apply_rejects_null_plan_and_unknown_flags),
        cmocka_unit_test(plan_apply_env_never_overwrites_a_variable_the_user_set),
        cmocka_unit_test(plan_to_build_options_rejects_null),
        cmocka_unit_test(set_knob_rejects_null_context_and_name_and_unknown_names),
        cmocka_unit_test(set_knob_rejects_values_that_do_not_parse_as_the_knobs_type),
        cmocka_unit_test(set_knob_override_reaches_the_next_plan_and_null_removes_it),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
