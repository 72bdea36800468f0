/* A CUDA kernel tuner whose candidate faults (the test-double libcuda runs
 * launches and makes the second one fault with CUDA_ERROR_ILLEGAL_ADDRESS,
 * a sticky error, as an out-of-bounds write does on a GPU): the search
 * stops at once with GPUOPT_ERR_FAULT in the driver's words, instead of
 * failing every later candidate (as a "build failure" when the next module
 * load meets the error). Through gpuopt.h alone. */
#include <stdlib.h>

#include "api/api_check.h"

static void a_candidate_that_faults_ends_the_search_naming_the_fault(void **state)
{
    (void)state;
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = "cuda";
    o.config_path = "";
    o.cache_dir = GPO_BUILD_DIR "/tests/tune-cuda-fault-cache";
    gpuopt_context *ctx = NULL;
    EXPECT_OK(gpuopt_context_create(&o, &ctx));
    gpuopt_device *dev = NULL;
    EXPECT_OK(gpuopt_select(ctx, "cuda:0", &dev));
    gpuopt_space *s = NULL;
    static const int64_t v[] = {64, 128, 256, 512};
    EXPECT_OK(gpuopt_space_create(&s));
    EXPECT_OK(gpuopt_space_add_int(s, "BLOCK", v, 4));
    EXPECT_OK(gpuopt_space_set_size(s, "N", 1 << 20));
    gpuopt_tuner *t = NULL;
    EXPECT_OK(gpuopt_tuner_create(ctx, dev, s, &t));
    EXPECT_OK(gpuopt_tuner_set_cache_mode(t, GPUOPT_CACHE_OFF));
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
    print_message("gpuopt_tuner_run: %s: %s\n", gpuopt_status_name(st), gpuopt_last_error());
    assert_int_equal(st, GPUOPT_ERR_FAULT);
    assert_null(r);
    EXPECT_DETAIL_NAMES("the tuner stopped on device cuda:0");
    EXPECT_DETAIL_NAMES("CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_DETAIL_NAMES("the process must be terminated and relaunched");
    assert_null(strstr(gpuopt_last_error(), "build failed"));
    /* Asked again, the device is still lost: the same status, at once,
     * not a build error of the first candidate. */
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_ERR_FAULT);
    EXPECT_DETAIL_NAMES("CUDA_ERROR_ILLEGAL_ADDRESS");
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_candidate_that_faults_ends_the_search_naming_the_fault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
