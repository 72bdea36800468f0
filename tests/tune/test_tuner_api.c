/* Every public tuner and result function with NULL, out-of-range and
 * malformed input, through the shared library and gpuopt.h alone. */
#include <math.h>
#include <stdlib.h>

#include "api/api_check.h"

typedef struct fixture {
    gpuopt_context *ctx;
    gpuopt_space *space; /* X in {1, 2, 3}, size N */
    gpuopt_tuner *tuner; /* no subject yet */
    gpuopt_result *result;
} fixture;

static gpuopt_status cb_run(const gpuopt_point *c, void *user, double *ns)
{
    (void)user;
    int64_t x = 0;
    gpuopt_point_get_int(c, "X", &x);
    *ns = 100.0 * (double)x;
    return GPUOPT_OK;
}

static int setup(void **state)
{
    static fixture f;
    static const int64_t x[] = {1, 2, 3};
    memset(&f, 0, sizeof f);
    f.ctx = api_cpu_context();
    if (gpuopt_space_create(&f.space) || gpuopt_space_add_int(f.space, "X", x, 3) ||
        gpuopt_space_set_size(f.space, "N", 64) ||
        gpuopt_tuner_create(f.ctx, NULL, f.space, &f.tuner))
        return -1;
    /* A result to read: a callback tuned once. */
    gpuopt_tuner *t = NULL;
    if (gpuopt_tuner_create(f.ctx, NULL, f.space, &t) ||
        gpuopt_tuner_set_callback(t, cb_run, NULL, NULL, NULL) ||
        gpuopt_tuner_set_cache_mode(t, GPUOPT_CACHE_OFF) ||
        gpuopt_tuner_set_timing(t, 0, 0.01, 1, 3) || gpuopt_tuner_run(t, &f.result))
        return -1;
    gpuopt_tuner_destroy(t);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    gpuopt_result_destroy(f->result);
    gpuopt_tuner_destroy(f->tuner);
    gpuopt_space_destroy(f->space);
    gpuopt_context_destroy(f->ctx);
    return 0;
}

