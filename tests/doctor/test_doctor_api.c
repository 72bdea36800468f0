/* gpuopt_context_diagnose through the public API, in process: NULL and bad input, the
 * JSON on a recorded tree chosen through gpuopt_options.sysfs_root, with the
 * CUDA test double, and on this machine; asking twice gives the same answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doctor_test_util.h"
#include "gpuopt/gpuopt.h"

static void unset_controlled(void)
{
    for (const char *const *v = dr_controlled_vars; *v; v++)
        unsetenv(*v);
}

static gpuopt_context *context_on(const char *tree)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.sysfs_root = tree ? dr_tree(0, tree) : NULL;
    o.log_level = "error";
    gpuopt_context *ctx = NULL;
    assert_int_equal(gpuopt_context_create(&o, &ctx), GPUOPT_OK);
    return ctx;
}

static cJSON *diagnose(gpuopt_context *ctx)
{
    char *text = NULL;
    assert_int_equal(gpuopt_context_diagnose(ctx, &text), GPUOPT_OK);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    gpuopt_free(text);
    dr_assert_well_formed(root);
    return root;
}

static void null_context_or_output_is_invalid_argument(void **state)
{
    (void)state;
    char *text = (char *)"untouched";
    assert_int_equal(gpuopt_context_diagnose(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(text);
    assert_non_null(strstr(gpuopt_last_error(), "ctx is NULL"));
    assert_int_equal(gpuopt_context_diagnose(NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    gpuopt_context *ctx = context_on("opencl-no-icds");
    assert_int_equal(gpuopt_context_diagnose(ctx, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "json is NULL"));
    gpuopt_context_destroy(ctx);
}

static void recorded_root_from_options_is_diagnosed(void **state)
{
    (void)state;
    unset_controlled();
    gpuopt_context *ctx = context_on("amd-rx7900xtx-render");
    cJSON *root = diagnose(ctx);
    assert_non_null(
        strstr(cJSON_GetObjectItem(root, "sysfs_root")->valuestring, "amd-rx7900xtx-render"));
    cJSON *user = cJSON_GetObjectItem(root, "user");
    assert_string_equal(dr_str(user, "name"), "alice");
    assert_string_equal(dr_str(user, "source"), "/proc/self/status");
    assert_int_equal(cJSON_GetObjectItem(user, "uid")->valueint, 1000);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(user, "groups")), 2);
    assert_non_null(dr_finding(root, "rocm", "device_permissions", "problem"));
    assert_int_equal(cJSON_GetObjectItem(root, "accelerators_usable")->valueint, 0);
    /* Every backend block is there, compiled in or not. */
    const char *names[] = {"cuda", "rocm", "opencl", "cpu"};
    cJSON *b = cJSON_GetObjectItem(root, "backends");
    for (int i = 0; i < 4; i++)
        assert_string_equal(dr_str(cJSON_GetArrayItem(b, i), "name"), names[i]);
    cJSON_Delete(root);
    gpuopt_context_destroy(ctx);
}

static void usable_gpu_of_the_driver_double_is_an_accelerator(void **state)
{
    (void)state;
    unset_controlled();
    setenv("GPUOPT_CUDA_LIBRARY", GPO_FAKE_CUDA, 1);
    setenv("GPUOPT_FAKE_CUDA_DEVICES", GPO_FAKE_CUDA_DEVICES_DIR "/h100-sxm5.json", 1);
    setenv("GPUOPT_NVRTC_LIBRARY", GPO_FAKE_NVRTC, 1);
    gpuopt_context *ctx = context_on("nvidia-h100");
    cJSON *first = diagnose(ctx);
    assert_int_equal(cJSON_GetObjectItem(first, "accelerators_usable")->valueint, 1);
    assert_non_null(strstr(dr_str(first, "verdict"), "cuda:0 (NVIDIA H100 80GB HBM3)"));
    cJSON *cuda = cJSON_GetArrayItem(cJSON_GetObjectItem(first, "backends"), 0);
    assert_string_equal(dr_str(cuda, "status"), "available");
    assert_int_equal(cJSON_GetObjectItem(cuda, "usable_accelerators")->valueint, 1);
    /* Asking again on the same context gives the same findings. */
    cJSON *second = diagnose(ctx);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(first, "findings")),
                     cJSON_GetArraySize(cJSON_GetObjectItem(second, "findings")));
    cJSON_Delete(first);
    cJSON_Delete(second);
    gpuopt_context_destroy(ctx);
    unset_controlled();
}

static void this_machine_answers_with_well_formed_findings(void **state)
{
    (void)state;
    unset_controlled();
    gpuopt_context *ctx = context_on(NULL);
    cJSON *root = diagnose(ctx);
    cJSON *user = cJSON_GetObjectItem(root, "user");
    assert_string_equal(dr_str(user, "source"), "this process");
    assert_non_null(dr_finding(root, "cpu", "backend", "ok"));
    cJSON_Delete(root);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(null_context_or_output_is_invalid_argument),
        cmocka_unit_test(recorded_root_from_options_is_diagnosed),
        cmocka_unit_test(usable_gpu_of_the_driver_double_is_an_accelerator),
        cmocka_unit_test(this_machine_answers_with_well_formed_findings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
