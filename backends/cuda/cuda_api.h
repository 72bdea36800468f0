/* The slice of the CUDA driver API this backend calls, declared here so the
 * library builds without the CUDA toolkit (the approach of FFmpeg's
 * nv-codec-headers). Values and prototypes follow cuda.h of CUDA 13.0; where
 * /usr/local/cuda/include/cuda.h exists at build time,
 * tests/backends/cuda/test_cuda_api_header.c checks every value, every
 * prototype and every symbol's version suffix against it.
 *
 * Names carry a gpo_/GPO_ prefix so this header and the real cuda.h can share
 * one translation unit (that is how the check works). */
#ifndef GPO_CUDA_API_H
#define GPO_CUDA_API_H

#include <stddef.h>

#include "util/dl.h"

/* ---- Types -----------------------------------------------------------------
 * CUresult and CUdevice_attribute are enums in cuda.h; the ABI passes them as
 * int. CUdevice is an int ordinal handle, CUcontext an opaque pointer. */
typedef int gpo_cu_result;
typedef int gpo_cu_device;
typedef int gpo_cu_device_attribute;
typedef struct gpo_cu_ctx_st *gpo_cu_context;
/* Runtime objects (tier 2): modules, functions, events and streams are
 * opaque pointers; CUdeviceptr is a 64-bit integer on 64-bit hosts
 * (CUdeviceptr_v2). CUfunction_attribute is an enum, passed as int. */
typedef struct gpo_cu_mod_st *gpo_cu_module;
typedef struct gpo_cu_func_st *gpo_cu_function;
typedef struct gpo_cu_event_st *gpo_cu_event;
typedef struct gpo_cu_stream_st *gpo_cu_stream;
typedef unsigned long long gpo_cu_deviceptr;
typedef int gpo_cu_function_attribute;
typedef struct gpo_cu_uuid {
    char bytes[16];
} gpo_cu_uuid;

/* ---- CUresult --------------------------------------------------------------
 * Every value of cuda.h 13.0's enum cudaError_enum, so a result can be named
 * even when the library's own cuGetErrorName is missing or is the toolkit's
 * stub (which fails every call with CUDA_ERROR_STUB_LIBRARY). */
