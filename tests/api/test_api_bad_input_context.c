/* Versions, status names, the per-thread detail, contexts, options, logging
 * and backends, called through the public API with NULL, out-of-range and
 * malformed input. */
#include <pthread.h>

#include "api_check.h"

static void version_string_and_api_version_match_the_header(void **state)
{
    (void)state;
    assert_string_equal(gpuopt_version(), GPUOPT_VERSION_STRING);
    assert_true(gpuopt_api_version() >= GPUOPT_API_VERSION);
}

/* Values are pinned forever: a program built today keeps comparing the
 * same numbers. */
static const struct {
    gpuopt_status status;
    int value;
    const char *name;
} statuses[] = {
    {GPUOPT_OK, 0, "GPUOPT_OK"},
    {GPUOPT_ERR_INVALID_ARGUMENT, 100, "GPUOPT_ERR_INVALID_ARGUMENT"},
    {GPUOPT_ERR_OUT_OF_RANGE, 101, "GPUOPT_ERR_OUT_OF_RANGE"},
    {GPUOPT_ERR_STRUCT_SIZE, 102, "GPUOPT_ERR_STRUCT_SIZE"},
    {GPUOPT_ERR_NOT_FOUND, 103, "GPUOPT_ERR_NOT_FOUND"},
    {GPUOPT_ERR_CONFIG, 104, "GPUOPT_ERR_CONFIG"},
    {GPUOPT_ERR_NESTING, 105, "GPUOPT_ERR_NESTING"},
    {GPUOPT_ERR_NO_MEMORY, 200, "GPUOPT_ERR_NO_MEMORY"},
    {GPUOPT_ERR_IO, 201, "GPUOPT_ERR_IO"},
    {GPUOPT_ERR_FORKED, 202, "GPUOPT_ERR_FORKED"},
    {GPUOPT_ERR_NO_DEVICE, 300, "GPUOPT_ERR_NO_DEVICE"},
    {GPUOPT_ERR_UNAVAILABLE, 301, "GPUOPT_ERR_UNAVAILABLE"},
    {GPUOPT_ERR_UNSUPPORTED, 302, "GPUOPT_ERR_UNSUPPORTED"},
    {GPUOPT_ERR_DRIVER, 303, "GPUOPT_ERR_DRIVER"},
    {GPUOPT_ERR_DISABLED, 304, "GPUOPT_ERR_DISABLED"},
    {GPUOPT_ERR_BUILD, 400, "GPUOPT_ERR_BUILD"},
    {GPUOPT_ERR_LAUNCH, 401, "GPUOPT_ERR_LAUNCH"},
    {GPUOPT_ERR_TIMEOUT, 402, "GPUOPT_ERR_TIMEOUT"},
    {GPUOPT_ERR_FAULT, 403, "GPUOPT_ERR_FAULT"},
};
#define N_STATUSES (sizeof statuses / sizeof statuses[0])

static void every_status_has_its_pinned_value_name_and_own_description(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_STATUSES; i++) {
        assert_int_equal((int)statuses[i].status, statuses[i].value);
        assert_string_equal(gpuopt_status_name(statuses[i].status), statuses[i].name);
        const char *text = gpuopt_strerror(statuses[i].status);
        assert_non_null(text);
        assert_true(text[0] != '\0');
        assert_string_not_equal(text, "unknown status");
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(text, gpuopt_strerror(statuses[j].status));
    }
}

/* The header's X-macro, expanded as a program would, is the pinned list
 * above: same names, values and descriptions, none missing, none added
 * without being pinned here. */
static void status_map_expands_to_the_pinned_statuses_and_their_descriptions(void **state)
{
    static const struct {
        gpuopt_status status;
        int value;
        const char *name, *text;
    } map[] = {
#define ROW(name, value, text) {name, value, #name, text},
        GPUOPT_STATUS_MAP(ROW)
#undef ROW
    };
    (void)state;
    assert_int_equal(sizeof map / sizeof map[0], N_STATUSES);
    for (size_t i = 0; i < N_STATUSES; i++) {
        assert_int_equal((int)map[i].status, map[i].value);
        assert_int_equal(map[i].value, statuses[i].value);
        assert_string_equal(map[i].name, statuses[i].name);
        assert_string_equal(gpuopt_strerror(map[i].status), map[i].text);
    }
    /* The enum's last member pins its width; it is no status. */
    assert_int_equal(sizeof(gpuopt_status), 4);
    assert_string_equal(gpuopt_status_name(GPUOPT_STATUS_MAX_ENUM), "GPUOPT_UNKNOWN_STATUS");
}

static void unknown_status_values_get_the_fallback_name_and_description(void **state)
{
    static const int unknown[] = {INT32_MIN, -1,  1,   99,  106, 199,
                                  203,       299, 305, 404, 999, INT32_MAX};
    (void)state;
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        assert_string_equal(gpuopt_status_name((gpuopt_status)unknown[i]), "GPUOPT_UNKNOWN_STATUS");
        assert_string_equal(gpuopt_strerror((gpuopt_status)unknown[i]), "unknown status");
    }
}

