/* Loading the CUDA backend: cuInit failures in words, what the report says,
 * broken and old driver libraries, and malformed inputs to every
 * entry point. Driven through the libcuda.so.1 test doubles. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend_env.h"
#include "cuda/cuda_backend.h"
#include "cuda/cuda_load.h"
#include "cuda_test_util.h"

#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"

static fake_cuda full, legacy;

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("GPUOPT_FAKE_CUDA_DRIVER_VERSION");
    if (fake_cuda_open(&full, FAKE_CUDA_FULL) != 0 || fake_cuda_open(&legacy, FAKE_CUDA_LEGACY))
        return -1;
    return 0;
}

static gpuopt_status load(const char *library, const char *root, void **st, gpo_backend_report *rep)
{
    cuda_env e;
    cuda_env_init(&e, library, root);
    return gpo_backend_cuda.load(&e.env, st, rep);
}

/* Every cuInit result the issue names, and two it does not. */
static const struct init_case {
    const char *init;
    gpuopt_status status;
    const char *words;
} init_cases[] = {
    {"CUDA_ERROR_NO_DEVICE", GPUOPT_ERR_UNAVAILABLE, "the NVIDIA driver found no CUDA-capable GPU"},
    {"CUDA_ERROR_STUB_LIBRARY", GPUOPT_ERR_DRIVER,
     "the CUDA toolkit's stub libcuda was found instead of a driver"},
    {"35", GPUOPT_ERR_DRIVER, "the installed NVIDIA driver is older than this CUDA library needs"},
    {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", GPUOPT_ERR_DRIVER,
     "does not match the version of the loaded NVIDIA kernel module"},
    {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", GPUOPT_ERR_DRIVER,
     "this GPU does not support forward compatibility"},
    {"CUDA_ERROR_NOT_INITIALIZED", GPUOPT_ERR_DRIVER, "fork()ed from one that had already"},
    {"CUDA_ERROR_OPERATING_SYSTEM", GPUOPT_ERR_DRIVER, "/dev/nvidia"},
    {"CUDA_ERROR_SYSTEM_NOT_READY", GPUOPT_ERR_DRIVER, "nvidia-fabricmanager"},
    {"CUDA_ERROR_UNKNOWN", GPUOPT_ERR_DRIVER,
     "cuInit failed with CUDA_ERROR_UNKNOWN (unknown error)"},
    {"12345", GPUOPT_ERR_DRIVER, "cuInit failed with CUresult 12345"},
};

static void each_cuinit_failure_gives_its_sentence(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof init_cases / sizeof init_cases[0]; i++) {
        const struct init_case *c = &init_cases[i];
        gpo_backend_report rep;
        void *st = (void *)1;
        fake_cuda_configure(&full, fake_devices("h100-sxm5.json", NULL), c->init, NULL);
        gpuopt_status got = load(FAKE_CUDA_FULL, NO_KERNEL_DRIVER, &st, &rep);
        assert_int_equal(got, c->status);
        assert_null(st);
        if (!strstr(rep.reason, c->words))
            fail_msg("cuInit %s: reason '%s' lacks '%s'", c->init, rep.reason, c->words);
        /* The library's own name for the result, and the library's path. */
        if (c->init[0] == 'C')
            assert_non_null(strstr(rep.reason, c->init));
        assert_non_null(strstr(rep.reason, "full/libcuda.so.1"));
        /* The same words reach gpuopt_last_error. */
        assert_non_null(strstr(gpo_detail_get(), c->words));
        /* cuDriverGetVersion needs no cuInit: the version is known anyway. */
        assert_string_equal(rep.driver_version, "13.0");
    }
}

static void no_device_names_the_visibility_variable_that_hides_them(void **state)
{
    (void)state;
    gpo_backend_report rep;
    void *st = NULL;
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    fake_cuda_configure(&full, fake_devices("h100-sxm5.json", NULL), NULL, NULL);
    assert_int_equal(load(FAKE_CUDA_FULL, NO_KERNEL_DRIVER, &st, &rep), GPUOPT_ERR_UNAVAILABLE);
    unsetenv("CUDA_VISIBLE_DEVICES");
    assert_non_null(strstr(rep.reason, "CUDA_ERROR_NO_DEVICE"));
    assert_non_null(strstr(rep.reason, "CUDA_VISIBLE_DEVICES='' may hide them"));
}

