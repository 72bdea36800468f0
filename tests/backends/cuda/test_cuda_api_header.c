/* Checks backends/cuda/cuda_api.h against the real cuda.h of the CUDA
 * toolkit on the build machine (built only where cuda.h exists).
 *
 * Compile time: every declared CUresult, CUdevice_attribute, CUcomputemode,
 * CUfunction_attribute and CUlimit value equals cuda.h's, the UUID, handle
 * and enum types have cuda.h's sizes, and every function prototype is
 * compatible with cuda.h's declaration of the name the backend resolves
 * (after cuda.h's own #define mapping, so a prototype of the wrong version
 * fails too).
 * Run time: every symbol the backend dlsyms is the one cuda.h maps the API
 * name to (cuDeviceTotalMem -> cuDeviceTotalMem_v2), which a static assert
 * cannot compare. */
#include <cuda.h>
#include <driver_types.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_api.h"

#define RESULT_CHECK_(name, value)                                                                 \
    _Static_assert(GPO_##name == (int)name && (value) == (int)name, #name " differs from cuda.h");
GPO_CUDA_RESULTS(RESULT_CHECK_)

_Static_assert(GPO_CUDA_ERROR_INSUFFICIENT_DRIVER == (int)cudaErrorInsufficientDriver,
               "CUDA_ERROR_INSUFFICIENT_DRIVER must be the runtime's cudaErrorInsufficientDriver");

#define ATTR_CHECK_(name, value)                                                                   \
    _Static_assert(GPO_CU_DEVICE_ATTRIBUTE_##name == (int)CU_DEVICE_ATTRIBUTE_##name,              \
                   "CU_DEVICE_ATTRIBUTE_" #name " differs from cuda.h");
GPO_CU_DEVICE_ATTRIBUTES(ATTR_CHECK_)

#define MODE_CHECK_(name, value)                                                                   \
    _Static_assert(GPO_CU_COMPUTEMODE_##name == (int)CU_COMPUTEMODE_##name,                        \
                   "CU_COMPUTEMODE_" #name " differs from cuda.h");
GPO_CU_COMPUTEMODES(MODE_CHECK_)

#define FUNC_ATTR_CHECK_(name, value)                                                              \
    _Static_assert(GPO_CU_FUNC_ATTRIBUTE_##name == (int)CU_FUNC_ATTRIBUTE_##name,                  \
                   "CU_FUNC_ATTRIBUTE_" #name " differs from cuda.h");
GPO_CU_FUNC_ATTRIBUTES(FUNC_ATTR_CHECK_)
_Static_assert(GPO_CU_EVENT_DEFAULT == (int)CU_EVENT_DEFAULT, "CU_EVENT_DEFAULT");
_Static_assert(GPO_CU_STREAM_NON_BLOCKING == (int)CU_STREAM_NON_BLOCKING, "CU_STREAM_NON_BLOCKING");

#define LIMIT_CHECK_(name, value)                                                                  \
    _Static_assert(GPO_CU_LIMIT_##name == (int)CU_LIMIT_##name && (value) == (int)CU_LIMIT_##name, \
                   "CU_LIMIT_" #name " differs from cuda.h");
GPO_CU_LIMITS(LIMIT_CHECK_)

_Static_assert(sizeof(gpo_cu_uuid) == sizeof(CUuuid), "CUuuid size");
_Static_assert(sizeof(gpo_cu_module) == sizeof(CUmodule), "CUmodule size");
_Static_assert(sizeof(gpo_cu_function) == sizeof(CUfunction), "CUfunction size");
_Static_assert(sizeof(gpo_cu_event) == sizeof(CUevent), "CUevent size");
_Static_assert(sizeof(gpo_cu_stream) == sizeof(CUstream), "CUstream size");
_Static_assert(sizeof(gpo_cu_function_attribute) == sizeof(CUfunction_attribute),
               "CUfunction_attribute size");
_Static_assert(__builtin_types_compatible_p(gpo_cu_deviceptr, CUdeviceptr), "CUdeviceptr type");
_Static_assert(sizeof(gpo_cu_device) == sizeof(CUdevice), "CUdevice size");
_Static_assert(sizeof(gpo_cu_context) == sizeof(CUcontext), "CUcontext size");
_Static_assert(sizeof(gpo_cu_result) == sizeof(CUresult), "CUresult size");
_Static_assert(sizeof(gpo_cu_device_attribute) == sizeof(CUdevice_attribute), "attribute size");
_Static_assert(sizeof(gpo_cu_limit) == sizeof(CUlimit), "CUlimit size");

/* From here on the backend's type names mean cuda.h's types, so the
 * parameter lists of GPO_CUDA_API rebuild cuda.h's prototypes. */
#define gpo_cu_result CUresult
#define gpo_cu_device CUdevice
#define gpo_cu_context CUcontext
#define gpo_cu_uuid CUuuid
#define gpo_cu_device_attribute CUdevice_attribute
#define gpo_cu_module CUmodule
#define gpo_cu_function CUfunction
#define gpo_cu_event CUevent
#define gpo_cu_stream CUstream
#define gpo_cu_deviceptr CUdeviceptr
#define gpo_cu_function_attribute CUfunction_attribute
#define gpo_cu_limit CUlimit

/* `field` expands through cuda.h's mapping (cuDeviceTotalMem becomes
 * cuDeviceTotalMem_v2); entries not checked are legacy symbols cuda.h no
 * longer declares. */
#define PROTO_CHECK_1(field, params)                                                               \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&field), CUresult(*) params),           \
                   #field " prototype differs from cuda.h");
#define PROTO_CHECK_0(field, params)
#define PROTO_CHECK_(field, symbol, required, checked, params) PROTO_CHECK_##checked(field, params)
GPO_CUDA_API(PROTO_CHECK_)

#define STR2_(x) #x
#define STR_(x) STR2_(x)

static const struct {
    const char *api;      /* the API name after cuda.h's mapping */
    const char *resolved; /* what the backend dlsyms */
    int checked;
} mapping[] = {
#define MAP_ROW_(field, symbol, required, checked, params) {STR_(field), #symbol, checked},
    GPO_CUDA_API(MAP_ROW_)
#undef MAP_ROW_
};

static void every_resolved_symbol_is_the_version_cuda_h_maps_to(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof mapping / sizeof mapping[0]; i++) {
        if (!mapping[i].checked)
            continue;
        if (strcmp(mapping[i].api, mapping[i].resolved) != 0) {
            fprintf(stderr, "cuda.h maps to %s but the backend resolves %s\n", mapping[i].api,
                    mapping[i].resolved);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

static void the_dlsym_table_names_the_same_symbols(void **state)
{
    (void)state;
    assert_int_equal(gpo_cuda_n_syms, sizeof mapping / sizeof mapping[0]);
    for (size_t i = 0; i < gpo_cuda_n_syms; i++)
        assert_string_equal(gpo_cuda_syms[i].symbol, mapping[i].resolved);
}

static void legacy_fallbacks_are_unversioned_names_of_checked_entries(void **state)
{
    (void)state;
    /* cuDeviceGetUuid (before CUDA 11.4) and cuEventElapsedTime (before
     * 12.8) are kept only as fallbacks for their _v2 symbols: each name is
     * the _v2 symbol without the suffix. */
    for (size_t i = 0; i < sizeof mapping / sizeof mapping[0]; i++) {
        if (mapping[i].checked)
            continue;
        int found = 0;
        for (size_t k = 0; k < sizeof mapping / sizeof mapping[0]; k++) {
            size_t n = strlen(mapping[i].resolved);
            if (mapping[k].checked && strncmp(mapping[k].resolved, mapping[i].resolved, n) == 0 &&
                strncmp(mapping[k].resolved + n, "_v", 2) == 0)
                found = 1;
        }
        assert_true(found);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_resolved_symbol_is_the_version_cuda_h_maps_to),
        cmocka_unit_test(the_dlsym_table_names_the_same_symbols),
        cmocka_unit_test(legacy_fallbacks_are_unversioned_names_of_checked_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