static void free_and_destroy_accept_null(void **state)
{
    (void)state;
    gpuopt_free(NULL);
    gpuopt_context_destroy(NULL);
    gpuopt_plan_destroy(NULL);
}

static void struct_size_queries_match_this_header(void **state)
{
    (void)state;
    assert_int_equal(gpuopt_options_size(), sizeof(gpuopt_options));
    assert_int_equal(gpuopt_backend_info_size(), sizeof(gpuopt_backend_info));
    assert_int_equal(gpuopt_device_info_size(), sizeof(gpuopt_device_info));
    assert_int_equal(gpuopt_knob_size(), sizeof(gpuopt_knob));
}

static void *fail_on_another_thread(void *arg)
{
    char *seen = arg;
    /* Nothing failed on this thread yet. */
    snprintf(seen, 256, "%s", gpuopt_last_error());
    gpuopt_context_create(NULL, NULL);
    return NULL;
}

static void last_error_is_per_thread(void **state)
{
    char seen[256] = "unset";
    pthread_t t;
    (void)state;
    gpuopt_context *ctx = api_cpu_context();
    gpuopt_device *dev = NULL;
    EXPECT_STATUS(gpuopt_device_select(ctx, "cpu:x", &dev), GPUOPT_ERR_INVALID_ARGUMENT, "cpu:x");
    char mine[512];
    snprintf(mine, sizeof mine, "%s", gpuopt_last_error());

    assert_int_equal(pthread_create(&t, NULL, fail_on_another_thread, seen), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_string_equal(seen, "");
    /* The other thread's failure left this thread's detail alone. */
    assert_string_equal(gpuopt_last_error(), mine);
    gpuopt_context_destroy(ctx);
}

static void context_create_rejects_null_out(void **state)
{
    gpuopt_options opt;
    (void)state;
    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    EXPECT_STATUS(gpuopt_context_create(NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "out");
    EXPECT_STATUS(gpuopt_context_create(&opt, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "out");
}

static void context_create_rejects_options_struct_size_below_the_first_layout(void **state)
{
    static const size_t sizes[] = {0, 1, sizeof(size_t), sizeof(gpuopt_options) - 1};
    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gpuopt_options opt;
        gpuopt_context *ctx = (gpuopt_context *)&opt; /* must come back NULL */
        memset(&opt, 0, sizeof opt);
        opt.struct_size = sizes[i];
        EXPECT_STATUS(gpuopt_context_create(&opt, &ctx), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
        assert_null(ctx);
    }
}

static void context_create_accepts_options_from_a_newer_header(void **state)
{
    /* A program built against a later header passes a larger struct; the
     * library reads the fields it knows. */
    struct {
        gpuopt_options opt;
        unsigned char newer_fields[64];
    } big;
    gpuopt_context *ctx = NULL;
    (void)state;
    memset(&big, 0, sizeof big);
    big.opt.struct_size = sizeof big;
    big.opt.backends = "cpu";
    big.opt.config_path = "";
    EXPECT_OK(gpuopt_context_create(&big.opt, &ctx));
    assert_non_null(ctx);
    gpuopt_context_destroy(ctx);
}

/* Each field of gpuopt_options with a value it does not accept; the detail
 * names the field (or its environment variable) and the value. */
static void context_create_rejects_malformed_option_values(void **state)
{
    static const struct {
        const char *field; /* what the detail must name */
        size_t offset;
        const char *value;
    } cases[] = {
        {"level", offsetof(gpuopt_options, level), "7"},
        {"level", offsetof(gpuopt_options, level), "abc"},
        {"level", offsetof(gpuopt_options, level), "-1"},
        {"level", offsetof(gpuopt_options, level), "1x"},
        {"log", offsetof(gpuopt_options, log_level), "loud"},
        {"log", offsetof(gpuopt_options, log_level), "5"},
        {"backend", offsetof(gpuopt_options, backends), "warpdrive"},
        {"backend", offsetof(gpuopt_options, backends), "cpu,warpdrive"},
        {"device", offsetof(gpuopt_options, device), "cpu:x"},
        {"device", offsetof(gpuopt_options, device), "cpu:-1"},
        {"precision", offsetof(gpuopt_options, reduced_precision), "maybe"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpuopt_options opt;
        gpuopt_context *ctx = (gpuopt_context *)&opt;
        memset(&opt, 0, sizeof opt);
        opt.struct_size = sizeof opt;
        opt.config_path = "";
        memcpy((char *)&opt + cases[i].offset, &cases[i].value, sizeof(const char *));
        print_message("options.%s = \"%s\"\n", cases[i].field, cases[i].value);
        EXPECT_STATUS(gpuopt_context_create(&opt, &ctx), GPUOPT_ERR_CONFIG, cases[i].value);
        EXPECT_DETAIL_NAMES(cases[i].field);
        assert_null(ctx);
    }
}

static void set_log_rejects_null_context_and_levels_outside_off_to_debug(void **state)
{
    static const int32_t bad[] = {API_INT32_EDGES, GPUOPT_LOG_DEBUG + 1};
    char num[32];
    (void)state;
    gpuopt_context *ctx = api_cpu_context();
    EXPECT_STATUS(gpuopt_context_set_log(NULL, GPUOPT_LOG_WARN, NULL, NULL),
                  GPUOPT_ERR_INVALID_ARGUMENT, "ctx|context");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_STATUS(gpuopt_context_set_log(ctx, bad[i], NULL, NULL), GPUOPT_ERR_OUT_OF_RANGE,
                      api_itoa(bad[i], num, sizeof num));
    EXPECT_OK(gpuopt_context_set_log(ctx, GPUOPT_LOG_OFF, NULL, NULL));
    EXPECT_OK(gpuopt_context_set_log(ctx, GPUOPT_LOG_DEBUG, NULL, NULL));
    gpuopt_context_destroy(ctx);
}

static void backend_count_and_at_reject_null_and_out_of_range(void **state)
{
    int32_t count = -7;
    char num[32];
    gpuopt_backend_info info;
    (void)state;
    gpuopt_context *ctx = api_cpu_context();
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;

    EXPECT_STATUS(gpuopt_backend_count(NULL, &count), GPUOPT_ERR_INVALID_ARGUMENT, "ctx|context");
    EXPECT_STATUS(gpuopt_backend_count(ctx, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "count");
    EXPECT_OK(gpuopt_backend_count(ctx, &count));
    assert_true(count >= 1);

    EXPECT_STATUS(gpuopt_backend_at(NULL, 0, &info), GPUOPT_ERR_INVALID_ARGUMENT, "ctx|context");
    EXPECT_STATUS(gpuopt_backend_at(ctx, 0, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "info");
    const int32_t bad[] = {API_INT32_EDGES, count, count + 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_STATUS(gpuopt_backend_at(ctx, bad[i], &info), GPUOPT_ERR_OUT_OF_RANGE,
                      api_itoa(bad[i], num, sizeof num));
    gpuopt_context_destroy(ctx);
}

static void backend_at_rejects_struct_size_below_the_first_layout(void **state)
{
    static const size_t sizes[] = {0, 1, sizeof(gpuopt_backend_info) - 1};
    (void)state;
    gpuopt_context *ctx = api_cpu_context();
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gpuopt_backend_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizes[i];
        EXPECT_STATUS(gpuopt_backend_at(ctx, 0, &info), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    }
    gpuopt_context_destroy(ctx);
}

static void backends_excluded_by_options_report_disabled_and_cpu_available(void **state)
{
    int32_t count = 0, seen_cpu = 0;
    (void)state;
    gpuopt_context *ctx = api_cpu_context();
    EXPECT_OK(gpuopt_backend_count(ctx, &count));
    for (int32_t i = 0; i < count; i++) {
        /* A larger struct (newer header): the library writes only what it
         * knows, the tail keeps its bytes. */
        struct {
            gpuopt_backend_info info;
            unsigned char tail[32];
        } big;
        memset(&big, 0xA5, sizeof big);
        big.info.struct_size = sizeof big;
        EXPECT_OK(gpuopt_backend_at(ctx, i, &big.info));
        for (size_t j = 0; j < sizeof big.tail; j++)
            assert_int_equal(big.tail[j], 0xA5);
        /* Strings point into the context; none is NULL. */
        assert_non_null(big.info.name);
        assert_non_null(big.info.reason);
        assert_non_null(big.info.library);
        assert_non_null(big.info.driver_version);
        assert_non_null(big.info.runtime_version);
        if (strcmp(big.info.name, "cpu") == 0) {
            seen_cpu = 1;
            assert_int_equal(big.info.status, GPUOPT_BACKEND_AVAILABLE);
            assert_true(big.info.device_count >= 1);
        } else {
            assert_int_equal(big.info.status, GPUOPT_BACKEND_DISABLED);
        }
    }
    assert_true(seen_cpu);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_string_and_api_version_match_the_header),
        cmocka_unit_test(every_status_has_its_pinned_value_name_and_own_description),
        cmocka_unit_test(status_map_expands_to_the_pinned_statuses_and_their_descriptions),
        cmocka_unit_test(unknown_status_values_get_the_fallback_name_and_description),
        cmocka_unit_test(free_and_destroy_accept_null),
        cmocka_unit_test(struct_size_queries_match_this_header),
        cmocka_unit_test(last_error_is_per_thread),
        cmocka_unit_test(context_create_rejects_null_out),
        cmocka_unit_test(context_create_rejects_options_struct_size_below_the_first_layout),
        cmocka_unit_test(context_create_accepts_options_from_a_newer_header),
        cmocka_unit_test(context_create_rejects_malformed_option_values),
        cmocka_unit_test(set_log_rejects_null_context_and_levels_outside_off_to_debug),
        cmocka_unit_test(backend_count_and_at_reject_null_and_out_of_range),
        cmocka_unit_test(backend_at_rejects_struct_size_below_the_first_layout),
        cmocka_unit_test(backends_excluded_by_options_report_disabled_and_cpu_available),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
