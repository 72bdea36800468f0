/* A CUDA GPU's live memory (the ops table's memory_live) from each source in
 * turn: the calling thread's current context, NVML without any context (the
 * NVML double answers from the same device descriptions as the libcuda
 * double), an already active primary context, and, only when the caller
 * allows it, a primary context made for the reading; every path puts back
 * what it touched (reference counts, the thread's context stack), and a
 * missing NVML says so and falls back. */
#include <pthread.h>
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
#define MAY GPO_MEMORY_MAY_CREATE_CONTEXT

/* h100-sxm5.json and t4.json */
#define H100_TOTAL 85899345920ull
#define H100_FREE 85362475008ull
#define T4_TOTAL 17179869184ull
#define T4_FREE 16642998272ull
#define H100_UUID "GPU-6f8b0d2e-4a5c-4e7a-9c1d-1e3f5a7b9c1d"
#define T4_UUID "GPU-2b4d6f8a-0c1e-4a3c-9e5f-7a9b1c3d5e7f"

static fake_cuda full, legacy;
static fake_nvml nvml;

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("GPUOPT_FAKE_NVML_DEVICES");
    unsetenv("GPUOPT_FAKE_NVML_INIT");
    unsetenv("GPUOPT_FAKE_NVML_FAIL");
    unsetenv("GPUOPT_FAKE_NVML_USED");
    return fake_cuda_open(&full, FAKE_CUDA_FULL) || fake_cuda_open(&legacy, FAKE_CUDA_LEGACY) ||
           fake_nvml_open(&nvml, FAKE_NVML);
}

/* Loads `library` over `devices` with NVML at `nvml_path` (NULL: a path that
 * does not exist, so the tests never meet a real NVML). */
static void *load_fake(const char *library, const fake_cuda *f, const char *devices,
                       const char *nvml_path)
{
    cuda_env e;
    gpo_backend_report rep;
    void *st = NULL;
    cuda_env_init(&e, library, NO_KERNEL_DRIVER);
    cuda_env_set_nvml(&e, nvml_path ? nvml_path : "/nonexistent/libnvidia-ml.so.1");
    fake_cuda_configure(f, devices, NULL, NULL);
    nvml.reset();
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_OK);
    return st;
}

/* A route as the core fills it for device `index` with `uuid` and `pci`. */
static gpo_route route_of(int index, const char *uuid, const char *pci)
{
    gpo_route r;
    memset(&r, 0, sizeof r);
    r.index = index;
    gpo_strlcpy(r.info.uuid, uuid ? uuid : "", sizeof r.info.uuid);
    gpo_strlcpy(r.info.pci_bus_id, pci ? pci : "", sizeof r.info.pci_bus_id);
    return r;
}

static void nvml_answers_without_creating_any_context(void **state)
{
    (void)state;
    void *st = load_fake(FAKE_CUDA_FULL, &full, fake_devices("t4.json", "h100-sxm5.json", NULL),
                         FAKE_NVML);
    gpo_route route = route_of(1, H100_UUID, "0000:18:00.0");
    gpo_memory_reading r;
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, 0, &r), GPUOPT_OK);
    assert_int_equal(r.source, GPUOPT_MEMORY_SOURCE_MANAGEMENT);
    assert_int_equal(r.total, H100_TOTAL);
    assert_int_equal(r.free, H100_FREE);
    assert_int_equal(r.used, H100_TOTAL - H100_FREE);
    assert_string_equal(r.source_text, "NVML nvmlDeviceGetMemoryInfo (by UUID)");
    assert_true(r.read_ns > 0);
    /* No CUDA context was touched, let alone created. */
    assert_int_equal(full.calls("cuDevicePrimaryCtxRetain"), 0);
    assert_int_equal(full.calls("cuMemGetInfo_v2"), 0);
    assert_int_equal(full.contexts_created(), 0);
    /* The T4, and NVML opened once for both readings. */
    route = route_of(0, T4_UUID, "0000:3b:00.0");
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, MAY, &r), GPUOPT_OK);
    assert_int_equal(r.free, T4_FREE);
    assert_int_equal(nvml.calls("nvmlInit_v2"), 1);
    assert_int_equal(nvml.calls("nvmlDeviceGetMemoryInfo"), 2);
    gpo_backend_cuda.unload(st);
    assert_int_equal(nvml.live_inits(), 0); /* nvmlShutdown balanced the init */
}

