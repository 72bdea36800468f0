/* "Failure means no output" (gpuopt.h, Conventions): after any status but
 * GPUOPT_OK every output the caller passed is cleared, whichever argument
 * was wrong: pointers NULL, numbers 0, structs with a valid struct_size
 * zeroed (struct_size kept). Each output starts poisoned, so a function
 * that returns early without clearing it is caught. */
#include "api_check.h"

static int poison_target;
#define POISON_PTR ((void *)&poison_target)
#define POISON_INT 0x5A5A5A5A

/* A caller's struct of `size` bytes, every byte 0xA5 but struct_size. */
#define POISONED(var, size)                                                                        \
    do {                                                                                           \
        memset(&(var), 0xA5, sizeof(var));                                                         \
        (var).struct_size = (size);                                                                \
    } while (0)

/* Every byte after struct_size is zero and struct_size is what it was. */
static void assert_zeroed(const void *s, size_t size)
{
    const unsigned char *p = s;
    size_t kept;
    memcpy(&kept, p, sizeof kept);
    assert_int_equal(kept, size);
    for (size_t i = sizeof(size_t); i < size; i++)
        assert_int_equal(p[i], 0);
}

typedef struct fixture {
    gpuopt_context *ctx;
    gpuopt_plan *plan;
} fixture;

static int setup(void **state)
{
    static fixture f;
    f.ctx = api_cpu_context();
    EXPECT_OK(gpuopt_plan_create(f.ctx, NULL, 1, &f.plan));
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gpuopt_plan_destroy(f->plan);
    gpuopt_context_destroy(f->ctx);
    return 0;
}

