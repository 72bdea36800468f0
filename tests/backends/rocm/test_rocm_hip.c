/* The ROCm backend over the HIP test double, once per HIP major (5, 6, 7):
 * every described GPU gets the right family, gfx target, wavefront, compute
 * units and features whichever attribute numbering and props layout the
 * runtime has; KFD enrichment; free memory; versions; no-device and
 * too-old runtimes in words. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend_env.h"
#include "rocm/rocm_hip.h"
#include "rocm/rocm_runtime.h"
#include "rocm_test.h"

#define FP8 GPUOPT_FEATURE_FP8
#define TF32 GPUOPT_FEATURE_TF32
#define BF16 GPUOPT_FEATURE_BF16
#define INT8 GPUOPT_FEATURE_INT8
#define MX GPUOPT_FEATURE_MATRIX_UNITS

typedef struct gpu {
    const char *json;
    const char *name, *gfx, *target_id, *family;
    int wavefront, cus, hip_mp, clock_mhz;
    uint64_t memory, l2;
    const char *pci, *uuid;
    int ecc;
    uint32_t has, lacks;
} gpu;

static const gpu gpus[] = {
    {"rx580", "AMD Radeon RX 580 Series", "gfx803", "gfx803", "gcn4", 64, 36, 36, 1340,
     8589934592ull, 2097152, "0000:01:00.0", "", 0, GPUOPT_FEATURE_FP16, BF16 | INT8 | MX},
    {"mi50", "AMD Instinct MI60 / MI50", "gfx906", "gfx906:sramecc+:xnack-", "gcn5", 64, 60, 60,
     1725, 17179869184ull, 4194304, "0000:23:00.0", "GPU-4a1f6c0e2b9d3785", 1, INT8, MX | BF16},
    {"mi100", "AMD Instinct MI100", "gfx908", "gfx908:sramecc+:xnack-", "cdna1", 64, 120, 120, 1502,
     34359738368ull, 8388608, "0000:43:00.0", "GPU-5e3a91c07d24b6f1", 1, MX | BF16 | INT8, FP8},
    {"mi210", "AMD Instinct MI210", "gfx90a", "gfx90a:sramecc+:xnack-", "cdna2", 64, 104, 104, 1700,
     68702699520ull, 8388608, "0000:63:00.0", "GPU-7b0c2e94f1d85a36", 1, MX | BF16, FP8},
    {"mi300x", "AMD Instinct MI300X", "gfx942", "gfx942:sramecc+:xnack-", "cdna3", 64, 304, 304,
     2100, 206158430208ull, 4194304, "0000:11:00.0", "GPU-3d7a0f52c19e86b4", 1,
     MX | FP8 | TF32 | BF16, 0},
    {"rx6900xt", "AMD Radeon RX 6900 XT", "gfx1030", "gfx1030", "rdna2", 32, 80, 40, 2250,
     17163091968ull, 4194304, "0000:0c:00.0", "GPU-1c8e5b27a6f093d4", 0, INT8, MX | BF16},
    {"rx7900xtx", "AMD Radeon RX 7900 XTX", "gfx1100", "gfx1100", "rdna3", 32, 96, 48, 2500,
     25753026560ull, 6291456, "0000:03:00.0", "GPU-6f2d84b1e0c7395a", 0, MX | BF16 | INT8, FP8},
};
#define N_GPUS (sizeof gpus / sizeof gpus[0])

static const char *all_devices(void)
{
    const char *names[N_GPUS + 1];
    for (size_t i = 0; i < N_GPUS; i++)
        names[i] = gpus[i].json;
    names[N_GPUS] = NULL;
    return fake_devices(names);
}

static void clear_env(void)
{
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("ROCR_VISIBLE_DEVICES");
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("GPU_ENABLE_WGP_MODE");
    unsetenv("GPUOPT_FAKE_HIP_VERSION");
}

static void check_gpu(const gpuopt_device *d, const gpu *g, int index)
{
    const cJSON *det = rocm_details(d);
    assert_int_equal(d->info.index, index);
    assert_int_equal(d->info.type, GPUOPT_DEVICE_TYPE_GPU);
    assert_string_equal(d->info.vendor, "AMD");
    assert_string_equal(d->info.name, g->name);
    assert_string_equal(d->info.arch_name, g->gfx);
    assert_string_equal(d->info.arch_family, g->family);
    assert_int_equal(d->info.arch_extrapolated, 0);
    assert_int_equal(d->info.simd_width, g->wavefront);
    assert_int_equal(d->info.compute_units, g->cus);
    assert_int_equal(d->info.clock_mhz, g->clock_mhz);
    assert_int_equal(d->info.max_threads_per_block, 1024);
    assert_int_equal(d->info.ecc, g->ecc);
    assert_int_equal(d->info.integrated, 0);
    assert_int_equal(d->info.unified_memory, 1);
    assert_int_equal(d->info.cc_major, -1);
    assert_true(d->info.memory_bytes == g->memory);
    assert_true(d->info.l2_bytes == g->l2);
    assert_true(d->info.shared_mem_per_block == 65536);
    assert_string_equal(d->info.pci_bus_id, g->pci);
    assert_string_equal(d->info.uuid, g->uuid);
    assert_int_equal(d->info.features & g->has, g->has);
    assert_int_equal(d->info.features & g->lacks, 0);
    assert_true(d->info.features & GPUOPT_FEATURE_FP64);
    assert_true(d->est_gflops > 0);
    assert_non_null(det);
    assert_string_equal(cJSON_GetObjectItem(det, "target_id")->valuestring, g->target_id);
    assert_int_equal(cJSON_GetObjectItem(det, "hip_multiprocessor_count")->valueint, g->hip_mp);
    assert_string_equal(cJSON_GetObjectItem(det, "source")->valuestring, "hip");
    assert_null(cJSON_GetObjectItem(det, "notes"));
}

static void each_gpu_is_described_alike_by_every_hip_major(void **state)
{
    (void)state;
    clear_env();
    for (int major = 5; major <= 7; major++) {
        rocm_env e;
        rocm_run r;
        char version[32];
        assert_int_equal(fake_reset(major, all_devices(), NULL), (int)N_GPUS);
        rocm_env_init(&e, NULL, fake_hip_path(major));
        rocm_run_do(&r, &e);
        assert_int_equal(r.load, GPUOPT_OK);
        assert_string_equal(r.report.reason, "");
        assert_int_equal(r.enumerate, GPUOPT_OK);
        assert_int_equal(r.list.n, N_GPUS);
        snprintf(version, sizeof version, "%s",
                 major == 5   ? "5.7.31921"
                 : major == 6 ? "6.2.41133"
                              : "7.0.51831");
        assert_string_equal(r.report.runtime_version, version);
        assert_string_equal(r.report.driver_version, version);
        assert_non_null(strstr(r.report.library, "libamdhip64.so."));
        assert_non_null(strstr(r.report.library, version)); /* the real file, not the link */
        for (size_t i = 0; i < N_GPUS; i++) {
            check_gpu(r.list.items[i], &gpus[i], (int)i);
            assert_string_equal(r.list.items[i]->info.runtime_version, version);
        }
        rocm_run_free(&r);
    }
}

