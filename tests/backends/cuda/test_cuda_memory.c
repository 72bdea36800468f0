/* Free memory through the primary context: read, then everything put back
 * (reference count, the thread's context stack). */
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

static fake_cuda full, legacy;

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    return fake_cuda_open(&full, FAKE_CUDA_FULL) || fake_cuda_open(&legacy, FAKE_CUDA_LEGACY);
}

static void *load_fake(const char *library, const fake_cuda *f, const char *devices)
{
    cuda_env e;
    gpo_backend_report rep;
    void *st = NULL;
    cuda_env_init(&e, library, NO_KERNEL_DRIVER);
    fake_cuda_configure(f, devices, NULL, NULL);
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_OK);
    return st;
}

static void free_memory_is_read_and_the_primary_context_released(void **state)
{
    (void)state;
    void *st = load_fake(FAKE_CUDA_FULL, &full, fake_devices("t4.json", "h100-sxm5.json", NULL));
    gpo_route route;
    memset(&route, 0, sizeof route);
    uint64_t free_bytes = 0;
    route.index = 1;
    assert_int_equal(gpo_backend_cuda.memory_free(st, &route, &free_bytes), GPUOPT_OK);
    /* h100-sxm5.json: free_memory_bytes. */
    assert_int_equal(free_bytes, 85362475008ull);
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
    assert_int_equal(gpo_backend_cuda.memory_free(st, &route, &free_bytes), GPUOPT_OK);
    assert_int_equal(free_bytes, (16ull << 30) - (512ull << 20));
    assert_int_equal(full.live_contexts(), 0);
    gpo_backend_cuda.unload(st);
}

static void failure_inside_the_context_still_restores_everything(void **state)
{
    (void)state;
    cuda_env e;
    gpo_backend_report rep;
    void *st = NULL;
    gpo_route route;
    uint64_t free_bytes = 7;
    memset(&route, 0, sizeof route);
    cuda_env_init(&e, FAKE_CUDA_FULL, NO_KERNEL_DRIVER);
    fake_cuda_configure(&full, fake_devices("a100-sxm4-40gb.json", NULL), NULL,
                        "cuMemGetInfo_v2:1:CUDA_ERROR_OUT_OF_MEMORY");
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_OK);
    assert_int_equal(gpo_backend_cuda.memory_free(st, &route, &free_bytes), GPUOPT_ERR_DRIVER);
    assert_int_equal(free_bytes, 0);
    assert_non_null(strstr(gpo_detail_get(), "cuda:0: reading free memory: cuMemGetInfo_v2 "
                                             "failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"));
    assert_int_equal(full.stack_depth(), 0);
    assert_int_equal(full.live_contexts(), 0);
    gpo_backend_cuda.unload(st);
}

static void driver_without_the_v2_release_cannot_tell(void **state)
{
    (void)state;
    void *st = load_fake(FAKE_CUDA_LEGACY, &legacy, fake_devices("k80.json", NULL));
    gpo_route route;
    memset(&route, 0, sizeof route);
    uint64_t free_bytes = 7;
    assert_int_equal(gpo_backend_cuda.memory_free(st, &route, &free_bytes), GPUOPT_ERR_UNSUPPORTED);
    assert_int_equal(free_bytes, 0);
    assert_non_null(strstr(gpo_detail_get(), "lacks cuDevicePrimaryCtxRelease_v2"));
    assert_int_equal(legacy.calls("cuDevicePrimaryCtxRetain"), 0);
    gpo_backend_cuda.unload(st);
}

static void kernel_only_state_cannot_read_free_memory(void **state)
{
    (void)state;
    cuda_env e;
    gpo_backend_report rep;
    void *st = NULL;
    cuda_env_init(&e, "/nonexistent/libcuda.so.1", GPO_FIXTURES_DIR "/nvidia/t4-proprietary-535");
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(st);
    gpo_route route;
    memset(&route, 0, sizeof route);
    uint64_t free_bytes = 7;
    assert_int_equal(gpo_backend_cuda.memory_free(st, &route, &free_bytes), GPUOPT_ERR_UNSUPPORTED);
    assert_int_equal(free_bytes, 0);
    assert_non_null(strstr(gpo_detail_get(), "needs the CUDA driver library"));
    gpo_backend_cuda.unload(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(free_memory_is_read_and_the_primary_context_released),
        cmocka_unit_test(failure_inside_the_context_still_restores_everything),
        cmocka_unit_test(driver_without_the_v2_release_cannot_tell),
        cmocka_unit_test(kernel_only_state_cannot_read_free_memory),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