static void create_and_destroy_refuse_null_and_foreign_devices(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = (gpuopt_tuner *)f;
    EXPECT_STATUS(gpuopt_tuner_create(NULL, NULL, f->space, &t), GPUOPT_ERR_INVALID_ARGUMENT,
                  "ctx");
    assert_null(t);
    EXPECT_STATUS(gpuopt_tuner_create(f->ctx, NULL, NULL, &t), GPUOPT_ERR_INVALID_ARGUMENT,
                  "space");
    EXPECT_STATUS(gpuopt_tuner_create(f->ctx, NULL, f->space, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "out");
    gpuopt_context *other = api_cpu_context();
    gpuopt_device *dev = NULL;
    EXPECT_OK(gpuopt_device_select(other, "cpu", &dev));
    EXPECT_STATUS(gpuopt_tuner_create(f->ctx, dev, f->space, &t), GPUOPT_ERR_INVALID_ARGUMENT,
                  "another context");
    gpuopt_context_destroy(other);
    gpuopt_tuner_destroy(NULL);
    gpuopt_result_destroy(NULL);
    assert_int_equal(gpuopt_candidate_size(), sizeof(gpuopt_candidate));
}

/* Every setter with a NULL tuner. */
static void every_setter_refuses_a_null_tuner(void **state)
{
    (void)state;
    static const char *const g[3] = {"N", NULL, NULL};
    const gpuopt_status E = GPUOPT_ERR_INVALID_ARGUMENT;
    EXPECT_STATUS(gpuopt_tuner_set_size(NULL, "N", 1), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_kernel(NULL, "x", "k", 1, NULL), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_geometry(NULL, g, NULL), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_local_memory(NULL, "1"), E, "tuner");
    EXPECT_STATUS(
        gpuopt_tuner_add_buffer(NULL, 0, GPUOPT_ELEM_F32, "N", GPUOPT_INIT_ZEROS, 0, NULL, 0), E,
        "tuner");
    EXPECT_STATUS(gpuopt_tuner_add_scalar(NULL, 0, GPUOPT_ELEM_I32, "N"), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_add_scalar_f64(NULL, 0, GPUOPT_ELEM_F32, 1), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(NULL, "x", "k", NULL, g, NULL), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_reference_data(NULL, 0, "x", 1), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_tolerance(NULL, 0, 0), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_callback(NULL, cb_run, NULL, NULL, NULL), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_strategy(NULL, 0), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_budget(NULL, 0, 0, 0), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_seed(NULL, 1), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_timing(NULL, 1, 1, 1, 1), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_timeout(NULL, 1), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_workload_key(NULL, "k"), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_cache_mode(NULL, 0), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_progress(NULL, NULL, NULL), E, "tuner");
    gpuopt_result *r = (gpuopt_result *)state;
    EXPECT_STATUS(gpuopt_tuner_run(NULL, &r), E, "tuner");
    assert_null(r);
    EXPECT_STATUS(gpuopt_tune_step(NULL, NULL, NULL), E, "tuner");
}

static void set_size_and_kernel_check_names_sources_and_languages(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    EXPECT_STATUS(gpuopt_tuner_set_size(t, NULL, 1), GPUOPT_ERR_INVALID_ARGUMENT, "NULL");
    EXPECT_STATUS(gpuopt_tuner_set_size(t, "1N", 1), GPUOPT_ERR_INVALID_ARGUMENT, "1N");
    EXPECT_STATUS(gpuopt_tuner_set_size(t, "X", 1), GPUOPT_ERR_INVALID_ARGUMENT, "X");
    EXPECT_OK(gpuopt_tuner_set_size(t, "N", 128));
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, NULL, "k", 1, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "source");
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, "", "k", 1, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "empty");
    static const char *const entries[] = {"", "1k", "a b", "k-1"};
    for (size_t i = 0; i < 4; i++)
        EXPECT_STATUS(gpuopt_tuner_set_kernel(t, "x", entries[i], 1, NULL),
                      GPUOPT_ERR_INVALID_ARGUMENT, "identifier");
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, "x", NULL, 1, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "entry");
    static const int32_t langs[] = {INT32_MIN, -1, 0, 4, INT32_MAX};
    for (size_t i = 0; i < 5; i++)
        EXPECT_STATUS(gpuopt_tuner_set_kernel(t, "x", "k", langs[i], NULL), GPUOPT_ERR_OUT_OF_RANGE,
                      "language");
}

