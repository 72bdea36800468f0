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

/* Descriptors as a caller zeroes them: struct_size set, nothing given. */
static gpuopt_kernel_desc kernel_desc(const char *source, const char *entry, int32_t language)
{
    gpuopt_kernel_desc k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.source = source;
    k.entry = entry;
    k.language = language;
    k.global[0] = "N";
    return k;
}

static gpuopt_buffer_desc buffer_desc(int32_t type, const char *count, int32_t init)
{
    gpuopt_buffer_desc b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    b.type = type;
    b.count = count;
    b.init = init;
    return b;
}

static gpuopt_scalar_desc scalar_desc(int32_t type, const char *expression, double value)
{
    gpuopt_scalar_desc v;
    memset(&v, 0, sizeof v);
    v.struct_size = sizeof v;
    v.type = type;
    v.expression = expression;
    v.value = value;
    return v;
}

static gpuopt_reference_desc reference_desc(const char *source, const char *entry,
                                            const char *global0)
{
    gpuopt_reference_desc r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.source = source;
    r.entry = entry;
    r.global[0] = global0;
    return r;
}

static gpuopt_callback_desc callback_desc(gpuopt_run_fn run)
{
    gpuopt_callback_desc c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.run = run;
    return c;
}

static gpuopt_tuner_settings settings_of(const gpuopt_tuner *t)
{
    gpuopt_tuner_settings s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    EXPECT_OK(gpuopt_tuner_get_settings(t, &s));
    return s;
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
    gpuopt_callback_desc cb = callback_desc(cb_run);
    if (gpuopt_tuner_create(f.ctx, NULL, f.space, &t) || gpuopt_tuner_set_callback(t, &cb))
        return -1;
    gpuopt_tuner_settings s = settings_of(t);
    s.cache_mode = GPUOPT_CACHE_OFF;
    s.warmup_ms = 0;
    s.repeat_ms = 0.01;
    s.min_runs = 1;
    s.max_runs = 3;
    if (gpuopt_tuner_set_settings(t, &s) || gpuopt_tuner_run(t, &f.result))
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
}

static void size_getters_give_this_headers_sizes(void **state)
{
    (void)state;
    assert_int_equal(gpuopt_candidate_size(), sizeof(gpuopt_candidate));
    assert_int_equal(gpuopt_kernel_desc_size(), sizeof(gpuopt_kernel_desc));
    assert_int_equal(gpuopt_buffer_desc_size(), sizeof(gpuopt_buffer_desc));
    assert_int_equal(gpuopt_scalar_desc_size(), sizeof(gpuopt_scalar_desc));
    assert_int_equal(gpuopt_reference_desc_size(), sizeof(gpuopt_reference_desc));
    assert_int_equal(gpuopt_callback_desc_size(), sizeof(gpuopt_callback_desc));
    assert_int_equal(gpuopt_tuner_settings_size(), sizeof(gpuopt_tuner_settings));
}

/* Every setter with a NULL tuner. */
static void every_setter_refuses_a_null_tuner(void **state)
{
    (void)state;
    const gpuopt_status E = GPUOPT_ERR_INVALID_ARGUMENT;
    gpuopt_kernel_desc k = kernel_desc("x", "k", GPUOPT_LANG_OPENCL_C);
    gpuopt_buffer_desc b = buffer_desc(GPUOPT_ELEM_F32, "N", GPUOPT_INIT_ZEROS);
    gpuopt_scalar_desc v = scalar_desc(GPUOPT_ELEM_I32, "N", 0);
    gpuopt_reference_desc r = reference_desc("x", "k", "N");
    gpuopt_callback_desc c = callback_desc(cb_run);
    gpuopt_tuner_settings s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    EXPECT_STATUS(gpuopt_tuner_set_size(NULL, "N", 1), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_kernel(NULL, &k), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_buffer(NULL, 0, &b), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_scalar(NULL, 0, &v), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(NULL, &r), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(NULL, NULL), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_reference_data(NULL, 0, "x", 1), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_callback(NULL, &c), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_get_settings(NULL, &s), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_settings(NULL, &s), E, "tuner");
    EXPECT_STATUS(gpuopt_tuner_set_progress(NULL, NULL, NULL), E, "tuner");
    gpuopt_result *res = (gpuopt_result *)state;
    EXPECT_STATUS(gpuopt_tuner_run(NULL, &res), E, "tuner");
    assert_null(res);
    EXPECT_STATUS(gpuopt_tuner_step(NULL, NULL, NULL), E, "tuner");
}

