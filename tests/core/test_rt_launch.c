/* The vendor-neutral launch mechanics (src/rt/launch.h) that the CUDA, HIP
 * and OpenCL runtimes share: argument copies, size checks, device times. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rt/launch.h"
#include "util/detail.h"

static void arguments_are_copied_and_a_gap_is_named(void **state)
{
    (void)state;
    gpo_rt_args a;
    memset(&a, 0, sizeof a);
    void *params[GPO_RT_MAX_ARGS];
    int n = -1, x = 7, y = 9;
    assert_int_equal(gpo_rt_args_set(&a, 0, &x, sizeof x, "t:0", "set"), GPUOPT_OK);
    assert_int_equal(gpo_rt_args_set(&a, 2, &x, sizeof x, "t:0", "set"), GPUOPT_OK);
    x = 8; /* a copy was kept */
    /* The highest set decides the count when the kernel does not say. */
    assert_int_equal(gpo_rt_args_pack(&a, -1, params, &n), 1);
    assert_int_equal(gpo_rt_args_set(&a, 1, &y, sizeof y, "t:0", "set"), GPUOPT_OK);
    assert_int_equal(gpo_rt_args_pack(&a, -1, params, &n), -1);
    assert_int_equal(n, 3);
    assert_int_equal(*(int *)params[0], 7);
    assert_int_equal(*(int *)params[1], 9);
    /* A kernel that takes 4 is missing the fourth. */
    assert_int_equal(gpo_rt_args_pack(&a, 4, params, &n), 3);
    gpo_rt_args_free(&a);
}

static void geometry_refuses_what_cannot_launch(void **state)
{
    (void)state;
    size_t g[3], l[3];
    const size_t global[3] = {1024, 4, 1}, local[3] = {256, 2, 1}, odd[3] = {1000, 1, 1};
    const int block[3] = {512, 512, 64}, grid[3] = {2, 65535, 65535};
    assert_int_equal(gpo_rt_geometry("t:0", "k", 2, global, local, 0, NULL, NULL, 1024, g, l),
                     GPUOPT_OK);
    assert_int_equal(g[0] / l[0], 4);
    assert_int_equal(l[1], 2);
    assert_int_equal(g[2], 1);
    assert_int_equal(gpo_rt_geometry("t:0", "k", 0, global, local, 0, NULL, NULL, 1024, g, l),
                     GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpo_detail_get(), "0 dimensions (1 to 3)"));
    assert_int_equal(gpo_rt_geometry("t:0", "k", 1, odd, local, 0, NULL, NULL, 1024, g, l),
                     GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpo_detail_get(), "positive multiple of local"));
    assert_int_equal(gpo_rt_geometry("t:0", "k", 2, global, local, 0, NULL, NULL, 256, g, l),
                     GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpo_detail_get(), "a block of 512 threads; kernel k runs at most 256"));
    assert_int_equal(gpo_rt_geometry("t:0", "k", 1, global, local, 0, block, grid, 1024, g, l),
                     GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpo_detail_get(), "a grid of 4 exceed the device's 512 and 2"));
    /* Without local sizes: the backend's choice in dimension 0, 1 elsewhere. */
    assert_int_equal(gpo_rt_geometry("t:0", "k", 2, global, NULL, 128, NULL, NULL, 1024, g, l),
                     GPUOPT_OK);
    assert_int_equal(l[0], 128);
    assert_int_equal(l[1], 1);
    assert_int_equal(gpo_rt_largest_divisor(1000, 1024), 1000);
    assert_int_equal(gpo_rt_largest_divisor(1000, 256), 250);
    assert_int_equal(gpo_rt_largest_divisor(0, 256), 1);
}

static void a_device_time_of_zero_or_nan_is_no_measurement(void **state)
{
    (void)state;
    double ns = -1.0;
    assert_int_equal(gpo_rt_event_ns(0.5, "t:0", "launch", "timer", &ns), GPUOPT_OK);
    assert_true(ns == 500000.0);
    const double bad[] = {0.0, -1.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(gpo_rt_event_ns(bad[i], "t:0", "launch", "timer", &ns), GPUOPT_ERR_DRIVER);
        assert_non_null(strstr(gpo_detail_get(), "t:0 launch: timer read"));
        assert_non_null(strstr(gpo_detail_get(), "which is no measurement"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arguments_are_copied_and_a_gap_is_named),
        cmocka_unit_test(geometry_refuses_what_cannot_launch),
        cmocka_unit_test(a_device_time_of_zero_or_nan_is_no_measurement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
