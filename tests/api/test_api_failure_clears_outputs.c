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

/* `call` fails with `want` (its detail naming `needles`) and leaves the
 * output `out`, poisoned first, cleared: a pointer NULL, a number 0, a
 * caller-sized struct zeroed. */
#define EXPECT_NULL_AFTER(out, call, want, needles)                                                \
    do {                                                                                           \
        (out) = POISON_PTR;                                                                        \
        EXPECT_STATUS(call, want, needles);                                                        \
        assert_null(out);                                                                          \
    } while (0)
#define EXPECT_ZERO_AFTER(out, call, want, needles)                                                \
    do {                                                                                           \
        (out) = POISON_INT;                                                                        \
        EXPECT_STATUS(call, want, needles);                                                        \
        assert_int_equal(out, 0);                                                                  \
    } while (0)
#define EXPECT_ZEROED_AFTER(out, call, want, needles)                                              \
    do {                                                                                           \
        POISONED(out, sizeof(out));                                                                \
        EXPECT_STATUS(call, want, needles);                                                        \
        assert_zeroed(&(out), sizeof(out));                                                        \
    } while (0)

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
    gpuopt_context *ctx;
    gpuopt_options opt;
    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    opt.level = "7";
    opt.config_path = "";
    EXPECT_NULL_AFTER(ctx, gpuopt_context_create(&opt, &ctx), GPUOPT_ERR_CONFIG, "level");

    int32_t count;
    EXPECT_ZERO_AFTER(count, gpuopt_backend_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT,
                      "ctx");

    gpuopt_backend_info info;
    EXPECT_ZEROED_AFTER(info, gpuopt_backend_at(NULL, 0, &info), GPUOPT_ERR_INVALID_ARGUMENT,
                        "ctx");
    EXPECT_ZEROED_AFTER(info, gpuopt_backend_at(f->ctx, INT32_MAX, &info), GPUOPT_ERR_OUT_OF_RANGE,
                        NULL);

    char *json;
    EXPECT_NULL_AFTER(json, gpuopt_context_to_json(NULL, &json), GPUOPT_ERR_INVALID_ARGUMENT,
                      "ctx");
    EXPECT_NULL_AFTER(json, gpuopt_context_diagnose(NULL, &json), GPUOPT_ERR_INVALID_ARGUMENT,
                      "ctx");
}

static void failed_device_calls_leave_no_output(void **state)
{
    fixture *f = *state;
    int32_t count;
    EXPECT_ZERO_AFTER(count, gpuopt_device_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");

    gpuopt_device *dev;
    EXPECT_NULL_AFTER(dev, gpuopt_device_at(NULL, 0, &dev), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    EXPECT_NULL_AFTER(dev, gpuopt_device_at(f->ctx, -1, &dev), GPUOPT_ERR_OUT_OF_RANGE, "-1");
    EXPECT_NULL_AFTER(dev, gpuopt_device_select(NULL, NULL, &dev), GPUOPT_ERR_INVALID_ARGUMENT,
                      "ctx");
    EXPECT_NULL_AFTER(dev, gpuopt_device_select(f->ctx, "cpu:x", &dev), GPUOPT_ERR_INVALID_ARGUMENT,
                      "cpu:x");
    EXPECT_NULL_AFTER(dev, gpuopt_device_select(f->ctx, "cuda:7", &dev), GPUOPT_ERR_NO_DEVICE,
                      NULL);

    gpuopt_device_info info;
    EXPECT_ZEROED_AFTER(info, gpuopt_device_get_info(NULL, &info), GPUOPT_ERR_INVALID_ARGUMENT,
                        "device");
}

static void failed_plan_calls_leave_no_output(void **state)
{
    fixture *f = *state;
    gpuopt_plan *plan;
    EXPECT_NULL_AFTER(plan, gpuopt_plan_create(NULL, NULL, 1, &plan), GPUOPT_ERR_INVALID_ARGUMENT,
                      "ctx");
    EXPECT_NULL_AFTER(plan, gpuopt_plan_create(f->ctx, NULL, 3, &plan), GPUOPT_ERR_OUT_OF_RANGE,
                      "3");
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.objective = 9;
    EXPECT_NULL_AFTER(plan, gpuopt_plan_create_for(f->ctx, NULL, 1, &w, &plan),
                      GPUOPT_ERR_OUT_OF_RANGE, "objective");

    int32_t requested = POISON_INT, applied;
    EXPECT_ZERO_AFTER(applied, gpuopt_plan_level(NULL, &requested, &applied),
                      GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    assert_int_equal(requested, 0);
    gpuopt_device *dev;
    EXPECT_NULL_AFTER(dev, gpuopt_plan_device(NULL, &dev), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    int32_t count;
    EXPECT_ZERO_AFTER(count, gpuopt_plan_knob_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT,
                      "plan");
    EXPECT_ZERO_AFTER(count, gpuopt_plan_warning_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT,
                      "plan");

    gpuopt_knob knob;
    EXPECT_ZEROED_AFTER(knob, gpuopt_plan_knob_at(NULL, 0, &knob), GPUOPT_ERR_INVALID_ARGUMENT,
                        "plan");
    EXPECT_ZEROED_AFTER(knob, gpuopt_plan_knob_at(f->plan, INT32_MAX, &knob),
                        GPUOPT_ERR_OUT_OF_RANGE, NULL);
    EXPECT_ZEROED_AFTER(knob, gpuopt_plan_knob_find(f->plan, "no.such.knob", &knob),
                        GPUOPT_ERR_NOT_FOUND, "no.such.knob");

    const char *warning;
    EXPECT_NULL_AFTER(warning, gpuopt_plan_warning_at(f->plan, INT32_MAX, &warning),
                      GPUOPT_ERR_OUT_OF_RANGE, NULL);

    char *text;
    EXPECT_NULL_AFTER(text, gpuopt_plan_to_json(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    EXPECT_NULL_AFTER(text, gpuopt_plan_to_env(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    EXPECT_NULL_AFTER(text, gpuopt_plan_to_build_options(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT,
                      "plan");
    EXPECT_NULL_AFTER(text, gpuopt_plan_apply(f->plan, 0x80u, &text), GPUOPT_ERR_INVALID_ARGUMENT,
                      "flags");
}

static void failed_cache_calls_leave_no_output(void **state)
{
    char *text;
    EXPECT_NULL_AFTER(text, gpuopt_cache_path(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    EXPECT_NULL_AFTER(text, gpuopt_cache_list(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    EXPECT_NULL_AFTER(text, gpuopt_cache_verify(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "ctx");
    EXPECT_NULL_AFTER(text, gpuopt_cache_export(NULL, NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT,
                      "ctx");
    EXPECT_NULL_AFTER(text, gpuopt_cache_import(NULL, "", 0, 0, &text), GPUOPT_ERR_INVALID_ARGUMENT,
                      "ctx");
    fixture *f = *state;
    EXPECT_NULL_AFTER(text, gpuopt_cache_import(f->ctx, NULL, 0, 0, &text),
                      GPUOPT_ERR_INVALID_ARGUMENT, "text");
    EXPECT_NULL_AFTER(text, gpuopt_cache_import(f->ctx, "", 0, 0x10u, &text),
                      GPUOPT_ERR_INVALID_ARGUMENT, "flags");
    /* An empty text has no end line: cut short, nothing imported. */
    EXPECT_NULL_AFTER(text, gpuopt_cache_import(f->ctx, "", 0, 0, &text),
                      GPUOPT_ERR_INVALID_ARGUMENT, "cut short");
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
