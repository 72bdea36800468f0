/* Discovery of vendor GPUs through their OpenCL extensions, on synthetic
 * platforms served by the test-double loader (tests/fixtures/opencl):
 * PCI ids from the three vendor queries, UUIDs, NVIDIA capability, AMD
 * board and gfx target, sub-groups, duplicates across platforms joined,
 * the probe kernel for pre-3.0 devices, and empty platforms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ocl_test.h"
#include "cl_device.h"
#include "util/strutil.h"

#define FIXTURE(name) GPO_OPENCL_FIXTURES "/" name

static const char *detail_str(const gpuopt_device *d, const char *key)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(d->details, "opencl");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static long long detail_num(const gpuopt_device *d, const char *key)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(d->details, "opencl");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? (long long)v->valuedouble : -1;
}

static int open_gpus(void **state)
{
    ocl_fx *fx = calloc(1, sizeof *fx);
    ocl_fake_set_devices(GPO_FAKE_OPENCL, FIXTURE("gpus.json"));
    ocl_fx_init(fx, GPO_FAKE_OPENCL);
    if (ocl_fx_open(fx) != GPUOPT_OK) {
        fprintf(stderr, "load failed: %s\n", fx->report.reason);
        return -1;
    }
    *state = fx;
    return 0;
}

static int close_fx(void **state)
{
    ocl_fx_free(*state);
    free(*state);
    long live = ocl_fake_live(GPO_FAKE_OPENCL);
    return live == 0 ? 0 : -1;
}

static void devices_are_numbered_once_each_in_platform_order(void **state)
{
    ocl_fx *fx = *state;
    assert_int_equal(fx->list.n, 5);
    static const char *names[] = {
        "NVIDIA A100-SXM4-80GB", "cpu-znver3-AMD EPYC 7763 64-Core Processor",
        "AMD Instinct MI250X", "AMD Radeon RX 7900 XTX", "Intel(R) Arc(TM) A770 Graphics"};
    for (size_t i = 0; i < fx->list.n; i++) {
        const gpuopt_device_info *in = &fx->list.items[i]->info;
        char id[32];
        snprintf(id, sizeof id, "opencl:%zu", i);
        assert_string_equal(in->id, id);
        assert_int_equal(in->index, (int32_t)i);
        assert_string_equal(in->backend, "opencl");
        assert_string_equal(in->name, names[i]);
        assert_int_equal(fx->list.items[i]->routes[0].index, (int32_t)i);
        assert_non_null(fx->list.items[i]->routes[0].priv);
        assert_ptr_equal(fx->list.items[i]->routes[0].priv_free, gpo_ocl_priv_free);
        assert_int_equal(fx->list.items[i]->n_routes, 1);
    }
    assert_string_equal(fx->report.driver_version, "5.0, 535.104.05, 3590.0 (HSA1.1,LC), "
                                                   "23.30.26918.50");
    /* A loader without clGetICDLoaderInfoOCLICD: the highest platform. */
    assert_string_equal(fx->report.runtime_version, "OpenCL 3.0");
}