static void geometry_and_local_memory_parse_with_clear_errors(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    static const char *const ok[3] = {"N", "X", NULL}, *const l2[3] = {"X", "1", NULL};
    static const char *const none[3] = {NULL, NULL, NULL}, *const gap[3] = {"N", NULL, "1"};
    static const char *const bad[3] = {"N +", NULL, NULL}, *const unknown[3] = {"Q", NULL, NULL};
    static const char *const l1[3] = {"X", NULL, NULL};
    EXPECT_STATUS(gpuopt_tuner_set_geometry(t, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "global[0]");
    EXPECT_STATUS(gpuopt_tuner_set_geometry(t, none, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "global[0]");
    EXPECT_STATUS(gpuopt_tuner_set_geometry(t, gap, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "global[2]");
    EXPECT_STATUS(gpuopt_tuner_set_geometry(t, ok, l1), GPUOPT_ERR_INVALID_ARGUMENT, "local[1]");
    EXPECT_STATUS(gpuopt_tuner_set_geometry(t, bad, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "column");
    EXPECT_STATUS(gpuopt_tuner_set_geometry(t, unknown, NULL), GPUOPT_ERR_NOT_FOUND, "Q");
    EXPECT_OK(gpuopt_tuner_set_geometry(t, ok, l2));
    EXPECT_OK(gpuopt_tuner_set_geometry(t, ok, NULL));
    EXPECT_STATUS(gpuopt_tuner_set_local_memory(t, "X *"), GPUOPT_ERR_INVALID_ARGUMENT, "column");
    EXPECT_STATUS(gpuopt_tuner_set_local_memory(t, "LMEM"), GPUOPT_ERR_NOT_FOUND, "LMEM");
    EXPECT_OK(gpuopt_tuner_set_local_memory(t, "X * 1024"));
    EXPECT_OK(gpuopt_tuner_set_local_memory(t, NULL));
}

static void arguments_refuse_bad_indices_types_inits_and_data(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    float data[64] = {0};
    EXPECT_STATUS(
        gpuopt_tuner_add_buffer(t, 256, GPUOPT_ELEM_F32, "N", GPUOPT_INIT_ZEROS, 0, NULL, 0),
        GPUOPT_ERR_OUT_OF_RANGE, "256");
    EXPECT_STATUS(gpuopt_tuner_add_buffer(t, 0, 0, "N", GPUOPT_INIT_ZEROS, 0, NULL, 0),
                  GPUOPT_ERR_OUT_OF_RANGE, "type");
    EXPECT_STATUS(gpuopt_tuner_add_buffer(t, 0, 6, "N", GPUOPT_INIT_ZEROS, 0, NULL, 0),
                  GPUOPT_ERR_OUT_OF_RANGE, "type");
    EXPECT_STATUS(
        gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, NULL, GPUOPT_INIT_ZEROS, 0, NULL, 0),
        GPUOPT_ERR_INVALID_ARGUMENT, "count");
    EXPECT_STATUS(gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "N", 0, 0, NULL, 0),
                  GPUOPT_ERR_OUT_OF_RANGE, "init");
    EXPECT_STATUS(gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "N", 5, 0, NULL, 0),
                  GPUOPT_ERR_OUT_OF_RANGE, "init");
    EXPECT_STATUS(
        gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "N", GPUOPT_INIT_CONSTANT, NAN, NULL, 0),
        GPUOPT_ERR_INVALID_ARGUMENT, "finite");
    EXPECT_STATUS(gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "N", GPUOPT_INIT_DATA, 0, NULL, 0),
                  GPUOPT_ERR_INVALID_ARGUMENT, "data");
    EXPECT_STATUS(
        gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "N * X", GPUOPT_INIT_DATA, 0, data, 0),
        GPUOPT_ERR_INVALID_ARGUMENT, "parameter X");
    EXPECT_STATUS(
        gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "N - 1000", GPUOPT_INIT_DATA, 0, data, 0),
        GPUOPT_ERR_OUT_OF_RANGE, "count");
    EXPECT_STATUS(
        gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "N )", GPUOPT_INIT_ZEROS, 0, NULL, 0),
        GPUOPT_ERR_INVALID_ARGUMENT, "column");
    EXPECT_OK(gpuopt_tuner_set_size(t, "N", 64));
    EXPECT_OK(gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "N", GPUOPT_INIT_DATA, 0, data, 0));
    EXPECT_OK(gpuopt_tuner_add_buffer(t, 1, GPUOPT_ELEM_F32, "N", GPUOPT_INIT_ZEROS, 0, NULL, 1));
    EXPECT_STATUS(gpuopt_tuner_add_scalar(t, 2, GPUOPT_ELEM_I32, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "expression");
    EXPECT_STATUS(gpuopt_tuner_add_scalar(t, 2, 9, "N"), GPUOPT_ERR_OUT_OF_RANGE, "type");
    EXPECT_STATUS(gpuopt_tuner_add_scalar(t, 2, GPUOPT_ELEM_I32, "N /"),
                  GPUOPT_ERR_INVALID_ARGUMENT, "column");
    EXPECT_STATUS(gpuopt_tuner_add_scalar_f64(t, 2, GPUOPT_ELEM_I32, 1.5), GPUOPT_ERR_OUT_OF_RANGE,
                  "i32");
    EXPECT_STATUS(gpuopt_tuner_add_scalar_f64(t, 2, GPUOPT_ELEM_I32, 3e9), GPUOPT_ERR_OUT_OF_RANGE,
                  "i32");
    EXPECT_STATUS(gpuopt_tuner_add_scalar_f64(t, 2, GPUOPT_ELEM_U32, -1), GPUOPT_ERR_OUT_OF_RANGE,
                  "u32");
    EXPECT_STATUS(gpuopt_tuner_add_scalar_f64(t, 2, GPUOPT_ELEM_I64, NAN), GPUOPT_ERR_OUT_OF_RANGE,
                  "i64");
    EXPECT_STATUS(gpuopt_tuner_add_scalar_f64(t, 300, GPUOPT_ELEM_F32, 1), GPUOPT_ERR_OUT_OF_RANGE,
                  "300");
    EXPECT_OK(gpuopt_tuner_add_scalar_f64(t, 2, GPUOPT_ELEM_F32, 0.5));
    EXPECT_OK(gpuopt_tuner_add_scalar(t, 3, GPUOPT_ELEM_I32, "N"));
}