/* Every descriptor: NULL, and a struct_size below its first layout. */
static void descriptors_refuse_null_and_a_small_struct_size(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    const gpuopt_status E = GPUOPT_ERR_INVALID_ARGUMENT, S = GPUOPT_ERR_STRUCT_SIZE;
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, NULL), E, "gpuopt_kernel_desc");
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, NULL), E, "gpuopt_buffer_desc");
    EXPECT_STATUS(gpuopt_tuner_set_scalar(t, 0, NULL), E, "gpuopt_scalar_desc");
    EXPECT_STATUS(gpuopt_tuner_set_callback(t, NULL), E, "gpuopt_callback_desc");
    EXPECT_STATUS(gpuopt_tuner_set_settings(t, NULL), E, "gpuopt_tuner_settings");
    EXPECT_STATUS(gpuopt_tuner_get_settings(t, NULL), E, "settings");
    gpuopt_kernel_desc k = kernel_desc("x", "k", GPUOPT_LANG_OPENCL_C);
    gpuopt_buffer_desc b = buffer_desc(GPUOPT_ELEM_F32, "N", GPUOPT_INIT_ZEROS);
    gpuopt_scalar_desc v = scalar_desc(GPUOPT_ELEM_I32, "N", 0);
    gpuopt_reference_desc r = reference_desc("x", "k", "N");
    gpuopt_callback_desc c = callback_desc(cb_run);
    gpuopt_tuner_settings s = settings_of(t);
    k.struct_size = 0;
    b.struct_size = offsetof(gpuopt_buffer_desc, is_output);
    v.struct_size = sizeof v - 1;
    r.struct_size = 8;
    c.struct_size = offsetof(gpuopt_callback_desc, user);
    s.struct_size = offsetof(gpuopt_tuner_settings, workload_key);
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), S, "gpuopt_kernel_desc.struct_size is 0");
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), S, "gpuopt_buffer_desc.struct_size");
    EXPECT_STATUS(gpuopt_tuner_set_scalar(t, 0, &v), S, "gpuopt_scalar_desc.struct_size");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, &r), S, "gpuopt_reference_desc");
    EXPECT_STATUS(gpuopt_tuner_set_callback(t, &c), S, "gpuopt_callback_desc.struct_size");
    EXPECT_STATUS(gpuopt_tuner_set_settings(t, &s), S, "gpuopt_tuner_settings.struct_size");
    EXPECT_STATUS(gpuopt_tuner_get_settings(t, &s), S, "gpuopt_tuner_settings.struct_size");
    /* A struct of a newer header: the library reads its own layout only. */
    struct {
        gpuopt_scalar_desc v;
        double newer_field;
    } big;
    memset(&big, 0xff, sizeof big);
    big.v = scalar_desc(GPUOPT_ELEM_I32, NULL, 7);
    big.v.struct_size = sizeof big;
    EXPECT_OK(gpuopt_tuner_set_scalar(t, 0, &big.v));
}

static void set_size_and_kernel_check_names_sources_and_languages(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    EXPECT_STATUS(gpuopt_tuner_set_size(t, NULL, 1), GPUOPT_ERR_INVALID_ARGUMENT, "NULL");
    EXPECT_STATUS(gpuopt_tuner_set_size(t, "1N", 1), GPUOPT_ERR_INVALID_ARGUMENT, "1N");
    EXPECT_STATUS(gpuopt_tuner_set_size(t, "X", 1), GPUOPT_ERR_INVALID_ARGUMENT, "X");
    EXPECT_OK(gpuopt_tuner_set_size(t, "N", 128));
    gpuopt_kernel_desc k = kernel_desc(NULL, "k", GPUOPT_LANG_OPENCL_C);
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "source");
    k.source = "";
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "empty");
    k.source = "x";
    static const char *const entries[] = {"", "1k", "a b", "k-1"};
    for (size_t i = 0; i < 4; i++) {
        k.entry = entries[i];
        EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "identifier");
    }
    k.entry = NULL;
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "entry");
    k.entry = "k";
    static const int32_t langs[] = {INT32_MIN, -1, 0, 4, INT32_MAX};
    for (size_t i = 0; i < 5; i++) {
        k.language = langs[i];
        EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_OUT_OF_RANGE, "language");
    }
}