static void nvidia_gpu_is_routed_through_nvidias_platform(void **state)
{
    ocl_fx *fx = *state;
    const gpuopt_device *d = fx->list.items[0];
    const gpuopt_device_info *in = &d->info;
    assert_string_equal(detail_str(d, "platform_name"), "NVIDIA CUDA");
    assert_string_equal(detail_str(d, "other_platforms"), "Portable Computing Language");
    assert_string_equal(in->vendor, "NVIDIA");
    assert_int_equal(in->type, GPUOPT_DEVICE_TYPE_GPU);
    assert_int_equal(in->cc_major, 8);
    assert_int_equal(in->cc_minor, 0);
    assert_string_equal(in->arch_name, "sm_80");
    assert_int_equal(in->simd_width, 32);
    assert_int_equal(in->compute_units, 108);
    assert_int_equal(in->clock_mhz, 1410);
    assert_int_equal(in->max_threads_per_block, 1024);
    assert_int_equal(in->memory_bytes, 85031714816ull);
    assert_int_equal(in->shared_mem_per_block, 49152);
    assert_int_equal(in->l2_bytes, 3538944);
    assert_int_equal(in->ecc, 1);
    assert_int_equal(in->integrated, 0);
    assert_int_equal(in->unified_memory, 0);
    assert_string_equal(in->pci_bus_id, "0000:07:00.0");
    assert_string_equal(detail_str(d, "pci_bus_id_source"), "cl_nv_device_attribute_query");
    assert_string_equal(in->uuid, "GPU-3f7e5a1c-9b2d-4e0f-8a6b-1c2d3e4f5a6b");
    assert_string_equal(in->driver_version, "535.104.05");
    assert_string_equal(in->runtime_version, "OpenCL 3.0");
    /* The hardware's features come from the CUDA architecture table, as
     * the CUDA backend reports them; what OpenCL exposes stays in details
     * (NVIDIA's OpenCL has no cl_khr_fp16). */
    assert_string_equal(in->arch_family, "ampere");
    assert_int_equal(in->arch_extrapolated, 0);
    assert_true(in->features & GPUOPT_FEATURE_FP64);
    assert_true(in->features & GPUOPT_FEATURE_TF32);
    assert_true(in->features & GPUOPT_FEATURE_MATRIX_UNITS);
    assert_true(in->features_known & GPUOPT_FEATURE_FP16);
    assert_true(d->est_gflops > 19491.8 && d->est_gflops < 19491.9); /* 108 x 64 x 1410 x 2 */
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(d->details, "opencl");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "fp16")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "fp64")));
    assert_string_equal(detail_str(d, "opencl_c_highest"), "3.0");
    assert_string_equal(detail_str(d, "nv_compute_capability"), "8.0");
    assert_int_equal(detail_num(d, "preferred_work_group_size_multiple"), 32);
    assert_int_equal(detail_num(d, "vendor_id"), 0x10de);
    assert_string_equal(detail_str(d, "type"), "gpu");
}

static void amd_gpus_give_board_gfx_and_topology(void **state)
{
    ocl_fx *fx = *state;
    const gpuopt_device *mi = fx->list.items[2], *rx = fx->list.items[3];
    assert_string_equal(mi->info.vendor, "AMD");
    assert_string_equal(mi->info.arch_name, "gfx90a");
    assert_string_equal(detail_str(mi, "amd_gfx_target"), "gfx90a:sramecc+:xnack-");
    assert_string_equal(detail_str(mi, "device_name"), "gfx90a:sramecc+:xnack-");
    assert_int_equal(mi->info.simd_width, 64);
    /* Bus 0xc1 arrives in AMD's signed cl_char field. */
    assert_string_equal(mi->info.pci_bus_id, "0000:c1:00.0");
    assert_string_equal(detail_str(mi, "pci_bus_id_source"), "CL_DEVICE_TOPOLOGY_AMD");
    assert_string_equal(mi->info.uuid, "");
    assert_true(mi->info.features & GPUOPT_FEATURE_FP16);
    /* OpenCL 2.0: no device-level preferred multiple until probed. */
    assert_int_equal(detail_num(mi, "preferred_work_group_size_multiple"), -1);
    assert_string_equal(detail_str(mi, "opencl_c_highest"), "2.0");

    assert_string_equal(mi->info.arch_family, "cdna2");
    assert_true(mi->info.features & GPUOPT_FEATURE_MATRIX_UNITS);
    assert_true(mi->est_gflops > 23935.9 && mi->est_gflops < 23936.1); /* 110 x 64 x 2 x 1700 */
    assert_string_equal(rx->info.arch_name, "gfx1100");
    assert_string_equal(rx->info.arch_family, "rdna3");
    assert_int_equal(rx->info.simd_width, 32);
    assert_string_equal(rx->info.pci_bus_id, "0000:03:00.0");

    gpo_memory_reading live;
    live.free = 1;
    assert_int_equal(gpo_backend_opencl.memory_live(fx->state, &mi->routes[0], 0, &live),
                     GPUOPT_OK);
    assert_int_equal(live.free, 66060288ull * 1024u);
    assert_int_equal(live.source, GPUOPT_MEMORY_SOURCE_RUNTIME);
    assert_non_null(strstr(live.source_text, "CL_DEVICE_GLOBAL_FREE_MEMORY_AMD"));
    const gpuopt_device *arc = fx->list.items[4];
    assert_int_equal(gpo_backend_opencl.memory_live(fx->state, &arc->routes[0], 0, &live),
                     GPUOPT_ERR_UNSUPPORTED);
    assert_int_equal(live.free, 0);
}