static void references_and_tolerances_are_checked(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    static const char *const g[3] = {"N", NULL, NULL}, *const gp[3] = {"N * X", NULL, NULL};
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, "x", "k", NULL, gp, NULL),
                  GPUOPT_ERR_INVALID_ARGUMENT, "parameter X");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, "", "k", NULL, g, NULL),
                  GPUOPT_ERR_INVALID_ARGUMENT, "empty");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, "x", "9", NULL, g, NULL),
                  GPUOPT_ERR_INVALID_ARGUMENT, "identifier");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, "x", "k", NULL, NULL, NULL),
                  GPUOPT_ERR_INVALID_ARGUMENT, "global[0]");
    EXPECT_OK(gpuopt_tuner_set_reference_kernel(t, "x", "k", NULL, g, NULL));
    EXPECT_OK(gpuopt_tuner_set_reference_kernel(t, NULL, NULL, NULL, NULL, NULL));
    float want[64] = {0};
    EXPECT_STATUS(gpuopt_tuner_set_reference_data(t, 7, want, sizeof want), GPUOPT_ERR_NOT_FOUND,
                  "argument 7");
    EXPECT_STATUS(gpuopt_tuner_set_reference_data(t, 2, want, sizeof want), GPUOPT_ERR_NOT_FOUND,
                  "not a buffer");
    EXPECT_STATUS(gpuopt_tuner_set_reference_data(t, 0, want, sizeof want),
                  GPUOPT_ERR_INVALID_ARGUMENT, "not an output");
    EXPECT_STATUS(gpuopt_tuner_set_reference_data(t, 1, want, 12), GPUOPT_ERR_OUT_OF_RANGE,
                  "256 bytes");
    EXPECT_STATUS(gpuopt_tuner_set_reference_data(t, 1, want, 0), GPUOPT_ERR_INVALID_ARGUMENT,
                  "0 bytes");
    EXPECT_OK(gpuopt_tuner_set_reference_data(t, 1, want, sizeof want));
    EXPECT_OK(gpuopt_tuner_set_reference_data(t, 1, NULL, 0));
    static const double bad[][2] = {{-1, 0}, {0, -1e-9}, {NAN, 0}, {0, INFINITY}};
    for (size_t i = 0; i < 4; i++)
        EXPECT_STATUS(gpuopt_tuner_set_tolerance(t, bad[i][0], bad[i][1]), GPUOPT_ERR_OUT_OF_RANGE,
                      "finite");
    EXPECT_OK(gpuopt_tuner_set_tolerance(t, 1e-3, 0));
}