#define GPO_CUDA_RESULTS(X)                                                                        \
    X(CUDA_SUCCESS, 0)                                                                             \
    X(CUDA_ERROR_INVALID_VALUE, 1)                                                                 \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2)                                                                 \
    X(CUDA_ERROR_NOT_INITIALIZED, 3)                                                               \
    X(CUDA_ERROR_DEINITIALIZED, 4)                                                                 \
    X(CUDA_ERROR_PROFILER_DISABLED, 5)                                                             \
    X(CUDA_ERROR_PROFILER_NOT_INITIALIZED, 6)                                                      \
    X(CUDA_ERROR_PROFILER_ALREADY_STARTED, 7)                                                      \
    X(CUDA_ERROR_PROFILER_ALREADY_STOPPED, 8)                                                      \
    X(CUDA_ERROR_STUB_LIBRARY, 34)                                                                 \
    X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, 36)                                                   \
    X(CUDA_ERROR_DEVICE_UNAVAILABLE, 46)                                                           \
    X(CUDA_ERROR_NO_DEVICE, 100)                                                                   \
    X(CUDA_ERROR_INVALID_DEVICE, 101)                                                              \
    X(CUDA_ERROR_DEVICE_NOT_LICENSED, 102)                                                         \
    X(CUDA_ERROR_INVALID_IMAGE, 200)                                                               \
    X(CUDA_ERROR_INVALID_CONTEXT, 201)                                                             \
    X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, 202)                                                     \
    X(CUDA_ERROR_MAP_FAILED, 205)                                                                  \
    X(CUDA_ERROR_UNMAP_FAILED, 206)                                                                \
    X(CUDA_ERROR_ARRAY_IS_MAPPED, 207)                                                             \
    X(CUDA_ERROR_ALREADY_MAPPED, 208)                                                              \
    X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)                                                           \
    X(CUDA_ERROR_ALREADY_ACQUIRED, 210)                                                            \
    X(CUDA_ERROR_NOT_MAPPED, 211)                                                                  \
    X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, 212)                                                         \
    X(CUDA_ERROR_NOT_MAPPED_AS_POINTER, 213)                                                       \
    X(CUDA_ERROR_ECC_UNCORRECTABLE, 214)                                                           \
    X(CUDA_ERROR_UNSUPPORTED_LIMIT, 215)                                                           \
    X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, 216)                                                      \
    X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, 217)                                                     \
    X(CUDA_ERROR_INVALID_PTX, 218)                                                                 \
    X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, 219)                                                    \
    X(CUDA_ERROR_NVLINK_UNCORRECTABLE, 220)                                                        \
    X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221)                                                      \
    X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)                                                     \
    X(CUDA_ERROR_JIT_COMPILATION_DISABLED, 223)                                                    \
    X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, 224)                                                   \
    X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, 225)                                                    \
    X(CUDA_ERROR_CONTAINED, 226)                                                                   \
    X(CUDA_ERROR_INVALID_SOURCE, 300)                                                              \
    X(CUDA_ERROR_FILE_NOT_FOUND, 301)                                                              \
    X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, 302)                                              \
    X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, 303)                                                   \
    X(CUDA_ERROR_OPERATING_SYSTEM, 304)                                                            \
    X(CUDA_ERROR_INVALID_HANDLE, 400)                                                              \
    X(CUDA_ERROR_ILLEGAL_STATE, 401)                                                               \
    X(CUDA_ERROR_LOSSY_QUERY, 402)                                                                 \
    X(CUDA_ERROR_NOT_FOUND, 500)                                                                   \
    X(CUDA_ERROR_NOT_READY, 600)                                                                   \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, 700)                                                             \
    X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)                                                     \
    X(CUDA_ERROR_LAUNCH_TIMEOUT, 702)                                                              \
    X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, 703)                                               \
    X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704)                                                 \
    X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 705)                                                     \
    X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, 708)                                                      \
    X(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709)                                                        \
    X(CUDA_ERROR_ASSERT, 710)                                                                      \
    X(CUDA_ERROR_TOO_MANY_PEERS, 711)                                                              \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712)                                              \
    X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, 713)                                                  \
    X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)                                                        \
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)                                                         \
    X(CUDA_ERROR_MISALIGNED_ADDRESS, 716)                                                          \
    X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)                                                       \
    X(CUDA_ERROR_INVALID_PC, 718)                                                                  \
    X(CUDA_ERROR_LAUNCH_FAILED, 719)                                                               \
    X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, 720)                                                \
    X(CUDA_ERROR_TENSOR_MEMORY_LEAK, 721)                                                          \
    X(CUDA_ERROR_NOT_PERMITTED, 800)                                                               \
    X(CUDA_ERROR_NOT_SUPPORTED, 801)                                                               \
    X(CUDA_ERROR_SYSTEM_NOT_READY, 802)                                                            \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)                                                      \
    X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)                                              \
    X(CUDA_ERROR_MPS_CONNECTION_FAILED, 805)                                                       \
    X(CUDA_ERROR_MPS_RPC_FAILURE, 806)                                                             \
    X(CUDA_ERROR_MPS_SERVER_NOT_READY, 807)                                                        \
    X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, 808)                                                     \
    X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, 809)                                                 \
    X(CUDA_ERROR_MPS_CLIENT_TERMINATED, 810)                                                       \
    X(CUDA_ERROR_CDP_NOT_SUPPORTED, 811)                                                           \
    X(CUDA_ERROR_CDP_VERSION_MISMATCH, 812)                                                        \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900)                                                  \
    X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, 901)                                                  \
    X(CUDA_ERROR_STREAM_CAPTURE_MERGE, 902)                                                        \
    X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, 903)                                                    \
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, 904)                                                     \
    X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, 905)                                                    \
    X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, 906)                                                     \
    X(CUDA_ERROR_CAPTURED_EVENT, 907)                                                              \
    X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, 908)                                                 \
    X(CUDA_ERROR_TIMEOUT, 909)                                                                     \
    X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, 910)                                                   \
    X(CUDA_ERROR_EXTERNAL_DEVICE, 911)                                                             \
    X(CUDA_ERROR_INVALID_CLUSTER_SIZE, 912)                                                        \
    X(CUDA_ERROR_FUNCTION_NOT_LOADED, 913)                                                         \
    X(CUDA_ERROR_INVALID_RESOURCE_TYPE, 914)                                                       \
    X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, 915)                                              \
    X(CUDA_ERROR_KEY_ROTATION, 916)                                                                \
    X(CUDA_ERROR_UNKNOWN, 999)