static void geometry_and_local_memory_parse_with_clear_errors(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    gpuopt_kernel_desc k = kernel_desc("x", "k", GPUOPT_LANG_OPENCL_C);
    k.global[0] = NULL;
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "global[0]");
    k.global[0] = "N";
    k.global[2] = "1"; /* after an unused global[1] */
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "global[2]");
    k.global[1] = "X";
    k.global[2] = NULL;
    k.local[0] = "X"; /* two dimensions used, one local size */
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "local[1]");
    k.local[0] = NULL;
    k.local[1] = "1"; /* a local size without local[0] */
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "local[1]");
    k.local[1] = NULL;
    k.global[0] = "N +";
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "column");
    k.global[0] = "Q";
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_NOT_FOUND, "Q");
    k.global[0] = "N";
    k.local[0] = "X";
    k.local[1] = "1";
    EXPECT_OK(gpuopt_tuner_set_kernel(t, &k));
    k.local[0] = k.local[1] = NULL;
    EXPECT_OK(gpuopt_tuner_set_kernel(t, &k));
    k.local_memory = "X *";
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "column");
    EXPECT_DETAIL_NAMES("local_memory");
    k.local_memory = "LMEM";
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_NOT_FOUND, "LMEM");
    k.local_memory = "X * 1024";
    EXPECT_OK(gpuopt_tuner_set_kernel(t, &k));
    k.local_memory = NULL;
    EXPECT_OK(gpuopt_tuner_set_kernel(t, &k));
}

static void arguments_refuse_bad_indices_types_inits_and_data(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    float data[64] = {0};
    gpuopt_buffer_desc b = buffer_desc(GPUOPT_ELEM_F32, "N", GPUOPT_INIT_ZEROS);
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 256, &b), GPUOPT_ERR_OUT_OF_RANGE, "256");
    b.type = 0;
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_ERR_OUT_OF_RANGE, "type");
    b.type = 6;
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_ERR_OUT_OF_RANGE, "type");
    b = buffer_desc(GPUOPT_ELEM_F32, NULL, GPUOPT_INIT_ZEROS);
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_ERR_INVALID_ARGUMENT, "count");
    b = buffer_desc(GPUOPT_ELEM_F32, "N", 0);
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_ERR_OUT_OF_RANGE, "init");
    b.init = 5;
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_ERR_OUT_OF_RANGE, "init");
    b.init = GPUOPT_INIT_CONSTANT;
    b.constant = NAN;
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_ERR_INVALID_ARGUMENT, "finite");
    b = buffer_desc(GPUOPT_ELEM_F32, "N", GPUOPT_INIT_DATA);
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_ERR_INVALID_ARGUMENT, "data");
    b.data = data;
    b.count = "N * X";
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_ERR_INVALID_ARGUMENT, "parameter X");
    b.count = "N - 1000";
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_ERR_OUT_OF_RANGE, "count");
    b = buffer_desc(GPUOPT_ELEM_F32, "N )", GPUOPT_INIT_ZEROS);
    EXPECT_STATUS(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_ERR_INVALID_ARGUMENT, "column");
    EXPECT_OK(gpuopt_tuner_set_size(t, "N", 64));
    b = buffer_desc(GPUOPT_ELEM_F32, "N", GPUOPT_INIT_DATA);
    b.data = data;
    EXPECT_OK(gpuopt_tuner_set_buffer(t, 0, &b));
    b = buffer_desc(GPUOPT_ELEM_F32, "N", GPUOPT_INIT_ZEROS);
    b.is_output = 1;
    EXPECT_OK(gpuopt_tuner_set_buffer(t, 1, &b));
    gpuopt_scalar_desc v = scalar_desc(9, "N", 0);
    EXPECT_STATUS(gpuopt_tuner_set_scalar(t, 2, &v), GPUOPT_ERR_OUT_OF_RANGE, "type");
    v = scalar_desc(GPUOPT_ELEM_I32, "N /", 0);
    EXPECT_STATUS(gpuopt_tuner_set_scalar(t, 2, &v), GPUOPT_ERR_INVALID_ARGUMENT, "column");
    static const struct {
        int32_t type;
        double value;
        const char *named;
    } unfit[] = {{GPUOPT_ELEM_I32, 1.5, "i32"},
                 {GPUOPT_ELEM_I32, 3e9, "i32"},
                 {GPUOPT_ELEM_U32, -1, "u32"},
                 {GPUOPT_ELEM_I64, NAN, "i64"},
                 {GPUOPT_ELEM_I64, 9223372036854775808.0, "i64"}};
    for (size_t i = 0; i < sizeof unfit / sizeof unfit[0]; i++) {
        v = scalar_desc(unfit[i].type, NULL, unfit[i].value);
        EXPECT_STATUS(gpuopt_tuner_set_scalar(t, 2, &v), GPUOPT_ERR_OUT_OF_RANGE, unfit[i].named);
    }
    v = scalar_desc(GPUOPT_ELEM_F32, NULL, 1);
    EXPECT_STATUS(gpuopt_tuner_set_scalar(t, 300, &v), GPUOPT_ERR_OUT_OF_RANGE, "300");
    v.value = 0.5;
    EXPECT_OK(gpuopt_tuner_set_scalar(t, 2, &v));
    v = scalar_desc(GPUOPT_ELEM_I32, "N", 0);
    EXPECT_OK(gpuopt_tuner_set_scalar(t, 3, &v));
}