static void rdna_compute_units_follow_hips_wgp_mode(void **state)
{
    static const char *const one[] = {"rx7900xtx", NULL};
    rocm_env e;
    rocm_run r;
    (void)state;
    clear_env();
    setenv("GPU_ENABLE_WGP_MODE", "0", 1); /* the runtime then counts CUs */
    fake_reset(6, fake_devices(one), NULL);
    rocm_env_init(&e, NULL, fake_hip_path(6));
    rocm_run_do(&r, &e);
    assert_int_equal(r.list.n, 1);
    assert_int_equal(r.list.items[0]->info.compute_units, 96);
    const cJSON *det = rocm_details(r.list.items[0]);
    assert_int_equal(cJSON_GetObjectItem(det, "hip_multiprocessor_count")->valueint, 96);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(det, "wgp_mode")));
    rocm_run_free(&r);
    clear_env();
}

static void kfd_nodes_enrich_the_hip_devices_of_the_same_gpu(void **state)
{
    static const char *const one[] = {"mi300x", NULL};
    static const char *const two[] = {"rx7900xtx", NULL};
    rocm_env e;
    rocm_run r;
    (void)state;
    clear_env();
    fake_reset(6, fake_devices(one), NULL);
    rocm_env_init(&e, kfd_root(0, "mi300x"), fake_hip_path(6));
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_OK);
    assert_int_equal(r.list.n, 1); /* HIP's view wins: one device, not eight */
    const cJSON *det = rocm_details(r.list.items[0]);
    assert_string_equal(cJSON_GetObjectItem(det, "source")->valuestring, "hip+kfd");
    assert_int_equal(cJSON_GetObjectItem(det, "kfd_node")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(det, "num_xcc")->valueint, 8);
    assert_int_equal(cJSON_GetObjectItem(det, "simd_per_cu")->valueint, 4);
    assert_string_equal(cJSON_GetObjectItem(det, "pci_device_id")->valuestring, "0x74a1");
    assert_non_null(cJSON_GetObjectItem(det, "xgmi_hive_id"));
    rocm_run_free(&r);

    /* RDNA3: CUs from KFD (SIMDs / 2), whatever HIP's WGP count says. */
    setenv("GPU_ENABLE_WGP_MODE", "1", 1);
    fake_reset(5, fake_devices(two), NULL);
    rocm_env_init(&e, kfd_root(0, "rx7900xtx"), fake_hip_path(5));
    rocm_run_do(&r, &e);
    assert_int_equal(r.list.n, 1);
    assert_int_equal(r.list.items[0]->info.compute_units, 96);
    det = rocm_details(r.list.items[0]);
    assert_int_equal(cJSON_GetObjectItem(det, "simd_per_cu")->valueint, 2);
    assert_string_equal(cJSON_GetObjectItem(det, "pci_revision")->valuestring, "0xc8");
    rocm_run_free(&r);
    clear_env();
}

