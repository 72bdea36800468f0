/* The profiler's public calls with NULL, out-of-range and malformed input,
 * nesting errors, and the promises of gpuopt.h's "Profiler" section that
 * need no clock: what is kept, dropped, refused, and that a failure
 * changes nothing. Public API only (libgpuopt.so and gpuopt.h). */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"
#include "prof_test.h"

static gpuopt_context *cpu_context(void)
{
    return prof_test_context("cpu");
}

static gpuopt_profiler_options quiet_options(void)
{
    gpuopt_profiler_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.trace_path = ""; /* no file, whatever the environment says */
    return o;
}

static gpuopt_profiler *new_profiler(gpuopt_context *ctx)
{
    return prof_test_profiler(ctx, NULL, 0, NULL);
}

#define summary prof_test_summary
#define number prof_test_num
#define row prof_test_row

static void create_refuses_null_out_and_null_context(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler *p = (gpuopt_profiler *)&p;
    assert_int_equal(gpuopt_profiler_create(ctx, NULL, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "out is NULL"));
    assert_int_equal(gpuopt_profiler_create(NULL, NULL, NULL, &p), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(p);
    assert_non_null(strstr(gpuopt_last_error(), "ctx is NULL"));
    gpuopt_context_destroy(ctx);
}

static void create_refuses_malformed_options_and_leaves_no_profiler(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context(), *other = cpu_context();
    gpuopt_device *dev = NULL, *foreign = NULL;
    assert_int_equal(gpuopt_device_select(ctx, "cpu", &dev), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(other, "cpu", &foreign), GPUOPT_OK);
    int stream_stand_in = 0;
    struct {
        const char *what;
        gpuopt_status want;
    } cases[] = {
        {"struct_size 0", GPUOPT_ERR_STRUCT_SIZE},
        {"struct_size one byte short", GPUOPT_ERR_STRUCT_SIZE},
        {"unknown flag", GPUOPT_ERR_INVALID_ARGUMENT},
        {"negative max_sections", GPUOPT_ERR_OUT_OF_RANGE},
        {"stream without device", GPUOPT_ERR_INVALID_ARGUMENT},
        {"device of another context", GPUOPT_ERR_INVALID_ARGUMENT},
        {"stream_backend not reaching the device", GPUOPT_ERR_INVALID_ARGUMENT},
        {"stream_backend of no backend", GPUOPT_ERR_INVALID_ARGUMENT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpuopt_profiler_options o = quiet_options();
        gpuopt_device *d = NULL;
        switch (i) {
        case 0: o.struct_size = 0; break;
        case 1: o.struct_size = sizeof o - 1; break;
        case 2: o.flags = 0x80; break;
        case 3: o.max_sections = -1; break;
        case 4: o.stream = &stream_stand_in; break;
        case 5: d = foreign; break;
        case 6:
            d = dev;
            o.stream = &stream_stand_in;
            o.stream_backend = "cuda";
            break;
        default:
            d = dev;
            o.stream = &stream_stand_in;
            o.stream_backend = "warp-drive";
            break;
        }
        gpuopt_profiler *p = (gpuopt_profiler *)&o;
        print_message("%s\n", cases[i].what);
        assert_int_equal(gpuopt_profiler_create(ctx, d, &o, &p), cases[i].want);
        assert_null(p);
        assert_true(gpuopt_last_error()[0] != '\0');
    }
    /* The words say what to do. */
    gpuopt_profiler_options o = quiet_options();
    gpuopt_profiler *p = NULL;
    o.struct_size = 8;
    assert_int_equal(gpuopt_profiler_create(ctx, NULL, &o, &p), GPUOPT_ERR_STRUCT_SIZE);
    assert_non_null(strstr(gpuopt_last_error(), "sizeof(gpuopt_profiler_options)"));
    gpuopt_context_destroy(other);
    gpuopt_context_destroy(ctx);
}

static char logged[4096];

static void keep_log(int32_t level, const char *message, void *user)
{
    (void)level;
    (void)user;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "%s\n", message);
}

/* A context that reads GPUOPT_PROFILE = `profile` and logs warnings into
 * `logged`. */
static gpuopt_context *context_with_profile_env(const char *profile)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "cpu";
    o.log_level = "warn";
    o.log_fn = keep_log;
    logged[0] = '\0';
    setenv("GPUOPT_PROFILE", profile, 1);
    gpuopt_context *ctx = NULL;
    gpuopt_status st = gpuopt_context_create(&o, &ctx);
    unsetenv("GPUOPT_PROFILE");
    assert_int_equal(st, GPUOPT_OK);
    return ctx;
}

