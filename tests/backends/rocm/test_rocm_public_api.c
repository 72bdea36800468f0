/* The ROCm backend through the public API, as `gpuopt devices --json` sees
 * it: GPUOPT_HIP_LIBRARY points at the ROCm 6 test double describing an
 * MI300X and an RX 7900 XTX, and GPUOPT_SYSFS_ROOT at the MI300X KFD tree
 * (set by CTest). */
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

static const char *str(cJSON *o, const char *key1, const char *key2)
{
    cJSON *v = cJSON_GetObjectItem(o, key1);
    if (key2)
        v = cJSON_GetObjectItem(v, key2);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int feature(cJSON *dev, const char *name)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(dev, "features"), name));
}

static void devices_json_reports_each_described_gpu(void **state)
{
    gpuopt_context *ctx = NULL;
    char *text = NULL;
    (void)state;
    assert_int_equal(gpuopt_context_create(NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_context_to_json(ctx, &text), GPUOPT_OK);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);

    cJSON *rocm = find(cJSON_GetObjectItem(root, "backends"), "name", "rocm");
    assert_non_null(rocm);
    assert_string_equal(str(rocm, "status", NULL), "available");
    assert_string_equal(str(rocm, "runtime_version", NULL), "6.2.41133");
    assert_non_null(strstr(str(rocm, "library", NULL), "hip6/libamdhip64.so.6"));
    assert_int_equal(cJSON_GetObjectItem(rocm, "device_count")->valueint, 2);

    cJSON *devices = cJSON_GetObjectItem(root, "devices");
    cJSON *mi300x = find(devices, "id", "rocm:0");
    cJSON *navi31 = find(devices, "id", "rocm:1");
    assert_non_null(mi300x);
    assert_non_null(navi31);
    assert_string_equal(str(mi300x, "name", NULL), "AMD Instinct MI300X");
    assert_string_equal(str(mi300x, "arch", "family"), "cdna3");
    assert_string_equal(str(mi300x, "arch", "name"), "gfx942");
    assert_int_equal(cJSON_GetObjectItem(mi300x, "simd_width")->valueint, 64);
    assert_int_equal(cJSON_GetObjectItem(mi300x, "compute_units")->valueint, 304);
    assert_true(feature(mi300x, "fp8"));
    assert_true(feature(mi300x, "matrix_units"));
    assert_string_equal(str(mi300x, "uuid", NULL), "GPU-3d7a0f52c19e86b4");
    assert_string_equal(str(mi300x, "pci_bus_id", NULL), "0000:11:00.0");
    cJSON *details = cJSON_GetObjectItem(cJSON_GetObjectItem(mi300x, "details"), "rocm");
    assert_string_equal(str(details, "source", NULL), "hip+kfd");
    assert_int_equal(cJSON_GetObjectItem(details, "num_xcc")->valueint, 8);

    assert_string_equal(str(navi31, "arch", "family"), "rdna3");
    assert_string_equal(str(navi31, "arch", "name"), "gfx1100");
    assert_int_equal(cJSON_GetObjectItem(navi31, "simd_width")->valueint, 32);
    assert_int_equal(cJSON_GetObjectItem(navi31, "compute_units")->valueint, 96);
    assert_true(feature(navi31, "bf16"));
    assert_false(feature(navi31, "fp8"));
    cJSON_Delete(root);
    gpuopt_free(text);
    gpuopt_context_destroy(ctx);
}

static void selection_by_backend_takes_the_fastest_rocm_gpu(void **state)
{
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    gpuopt_device_info info;
    (void)state;
    assert_int_equal(gpuopt_context_create(NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, "rocm", &dev), GPUOPT_OK);
    info.struct_size = sizeof info;
    assert_int_equal(gpuopt_device_get_info(dev, &info), GPUOPT_OK);
    assert_string_equal(info.backend, "rocm");
    assert_string_equal(info.arch_name, "gfx942");
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(devices_json_reports_each_described_gpu),
        cmocka_unit_test(selection_by_backend_takes_the_fastest_rocm_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
