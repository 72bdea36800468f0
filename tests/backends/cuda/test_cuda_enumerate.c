/* Listing CUDA devices through the test double, one real GPU description at
 * a time: family, sm name, warp size, features and the other facts come out
 * right, and listing creates no context. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_backend.h"
#include "cuda/cuda_load.h"
#include "cuda_test_util.h"

#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"

#define FP64 GPUOPT_FEATURE_FP64
#define FP16 GPUOPT_FEATURE_FP16
#define BF16 GPUOPT_FEATURE_BF16
#define TF32 GPUOPT_FEATURE_TF32
#define FP8 GPUOPT_FEATURE_FP8
#define INT8 GPUOPT_FEATURE_INT8
#define MMA GPUOPT_FEATURE_MATRIX_UNITS
#define AMPERE (FP64 | FP16 | INT8 | MMA | BF16 | TF32)

static fake_cuda full, legacy;

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("GPUOPT_FAKE_CUDA_DRIVER_VERSION");
    return fake_cuda_open(&full, FAKE_CUDA_FULL) || fake_cuda_open(&legacy, FAKE_CUDA_LEGACY);
}

/* What each description in tests/fakes/cuda/devices must come out as. */
static const struct gpu_case {
    const char *file;
    const char *name;
    int cc_major, cc_minor;
    const char *family, *sm;
    uint32_t features;
    int sms, clock_mhz, integrated, ecc;
    uint64_t memory, l2;
    const char *pci;
    const char *fp64_rate;
} gpus[] = {
    {"k80.json", "Tesla K80", 3, 7, "kepler", "sm_37", FP64, 13, 875, 0, 1, 12ull << 30, 1572864,
     "0000:04:00.0", "full"},
    {"p100-sxm2.json", "Tesla P100-SXM2-16GB", 6, 0, "pascal", "sm_60", FP64 | FP16, 56, 1480, 0, 1,
     16ull << 30, 4194304, "0000:06:00.0", "full"},
    {"v100-sxm2.json", "Tesla V100-SXM2-16GB", 7, 0, "volta", "sm_70", FP64 | FP16 | INT8 | MMA, 80,
     1530, 0, 1, 16ull << 30, 6291456, "0000:15:00.0", "full"},
    {"t4.json", "Tesla T4", 7, 5, "turing", "sm_75", FP64 | FP16 | INT8 | MMA, 40, 1590, 0, 1,
     16ull << 30, 4194304, "0000:3b:00.0", "reduced"},
    {"a100-sxm4-40gb.json", "NVIDIA A100-SXM4-40GB", 8, 0, "ampere", "sm_80", AMPERE, 108, 1410, 0,
     1, 40ull << 30, 41943040, "0000:07:00.0", "full"},
    {"rtx3090.json", "NVIDIA GeForce RTX 3090", 8, 6, "ampere", "sm_86", AMPERE, 82, 1695, 0, 0,
     24ull << 30, 6291456, "0000:01:00.0", "reduced"},
    {"jetson-agx-orin.json", "Orin", 8, 7, "ampere", "sm_87", AMPERE, 16, 1300, 1, 0, 64ull << 30,
     4194304, "0000:00:00.0", "reduced"},
    {"rtx4090.json", "NVIDIA GeForce RTX 4090", 8, 9, "ada", "sm_89", AMPERE | FP8, 128, 2520, 0, 0,
     24ull << 30, 75497472, "0000:21:00.0", "reduced"},
    {"h100-sxm5.json", "NVIDIA H100 80GB HBM3", 9, 0, "hopper", "sm_90", AMPERE | FP8, 132, 1980, 0,
     1, 80ull << 30, 52428800, "0000:18:00.0", "full"},
    {"b200.json", "NVIDIA B200", 10, 0, "blackwell", "sm_100", AMPERE | FP8, 148, -1, 0, 1,
     180ull << 30, 0, "0000:1b:00.0", "full"},
    {"rtx5090.json", "NVIDIA GeForce RTX 5090", 12, 0, "blackwell", "sm_120", AMPERE | FP8, 170,
     2407, 0, 0, 32ull << 30, 100663296, "0000:41:00.0", "reduced"},
};