static void a_profile_file_name_too_long_or_unwritable_is_refused_or_said(void **state)
{
    (void)state;
    char *long_name = malloc(5001);
    assert_non_null(long_name);
    memset(long_name, 'a', 5000);
    long_name[5000] = '\0';

    /* The options' trace_path is this call's: refused, nothing made. */
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler_options o = quiet_options();
    o.trace_path = long_name;
    gpuopt_profiler *p = (gpuopt_profiler *)&o;
    assert_int_equal(gpuopt_profiler_create(ctx, NULL, &o, &p), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(p);
    assert_non_null(strstr(gpuopt_last_error(), "absolute path shorter than"));
    gpuopt_context_destroy(ctx);

    /* GPUOPT_PROFILE is the environment's: never cut short to another
     * file's name; the profiler works and writes nothing. */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char dir[] = "/tmp/gpo-prof-env-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chdir(dir), 0);
    ctx = context_with_profile_env(long_name);
    assert_non_null(strstr(logged, "GPUOPT_PROFILE is 5000 bytes"));
    p = new_profiler(ctx);
    gpuopt_profiler_options env_o = quiet_options();
    env_o.trace_path = NULL; /* the environment's */
    gpuopt_profiler *q = NULL;
    assert_int_equal(gpuopt_profiler_create(ctx, NULL, &env_o, &q), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_begin(q, "phase"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(q, "phase"), GPUOPT_OK);
    gpuopt_profiler_destroy(q);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rmdir(dir), 0); /* empty: no file of any name was written */

    /* A directory that does not exist: said when the file is due. */
    ctx = context_with_profile_env("/nonexistent-gpo-dir/trace.json");
    assert_string_equal(logged, "");
    q = NULL;
    assert_int_equal(gpuopt_profiler_create(ctx, NULL, &env_o, &q), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_begin(q, "phase"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(q, "phase"), GPUOPT_OK);
    gpuopt_profiler_destroy(q);
    assert_non_null(strstr(logged, "the profile was not written"));
    gpuopt_context_destroy(ctx);
    free(long_name);
}

static void a_null_profiler_is_refused_by_every_call(void **state)
{
    (void)state;
    char *text = (char *)&text;
    assert_int_equal(gpuopt_profiler_begin(NULL, "x"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_profiler_end(NULL, "x"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_profiler_count(NULL, GPUOPT_COUNT_ITEMS, 1),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_profiler_set_enabled(NULL, 1), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_profiler_report(NULL, GPUOPT_PROFILE_TABLE, &text),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(text);
    assert_int_equal(gpuopt_profiler_write(NULL, GPUOPT_PROFILE_TRACE, "x.json"),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    gpuopt_profiler_destroy(NULL);
    assert_true(gpuopt_profiler_options_size() >= sizeof(gpuopt_profiler_options));
}

static void begin_refuses_malformed_names_and_keeps_nothing(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler *p = new_profiler(ctx);
    char longest[256], too_long[257];
    memset(longest, 'a', 255);
    longest[255] = '\0';
    memset(too_long, 'b', 256);
    too_long[256] = '\0';
    static const struct {
        const char *name;
        gpuopt_status want;
    } bad[] = {
        {"", GPUOPT_ERR_INVALID_ARGUMENT},
        {"tab\there", GPUOPT_ERR_INVALID_ARGUMENT},
        {"new\nline", GPUOPT_ERR_INVALID_ARGUMENT},
        {"del\x7f", GPUOPT_ERR_INVALID_ARGUMENT},
        {"\xff\xfe", GPUOPT_ERR_INVALID_ARGUMENT},         /* not UTF-8 at all */
        {"\xc0\x80", GPUOPT_ERR_INVALID_ARGUMENT},         /* overlong NUL */
        {"\xed\xa0\x80", GPUOPT_ERR_INVALID_ARGUMENT},     /* a surrogate */
        {"cut \xe2\x82", GPUOPT_ERR_INVALID_ARGUMENT},     /* truncated sequence */
        {"\xf4\x90\x80\x80", GPUOPT_ERR_INVALID_ARGUMENT}, /* above U+10FFFF */
    };
    assert_int_equal(gpuopt_profiler_begin(p, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gpuopt_profiler_begin(p, bad[i].name), bad[i].want);
    assert_int_equal(gpuopt_profiler_begin(p, too_long), GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpuopt_last_error(), "255"));
    /* Nothing was opened by the refusals. */
    assert_int_equal(gpuopt_profiler_end(p, NULL), GPUOPT_ERR_NESTING);

    assert_int_equal(gpuopt_profiler_begin(p, longest), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, longest), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_begin(p, "caf\xc3\xa9 \xe2\x98\x95 \xf0\x9f\x8e\xb5"),
                     GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, NULL), GPUOPT_OK);
    cJSON *j = summary(p);
    assert_int_equal(number(j, "sections_kept"), 2);
    assert_non_null(row(j, longest));
    assert_non_null(row(j, "caf\xc3\xa9 \xe2\x98\x95 \xf0\x9f\x8e\xb5"));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void end_without_begin_is_a_nesting_error_never_a_crash(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler *p = new_profiler(ctx);
    assert_int_equal(gpuopt_profiler_end(p, "load_model"), GPUOPT_ERR_NESTING);
    assert_non_null(strstr(gpuopt_last_error(), "no section is open"));
    assert_int_equal(gpuopt_profiler_end(p, NULL), GPUOPT_ERR_NESTING);
    /* A section that ended is not open any more either. */
    assert_int_equal(gpuopt_profiler_begin(p, "a"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "a"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "a"), GPUOPT_ERR_NESTING);
    cJSON *j = summary(p);
    assert_int_equal(number(j, "nesting_errors"), 3);
    assert_int_equal(number(j, "sections_kept"), 1);
    assert_int_equal(number(j, "open_sections"), 0);
    cJSON_Delete(j);
    char *table = NULL;
    assert_int_equal(gpuopt_profiler_report(p, GPUOPT_PROFILE_TABLE, &table), GPUOPT_OK);
    assert_non_null(strstr(table, "3 nesting errors"));
    gpuopt_free(table);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void ending_the_wrong_section_is_refused_and_changes_nothing(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler *p = new_profiler(ctx);
    assert_int_equal(gpuopt_profiler_begin(p, "inference"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_begin(p, "decode"), GPUOPT_OK);
    /* "inference" is open, but "decode" inside it is not ended yet. */
    assert_int_equal(gpuopt_profiler_end(p, "inference"), GPUOPT_ERR_NESTING);
    assert_non_null(strstr(gpuopt_last_error(), "end \"decode\" first"));
    /* A name open nowhere: the innermost is named. */
    assert_int_equal(gpuopt_profiler_end(p, "postprocess"), GPUOPT_ERR_NESTING);
    assert_non_null(strstr(gpuopt_last_error(), "innermost open one is \"decode\""));
    cJSON *j = summary(p);
    assert_int_equal(number(j, "open_sections"), 2);
    assert_int_equal(number(j, "sections_kept"), 0);
    cJSON_Delete(j);
    /* Both are still open, in order. */
    assert_int_equal(gpuopt_profiler_end(p, "decode"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "inference"), GPUOPT_OK);
    j = summary(p);
    assert_int_equal(number(j, "nesting_errors"), 2);
    assert_non_null(row(j, "inference"));
    assert_non_null(row(j, "inference/decode"));
    assert_null(row(j, "decode"));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void *end_elsewhere(void *arg)
{
    gpuopt_profiler *p = arg;
    gpuopt_status st = gpuopt_profiler_end(p, "main-thread");
    return (void *)(intptr_t)st;
}

static void a_section_ends_only_on_the_thread_that_began_it(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler *p = new_profiler(ctx);
    assert_int_equal(gpuopt_profiler_begin(p, "main-thread"), GPUOPT_OK);
    pthread_t t;
    void *ret = NULL;
    assert_int_equal(pthread_create(&t, NULL, end_elsewhere, p), 0);
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_int_equal((gpuopt_status)(intptr_t)ret, GPUOPT_ERR_NESTING);
    assert_int_equal(gpuopt_profiler_end(p, "main-thread"), GPUOPT_OK);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void count_needs_an_open_section_and_a_known_unit(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler *p = new_profiler(ctx);
    assert_int_equal(gpuopt_profiler_count(p, GPUOPT_COUNT_ITEMS, 1), GPUOPT_ERR_NESTING);
    assert_int_equal(gpuopt_profiler_begin(p, "batch"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_count(p, 0, 1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_profiler_count(p, 3, 1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_profiler_count(p, -1, 1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_profiler_count(p, GPUOPT_COUNT_ITEMS, 30), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_count(p, GPUOPT_COUNT_ITEMS, 12), GPUOPT_OK);
    /* Sums saturate instead of wrapping. */
    assert_int_equal(gpuopt_profiler_count(p, GPUOPT_COUNT_BYTES, UINT64_MAX - 1), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_count(p, GPUOPT_COUNT_BYTES, 5), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "batch"), GPUOPT_OK);
    cJSON *j = summary(p);
    const cJSON *r = row(j, "batch");
    assert_non_null(r);
    assert_int_equal(number(r, "items"), 42);
    assert_true(number(r, "bytes") >= 1.8e19);
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void the_257th_open_section_is_refused(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler *p = new_profiler(ctx);
    for (int i = 0; i < 256; i++)
        assert_int_equal(gpuopt_profiler_begin(p, "loop"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_begin(p, "loop"), GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpuopt_last_error(), "an end missing in a loop"));
    for (int i = 0; i < 256; i++)
        assert_int_equal(gpuopt_profiler_end(p, "loop"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "loop"), GPUOPT_ERR_NESTING);
    cJSON *j = summary(p);
    assert_int_equal(number(j, "sections_kept"), 256);
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void a_disabled_profiler_records_nothing_until_enabled(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler_options o = quiet_options();
    o.flags = GPUOPT_PROFILER_START_DISABLED;
    gpuopt_profiler *p = NULL;
    assert_int_equal(gpuopt_profiler_create(ctx, NULL, &o, &p), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_set_enabled(p, 2), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_profiler_set_enabled(p, -1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_profiler_begin(p, "off"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_count(p, GPUOPT_COUNT_ITEMS, 1), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "off"), GPUOPT_OK);
    cJSON *j = summary(p);
    assert_int_equal(number(j, "sections_kept"), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "sections")), 0);
    cJSON_Delete(j);
    assert_int_equal(gpuopt_profiler_set_enabled(p, 1), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_begin(p, "on"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "on"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_set_enabled(p, 0), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "never-begun"), GPUOPT_OK);
    j = summary(p);
    assert_int_equal(number(j, "sections_kept"), 1);
    assert_int_equal(number(j, "nesting_errors"), 0);
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void report_refuses_null_text_and_unknown_formats(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler *p = new_profiler(ctx);
    char *text = (char *)&text;
    assert_int_equal(gpuopt_profiler_report(p, GPUOPT_PROFILE_JSON, NULL),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    static const int32_t bad[] = {0, 5, -1, INT32_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        text = (char *)&text;
        assert_int_equal(gpuopt_profiler_report(p, bad[i], &text), GPUOPT_ERR_OUT_OF_RANGE);
        assert_null(text);
        assert_int_equal(gpuopt_profiler_write(p, bad[i], "unused.json"), GPUOPT_ERR_OUT_OF_RANGE);
    }
    /* Every format of an empty profile. */
    for (int32_t f = GPUOPT_PROFILE_TABLE; f <= GPUOPT_PROFILE_SVG; f++) {
        assert_int_equal(gpuopt_profiler_report(p, f, &text), GPUOPT_OK);
        assert_non_null(text);
        assert_true(strlen(text) > 0);
        gpuopt_free(text);
    }
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void write_refuses_bad_paths_and_never_leaves_half_a_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/gpo-prof-write-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], missing[256], sub[256];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    snprintf(missing, sizeof missing, "%s/no/such/dir/trace.json", dir);
    snprintf(sub, sizeof sub, "%s/a-directory", dir);
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler *p = new_profiler(ctx);
    assert_int_equal(gpuopt_profiler_begin(p, "phase"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "phase"), GPUOPT_OK);

    assert_int_equal(gpuopt_profiler_write(p, GPUOPT_PROFILE_TRACE, NULL),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_profiler_write(p, GPUOPT_PROFILE_TRACE, ""),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_profiler_write(p, GPUOPT_PROFILE_TRACE, missing), GPUOPT_ERR_IO);
    assert_non_null(strstr(gpuopt_last_error(), missing));

    /* A file that is there stays whole when the new one cannot replace it
     * (here a directory stands at the name: the rename fails). */
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(gpuopt_profiler_write(p, GPUOPT_PROFILE_JSON, sub), GPUOPT_ERR_IO);
    struct stat sb;
    assert_int_equal(stat(sub, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));

    assert_int_equal(gpuopt_profiler_write(p, GPUOPT_PROFILE_TABLE, path), GPUOPT_OK);
    char *report = NULL;
    assert_int_equal(gpuopt_profiler_report(p, GPUOPT_PROFILE_TABLE, &report), GPUOPT_OK);
    const char *written = read_file(path);
    assert_non_null(written);
    /* The same table (the wall-time line may differ by nothing: no new section). */
    assert_string_equal(written, report);
    gpuopt_free(report);
    /* No temporary file is left beside it. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 2", dir);
    assert_int_equal(system(cmd), 0);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void sections_beyond_max_sections_are_counted_as_dropped(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler_options o = quiet_options();
    o.max_sections = 5;
    gpuopt_profiler *p = NULL;
    assert_int_equal(gpuopt_profiler_create(ctx, NULL, &o, &p), GPUOPT_OK);
    for (int i = 0; i < 12; i++) {
        assert_int_equal(gpuopt_profiler_begin(p, "step"), GPUOPT_OK);
        assert_int_equal(gpuopt_profiler_end(p, "step"), GPUOPT_OK);
    }
    cJSON *j = summary(p);
    assert_int_equal(number(j, "sections_kept"), 5);
    assert_int_equal(number(j, "sections_dropped"), 7);
    assert_int_equal(number(row(j, "step"), "count"), 5);
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void the_macros_do_nothing_with_a_null_profiler_and_record_with_one(void **state)
{
    (void)state;
    gpuopt_profiler *none = NULL;
    GPUOPT_PROFILE_BEGIN(none, "x");
    GPUOPT_PROFILE_COUNT(none, GPUOPT_COUNT_ITEMS, 1);
    GPUOPT_PROFILE_END(none, "x");
    {
        GPUOPT_PROFILE_SCOPE(none, "scoped");
    }
    gpuopt_context *ctx = cpu_context();
    gpuopt_profiler *p = new_profiler(ctx);
    GPUOPT_PROFILE_BEGIN(p, "outer");
    for (int i = 0; i < 3; i++) {
        GPUOPT_PROFILE_SCOPE(p, "scoped");
        GPUOPT_PROFILE_COUNT(p, GPUOPT_COUNT_ITEMS, 2);
    }
    GPUOPT_PROFILE_END(p, "outer");
    cJSON *j = summary(p);
    const cJSON *r = row(j, "outer/scoped");
    assert_non_null(r);
    assert_int_equal(number(r, "count"), 3);
    assert_int_equal(number(r, "items"), 6);
    assert_int_equal(number(j, "open_sections"), 0);
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void the_outputs_say_which_clock_and_which_tools(void **state)
{
    (void)state;
    gpuopt_context *ctx = cpu_context();
    gpuopt_device *dev = NULL;
    assert_int_equal(gpuopt_device_select(ctx, "cpu", &dev), GPUOPT_OK);
    gpuopt_profiler_options o = quiet_options();
    int stand_in = 0;
    o.stream = &stand_in; /* the CPU backend has no device events */
    gpuopt_profiler *p = NULL;
    assert_int_equal(gpuopt_profiler_create(ctx, dev, &o, &p), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_begin(p, "work"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "work"), GPUOPT_OK);
    cJSON *j = summary(p);
    const cJSON *clock = cJSON_GetObjectItem(j, "clock");
    assert_string_equal(cJSON_GetObjectItem(clock, "host")->valuestring, "CLOCK_MONOTONIC");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(clock, "device")));
    assert_non_null(strstr(cJSON_GetObjectItem(clock, "device_note")->valuestring,
                           "cannot time work on a caller's stream"));
    assert_string_equal(cJSON_GetObjectItem(row(j, "work"), "clock")->valuestring, "host");
    assert_string_equal(cJSON_GetObjectItem(j, "device")->valuestring, "cpu:0");
    cJSON_Delete(j);
    char *table = NULL;
    assert_int_equal(gpuopt_profiler_report(p, GPUOPT_PROFILE_TABLE, &table), GPUOPT_OK);
    assert_non_null(strstr(table, "clock: host CLOCK_MONOTONIC; device: not used:"));
    /* Tools attach to the process, whichever backends the context uses. */
    assert_non_null(strstr(table, "vendor ranges: nvtx not attached (NVTX_INJECTION64_PATH is "
                                  "not set"));
    assert_non_null(strstr(table, "; roctx not attached (no roctx library"));
    gpuopt_free(table);
    gpuopt_profiler_destroy(p);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_refuses_null_out_and_null_context),
        cmocka_unit_test(create_refuses_malformed_options_and_leaves_no_profiler),
        cmocka_unit_test(a_null_profiler_is_refused_by_every_call),
        cmocka_unit_test(a_profile_file_name_too_long_or_unwritable_is_refused_or_said),
        cmocka_unit_test(begin_refuses_malformed_names_and_keeps_nothing),
        cmocka_unit_test(end_without_begin_is_a_nesting_error_never_a_crash),
        cmocka_unit_test(ending_the_wrong_section_is_refused_and_changes_nothing),
        cmocka_unit_test(a_section_ends_only_on_the_thread_that_began_it),
        cmocka_unit_test(count_needs_an_open_section_and_a_known_unit),
        cmocka_unit_test(the_257th_open_section_is_refused),
        cmocka_unit_test(a_disabled_profiler_records_nothing_until_enabled),
        cmocka_unit_test(report_refuses_null_text_and_unknown_formats),
        cmocka_unit_test(write_refuses_bad_paths_and_never_leaves_half_a_file),
        cmocka_unit_test(sections_beyond_max_sections_are_counted_as_dropped),
        cmocka_unit_test(the_macros_do_nothing_with_a_null_profiler_and_record_with_one),
        cmocka_unit_test(the_outputs_say_which_clock_and_which_tools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