static void hip_applies_its_own_visibility_and_the_backend_does_not_again(void **state)
{
    static const char *const three[] = {"mi100", "mi210", "mi300x", NULL};
    rocm_env e;
    rocm_run r;
    (void)state;
    clear_env();
    setenv("HIP_VISIBLE_DEVICES", "2", 1);
    assert_int_equal(fake_reset(6, fake_devices(three), NULL), 1);
    rocm_env_init(&e, kfd_root(0, "mi300x"), fake_hip_path(6));
    rocm_run_do(&r, &e);
    assert_int_equal(r.list.n, 1);
    assert_int_equal(r.list.items[0]->info.index, 0);
    assert_string_equal(r.list.items[0]->info.name, "AMD Instinct MI300X");
    rocm_run_free(&r);
    clear_env();
}

static void free_memory_reads_the_device_and_restores_the_current_one(void **state)
{
    static const char *const two[] = {"mi100", "rx6900xt", NULL};
    rocm_env e;
    rocm_run r;
    gpo_route route;
    uint64_t free_bytes = 0;
    (void)state;
    clear_env();
    fake_reset(6, fake_devices(two), NULL);
    rocm_env_init(&e, NULL, fake_hip_path(6));
    rocm_run_do(&r, &e);
    assert_int_equal(r.list.n, 2);
    rocm_route_of(&r, 1, &route);
    assert_int_equal(rocm_free(r.state, &route, &free_bytes), GPUOPT_OK);
    assert_true(free_bytes == 16894656512ull);
    rocm_route_of(&r, 0, &route);
    assert_int_equal(rocm_free(r.state, &route, &free_bytes), GPUOPT_OK);
    assert_true(free_bytes == 34091302912ull);

    /* The host program's current device is left as it was. */
    void *h = dlopen(fake_hip_path(6), RTLD_NOW | RTLD_LOCAL);
    int (*get)(int *), (*set)(int);
    void *s1 = dlsym(h, "hipGetDevice"), *s2 = dlsym(h, "hipSetDevice");
    memcpy(&get, &s1, sizeof s1);
    memcpy(&set, &s2, sizeof s2);
    int cur = -1;
    assert_int_equal(set(1), 0);
    rocm_route_of(&r, 0, &route);
    assert_int_equal(rocm_free(r.state, &route, &free_bytes), GPUOPT_OK);
    assert_int_equal(get(&cur), 0);
    assert_int_equal(cur, 1);
    /* The note for the log says what was done to the thread's device. */
    assert_non_null(strstr(gpo_detail_get(), "the thread's device 1 given back after it"));
    rocm_route_of(&r, 1, &route);
    assert_int_equal(rocm_free(r.state, &route, &free_bytes), GPUOPT_OK);
    assert_non_null(strstr(gpo_detail_get(), "on the thread's current device"));
    assert_int_equal(set(0), 0);
    dlclose(h);

    route.index = 7;
    assert_int_equal(rocm_free(r.state, &route, &free_bytes), GPUOPT_ERR_OUT_OF_RANGE);
    route.index = -1;
    assert_int_equal(rocm_free(r.state, &route, &free_bytes), GPUOPT_ERR_OUT_OF_RANGE);
    rocm_run_free(&r);
}

