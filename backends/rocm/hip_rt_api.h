/* The slices of HIP that the tier-2 runtime ops call (memory, modules,
 * launches, events: rocm_runtime.c), of hiprtc (compiling HIP source to a
 * code object: rocm_hiprtc.c) and of comgr (the ISA list that guards a
 * compile: rocm_hiprtc.c), declared here so the library builds without a
 * ROCm SDK. Checked against the installed headers where they exist
 * (tests/backends/rocm/test_hip_api_header.c: /usr/include/hip/
 * hip_runtime_api.h and hiprtc.h).
 *
 * Sources:
 *   HIP: include/hip/hip_runtime_api.h and driver_types.h (Debian
 *        libamdhip64-dev 5.2.3; the same signatures in ROCm/HIP rocm-6.2.0
 *        and ROCm/rocm-systems projects/hip for 7.x, where the host-to-
 *        device copies' source became `const void *`: the same ABI).
 *   hiprtc: include/hip/hiprtc.h (Debian 5.2.3; ROCm 7.0 made the option
 *        and header arrays `const char *const *`, as NVRTC's: the same ABI).
 *        Where the functions live: in libamdhip64 itself up to ROCm 6 (as
 *        Debian's libamdhip64.so.5 shows; later ROCm 5 releases and ROCm 6
 *        also ship a separate libhiprtc: HIP's hip_rtc how-to,
 *        "Deprecation notice"); only in libhiprtc.so.7 from ROCm 7.0
 *        ("Removal of hipRTC symbols from HIP Runtime Library", HIP
 *        CHANGELOG, HIP 7.0).
 *   comgr: amd_comgr.h (ROCm/llvm-project amd/comgr): amd_comgr_get_isa_count
 *        and amd_comgr_get_isa_name, present since comgr 1.8. */
#ifndef GPO_HIP_RT_API_H
#define GPO_HIP_RT_API_H

#include <stddef.h>

#include "util/dl.h"
#include "hip_api.h"

/* ---- HIP runtime ops slice ------------------------------------------------ */

typedef void *gpo_hip_deviceptr; /* hipDeviceptr_t (AMD: void *) */
typedef struct gpo_hip_module_s *gpo_hip_module;
typedef struct gpo_hip_function_s *gpo_hip_function;
typedef struct gpo_hip_event_s *gpo_hip_event;
typedef struct gpo_hip_stream_s *gpo_hip_stream; /* NULL: the null stream */

/* hipFunction_attribute (driver_types.h): the first enumerator. */
#define GPO_HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
/* hipHostMallocDefault (hip_runtime_api.h). */
#define GPO_HIP_HOST_MALLOC_DEFAULT 0u
/* hipStreamNonBlocking (hip_runtime_api.h): the stream does not
 * synchronise with the null stream, on which the host program's own work
 * may be queued. */
#define GPO_HIP_STREAM_NON_BLOCKING 0x01u

typedef gpo_hip_error (*gpo_hip_malloc_fn)(void **ptr, size_t bytes);
typedef gpo_hip_error (*gpo_hip_free_fn)(void *ptr);
typedef gpo_hip_error (*gpo_hip_memcpy_htod_async_fn)(gpo_hip_deviceptr dst, void *src,
                                                      size_t bytes, gpo_hip_stream stream);
typedef gpo_hip_error (*gpo_hip_memcpy_dtoh_async_fn)(void *dst, gpo_hip_deviceptr src,
                                                      size_t bytes, gpo_hip_stream stream);
typedef gpo_hip_error (*gpo_hip_memcpy_dtod_async_fn)(gpo_hip_deviceptr dst, gpo_hip_deviceptr src,
                                                      size_t bytes, gpo_hip_stream stream);
typedef gpo_hip_error (*gpo_hip_stream_create_fn)(gpo_hip_stream *stream, unsigned int flags);
typedef gpo_hip_error (*gpo_hip_stream_fn)(gpo_hip_stream stream);
typedef gpo_hip_error (*gpo_hip_host_malloc_fn)(void **ptr, size_t bytes, unsigned int flags);
typedef gpo_hip_error (*gpo_hip_module_load_data_fn)(gpo_hip_module *module, const void *image);
typedef gpo_hip_error (*gpo_hip_module_unload_fn)(gpo_hip_module module);
typedef gpo_hip_error (*gpo_hip_module_get_function_fn)(gpo_hip_function *function,
                                                        gpo_hip_module module, const char *name);