static void search_timing_and_cache_settings_are_checked(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    static const int32_t strategies[] = {INT32_MIN, -1, 5, INT32_MAX};
    for (size_t i = 0; i < 4; i++)
        EXPECT_STATUS(gpuopt_tuner_set_strategy(t, strategies[i]), GPUOPT_ERR_OUT_OF_RANGE,
                      "strategy");
    EXPECT_STATUS(gpuopt_tuner_set_budget(t, -1, 0, 0), GPUOPT_ERR_OUT_OF_RANGE, "evaluations");
    EXPECT_STATUS(gpuopt_tuner_set_budget(t, 0, -1, 0), GPUOPT_ERR_OUT_OF_RANGE, "seconds");
    EXPECT_STATUS(gpuopt_tuner_set_budget(t, 0, NAN, 0), GPUOPT_ERR_OUT_OF_RANGE, "seconds");
    EXPECT_STATUS(gpuopt_tuner_set_budget(t, 0, INFINITY, 0), GPUOPT_ERR_OUT_OF_RANGE, "seconds");
    EXPECT_STATUS(gpuopt_tuner_set_budget(t, 0, 0, -1), GPUOPT_ERR_OUT_OF_RANGE, "failures");
    EXPECT_OK(gpuopt_tuner_set_seed(t, UINT64_MAX));
    EXPECT_STATUS(gpuopt_tuner_set_timing(t, -1, 1, 1, 1), GPUOPT_ERR_OUT_OF_RANGE, "warmup");
    EXPECT_STATUS(gpuopt_tuner_set_timing(t, 1, -1, 1, 1), GPUOPT_ERR_OUT_OF_RANGE, "repeat");
    EXPECT_STATUS(gpuopt_tuner_set_timing(t, 1, 1, 0, 1), GPUOPT_ERR_OUT_OF_RANGE, "min_runs");
    EXPECT_STATUS(gpuopt_tuner_set_timing(t, 1, 1, 5, 4), GPUOPT_ERR_OUT_OF_RANGE, "max_runs");
    EXPECT_STATUS(gpuopt_tuner_set_timing(t, 1, 1, 1, 100001), GPUOPT_ERR_OUT_OF_RANGE, "max_runs");
    EXPECT_STATUS(gpuopt_tuner_set_timeout(t, -1), GPUOPT_ERR_OUT_OF_RANGE, "timeout");
    EXPECT_STATUS(gpuopt_tuner_set_timeout(t, NAN), GPUOPT_ERR_OUT_OF_RANGE, "timeout");
    EXPECT_OK(gpuopt_tuner_set_timeout(t, 0));
    char key[1100];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    EXPECT_STATUS(gpuopt_tuner_set_workload_key(t, key), GPUOPT_ERR_OUT_OF_RANGE, "1099");
    EXPECT_OK(gpuopt_tuner_set_workload_key(t, NULL));
    EXPECT_OK(gpuopt_tuner_set_workload_key(t, ""));
    EXPECT_STATUS(gpuopt_tuner_set_cache_mode(t, -1), GPUOPT_ERR_OUT_OF_RANGE, "mode");
    EXPECT_STATUS(gpuopt_tuner_set_cache_mode(t, 3), GPUOPT_ERR_OUT_OF_RANGE, "mode");
    EXPECT_OK(gpuopt_tuner_set_progress(t, NULL, NULL));
}

static void run_without_a_subject_or_runtime_says_why(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = NULL;
    gpuopt_result *r = NULL;
    EXPECT_OK(gpuopt_tuner_create(f->ctx, NULL, f->space, &t));
    EXPECT_STATUS(gpuopt_tuner_run(t, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "out");
    EXPECT_STATUS(gpuopt_tuner_run(t, &r), GPUOPT_ERR_INVALID_ARGUMENT, "set_kernel");
    assert_null(r);
    EXPECT_STATUS(gpuopt_tune_step(t, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "set_kernel");
    EXPECT_STATUS(gpuopt_tuner_set_callback(t, NULL, NULL, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT,
                  "run");
    /* The CPU backend runs no kernels: the run says so and what to do. */
    static const char *const g[3] = {"N", NULL, NULL};
    EXPECT_OK(
        gpuopt_tuner_set_kernel(t, "__kernel void k(void) {}", "k", GPUOPT_LANG_OPENCL_C, NULL));
    EXPECT_OK(gpuopt_tuner_set_geometry(t, g, NULL));
    EXPECT_STATUS(gpuopt_tuner_run(t, &r), GPUOPT_ERR_UNSUPPORTED, "cannot build and run kernels");
    EXPECT_DETAIL_NAMES("gpuopt_tuner_set_callback");
    assert_null(r);
    EXPECT_STATUS(gpuopt_tune_step(t, NULL, NULL), GPUOPT_ERR_UNSUPPORTED, "cpu");
    /* One subject per tuner. */
    EXPECT_STATUS(gpuopt_tuner_set_callback(t, cb_run, NULL, NULL, NULL),
                  GPUOPT_ERR_INVALID_ARGUMENT, "kernel subject");
    gpuopt_tuner_destroy(t);
    EXPECT_OK(gpuopt_tuner_create(f->ctx, NULL, f->space, &t));
    EXPECT_OK(gpuopt_tuner_set_callback(t, cb_run, NULL, NULL, NULL));
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, "x", "k", GPUOPT_LANG_OPENCL_C, NULL),
                  GPUOPT_ERR_INVALID_ARGUMENT, "callback subject");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, "x", "k", NULL, g, NULL),
                  GPUOPT_ERR_INVALID_ARGUMENT, "validate");
    gpuopt_tuner_destroy(t);
}