static void references_are_checked(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    gpuopt_reference_desc r = reference_desc("x", "k", "N * X");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, &r), GPUOPT_ERR_INVALID_ARGUMENT,
                  "parameter X");
    r = reference_desc("", "k", "N");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, &r), GPUOPT_ERR_INVALID_ARGUMENT, "empty");
    r = reference_desc(NULL, "k", "N");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, &r), GPUOPT_ERR_INVALID_ARGUMENT, "NULL");
    r = reference_desc("x", "9", "N");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, &r), GPUOPT_ERR_INVALID_ARGUMENT,
                  "identifier");
    r = reference_desc("x", "k", NULL);
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, &r), GPUOPT_ERR_INVALID_ARGUMENT,
                  "global[0]");
    r = reference_desc("x", "k", "N");
    EXPECT_OK(gpuopt_tuner_set_reference_kernel(t, &r));
    EXPECT_OK(gpuopt_tuner_set_reference_kernel(t, NULL));
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
}

/* `s` is refused, naming `field`, and the tuner's settings stay `before`. */
static void expect_refused(gpuopt_tuner *t, const gpuopt_tuner_settings *s,
                           const gpuopt_tuner_settings *before, const char *field)
{
    EXPECT_STATUS(gpuopt_tuner_set_settings(t, s), GPUOPT_ERR_OUT_OF_RANGE, field);
    gpuopt_tuner_settings now = settings_of(t);
    assert_true(
        now.strategy == before->strategy && now.max_evaluations == before->max_evaluations &&
        now.max_seconds == before->max_seconds && now.max_failures == before->max_failures &&
        now.cache_mode == before->cache_mode && now.seed == before->seed &&
        now.warmup_ms == before->warmup_ms && now.repeat_ms == before->repeat_ms &&
        now.min_runs == before->min_runs && now.max_runs == before->max_runs &&
        now.timeout_s == before->timeout_s && now.abs_tol == before->abs_tol &&
        now.rel_tol == before->rel_tol && now.workload_key == before->workload_key);
}