typedef gpo_hip_error (*gpo_hip_module_launch_kernel_fn)(
    gpo_hip_function f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
    unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared_bytes,
    gpo_hip_stream stream, void **params, void **extra);
typedef gpo_hip_error (*gpo_hip_func_get_attribute_fn)(int *value, int attrib, gpo_hip_function f);
typedef gpo_hip_error (*gpo_hip_event_create_fn)(gpo_hip_event *event);
typedef gpo_hip_error (*gpo_hip_event_record_fn)(gpo_hip_event event, gpo_hip_stream stream);
typedef gpo_hip_error (*gpo_hip_event_fn)(gpo_hip_event event);
typedef gpo_hip_error (*gpo_hip_event_elapsed_fn)(float *ms, gpo_hip_event start,
                                                  gpo_hip_event stop);

/* (field, exported symbol, required?, type). Resolved from the runtime the
 * backend already opened, when a session opens. Copies, launches and events
 * go to the session's own hipStreamNonBlocking stream (the async copies,
 * then hipStreamSynchronize where the ops promise a blocking copy); every
 * one of these exists since ROCm 1.x. */
#define GPO_HIP_RT_SYMBOLS(X)                                                                      \
    X(get_device, "hipGetDevice", GPO_DL_REQUIRED, gpo_hip_int_out_fn)                             \
    X(set_device, "hipSetDevice", GPO_DL_REQUIRED, gpo_hip_set_device_fn)                          \
    X(malloc, "hipMalloc", GPO_DL_REQUIRED, gpo_hip_malloc_fn)                                     \
    X(free, "hipFree", GPO_DL_REQUIRED, gpo_hip_free_fn)                                           \
    X(stream_create, "hipStreamCreateWithFlags", GPO_DL_REQUIRED, gpo_hip_stream_create_fn)        \
    X(stream_destroy, "hipStreamDestroy", GPO_DL_REQUIRED, gpo_hip_stream_fn)                      \
    X(stream_synchronize, "hipStreamSynchronize", GPO_DL_REQUIRED, gpo_hip_stream_fn)              \
    X(memcpy_htod, "hipMemcpyHtoDAsync", GPO_DL_REQUIRED, gpo_hip_memcpy_htod_async_fn)            \
    X(memcpy_dtoh, "hipMemcpyDtoHAsync", GPO_DL_REQUIRED, gpo_hip_memcpy_dtoh_async_fn)            \
    X(memcpy_dtod, "hipMemcpyDtoDAsync", GPO_DL_REQUIRED, gpo_hip_memcpy_dtod_async_fn)            \
    X(host_malloc, "hipHostMalloc", GPO_DL_OPTIONAL, gpo_hip_host_malloc_fn)                       \
    X(host_free, "hipHostFree", GPO_DL_OPTIONAL, gpo_hip_free_fn)                                  \
    X(module_load_data, "hipModuleLoadData", GPO_DL_REQUIRED, gpo_hip_module_load_data_fn)         \
    X(module_unload, "hipModuleUnload", GPO_DL_REQUIRED, gpo_hip_module_unload_fn)                 \
    X(module_get_function, "hipModuleGetFunction", GPO_DL_REQUIRED,                                \
      gpo_hip_module_get_function_fn)                                                              \
    X(module_launch_kernel, "hipModuleLaunchKernel", GPO_DL_REQUIRED,                              \
      gpo_hip_module_launch_kernel_fn)                                                             \
    X(func_get_attribute, "hipFuncGetAttribute", GPO_DL_OPTIONAL, gpo_hip_func_get_attribute_fn)   \
    X(event_create, "hipEventCreate", GPO_DL_REQUIRED, gpo_hip_event_create_fn)                    \
    X(event_record, "hipEventRecord", GPO_DL_REQUIRED, gpo_hip_event_record_fn)                    \
    X(event_synchronize, "hipEventSynchronize", GPO_DL_REQUIRED, gpo_hip_event_fn)                 \
    X(event_elapsed_time, "hipEventElapsedTime", GPO_DL_REQUIRED, gpo_hip_event_elapsed_fn)        \
    X(event_destroy, "hipEventDestroy", GPO_DL_REQUIRED, gpo_hip_event_fn)

typedef struct gpo_hip_rt_fns {
    GPO_HIP_RT_SYMBOLS(GPO_HIP_FIELD)
} gpo_hip_rt_fns;

