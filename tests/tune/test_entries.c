/* Kernel entry points read from a source's text: each language's marker,
 * attributes between it and the name, comments, literals and preprocessor
 * lines skipped; the list cut short rather than overflowing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/tune.h"
#include "tune/entries.h"

static void opencl_kernels_are_found_past_attributes_and_comments(void **state)
{
    (void)state;
    const char *src = "// __kernel void commented(int a) {}\n"
                      "/* __kernel void also_commented(int a) {} */\n"
                      "#define STR \"__kernel void in_macro(\"\n"
                      "void helper(int a) { (void)a; }\n"
                      "__kernel __attribute__((reqd_work_group_size(64, 1, 1)))\n"
                      "void first(__global float *x) { const char *s = \"kernel void no(\"; }\n"
                      "kernel void second(int n) {}\n";
    char names[128];
    assert_int_equal(gpo_kernel_entries(src, GPUOPT_LANG_OPENCL_C, "second", names, sizeof names),
                     1);
    assert_string_equal(names, "first, second");
    assert_int_equal(gpo_kernel_entries(src, GPUOPT_LANG_OPENCL_C, "helper", names, sizeof names),
                     0);
}

static void cuda_and_hip_kernels_are_found_past_launch_bounds(void **state)
{
    (void)state;
    const char *src = "template <int T> __device__ int twice(int x) { return T * x; }\n"
                      "extern \"C\" __global__ void __launch_bounds__(256, 2) gemm(float *c) {}\n"
                      "extern \"C\" __global__ void copy(float *a, const float *b) {}\n";
    char names[128];
    for (int32_t lang = GPUOPT_LANG_CUDA; lang <= GPUOPT_LANG_HIP; lang++) {
        assert_int_equal(gpo_kernel_entries(src, lang, "gemm", names, sizeof names), 1);
        assert_string_equal(names, "gemm, copy");
    }
    /* `kernel` is OpenCL C's word only. */
    assert_int_equal(
        gpo_kernel_entries("kernel void k(int a) {}", GPUOPT_LANG_CUDA, "k", names, sizeof names),
        0);
    assert_string_equal(names, "");
}

static void a_long_list_is_cut_with_dots(void **state)
{
    (void)state;
    const char *src = "__kernel void alpha(int a) {}\n__kernel void beta(int a) {}\n"
                      "__kernel void gamma(int a) {}\n__kernel void delta(int a) {}\n";
    char names[20];
    assert_int_equal(gpo_kernel_entries(src, GPUOPT_LANG_OPENCL_C, "delta", names, sizeof names),
                     1);
    assert_string_equal(names, "alpha, beta, ...");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(opencl_kernels_are_found_past_attributes_and_comments),
        cmocka_unit_test(cuda_and_hip_kernels_are_found_past_launch_bounds),
        cmocka_unit_test(a_long_list_is_cut_with_dots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
