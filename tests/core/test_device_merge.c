/* One physical device, one entry: identity by UUID, else PCI bus id, and how
 * a secondary backend's record folds into the native one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "device.h"
#include "util/strutil.h"

static gpuopt_device *dev_with(const char *uuid, const char *pci)
{
    gpuopt_device *d = gpo_device_new();
    assert_non_null(d);
    if (uuid)
        gpo_strlcpy(d->info.uuid, uuid, sizeof d->info.uuid);
    if (pci)
        gpo_strlcpy(d->info.pci_bus_id, pci, sizeof d->info.pci_bus_id);
    d->n_routes = 1;
    return d;
}

static void uuid_match_ignores_gpu_prefix_dashes_and_case(void **state)
{
    (void)state;
    gpuopt_device *a = dev_with("GPU-8C3B1F52-0F1E-4B2A-9C7D-1E2F3A4B5C6D", NULL);
    gpuopt_device *b = dev_with("8c3b1f520f1e4b2a9c7d1e2f3a4b5c6d", NULL);
    gpuopt_device *c = dev_with("GPU-00000000-0F1E-4B2A-9C7D-1E2F3A4B5C6D", NULL);
    assert_true(gpo_device_same_physical(&a->info, &b->info));
    assert_false(gpo_device_same_physical(&a->info, &c->info));
    gpo_device_free(a);
    gpo_device_free(b);
    gpo_device_free(c);
}

static void uuid_decides_even_when_pci_ids_agree(void **state)
{
    (void)state;
    /* Two MIG-like views with the same bus id but different UUIDs are not one. */
    gpuopt_device *a = dev_with("GPU-11111111-2222-3333-4444-555555555555", "0000:17:00.0");
    gpuopt_device *b = dev_with("GPU-99999999-2222-3333-4444-555555555555", "0000:17:00.0");
    assert_false(gpo_device_same_physical(&a->info, &b->info));
    gpo_device_free(a);
    gpo_device_free(b);
}

static void pci_bus_id_is_the_fallback_in_any_spelling(void **state)
{
    (void)state;
    gpuopt_device *a = dev_with(NULL, "0000:3B:00.0");
    gpuopt_device *b = dev_with("GPU-11111111-2222-3333-4444-555555555555", "3b:00.0");
    gpuopt_device *c = dev_with(NULL, "00000000:3b:00.0");
    gpuopt_device *d = dev_with(NULL, "0000:3c:00.0");
    assert_true(gpo_device_same_physical(&a->info, &b->info));
    assert_true(gpo_device_same_physical(&a->info, &c->info));
    assert_false(gpo_device_same_physical(&a->info, &d->info));
    /* UUIDs of different forms (ROCm's 16 hex digits, OpenCL's 32) do not
     * decide: the PCI bus id does. */
    gpuopt_device *rocm = dev_with("GPU-4f3a2b1c0d9e8f7a", "0000:c1:00.0");
    gpuopt_device *ocl = dev_with("000102030405060708090a0b0c0d0e0f", "c1:00.0");
    assert_true(gpo_device_same_physical(&rocm->info, &ocl->info));
    gpo_device_free(rocm);
    gpo_device_free(ocl);
    gpuopt_device *none = dev_with(NULL, NULL);
    assert_false(gpo_device_same_physical(&none->info, &none->info));
    assert_false(gpo_device_same_physical(NULL, &a->info));
    gpo_device_free(a);
    gpo_device_free(b);
    gpo_device_free(c);
    gpo_device_free(d);
    gpo_device_free(none);
}