static void no_device_with_kernel_gpus_points_at_device_permissions(void **state)
{
    (void)state;
    gpo_backend_report rep;
    void *st = NULL;
    fake_cuda_configure(&full, NULL, "CUDA_ERROR_NO_DEVICE", NULL);
    /* GPUs the kernel has and the driver cannot open: present but broken. */
    assert_int_equal(load(FAKE_CUDA_FULL, GPO_FIXTURES_DIR "/nvidia/hgx-h100-open-580", &st, &rep),
                     GPUOPT_ERR_DRIVER);
    /* A GPU CUDA does not see stays unlisted (it may be hidden on purpose). */
    assert_null(st);
    assert_non_null(strstr(rep.reason, "the kernel driver lists 2 GPUs"));
    assert_non_null(strstr(rep.reason, "/dev/nvidia"));
}

static void broken_driver_with_kernel_gpus_is_an_error_that_counts_them(void **state)
{
    (void)state;
    gpo_backend_report rep;
    void *st = NULL;
    fake_cuda_configure(&full, NULL, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", NULL);
    assert_int_equal(load(FAKE_CUDA_FULL, GPO_FIXTURES_DIR "/nvidia/hgx-h100-open-580", &st, &rep),
                     GPUOPT_ERR_DRIVER);
    assert_null(st);
    assert_non_null(strstr(rep.reason, "the NVIDIA kernel driver 580.65.06 lists 2 GPUs"));
}

static void loaded_library_and_driver_version_are_reported(void **state)
{
    (void)state;
    gpo_backend_report rep;
    void *st = NULL;
    char real[PATH_MAX];
    assert_non_null(realpath(FAKE_CUDA_FULL, real));
    setenv("GPUOPT_FAKE_CUDA_DRIVER_VERSION", "12040", 1);
    fake_cuda_configure(&full, fake_devices("t4.json", NULL), NULL, NULL);
    unsetenv("GPUOPT_FAKE_CUDA_DRIVER_VERSION");
    assert_int_equal(load(FAKE_CUDA_FULL, NO_KERNEL_DRIVER, &st, &rep), GPUOPT_OK);
    assert_non_null(st);
    assert_string_equal(rep.library, real);
    assert_string_equal(rep.driver_version, "12.4");
    assert_string_equal(rep.reason, "");
    assert_string_equal(rep.runtime_version, "");
    /* Loading initialises the driver and nothing else. */
    assert_int_equal(full.calls("cuInit"), 1);
    assert_int_equal(full.calls("cuDevicePrimaryCtxRetain"), 0);
    gpo_backend_cuda.unload(st);
}

static void failed_version_query_is_a_note_not_a_failure(void **state)
{
    (void)state;
    gpo_backend_report rep;
    void *st = NULL;
    fake_cuda_configure(&full, fake_devices("t4.json", NULL), NULL,
                        "cuDriverGetVersion:1:CUDA_ERROR_UNKNOWN");
    assert_int_equal(load(FAKE_CUDA_FULL, NO_KERNEL_DRIVER, &st, &rep), GPUOPT_OK);
    assert_string_equal(rep.driver_version, "");
    assert_non_null(strstr(rep.reason, "note: cuDriverGetVersion failed (CUDA_ERROR_UNKNOWN"));
    gpo_backend_cuda.unload(st);
}

static void library_without_a_required_symbol_is_a_driver_error(void **state)
{
    (void)state;
    gpo_backend_report rep;
    void *st = (void *)1;
    assert_int_equal(load(FAKE_CUDA_BROKEN, NO_KERNEL_DRIVER, &st, &rep), GPUOPT_ERR_DRIVER);
    assert_null(st);
    assert_non_null(strstr(rep.reason, "lacks cuDeviceGetAttribute"));
    assert_non_null(strstr(rep.reason, "broken/libcuda.so.1"));
}

static void old_driver_results_are_named_from_the_built_in_table(void **state)
{
    (void)state;
    gpo_backend_report rep;
    void *st = NULL;
    /* The legacy flavour has no cuGetErrorName/cuGetErrorString. */
    fake_cuda_configure(&legacy, fake_devices("k80.json", NULL),
                        "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", NULL);
    assert_int_equal(load(FAKE_CUDA_LEGACY, NO_KERNEL_DRIVER, &st, &rep), GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(rep.reason, "cuInit failed with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:"));
    assert_int_equal(legacy.calls("cuGetErrorName"), 0);
}

static void result_words_cover_names_library_words_and_unknown_values(void **state)
{
    (void)state;
    char out[128];
    assert_string_equal(gpo_cuda_result_name(GPO_CUDA_ERROR_NO_DEVICE), "CUDA_ERROR_NO_DEVICE");
    assert_string_equal(gpo_cuda_result_name(35), "CUDA_ERROR_INSUFFICIENT_DRIVER");
    assert_null(gpo_cuda_result_name(-7));
    gpo_cuda_result_words(NULL, GPO_CUDA_ERROR_STUB_LIBRARY, out, sizeof out);
    assert_string_equal(out, "CUDA_ERROR_STUB_LIBRARY");
    gpo_cuda_result_words(NULL, -7, out, sizeof out);
    assert_string_equal(out, "CUresult -7");
    /* Truncation always terminates; NULL or empty output is ignored. */
    gpo_cuda_result_words(NULL, GPO_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, out, 5);
    assert_string_equal(out, "CUDA");
    gpo_cuda_result_words(NULL, 0, NULL, 16);
    gpo_cuda_result_words(NULL, 0, out, 0);
}

/* The doctor's advice for a cuInit failure comes from load's own table,
 * found by the result's whole name in the reason. */
static void init_advice_is_found_by_the_whole_result_name(void **state)
{
    (void)state;
    const char *advice = gpo_cuda_init_advice(
        "cuInit failed with CUDA_ERROR_SYSTEM_NOT_READY (system not yet initialized): ...");
    assert_non_null(advice);
    assert_non_null(strstr(advice, "nvidia-fabricmanager"));
    assert_non_null(strstr(gpo_cuda_init_advice("cuInit failed with CUDA_ERROR_DEVICE_UNAVAILABLE"),
                           "nvidia-smi -c DEFAULT"));
    /* Where the doctor says more from what it sees, the table has no advice. */
    assert_null(gpo_cuda_init_advice("cuInit failed with CUDA_ERROR_NO_DEVICE"));
    assert_null(gpo_cuda_init_advice("cuInit failed with CUDA_ERROR_NOT_INITIALIZED_LATER"));
    assert_null(gpo_cuda_init_advice("cuInit failed with CUresult 999"));
}

static void version_text_and_call_failures_read_as_words(void **state)
{
    (void)state;
    char out[16];
    gpo_cuda_version_text(13000, out, sizeof out);
    assert_string_equal(out, "13.0");
    gpo_cuda_version_text(12040, out, sizeof out);
    assert_string_equal(out, "12.4");
    gpo_cuda_version_text(11080, out, sizeof out);
    assert_string_equal(out, "11.8");
    gpo_cuda_version_text(0, out, sizeof out);
    assert_string_equal(out, "");
    gpo_cuda_version_text(-1, out, sizeof out);
    assert_string_equal(out, "");
    gpo_cuda_version_text(2147483647, out, 4);
    assert_int_equal(strlen(out), 3);
    /* Without a state the built-in names are used. */
    assert_int_equal(gpo_cuda_fail_call(NULL, GPUOPT_ERR_DRIVER, "cuda: x", "cuFoo", 999),
                     GPUOPT_ERR_DRIVER);
    assert_string_equal(gpo_detail_get(), "cuda: x: cuFoo failed: CUDA_ERROR_UNKNOWN");
}

/* The ops' arguments are the core's contract (asserted); what is left to
 * refuse is a device the driver does not have. */
static void a_device_the_driver_lacks_is_refused_in_its_words(void **state)
{
    (void)state;
    cuda_env e;
    gpo_backend_report rep;
    void *st = NULL;
    uint64_t free_bytes = 1;
    cuda_env_init(&e, FAKE_CUDA_FULL, NO_KERNEL_DRIVER);
    gpo_backend_cuda.unload(NULL); /* like free(NULL) */

    fake_cuda_configure(&full, fake_devices("a100-sxm4-40gb.json", NULL), NULL, NULL);
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_OK);
    gpo_route route;
    memset(&route, 0, sizeof route);
    route.index = 7;
    gpo_memory_reading live;
    live.free = free_bytes;
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, GPO_MEMORY_MAY_CREATE_CONTEXT, &live),
                     GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(gpo_detail_get(), "cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE"));
    assert_int_equal(live.free, 0);
    assert_int_equal(full.live_contexts(), 0);
    gpo_backend_cuda.unload(st);
}