#define GPO_CU_RESULT_ENUM_(name, value) GPO_##name = value,
enum { GPO_CUDA_RESULTS(GPO_CU_RESULT_ENUM_) };

/* The driver API has no "insufficient driver" result: 35 is the runtime API's
 * cudaErrorInsufficientDriver (driver_types.h), left unassigned in cuda.h.
 * Declared so a 35 from a shim or wrapper library is still told in words. */
#define GPO_CUDA_ERROR_INSUFFICIENT_DRIVER 35

/* ---- CUdevice_attribute ------------------------------------------------------
 * Only the attributes the backend reads (cuda.h 13.0, enum CUdevice_attribute_enum). */
#define GPO_CU_DEVICE_ATTRIBUTES(X)                                                                \
    X(MAX_THREADS_PER_BLOCK, 1)                                                                    \
    X(MAX_BLOCK_DIM_X, 2)                                                                          \
    X(MAX_BLOCK_DIM_Y, 3)                                                                          \
    X(MAX_BLOCK_DIM_Z, 4)                                                                          \
    X(MAX_GRID_DIM_X, 5)                                                                           \
    X(MAX_GRID_DIM_Y, 6)                                                                           \
    X(MAX_GRID_DIM_Z, 7)                                                                           \
    X(MAX_SHARED_MEMORY_PER_BLOCK, 8)                                                              \
    X(TOTAL_CONSTANT_MEMORY, 9)                                                                    \
    X(WARP_SIZE, 10)                                                                               \
    X(MAX_REGISTERS_PER_BLOCK, 12)                                                                 \
    X(CLOCK_RATE, 13)                                                                              \
    X(MULTIPROCESSOR_COUNT, 16)                                                                    \
    X(KERNEL_EXEC_TIMEOUT, 17)                                                                     \
    X(INTEGRATED, 18)                                                                              \
    X(CAN_MAP_HOST_MEMORY, 19)                                                                     \
    X(COMPUTE_MODE, 20)                                                                            \
    X(CONCURRENT_KERNELS, 31)                                                                      \
    X(ECC_ENABLED, 32)                                                                             \
    X(PCI_BUS_ID, 33)                                                                              \
    X(PCI_DEVICE_ID, 34)                                                                           \
    X(MEMORY_CLOCK_RATE, 36)                                                                       \
    X(GLOBAL_MEMORY_BUS_WIDTH, 37)                                                                 \
    X(L2_CACHE_SIZE, 38)                                                                           \
    X(MAX_THREADS_PER_MULTIPROCESSOR, 39)                                                          \
    X(ASYNC_ENGINE_COUNT, 40)                                                                      \
    X(UNIFIED_ADDRESSING, 41)                                                                      \
    X(PCI_DOMAIN_ID, 50)                                                                           \
    X(COMPUTE_CAPABILITY_MAJOR, 75)                                                                \
    X(COMPUTE_CAPABILITY_MINOR, 76)                                                                \
    X(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 81)                                                    \
    X(MAX_REGISTERS_PER_MULTIPROCESSOR, 82)                                                        \
    X(MANAGED_MEMORY, 83)                                                                          \
    X(MULTI_GPU_BOARD, 84)                                                                         \
    X(SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO, 87)                                                   \
    X(PAGEABLE_MEMORY_ACCESS, 88)                                                                  \
    X(CONCURRENT_MANAGED_ACCESS, 89)                                                               \
    X(COOPERATIVE_LAUNCH, 95)                                                                      \
    X(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97)                                                       \
    X(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 102)                                                    \
    X(MAX_BLOCKS_PER_MULTIPROCESSOR, 106)                                                          \
    X(MAX_PERSISTING_L2_CACHE_SIZE, 108)                                                           \
    X(CLUSTER_LAUNCH, 120)                                                                         \
    X(MPS_ENABLED, 133)

