/* The slice of NVRTC (the CUDA runtime compiler, libnvrtc.so.*) that the
 * CUDA runtime ops call, declared here so the library builds without the
 * CUDA toolkit, as cuda_api.h does for the driver. Values and prototypes
 * follow nvrtc.h of CUDA 13.0; where /usr/local/cuda/include/nvrtc.h exists
 * at build time, tests/backends/cuda/test_cuda_nvrtc_header.c checks every
 * value and prototype against it.
 *
 * NVRTC has no versioned symbols: each major release has its own soname
 * (libnvrtc.so.13, .12, and .11.2 for every 11.x from 11.2 on, whose ABI
 * is stable across minors; CUDA 11.0 and 11.1 shipped .11.0 and .11.1). */
#ifndef GPO_NVRTC_API_H
#define GPO_NVRTC_API_H

#include <stddef.h>

#include "util/dl.h"

typedef int gpo_nvrtc_result;
typedef struct gpo_nvrtc_prog_st *gpo_nvrtc_program;

/* nvrtcResult (nvrtc.h 13.0), every value, so a result is named even when
 * nvrtcGetErrorString is missing. */
#define GPO_NVRTC_RESULTS(X)                                                                       \
    X(NVRTC_SUCCESS, 0)                                                                            \
    X(NVRTC_ERROR_OUT_OF_MEMORY, 1)                                                                \
    X(NVRTC_ERROR_PROGRAM_CREATION_FAILURE, 2)                                                     \
    X(NVRTC_ERROR_INVALID_INPUT, 3)                                                                \
    X(NVRTC_ERROR_INVALID_PROGRAM, 4)                                                              \
    X(NVRTC_ERROR_INVALID_OPTION, 5)                                                               \
    X(NVRTC_ERROR_COMPILATION, 6)                                                                  \
    X(NVRTC_ERROR_BUILTIN_OPERATION_FAILURE, 7)                                                    \
    X(NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION, 8)                                        \
    X(NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION, 9)                                          \
    X(NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID, 10)                                                   \
    X(NVRTC_ERROR_INTERNAL_ERROR, 11)                                                              \
    X(NVRTC_ERROR_TIME_FILE_WRITE_FAILED, 12)                                                      \
    X(NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED, 13)                                                     \
    X(NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED, 14)                                                   \
    X(NVRTC_ERROR_PCH_CREATE, 15)                                                                  \
    X(NVRTC_ERROR_CANCELLED, 16)                                                                   \
    X(NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED, 17)

#define GPO_NVRTC_RESULT_ENUM_(name, value) GPO_##name = value,
enum { GPO_NVRTC_RESULTS(GPO_NVRTC_RESULT_ENUM_) };

/* X(name, required, return type, params). Versions (NVRTC release notes
 * and nvrtc.h history): nvrtcGetCUBIN/Size 11.1 (before, only PTX comes
 * out); nvrtcGetNumSupportedArchs/nvrtcGetSupportedArchs 11.2. Everything
 * else exists since NVRTC 7.0. */
#define GPO_NVRTC_API(X)                                                                           \
    X(nvrtcGetErrorString, GPO_DL_OPTIONAL, const char *, (gpo_nvrtc_result result))               \
    X(nvrtcVersion, GPO_DL_REQUIRED, gpo_nvrtc_result, (int *major, int *minor))                   \
    X(nvrtcGetNumSupportedArchs, GPO_DL_OPTIONAL, gpo_nvrtc_result, (int *count))                  \
    X(nvrtcGetSupportedArchs, GPO_DL_OPTIONAL, gpo_nvrtc_result, (int *archs))                     \
    X(nvrtcCreateProgram, GPO_DL_REQUIRED, gpo_nvrtc_result,                                       \
      (gpo_nvrtc_program * prog, const char *src, const char *name, int num_headers,               \
       const char *const *headers, const char *const *include_names))                              \
    X(nvrtcDestroyProgram, GPO_DL_REQUIRED, gpo_nvrtc_result, (gpo_nvrtc_program * prog))          \
    X(nvrtcCompileProgram, GPO_DL_REQUIRED, gpo_nvrtc_result,                                      \
      (gpo_nvrtc_program prog, int num_options, const char *const *options))                       \
    X(nvrtcGetPTXSize, GPO_DL_REQUIRED, gpo_nvrtc_result, (gpo_nvrtc_program prog, size_t * size)) \
    X(nvrtcGetPTX, GPO_DL_REQUIRED, gpo_nvrtc_result, (gpo_nvrtc_program prog, char *ptx))         \
    X(nvrtcGetCUBINSize, GPO_DL_OPTIONAL, gpo_nvrtc_result,                                        \
      (gpo_nvrtc_program prog, size_t * size))                                                     \
    X(nvrtcGetCUBIN, GPO_DL_OPTIONAL, gpo_nvrtc_result, (gpo_nvrtc_program prog, char *cubin))     \
    X(nvrtcGetProgramLogSize, GPO_DL_REQUIRED, gpo_nvrtc_result,                                   \
      (gpo_nvrtc_program prog, size_t * size))                                                     \
    X(nvrtcGetProgramLog, GPO_DL_REQUIRED, gpo_nvrtc_result, (gpo_nvrtc_program prog, char *log))

#define GPO_NVRTC_PFN_(name, required, ret, params) typedef ret(*gpo_pfn_##name) params;
GPO_NVRTC_API(GPO_NVRTC_PFN_)

typedef struct gpo_nvrtc_api {
#define GPO_NVRTC_FIELD_(name, required, ret, params) gpo_pfn_##name name;
    GPO_NVRTC_API(GPO_NVRTC_FIELD_)
} gpo_nvrtc_api;

/* The gpo_dl_sym table generated from GPO_NVRTC_API (cuda_nvrtc.c). */
extern const gpo_dl_sym gpo_nvrtc_syms[];
extern const size_t gpo_nvrtc_n_syms;

/* "NVRTC_ERROR_COMPILATION" for a known result, else NULL. */
const char *gpo_nvrtc_result_name(gpo_nvrtc_result r);

#endif