extern const gpo_dl_sym gpo_hip_rt_syms[];
extern const size_t gpo_hip_rt_n_syms;

/* ---- hiprtc ----------------------------------------------------------------- */

typedef int gpo_hiprtc_result; /* hiprtcResult: an int-sized enum */
typedef struct gpo_hiprtc_program_s *gpo_hiprtc_program;

#define GPO_HIPRTC_SUCCESS 0
#define GPO_HIPRTC_RESULTS(X)                                                                      \
    X(0, HIPRTC_SUCCESS)                                                                           \
    X(1, HIPRTC_ERROR_OUT_OF_MEMORY)                                                               \
    X(2, HIPRTC_ERROR_PROGRAM_CREATION_FAILURE)                                                    \
    X(3, HIPRTC_ERROR_INVALID_INPUT)                                                               \
    X(4, HIPRTC_ERROR_INVALID_PROGRAM)                                                             \
    X(5, HIPRTC_ERROR_INVALID_OPTION)                                                              \
    X(6, HIPRTC_ERROR_COMPILATION)                                                                 \
    X(7, HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE)                                                   \
    X(8, HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION)                                       \
    X(9, HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION)                                         \
    X(10, HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID)                                                  \
    X(11, HIPRTC_ERROR_INTERNAL_ERROR)

typedef gpo_hiprtc_result (*gpo_hiprtc_create_fn)(gpo_hiprtc_program *prog, const char *src,
                                                  const char *name, int n_headers,
                                                  const char *const *headers,
                                                  const char *const *include_names);
typedef gpo_hiprtc_result (*gpo_hiprtc_compile_fn)(gpo_hiprtc_program prog, int n_options,
                                                   const char *const *options);
typedef gpo_hiprtc_result (*gpo_hiprtc_destroy_fn)(gpo_hiprtc_program *prog);
typedef gpo_hiprtc_result (*gpo_hiprtc_size_fn)(gpo_hiprtc_program prog, size_t *bytes);
typedef gpo_hiprtc_result (*gpo_hiprtc_copy_fn)(gpo_hiprtc_program prog, char *out);
typedef gpo_hiprtc_result (*gpo_hiprtc_version_fn)(int *major, int *minor);
typedef const char *(*gpo_hiprtc_error_string_fn)(gpo_hiprtc_result result);

#define GPO_HIPRTC_SYMBOLS(X)                                                                      \
    X(create_program, "hiprtcCreateProgram", GPO_DL_REQUIRED, gpo_hiprtc_create_fn)                \
    X(compile_program, "hiprtcCompileProgram", GPO_DL_REQUIRED, gpo_hiprtc_compile_fn)             \
    X(destroy_program, "hiprtcDestroyProgram", GPO_DL_REQUIRED, gpo_hiprtc_destroy_fn)             \
    X(get_program_log_size, "hiprtcGetProgramLogSize", GPO_DL_REQUIRED, gpo_hiprtc_size_fn)        \
    X(get_program_log, "hiprtcGetProgramLog", GPO_DL_REQUIRED, gpo_hiprtc_copy_fn)                 \
    X(get_code_size, "hiprtcGetCodeSize", GPO_DL_REQUIRED, gpo_hiprtc_size_fn)                     \
    X(get_code, "hiprtcGetCode", GPO_DL_REQUIRED, gpo_hiprtc_copy_fn)                              \
    X(version, "hiprtcVersion", GPO_DL_OPTIONAL, gpo_hiprtc_version_fn)                            \
    X(get_error_string, "hiprtcGetErrorString", GPO_DL_OPTIONAL, gpo_hiprtc_error_string_fn)

typedef struct gpo_hiprtc_fns {
    GPO_HIPRTC_SYMBOLS(GPO_HIP_FIELD)
} gpo_hiprtc_fns;

extern const gpo_dl_sym gpo_hiprtc_syms[];
extern const size_t gpo_hiprtc_n_syms;

/* "HIPRTC_ERROR_COMPILATION" for known codes, else NULL. */
const char *gpo_hiprtc_result_name(gpo_hiprtc_result r);

/* ---- comgr (only the ISA list) ------------------------------------------------ */

typedef int gpo_comgr_status; /* amd_comgr_status_t; 0 = AMD_COMGR_STATUS_SUCCESS */
typedef gpo_comgr_status (*gpo_comgr_isa_count_fn)(size_t *count);
typedef gpo_comgr_status (*gpo_comgr_isa_name_fn)(size_t index, const char **name);

#endif