#define GPO_CU_ATTRIBUTE_ENUM_(name, value) GPO_CU_DEVICE_ATTRIBUTE_##name = value,
enum { GPO_CU_DEVICE_ATTRIBUTES(GPO_CU_ATTRIBUTE_ENUM_) };

/* CUcomputemode (cuda.h 13.0): the values CU_DEVICE_ATTRIBUTE_COMPUTE_MODE returns. */
#define GPO_CU_COMPUTEMODES(X)                                                                     \
    X(DEFAULT, 0)                                                                                  \
    X(PROHIBITED, 2)                                                                               \
    X(EXCLUSIVE_PROCESS, 3)

#define GPO_CU_COMPUTEMODE_ENUM_(name, value) GPO_CU_COMPUTEMODE_##name = value,
enum { GPO_CU_COMPUTEMODES(GPO_CU_COMPUTEMODE_ENUM_) };

/* CUfunction_attribute (cuda.h 13.0): what the runtime asks of a kernel,
 * and MAX_DYNAMIC_SHARED_SIZE_BYTES, which it raises (cuFuncSetAttribute)
 * for a launch that wants more dynamic shared memory than the default
 * (MAX_SHARED_MEMORY_PER_BLOCK - SHARED_SIZE_BYTES), up to
 * MAX_SHARED_MEMORY_PER_BLOCK_OPTIN - SHARED_SIZE_BYTES (cuda.h, the
 * attribute's comment: above it "the launch will fail"). */
#define GPO_CU_FUNC_ATTRIBUTES(X)                                                                  \
    X(MAX_THREADS_PER_BLOCK, 0)                                                                    \
    X(SHARED_SIZE_BYTES, 1)                                                                        \
    X(NUM_REGS, 4)                                                                                 \
    X(MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)

#define GPO_CU_FUNC_ATTRIBUTE_ENUM_(name, value) GPO_CU_FUNC_ATTRIBUTE_##name = value,
enum { GPO_CU_FUNC_ATTRIBUTES(GPO_CU_FUNC_ATTRIBUTE_ENUM_) };

/* CUevent_flags: CU_EVENT_DEFAULT records timing (CU_EVENT_DISABLE_TIMING,
 * 0x2, would not). */
#define GPO_CU_EVENT_DEFAULT 0x0

/* CUstream_flags: work on a CU_STREAM_NON_BLOCKING stream "does not
 * synchronize with stream 0 (the NULL stream)" (cuda.h), so the runtime's
 * work neither waits for nor delays what the host program queued on the
 * legacy default stream of the same context. */
#define GPO_CU_STREAM_NON_BLOCKING 0x1

/* CUlimit (cuda.h 13.0): the context limits gpuopt_plan_apply sets.
 * CU_LIMIT_PERSISTING_L2_CACHE_SIZE came with CUDA 11.0 and compute
 * capability 8.0 (CUDA C++ Programming Guide, "L2 Cache Set-Aside for
 * Persisting Accesses"); an older driver does not know it. CUlimit is an
 * enum in cuda.h, passed as int. */
typedef int gpo_cu_limit;
#define GPO_CU_LIMITS(X) X(PERSISTING_L2_CACHE_SIZE, 0x06)

#define GPO_CU_LIMIT_ENUM_(name, value) GPO_CU_LIMIT_##name = value,
enum { GPO_CU_LIMITS(GPO_CU_LIMIT_ENUM_) };

