/* On PoCL's CPU device, asked for a measurement worker
 * (GPUOPT_ISOLATION_WORKER): a candidate that writes 4 TiB past its buffer
 * crashes PoCL's worker thread with SIGSEGV, which ends a process; here it
 * ends the measurement worker only (under ASan the worker reports the SEGV
 * and exits 1). The candidate is FAULT saying how the worker died, the
 * others are measured in a new worker, and this test process lives on.
 * Through gpuopt.h alone. */
#include "api/api_check.h"

static const char source[] = "__kernel void scale(__global float *y, int n)\n"
                             "{\n"
                             "    size_t i = get_global_id(0);\n"
                             "#if BAD\n"
                             "    y[i + (1L << 40)] = 1.0f;\n"
                             "#else\n"
                             "    if (i < (size_t)n)\n"
                             "        y[i] *= 2.0f;\n"
                             "#endif\n"
                             "}\n";

static void an_out_of_bounds_write_on_pocl_ends_only_the_worker(void **state)
{
    (void)state;
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = "opencl";
    o.config_path = "";
    gpuopt_context *ctx = NULL;
    EXPECT_OK(gpuopt_context_create(&o, &ctx));
    gpuopt_device *dev = NULL;
    EXPECT_OK(gpuopt_device_select(ctx, "auto", &dev));
    gpuopt_space *s = NULL;
    static const int64_t bad[] = {0, 1}, block[] = {32, 64};
    EXPECT_OK(gpuopt_space_create(&s));
    EXPECT_OK(gpuopt_space_add_int(s, "BAD", bad, 2));
    EXPECT_OK(gpuopt_space_add_int(s, "BLOCK", block, 2));
    EXPECT_OK(gpuopt_space_set_size(s, "N", 4096));
    gpuopt_tuner *t = NULL;
    EXPECT_OK(gpuopt_tuner_create(ctx, dev, s, &t));
    gpuopt_kernel_desc k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.source = source;
    k.entry = "scale";
    k.language = GPUOPT_LANG_OPENCL_C;
    k.global[0] = "N";
    k.local[0] = "BLOCK";
    EXPECT_OK(gpuopt_tuner_set_kernel(t, &k));
    gpuopt_buffer_desc y;
    memset(&y, 0, sizeof y);
    y.struct_size = sizeof y;
    y.type = GPUOPT_ELEM_F32;
    y.count = "N";
    y.init = GPUOPT_INIT_RANDOM;
    y.is_output = 1;
    EXPECT_OK(gpuopt_tuner_set_buffer(t, 0, &y));
    gpuopt_scalar_desc n;
    memset(&n, 0, sizeof n);
    n.struct_size = sizeof n;
    n.type = GPUOPT_ELEM_I32;
    n.expression = "N";
    EXPECT_OK(gpuopt_tuner_set_scalar(t, 1, &n));
    gpuopt_tuner_settings set;
    memset(&set, 0, sizeof set);
    set.struct_size = sizeof set;
    EXPECT_OK(gpuopt_tuner_get_settings(t, &set));
    set.cache_mode = GPUOPT_CACHE_OFF;
    set.strategy = GPUOPT_STRATEGY_EXHAUSTIVE;
    set.isolation = GPUOPT_ISOLATION_WORKER;
    set.min_runs = set.max_runs = 3;
    set.warmup_ms = 0;
    EXPECT_OK(gpuopt_tuner_set_settings(t, &set));
    gpuopt_result *r = NULL;
    gpuopt_status st = gpuopt_tuner_run(t, &r);
    if (st != GPUOPT_OK)
        print_message("gpuopt_tuner_run: %s\n", gpuopt_last_error());
    assert_int_equal(st, GPUOPT_OK);
    int32_t count = 0;
    EXPECT_OK(gpuopt_result_count(r, &count));
    assert_int_equal(count, 4);
    for (int32_t i = 0; i < count; i++) {
        gpuopt_candidate c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        EXPECT_OK(gpuopt_result_at(r, i, &c));
        int64_t b = 0;
        EXPECT_OK(gpuopt_point_get_int(c.point, "BAD", &b));
        print_message("BAD=%d: status %d: %s\n", (int)b, (int)c.status, c.message);
        if (b) {
            assert_int_equal(c.status, GPUOPT_CANDIDATE_FAULT);
            assert_non_null(strstr(c.message, "measurement worker"));
        } else {
            /* Measured: OK, or PRUNED when a busy machine made its probe
             * slow (timing is not this test's subject). */
            assert_true(c.status == GPUOPT_CANDIDATE_OK || c.status == GPUOPT_CANDIDATE_PRUNED);
        }
    }
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_out_of_bounds_write_on_pocl_ends_only_the_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
