/* Selection and the merged device list on synthetic backends: the "auto"
 * order, lazy probing, one entry per physical device, and the words a
 * failed selection gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "context.h"
#include "support/synthetic.h"
#include "support/testutil.h"

#define GIB (1024ull * 1024 * 1024)

static int setup(void **state)
{
    (void)state;
    syn_reset();
    return 0;
}

static gpuopt_device_info info_of(gpuopt_device *d)
{
    gpuopt_device_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    assert_int_equal(gpuopt_device_get_info(d, &i), GPUOPT_OK);
    return i;
}

static void auto_prefers_discrete_gpu_then_integrated_then_cpu(void **state)
{
    (void)state;
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_GPU, "igpu", NULL, "0000:00:02.0", 5000, 8 * GIB)
        ->integrated = 1;
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_GPU, "dgpu", NULL, "0000:03:00.0", 100, 4 * GIB)
        ->integrated = 0;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 9000, 64 * GIB);
    gpuopt_context *ctx;
    gpuopt_device *d;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, "auto", &d), GPUOPT_OK);
    assert_string_equal(info_of(d).name, "dgpu");
    assert_int_equal(gpuopt_device_select(ctx, "synocl", &d), GPUOPT_OK);
    assert_string_equal(info_of(d).name, "dgpu");
    assert_int_equal(gpuopt_device_select(ctx, "syncpu", &d), GPUOPT_OK);
    assert_string_equal(info_of(d).name, "cpu");
    gpuopt_context_destroy(ctx);

    /* Without the discrete GPU the integrated one wins over a faster CPU. */
    syn_reset();
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_GPU, "igpu", NULL, NULL, 50, GIB)->integrated = 1;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 9000, 64 * GIB);
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, NULL, &d), GPUOPT_OK);
    assert_string_equal(info_of(d).name, "igpu");
    assert_int_equal(gpuopt_device_select(ctx, "gpu", &d), GPUOPT_OK);
    gpuopt_context_destroy(ctx);
}

static void auto_ranks_gpus_by_throughput_then_memory_then_order(void **state)
{
    (void)state;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "slow", NULL, NULL, 10000, 80 * GIB)->integrated = 0;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "fast-small", NULL, NULL, 60000, 24 * GIB)
        ->integrated = 0;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "fast-big", NULL, NULL, 60000, 48 * GIB)
        ->integrated = 0;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "fast-big-2", NULL, NULL, 60000, 48 * GIB)
        ->integrated = 0;
    gpuopt_context *ctx;
    gpuopt_device *d;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, "auto", &d), GPUOPT_OK);
    assert_string_equal(info_of(d).name, "fast-big");
    assert_int_equal(info_of(d).index, 2);
    /* Native order is kept in the listing: never re-sorted. */
    gpuopt_device *first;
    assert_int_equal(gpuopt_device_at(ctx, 0, &first), GPUOPT_OK);
    assert_string_equal(info_of(first).name, "slow");
    gpuopt_context_destroy(ctx);
}

static void auto_stops_probing_once_a_native_backend_has_a_discrete_gpu(void **state)
{
    (void)state;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "h100", NULL, NULL, 60000, 80 * GIB)->integrated = 0;
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_GPU, "other", NULL, NULL, 90000, 80 * GIB)->integrated = 0;
    gpuopt_context *ctx;
    gpuopt_device *d;
    gpuopt_plan *plan;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(syn_cuda.loads + syn_ocl.loads + syn_cpu.loads, 0); /* nothing at create */
    assert_int_equal(gpuopt_device_select(ctx, "auto", &d), GPUOPT_OK);
    assert_string_equal(info_of(d).name, "h100");
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &plan), GPUOPT_OK);
    gpuopt_plan_destroy(plan);
    assert_int_equal(syn_cuda.loads, 1);
    assert_int_equal(syn_ocl.loads, 0);
    assert_int_equal(syn_cpu.loads, 0);
    /* A full listing probes the rest, once. */
    int32_t n;
    assert_int_equal(gpuopt_device_count(ctx, &n), GPUOPT_OK);
    assert_int_equal(n, 2);
    assert_int_equal(gpuopt_device_count(ctx, &n), GPUOPT_OK);
    assert_int_equal(syn_ocl.loads, 1);
    assert_int_equal(syn_cpu.loads, 1);
    gpuopt_context_destroy(ctx);
    assert_int_equal(syn_cuda.unloads + syn_ocl.unloads + syn_cpu.unloads, 3);
}

