/* A CUDA kernel tuner whose candidate faults (the test-double libcuda runs
 * launches and makes the second one fault with CUDA_ERROR_ILLEGAL_ADDRESS,
 * a sticky error, as an out-of-bounds write does on a GPU): the search
 * stops at once with GPUOPT_ERR_FAULT in the driver's words, instead of
 * failing every later candidate (as a "build failure" when the next module
 * load meets the error). Through gpuopt.h alone. */
#include <stdlib.h>

#include "tune/tuner_cuda_scale.h"

static void a_candidate_that_faults_ends_the_search_naming_the_fault(void **state)
{
    (void)state;
    gpuopt_context *ctx = NULL;
    gpuopt_space *s = NULL;
    static const int64_t v[] = {64, 128, 256, 512};
    gpuopt_tuner *t =
        tuner_cuda_scale(GPO_BUILD_DIR "/tests/tune-cuda-fault-cache", v, 4, &ctx, &s);
    gpuopt_tuner_settings set;
    memset(&set, 0, sizeof set);
    set.struct_size = sizeof set;
    EXPECT_OK(gpuopt_tuner_get_settings(t, &set));
    set.cache_mode = GPUOPT_CACHE_OFF;
    EXPECT_OK(gpuopt_tuner_set_settings(t, &set));
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