static void nvml_follows_what_other_processes_allocate(void **state)
{
    (void)state;
    setenv("GPUOPT_FAKE_NVML_USED", "1073741824", 1);
    void *st = load_fake(FAKE_CUDA_FULL, &full, fake_devices("t4.json", NULL), FAKE_NVML);
    gpo_route route = route_of(0, T4_UUID, NULL);
    gpo_memory_reading r;
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, 0, &r), GPUOPT_OK);
    assert_int_equal(r.free, T4_FREE - (1ull << 30));
    assert_int_equal(r.used, T4_TOTAL - T4_FREE + (1ull << 30));
    unsetenv("GPUOPT_FAKE_NVML_USED");
    gpo_backend_cuda.unload(st);
}

static void nvml_finds_a_gpu_by_pci_bus_id_when_its_uuid_is_unknown(void **state)
{
    (void)state;
    void *st = load_fake(FAKE_CUDA_FULL, &full, fake_devices("t4.json", NULL), FAKE_NVML);
    gpo_memory_reading r;
    gpo_route route = route_of(0, "GPU-00000000-0000-4000-8000-000000000000", "0000:3b:00.0");
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, 0, &r), GPUOPT_OK);
    assert_string_equal(r.source_text, "NVML nvmlDeviceGetMemoryInfo (by PCI bus id)");
    assert_int_equal(r.free, T4_FREE);
    /* No UUID at all: the PCI bus id alone, in NVML's short form too. */
    route = route_of(0, NULL, "3b:00.0");
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, 0, &r), GPUOPT_OK);
    assert_int_equal(r.total, T4_TOTAL);
    gpo_backend_cuda.unload(st);
}

/* A MIG instance's PCI location is its whole GPU's: NVML must not answer
 * for the instance with the GPU's numbers. */
static void a_mig_instance_is_never_looked_up_by_pci_bus_id(void **state)
{
    (void)state;
    setenv("GPUOPT_FAKE_NVML_DEVICES", fake_devices("a100-sxm4-40gb.json", NULL), 1);
    void *st =
        load_fake(FAKE_CUDA_FULL, &full, fake_devices("a100-mig-3g20gb.json", NULL), FAKE_NVML);
    gpo_memory_reading r;
    gpo_route route = route_of(0, "MIG-00000000-0000-4000-8000-0000000003a1", "0000:07:00.0");
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, 0, &r), GPUOPT_ERR_UNSUPPORTED);
    assert_int_equal(nvml.calls("nvmlDeviceGetHandleByPciBusId_v2"), 0);
    assert_non_null(strstr(gpo_detail_get(), "NVML_ERROR_NOT_FOUND"));
    unsetenv("GPUOPT_FAKE_NVML_DEVICES");
    gpo_backend_cuda.unload(st);
}

static void a_missing_nvml_says_so_and_falls_back(void **state)
{
    (void)state;
    void *st = load_fake(FAKE_CUDA_FULL, &full, fake_devices("h100-sxm5.json", NULL), NULL);
    gpo_route route = route_of(0, H100_UUID, "0000:18:00.0");
    gpo_memory_reading r;
    /* Nothing cheap answers, and the caller allows no context: unknown, in words. */
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, 0, &r), GPUOPT_ERR_UNSUPPORTED);
    const char *why = gpo_detail_get();
    assert_non_null(strstr(why, "NVML: cannot open /nonexistent/libnvidia-ml.so.1 "
                                "(GPUOPT_NVML_LIBRARY)"));
    assert_non_null(strstr(why, "no CUDA context is active on the device"));
    assert_int_equal(r.free, 0);
    assert_int_equal(full.contexts_created(), 0);
    /* A plan may create one: the driver answers. */
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, MAY, &r), GPUOPT_OK);
    assert_int_equal(r.source, GPUOPT_MEMORY_SOURCE_NEW_CONTEXT);
    assert_int_equal(r.free, H100_FREE);
    assert_non_null(strstr(r.source_text, "created for this reading and destroyed after it"));
    assert_int_equal(full.contexts_created(), 1);
    assert_int_equal(full.live_contexts(), 0);
    gpo_backend_cuda.unload(st);
}