/* ---- Functions ---------------------------------------------------------------
 * X(field, symbol, required, checked, params)
 *   field     the API name a program writes (cuDeviceTotalMem); also the
 *             member of gpo_cuda_api
 *   symbol    the exported name to resolve: the versioned one cuda.h maps
 *             `field` to (cuDeviceTotalMem -> cuDeviceTotalMem_v2), because
 *             the unversioned symbols keep older ABIs (32-bit sizes, a UUID
 *             that ignores MIG, a release that resets flags)
 *   required  GPO_DL_REQUIRED: without it the backend cannot list devices;
 *             GPO_DL_OPTIONAL: a missing one only disables what needs it
 *   checked   1: cuda.h declares `field` and maps it to `symbol` (the header
 *             test checks both); 0: a legacy fallback cuda.h no longer declares
 *   params    the prototype's parameters
 *
 * Versions in which the versioned symbols appeared (CUDA driver API
 * reference, "Modules" and cuda.h history): cuDeviceTotalMem_v2 3.2,
 * cuCtxPushCurrent_v2/cuCtxPopCurrent_v2 4.0, cuGetErrorName/String 6.0,
 * cuDevicePrimaryCtx* 7.0 (cuDevicePrimaryCtxGetState among them),
 * cuDevicePrimaryCtxRelease_v2 11.0, cuDeviceGetUuid 9.2,
 * cuDeviceGetUuid_v2 11.4. Both UUID calls are resolved: a device whose
 * two answers differ is a MIG instance (cuda.h: _v2 "If the device is in
 * MIG mode, returns its MIG UUID"; the unversioned call keeps answering
 * the GPU's own). */
#define GPO_CUDA_API(X)                                                                            \
    X(cuInit, cuInit, GPO_DL_REQUIRED, 1, (unsigned int flags))                                    \
    X(cuDriverGetVersion, cuDriverGetVersion, GPO_DL_REQUIRED, 1, (int *version))                  \
    X(cuDeviceGetCount, cuDeviceGetCount, GPO_DL_REQUIRED, 1, (int *count))                        \
    X(cuDeviceGet, cuDeviceGet, GPO_DL_REQUIRED, 1, (gpo_cu_device * device, int ordinal))         \
    X(cuDeviceGetName, cuDeviceGetName, GPO_DL_REQUIRED, 1,                                        \
      (char *name, int len, gpo_cu_device dev))                                                    \
    X(cuDeviceGetAttribute, cuDeviceGetAttribute, GPO_DL_REQUIRED, 1,                              \
      (int *value, gpo_cu_device_attribute attrib, gpo_cu_device dev))                             \
    X(cuDeviceTotalMem, cuDeviceTotalMem_v2, GPO_DL_REQUIRED, 1,                                   \
      (size_t * bytes, gpo_cu_device dev))                                                         \
    X(cuDeviceGetUuid, cuDeviceGetUuid_v2, GPO_DL_OPTIONAL, 1,                                     \
      (gpo_cu_uuid * uuid, gpo_cu_device dev))                                                     \
    X(cuDeviceGetUuid_v1, cuDeviceGetUuid, GPO_DL_OPTIONAL, 0,                                     \
      (gpo_cu_uuid * uuid, gpo_cu_device dev))                                                     \
    X(cuGetErrorName, cuGetErrorName, GPO_DL_OPTIONAL, 1,                                          \
      (gpo_cu_result error, const char **text))                                                    \
    X(cuGetErrorString, cuGetErrorString, GPO_DL_OPTIONAL, 1,                                      \
      (gpo_cu_result error, const char **text))                                                    \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, GPO_DL_OPTIONAL, 1,                      \
      (gpo_cu_context * ctx, gpo_cu_device dev))                                                   \
    X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, GPO_DL_OPTIONAL, 1,                 \
      (gpo_cu_device dev))                                                                         \
    X(cuDevicePrimaryCtxGetState, cuDevicePrimaryCtxGetState, GPO_DL_OPTIONAL, 1,                  \
      (gpo_cu_device dev, unsigned int *flags, int *active))                                       \
    X(cuCtxPushCurrent, cuCtxPushCurrent_v2, GPO_DL_OPTIONAL, 1, (gpo_cu_context ctx))             \
    X(cuCtxPopCurrent, cuCtxPopCurrent_v2, GPO_DL_OPTIONAL, 1, (gpo_cu_context * ctx))             \
    X(cuMemGetInfo, cuMemGetInfo_v2, GPO_DL_OPTIONAL, 1,                                           \
      (size_t * free_bytes, size_t * total_bytes))                                                 \
    GPO_CUDA_APPLY_API(X)                                                                          \
    GPO_CUDA_RUNTIME_API(X)

