/* The backend's own declarations of the HIP API slice (backends/rocm/
 * hip_api.h) against the real header installed on the build machine
 * (Debian libamdhip64-dev: /usr/include/hip). Built only where that header
 * exists; it checks the column of the installed major. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include "rocm/hip_api.h"

/* Appended in ROCm 7: absent from older headers. */
#if HIP_VERSION_MAJOR < 7
#define hipDeviceAttributeNumberOfXccs (-1)
#endif

static const gpo_hip_abi *installed(void)
{
    int extrapolated = 0;
    const gpo_hip_abi *abi = gpo_hip_abi_for(HIP_VERSION_MAJOR, &extrapolated);
    assert_non_null(abi);
    assert_int_equal(extrapolated, 0);
    return abi;
}

static void attribute_ids_match_the_installed_header(void **state)
{
    const gpo_hip_abi *abi = installed();
    (void)state;
#define CHECK_ATTR(id, name, v5, v6, v7)                                                           \
    assert_int_equal(abi->attr[GPO_HIP_ATTR_##id], (int)(name));                                   \
    assert_string_equal(abi->attr_name[GPO_HIP_ATTR_##id], #name);
    GPO_HIP_ATTRS(CHECK_ATTR)
#undef CHECK_ATTR
}

static void error_codes_match_the_installed_header(void **state)
{
    (void)state;
#define CHECK_ERR(v, name) assert_int_equal(v, (int)name);
    GPO_HIP_ERRORS(CHECK_ERR)
#undef CHECK_ERR
    assert_int_equal(sizeof(gpo_hip_error), sizeof(hipError_t));
}

static void uuid_and_props_layout_match_the_installed_header(void **state)
{
    const gpo_hip_abi *abi = installed();
    (void)state;
    assert_int_equal(sizeof(gpo_hip_uuid), sizeof(hipUUID));
#if HIP_VERSION_MAJOR >= 6
    assert_int_equal(abi->props_size, sizeof(hipDeviceProp_tR0600));
    assert_int_equal(abi->props_gcn_arch_name, offsetof(hipDeviceProp_tR0600, gcnArchName));
    assert_string_equal(abi->props_symbol, "hipGetDevicePropertiesR0600");
#else
    assert_int_equal(abi->props_size, sizeof(hipDeviceProp_t));
    assert_int_equal(abi->props_gcn_arch_name, offsetof(hipDeviceProp_t, gcnArchName));
    assert_string_equal(abi->props_symbol, "hipGetDeviceProperties");
#endif
    assert_true(abi->props_size < GPO_HIP_PROPS_BUFFER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attribute_ids_match_the_installed_header),
        cmocka_unit_test(error_codes_match_the_installed_header),
        cmocka_unit_test(uuid_and_props_layout_match_the_installed_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
