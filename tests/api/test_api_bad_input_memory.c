/* Live memory and the memory manager, called through the public API with
 * NULL, out-of-range and malformed input: each is refused with a status
 * and words that name what is wrong, its outputs cleared (a struct whose
 * struct_size is the error is left as it was), and nothing crashes. */
#include <stdlib.h>

#include "api_check.h"

typedef struct fixture {
    gpuopt_context *ctx;
    gpuopt_device *dev;
    gpuopt_plan *plan;
    gpuopt_memory *mem;
} fixture;

static int setup(void **state)
{
    static fixture f;
    f.ctx = api_cpu_context();
    if (gpuopt_device_select(f.ctx, "cpu", &f.dev) != GPUOPT_OK ||
        gpuopt_plan_create(f.ctx, f.dev, 1, &f.plan) != GPUOPT_OK ||
        gpuopt_memory_create(f.plan, &f.mem) != GPUOPT_OK)
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    gpuopt_memory_destroy(f->mem);
    gpuopt_plan_destroy(f->plan);
    gpuopt_context_destroy(f->ctx);
    return 0;
}

static void size_queries_match_the_header(void **state)
{
    (void)state;
    assert_int_equal(gpuopt_memory_info_size(), sizeof(gpuopt_memory_info));
    assert_int_equal(gpuopt_memory_stats_size(), sizeof(gpuopt_memory_stats));
    assert_int_equal(gpuopt_memory_advice_size(), sizeof(gpuopt_memory_advice));
}