static void nvml_that_fails_is_named_and_the_driver_answers(void **state)
{
    (void)state;
    static const struct {
        const char *var, *value, *words;
    } cases[] = {
        {"GPUOPT_FAKE_NVML_INIT", "9",
         "nvmlInit_v2 failed in " FAKE_NVML ": NVML_ERROR_DRIVER_NOT_LOADED"},
        {"GPUOPT_FAKE_NVML_FAIL", "nvmlDeviceGetMemoryInfo:15",
         "nvmlDeviceGetMemoryInfo failed: NVML_ERROR_GPU_IS_LOST (GPU is lost)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv(cases[i].var, cases[i].value, 1);
        void *st = load_fake(FAKE_CUDA_FULL, &full, fake_devices("t4.json", NULL), FAKE_NVML);
        gpo_route route = route_of(0, T4_UUID, NULL);
        gpo_memory_reading r;
        assert_int_equal(gpo_backend_cuda.memory_live(st, &route, 0, &r), GPUOPT_ERR_UNSUPPORTED);
        if (!strstr(gpo_detail_get(), cases[i].words))
            fail_msg("\"%s\" not in: %s", cases[i].words, gpo_detail_get());
        assert_int_equal(gpo_backend_cuda.memory_live(st, &route, MAY, &r), GPUOPT_OK);
        assert_int_equal(r.source, GPUOPT_MEMORY_SOURCE_NEW_CONTEXT);
        assert_int_equal(r.free, T4_FREE);
        unsetenv(cases[i].var);
        gpo_backend_cuda.unload(st);
    }
}

static void not_nvml_at_all_is_refused_with_what_it_lacks(void **state)
{
    (void)state;
    void *st = load_fake(FAKE_CUDA_FULL, &full, fake_devices("t4.json", NULL), FAKE_CUDA_FULL);
    gpo_route route = route_of(0, T4_UUID, NULL);
    gpo_memory_reading r;
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, 0, &r), GPUOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpo_detail_get(), "lacks nvmlInit_v2"));
    gpo_backend_cuda.unload(st);
}

static void free_memory_is_read_and_the_primary_context_released(void **state)
{
    (void)state;
    void *st =
        load_fake(FAKE_CUDA_FULL, &full, fake_devices("t4.json", "h100-sxm5.json", NULL), NULL);
    gpo_route route = route_of(1, NULL, NULL);
    gpo_memory_reading r;
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, MAY, &r), GPUOPT_OK);
    assert_int_equal(r.free, H100_FREE);
    assert_int_equal(r.total, H100_TOTAL);
    assert_int_equal(full.calls("cuDevicePrimaryCtxRetain"), 1);
    assert_int_equal(full.calls("cuDevicePrimaryCtxRelease_v2"), 1);
    assert_int_equal(full.calls("cuCtxPushCurrent_v2"), 1);
    assert_int_equal(full.calls("cuCtxPopCurrent_v2"), 1);
    assert_int_equal(full.calls("cuMemGetInfo_v2"), 1);
    assert_int_equal(full.calls("cuMemGetInfo"), 0);
    assert_int_equal(full.live_contexts(), 0);
    assert_int_equal(full.stack_depth(), 0);
    /* Asked twice, the same answer and still nothing held. */
    route.index = 0;
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, MAY, &r), GPUOPT_OK);
    assert_int_equal(r.free, (16ull << 30) - (512ull << 20));
    assert_int_equal(full.live_contexts(), 0);
    gpo_backend_cuda.unload(st);
}

/* The reading a second thread takes while the first holds the device's
 * primary context current. */
typedef struct other {
    void *st;
    gpuopt_status status;
    gpo_memory_reading r;
} other;

static void *read_on_another_thread(void *arg)
{
    other *o = arg;
    gpo_route route = route_of(0, NULL, NULL);
    o->status = gpo_backend_cuda.memory_live(o->st, &route, 0, &o->r);
    return NULL;
}

/* The host's current context answers first; a primary context the host
 * made active answers on another thread too; neither creates one. */
static void contexts_the_host_made_answer_without_creating_one(void **state)
{
    (void)state;
    void *st = load_fake(FAKE_CUDA_FULL, &full, fake_devices("h100-sxm5.json", NULL), NULL);
    gpo_route route = route_of(0, NULL, NULL);
    gpo_memory_reading r;
    assert_int_equal(full.make_current(0), 0);
    assert_int_equal(full.contexts_created(), 1);
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, 0, &r), GPUOPT_OK);
    assert_int_equal(r.source, GPUOPT_MEMORY_SOURCE_CONTEXT);
    assert_string_equal(r.source_text, "CUDA cuMemGetInfo in the calling thread's current context");
    assert_int_equal(r.free, H100_FREE);
    assert_int_equal(full.calls("cuDevicePrimaryCtxRetain"), 0);

    other o = {st, GPUOPT_ERR_UNSUPPORTED, {0}};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_on_another_thread, &o), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(o.status, GPUOPT_OK);
    assert_int_equal(o.r.source, GPUOPT_MEMORY_SOURCE_CONTEXT);
    assert_non_null(strstr(o.r.source_text, "already active (no context created)"));
    assert_int_equal(full.contexts_created(), 1);
    assert_int_equal(full.current_device(), 0);
    assert_int_equal(full.stack_depth(), 1);
    assert_int_equal(full.live_contexts(), 1); /* the host's reference, no more */
    assert_int_equal(full.clear_current(), 0);
    gpo_backend_cuda.unload(st);
}

