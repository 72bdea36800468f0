/* Configuration layers: defaults < config file < environment < API options;
 * bad values warned about (variable, value, what is accepted) and ignored;
 * malformed files reported with file, line and column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend.h"
#include "config.h"
#include "context.h"
#include "support/synthetic.h"
#include "util/strutil.h"
#include "support/testutil.h"

static const char *const vars[] = {
    "GPUOPT_BACKEND",      "GPUOPT_DEVICE",         "GPUOPT_LEVEL",       "GPUOPT_LOG",
    "GPUOPT_CONFIG",       "GPUOPT_SYSFS_ROOT",     "GPUOPT_CACHE_DIR",   "GPUOPT_KNOBS",
    "GPUOPT_CUDA_LIBRARY", "GPUOPT_OPENCL_LIBRARY", "GPUOPT_CACHE_SHARED"};

static int setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    syn_reset();
    return 0;
}

static gpuopt_options opts(uint32_t flags)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = flags;
    return o;
}

static gpuopt_status load(gpo_config *cfg, const gpuopt_options *o, log_capture *log)
{
    gpo_logger l = {GPUOPT_LOG_WARN, capture_log, log};
    return gpo_config_load(cfg, o, &l, syn_list, 3);
}

static void defaults_apply_when_nothing_is_set(void **state)
{
    (void)state;
    gpo_config cfg;
    log_capture log = {0};
    gpuopt_options o = opts(GPUOPT_OPTION_IGNORE_CONFIG_FILE);
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_int_equal(cfg.level, 1);
    assert_string_equal(cfg.device, "auto");
    assert_true(cfg.all_backends);
    assert_int_equal(cfg.log_level, GPUOPT_LOG_WARN);
    assert_int_equal(cfg.reduced_precision, 0);
    assert_false(gpo_fs_is_recorded(&cfg.fs));
    assert_int_equal(log.count, 0);
    assert_null(gpo_config_library(&cfg, "cuda"));
    gpo_config_free(&cfg);
}

static void
bad_environment_values_warn_with_variable_value_and_accepted_and_keep_default(void **state)
{
    (void)state;
    const struct {
        const char *var, *value, *accepted;
    } cases[] = {
        {"GPUOPT_LEVEL", "7", "accepted: 0 (safe defaults)"},
        {"GPUOPT_LEVEL", "abc", "accepted: 0 (safe defaults)"},
        {"GPUOPT_LEVEL", "1.5", "accepted: 0 (safe defaults)"},
        {"GPUOPT_LOG", "loud", "accepted: off, error, warn, info, debug"},
        {"GPUOPT_BACKEND", "cuda,metal",
         "accepted: auto, or a comma-separated list of syncuda, synocl, syncpu"},
        {"GPUOPT_BACKEND", ",", "accepted: auto"},
        {"GPUOPT_DEVICE", "the fast one", "accepted: auto, gpu"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setup(NULL);
        setenv(cases[i].var, cases[i].value, 1);
        gpo_config cfg;
        log_capture log = {0};
        gpuopt_options o = opts(GPUOPT_OPTION_IGNORE_CONFIG_FILE);
        assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
        char expect[128];
        snprintf(expect, sizeof expect, "%s=%s is not accepted", cases[i].var, cases[i].value);
        assert_non_null(strstr(log.text, expect));
        assert_non_null(strstr(log.text, cases[i].accepted));
        assert_int_equal(cfg.level, 1);
        assert_true(cfg.all_backends);
        assert_string_equal(cfg.device, "auto");
        gpo_config_free(&cfg);
    }
    setup(NULL);
}

static void malformed_config_file_is_reported_with_line_and_column_and_ignored(void **state)
{
    (void)state;
    const char *path =
        write_temp_file(0, "broken.json", "{\n  \"level\": 2,\n  \"device\": cpu\n}\n");
    gpo_config cfg;
    log_capture log = {0};
    gpuopt_options o = opts(0);
    o.config_path = path;
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_non_null(strstr(log.text, path));
    assert_non_null(strstr(log.text, "line 3, column 13"));
    assert_non_null(strstr(log.text, "malformed JSON"));
    assert_int_equal(cfg.level, 1); /* nothing from the broken file was used */
    gpo_config_free(&cfg);

    path = write_temp_file(1, "array.json", "[1, 2]");
    memset(&log, 0, sizeof log);
    o.config_path = path;
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_non_null(strstr(log.text, "must be a JSON object"));
    gpo_config_free(&cfg);

    memset(&log, 0, sizeof log);
    o.config_path = "/nonexistent/gpuopt.json";
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_non_null(strstr(log.text, "/nonexistent/gpuopt.json cannot be read"));
    gpo_config_free(&cfg);
}