static void auto_keeps_probing_when_the_native_gpu_is_integrated(void **state)
{
    (void)state;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "orin", NULL, NULL, 5000, 32 * GIB)->integrated = 1;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 500, 32 * GIB);
    gpuopt_context *ctx;
    gpuopt_device *d;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, NULL, &d), GPUOPT_OK);
    assert_string_equal(info_of(d).name, "orin");
    assert_int_equal(syn_ocl.loads, 1);
    assert_int_equal(syn_cpu.loads, 1);
    gpuopt_context_destroy(ctx);
}

static void opencl_view_of_a_native_gpu_is_listed_once_with_two_routes(void **state)
{
    (void)state;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "A100", "GPU-aaaaaaaa-1111-2222-3333-444444444444",
            "0000:17:00.0", 19500, 40 * GIB)->integrated = 0;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "T4", NULL, "0000:65:00.0", 8100, 16 * GIB)
        ->integrated = 0;
    /* OpenCL sees the T4 first (by PCI id only) and the A100 by UUID bytes. */
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_GPU, "Tesla T4", NULL, "65:00.0", 0, 16 * GIB);
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_GPU, "NVIDIA A100", "aaaaaaaa111122223333444444444444",
            NULL, 0, 40 * GIB);
    syn_add(&syn_ocl, GPUOPT_DEVICE_TYPE_CPU, "pocl cpu", NULL, NULL, 100, 8 * GIB);
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 100, 8 * GIB);
    gpuopt_context *ctx;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    int32_t n;
    assert_int_equal(gpuopt_device_count(ctx, &n), GPUOPT_OK);
    assert_int_equal(n, 4); /* A100, T4, the PoCL CPU device, the CPU */
    gpuopt_device *d;
    assert_int_equal(gpuopt_device_at(ctx, 0, &d), GPUOPT_OK);
    gpuopt_device_info i = info_of(d);
    assert_string_equal(i.id, "syncuda:0");
    assert_string_equal(i.routes, "syncuda,synocl");
    assert_int_equal(gpuopt_device_at(ctx, 2, &d), GPUOPT_OK);
    assert_string_equal(info_of(d).id, "synocl:2"); /* native indices are kept */
    /* The OpenCL index still finds the merged device. */
    assert_int_equal(gpuopt_device_select(ctx, "synocl:0", &d), GPUOPT_OK);
    assert_string_equal(info_of(d).id, "syncuda:1");
    assert_int_equal(gpuopt_device_select(ctx, "synocl:1", &d), GPUOPT_OK);
    assert_string_equal(info_of(d).id, "syncuda:0");
    gpuopt_context_destroy(ctx);
}

