/* The real ICD loader with no vendor driver installed (OCL_ICD_VENDORS
 * points at an empty folder): the backend is unavailable and says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ocl_test.h"

static void loader_without_drivers_is_unavailable_in_words(void **state)
{
    (void)state;
    ocl_fx fx;
    ocl_fx_init(&fx, NULL);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_ERR_UNAVAILABLE);
    assert_null(fx.state);
    assert_non_null(strstr(fx.report.reason, "no OpenCL platform is installed"));
    assert_non_null(strstr(fx.report.reason, "CL_PLATFORM_NOT_FOUND_KHR"));
    assert_non_null(strstr(fx.report.library, "libOpenCL.so"));
    ocl_fx_free(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loader_without_drivers_is_unavailable_in_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
