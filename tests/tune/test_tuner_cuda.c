/* A CUDA device from the test-double libcuda and NVRTC (no GPU: programs
 * build, launches are refused as a driver without a GPU refuses them): a
 * tuner of a CUDA kernel stops at the first launch and says that kernels
 * cannot run on this device, instead of failing every candidate one by
 * one. Through gpuopt.h alone. */
#include <stdlib.h>

#include "tune/tuner_cuda_scale.h"

static void a_cuda_kernel_tuner_without_a_gpu_says_it_cannot_run(void **state)
{
    (void)state;
    gpuopt_context *ctx = NULL;
    gpuopt_space *s = NULL;
    static const int64_t v[] = {64, 128};
    gpuopt_tuner *t = tuner_cuda_scale(GPO_BUILD_DIR "/tests/tune-cuda-cache", v, 2, &ctx, &s);
    gpuopt_result *r = NULL;
    gpuopt_status st = gpuopt_tuner_run(t, &r);
    assert_int_not_equal(st, GPUOPT_OK);
    assert_null(r);
    /* Which device and why, in the driver's words. */
    const char *why = gpuopt_last_error();
    print_message("gpuopt_tuner_run: %s: %s\n", gpuopt_status_name(st), why);
    assert_int_equal(st, GPUOPT_ERR_UNSUPPORTED);
    EXPECT_DETAIL_NAMES("cannot run kernels on device cuda:0");
    EXPECT_DETAIL_NAMES("GPU");
    /* Online tuning says the same. */
    assert_int_equal(gpuopt_tuner_step(t, NULL, NULL), st);
    EXPECT_DETAIL_NAMES("cuda:0");
    /* An OpenCL C kernel has no route on this device at all. */
    gpuopt_kernel_desc k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.source = "__kernel void k(void) {}";
    k.entry = "k";
    k.language = GPUOPT_LANG_OPENCL_C;
    k.global[0] = "N";
    EXPECT_OK(gpuopt_tuner_set_kernel(t, &k));
    assert_int_not_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    EXPECT_DETAIL_NAMES("opencl-c");
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_cuda_kernel_tuner_without_a_gpu_says_it_cannot_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
