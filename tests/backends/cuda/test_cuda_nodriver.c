/* The real no-driver cases: no libcuda.so.1 at all, a path that does not
 * exist, and the CUDA toolkit's stub libcuda. Kept in their own process,
 * before any test double is loaded: a library already loaded with soname
 * libcuda.so.1 would answer dlopen("libcuda.so.1") itself. */
#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cuda/cuda_backend.h"
#include "cuda/cuda_load.h"
#include "cuda_test_util.h"

/* A root with no /proc/driver/nvidia, so a machine's own driver state
 * never leaks into these answers. */
#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"

static void missing_default_library_is_unavailable_with_its_name(void **state)
{
    (void)state;
    void *probe = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!probe)
        probe = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (probe) {
        /* An NVIDIA driver is installed here: the no-library case cannot be
         * shown on this machine. */
        dlclose(probe);
        skip();
    }
    cuda_env e;
    gpo_backend_report rep;
    void *st = (void *)1;
    cuda_env_init(&e, NULL, NO_KERNEL_DRIVER);
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_ERR_UNAVAILABLE);
    assert_null(st);
    assert_non_null(strstr(rep.reason, "libcuda.so.1, the NVIDIA driver's CUDA library, cannot "
                                       "be opened"));
    assert_string_equal(rep.library, "");
    assert_string_equal(rep.driver_version, "");
}

static void nonexistent_library_path_is_unavailable_with_the_path(void **state)
{
    (void)state;
    cuda_env e;
    gpo_backend_report rep;
    void *st = (void *)1;
    cuda_env_init(&e, "/nonexistent/libcuda.so.1", NO_KERNEL_DRIVER);
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_ERR_UNAVAILABLE);
    assert_null(st);
    assert_non_null(strstr(rep.reason, "cannot open /nonexistent/libcuda.so.1"));
    assert_non_null(strstr(rep.reason, "GPUOPT_CUDA_LIBRARY"));
    assert_non_null(strstr(gpo_detail_get(), "/nonexistent/libcuda.so.1"));
}

static void toolkit_stub_says_so_in_words(void **state)
{
    (void)state;
    if (access(CUDA_TOOLKIT_STUB, R_OK) != 0)
        skip();
    cuda_env e;
    gpo_backend_report rep;
    void *st = (void *)1;
    char real[PATH_MAX];
    assert_non_null(realpath(CUDA_TOOLKIT_STUB, real));
    cuda_env_init(&e, CUDA_TOOLKIT_STUB, NO_KERNEL_DRIVER);
    /* Present but broken, not absent: selection warns when it passes it over. */
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_ERR_DRIVER);
    assert_null(st);
    /* The stub fails cuGetErrorName too: the name comes from our table. */
    assert_non_null(strstr(rep.reason, "cuInit failed with CUDA_ERROR_STUB_LIBRARY"));
    assert_non_null(
        strstr(rep.reason, "the CUDA toolkit's stub libcuda was found instead of a driver"));
    assert_string_equal(rep.library, real);
    assert_non_null(strstr(rep.reason, real));
    /* The stub answers cuDriverGetVersion with an error: no version. */
    assert_string_equal(rep.driver_version, "");
}

/* The stub shadowing a driver is a broken driver (issue 10: present but
 * broken is not absent): like any broken driver it lists nothing and its
 * reason counts the GPUs the kernel has. */
static void toolkit_stub_with_kernel_gpus_is_an_error_that_counts_them(void **state)
{
    (void)state;
    if (access(CUDA_TOOLKIT_STUB, R_OK) != 0)
        skip();
    cuda_env e;
    gpo_backend_report rep;
    void *st = (void *)1;
    cuda_env_init(&e, CUDA_TOOLKIT_STUB, GPO_FIXTURES_DIR "/nvidia/t4-proprietary-535");
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_ERR_DRIVER);
    assert_null(st);
    assert_non_null(strstr(rep.reason, "stub libcuda was found instead of a driver"));
    assert_non_null(strstr(rep.reason, "lists 1 GPU"));
}

int main(void)
{
    /* Order matters: the default-soname case must run before anything
     * called libcuda.so.1 is loaded into this process. */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_default_library_is_unavailable_with_its_name),
        cmocka_unit_test(nonexistent_library_path_is_unavailable_with_the_path),
        cmocka_unit_test(toolkit_stub_says_so_in_words),
        cmocka_unit_test(toolkit_stub_with_kernel_gpus_is_an_error_that_counts_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