static gpuopt_status list_with(const char *library, const char *devices, void **st,
                               gpo_device_list *list, char *why, size_t cap)
{
    cuda_env e;
    cuda_env_init(&e, library, NO_KERNEL_DRIVER);
    fake_cuda_configure(strcmp(library, FAKE_CUDA_LEGACY) == 0 ? &legacy : &full, devices, NULL,
                        NULL);
    return cuda_load_and_list(&e, st, list, why, cap);
}

static void each_described_gpu_has_the_right_architecture_and_facts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        const struct gpu_case *g = &gpus[i];
        void *st = NULL;
        gpo_device_list list;
        char why[512];
        if (list_with(FAKE_CUDA_FULL, fake_devices(g->file, NULL), &st, &list, why, sizeof why))
            fail_msg("%s: %s", g->file, why);
        assert_string_equal(full.config_error(), "");
        assert_int_equal(list.n, 1);
        gpuopt_device *d = list.items[0];
        const gpuopt_device_info *in = &d->info;
        assert_string_equal(in->name, g->name);
        assert_string_equal(in->vendor, "NVIDIA");
        assert_int_equal(in->type, GPUOPT_DEVICE_TYPE_GPU);
        assert_int_equal(in->index, 0);
        assert_int_equal(in->cc_major, g->cc_major);
        assert_int_equal(in->cc_minor, g->cc_minor);
        assert_string_equal(in->arch_family, g->family);
        assert_string_equal(in->arch_name, g->sm);
        assert_int_equal(in->arch_extrapolated, 0);
        assert_int_equal(in->simd_width, 32);
        assert_int_equal(in->features, g->features);
        assert_int_equal(in->features_known, AMPERE | FP8);
        assert_int_equal(in->compute_units, g->sms);
        assert_int_equal(in->clock_mhz, g->clock_mhz);
        assert_int_equal(in->integrated, g->integrated);
        assert_int_equal(in->ecc, g->ecc);
        assert_int_equal(in->unified_memory, 1);
        assert_int_equal(in->max_threads_per_block, 1024);
        assert_int_equal(in->shared_mem_per_block, 49152);
        assert_int_equal(in->memory_bytes, g->memory);
        assert_int_equal(in->l2_bytes, g->l2);
        assert_int_equal(in->memory_free_bytes, 0); /* listing never reads it */
        assert_string_equal(in->pci_bus_id, g->pci);
        assert_int_equal(strlen(in->uuid), 40);
        assert_memory_equal(in->uuid, "GPU-", 4);
        assert_string_equal(in->driver_version, "13.0");
        assert_string_equal(cuda_detail_string(d, "fp64_rate"), g->fp64_rate);
        assert_string_equal(cuda_detail_string(d, "source"), "driver");
        assert_true(cuda_detail_number(d, "managed_memory") == 1);
        if (g->clock_mhz > 0) {
            double lanes = cuda_detail_number(d, "fp32_lanes_per_multiprocessor");
            assert_true(d->est_gflops > 0);
            assert_true(d->est_gflops == g->sms * lanes * g->clock_mhz * 2.0 / 1000.0);
        } else {
            assert_true(d->est_gflops == 0); /* unknown clock: no estimate */
        }
        gpo_device_list_free(&list);
        gpo_backend_cuda.unload(st);
    }
}