static void config_file_values_are_checked_one_by_one(void **state)
{
    (void)state;
    const char *path = write_temp_file(0, "mixed.json",
                                       "{\"level\": 9, \"device\": \"syncpu:0\", \"colour\": "
                                       "\"blue\", \"reduced_precision\": true, \"libraries\": "
                                       "{\"cuda\": \"/opt/libcuda.so.1\", \"metal\": \"x\"}, "
                                       "\"log\": [1]}");
    gpo_config cfg;
    log_capture log = {0};
    gpuopt_options o = opts(0);
    o.config_path = path;
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_non_null(strstr(log.text, "\"level\": 9 is not accepted"));
    assert_non_null(strstr(log.text, "unknown key \"colour\""));
    assert_non_null(strstr(log.text, "libraries.metal ignored"));
    assert_non_null(strstr(log.text, "\"log\" must be a string, number or boolean"));
    assert_int_equal(cfg.level, 1);
    assert_string_equal(cfg.device, "syncpu:0");
    assert_int_equal(cfg.reduced_precision, 1);
    assert_string_equal(gpo_config_library(&cfg, "cuda"), "/opt/libcuda.so.1");
    assert_string_equal(cfg.config_path, path);
    gpo_config_free(&cfg);
}

/* JSON numbers beyond int64_t are reported as numbers, never cast (the
 * cast is undefined behaviour, caught by the sanitizer build). */
static void config_file_numbers_beyond_int64_are_refused_without_a_cast(void **state)
{
    (void)state;
    const char *path = write_temp_file(0, "huge.json",
                                       "{\"level\": 1e19, \"reduced_precision\": -1e300, "
                                       "\"device\": 9.3e18}");
    gpo_config cfg;
    log_capture log = {0};
    gpuopt_options o = opts(0);
    o.config_path = path;
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_non_null(strstr(log.text, "\"level\": 1e+19 is not accepted"));
    assert_non_null(strstr(log.text, "\"reduced_precision\": -1.0000000000000001e+300 is not"));
    assert_non_null(strstr(log.text, "\"device\": 9.3e+18 is not accepted"));
    assert_int_equal(cfg.level, 1);
    gpo_config_free(&cfg);
}

/* A config file that is a FIFO, a directory or a device is refused at once
 * (open(2) of a FIFO without a writer used to block forever), and one past
 * the size limit is refused naming the limit; the defaults are kept. */