static void intel_gpu_gives_pci_uuid_and_sub_groups(void **state)
{
    ocl_fx *fx = *state;
    const gpuopt_device *d = fx->list.items[4];
    assert_string_equal(d->info.vendor, "Intel");
    assert_string_equal(d->info.pci_bus_id, "0000:04:00.0");
    assert_string_equal(detail_str(d, "pci_bus_id_source"), "cl_khr_pci_bus_info");
    assert_string_equal(d->info.uuid, "8680a056-0800-0000-0300-000000000000");
    assert_false(d->info.features & GPUOPT_FEATURE_FP64);
    assert_true(d->info.features & GPUOPT_FEATURE_FP16);
    assert_int_equal(d->info.simd_width, -1);
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(d->details, "opencl");
    const cJSON *sg = cJSON_GetObjectItemCaseSensitive(o, "sub_group_sizes");
    assert_int_equal(cJSON_GetArraySize(sg), 3);
    assert_int_equal(cJSON_GetArrayItem(sg, 2)->valueint, 32);
    assert_int_equal(detail_num(d, "max_num_sub_groups"), 128);
    const cJSON *feats = cJSON_GetObjectItemCaseSensitive(o, "opencl_c_features");
    assert_int_equal(cJSON_GetArraySize(feats), 4);
    assert_string_equal(cJSON_GetArrayItem(feats, 3)->valuestring, "__opencl_c_subgroups");
}

static void pocl_cpu_gives_its_llvm_target(void **state)
{
    ocl_fx *fx = *state;
    const gpuopt_device *d = fx->list.items[1];
    assert_int_equal(d->info.type, GPUOPT_DEVICE_TYPE_CPU);
    assert_string_equal(d->info.vendor, "AuthenticAMD");
    assert_string_equal(d->info.arch_name, "znver3");
    assert_string_equal(d->info.arch_family, "x86-64");
    assert_string_equal(detail_str(d, "cpu_target_triple"), "x86_64-pc-linux-gnu");
    assert_int_equal(d->info.simd_width, 8);
    assert_int_equal(d->info.integrated, 1);
    assert_string_equal(detail_str(d, "local_mem_type"), "global");
    assert_string_equal(detail_str(d, "platform_name"), "Portable Computing Language");
    assert_null(detail_str(d, "other_platforms"));
}

static void probe_kernel_fills_the_missing_multiple(void **state)
{
    ocl_fx *fx = *state;
    const gpuopt_device *mi = fx->list.items[2];
    ocl_facts *f = &((ocl_dev_priv *)mi->routes[0].priv)->facts;
    assert_int_equal(f->pref_source, OCL_PREF_UNKNOWN);
    assert_int_equal(gpo_ocl_probe_preferred_multiple(&((ocl_state *)fx->state)->api, f),
                     GPUOPT_OK);
    assert_int_equal(f->pref_source, OCL_PREF_KERNEL);
    assert_int_equal(f->pref_multiple, 64);
    assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), 0);
}

static void runtime_session_opens_on_a_synthetic_gpu(void **state)
{
    ocl_fx *fx = *state;
    const gpo_runtime_ops *ops = gpo_backend_opencl.runtime;
    gpo_rt *rt = NULL;
    assert_int_equal(ops->open(fx->state, &fx->list.items[2]->routes[0], &rt), GPUOPT_OK);
    gpo_rt_buf *b = NULL;
    assert_int_equal(ops->buffer_alloc(rt, 16, &b), GPUOPT_OK);
    const char in[16] = "synthetic bytes", *v = ops->compiler_version(rt);
    char out[16] = "";
    assert_int_equal(ops->buffer_write(rt, b, 0, in, 16), GPUOPT_OK);
    assert_int_equal(ops->buffer_read(rt, b, 0, out, 16), GPUOPT_OK);
    assert_memory_equal(in, out, 16);
    assert_non_null(strstr(v, "AMD-APP"));
    assert_non_null(strstr(v, "3590.0"));
    ops->close(rt);
}

/* The records carry what the core needs to join them with the native
 * backend's view of the same GPU (gpo_device_same_physical): NVIDIA's UUID
 * in CUDA's form, PCI addresses in any of the usual spellings. */