static void listing_creates_no_context(void **state)
{
    (void)state;
    void *st = NULL;
    gpo_device_list list;
    char why[512];
    assert_int_equal(
        list_with(FAKE_CUDA_FULL,
                  fake_devices("h100-sxm5.json", "a100-sxm4-40gb.json", "t4.json", NULL), &st,
                  &list, why, sizeof why),
        GPUOPT_OK);
    assert_int_equal(list.n, 3);
    assert_int_equal(full.calls("cuDevicePrimaryCtxRetain"), 0);
    assert_int_equal(full.calls("cuCtxPushCurrent_v2"), 0);
    assert_int_equal(full.calls("cuMemGetInfo_v2"), 0);
    assert_int_equal(full.contexts_created(), 0);
    assert_int_equal(full.live_contexts(), 0);
    /* The _v2 entry points, never the legacy ABI ones. */
    assert_true(full.calls("cuDeviceTotalMem_v2") == 3);
    assert_int_equal(full.calls("cuDeviceTotalMem"), 0);
    assert_true(full.calls("cuDeviceGetUuid_v2") == 3);
    /* The unversioned UUID call only tells a MIG instance (its answer
     * differs from _v2's there); the UUID listed is _v2's. */
    assert_int_equal(full.calls("cuDeviceGetUuid"), 3);
    /* Native order, indices as the driver numbers them. */
    assert_string_equal(list.items[0]->info.name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(list.items[2]->info.name, "Tesla T4");
    assert_int_equal(list.items[2]->info.index, 2);
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

static void device_order_and_visibility_are_the_drivers(void **state)
{
    (void)state;
    void *st = NULL;
    gpo_device_list list;
    char why[512];
    setenv("CUDA_VISIBLE_DEVICES", "2,0", 1);
    gpuopt_status s = list_with(
        FAKE_CUDA_FULL, fake_devices("h100-sxm5.json", "a100-sxm4-40gb.json", "t4.json", NULL), &st,
        &list, why, sizeof why);
    unsetenv("CUDA_VISIBLE_DEVICES");
    assert_int_equal(s, GPUOPT_OK);
    assert_int_equal(list.n, 2);
    assert_string_equal(list.items[0]->info.name, "Tesla T4");
    assert_int_equal(list.items[0]->info.index, 0);
    assert_string_equal(list.items[1]->info.name, "NVIDIA H100 80GB HBM3");
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

static void details_hold_what_the_record_has_no_field_for(void **state)
{
    (void)state;
    void *st = NULL;
    gpo_device_list list;
    char why[512];
    assert_int_equal(list_with(FAKE_CUDA_FULL, fake_devices("h100-sxm5.json", NULL), &st, &list,
                               why, sizeof why),
                     GPUOPT_OK);
    gpuopt_device *d = list.items[0];
    assert_true(cuda_detail_number(d, "memory_bus_width_bits") == 5120);
    assert_true(cuda_detail_number(d, "memory_clock_mhz") == 2619);
    assert_true(cuda_detail_number(d, "shared_mem_per_block_optin") == 232448);
    assert_true(cuda_detail_number(d, "shared_mem_per_multiprocessor") == 233472);
    assert_true(cuda_detail_number(d, "max_threads_per_multiprocessor") == 2048);
    assert_true(cuda_detail_number(d, "single_to_double_perf_ratio") == 2);
    assert_true(cuda_detail_number(d, "cluster_launch") == 1);
    assert_true(cuda_detail_number(d, "concurrent_managed_access") == 1);
    assert_true(cuda_detail_number(d, "max_grid_dim_x") == 2147483647);
    assert_string_equal(cuda_detail_string(d, "compute_mode"), "DEFAULT");
    /* 2 x 2619 MHz x 5120 bits / 8: the datasheet's 3.35 TB/s. */
    assert_true(cuda_detail_number(d, "theoretical_bandwidth_gbs") == 3352);
    /* deviceQuery's "3 copy engine(s)" on an H100: in the details and the
     * record the latency advice reads (transfer.streams). */
    assert_true(cuda_detail_number(d, "async_engine_count") == 3);
    assert_int_equal(d->copy_engines, 3);
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

static void attributes_an_older_driver_lacks_are_left_unknown(void **state)
{
    (void)state;
    void *st = NULL;
    gpo_device_list list;
    char why[512];
    /* k80.json leaves out CLUSTER_LAUNCH and MPS_ENABLED (newer than R470). */
    assert_int_equal(
        list_with(FAKE_CUDA_FULL, fake_devices("k80.json", NULL), &st, &list, why, sizeof why),
        GPUOPT_OK);
    gpuopt_device *d = list.items[0];
    assert_true(cuda_detail_number(d, "cluster_launch") == -1);
    assert_true(cuda_detail_number(d, "mps_enabled") == -1);
    assert_true(cuda_detail_number(d, "multi_gpu_board") == 1);
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

static void future_capability_is_extrapolated_not_refused(void **state)
{
    (void)state;
    void *st = NULL;
    gpo_device_list list;
    char why[512];
    assert_int_equal(list_with(FAKE_CUDA_FULL, fake_devices("future-cc13.json", NULL), &st, &list,
                               why, sizeof why),
                     GPUOPT_OK);
    const gpuopt_device_info *in = &list.items[0]->info;
    assert_int_equal(in->cc_major, 13);
    assert_int_equal(in->cc_minor, 0);
    assert_string_equal(in->arch_name, "sm_130");
    assert_string_equal(in->arch_family, "newer-than-blackwell");
    assert_int_equal(in->arch_extrapolated, 1);
    assert_int_equal(in->features, AMPERE | FP8);
    assert_true(list.items[0]->est_gflops > 0);
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

static void a_compute_capability_that_is_not_one_fails_in_words(void **state)
{
    (void)state;
    void *st = NULL;
    gpo_device_list list;
    char why[512];
    assert_int_equal(
        list_with(FAKE_CUDA_FULL, fake_devices("bad-cc.json", NULL), &st, &list, why, sizeof why),
        GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(why, "compute capability 0.0, which is not one"));
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

static void old_driver_uuid_comes_from_the_unversioned_call(void **state)
{
    (void)state;
    void *st = NULL;
    gpo_device_list list;
    char why[512];
    assert_int_equal(
        list_with(FAKE_CUDA_LEGACY, fake_devices("k80.json", NULL), &st, &list, why, sizeof why),
        GPUOPT_OK);
    assert_string_equal(list.items[0]->info.uuid, "GPU-6d5f3c1e-2b8a-4f0e-9c71-0a3b5e7d9f21");
    assert_int_equal(legacy.calls("cuDeviceGetUuid"), 1);
    assert_int_equal(legacy.calls("cuDeviceGetUuid_v2"), 0);
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

/* Under MIG the instance's UUID is _v2's and differs from the GPU's (the
 * unversioned call's): it is listed as nvidia-smi -L and
 * CUDA_VISIBLE_DEVICES spell it, MIG-..., and said to be an instance. */
static void a_mig_instance_is_listed_with_its_mig_uuid(void **state)
{
    (void)state;
    void *st = NULL;
    gpo_device_list list;
    char why[512];
    assert_int_equal(list_with(FAKE_CUDA_FULL,
                               fake_devices("a100-sxm4-40gb.json", "a100-mig-3g20gb.json", NULL),
                               &st, &list, why, sizeof why),
                     GPUOPT_OK);
    assert_int_equal(list.n, 2);
    assert_string_equal(list.items[0]->info.uuid, "GPU-3c5e7a9b-1d2f-4b4d-8f6a-8b0c2d4e6f8a");
    assert_string_equal(list.items[1]->info.uuid, "MIG-00000000-0000-4000-8000-0000000003a1");
    assert_string_equal(list.items[1]->info.name, "NVIDIA A100-SXM4-40GB MIG 3g.20gb");
    assert_int_equal(list.items[1]->info.compute_units, 42);
    const cJSON *whole =
        cJSON_GetObjectItem(gpo_device_details(list.items[0], "cuda"), "mig_instance");
    const cJSON *mig =
        cJSON_GetObjectItem(gpo_device_details(list.items[1], "cuda"), "mig_instance");
    assert_true(cJSON_IsFalse(whole));
    assert_true(cJSON_IsTrue(mig));
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

static void a_device_count_of_zero_lists_nothing(void **state)
{
    (void)state;
    void *st = NULL;
    gpo_device_list list;
    char why[512];
    cuda_env e;
    cuda_env_init(&e, FAKE_CUDA_FULL, NO_KERNEL_DRIVER);
    /* cuInit succeeds (forced) but there is nothing to list. */
    fake_cuda_configure(&full, NULL, "CUDA_SUCCESS", NULL);
    assert_int_equal(cuda_load_and_list(&e, &st, &list, why, sizeof why), GPUOPT_OK);
    assert_int_equal(list.n, 0);
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_described_gpu_has_the_right_architecture_and_facts),
        cmocka_unit_test(listing_creates_no_context),
        cmocka_unit_test(device_order_and_visibility_are_the_drivers),
        cmocka_unit_test(details_hold_what_the_record_has_no_field_for),
        cmocka_unit_test(attributes_an_older_driver_lacks_are_left_unknown),
        cmocka_unit_test(future_capability_is_extrapolated_not_refused),
        cmocka_unit_test(a_compute_capability_that_is_not_one_fails_in_words),
        cmocka_unit_test(old_driver_uuid_comes_from_the_unversioned_call),
        cmocka_unit_test(a_mig_instance_is_listed_with_its_mig_uuid),
        cmocka_unit_test(a_device_count_of_zero_lists_nothing),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
