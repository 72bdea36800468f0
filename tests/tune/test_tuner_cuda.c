/* A CUDA device from the test-double libcuda and NVRTC (no GPU: programs
 * build, launches are refused as a driver without a GPU refuses them): a
 * tuner of a CUDA kernel stops at the first launch and says that kernels
 * cannot run on this device, instead of failing every candidate one by
 * one. Through gpuopt.h alone. */
#include <stdlib.h>

#include "api/api_check.h"

static void a_cuda_kernel_tuner_without_a_gpu_says_it_cannot_run(void **state)
{
    (void)state;
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = "cuda";
    o.config_path = "";
    o.cache_dir = GPO_BUILD_DIR "/tests/tune-cuda-cache";
    gpuopt_context *ctx = NULL;
    EXPECT_OK(gpuopt_context_create(&o, &ctx));
    gpuopt_device *dev = NULL;
    EXPECT_OK(gpuopt_device_select(ctx, "cuda:0", &dev));
    gpuopt_space *s = NULL;
    static const int64_t v[] = {64, 128};
    EXPECT_OK(gpuopt_space_create(&s));
    EXPECT_OK(gpuopt_space_add_int(s, "BLOCK", v, 2));
    EXPECT_OK(gpuopt_space_set_size(s, "N", 1 << 20));
    gpuopt_tuner *t = NULL;
    EXPECT_OK(gpuopt_tuner_create(ctx, dev, s, &t));
    static const char *const global[3] = {"N", NULL, NULL}, *const local[3] = {"BLOCK", NULL, NULL};
    EXPECT_OK(gpuopt_tuner_set_kernel(t,
                                      "extern \"C\" __global__ void scale(float *x, int n) {\n"
                                      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                      "  if (i < n) x[i] *= 2.0f;\n}\n",
                                      "scale", GPUOPT_LANG_CUDA, NULL));
    EXPECT_OK(gpuopt_tuner_set_geometry(t, global, local));
    EXPECT_OK(gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "N", GPUOPT_INIT_RANDOM, 0, NULL, 1));
    EXPECT_OK(gpuopt_tuner_add_scalar(t, 1, GPUOPT_ELEM_I32, "N"));
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
    assert_int_equal(gpuopt_tune_step(t, NULL, NULL), st);
    EXPECT_DETAIL_NAMES("cuda:0");
    /* An OpenCL C kernel has no route on this device at all. */
    EXPECT_OK(
        gpuopt_tuner_set_kernel(t, "__kernel void k(void) {}", "k", GPUOPT_LANG_OPENCL_C, NULL));
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
