/* The CUDA runtime ops for programs, kernels and launches
 * (cuda_rt_kernel.c) on the test doubles: libcuda and NVRTC (13.0 and 11.0
 * flavours). Everything up to running code is exercised for real against
 * the doubles; the launch itself is refused by the double, and the words
 * say a real GPU is needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_rt_fixture.h"
#include "util/strutil.h"

#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"
#define H100 RT_H100
#define FUTURE RT_FUTURE
#define K80 RT_K80

static void builds_target_the_device_cubin_ptx_or_a_refusal(void **state)
{
    (void)state;
    rt_fixture x;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k;
    char *log = NULL;

    /* sm_90 is in NVRTC 13.0's list: a CUBIN. */
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, H100);
    k = rt_scale_kernel(&x, &prog);
    assert_non_null(k);
    assert_int_equal(rtd.nvrtc.calls("nvrtcGetCUBIN"), 1);
    assert_int_equal(rtd.nvrtc.calls("nvrtcGetPTX"), 0);
    rt_stop(&x);

    /* 13.0 is newer than everything it knows: PTX of compute_121. */
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, FUTURE);
    k = rt_scale_kernel(&x, &prog);
    assert_non_null(k);
    assert_int_equal(rtd.nvrtc.calls("nvrtcGetPTX"), 1);
    assert_int_equal(rtd.nvrtc.calls("nvrtcGetCUBIN"), 0);
    assert_string_equal(rtd.ops->compiler_version(x.rt), "NVRTC 13.0; CUDA driver 13.0; sm_130");
    rt_stop(&x);

    /* sm_37 is older than everything it knows. */
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, K80);
    assert_int_equal(rtd.ops->program_build(x.rt, rt_scale_src, NULL, &prog, &log),
                     GPUOPT_ERR_UNSUPPORTED);
    assert_null(prog);
    assert_null(log);
    assert_non_null(strstr(gpo_detail_get(), "NVRTC 13.0 compiles for sm_75 to sm_121; this "
                                             "device is sm_37"));
    rt_stop(&x);

    /* NVRTC 11.0 cannot list architectures or hand out a CUBIN: PTX for
     * the device's own architecture. */
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC11, H100);
    /* NVRTC opens at the first build: configure its double before. */
    fake_nvrtc_configure(&rtd.nvrtc11, "11.0", "none", NULL);
    k = rt_scale_kernel(&x, &prog);
    assert_non_null(k);
    assert_int_equal(rtd.nvrtc11.calls("nvrtcGetPTX"), 1);
    assert_string_equal(rtd.ops->compiler_version(x.rt), "NVRTC 11.0; CUDA driver 13.0; sm_90");
    rt_stop(&x);
    fake_nvrtc_configure(&rtd.nvrtc11, NULL, NULL, NULL);
}

static void a_compile_error_returns_the_compiler_s_log(void **state)
{
    (void)state;
    rt_fixture x;
    gpo_rt_prog *prog = (gpo_rt_prog *)&x;
    char *log = NULL;
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, H100);
    assert_int_equal(rtd.ops->program_build(x.rt, "#error boom\n", "-DX=1", &prog, &log),
                     GPUOPT_ERR_BUILD);
    assert_null(prog);
    assert_non_null(log);
    assert_non_null(strstr(log, "#error boom"));
    assert_non_null(strstr(gpo_detail_get(), "nvrtcCompileProgram failed with "
                                             "NVRTC_ERROR_COMPILATION"));
    free(log);
    assert_int_equal(rtd.nvrtc.live_programs(), 0);
    assert_int_equal(rtd.full.live_objects("modules"), 0);
    /* An architecture in the options wins, in either spelling, and the
     * reason names it. */
    assert_int_equal(rtd.ops->program_build(x.rt, "#error boom\n", "-arch compute_75", &prog, &log),
                     GPUOPT_ERR_BUILD);
    assert_non_null(strstr(gpo_detail_get(), "did not build for compute_75 with options"));
    free(log);
    long ptx = rtd.nvrtc.calls("nvrtcGetPTX");
    assert_int_equal(
        rtd.ops->program_build(x.rt, rt_scale_src, "--gpu-architecture=compute_75", &prog, &log),
        GPUOPT_OK);
    assert_int_equal(rtd.nvrtc.calls("nvrtcGetPTX"), ptx + 1);
    assert_null(log);
    /* Unbalanced quotes in the options are refused before NVRTC runs. */
    assert_int_equal(rtd.ops->program_build(x.rt, rt_scale_src, "-DX='1", &prog, &log),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(log);
    rt_stop(&x);
}