static void config_file_must_be_a_small_regular_file(void **state)
{
    (void)state;
    char dir[512], fifo[600], big[600];
    snprintf(dir, sizeof dir, "%s/tests/config-kinds", GPO_BUILD_DIR);
    mkdir(dir, 0755);
    snprintf(fifo, sizeof fifo, "%s/fifo.json", dir);
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(big, sizeof big, "%s/big.json", dir);
    FILE *f = fopen(big, "w");
    assert_non_null(f);
    fputs("{\"level\": 0, \"device\": \"", f);
    for (int i = 0; i < 70000; i++)
        fputs("xxxxxxxxxxxxxxx", f);
    fputs("\"}", f);
    assert_int_equal(fclose(f), 0);
    static const struct {
        const char *path, *why;
    } cases[] = {{NULL, "not a regular file (a FIFO)"},
                 {"/dev/zero", "not a regular file (a character device)"},
                 {"/", "not a regular file (a directory)"},
                 {NULL, "larger than the limit of 1 MiB"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpo_config cfg;
        log_capture log = {0};
        gpuopt_options o = opts(0);
        o.config_path = cases[i].path ? cases[i].path : i == 0 ? fifo : big;
        assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
        if (!strstr(log.text, cases[i].why) || !strstr(log.text, o.config_path))
            fail_msg("%s: want '%s' in: %s", o.config_path, cases[i].why, log.text);
        assert_int_equal(cfg.level, 1);
        gpo_config_free(&cfg);
    }
    unlink(fifo);
    unlink(big);
}

static void layers_override_in_order_file_env_api(void **state)
{
    (void)state;
    const char *path = write_temp_file(0, "layers.json",
                                       "{\"level\": 0, \"device\": \"syncpu\", \"backend\": "
                                       "\"syncpu\", \"log\": \"error\"}");
    setenv("GPUOPT_CONFIG", path, 1);
    gpo_config cfg;
    log_capture log = {0};
    assert_int_equal(load(&cfg, NULL, &log), GPUOPT_OK);
    assert_string_equal(log.text, "");
    assert_int_equal(cfg.level, 0);
    assert_string_equal(cfg.device, "syncpu");
    assert_false(cfg.all_backends);
    assert_int_equal(cfg.n_backends, 1);
    assert_int_equal(cfg.log_level, GPUOPT_LOG_ERROR);
    gpo_config_free(&cfg);

    setenv("GPUOPT_LEVEL", "2", 1);
    setenv("GPUOPT_BACKEND", "synocl, SYNCPU,synocl", 1);
    assert_int_equal(load(&cfg, NULL, &log), GPUOPT_OK);
    assert_int_equal(cfg.level, 2);
    assert_int_equal(cfg.level_origin, GPO_ORIGIN_ENV);
    assert_int_equal(cfg.n_backends, 2);
    assert_string_equal(cfg.backends[0], "synocl");
    assert_string_equal(cfg.backends[1], "syncpu");
    assert_true(gpo_config_backend_allowed(&cfg, "synocl"));
    assert_false(gpo_config_backend_allowed(&cfg, "syncuda"));
    gpo_config_free(&cfg);

    gpuopt_options o = opts(0);
    o.level = "1";
    o.backends = "auto";
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_int_equal(cfg.level, 1);
    assert_int_equal(cfg.level_origin, GPO_ORIGIN_API);
    assert_true(cfg.all_backends);
    assert_string_equal(cfg.device, "syncpu"); /* still the file's */
    gpo_config_free(&cfg);

    /* Flags: ignore the environment, ignore the file. */
    o.level = NULL;
    o.backends = NULL;
    o.flags = GPUOPT_OPTION_IGNORE_ENV; /* GPUOPT_CONFIG too: no file unless given here */
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_int_equal(cfg.level, 1);
    assert_string_equal(cfg.config_path, "");
    gpo_config_free(&cfg);
    o.config_path = path;
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_int_equal(cfg.level, 0);
    gpo_config_free(&cfg);
    o.flags = GPUOPT_OPTION_IGNORE_ENV | GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.config_path = NULL;
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_int_equal(cfg.level, 1);
    gpo_config_free(&cfg);
    /* An empty GPUOPT_CONFIG reads no file; empty variables count as unset. */
    setenv("GPUOPT_CONFIG", "", 1);
    setenv("GPUOPT_LEVEL", "", 1);
    assert_int_equal(load(&cfg, NULL, &log), GPUOPT_OK);
    assert_int_equal(cfg.level, 1);
    assert_string_equal(cfg.config_path, "");
    gpo_config_free(&cfg);
}

static void bad_api_options_fail_creation_naming_the_field(void **state)
{
    (void)state;
    const struct {
        size_t offset;
        const char *value, *field;
    } cases[] = {
        {offsetof(gpuopt_options, level), "3", "gpuopt_options.level = \"3\""},
        {offsetof(gpuopt_options, log_level), "chatty", "gpuopt_options.log_level"},
        {offsetof(gpuopt_options, backends), "", "gpuopt_options.backends"},
        {offsetof(gpuopt_options, device), "syncuda:x", "gpuopt_options.device"},
        {offsetof(gpuopt_options, reduced_precision), "sometimes",
         "gpuopt_options.reduced_precision"},
        {offsetof(gpuopt_options, cache_dir), "", "gpuopt_options.cache_dir"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpuopt_options o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
        const char *value = cases[i].value;
        memcpy((char *)&o + cases[i].offset, &value, sizeof value);
        gpuopt_context *ctx = (gpuopt_context *)1;
        assert_int_equal(gpo_context_create_with(&o, syn_list, 3, &ctx), GPUOPT_ERR_CONFIG);
        assert_null(ctx);
        assert_non_null(strstr(gpuopt_last_error(), cases[i].field));
        assert_non_null(strstr(gpuopt_last_error(), "accepted"));
    }
    gpuopt_options small = opts(0);
    small.struct_size = 8;
    gpuopt_context *ctx;
    assert_int_equal(gpo_context_create_with(&small, syn_list, 3, &ctx), GPUOPT_ERR_STRUCT_SIZE);
    assert_int_equal(gpo_context_create_with(NULL, syn_list, 3, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
}

static void library_paths_and_sysfs_root_come_from_the_environment(void **state)
{
    (void)state;
    setenv("GPUOPT_CUDA_LIBRARY", "/tmp/fake/libcuda.so.1", 1);
    setenv("GPUOPT_OPENCL_LIBRARY", "", 1);
    setenv("GPUOPT_SYSFS_ROOT", "/recorded/tree///", 1);
    setenv("GPUOPT_CACHE_DIR", "/var/cache/x", 1);
    gpo_config cfg;
    log_capture log = {0};
    gpuopt_options o = opts(GPUOPT_OPTION_IGNORE_CONFIG_FILE);
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_string_equal(gpo_config_library(&cfg, "cuda"), "/tmp/fake/libcuda.so.1");
    assert_null(gpo_config_library(&cfg, "opencl"));
    assert_null(gpo_config_library(&cfg, "no-such-library"));
    assert_string_equal(cfg.fs.root, "/recorded/tree");
    assert_string_equal(cfg.cache_dir, "/var/cache/x");
    gpo_config_free(&cfg);
    setup(NULL);
}

/* A privileged process (set-user-ID: glibc's secure-execution mode) takes
 * no path from the environment or a config file: GPUOPT_CONFIG, HOME and
 * XDG_* choose no config file, the cache, sysfs root and library variables
 * are ignored, and one warning names what was ignored. Settings that are
 * not paths still count. The setuid test (tests/security) runs the same
 * through a real set-user-ID program. */
static void privileged_process_ignores_every_path_from_the_environment(void **state)
{
    (void)state;
    const char *hostile = write_temp_file(0, "hostile.json",
                                          "{\"level\": 0, \"libraries\": {\"cuda\": "
                                          "\"/tmp/evil.so\"}, \"cache_dir\": \"/tmp/evil\", "
                                          "\"cache_shared\": \"/tmp/evil-shared\"}");
    char dir[512];
    gpo_strlcpy(dir, hostile, sizeof dir);
    *strrchr(dir, '/') = '\0';
    setenv("GPUOPT_CONFIG", hostile, 1);
    setenv("XDG_CONFIG_HOME", dir, 1);
    setenv("HOME", dir, 1);
    setenv("XDG_CACHE_HOME", dir, 1);
    setenv("GPUOPT_CACHE_DIR", "/tmp/evil-cache", 1);
    setenv("GPUOPT_SYSFS_ROOT", "/tmp/evil-root", 1);
    setenv("GPUOPT_CACHE_SHARED", "/tmp/evil-shared", 1);
    setenv("GPUOPT_CUDA_LIBRARY", "/tmp/evil.so", 1);
    setenv("GPUOPT_DEVICE", "syncpu:0", 1);
    gpo_config cfg;
    log_capture log = {0};
    gpo_logger l = {GPUOPT_LOG_WARN, capture_log, &log};
    gpuopt_options o = opts(0);
    assert_int_equal(gpo_config_load_as(&cfg, &o, &l, syn_list, 3, 1), GPUOPT_OK);
    assert_string_equal(cfg.config_path, "");
    assert_int_equal(cfg.level, 1);
    assert_string_equal(cfg.cache_dir, "");
    assert_string_equal(cfg.cache_shared, "");
    assert_false(gpo_fs_is_recorded(&cfg.fs));
    assert_null(gpo_config_library(&cfg, "cuda"));
    assert_string_equal(cfg.device, "syncpu:0"); /* not a path: kept */
    assert_int_equal(log.count, 1);
    assert_non_null(strstr(log.text, "privileged process"));
    assert_non_null(strstr(log.text, "GPUOPT_CONFIG, XDG_CONFIG_HOME, HOME, GPUOPT_CACHE_DIR, "
                                     "XDG_CACHE_HOME, GPUOPT_SYSFS_ROOT, GPUOPT_CACHE_SHARED, "
                                     "GPUOPT_CUDA_LIBRARY"));
    assert_non_null(strstr(log.text, "config file: none; cache: none"));
    gpo_config_free(&cfg);

    /* Unprivileged, the same environment counts. */
    memset(&log, 0, sizeof log);
    assert_int_equal(gpo_config_load_as(&cfg, &o, &l, syn_list, 3, 0), GPUOPT_OK);
    assert_string_equal(cfg.config_path, hostile);
    assert_int_equal(cfg.level, 0);
    assert_string_equal(cfg.cache_dir, "/tmp/evil-cache");
    assert_string_equal(cfg.cache_shared, "/tmp/evil-shared");
    assert_string_equal(gpo_config_library(&cfg, "cuda"), "/tmp/evil.so");
    gpo_config_free(&cfg);
    setup(NULL);
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("XDG_CACHE_HOME");
}

/* A file the program itself names still counts when privileged, except
 * its paths; paths the program passes in gpuopt_options count. With only
 * HOME set (every login), the line is information, not a warning. */
static void privileged_process_takes_paths_only_from_its_options(void **state)
{
    (void)state;
    const char *named = write_temp_file(0, "named.json",
                                        "{\"level\": 0, \"libraries\": {\"cuda\": "
                                        "\"/tmp/evil.so\"}, \"sysfs_root\": \"/tmp/r\", "
                                        "\"cache_dir\": \"/tmp/c\"}");
    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", "/tmp", 1);
    gpo_config cfg;
    log_capture log = {0};
    gpo_logger l = {GPUOPT_LOG_INFO, capture_log, &log};
    gpuopt_options o = opts(0);
    o.config_path = named;
    o.cache_dir = "/var/cache/trusted";
    o.log_level = "info";
    assert_int_equal(gpo_config_load_as(&cfg, &o, &l, syn_list, 3, 1), GPUOPT_OK);
    assert_int_equal(cfg.level, 0);
    assert_string_equal(cfg.cache_dir, "/var/cache/trusted");
    assert_false(gpo_fs_is_recorded(&cfg.fs));
    assert_null(gpo_config_library(&cfg, "cuda"));
    assert_non_null(strstr(log.text, "\"libraries\" ignored: a privileged process"));
    assert_non_null(strstr(log.text, "\"sysfs_root\" ignored"));
    assert_non_null(strstr(log.text, "\"cache_dir\" ignored"));
    assert_non_null(strstr(log.text, "3:privileged process")); /* info */
    assert_non_null(strstr(log.text, "ignored: HOME; config file: "));
    gpo_config_free(&cfg);
    if (home) {
        setenv("HOME", home, 1);
        free(home);
    }
}

static void log_level_from_env_filters_config_warnings(void **state)
{
    (void)state;
    setenv("GPUOPT_LOG", "error", 1);
    setenv("GPUOPT_LEVEL", "9", 1);
    gpo_config cfg;
    log_capture log = {0};
    gpuopt_options o = opts(GPUOPT_OPTION_IGNORE_CONFIG_FILE);
    assert_int_equal(load(&cfg, &o, &log), GPUOPT_OK);
    assert_int_equal(log.count, 0);
    gpo_config_free(&cfg);
    setup(NULL);
}

/* The origin project's "use_cuda": false is the CPU only, true today's
 * auto; a "backend" key that says otherwise contradicts it, and then
 * neither is used, the warning naming both. */
static void legacy_use_cuda_chooses_backends_and_refuses_a_contradicting_backend(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        int all;          /* expected all_backends */
        const char *one;  /* else the one backend expected */
        const char *says; /* part of the one warning, or NULL for none */
    } rows[] = {
        {"{\"use_cuda\": false}", 0, "cpu", NULL},
        {"{\"use_cuda\": true}", 1, NULL, NULL},
        {"{\"use_cuda\": \"false\", \"backend\": \"cpu\"}", 0, "cpu", NULL},
        {"{\"backend\": \"auto\", \"use_cuda\": true}", 1, NULL, NULL},
        {"{\"use_cuda\": false, \"backend\": \"cuda\"}", 1, NULL,
         "\"use_cuda\": false and \"backend\": \"cuda\" contradict each other (use_cuda "
         "false means backend \"cpu\"); both are ignored"},
        {"{\"backend\": \"cpu\", \"use_cuda\": true}", 1, NULL,
         "\"use_cuda\": true and \"backend\": \"cpu\" contradict each other"},
        {"{\"use_cuda\": false, \"backend\": \"cpu,cuda\"}", 1, NULL, "contradict each other"},
        {"{\"use_cuda\": \"sometimes\"}", 1, NULL, "\"use_cuda\" is not accepted"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gpo_config cfg;
        log_capture log = {0};
        gpuopt_options o = opts(0);
        gpo_logger l = {GPUOPT_LOG_WARN, capture_log, &log};
        o.config_path = write_temp_file(0, "use_cuda.json", rows[i].json);
        assert_int_equal(gpo_config_load(&cfg, &o, &l, gpo_backends, gpo_n_backends), GPUOPT_OK);
        if (cfg.all_backends != rows[i].all)
            fail_msg("%s: all_backends %d", rows[i].json, cfg.all_backends);
        if (rows[i].one) {
            assert_int_equal(cfg.n_backends, 1);
            assert_string_equal(cfg.backends[0], rows[i].one);
        }
        if (rows[i].says ? !strstr(log.text, rows[i].says) || log.count != 1 : log.count != 0)
            fail_msg("%s: the log says '%s'", rows[i].json, log.text);
        gpo_config_free(&cfg);
    }
    /* The environment still overrides the file. */
    gpo_config cfg;
    log_capture log = {0};
    gpuopt_options o = opts(0);
    gpo_logger l = {GPUOPT_LOG_WARN, capture_log, &log};
    o.config_path = write_temp_file(0, "use_cuda.json", "{\"use_cuda\": false}");
    setenv("GPUOPT_BACKEND", "cuda", 1);
    assert_int_equal(gpo_config_load(&cfg, &o, &l, gpo_backends, gpo_n_backends), GPUOPT_OK);
    unsetenv("GPUOPT_BACKEND");
    assert_int_equal(cfg.n_backends, 1);
    assert_string_equal(cfg.backends[0], "cuda");
    gpo_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(defaults_apply_when_nothing_is_set, setup),
        cmocka_unit_test_setup(
            bad_environment_values_warn_with_variable_value_and_accepted_and_keep_default, setup),
        cmocka_unit_test_setup(malformed_config_file_is_reported_with_line_and_column_and_ignored,
                               setup),
        cmocka_unit_test_setup(config_file_values_are_checked_one_by_one, setup),
        cmocka_unit_test_setup(config_file_numbers_beyond_int64_are_refused_without_a_cast, setup),
        cmocka_unit_test_setup(config_file_must_be_a_small_regular_file, setup),
        cmocka_unit_test_setup(layers_override_in_order_file_env_api, setup),
        cmocka_unit_test_setup(bad_api_options_fail_creation_naming_the_field, setup),
        cmocka_unit_test_setup(library_paths_and_sysfs_root_come_from_the_environment, setup),
        cmocka_unit_test_setup(privileged_process_ignores_every_path_from_the_environment, setup),
        cmocka_unit_test_setup(privileged_process_takes_paths_only_from_its_options, setup),
        cmocka_unit_test_setup(log_level_from_env_filters_config_warnings, setup),
        cmocka_unit_test_setup(legacy_use_cuda_chooses_backends_and_refuses_a_contradicting_backend,
                               setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