static void no_gpu_is_unavailable_in_words(void **state)
{
    rocm_env e;
    rocm_run r;
    (void)state;
    clear_env();
    fake_reset(6, NULL, NULL);
    rocm_env_init(&e, NULL, fake_hip_path(6));
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_null(r.state);
    assert_non_null(strstr(r.report.reason,
                           "hipInit returned hipErrorInvalidDevice (101): invalid device ordinal"));
    assert_non_null(strstr(r.report.reason, "/dev/kfd does not exist"));
    assert_string_equal(r.report.runtime_version, "6.2.41133");
    assert_non_null(strstr(r.report.library, "hip6"));
    rocm_run_free(&r);

    /* The kernel shows GPUs and /dev/kfd is there: they are listed, and the
     * reason points at visibility and target support. */
    rocm_env_init(&e, kfd_root(0, "mi300x"), fake_hip_path(6));
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(r.state);
    assert_non_null(strstr(r.report.reason, "/dev/kfd is usable"));
    assert_non_null(strstr(r.report.reason, "8 AMD GPU(s)"));
    assert_int_equal(r.list.n, 8);
    assert_string_equal(r.list.items[0]->info.runtime_version, "6.2.41133");
    rocm_run_free(&r);
}

static void init_failures_are_classified(void **state)
{
    static const char *const one[] = {"mi210", NULL};
    static const struct {
        const char *fail;
        gpuopt_status status;
        const char *words;
    } cases[] = {
        {"hipInit:1:hipErrorInsufficientDriver", GPUOPT_ERR_UNAVAILABLE,
         "the amdgpu kernel driver is older"},
        {"hipInit:1:hipErrorNoDevice", GPUOPT_ERR_UNAVAILABLE, "hipErrorNoDevice (100)"},
        {"hipInit:1:hipErrorNotInitialized", GPUOPT_ERR_DRIVER, "hipErrorNotInitialized (3)"},
        {"hipGetDeviceCount:1:hipErrorNoDevice", GPUOPT_ERR_UNAVAILABLE, "hipGetDeviceCount"},
        {"hipGetDeviceCount:1:35", GPUOPT_ERR_UNAVAILABLE, "older than this HIP runtime"},
        {"hipRuntimeGetVersion:1:hipErrorUnknown", GPUOPT_ERR_DRIVER,
         "hipRuntimeGetVersion returned hipErrorUnknown (999)"},
        {"hipGetDeviceCount:1:12345", GPUOPT_ERR_DRIVER, "HIP error 12345"},
    };
    (void)state;
    clear_env();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rocm_env e;
        rocm_run r;
        fake_reset(6, fake_devices(one), cases[i].fail);
        rocm_env_init(&e, NULL, fake_hip_path(6));
        rocm_run_do(&r, &e);
        if (r.load != cases[i].status)
            fail_msg("case %zu (%s): status %d, reason '%s'", i, cases[i].fail, r.load,
                     r.report.reason);
        assert_null(r.state);
        if (!strstr(r.report.reason, cases[i].words))
            fail_msg("case %zu: reason '%s' lacks '%s'", i, r.report.reason, cases[i].words);
        assert_string_equal(r.detail, r.report.reason);
        rocm_run_free(&r);
    }
}