static void pci_normalise_accepts_bus_ids_and_rejects_the_rest(void **state)
{
    (void)state;
    char out[32];
    assert_int_equal(gpo_pci_normalise("0000:17:00.0", out, sizeof out), 0);
    assert_string_equal(out, "0000:17:00.0");
    assert_int_equal(gpo_pci_normalise("00000000:C1:1F.7", out, sizeof out), 0);
    assert_string_equal(out, "0000:c1:1f.7");
    assert_int_equal(gpo_pci_normalise("17:00.0", out, sizeof out), 0);
    assert_string_equal(out, "0000:17:00.0");
    const char *bad[] = {"",          "17:00",         "zz:00.0", "0000:17:00.8", "0000:17:20.0",
                         "1:2:3:4.0", "0000:17:00.0x", "cuda:0",  "0000:100:00.0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gpo_pci_normalise(bad[i], out, sizeof out), -1);
    assert_int_equal(gpo_pci_normalise(NULL, out, sizeof out), -1);
}

static void merge_keeps_primary_facts_fills_unknown_ones_and_adds_the_route(void **state)
{
    (void)state;
    gpuopt_device *cuda = dev_with("GPU-11111111-2222-3333-4444-555555555555", "0000:17:00.0");
    gpo_strlcpy(cuda->info.name, "NVIDIA H100", sizeof cuda->info.name);
    cuda->info.compute_units = 132;
    cuda->info.features = GPUOPT_FEATURE_FP16;
    cuda->info.features_known = GPUOPT_FEATURE_FP16;
    assert_non_null(gpo_device_details(cuda, "cuda"));
    gpuopt_device *ocl = dev_with("11111111222233334444555555555555", NULL);
    gpo_strlcpy(ocl->info.name, "NVIDIA H100 80GB HBM3", sizeof ocl->info.name);
    ocl->info.compute_units = 1;
    ocl->info.l2_bytes = 50u << 20;
    ocl->info.features = GPUOPT_FEATURE_FP64;
    ocl->info.features_known = GPUOPT_FEATURE_FP64 | GPUOPT_FEATURE_FP16;
    cJSON *od = gpo_device_details(ocl, "opencl");
    cJSON_AddStringToObject(od, "platform_name", "NVIDIA CUDA");
    ocl->routes[0].index = 3;

    assert_int_equal(gpo_device_merge(cuda, ocl), GPUOPT_OK);
    assert_string_equal(cuda->info.name, "NVIDIA H100");
    assert_int_equal(cuda->info.compute_units, 132);
    assert_int_equal(cuda->info.l2_bytes, 50u << 20);
    /* fp16 was known to the primary (absent); fp64 only to OpenCL. */
    assert_int_equal(cuda->info.features, GPUOPT_FEATURE_FP16 | GPUOPT_FEATURE_FP64);
    assert_int_equal(cuda->n_routes, 2);
    assert_int_equal(cuda->routes[1].index, 3);
    cJSON *merged = cJSON_GetObjectItemCaseSensitive(cuda->details, "opencl");
    assert_non_null(merged);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(merged, "platform_name")->valuestring,
                        "NVIDIA CUDA");
    assert_non_null(cJSON_GetObjectItemCaseSensitive(cuda->details, "cuda"));
    gpo_device_free(cuda);
}

static void merge_refuses_a_device_with_no_route_left(void **state)
{
    (void)state;
    gpuopt_device *a = dev_with(NULL, "0000:17:00.0");
    a->n_routes = GPO_MAX_ROUTES;
    gpuopt_device *b = dev_with(NULL, "0000:17:00.0");
    assert_int_equal(gpo_device_merge(a, b), GPUOPT_ERR_OUT_OF_RANGE);
    a->n_routes = 1;
    gpo_device_free(a);
    gpo_device_free(b);
}

static void device_list_grows_past_its_first_allocation(void **state)
{
    (void)state;
    gpo_device_list list = {0};
    for (int i = 0; i < 20; i++)
        assert_int_equal(gpo_device_list_push(&list, gpo_device_new()), GPUOPT_OK);
    assert_int_equal(list.n, 20);
    gpo_device_list_free(&list);
    gpo_device_list_free(NULL);
    assert_null(gpo_device_details(NULL, "x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uuid_match_ignores_gpu_prefix_dashes_and_case),
        cmocka_unit_test(uuid_decides_even_when_pci_ids_agree),
        cmocka_unit_test(pci_bus_id_is_the_fallback_in_any_spelling),
        cmocka_unit_test(pci_normalise_accepts_bus_ids_and_rejects_the_rest),
        cmocka_unit_test(merge_keeps_primary_facts_fills_unknown_ones_and_adds_the_route),
        cmocka_unit_test(merge_refuses_a_device_with_no_route_left),
        cmocka_unit_test(device_list_grows_past_its_first_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