static void failure_inside_the_context_still_restores_everything(void **state)
{
    (void)state;
    cuda_env e;
    gpo_backend_report rep;
    void *st = NULL;
    gpo_route route = route_of(0, NULL, NULL);
    gpo_memory_reading r;
    r.free = 7;
    cuda_env_init(&e, FAKE_CUDA_FULL, NO_KERNEL_DRIVER);
    cuda_env_set_nvml(&e, "/nonexistent/libnvidia-ml.so.1");
    fake_cuda_configure(&full, fake_devices("a100-sxm4-40gb.json", NULL), NULL,
                        "cuMemGetInfo_v2:1:CUDA_ERROR_OUT_OF_MEMORY");
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_OK);
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, MAY, &r), GPUOPT_ERR_DRIVER);
    assert_int_equal(r.free, 0);
    assert_non_null(strstr(gpo_detail_get(), "cuda:0: reading its memory: cuMemGetInfo_v2 "
                                             "failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"));
    assert_int_equal(full.stack_depth(), 0);
    assert_int_equal(full.live_contexts(), 0);
    gpo_backend_cuda.unload(st);
}

static void driver_without_the_v2_release_cannot_tell(void **state)
{
    (void)state;
    void *st = load_fake(FAKE_CUDA_LEGACY, &legacy, fake_devices("k80.json", NULL), NULL);
    gpo_route route = route_of(0, NULL, NULL);
    gpo_memory_reading r;
    r.free = 7;
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, MAY, &r), GPUOPT_ERR_UNSUPPORTED);
    assert_int_equal(r.free, 0);
    assert_non_null(strstr(gpo_detail_get(), "lacks cuDevicePrimaryCtxRelease_v2"));
    assert_int_equal(legacy.calls("cuDevicePrimaryCtxRetain"), 0);
    gpo_backend_cuda.unload(st);
}

/* Without a usable libcuda the kernel module still lists the GPU, and NVML
 * (which needs the kernel driver only) still reads its memory. */
static void kernel_only_state_reads_memory_through_nvml_alone(void **state)
{
    (void)state;
    cuda_env e;
    gpo_backend_report rep;
    void *st = NULL;
    cuda_env_init(&e, "/nonexistent/libcuda.so.1", GPO_FIXTURES_DIR "/nvidia/t4-proprietary-535");
    cuda_env_set_nvml(&e, "/nonexistent/libnvidia-ml.so.1");
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(st);
    gpo_route route = route_of(0, NULL, "0000:3b:00.0");
    gpo_memory_reading r;
    r.free = 7;
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, MAY, &r), GPUOPT_ERR_UNSUPPORTED);
    assert_int_equal(r.free, 0);
    assert_non_null(strstr(gpo_detail_get(), "CUDA driver library is not usable here"));
    assert_non_null(strstr(gpo_detail_get(), "NVML: cannot open"));
    gpo_backend_cuda.unload(st);

    setenv("GPUOPT_FAKE_NVML_DEVICES", fake_devices("t4.json", NULL), 1);
    cuda_env_set_nvml(&e, FAKE_NVML);
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_ERR_UNAVAILABLE);
    assert_int_equal(gpo_backend_cuda.memory_live(st, &route, 0, &r), GPUOPT_OK);
    assert_int_equal(r.source, GPUOPT_MEMORY_SOURCE_MANAGEMENT);
    assert_int_equal(r.free, T4_FREE);
    unsetenv("GPUOPT_FAKE_NVML_DEVICES");
    gpo_backend_cuda.unload(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvml_answers_without_creating_any_context),
        cmocka_unit_test(nvml_follows_what_other_processes_allocate),
        cmocka_unit_test(nvml_finds_a_gpu_by_pci_bus_id_when_its_uuid_is_unknown),
        cmocka_unit_test(a_mig_instance_is_never_looked_up_by_pci_bus_id),
        cmocka_unit_test(a_missing_nvml_says_so_and_falls_back),
        cmocka_unit_test(nvml_that_fails_is_named_and_the_driver_answers),
        cmocka_unit_test(not_nvml_at_all_is_refused_with_what_it_lacks),
        cmocka_unit_test(free_memory_is_read_and_the_primary_context_released),
        cmocka_unit_test(contexts_the_host_made_answer_without_creating_one),
        cmocka_unit_test(failure_inside_the_context_still_restores_everything),
        cmocka_unit_test(driver_without_the_v2_release_cannot_tell),
        cmocka_unit_test(kernel_only_state_reads_memory_through_nvml_alone),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