/* The calls of gpuopt_plan_apply(GPUOPT_APPLY_DEVICE) (cuda_apply.c):
 * optional; without one, applying says which is missing and sets nothing.
 * They act on the calling thread's current context, which the host
 * program's framework made. All four exist since CUDA 4.0 (cuCtxGetCurrent
 * is the newest; CUDA driver API reference, "Context Management");
 * cuCtxGetDevice_v2 (13.0, with a context argument) is another call, not a
 * new ABI of this one, so cuda.h maps nothing here. */
#define GPO_CUDA_APPLY_API(X)                                                                      \
    X(cuCtxGetCurrent, cuCtxGetCurrent, GPO_DL_OPTIONAL, 1, (gpo_cu_context * ctx))                \
    X(cuCtxGetDevice, cuCtxGetDevice, GPO_DL_OPTIONAL, 1, (gpo_cu_device * device))                \
    X(cuCtxSetLimit, cuCtxSetLimit, GPO_DL_OPTIONAL, 1, (gpo_cu_limit limit, size_t value))        \
    X(cuCtxGetLimit, cuCtxGetLimit, GPO_DL_OPTIONAL, 1, (size_t * value, gpo_cu_limit limit))

/* The calls of the tier-2 runtime (cuda_runtime.c): optional for the
 * backend, required by a runtime session, which names the first one
 * missing. All exist since CUDA 4.0 except cuFuncSetAttribute (9.0),
 * cuFuncGetParamInfo (12.4, used to check argument indices and sizes when
 * present) and cuEventElapsedTime_v2 (12.8, the unversioned symbol
 * before). A session's copies, launches and events go to its own
 * CU_STREAM_NON_BLOCKING stream, through the async copies (the _v2 ABI,
 * not the per-thread-default-stream _ptsz variants: the stream is always
 * named), and a copy the ops promise to be blocking waits for that
 * stream (cuStreamSynchronize) before it returns. */
