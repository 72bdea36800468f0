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
    gpuopt_tuner_settings set;
    memset(&set, 0, sizeof set);
    set.struct_size = sizeof set;
    assert_int_equal(gpuopt_tuner_get_settings(t, &set), GPUOPT_OK);
    set.cache_mode = GPUOPT_CACHE_OFF;
    set.strategy = GPUOPT_STRATEGY_EXHAUSTIVE;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    gpuopt_kernel_desc k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.source = axpy;
    k.entry = "axpy";
    k.language = GPUOPT_LANG_CUDA;
    k.global[0] = "N";
    k.local[0] = "BLOCK";
    assert_int_equal(gpuopt_tuner_set_kernel(t, &k), GPUOPT_OK);
    gpuopt_buffer_desc y, x;
    memset(&y, 0, sizeof y);
    y.struct_size = sizeof y;
    y.type = GPUOPT_ELEM_F32;
    y.count = "N";
    x = y;
    y.init = GPUOPT_INIT_ZEROS;
    y.is_output = 1;
    x.init = GPUOPT_INIT_RANDOM;
    assert_int_equal(gpuopt_tuner_set_buffer(t, 0, &y), GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_set_buffer(t, 1, &x), GPUOPT_OK);
    gpuopt_scalar_desc a, n;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    n = a;
    a.type = GPUOPT_ELEM_F32;
    a.value = 2.0;
    n.type = GPUOPT_ELEM_I32;
    n.expression = "N";
    assert_int_equal(gpuopt_tuner_set_scalar(t, 2, &a), GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_set_scalar(t, 3, &n), GPUOPT_OK);
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