static void settings_are_checked_and_a_refusal_changes_nothing(void **state)
{
    fixture *f = *state;
    gpuopt_tuner *t = f->tuner;
    /* The defaults docs/tuning.md and the header state. */
    const gpuopt_tuner_settings d = settings_of(t);
    assert_int_equal(d.strategy, GPUOPT_STRATEGY_AUTO);
    assert_int_equal(d.max_evaluations, 0);
    assert_true(d.max_seconds == 0);
    assert_int_equal(d.max_failures, 0);
    assert_int_equal(d.cache_mode, GPUOPT_CACHE_USE);
    assert_int_equal(d.seed, 0);
    assert_true(d.warmup_ms == 5 && d.repeat_ms == 50);
    assert_int_equal(d.min_runs, 3);
    assert_int_equal(d.max_runs, 100);
    assert_true(d.timeout_s == 10);
    assert_true(d.abs_tol == 1e-4 && d.rel_tol == 1e-4);
    assert_null(d.workload_key);

    gpuopt_tuner_settings s;
    static const int32_t strategies[] = {INT32_MIN, -1, 5, INT32_MAX};
    for (size_t i = 0; i < 4; i++) {
        s = d;
        s.strategy = strategies[i];
        expect_refused(t, &s, &d, "strategy");
    }
    s = d;
    s.max_evaluations = -1;
    expect_refused(t, &s, &d, "max_evaluations");
    static const double bad_seconds[] = {-1, NAN, INFINITY};
    for (size_t i = 0; i < 3; i++) {
        s = d;
        s.max_seconds = bad_seconds[i];
        expect_refused(t, &s, &d, "max_seconds");
    }
    s = d;
    s.max_failures = -1;
    expect_refused(t, &s, &d, "max_failures");
    static const int32_t modes[] = {-1, 3};
    for (size_t i = 0; i < 2; i++) {
        s = d;
        s.cache_mode = modes[i];
        expect_refused(t, &s, &d, "cache_mode");
    }
    s = d;
    s.warmup_ms = -1;
    expect_refused(t, &s, &d, "warmup");
    s = d;
    s.repeat_ms = -1;
    expect_refused(t, &s, &d, "repeat");
    s = d;
    s.min_runs = 0;
    expect_refused(t, &s, &d, "min_runs");
    s = d;
    s.min_runs = 5;
    s.max_runs = 4;
    expect_refused(t, &s, &d, "max_runs");
    s = d;
    s.max_runs = 100001;
    expect_refused(t, &s, &d, "max_runs");
    static const double bad_timeouts[] = {-1, NAN};
    for (size_t i = 0; i < 2; i++) {
        s = d;
        s.timeout_s = bad_timeouts[i];
        expect_refused(t, &s, &d, "timeout");
    }
    static const double bad_tol[][2] = {{-1, 0}, {0, -1e-9}, {NAN, 0}, {0, INFINITY}};
    for (size_t i = 0; i < 4; i++) {
        s = d;
        s.abs_tol = bad_tol[i][0];
        s.rel_tol = bad_tol[i][1];
        expect_refused(t, &s, &d, "finite");
    }
    char key[1100];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    s = d;
    s.workload_key = key;
    expect_refused(t, &s, &d, "1099");

    /* Accepted: the edges, then a key that is copied. */
    s = d;
    s.seed = UINT64_MAX;
    s.timeout_s = 0;
    s.abs_tol = 1e-3;
    s.rel_tol = 0;
    s.min_runs = s.max_runs = 1;
    s.workload_key = key + 1000;
    EXPECT_OK(gpuopt_tuner_set_settings(t, &s));
    key[1000] = 'x';
    gpuopt_tuner_settings now = settings_of(t);
    assert_true(now.seed == UINT64_MAX && now.timeout_s == 0 && now.abs_tol == 1e-3);
    assert_int_equal(strlen(now.workload_key), 99);
    assert_int_equal(now.workload_key[0], 'k');
    /* Handed back as read, the key is kept; NULL and "" clear it. */
    EXPECT_OK(gpuopt_tuner_set_settings(t, &now));
    now = settings_of(t);
    assert_int_equal(now.workload_key[0], 'k');
    now.workload_key = "";
    EXPECT_OK(gpuopt_tuner_set_settings(t, &now));
    assert_null(settings_of(t).workload_key);
    EXPECT_OK(gpuopt_tuner_set_settings(t, &d));
    EXPECT_OK(gpuopt_tuner_set_progress(t, NULL, NULL));
    /* A reader's struct is cleared when the call fails. */
    memset(&s, 0x5a, sizeof s);
    s.struct_size = sizeof s;
    EXPECT_STATUS(gpuopt_tuner_get_settings(NULL, &s), GPUOPT_ERR_INVALID_ARGUMENT, "tuner");
    assert_null(s.workload_key);
    assert_int_equal(s.max_runs, 0);
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
    EXPECT_STATUS(gpuopt_tuner_step(t, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "set_kernel");
    gpuopt_callback_desc cb = callback_desc(NULL);
    EXPECT_STATUS(gpuopt_tuner_set_callback(t, &cb), GPUOPT_ERR_INVALID_ARGUMENT, "run");
    /* The CPU backend runs no kernels: the run says so and what to do. */
    gpuopt_kernel_desc k = kernel_desc("__kernel void k(void) {}", "k", GPUOPT_LANG_OPENCL_C);
    EXPECT_OK(gpuopt_tuner_set_kernel(t, &k));
    EXPECT_STATUS(gpuopt_tuner_run(t, &r), GPUOPT_ERR_UNSUPPORTED, "cannot build and run kernels");
    EXPECT_DETAIL_NAMES("gpuopt_tuner_set_callback");
    assert_null(r);
    const gpuopt_point *p = (const gpuopt_point *)f;
    int32_t done = -1;
    EXPECT_STATUS(gpuopt_tuner_step(t, &p, &done), GPUOPT_ERR_UNSUPPORTED, "cpu");
    assert_null(p);
    assert_int_equal(done, 0);
    /* One subject per tuner. */
    cb = callback_desc(cb_run);
    EXPECT_STATUS(gpuopt_tuner_set_callback(t, &cb), GPUOPT_ERR_INVALID_ARGUMENT, "kernel subject");
    gpuopt_tuner_destroy(t);
    EXPECT_OK(gpuopt_tuner_create(f->ctx, NULL, f->space, &t));
    EXPECT_OK(gpuopt_tuner_set_callback(t, &cb));
    EXPECT_STATUS(gpuopt_tuner_set_kernel(t, &k), GPUOPT_ERR_INVALID_ARGUMENT, "callback subject");
    gpuopt_reference_desc ref = reference_desc("x", "k", "N");
    EXPECT_STATUS(gpuopt_tuner_set_reference_kernel(t, &ref), GPUOPT_ERR_INVALID_ARGUMENT,
                  "validate");
    gpuopt_tuner_destroy(t);
}

static void points_refuse_null_and_unknown_names(void **state)
{
    fixture *f = *state;
    gpuopt_candidate c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    EXPECT_OK(gpuopt_result_best(f->result, &c));
    int64_t v = 7;
    const char *text = "poison";
    EXPECT_STATUS(gpuopt_point_get_int(NULL, "X", &v), GPUOPT_ERR_INVALID_ARGUMENT, "point");
    assert_int_equal(v, 0);
    EXPECT_STATUS(gpuopt_point_get_int(c.point, NULL, &v), GPUOPT_ERR_INVALID_ARGUMENT, "name");
    EXPECT_STATUS(gpuopt_point_get_int(c.point, "X", NULL), GPUOPT_ERR_INVALID_ARGUMENT, "value");
    v = 7;
    EXPECT_STATUS(gpuopt_point_get_int(c.point, "Y", &v), GPUOPT_ERR_NOT_FOUND, "'Y'");
    assert_int_equal(v, 0);
    EXPECT_STATUS(gpuopt_point_get_text(NULL, "X", &text), GPUOPT_ERR_INVALID_ARGUMENT, "point");
    assert_null(text);
    text = "poison";
    EXPECT_STATUS(gpuopt_point_get_text(c.point, "Y", &text), GPUOPT_ERR_NOT_FOUND, "'Y'");
    assert_null(text);
    EXPECT_OK(gpuopt_point_get_text(c.point, "X", &text));
    assert_string_equal(text, "1");
    char *s = (char *)f;
    EXPECT_STATUS(gpuopt_point_to_string(NULL, &s), GPUOPT_ERR_INVALID_ARGUMENT, "point");
    assert_null(s);
    EXPECT_STATUS(gpuopt_point_to_string(c.point, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "text");
}

static void results_refuse_null_small_structs_and_bad_indices(void **state)
{
    fixture *f = *state;
    gpuopt_candidate c;
    memset(&c, 0, sizeof c);
    int32_t n = -1;
    EXPECT_STATUS(gpuopt_result_best(f->result, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "candidate");
    EXPECT_STATUS(gpuopt_result_best(f->result, &c), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    c.struct_size = offsetof(gpuopt_candidate, message);
    EXPECT_STATUS(gpuopt_result_at(f->result, 0, &c), GPUOPT_ERR_STRUCT_SIZE, "struct_size");
    c.struct_size = sizeof c;
    EXPECT_STATUS(gpuopt_result_best(NULL, &c), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    EXPECT_OK(gpuopt_result_best(f->result, &c));
    assert_non_null(c.point);
    EXPECT_STATUS(gpuopt_result_count(NULL, &n), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    assert_int_equal(n, 0);
    EXPECT_STATUS(gpuopt_result_count(f->result, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "count");
    EXPECT_OK(gpuopt_result_count(f->result, &n));
    assert_int_equal(n, 3);
    static const int32_t bad[] = {INT32_MIN, -1, 3, INT32_MAX};
    char num[32];
    for (size_t i = 0; i < 4; i++) {
        EXPECT_STATUS(gpuopt_result_at(f->result, bad[i], &c), GPUOPT_ERR_OUT_OF_RANGE,
                      api_itoa(bad[i], num, sizeof num));
        assert_null(c.point); /* failure means no output */
        assert_int_equal(c.struct_size, sizeof c);
    }
    EXPECT_STATUS(gpuopt_result_at(NULL, 0, &c), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    int32_t origin = -1;
    EXPECT_STATUS(gpuopt_result_get_origin(NULL, &origin), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    assert_int_equal(origin, 0);
    EXPECT_STATUS(gpuopt_result_get_origin(f->result, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "origin");
    EXPECT_OK(gpuopt_result_get_origin(f->result, &origin));
    assert_int_equal(origin, GPUOPT_ORIGIN_TUNED);
    char *text = (char *)f;
    EXPECT_STATUS(gpuopt_result_to_json(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    assert_null(text);
    EXPECT_STATUS(gpuopt_result_to_json(f->result, NULL), GPUOPT_ERR_INVALID_ARGUMENT, "json");
    EXPECT_OK(gpuopt_result_to_json(f->result, &text));
    assert_non_null(strstr(text, "\"origin\":\t\"tuned\""));
    gpuopt_free(text);
    text = (char *)f;
    EXPECT_STATUS(gpuopt_result_to_csv(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT, "result");
    assert_null(text);
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

static void spaces_refuse_null_and_clear_their_counts(void **state)
{
    fixture *f = *state;
    uint64_t raw = 9, legal = 9;
    EXPECT_STATUS(gpuopt_space_count(NULL, &raw, &legal), GPUOPT_ERR_INVALID_ARGUMENT, "space");
    assert_true(raw == 0 && legal == 0);
    legal = 9;
    EXPECT_STATUS(gpuopt_space_count(f->space, NULL, &legal), GPUOPT_ERR_INVALID_ARGUMENT, "raw");
    assert_true(legal == 0);
    EXPECT_OK(gpuopt_space_count(f->space, &raw, NULL));
    assert_true(raw == 3);
    EXPECT_STATUS(gpuopt_space_create(NULL), GPUOPT_ERR_INVALID_ARGUMENT, "out");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_and_destroy_refuse_null_and_foreign_devices),
        cmocka_unit_test(size_getters_give_this_headers_sizes),
        cmocka_unit_test(every_setter_refuses_a_null_tuner),
        cmocka_unit_test(descriptors_refuse_null_and_a_small_struct_size),
        cmocka_unit_test(set_size_and_kernel_check_names_sources_and_languages),
        cmocka_unit_test(geometry_and_local_memory_parse_with_clear_errors),
        cmocka_unit_test(arguments_refuse_bad_indices_types_inits_and_data),
        cmocka_unit_test(references_are_checked),
        cmocka_unit_test(settings_are_checked_and_a_refusal_changes_nothing),
        cmocka_unit_test(run_without_a_subject_or_runtime_says_why),
        cmocka_unit_test(points_refuse_null_and_unknown_names),
        cmocka_unit_test(results_refuse_null_small_structs_and_bad_indices),
        cmocka_unit_test(spaces_refuse_null_and_clear_their_counts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