static void module_load_failures_are_build_errors_in_words(void **state)
{
    (void)state;
    static const struct {
        const char *result, *says;
    } rows[] = {
        {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "newer version than this driver can compile"},
        {"CUDA_ERROR_NO_BINARY_FOR_GPU", "no code this GPU can run"},
        {"CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "libnvidia-ptxjitcompiler"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        rt_fixture x;
        gpo_rt_prog *prog = NULL;
        char *log = NULL, rule[96];
        snprintf(rule, sizeof rule, "cuModuleLoadData:1:%s", rows[i].result);
        rt_start_failing(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, FUTURE, rule);
        assert_int_equal(rtd.ops->program_build(x.rt, rt_scale_src, NULL, &prog, &log),
                         GPUOPT_ERR_BUILD);
        assert_null(prog);
        assert_non_null(log);
        if (!strstr(log, rows[i].says) || !strstr(log, rows[i].result) ||
            !strstr(log, "PTX for compute_121"))
            fail_msg("%s: log '%s'", rows[i].result, log);
        free(log);
        rt_stop(&x);
    }
}

static void parameters_are_checked_where_the_driver_can_tell(void **state)
{
    (void)state;
    rt_fixture x;
    gpo_rt_prog *prog = NULL;
    gpo_rt_buf *b = NULL;
    double wrong = 1.0;
    float a = 2.0f;
    size_t global[3] = {256, 1, 1}, local[3] = {128, 1, 1};
    /* PTX (a device newer than NVRTC) lets the double say what scale takes. */
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, FUTURE);
    gpo_rt_kernel *k = rt_scale_kernel(&x, &prog);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 1024, &b), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_buffer(x.rt, k, 0, b), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_scalar(x.rt, k, 1, &wrong, sizeof wrong),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "parameter 1 of kernel scale is 4 bytes, not 8"));
    assert_int_equal(rtd.ops->kernel_set_scalar(x.rt, k, 3, &a, sizeof a), GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpo_detail_get(), "has no parameter 3 (it takes 3)"));
    assert_int_equal(rtd.ops->kernel_set_buffer(x.rt, k, 1, b), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(rtd.ops->kernel_set_scalar(x.rt, k, 1, &a, sizeof a), GPUOPT_OK);
    /* Parameter 2 is missing: refused before the driver sees it. */
    long launches = rtd.full.calls("cuLaunchKernel");
    assert_int_equal(rtd.ops->launch(x.rt, k, 1, global, local, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "parameter 2 of kernel scale is not set"));
    assert_int_equal(rtd.full.calls("cuLaunchKernel"), launches);
    rt_stop(&x);

    /* A CUBIN (or a driver before 12.4) cannot say: the highest parameter
     * set decides how many are passed, and gaps are refused. */
    rt_start(&x, FAKE_CUDA_R12, &rtd.r12, FAKE_NVRTC, H100);
    k = rt_scale_kernel(&x, &prog);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 1024, &b), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_buffer(x.rt, k, 0, b), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_scalar(x.rt, k, 2, &a, sizeof a), GPUOPT_OK);
    assert_int_equal(rtd.ops->launch(x.rt, k, 1, global, local, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "parameter 1 of kernel scale is not set"));
    assert_int_equal(rtd.ops->kernel_set_scalar(x.rt, k, 64, &a, sizeof a),
                     GPUOPT_ERR_OUT_OF_RANGE);
    rt_stop(&x);
}

static void launch_geometry_is_checked_before_the_driver(void **state)
{
    (void)state;
    rt_fixture x;
    gpo_rt_prog *prog = NULL;
    gpo_rt_buf *b = NULL;
    float a = 2.0f;
    int n = 1000;
    size_t max = 0;
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, H100);
    gpo_rt_kernel *k = rt_scale_kernel(&x, &prog);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 4096, &b), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_buffer(x.rt, k, 0, b), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_scalar(x.rt, k, 1, &a, sizeof a), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_scalar(x.rt, k, 2, &n, sizeof n), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_max_group(x.rt, k, &max), GPUOPT_OK);
    assert_int_equal(max, 1024);
    static const struct {
        uint32_t dims;
        size_t global[3], local[3];
        int null_local;
        gpuopt_status st;
        const char *says;
    } rows[] = {
        {0, {256, 1, 1}, {128, 1, 1}, 0, GPUOPT_ERR_OUT_OF_RANGE, "0 dimensions (1 to 3)"},
        {4, {256, 1, 1}, {128, 1, 1}, 0, GPUOPT_ERR_OUT_OF_RANGE, "4 dimensions (1 to 3)"},
        {1, {250, 1, 1}, {128, 1, 1}, 0, GPUOPT_ERR_OUT_OF_RANGE, "positive multiple of local"},
        {1, {0, 1, 1}, {128, 1, 1}, 0, GPUOPT_ERR_OUT_OF_RANGE, "positive multiple of local"},
        {1, {4096, 1, 1}, {2048, 1, 1}, 0, GPUOPT_ERR_OUT_OF_RANGE, "exceed the device's 1024"},
        {2, {512, 64, 1}, {32, 64, 1}, 0, GPUOPT_ERR_OUT_OF_RANGE, "a block of 2048 threads"},
        {2, {32, 65536 * 2, 1}, {32, 1, 1}, 0, GPUOPT_ERR_OUT_OF_RANGE, "exceed the device's"},
        {3, {32, 32, 128}, {32, 32, 1}, 0, GPUOPT_ERR_UNSUPPORTED, "real NVIDIA GPU"},
        /* Without local sizes the block is the largest divisor the kernel can
         * run: 1000 threads -> one block of 1000. */
        {1, {1000, 1, 1}, {0, 0, 0}, 1, GPUOPT_ERR_UNSUPPORTED, "real NVIDIA GPU"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        long launches = rtd.full.calls("cuLaunchKernel");
        gpuopt_status st = rtd.ops->launch(x.rt, k, rows[i].dims, rows[i].global,
                                           rows[i].null_local ? NULL : rows[i].local, NULL);
        if (st != rows[i].st || !strstr(gpo_detail_get(), rows[i].says))
            fail_msg("row %zu: %d '%s'", i, (int)st, gpo_detail_get());
        /* Only launches that pass the checks reach the driver. */
        assert_int_equal(rtd.full.calls("cuLaunchKernel") - launches,
                         rows[i].st == GPUOPT_ERR_UNSUPPORTED ? 1 : 0);
        assert_int_equal(rtd.full.stack_depth(), 0);
    }
    rt_stop(&x);
}