static void runtimes_older_than_rocm5_are_refused_and_newer_ones_extrapolated(void **state)
{
    static const char *const one[] = {"mi210", NULL};
    rocm_env e;
    rocm_run r;
    (void)state;
    clear_env();
    setenv("GPUOPT_FAKE_HIP_VERSION", "40522212", 1); /* HIP 4.5 */
    fake_reset(5, fake_devices(one), NULL);
    rocm_env_init(&e, NULL, fake_hip_path(5));
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(strstr(r.report.reason, "HIP 4.5.22212"));
    assert_non_null(strstr(r.report.reason, "older than ROCm 5.0"));
    assert_non_null(strstr(r.report.reason, "install ROCm 5.0 or newer"));
    rocm_run_free(&r);

    setenv("GPUOPT_FAKE_HIP_VERSION", "80012345", 1); /* a future HIP 8 */
    fake_reset(7, fake_devices(one), NULL);
    rocm_env_init(&e, NULL, fake_hip_path(7));
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_OK);
    assert_non_null(strstr(r.report.reason, "HIP 8.0.12345 is newer than this library's tables"));
    assert_int_equal(r.list.n, 1);
    assert_string_equal(r.list.items[0]->info.arch_family, "cdna2");
    rocm_run_free(&r);
    clear_env();
}

static void missing_library_is_unavailable_with_the_path(void **state)
{
    rocm_env e;
    rocm_run r;
    (void)state;
    rocm_env_init(&e, NULL, "/nonexistent");
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_null(r.state);
    assert_non_null(strstr(r.report.reason, "could not be opened: /nonexistent"));
    assert_non_null(strstr(r.report.reason, "GPUOPT_HIP_LIBRARY"));
    rocm_run_free(&r);

    /* A library that is not a HIP runtime: present but broken. */
    rocm_env_init(&e, NULL, "libm.so.6");
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(r.report.reason, "lacks hipRuntimeGetVersion, hipGetDeviceCount"));
    assert_non_null(strstr(r.report.library, "libm"));
    rocm_run_free(&r);
}

/* The ops table as the core sees it. (NULL arguments are the core's
 * contract with a backend, asserted there, not refused.) */
