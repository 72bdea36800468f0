/* The tier-2 kernels compile with the real vendor compilers where they are
 * installed, through the backends' own compile paths (no GPU is needed to
 * compile): the CUDA C text with NVRTC for sm_80 and sm_90 (PTX with the
 * three entry points unmangled, and a CUBIN), the same text with hiprtc
 * for gfx90a. Where a compiler (or a target) is missing the case says so
 * and is skipped. The OpenCL C text is built by PoCL in every PoCL tier-2
 * test. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_nvrtc.h"
#include "rocm/rocm_hiprtc.h"
#include "util/strutil.h"
#include "tier2/bench.h"

static const char *const entries[] = {"gpo_t2_copy", "gpo_t2_empty", "gpo_t2_reduce"};

static int nvrtc_knows(const gpo_nvrtc *nv, int arch)
{
    for (int i = 0; i < nv->n_archs; i++)
        if (nv->archs[i] == arch)
            return 1;
    return nv->n_archs < 0; /* an NVRTC that cannot list them: try */
}

static void the_cuda_kernels_compile_with_nvrtc(void **state)
{
    (void)state;
    gpo_nvrtc *nv = NULL;
    if (gpo_nvrtc_open(GPO_NVRTC_TEST_LIBRARY, 0, &nv) != GPUOPT_OK) {
        print_message("skipped: no NVRTC here: %s\n", gpo_detail_get());
        skip();
    }
    const char *src = gpo_t2_kernel_source("cuda");
    static const int archs[] = {80, 90};
    int compiled = 0;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        int a = archs[i];
        if (!nvrtc_knows(nv, a))
            continue;
        gpo_nvrtc_image img;
        char *log = NULL, opt[64], ptx_entry[64];
        snprintf(opt, sizeof opt, "--gpu-architecture=compute_%d", a);
        if (gpo_nvrtc_compile(nv, src, opt, a / 10, a % 10, &img, &log) != GPUOPT_OK)
            fail_msg("compute_%d: %s\nlog: %s", a, gpo_detail_get(), log ? log : "");
        assert_int_equal(img.cubin, 0);
        for (size_t e = 0; e < 3; e++) {
            snprintf(ptx_entry, sizeof ptx_entry, ".entry %s(", entries[e]);
            if (!strstr(img.data, ptx_entry))
                fail_msg("compute_%d: no %s in the PTX", a, ptx_entry);
        }
        gpo_nvrtc_image_free(&img);
        free(log);
        log = NULL;
        assert_int_equal(gpo_nvrtc_compile(nv, src, "", a / 10, a % 10, &img, &log), GPUOPT_OK);
        assert_memory_equal(img.data, "\177ELF", 4);
        print_message("sm_%d: the tier-2 kernels compile (CUBIN %zu bytes, NVRTC %d.%d)\n", a,
                      img.size, nv->major, nv->minor);
        gpo_nvrtc_image_free(&img);
        free(log);
        compiled++;
    }
    gpo_nvrtc_close(nv);
    if (!compiled) {
        print_message("skipped: this NVRTC compiles neither sm_80 nor sm_90\n");
        skip();
    }
}

static void the_hip_kernels_compile_with_hiprtc(void **state)
{
    (void)state;
    static const char *const runtimes[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                           "libamdhip64.so.5"};
    void *hip = NULL;
    int major = 0;
    for (int i = 0; i < 3 && !hip; i++) {
        hip = dlopen(runtimes[i], RTLD_NOW | RTLD_LOCAL);
        major = 7 - i;
    }
    gpo_hiprtc rtc;
    memset(&rtc, 0, sizeof rtc);
    gpo_detail_clear();
    if (gpo_hiprtc_open(&rtc, NULL, hip, hip ? major : 0) != GPUOPT_OK) {
        print_message("skipped: no hiprtc here: %s\n", gpo_detail_get());
        skip();
    }
    const char *target = "gfx90a:sramecc+:xnack-";
    char known[1024];
    if (gpo_hiprtc_target_known(&rtc, target, known, sizeof known) == 0) {
        print_message("skipped: this hiprtc does not know gfx90a (it knows %s)\n", known);
        skip();
    }
    void *code = NULL;
    size_t size = 0;
    char *log = NULL;
    if (gpo_hiprtc_compile(&rtc, gpo_t2_kernel_source("hip"), target, NULL, &code, &size, &log) !=
        GPUOPT_OK)
        fail_msg("hiprtc: %s\nlog: %s", gpo_detail_get(), log ? log : "");
    assert_true(size > 16);
    assert_memory_equal(code, "\177ELF", 4);
    /* The kernels are unmangled symbols of the code object. */
    for (size_t e = 0; e < 3; e++) {
        size_t n = strlen(entries[e]);
        int found = 0;
        for (size_t i = 0; i + n < size && !found; i++)
            found = memcmp((const char *)code + i, entries[e], n) == 0 &&
                    ((const char *)code)[i + n] == '\0';
        if (!found)
            fail_msg("no symbol %s in the code object", entries[e]);
    }
    print_message("gfx90a: the tier-2 kernels compile with %s (%zu bytes)\n", rtc.library, size);
    free(code);
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_cuda_kernels_compile_with_nvrtc),
        cmocka_unit_test(the_hip_kernels_compile_with_hiprtc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
