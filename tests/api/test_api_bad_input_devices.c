/* Device enumeration, device records, selection policies and the device
 * JSON, called through the public API with NULL, out-of-range and
 * malformed input. */
#include "api_check.h"

static int setup(void **state)
{
    *state = api_cpu_context();
    return 0;
}

static int teardown(void **state)
{
    gpuopt_context_destroy(*state);
    return 0;
}

static void device_count_rejects_null(void **state)
{
    int32_t count = 0;
    EXPECT_STATUS(gpuopt_device_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT, "ctx|context");
    EXPECT_STATUS(gpuopt_device_count(*state, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "count");
    EXPECT_OK(gpuopt_device_count(*state, &count));
    assert_true(count >= 1);
}

static void device_at_rejects_null_and_indices_outside_the_list(void **state)
{
    gpuopt_context *ctx = *state;
    gpuopt_device *dev = NULL;
    int32_t count = 0;
    char num[32];
    EXPECT_OK(gpuopt_device_count(ctx, &count));
    EXPECT_STATUS(gpuopt_device_at(NULL, 0, &dev), GPUOPT_ERR_INVALID_ARGUMENT, "ctx|context");
    EXPECT_STATUS(gpuopt_device_at(ctx, 0, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "device|out");
    const int32_t bad[] = {API_INT32_EDGES, count, count + 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_STATUS(gpuopt_device_at(ctx, bad[i], &dev), GPUOPT_ERR_OUT_OF_RANGE,
                      api_itoa(bad[i], num, sizeof num));
    EXPECT_OK(gpuopt_device_at(ctx, count - 1, &dev));
    assert_non_null(dev);
}

static void device_get_info_rejects_null_and_small_struct_size(void **state)
{
    static const size_t sizes[] = {0, 1, sizeof(size_t), sizeof(gpuopt_device_info) - 1};
    gpuopt_device *dev = NULL;
    gpuopt_device_info info;
    EXPECT_OK(gpuopt_device_at(*state, 0, &dev));
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    EXPECT_STATUS(gpuopt_device_get_info(NULL, &info), GPUOPT_ERR_INVALID_ARGUMENT, "device");
    EXPECT_STATUS(gpuopt_device_get_info(dev, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "info");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        info.struct_size = sizes[i];
        EXPECT_STATUS(gpuopt_device_get_info(dev, &info), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    }
}

static void device_get_info_writes_no_more_than_it_knows(void **state)
{
    struct {
        gpuopt_device_info info;
        unsigned char tail[64];
    } big;
    gpuopt_device *dev = NULL;
    EXPECT_OK(gpuopt_device_select(*state, "cpu", &dev));
    memset(&big, 0xA5, sizeof big);
    big.info.struct_size = sizeof big;
    EXPECT_OK(gpuopt_device_get_info(dev, &big.info));
    for (size_t i = 0; i < sizeof big.tail; i++)
        assert_int_equal(big.tail[i], 0xA5);
    assert_string_equal(big.info.id, "cpu:0");
    assert_string_equal(big.info.backend, "cpu");
    assert_int_equal(big.info.type, GPUOPT_DEVICE_TYPE_CPU);
    /* Every string field is terminated inside its array. */
    assert_non_null(memchr(big.info.name, '\0', sizeof big.info.name));
    assert_non_null(memchr(big.info.routes, '\0', sizeof big.info.routes));
    assert_non_null(memchr(big.info.uuid, '\0', sizeof big.info.uuid));
    /* Only known feature bits are claimed. */
    assert_int_equal(big.info.features & ~big.info.features_known, 0);
}

static void device_select_rejects_null_context_and_out(void **state)
{
    gpuopt_device *dev = NULL;
    EXPECT_STATUS(gpuopt_device_select(NULL, "cpu", &dev), GPUOPT_ERR_INVALID_ARGUMENT,
                  "ctx|context");
    EXPECT_STATUS(gpuopt_device_select(*state, "cpu", NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "device|out");
}

/* Not a policy of any documented form: the detail repeats it and says what
 * is accepted. */
static void device_select_rejects_malformed_policies(void **state)
{
    static const char *const policies[] = {
        "",
        "cpu:",
        "cpu:x",
        "cpu:-1",
        ":0",
        "cpu:0:0",
        "cpu:1.5",
        "cpu:0x1",
        "warp drive",
        "0000:zz:00.0",
        "cpu:99999999999999999999",
    };
    gpuopt_device *dev = NULL;
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        print_message("policy \"%s\"\n", policies[i]);
        EXPECT_STATUS(gpuopt_device_select(*state, policies[i], &dev), GPUOPT_ERR_INVALID_ARGUMENT,
                      policies[i][0] ? policies[i] : NULL);
    }
}

static void device_select_rejects_a_policy_longer_than_any_id(void **state)
{
    char policy[4097];
    gpuopt_device *dev = NULL;
    memset(policy, 'a', sizeof policy - 1);
    policy[sizeof policy - 1] = '\0';
    EXPECT_STATUS(gpuopt_device_select(*state, policy, &dev), GPUOPT_ERR_INVALID_ARGUMENT, NULL);
}

/* Well formed, but nothing here matches: GPUOPT_ERR_NO_DEVICE, and the
 * detail names the policy. */
static void device_select_reports_no_device_for_well_formed_policies_matching_nothing(void **state)
{
    static const char *const policies[] = {
        "cpu:7",
        "cpu:2147483647",
        "gpu",
        "ffff:ff:1f.7",
        "GPU-00000000-0000-0000-0000-000000000000",
    };
    gpuopt_device *dev = NULL;
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        print_message("policy \"%s\"\n", policies[i]);
        EXPECT_STATUS(gpuopt_device_select(*state, policies[i], &dev), GPUOPT_ERR_NO_DEVICE,
                      policies[i]);
    }
}

static void device_select_accepts_the_documented_cpu_policies(void **state)
{
    static const char *const policies[] = {NULL, "auto", "cpu", "cpu:0"};
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        gpuopt_device *dev = NULL;
        gpuopt_device_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        EXPECT_OK(gpuopt_device_select(*state, policies[i], &dev));
        EXPECT_OK(gpuopt_device_get_info(dev, &info));
        assert_string_equal(info.id, "cpu:0");
    }
}

static void context_to_json_rejects_null(void **state)
{
    char *json = NULL;
    EXPECT_STATUS(gpuopt_context_to_json(NULL, &json), GPUOPT_ERR_INVALID_ARGUMENT, "ctx|context");
    EXPECT_STATUS(gpuopt_context_to_json(*state, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "json");
    EXPECT_OK(gpuopt_context_to_json(*state, &json));
    assert_non_null(json);
    assert_int_equal(json[0], '{');
    assert_non_null(strstr(json, "\"cpu:0\""));
    gpuopt_free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_count_rejects_null),
        cmocka_unit_test(device_at_rejects_null_and_indices_outside_the_list),
        cmocka_unit_test(device_get_info_rejects_null_and_small_struct_size),
        cmocka_unit_test(device_get_info_writes_no_more_than_it_knows),
        cmocka_unit_test(device_select_rejects_null_context_and_out),
        cmocka_unit_test(device_select_rejects_malformed_policies),
        cmocka_unit_test(device_select_rejects_a_policy_longer_than_any_id),
        cmocka_unit_test(device_select_reports_no_device_for_well_formed_policies_matching_nothing),
        cmocka_unit_test(device_select_accepts_the_documented_cpu_policies),
        cmocka_unit_test(context_to_json_rejects_null),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