static void the_ops_table_declares_the_rocm_backend(void **state)
{
    (void)state;
    gpo_backend_rocm.unload(NULL);
    assert_string_equal(gpo_backend_rocm.name, "rocm");
    assert_int_equal(gpo_backend_rocm.abi, GPO_BACKEND_ABI);
    assert_int_equal(gpo_backend_rocm.native_gpu, 1);
    assert_int_equal(gpo_backend_rocm.fork_sensitive, 1);
    assert_non_null(gpo_backend_rocm.tier0);
    assert_non_null(gpo_backend_rocm.tier1);
    assert_null(gpo_backend_rocm.tier2); /* the core's measured tier drives .runtime */
    assert_ptr_equal(gpo_backend_rocm.runtime, &gpo_rocm_runtime);
    assert_non_null(gpo_backend_rocm.diagnose);
    /* The catalogue is sized by the array itself: every entry is a knob. */
    assert_true(gpo_backend_rocm.n_knobs > 0);
    for (size_t i = 0; i < gpo_backend_rocm.n_knobs; i++)
        assert_non_null(gpo_backend_rocm.knobs[i].name);
    assert_int_equal(gpo_backend_rocm.n_libraries, 3);
    assert_string_equal(gpo_backend_rocm.libraries[0].variable, "GPUOPT_HIP_LIBRARY");
    assert_string_equal(gpo_backend_rocm.libraries[1].variable, "GPUOPT_HIPRTC_LIBRARY");
    assert_string_equal(gpo_backend_rocm.libraries[2].variable, "GPUOPT_ROCTX_LIBRARY");
    /* The profiler's sections reach rocprof through roctx. */
    assert_non_null(gpo_backend_rocm.ranges);
    assert_string_equal(gpo_backend_rocm.ranges->tool, "roctx");
}

static void hip_helpers_refuse_nonsense(void **state)
{
    char out[32];
    int extrapolated = 7;
    (void)state;
    assert_null(gpo_hip_abi_for(4, &extrapolated));
    assert_int_equal(extrapolated, 0);
    assert_null(gpo_hip_abi_for(-1, NULL));
    assert_int_equal(gpo_hip_abi_for(9, &extrapolated)->major, 7);
    assert_int_equal(extrapolated, 1);
    /* The ROCm 6 layout is not the ROCm 5 one: reading gcnArchName at the
     * wrong offset is the bug these tables exist to prevent. */
    assert_int_not_equal(gpo_hip_abi_for(5, NULL)->props_gcn_arch_name,
                         gpo_hip_abi_for(6, NULL)->props_gcn_arch_name);
    assert_int_equal(gpo_hip_abi_for(5, NULL)->attr[GPO_HIP_ATTR_NUMBER_OF_XCCS], -1);
    assert_int_equal(gpo_hip_version_text(60241133, out, sizeof out), 0);
    assert_string_equal(out, "6.2.41133");
    assert_int_equal(gpo_hip_version_text(-5, out, sizeof out), -1);
    assert_string_equal(out, "");
    assert_int_equal(gpo_hip_version_text(1, NULL, 4), -1);
    assert_string_equal(gpo_hip_error_name(100), "hipErrorNoDevice");
    assert_null(gpo_hip_error_name(123456));
    gpo_hip_error_text(NULL, 101, out, sizeof out);
    assert_string_equal(out, "hipErrorInvalidDevice (101)");
    gpo_hip_error_text(NULL, 77, out, sizeof out);
    assert_string_equal(out, "HIP error 77");
    gpo_hip_error_text(NULL, 77, NULL, 0); /* no room: nothing written, no crash */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_gpu_is_described_alike_by_every_hip_major),
        cmocka_unit_test(rdna_compute_units_follow_hips_wgp_mode),
        cmocka_unit_test(kfd_nodes_enrich_the_hip_devices_of_the_same_gpu),
        cmocka_unit_test(hip_applies_its_own_visibility_and_the_backend_does_not_again),
        cmocka_unit_test(free_memory_reads_the_device_and_restores_the_current_one),
        cmocka_unit_test(no_gpu_is_unavailable_in_words),
        cmocka_unit_test(init_failures_are_classified),
        cmocka_unit_test(runtimes_older_than_rocm5_are_refused_and_newer_ones_extrapolated),
        cmocka_unit_test(missing_library_is_unavailable_with_the_path),
        cmocka_unit_test(the_ops_table_declares_the_rocm_backend),
        cmocka_unit_test(hip_helpers_refuse_nonsense),
    };
    return cmocka_run_group_tests(tests, rocm_test_clean_env, NULL);
}
