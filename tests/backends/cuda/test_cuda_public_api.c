/* The CUDA backend through the public API, as `gpuopt devices --json` sees
 * it: GPUOPT_CUDA_LIBRARY points at the test double describing an H100 and
 * an RTX 4090 (set by CTest). */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"

static cJSON *find(cJSON *array, const char *key, const char *value)
{
    cJSON *item;
    cJSON_ArrayForEach(item, array)
    {
        cJSON *v = cJSON_GetObjectItem(item, key);
        if (cJSON_IsString(v) && strcmp(v->valuestring, value) == 0)
            return item;
    }
    return NULL;
}

static const char *str(cJSON *o, const char *path1, const char *path2)
{
    cJSON *v = cJSON_GetObjectItem(o, path1);
    if (path2)
        v = cJSON_GetObjectItem(v, path2);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void devices_json_reports_each_described_gpu(void **state)
{
    (void)state;
    gpuopt_context *ctx = NULL;
    char *text = NULL;
    assert_int_equal(gpuopt_context_create(NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_context_to_json(ctx, &text), GPUOPT_OK);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);

    cJSON *cuda = find(cJSON_GetObjectItem(root, "backends"), "name", "cuda");
    assert_non_null(cuda);
    assert_string_equal(str(cuda, "status", NULL), "available");
    assert_string_equal(str(cuda, "driver_version", NULL), "13.0");
    assert_non_null(strstr(str(cuda, "library", NULL), "full/libcuda.so.1"));
    assert_int_equal(cJSON_GetObjectItem(cuda, "device_count")->valueint, 2);

    cJSON *devices = cJSON_GetObjectItem(root, "devices");
    cJSON *h100 = find(devices, "id", "cuda:0");
    cJSON *ada = find(devices, "id", "cuda:1");
    assert_non_null(h100);
    assert_non_null(ada);
    assert_string_equal(str(h100, "name", NULL), "NVIDIA H100 80GB HBM3");
    assert_string_equal(str(h100, "arch", "family"), "hopper");
    assert_string_equal(str(h100, "arch", "name"), "sm_90");
    assert_string_equal(str(h100, "arch", "compute_capability"), "9.0");
    assert_int_equal(cJSON_GetObjectItem(h100, "simd_width")->valueint, 32);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(h100, "features"), "fp8")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(h100, "features"), "tf32")));
    assert_string_equal(str(h100, "uuid", NULL), "GPU-6f8b0d2e-4a5c-4e7a-9c1d-1e3f5a7b9c1d");
    assert_string_equal(str(h100, "pci_bus_id", NULL), "0000:18:00.0");
    cJSON *details = cJSON_GetObjectItem(cJSON_GetObjectItem(h100, "details"), "cuda");
    assert_int_equal(cJSON_GetObjectItem(details, "memory_bus_width_bits")->valueint, 5120);
    assert_string_equal(str(ada, "arch", "family"), "ada");
    assert_string_equal(str(ada, "arch", "name"), "sm_89");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(ada, "features"), "fp8")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(ada, "features"), "fp64")));
    cJSON_Delete(root);
    gpuopt_free(text);
    gpuopt_context_destroy(ctx);
}

static void auto_selection_takes_a_cuda_gpu(void **state)
{
    (void)state;
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    gpuopt_device_info info;
    assert_int_equal(gpuopt_context_create(NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, "cuda", &dev), GPUOPT_OK);
    info.struct_size = sizeof info;
    assert_int_equal(gpuopt_device_get_info(dev, &info), GPUOPT_OK);
    assert_string_equal(info.backend, "cuda");
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(devices_json_reports_each_described_gpu),
        cmocka_unit_test(auto_selection_takes_a_cuda_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