static void failed_context_and_backend_calls_leave_no_output(void **state)
{
    fixture *f = *state;
    gpuopt_context *ctx = POISON_PTR;
    gpuopt_options opt;
    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    opt.level = "7";
    opt.config_path = "";
    EXPECT_STATUS(gpuopt_context_create(&opt, &ctx), GPUOPT_ERR_CONFIG, "level");
    assert_null(ctx);

    int32_t count = POISON_INT;
    EXPECT_STATUS(gpuopt_backend_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    assert_int_equal(count, 0);

    gpuopt_backend_info info;
    POISONED(info, sizeof info);
    EXPECT_STATUS(gpuopt_backend_at(NULL, 0, &info), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    assert_zeroed(&info, sizeof info);
    POISONED(info, sizeof info);
    EXPECT_STATUS(gpuopt_backend_at(f->ctx, INT32_MAX, &info), GPUOPT_ERR_OUT_OF_RANGE, NULL);
    assert_zeroed(&info, sizeof info);

    char *json = POISON_PTR;
    EXPECT_STATUS(gpuopt_context_to_json(NULL, &json), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    assert_null(json);
    json = POISON_PTR;
    EXPECT_STATUS(gpuopt_context_diagnose(NULL, &json), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    assert_null(json);
}

static void failed_device_calls_leave_no_output(void **state)
{
    fixture *f = *state;
    int32_t count = POISON_INT;
    EXPECT_STATUS(gpuopt_device_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    assert_int_equal(count, 0);

    gpuopt_device *dev = POISON_PTR;
    EXPECT_STATUS(gpuopt_device_at(NULL, 0, &dev), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    assert_null(dev);
    dev = POISON_PTR;
    EXPECT_STATUS(gpuopt_device_at(f->ctx, -1, &dev), GPUOPT_ERR_OUT_OF_RANGE, "-1");
    assert_null(dev);

    static const char *const refused[] = {NULL, "cpu:x", "cuda:7"};
    static const gpuopt_status why[] = {GPUOPT_ERR_INVALID_ARGUMENT, GPUOPT_ERR_INVALID_ARGUMENT,
                                        GPUOPT_ERR_NO_DEVICE};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        dev = POISON_PTR;
        EXPECT_STATUS(gpuopt_device_select(refused[i] ? f->ctx : NULL, refused[i], &dev), why[i],
                      NULL);
        assert_null(dev);
    }

    gpuopt_device_info info;
    POISONED(info, sizeof info);
    EXPECT_STATUS(gpuopt_device_get_info(NULL, &info), GPUOPT_ERR_INVALID_ARGUMENT, "device");
    assert_zeroed(&info, sizeof info);
}

static void failed_plan_calls_leave_no_output(void **state)
{
    fixture *f = *state;
    gpuopt_plan *plan = POISON_PTR;
    EXPECT_STATUS(gpuopt_plan_create(NULL, NULL, 1, &plan), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    assert_null(plan);
    plan = POISON_PTR;
    EXPECT_STATUS(gpuopt_plan_create(f->ctx, NULL, 3, &plan), GPUOPT_ERR_OUT_OF_RANGE, "3");
    assert_null(plan);
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.objective = 9;
    plan = POISON_PTR;
    EXPECT_STATUS(gpuopt_plan_create_for(f->ctx, NULL, 1, &w, &plan), GPUOPT_ERR_OUT_OF_RANGE,
                  "objective");
    assert_null(plan);

    int32_t requested = POISON_INT, applied = POISON_INT, count = POISON_INT;
    EXPECT_STATUS(gpuopt_plan_level(NULL, &requested, &applied), GPUOPT_ERR_INVALID_ARGUMENT,
                  "plan");
    assert_int_equal(requested, 0);
    assert_int_equal(applied, 0);
    gpuopt_device *dev = POISON_PTR;
    EXPECT_STATUS(gpuopt_plan_device(NULL, &dev), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    assert_null(dev);
    EXPECT_STATUS(gpuopt_plan_knob_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    assert_int_equal(count, 0);
    count = POISON_INT;
    EXPECT_STATUS(gpuopt_plan_warning_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    assert_int_equal(count, 0);

    gpuopt_knob knob;
    POISONED(knob, sizeof knob);
    EXPECT_STATUS(gpuopt_plan_knob_at(NULL, 0, &knob), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    assert_zeroed(&knob, sizeof knob);
    POISONED(knob, sizeof knob);
    EXPECT_STATUS(gpuopt_plan_knob_at(f->plan, INT32_MAX, &knob), GPUOPT_ERR_OUT_OF_RANGE, NULL);
    assert_zeroed(&knob, sizeof knob);
    POISONED(knob, sizeof knob);
    EXPECT_STATUS(gpuopt_plan_knob_find(f->plan, "no.such.knob", &knob), GPUOPT_ERR_NOT_FOUND,
                  "no.such.knob");
    assert_zeroed(&knob, sizeof knob);

    const char *warning = POISON_PTR;
    EXPECT_STATUS(gpuopt_plan_warning_at(f->plan, INT32_MAX, &warning), GPUOPT_ERR_OUT_OF_RANGE,
                  NULL);
    assert_null(warning);

    char *text = POISON_PTR;
    EXPECT_STATUS(gpuopt_plan_to_json(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    assert_null(text);
    text = POISON_PTR;
    EXPECT_STATUS(gpuopt_plan_to_env(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    assert_null(text);
    text = POISON_PTR;
    EXPECT_STATUS(gpuopt_plan_to_build_options(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    assert_null(text);
    text = POISON_PTR;
    EXPECT_STATUS(gpuopt_plan_apply(f->plan, 0x80u, &text), GPUOPT_ERR_INVALID_ARGUMENT, "flags");
    assert_null(text);
}

static void failed_cache_calls_leave_no_output(void **state)
{
    (void)state;
    char *text = POISON_PTR;
    EXPECT_STATUS(gpuopt_cache_path(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    assert_null(text);
    text = POISON_PTR;
    EXPECT_STATUS(gpuopt_cache_list(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    assert_null(text);
    text = POISON_PTR;
    EXPECT_STATUS(gpuopt_cache_verify(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    assert_null(text);
}

/* The library cannot know how large a struct with a wrong struct_size is,
 * so it writes none of it. */
static void a_struct_whose_struct_size_is_wrong_is_left_untouched(void **state)
{
    fixture *f = *state;
    gpuopt_backend_info b;
    gpuopt_device_info d;
    gpuopt_knob k;
    gpuopt_device *dev = NULL;
    EXPECT_OK(gpuopt_device_at(f->ctx, 0, &dev));
    POISONED(b, 1);
    POISONED(d, 1);
    POISONED(k, 1);
    EXPECT_STATUS(gpuopt_backend_at(f->ctx, 0, &b), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    EXPECT_STATUS(gpuopt_device_get_info(dev, &d), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    EXPECT_STATUS(gpuopt_plan_knob_at(f->plan, 0, &k), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    const unsigned char *bytes[] = {(const unsigned char *)&b, (const unsigned char *)&d,
                                    (const unsigned char *)&k};
    const size_t sizes[] = {sizeof b, sizeof d, sizeof k};
    for (size_t s = 0; s < 3; s++)
        for (size_t i = sizeof(size_t); i < sizes[s]; i++)
            assert_int_equal(bytes[s][i], 0xA5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(failed_context_and_backend_calls_leave_no_output),
        cmocka_unit_test(failed_device_calls_leave_no_output),
        cmocka_unit_test(failed_plan_calls_leave_no_output),
        cmocka_unit_test(failed_cache_calls_leave_no_output),
        cmocka_unit_test(a_struct_whose_struct_size_is_wrong_is_left_untouched),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