static void uuid_and_pci_policies_find_their_device(void **state)
{
    (void)state;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "a", "GPU-8c3b1f52-0f1e-4b2a-9c7d-1e2f3a4b5c6d",
            "0000:17:00.0", 1, GIB);
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "b", "GPU-8c3b1f52-9f1e-4b2a-9c7d-1e2f3a4b5c6d",
            "0000:3b:00.0", 1, GIB);
    gpuopt_context *ctx;
    gpuopt_device *d;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, "GPU-8c3b1f52-9", &d), GPUOPT_OK);
    assert_string_equal(info_of(d).name, "b");
    assert_int_equal(gpuopt_device_select(ctx, "GPU-8C3B1F52-0F1E-4B2A-9C7D-1E2F3A4B5C6D", &d),
                     GPUOPT_OK);
    assert_string_equal(info_of(d).name, "a");
    assert_int_equal(gpuopt_device_select(ctx, "3B:00.0", &d), GPUOPT_OK);
    assert_string_equal(info_of(d).name, "b");
    /* An ambiguous prefix is refused with both ids named. */
    assert_int_equal(gpuopt_device_select(ctx, "GPU-8c3b1f52", &d), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "syncuda:0"));
    assert_non_null(strstr(gpuopt_last_error(), "syncuda:1"));
    assert_null(d);
    assert_int_equal(gpuopt_device_select(ctx, "0000:99:00.0", &d), GPUOPT_ERR_NO_DEVICE);
    assert_non_null(strstr(gpuopt_last_error(), "syncuda:0, syncuda:1"));
    gpuopt_context_destroy(ctx);
}

static void malformed_policies_are_refused_with_what_is_accepted(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    gpuopt_device *d = (gpuopt_device *)1;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    const char *bad[] = {"", "  ", "cuda", "syncuda:", "syncuda:-1", "syncuda:x", "GPU-12",
                         "17:00", "auto,gpu", "syncpu: 0", "syncpu:+0", "syncpu:0x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(gpuopt_device_select(ctx, bad[i], &d), GPUOPT_ERR_INVALID_ARGUMENT);
        assert_null(d);
        assert_non_null(strstr(gpuopt_last_error(), "accepted: auto, gpu"));
        assert_non_null(strstr(gpuopt_last_error(), "syncuda, synocl, syncpu"));
    }
    assert_int_equal(gpuopt_device_select(NULL, "auto", &d), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_device_select(ctx, "auto", NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    /* Well-formed but nothing there. */
    assert_int_equal(gpuopt_device_select(ctx, "syncuda:7", &d), GPUOPT_ERR_NO_DEVICE);
    assert_int_equal(gpuopt_device_select(ctx, "gpu", &d), GPUOPT_ERR_NO_DEVICE);
    assert_non_null(strstr(gpuopt_last_error(), "devices here: none"));
    gpuopt_context_destroy(ctx);
}

static void disabled_and_failed_backends_say_why_a_selection_found_nothing(void **state)
{
    (void)state;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 1, GIB);
    syn_ocl.load_result = GPUOPT_ERR_UNAVAILABLE;
    gpuopt_context *ctx;
    gpuopt_device *d;
    assert_int_equal(syn_context("syncpu,synocl", NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, "syncuda:0", &d), GPUOPT_ERR_NO_DEVICE);
    assert_non_null(strstr(gpuopt_last_error(), "disabled"));
    assert_non_null(strstr(gpuopt_last_error(), "syncpu,synocl"));
    assert_int_equal(syn_cuda.loads, 0);
    assert_int_equal(gpuopt_device_select(ctx, "synocl", &d), GPUOPT_ERR_NO_DEVICE);
    assert_non_null(strstr(gpuopt_last_error(), "synthetic failure"));
    gpuopt_backend_info b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    assert_int_equal(gpuopt_backend_at(ctx, 0, &b), GPUOPT_OK);
    assert_int_equal(b.status, GPUOPT_BACKEND_DISABLED);
    assert_int_equal(gpuopt_backend_at(ctx, 1, &b), GPUOPT_OK);
    assert_int_equal(b.status, GPUOPT_BACKEND_UNAVAILABLE);
    assert_string_equal(b.reason, "synthetic failure 301");
    assert_int_equal(gpuopt_backend_at(ctx, 3, &b), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_backend_at(ctx, -1, &b), GPUOPT_ERR_OUT_OF_RANGE);
    b.struct_size = 8;
    assert_int_equal(gpuopt_backend_at(ctx, 0, &b), GPUOPT_ERR_STRUCT_SIZE);
    gpuopt_context_destroy(ctx);
}

static void kernel_side_discovery_lists_devices_of_an_unavailable_backend(void **state)
{
    (void)state;
    syn_cuda.load_result = GPUOPT_ERR_UNAVAILABLE;
    syn_cuda.kernel_side = 1;
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "seen in /proc", NULL, "0000:17:00.0", 0, 0);
    gpuopt_context *ctx;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    int32_t n;
    assert_int_equal(gpuopt_device_count(ctx, &n), GPUOPT_OK);
    assert_int_equal(n, 1);
    gpuopt_backend_info b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    assert_int_equal(gpuopt_backend_at(ctx, 0, &b), GPUOPT_OK);
    assert_int_equal(b.status, GPUOPT_BACKEND_UNAVAILABLE);
    assert_int_equal(b.device_count, 1);
    /* Listed, but a search never chooses it: nothing could run there. */
    gpuopt_device *d;
    assert_int_equal(gpuopt_device_select(ctx, "auto", &d), GPUOPT_ERR_NO_DEVICE);
    assert_int_equal(gpuopt_device_select(ctx, "syncuda", &d), GPUOPT_ERR_NO_DEVICE);
    assert_int_equal(gpuopt_device_select(ctx, "0000:17:00.0", &d), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(ctx, "syncuda:0", &d), GPUOPT_OK);
    char *json;
    assert_int_equal(gpuopt_context_to_json(ctx, &json), GPUOPT_OK);
    assert_non_null(strstr(json, "\"status\":\"unavailable\""));
    assert_non_null(strstr(json, "seen in /proc"));
    gpuopt_free(json);
    gpuopt_context_destroy(ctx);
}

