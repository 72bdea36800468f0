/* The real hiprtc, where one is installed, compiling a small kernel through
 * the backend's own path (rocm_hiprtc.c) for gfx90a, gfx942 and gfx1100: no
 * GPU is needed to compile. On this project's development machine that is
 * Debian's libamdhip64 5.2, whose runtime exports hiprtc itself and whose
 * comgr (5.2.3) knows gfx90a but not gfx942 or gfx1100: those two then
 * prove the guard instead (the compile is refused in words where comgr
 * 5.2 would abort the process) and the test says it skipped the compile
 * and why. Without any hiprtc every case skips, saying so. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/detail.h"
#include "rocm/rocm_hiprtc.h"
#include "rocm_test.h"

static gpo_hiprtc rtc;
static char why_not[1024];

static const char kernel_src[] =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = a * x[i] + y[i];\n"
    "}\n";

static int open_hiprtc(void **state)
{
    static const char *const runtimes[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                           "libamdhip64.so.5"};
    void *hip = NULL;
    int major = 0;
    (void)state;
    for (int i = 0; i < 3 && !hip; i++) {
        hip = dlopen(runtimes[i], RTLD_NOW | RTLD_LOCAL);
        major = 7 - i;
    }
    /* A runtime is not required (ROCm 7's hiprtc stands alone); it is
     * where ROCm 5 and 6 keep hiprtc. Never dlclose'd, as the backend. */
    gpo_detail_clear();
    if (gpo_hiprtc_open(&rtc, NULL, hip, hip ? major : 0) != GPUOPT_OK)
        snprintf(why_not, sizeof why_not, "no hiprtc is installed here: %s", gpo_detail_get());
    return 0;
}

static void compile_for(const char *target)
{
    char known[1024];
    void *code = NULL;
    size_t size = 0;
    char *log = NULL;
    if (why_not[0]) {
        print_message("skipped: %s\n", why_not);
        skip();
    }
    int k = gpo_hiprtc_target_known(&rtc, target, known, sizeof known);
    gpo_detail_clear();
    gpuopt_status st = gpo_hiprtc_compile(&rtc, kernel_src, target, "-O3", &code, &size, &log);
    if (k == 0) {
        /* Refused in words; this process is still here to check it. */
        assert_int_equal(st, GPUOPT_ERR_UNSUPPORTED);
        assert_non_null(strstr(gpo_detail_get(), "does not know"));
        print_message("skipped compiling for %s: the compiler behind %s (comgr %s) does not know "
                      "it (it knows %s); the guard refused it instead of letting comgr abort\n",
                      target, rtc.library, rtc.comgr, known);
        skip();
    }
    if (st != GPUOPT_OK)
        fail_msg("compiling for %s failed: %s\nlog: %s", target, gpo_detail_get(),
                 log ? log : "(none)");
    /* A code object: an ELF for the amdgcn target. */
    assert_true(size > 16);
    assert_memory_equal(code,
                        "\x7f"
                        "ELF",
                        4);
    print_message("compiled saxpy for %s with %s: %zu bytes\n", target, rtc.library, size);
    free(code);
    free(log);
}

static void compiles_for_gfx90a(void **state)
{
    (void)state;
    compile_for("gfx90a:sramecc+:xnack-");
}

static void compiles_for_gfx942(void **state)
{
    (void)state;
    compile_for("gfx942:sramecc+:xnack-");
}

static void compiles_for_gfx1100(void **state)
{
    (void)state;
    compile_for("gfx1100");
}

static void a_compile_error_returns_the_log(void **state)
{
    void *code = NULL;
    size_t size = 0;
    char *log = NULL;
    (void)state;
    if (why_not[0]) {
        print_message("skipped: %s\n", why_not);
        skip();
    }
    static const char broken[] = "extern \"C\" __global__ void k(int *x) { undefined_thing(); }\n";
    assert_int_equal(gpo_hiprtc_compile(&rtc, broken, "gfx90a", NULL, &code, &size, &log),
                     GPUOPT_ERR_BUILD);
    assert_null(code);
    assert_non_null(log);
    assert_non_null(strstr(log, "undefined_thing"));
    assert_non_null(strstr(gpo_detail_get(), "HIPRTC_ERROR_COMPILATION"));
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compiles_for_gfx90a),
        cmocka_unit_test(compiles_for_gfx942),
        cmocka_unit_test(compiles_for_gfx1100),
        cmocka_unit_test(a_compile_error_returns_the_log),
    };
    return cmocka_run_group_tests(tests, open_hiprtc, NULL);
}