static void the_ops_table_is_complete_and_honest(void **state)
{
    (void)state;
    const gpo_backend *b = &gpo_backend_cuda;
    assert_int_equal(b->abi, GPO_BACKEND_ABI);
    assert_string_equal(b->name, "cuda");
    assert_int_equal(b->native_gpu, 1);
    assert_int_equal(b->fork_sensitive, 1);
    assert_non_null(b->load);
    assert_non_null(b->unload);
    assert_non_null(b->enumerate);
    assert_non_null(b->memory_live);
    assert_non_null(b->tier0);
    assert_non_null(b->tier1);
    /* Measured settings are the core's tier 2, through the runtime. */
    assert_null(b->tier2);
    assert_non_null(b->runtime);
    assert_string_equal(b->runtime->language, "cuda");
    /* Every op is there, the optional ones included. */
    const gpo_runtime_ops *r = b->runtime;
    assert_true(r->open && r->close && r->buffer_alloc && r->buffer_free && r->buffer_write &&
                r->buffer_read && r->buffer_copy && r->host_alloc_pinned && r->host_free_pinned &&
                r->program_build && r->program_free && r->kernel_create && r->kernel_free &&
                r->kernel_set_buffer && r->kernel_set_scalar && r->kernel_set_local &&
                r->kernel_max_group && r->launch && r->finish && r->compiler_version);
    /* The catalogue is sized by its rows: every one is a CUDA knob, named
     * once, with its meaning. */
    assert_non_null(b->knobs);
    assert_true(b->n_knobs > 0);
    for (size_t i = 0; i < b->n_knobs; i++) {
        assert_non_null(b->knobs[i].name);
        assert_true(strncmp(b->knobs[i].name, "cuda.", 5) == 0);
        assert_non_null(b->knobs[i].summary);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(b->knobs[i].name, b->knobs[j].name);
    }
    /* The registry lists it first: native GPU APIs lead. */
    assert_true(gpo_n_backends >= 1);
    assert_ptr_equal(gpo_backends[0], b);
}