static void device_get_rejects_bad_indices_and_small_structs(void **state)
{
    (void)state;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 1, GIB);
    gpuopt_context *ctx;
    gpuopt_device *d;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_at(ctx, 1, &d), GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpuopt_last_error(), "accepted 0 to 0"));
    assert_int_equal(gpuopt_device_at(ctx, -5, &d), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_device_at(ctx, 0, &d), GPUOPT_OK);
    gpuopt_device_info i;
    i.struct_size = 3;
    assert_int_equal(gpuopt_device_get_info(d, &i), GPUOPT_ERR_STRUCT_SIZE);
    /* An older, shorter layout gets its prefix only. */
    unsigned char buf[sizeof(gpuopt_device_info) + 16];
    memset(buf, 0xAB, sizeof buf);
    gpuopt_device_info *older = (gpuopt_device_info *)buf;
    older->struct_size = sizeof(gpuopt_device_info);
    assert_int_equal(gpuopt_device_get_info(d, older), GPUOPT_OK);
    assert_int_equal(buf[sizeof(gpuopt_device_info)], 0xAB);
    assert_int_equal(older->struct_size, sizeof(gpuopt_device_info));
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(auto_prefers_discrete_gpu_then_integrated_then_cpu, setup),
        cmocka_unit_test_setup(auto_ranks_gpus_by_throughput_then_memory_then_order, setup),
        cmocka_unit_test_setup(auto_stops_probing_once_a_native_backend_has_a_discrete_gpu, setup),
        cmocka_unit_test_setup(auto_keeps_probing_when_the_native_gpu_is_integrated, setup),
        cmocka_unit_test_setup(opencl_view_of_a_native_gpu_is_listed_once_with_two_routes, setup),
        cmocka_unit_test_setup(uuid_and_pci_policies_find_their_device, setup),
        cmocka_unit_test_setup(malformed_policies_are_refused_with_what_is_accepted, setup),
        cmocka_unit_test_setup(disabled_and_failed_backends_say_why_a_selection_found_nothing,
                               setup),
        cmocka_unit_test_setup(kernel_side_discovery_lists_devices_of_an_unavailable_backend,
                               setup),
        cmocka_unit_test_setup(device_get_rejects_bad_indices_and_small_structs, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