static void results_refuse_null_small_structs_and_bad_indices(void **state)
{
    fixture *f = *state;
    gpuopt_candidate c;
    memset(&c, 0, sizeof c);
    int32_t n = -1;
    EXPECT_STATUS(gpuopt_result_best(NULL, &c), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    EXPECT_STATUS(gpuopt_result_best(f->result, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "candidate");
    EXPECT_STATUS(gpuopt_result_best(f->result, &c), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    c.struct_size = offsetof(gpuopt_candidate, message);
    EXPECT_STATUS(gpuopt_result_at(f->result, 0, &c), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    c.struct_size = sizeof c;
    EXPECT_OK(gpuopt_result_best(f->result, &c));
    assert_non_null(c.point);
    EXPECT_STATUS(gpuopt_result_count(NULL, &n), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    EXPECT_STATUS(gpuopt_result_count(f->result, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "count");
    EXPECT_OK(gpuopt_result_count(f->result, &n));
    assert_int_equal(n, 3);
    static const int32_t bad[] = {INT32_MIN, -1, 3, INT32_MAX};
    char num[32];
    for (size_t i = 0; i < 4; i++)
        EXPECT_STATUS(gpuopt_result_at(f->result, bad[i], &c), GPUOPT_ERR_OUT_OF_RANGE,
                      api_itoa(bad[i], num, sizeof num));
    EXPECT_STATUS(gpuopt_result_at(NULL, 0, &c), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    EXPECT_STATUS(gpuopt_result_from_cache(NULL, &n), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    EXPECT_STATUS(gpuopt_result_from_cache(f->result, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "cached");
    char *text = (char *)f;
    EXPECT_STATUS(gpuopt_result_to_json(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    assert_null(text);
    EXPECT_STATUS(gpuopt_result_to_json(f->result, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "json");
    EXPECT_STATUS(gpuopt_result_to_csv(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    EXPECT_STATUS(gpuopt_result_to_csv(f->result, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "csv");
    EXPECT_OK(gpuopt_result_to_csv(f->result, &text));
    assert_memory_equal(text, "index,X,status,", 15);
    gpuopt_free(text);
    /* A struct from an older, smaller header is filled only so far. */
    struct {
        gpuopt_candidate c;
        char guard[16];
    } big;
    memset(&big, 0x5a, sizeof big);
    big.c.struct_size = sizeof big.c;
    EXPECT_OK(gpuopt_result_at(f->result, 0, &big.c));
    assert_int_equal(big.guard[0], 0x5a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_and_destroy_refuse_null_and_foreign_devices),
        cmocka_unit_test(every_setter_refuses_a_null_tuner),
        cmocka_unit_test(set_size_and_kernel_check_names_sources_and_languages),
        cmocka_unit_test(geometry_and_local_memory_parse_with_clear_errors),
        cmocka_unit_test(arguments_refuse_bad_indices_types_inits_and_data),
        cmocka_unit_test(references_and_tolerances_are_checked),
        cmocka_unit_test(search_timing_and_cache_settings_are_checked),
        cmocka_unit_test(run_without_a_subject_or_runtime_says_why),
        cmocka_unit_test(results_refuse_null_small_structs_and_bad_indices),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