#define GPO_CUDA_RUNTIME_API(X)                                                                    \
    X(cuStreamCreate, cuStreamCreate, GPO_DL_OPTIONAL, 1,                                          \
      (gpo_cu_stream * stream, unsigned int flags))                                                \
    X(cuStreamDestroy, cuStreamDestroy_v2, GPO_DL_OPTIONAL, 1, (gpo_cu_stream stream))             \
    X(cuStreamSynchronize, cuStreamSynchronize, GPO_DL_OPTIONAL, 1, (gpo_cu_stream stream))        \
    X(cuMemAlloc, cuMemAlloc_v2, GPO_DL_OPTIONAL, 1, (gpo_cu_deviceptr * dptr, size_t bytes))      \
    X(cuMemFree, cuMemFree_v2, GPO_DL_OPTIONAL, 1, (gpo_cu_deviceptr dptr))                        \
    X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, GPO_DL_OPTIONAL, 1,                                 \
      (gpo_cu_deviceptr dst, const void *src, size_t bytes, gpo_cu_stream stream))                 \
    X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, GPO_DL_OPTIONAL, 1,                                 \
      (void *dst, gpo_cu_deviceptr src, size_t bytes, gpo_cu_stream stream))                       \
    X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, GPO_DL_OPTIONAL, 1,                                 \
      (gpo_cu_deviceptr dst, gpo_cu_deviceptr src, size_t bytes, gpo_cu_stream stream))            \
    X(cuMemAllocHost, cuMemAllocHost_v2, GPO_DL_OPTIONAL, 1, (void **ptr, size_t bytes))           \
    X(cuMemFreeHost, cuMemFreeHost, GPO_DL_OPTIONAL, 1, (void *ptr))                               \
    X(cuModuleLoadData, cuModuleLoadData, GPO_DL_OPTIONAL, 1,                                      \
      (gpo_cu_module * module, const void *image))                                                 \
    X(cuModuleUnload, cuModuleUnload, GPO_DL_OPTIONAL, 1, (gpo_cu_module module))                  \
    X(cuModuleGetFunction, cuModuleGetFunction, GPO_DL_OPTIONAL, 1,                                \
      (gpo_cu_function * func, gpo_cu_module module, const char *name))                            \
    X(cuFuncGetAttribute, cuFuncGetAttribute, GPO_DL_OPTIONAL, 1,                                  \
      (int *value, gpo_cu_function_attribute attrib, gpo_cu_function func))                        \
    X(cuFuncSetAttribute, cuFuncSetAttribute, GPO_DL_OPTIONAL, 1,                                  \
      (gpo_cu_function func, gpo_cu_function_attribute attrib, int value))                         \
    X(cuFuncGetParamInfo, cuFuncGetParamInfo, GPO_DL_OPTIONAL, 1,                                  \
      (gpo_cu_function func, size_t index, size_t * offset, size_t * size))                        \
    X(cuLaunchKernel, cuLaunchKernel, GPO_DL_OPTIONAL, 1,                                          \
      (gpo_cu_function func, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,        \
       unsigned int block_x, unsigned int block_y, unsigned int block_z,                           \
       unsigned int shared_bytes, gpo_cu_stream stream, void **params, void **extra))              \
    X(cuEventCreate, cuEventCreate, GPO_DL_OPTIONAL, 1,                                            \
      (gpo_cu_event * event, unsigned int flags))                                                  \
    X(cuEventDestroy, cuEventDestroy_v2, GPO_DL_OPTIONAL, 1, (gpo_cu_event event))                 \
    X(cuEventRecord, cuEventRecord, GPO_DL_OPTIONAL, 1,                                            \
      (gpo_cu_event event, gpo_cu_stream stream))                                                  \
    X(cuEventSynchronize, cuEventSynchronize, GPO_DL_OPTIONAL, 1, (gpo_cu_event event))            \
    X(cuEventElapsedTime, cuEventElapsedTime_v2, GPO_DL_OPTIONAL, 1,                               \
      (float *ms, gpo_cu_event start, gpo_cu_event end))                                           \
    X(cuEventElapsedTime_v1, cuEventElapsedTime, GPO_DL_OPTIONAL, 0,                               \
      (float *ms, gpo_cu_event start, gpo_cu_event end))

/* One function-pointer type per entry: gpo_pfn_cuInit, ... */
#define GPO_CUDA_PFN_(field, symbol, required, checked, params)                                    \
    typedef gpo_cu_result(*gpo_pfn_##field) params;
GPO_CUDA_API(GPO_CUDA_PFN_)

/* The resolved entry points; NULL where an optional symbol is missing. */
typedef struct gpo_cuda_api {
#define GPO_CUDA_FIELD_(field, symbol, required, checked, params) gpo_pfn_##field field;
    GPO_CUDA_API(GPO_CUDA_FIELD_)
} gpo_cuda_api;

/* The gpo_dl_sym table generated from GPO_CUDA_API (cuda_api.c). */
extern const gpo_dl_sym gpo_cuda_syms[];
extern const size_t gpo_cuda_n_syms;

/* "CUDA_ERROR_NO_DEVICE" for a known result, else NULL. */
const char *gpo_cuda_result_name(gpo_cu_result r);

/* 1 for a sticky result: one after which, in cuda.h's words, "the process
 * [is] in an inconsistent state and any further CUDA work will return the
 * same error. To continue using CUDA, the process must be terminated and
 * relaunched." */
int gpo_cuda_result_sticky(gpo_cu_result r);

/* A result in words for reasons: "CUDA_ERROR_NO_DEVICE (no CUDA-capable
 * device is detected)". Asks the library (cuGetErrorName/String) when `api`
 * has them and they answer, else uses the built-in name table; an unknown
 * value reads "CUresult 12345". `api` may be NULL. Always terminates out. */
void gpo_cuda_result_words(const gpo_cuda_api *api, gpo_cu_result r, char *out, size_t cap);

#endif
