/* On a real NVIDIA GPU (label `gpu`; skipped without one): a tuner whose
 * candidates include one that writes far out of bounds (an illegal
 * address, as an out-of-range tile does). The fault is sticky in the
 * process (cuda.h: it "must be terminated and relaunched"), so the search
 * stops at once with GPUOPT_ERR_FAULT and the driver's error named, and
 * nothing is reported as a failed build. Measuring such candidates without
 * losing the process needs a measurement worker (issue 11, item 1). Runs
 * in its own process: after it, this process's CUDA is unusable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpu_cuda.h"

static gpuopt_context *ctx;
static gpuopt_device *dev;
static gpu_driver drv;

/* BAD=1 writes 2^40 floats (4 TiB) past y: an address no allocation has. */
static const char axpy[] =
    "extern \"C\" __global__ void axpy(float *y, const float *x, float a, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= n)\n"
    "        return;\n"
    "#if BAD\n"
    "    y[i + (1LL << 40)] = a * x[i];\n"
    "#else\n"
    "    y[i] += a * x[i];\n"
    "#endif\n"
    "}\n";

static void an_out_of_bounds_candidate_ends_the_search_naming_the_fault(void **state)
{
    (void)state;
    gpuopt_space *s = NULL;
    static const int64_t block[] = {128, 256}, bad[] = {0, 1};
    assert_int_equal(gpuopt_space_create(&s), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "BAD", bad, 2), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "BLOCK", block, 2), GPUOPT_OK);
    assert_int_equal(gpuopt_space_set_size(s, "N", 1 << 20), GPUOPT_OK);
    gpuopt_tuner *t = NULL;
    assert_int_equal(gpuopt_tuner_create(ctx, dev, s, &t), GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_set_cache_mode(t, GPUOPT_CACHE_OFF), GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_set_strategy(t, GPUOPT_STRATEGY_EXHAUSTIVE), GPUOPT_OK);
    static const char *const global[3] = {"N", NULL, NULL}, *const local[3] = {"BLOCK", NULL, NULL};
    assert_int_equal(gpuopt_tuner_set_kernel(t, axpy, "axpy", GPUOPT_LANG_CUDA, NULL), GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_set_geometry(t, global, local), GPUOPT_OK);
    assert_int_equal(
        gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "N", GPUOPT_INIT_ZEROS, 0, NULL, 1),
        GPUOPT_OK);
    assert_int_equal(
        gpuopt_tuner_add_buffer(t, 1, GPUOPT_ELEM_F32, "N", GPUOPT_INIT_RANDOM, 0, NULL, 0),
        GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_add_scalar_f64(t, 2, GPUOPT_ELEM_F32, 2.0), GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_add_scalar(t, 3, GPUOPT_ELEM_I32, "N"), GPUOPT_OK);
    gpuopt_result *r = NULL;
    gpuopt_status st = gpuopt_tuner_run(t, &r);
    const char *why = gpuopt_last_error();
    print_message("gpuopt_tuner_run: %s: %s\n", gpuopt_status_name(st), why);
    assert_int_equal(st, GPUOPT_ERR_FAULT);
    assert_null(r);
    assert_non_null(strstr(why, "the tuner stopped on device cuda:0"));
    assert_non_null(strstr(why, "CUDA_ERROR_"));
    assert_non_null(strstr(why, "the process must be terminated and relaunched"));
    assert_null(strstr(why, "build failed"));
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

int main(void)
{
    int rc = gpu_cuda_open(&ctx, &dev, &drv);
    if (rc)
        return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_out_of_bounds_candidate_ends_the_search_naming_the_fault),
    };
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    gpuopt_context_destroy(ctx);
    return rc;
}
