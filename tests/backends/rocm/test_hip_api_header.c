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
#include <hip/hiprtc.h>

#include "rocm/hip_api.h"
#include "rocm/hip_rt_api.h"

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

/* The header declares a function of that name (sizeof: nothing is linked). */
#define DECLARED(f) assert_int_equal(sizeof(&f), sizeof(void (*)(void)))

/* The runtime-ops slice (hip_rt_api.h): every function exists under the
 * declared name; where no opaque handle type is involved the prototype is
 * the same type; the values and sizes the ops pass match. Handle types
 * (hipModule_t, hipFunction_t, hipEvent_t, hipStream_t) are our own opaque
 * pointers, the same size as the header's. */
static void runtime_ops_slice_matches_the_installed_header(void **state)
{
    (void)state;
    /* Our type has these parameters, and so has the header's function
     * (hipError_t is an enum, our gpo_hip_error the int it is passed as). */
#define SAME(ours, params, fn)                                                                     \
    assert_true(__builtin_types_compatible_p(ours, gpo_hip_error(*) params));                      \
    assert_true(__builtin_types_compatible_p(hipError_t(*) params, __typeof__(&fn)))
    SAME(gpo_hip_malloc_fn, (void **, size_t), hipMalloc);
    SAME(gpo_hip_free_fn, (void *), hipFree);
    SAME(gpo_hip_free_fn, (void *), hipHostFree);
    SAME(gpo_hip_host_malloc_fn, (void **, size_t, unsigned int), hipHostMalloc);
    /* The stream-taking calls: the header's prototype with hipStream_t,
     * ours the same with our stream handle. */
#define SAME_ON_STREAM(ours, params, ours_params, fn)                                              \
    assert_true(__builtin_types_compatible_p(ours, gpo_hip_error(*) ours_params));                 \
    assert_true(__builtin_types_compatible_p(hipError_t(*) params, __typeof__(&fn)))
#if HIP_VERSION_MAJOR < 7
    SAME_ON_STREAM(gpo_hip_memcpy_htod_async_fn, (void *, void *, size_t, hipStream_t),
                   (void *, void *, size_t, gpo_hip_stream), hipMemcpyHtoDAsync);
#endif
    SAME_ON_STREAM(gpo_hip_memcpy_dtoh_async_fn, (void *, void *, size_t, hipStream_t),
                   (void *, void *, size_t, gpo_hip_stream), hipMemcpyDtoHAsync);
    SAME_ON_STREAM(gpo_hip_memcpy_dtod_async_fn, (void *, void *, size_t, hipStream_t),
                   (void *, void *, size_t, gpo_hip_stream), hipMemcpyDtoDAsync);
    SAME_ON_STREAM(gpo_hip_stream_create_fn, (hipStream_t *, unsigned int),
                   (gpo_hip_stream *, unsigned int), hipStreamCreateWithFlags);
    SAME_ON_STREAM(gpo_hip_stream_fn, (hipStream_t), (gpo_hip_stream), hipStreamDestroy);
    SAME_ON_STREAM(gpo_hip_stream_fn, (hipStream_t), (gpo_hip_stream), hipStreamSynchronize);
#undef SAME_ON_STREAM
    SAME(gpo_hip_int_out_fn, (int *), hipGetDevice);
    SAME(gpo_hip_set_device_fn, (int), hipSetDevice);
#undef SAME
    /* Declared, by these names. */
    DECLARED(hipModuleLoadData);
    DECLARED(hipModuleUnload);
    DECLARED(hipModuleGetFunction);
    DECLARED(hipModuleLaunchKernel);
    DECLARED(hipFuncGetAttribute);
    DECLARED(hipEventCreate);
    DECLARED(hipEventRecord);
    DECLARED(hipEventSynchronize);
    DECLARED(hipEventElapsedTime);
    DECLARED(hipEventDestroy);
    DECLARED(hipGetDevice);
    DECLARED(hipSetDevice);
    assert_int_equal(GPO_HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                     (int)HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    assert_int_equal(GPO_HIP_HOST_MALLOC_DEFAULT, hipHostMallocDefault);
    assert_int_equal(GPO_HIP_STREAM_NON_BLOCKING, hipStreamNonBlocking);
    assert_int_equal(sizeof(gpo_hip_deviceptr), sizeof(hipDeviceptr_t));
    assert_int_equal(sizeof(gpo_hip_module), sizeof(hipModule_t));
    assert_int_equal(sizeof(gpo_hip_function), sizeof(hipFunction_t));
    assert_int_equal(sizeof(gpo_hip_event), sizeof(hipEvent_t));
    assert_int_equal(sizeof(gpo_hip_stream), sizeof(hipStream_t));
    /* The symbol table lists exactly the slice's functions. */
    assert_int_equal(gpo_hip_rt_n_syms, 22);
}

/* hiprtc: result values, and the functions by name. The option and header
 * arrays are `const char **` before ROCm 7 and `const char *const *` from
 * 7 on (the same ABI), so those two prototypes are compared by shape. */
static void hiprtc_slice_matches_the_installed_header(void **state)
{
    (void)state;
#define CHECK_RTC(v, name) assert_int_equal(v, (int)name);
    GPO_HIPRTC_RESULTS(CHECK_RTC)
#undef CHECK_RTC
    assert_int_equal(sizeof(gpo_hiprtc_result), sizeof(hiprtcResult));
    assert_int_equal(sizeof(gpo_hiprtc_program), sizeof(hiprtcProgram));
    DECLARED(hiprtcCreateProgram);
    DECLARED(hiprtcCompileProgram);
    DECLARED(hiprtcDestroyProgram);
    DECLARED(hiprtcGetProgramLogSize);
    DECLARED(hiprtcGetProgramLog);
    DECLARED(hiprtcGetCodeSize);
    DECLARED(hiprtcGetCode);
    DECLARED(hiprtcVersion);
    DECLARED(hiprtcGetErrorString);
    assert_int_equal(gpo_hiprtc_n_syms, 9);
    for (int r = 0; r <= 11; r++)
        assert_non_null(gpo_hiprtc_result_name(r));
    assert_null(gpo_hiprtc_result_name(12));
    assert_null(gpo_hiprtc_result_name(-1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attribute_ids_match_the_installed_header),
        cmocka_unit_test(error_codes_match_the_installed_header),
        cmocka_unit_test(uuid_and_props_layout_match_the_installed_header),
        cmocka_unit_test(runtime_ops_slice_matches_the_installed_header),
        cmocka_unit_test(hiprtc_slice_matches_the_installed_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