static void records_join_the_native_backends_view(void **state)
{
    ocl_fx *fx = *state;
    gpuopt_device_info cuda, rocm;
    memset(&cuda, 0, sizeof cuda);
    memset(&rocm, 0, sizeof rocm);
    gpo_strlcpy(cuda.uuid, "GPU-3f7e5a1c-9b2d-4e0f-8a6b-1c2d3e4f5a6b", sizeof cuda.uuid);
    gpo_strlcpy(cuda.pci_bus_id, "00000000:07:00.0", sizeof cuda.pci_bus_id);
    assert_true(gpo_device_same_physical(&fx->list.items[0]->info, &cuda));
    gpo_strlcpy(rocm.pci_bus_id, "0000:C1:00.0", sizeof rocm.pci_bus_id);
    assert_true(gpo_device_same_physical(&fx->list.items[2]->info, &rocm));
    assert_false(gpo_device_same_physical(&fx->list.items[3]->info, &rocm));
    assert_false(gpo_device_same_physical(&fx->list.items[0]->info, &rocm));
}

static void legacy_device_uses_the_1x_paths(void **state)
{
    (void)state;
    ocl_fx fx;
    ocl_fake_set_devices(GPO_FAKE_OPENCL, FIXTURE("legacy.json"));
    ocl_fx_init(&fx, GPO_FAKE_OPENCL);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_OK);
    assert_int_equal(fx.list.n, 2);
    /* Only the gfx target is known: the ROCm table fills the rest. */
    const gpuopt_device *mi50 = fx.list.items[1];
    assert_string_equal(mi50->info.arch_name, "gfx906");
    assert_string_equal(mi50->info.arch_family, "gcn5");
    assert_int_equal(mi50->info.simd_width, 64);
    assert_string_equal(mi50->info.name, "gfx906:sramecc+:xnack-");
    const gpuopt_device *d = fx.list.items[0];
    assert_string_equal(d->info.id, "opencl:0");
    assert_string_equal(d->info.vendor, "AMD");
    assert_string_equal(d->info.arch_name, "");
    assert_string_equal(d->info.pci_bus_id, "");
    assert_int_equal(d->info.unified_memory, -1);
    assert_string_equal(detail_str(d, "opencl_c_highest"), "1.1");
    assert_string_equal(detail_str(d, "platform_name"), "Clover");
    /* The 1.x queue entry point (the platform is 1.1). */
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "clCreateCommandQueue@1=-6");
    gpo_rt *rt = NULL;
    assert_int_equal(gpo_backend_opencl.runtime->open(fx.state, &d->routes[0], &rt),
                     GPUOPT_ERR_NO_MEMORY);
    assert_null(rt);
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
    ocl_fx_free(&fx);
    assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), 0);
}

static void platforms_without_devices_are_available_and_empty(void **state)
{
    (void)state;
    ocl_fx fx;
    ocl_fake_set_devices(GPO_FAKE_OPENCL, FIXTURE("no_devices.json"));
    ocl_fx_init(&fx, GPO_FAKE_OPENCL);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_OK);
    assert_int_equal(fx.list.n, 0);
    assert_string_equal(fx.report.reason, "");
    ocl_fx_free(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(devices_are_numbered_once_each_in_platform_order, open_gpus,
                                        close_fx),
        cmocka_unit_test_setup_teardown(nvidia_gpu_is_routed_through_nvidias_platform, open_gpus,
                                        close_fx),
        cmocka_unit_test_setup_teardown(amd_gpus_give_board_gfx_and_topology, open_gpus, close_fx),
        cmocka_unit_test_setup_teardown(intel_gpu_gives_pci_uuid_and_sub_groups, open_gpus,
                                        close_fx),
        cmocka_unit_test_setup_teardown(pocl_cpu_gives_its_llvm_target, open_gpus, close_fx),
        cmocka_unit_test_setup_teardown(probe_kernel_fills_the_missing_multiple, open_gpus,
                                        close_fx),
        cmocka_unit_test_setup_teardown(runtime_session_opens_on_a_synthetic_gpu, open_gpus,
                                        close_fx),
        cmocka_unit_test_setup_teardown(records_join_the_native_backends_view, open_gpus, close_fx),
        cmocka_unit_test(legacy_device_uses_the_1x_paths),
        cmocka_unit_test(platforms_without_devices_are_available_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