static void device_memory_rejects_null_and_a_bad_struct_size(void **state)
{
    fixture *f = *state;
    gpuopt_memory_info m;
    memset(&m, 0x7f, sizeof m);
    m.struct_size = sizeof m;
    EXPECT_STATUS(gpuopt_device_memory(NULL, &m), GPUOPT_ERR_INVALID_ARGUMENT, "device");
    assert_int_equal(m.total_bytes, 0);
    assert_int_equal(m.source_text[0], '\0');
    EXPECT_STATUS(gpuopt_device_memory(f->dev, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "info");
    memset(&m, 0x7f, sizeof m);
    m.struct_size = 8;
    EXPECT_STATUS(gpuopt_device_memory(f->dev, &m), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    assert_int_equal(m.total_bytes, 0x7f7f7f7f7f7f7f7full); /* left as it was */
    m.struct_size = sizeof m;
    EXPECT_OK(gpuopt_device_memory(f->dev, &m));
    assert_int_equal(m.source, GPUOPT_MEMORY_SOURCE_HOST);
    assert_true(m.free_bytes > 0 && m.free_bytes <= m.total_bytes);
}

static void create_rejects_null_plan_and_out_and_destroy_accepts_null(void **state)
{
    fixture *f = *state;
    gpuopt_memory *m = (gpuopt_memory *)1;
    EXPECT_STATUS(gpuopt_memory_create(NULL, &m), GPUOPT_ERR_INVALID_ARGUMENT, "plan");
    assert_null(m);
    EXPECT_STATUS(gpuopt_memory_create(f->plan, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "out");
    gpuopt_memory_destroy(NULL);
}

static void settings_reject_null_and_values_outside_their_range(void **state)
{
    static const int32_t bad[] = {INT32_MIN, -1, 0, 101, INT32_MAX};
    fixture *f = *state;
    char num[32];
    EXPECT_STATUS(gpuopt_memory_set_budget(NULL, 1), GPUOPT_ERR_INVALID_ARGUMENT, "mem");
    EXPECT_STATUS(gpuopt_memory_set_budget(f->mem, UINT64_MAX), GPUOPT_ERR_OUT_OF_RANGE, "budget");
    EXPECT_STATUS(gpuopt_memory_set_threshold(NULL, 90), GPUOPT_ERR_INVALID_ARGUMENT, "mem");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_STATUS(gpuopt_memory_set_threshold(f->mem, bad[i]), GPUOPT_ERR_OUT_OF_RANGE,
                      api_itoa(bad[i], num, sizeof num));
    EXPECT_OK(gpuopt_memory_set_threshold(f->mem, 1));
    EXPECT_OK(gpuopt_memory_set_threshold(f->mem, 100));
    EXPECT_OK(gpuopt_memory_set_threshold(f->mem, 90));
}

static void register_rejects_null_malformed_names_places_and_sizes(void **state)
{
    static const int32_t places[] = {INT32_MIN, -1, 3, INT32_MAX};
    fixture *f = *state;
    char long_name[200], num[32];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    EXPECT_STATUS(gpuopt_memory_register(NULL, "a", GPUOPT_PLACE_DEVICE, 1),
                  GPUOPT_ERR_INVALID_ARGUMENT, "mem");
    EXPECT_STATUS(gpuopt_memory_register(f->mem, NULL, GPUOPT_PLACE_DEVICE, 1),
                  GPUOPT_ERR_INVALID_ARGUMENT, "name");
    EXPECT_STATUS(gpuopt_memory_register(f->mem, "", GPUOPT_PLACE_DEVICE, 1),
                  GPUOPT_ERR_INVALID_ARGUMENT, "1 to 127");
    EXPECT_STATUS(gpuopt_memory_register(f->mem, long_name, GPUOPT_PLACE_DEVICE, 1),
                  GPUOPT_ERR_INVALID_ARGUMENT, "199 characters");
    for (size_t i = 0; i < sizeof places / sizeof places[0]; i++)
        EXPECT_STATUS(gpuopt_memory_register(f->mem, "a", places[i], 1), GPUOPT_ERR_OUT_OF_RANGE,
                      api_itoa(places[i], num, sizeof num));
    EXPECT_STATUS(gpuopt_memory_register(f->mem, "a", GPUOPT_PLACE_HOST, 0),
                  GPUOPT_ERR_OUT_OF_RANGE, "0 bytes");
    EXPECT_STATUS(gpuopt_memory_register(f->mem, "a", GPUOPT_PLACE_HOST, 1ull << 63),
                  GPUOPT_ERR_OUT_OF_RANGE, "2^63");
    EXPECT_OK(gpuopt_memory_register(f->mem, "a", GPUOPT_PLACE_HOST, 1));
    EXPECT_STATUS(gpuopt_memory_register(f->mem, "a", GPUOPT_PLACE_DEVICE, 1),
                  GPUOPT_ERR_INVALID_ARGUMENT, "already registered");
    EXPECT_STATUS(gpuopt_memory_release(NULL, "a"), GPUOPT_ERR_INVALID_ARGUMENT, "mem");
    EXPECT_STATUS(gpuopt_memory_release(f->mem, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "name");
    EXPECT_OK(gpuopt_memory_release(f->mem, "a"));
    EXPECT_STATUS(gpuopt_memory_release(f->mem, "a"), GPUOPT_ERR_NOT_FOUND, "\"a\"");
}

static void readers_reject_null_and_clear_their_outputs(void **state)
{
    fixture *f = *state;
    gpuopt_memory_stats s;
    memset(&s, 0x7f, sizeof s);
    s.struct_size = sizeof s;
    EXPECT_STATUS(gpuopt_memory_get_stats(NULL, &s), GPUOPT_ERR_INVALID_ARGUMENT, "mem");
    assert_int_equal(s.budget_bytes, 0);
    EXPECT_STATUS(gpuopt_memory_get_stats(f->mem, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "stats");
    memset(&s, 0x7f, sizeof s);
    s.struct_size = 0;
    EXPECT_STATUS(gpuopt_memory_get_stats(f->mem, &s), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    assert_int_equal(s.budget_bytes, 0x7f7f7f7f7f7f7f7full);

    char *text = (char *)1;
    EXPECT_STATUS(gpuopt_memory_to_json(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "mem");
    assert_null(text);
    EXPECT_STATUS(gpuopt_memory_to_json(f->mem, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "json");
    text = (char *)1;
    EXPECT_STATUS(gpuopt_memory_check(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "mem");
    assert_null(text);
    EXPECT_STATUS(gpuopt_memory_check(f->mem, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "warning");
}

static void recommend_rejects_null_nothing_to_size_and_huge_sizes(void **state)
{
    fixture *f = *state;
    gpuopt_memory_advice a;
    memset(&a, 0x7f, sizeof a);
    a.struct_size = sizeof a;
    EXPECT_STATUS(gpuopt_memory_recommend(NULL, 1, 1, &a), GPUOPT_ERR_INVALID_ARGUMENT, "mem");
    assert_int_equal(a.max_batch, 0);
    EXPECT_STATUS(gpuopt_memory_recommend(f->mem, 1, 1, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "advice");
    EXPECT_STATUS(gpuopt_memory_recommend(f->mem, 0, 0, &a), GPUOPT_ERR_INVALID_ARGUMENT,
                  "nothing to size");
    EXPECT_STATUS(gpuopt_memory_recommend(f->mem, 1ull << 63, 0, &a), GPUOPT_ERR_OUT_OF_RANGE,
                  "2^63");
    EXPECT_STATUS(gpuopt_memory_recommend(f->mem, 0, UINT64_MAX, &a), GPUOPT_ERR_OUT_OF_RANGE,
                  "2^63");
    memset(&a, 0x7f, sizeof a);
    a.struct_size = 4;
    EXPECT_STATUS(gpuopt_memory_recommend(f->mem, 1, 1, &a), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    assert_int_equal(a.max_batch, 0x7f7f7f7f7f7f7f7fll);
    a.struct_size = sizeof a;
    EXPECT_OK(gpuopt_memory_recommend(f->mem, 0, 1 << 20, &a));
    assert_true(a.max_batch > 0);
    assert_int_equal(a.quantize_bits, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(size_queries_match_the_header),
        cmocka_unit_test(device_memory_rejects_null_and_a_bad_struct_size),
        cmocka_unit_test(create_rejects_null_plan_and_out_and_destroy_accepts_null),
        cmocka_unit_test(settings_reject_null_and_values_outside_their_range),
        cmocka_unit_test(register_rejects_null_malformed_names_places_and_sizes),
        cmocka_unit_test(readers_reject_null_and_clear_their_outputs),
        cmocka_unit_test(recommend_rejects_null_nothing_to_size_and_huge_sizes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