/* docs/knobs.md documents every knob of the catalogue, in the CUDA
 * section's table, with the environment variable it exports to. */
static void every_knob_is_documented_in_knobs_md(void **state)
{
    (void)state;
    FILE *f = fopen(GPO_KNOBS_MD, "rb");
    assert_non_null(f);
    static char text[1 << 18];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *section = strstr(text, "\n## CUDA backend");
    assert_non_null(section);
    const char *end = strstr(section + 1, "\n## ");
    const gpo_knob_def *knobs = gpo_backend_cuda.knobs;
    for (size_t i = 0; i < gpo_backend_cuda.n_knobs; i++) {
        char row[128];
        snprintf(row, sizeof row, "\n| `%s` |", knobs[i].name);
        const char *at = strstr(section, row);
        if (!at || (end && at > end))
            fail_msg("%s has no row in docs/knobs.md's CUDA section", knobs[i].name);
        if (knobs[i].env) {
            const char *eol = strchr(at + 1, '\n');
            char env[96];
            snprintf(env, sizeof env, "`%s`", knobs[i].env);
            const char *mention = strstr(at, env);
            if (!mention || (eol && mention > eol))
                fail_msg("%s: its row does not name %s", knobs[i].name, env);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_cuinit_failure_gives_its_sentence),
        cmocka_unit_test(no_device_names_the_visibility_variable_that_hides_them),
        cmocka_unit_test(no_device_with_kernel_gpus_points_at_device_permissions),
        cmocka_unit_test(broken_driver_with_kernel_gpus_is_an_error_that_counts_them),
        cmocka_unit_test(loaded_library_and_driver_version_are_reported),
        cmocka_unit_test(failed_version_query_is_a_note_not_a_failure),
        cmocka_unit_test(library_without_a_required_symbol_is_a_driver_error),
        cmocka_unit_test(old_driver_results_are_named_from_the_built_in_table),
        cmocka_unit_test(result_words_cover_names_library_words_and_unknown_values),
        cmocka_unit_test(init_advice_is_found_by_the_whole_result_name),
        cmocka_unit_test(version_text_and_call_failures_read_as_words),
        cmocka_unit_test(a_device_the_driver_lacks_is_refused_in_its_words),
        cmocka_unit_test(the_ops_table_is_complete_and_honest),
        cmocka_unit_test(every_knob_is_documented_in_knobs_md),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