/* Launch failures, and failures of waiting for work (which is where a
 * faulting kernel shows): the double refuses launches before any wait, so
 * the wait is reached through a timed copy, which takes the same path. */
static void launch_failures_say_what_they_mean(void **state)
{
    (void)state;
    static const struct {
        const char *rule;
        gpuopt_status st;
        const char *says;
    } rows[] = {
        {"cuLaunchKernel:1:CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", GPUOPT_ERR_LAUNCH,
         "use a smaller block"},
        {"cuLaunchKernel:1:CUDA_ERROR_UNKNOWN", GPUOPT_ERR_LAUNCH,
         "cuLaunchKernel failed: CUDA_ERROR_UNKNOWN"},
        /* Sticky faults: GPUOPT_ERR_FAULT, with cuda.h's words on what is
         * left (never "until a reset": the process must be relaunched). */
        {"cuEventSynchronize:1:CUDA_ERROR_ILLEGAL_ADDRESS", GPUOPT_ERR_FAULT,
         "the process must be terminated and relaunched"},
        {"cuEventSynchronize:1:CUDA_ERROR_LAUNCH_TIMEOUT", GPUOPT_ERR_FAULT, "watchdog"},
        {"cuStreamSynchronize:1:CUDA_ERROR_MISALIGNED_ADDRESS", GPUOPT_ERR_FAULT,
         "a sticky error: code on the device faulted"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        rt_fixture x;
        gpo_rt_prog *prog = NULL;
        gpo_rt_buf *b = NULL, *c = NULL;
        float a = 2.0f;
        int n = 256;
        double ns = 0.0;
        size_t global[3] = {256, 1, 1}, local[3] = {128, 1, 1};
        gpuopt_status st;
        rt_start_failing(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, H100, rows[i].rule);
        gpo_rt_kernel *k = rt_scale_kernel(&x, &prog);
        assert_int_equal(rtd.ops->buffer_alloc(x.rt, 1024, &b), GPUOPT_OK);
        assert_int_equal(rtd.ops->buffer_alloc(x.rt, 1024, &c), GPUOPT_OK);
        assert_int_equal(rtd.ops->kernel_set_buffer(x.rt, k, 0, b), GPUOPT_OK);
        assert_int_equal(rtd.ops->kernel_set_scalar(x.rt, k, 1, &a, sizeof a), GPUOPT_OK);
        assert_int_equal(rtd.ops->kernel_set_scalar(x.rt, k, 2, &n, sizeof n), GPUOPT_OK);
        if (strncmp(rows[i].rule, "cuLaunchKernel", 14) == 0)
            st = rtd.ops->launch(x.rt, k, 1, global, local, &ns);
        else if (strncmp(rows[i].rule, "cuEventSynchronize", 18) == 0)
            st = rtd.ops->buffer_copy(x.rt, c, b, 1024, &ns);
        else
            st = rtd.ops->finish(x.rt);
        if (st != rows[i].st || !strstr(gpo_detail_get(), rows[i].says))
            fail_msg("%s: %d '%s'", rows[i].rule, (int)st, gpo_detail_get());
        assert_int_equal(rtd.full.stack_depth(), 0);
        rt_stop(&x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builds_target_the_device_cubin_ptx_or_a_refusal),
        cmocka_unit_test(a_compile_error_returns_the_compiler_s_log),
        cmocka_unit_test(module_load_failures_are_build_errors_in_words),
        cmocka_unit_test(parameters_are_checked_where_the_driver_can_tell),
        cmocka_unit_test(launch_geometry_is_checked_before_the_driver),
        cmocka_unit_test(launch_failures_say_what_they_mean),
    };
    return cmocka_run_group_tests(tests, rt_doubles_setup, NULL);
}
