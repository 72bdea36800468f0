/* The real no-device case: Debian's libamdhip64 (ROCm 5.2) on a machine
 * without /dev/kfd. Observed here: hipRuntimeGetVersion succeeds
 * (50221153), hipInit returns hipErrorInvalidDevice (101) and
 * hipGetDeviceCount hipErrorNoDevice (100) with a count of 0; the runtime's
 * hipGetErrorString returns the error's name. The backend must turn that
 * into a reason a person understands. Skipped where the library or the
 * precondition (no /dev/kfd) is missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rocm_test.h"

#define DEBIAN_HIP "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"

static void debian_hip_without_kfd_is_unavailable_in_words(void **state)
{
    rocm_env e;
    rocm_run r;
    (void)state;
    if (access(DEBIAN_HIP, R_OK) != 0 || access("/dev/kfd", F_OK) == 0)
        skip();
    unsetenv("HIP_VISIBLE_DEVICES");
    /* The default sonames, on the live system: what a user gets. Without
     * /dev/kfd and with no GPU in the KFD topology the runtime could see
     * nothing, so it is not opened at all (it costs 15 ms or more). */
    rocm_env_init(&e, "", NULL);
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    if (!strstr(r.report.reason, "/dev/kfd does not exist") ||
        !strstr(r.report.reason, "the HIP runtime was not opened") ||
        !strstr(r.report.reason, "GPUOPT_HIP_LIBRARY"))
        fail_msg("reason: %s", r.report.reason);
    assert_string_equal(r.report.library, "");
    assert_null(r.state);
    rocm_run_free(&r);

    /* Opened by path, through the override: the real runtime's own
     * no-device answer, in words. */
    rocm_env_init(&e, "", DEBIAN_HIP);
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    if (!strstr(r.report.reason, "sees no usable AMD GPU: hipInit returned "
                                 "hipErrorInvalidDevice (101)") ||
        !strstr(r.report.reason, "/dev/kfd does not exist"))
        fail_msg("reason: %s", r.report.reason);
    assert_non_null(strstr(r.report.library, "libamdhip64.so.5"));
    assert_non_null(strstr(r.report.runtime_version, "5."));
    rocm_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(debian_hip_without_kfd_is_unavailable_in_words),
    };
    return cmocka_run_group_tests(tests, rocm_test_clean_env, NULL);
}
