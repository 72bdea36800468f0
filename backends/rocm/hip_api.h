/* The slice of the HIP runtime API (libamdhip64) that the ROCm backend calls,
 * declared here so that the library builds without any ROCm SDK (the idea of
 * FFmpeg's nv-codec-headers). Values are pinned per HIP major version and
 * checked against the real header where one is installed
 * (tests/backends/rocm/test_hip_api_header.c, /usr/include/hip).
 *
 * What differs between HIP majors, read from the headers:
 *   - hipDeviceAttribute_t: ROCm 5.0 reordered the enum into a
 *     CUDA-compatible block (0..9999) and an AMD block (10000..19999)
 *     (ROCm 5.0 release notes). The attributes this backend asks for kept
 *     their values through 5.0..5.7, 6.0..6.2 and 7.x; ROCm 6.0 retired five
 *     ids into "Unused" slots (Name 64, Uuid 86, Arch 10001, GcnArch 10003,
 *     GcnArchName 10004) and ROCm 7 appended NumberOfXccs (10018). ROCm 4.x
 *     and older used the pre-reorder numbering: those runtimes are refused.
 *     The tables are nevertheless kept per major: a future renumbering is a
 *     new column, never an edit of an old one.
 *   - hipDeviceProp_t: 792 bytes in ROCm 5 (gcnArchName at 396) and 1472
 *     bytes in ROCm 6 (gcnArchName at 1160). ROCm 6 headers map
 *     hipGetDeviceProperties to hipGetDevicePropertiesR0600 with a macro, but
 *     the exported unversioned symbol still fills the ROCm 5 layout
 *     (ROCm/clr#151, ROCm/ROCm#2728). The backend reads nothing from the
 *     struct but gcnArchName (no attribute returns it: the runtime's
 *     hipDeviceGetAttribute has no case for GcnArchName in 5.x and the id is
 *     gone in 6.x), resolves the symbol whose layout it knows explicitly
 *     (hipGetDevicePropertiesR0600 from a ROCm 6 or 7 runtime, the
 *     unversioned one only from a ROCm 5 runtime), and passes a zeroed
 *     buffer larger than either layout.
 *
 * Sources of the values:
 *   ROCm 5: /usr/include/hip/hip_runtime_api.h of Debian's libamdhip64-dev
 *           5.2.3 (checked by the test), same values in ROCm/HIP tags
 *           rocm-5.0.0 and rocm-5.7.1 include/hip/hip_runtime_api.h.
 *   ROCm 6: ROCm/HIP tags rocm-6.0.0 and rocm-6.2.0
 *           include/hip/hip_runtime_api.h (enum hipDeviceAttribute_t, struct
 *           hipDeviceProp_tR0600) and include/hip/hip_deprecated.h
 *           (hipDeviceProp_tR0000, 792 bytes).
 *   ROCm 7: ROCm/rocm-systems projects/hip/include/hip/hip_runtime_api.h
 *           (develop, 2025): same enum values plus NumberOfXccs = 10018, same
 *           hipDeviceProp_t layout (hipDeviceProp_tR0600 is still "latest").
 */
#ifndef GPO_HIP_API_H
#define GPO_HIP_API_H

#include <stddef.h>
#include <stdint.h>

#include "util/dl.h"

/* ---- hipError_t (values identical in ROCm 5, 6 and 7) -------------------- */

#define GPO_HIP_SUCCESS 0
/* Names for the codes a backend is likely to meet, for runtimes whose
 * hipGetErrorName is missing or says nothing. Value, name. */
#define GPO_HIP_ERRORS(X)                                                                          \
    X(0, hipSuccess)                                                                               \
    X(1, hipErrorInvalidValue)                                                                     \
    X(2, hipErrorOutOfMemory)                                                                      \
    X(3, hipErrorNotInitialized)                                                                   \
    X(4, hipErrorDeinitialized)                                                                    \
    X(9, hipErrorInvalidConfiguration)                                                             \
    X(35, hipErrorInsufficientDriver)                                                              \
    X(98, hipErrorInvalidDeviceFunction)                                                           \
    X(100, hipErrorNoDevice)                                                                       \
    X(101, hipErrorInvalidDevice)                                                                  \
    X(200, hipErrorInvalidImage)                                                                   \
    X(201, hipErrorInvalidContext)                                                                 \
    X(209, hipErrorNoBinaryForGpu)                                                                 \
    X(218, hipErrorInvalidKernelFile)                                                              \
    X(303, hipErrorSharedObjectInitFailed)                                                         \
    X(304, hipErrorOperatingSystem)                                                                \
    X(400, hipErrorInvalidHandle)                                                                  \
    X(500, hipErrorNotFound)                                                                       \
    X(700, hipErrorIllegalAddress)                                                                 \
    X(701, hipErrorLaunchOutOfResources)                                                           \
    X(702, hipErrorLaunchTimeOut)                                                                  \
    X(710, hipErrorAssert)                                                                         \
    X(719, hipErrorLaunchFailure)                                                                  \
    X(801, hipErrorNotSupported)                                                                   \
    X(999, hipErrorUnknown)                                                                        \
    X(1052, hipErrorRuntimeMemory)                                                                 \
    X(1053, hipErrorRuntimeOther)

enum {
#define GPO_HIP_ERR_ENUM(v, n) GPO_##n = v,
    GPO_HIP_ERRORS(GPO_HIP_ERR_ENUM)
#undef GPO_HIP_ERR_ENUM
};

/* ---- Types ---------------------------------------------------------------- */

typedef int gpo_hip_error; /* hipError_t: an int-sized enum */

/* hipUUID: 16 bytes. AMD's runtime fills them with the 16 ASCII hex digits of
 * the KFD unique_id (rocclr/device/rocm/rocdevice.cpp strips "GPU-" from
 * HSA_AMD_AGENT_INFO_UUID), or "XX" for parts without one (gfx8). */
typedef struct gpo_hip_uuid {
    char bytes[16];
} gpo_hip_uuid;

typedef gpo_hip_error (*gpo_hip_int_out_fn)(int *);
typedef gpo_hip_error (*gpo_hip_init_fn)(unsigned int flags);
typedef gpo_hip_error (*gpo_hip_attr_fn)(int *value, int attr, int device);
typedef gpo_hip_error (*gpo_hip_name_fn)(char *name, int len, int device);
typedef gpo_hip_error (*gpo_hip_uuid_fn)(gpo_hip_uuid *uuid, int device);
typedef gpo_hip_error (*gpo_hip_total_mem_fn)(size_t *bytes, int device);
typedef gpo_hip_error (*gpo_hip_props_fn)(void *props, int device);
typedef gpo_hip_error (*gpo_hip_set_device_fn)(int device);
typedef gpo_hip_error (*gpo_hip_mem_info_fn)(size_t *free_bytes, size_t *total_bytes);
typedef const char *(*gpo_hip_error_text_fn)(gpo_hip_error error);

/* ---- Symbols: one list generates the table and the dlsym list ------------
 * (field, exported symbol, required?, type). Optional symbols may be
 * missing (older runtimes, or present only in one major); the code checks
 * for NULL before each use. */
#define GPO_HIP_SYMBOLS(X)                                                                         \
    X(runtime_get_version, "hipRuntimeGetVersion", GPO_DL_REQUIRED, gpo_hip_int_out_fn)            \
    X(driver_get_version, "hipDriverGetVersion", GPO_DL_OPTIONAL, gpo_hip_int_out_fn)              \
    X(init, "hipInit", GPO_DL_OPTIONAL, gpo_hip_init_fn)                                           \
    X(get_device_count, "hipGetDeviceCount", GPO_DL_REQUIRED, gpo_hip_int_out_fn)                  \
    X(device_get_attribute, "hipDeviceGetAttribute", GPO_DL_REQUIRED, gpo_hip_attr_fn)             \
    X(device_get_name, "hipDeviceGetName", GPO_DL_REQUIRED, gpo_hip_name_fn)                       \
    X(device_get_uuid, "hipDeviceGetUuid", GPO_DL_OPTIONAL, gpo_hip_uuid_fn)                       \
    X(device_total_mem, "hipDeviceTotalMem", GPO_DL_REQUIRED, gpo_hip_total_mem_fn)                \
    X(get_device_properties_r0600, "hipGetDevicePropertiesR0600", GPO_DL_OPTIONAL,                 \
      gpo_hip_props_fn)                                                                            \
    X(get_device_properties, "hipGetDeviceProperties", GPO_DL_OPTIONAL, gpo_hip_props_fn)          \
    X(get_device, "hipGetDevice", GPO_DL_OPTIONAL, gpo_hip_int_out_fn)                             \
    X(set_device, "hipSetDevice", GPO_DL_OPTIONAL, gpo_hip_set_device_fn)                          \
    X(mem_get_info, "hipMemGetInfo", GPO_DL_OPTIONAL, gpo_hip_mem_info_fn)                         \
    X(get_error_name, "hipGetErrorName", GPO_DL_OPTIONAL, gpo_hip_error_text_fn)                   \
    X(get_error_string, "hipGetErrorString", GPO_DL_OPTIONAL, gpo_hip_error_text_fn)

/* A row's member in a function table (this slice's and hip_rt_api.h's). */
#define GPO_HIP_FIELD(field, sym, req, type) type field;

typedef struct gpo_hip_fns {
    GPO_HIP_SYMBOLS(GPO_HIP_FIELD)
} gpo_hip_fns;

extern const gpo_dl_sym gpo_hip_syms[];
extern const size_t gpo_hip_n_syms;

/* ---- hipDeviceAttribute_t, per HIP major ----------------------------------
 * (our id, header name, ROCm 5 value, ROCm 6 value, ROCm 7 value); -1: the
 * attribute does not exist in that major. */
#define GPO_HIP_ATTRS(X)                                                                           \
    X(ECC_ENABLED, hipDeviceAttributeEccEnabled, 0, 0, 0)                                          \
    X(CLOCK_RATE, hipDeviceAttributeClockRate, 5, 5, 5)                                            \
    X(INTEGRATED, hipDeviceAttributeIntegrated, 16, 16, 16)                                        \
    X(L2_CACHE_SIZE, hipDeviceAttributeL2CacheSize, 19, 19, 19)                                    \
    X(CC_MAJOR, hipDeviceAttributeComputeCapabilityMajor, 23, 23, 23)                              \
    X(MANAGED_MEMORY, hipDeviceAttributeManagedMemory, 24, 24, 24)                                 \
    X(MAX_THREADS_PER_BLOCK, hipDeviceAttributeMaxThreadsPerBlock, 56, 56, 56)                     \
    X(MEMORY_BUS_WIDTH, hipDeviceAttributeMemoryBusWidth, 59, 59, 59)                              \
    X(MEMORY_CLOCK_RATE, hipDeviceAttributeMemoryClockRate, 60, 60, 60)                            \
    X(CC_MINOR, hipDeviceAttributeComputeCapabilityMinor, 61, 61, 61)                              \
    X(MULTIPROCESSOR_COUNT, hipDeviceAttributeMultiprocessorCount, 63, 63, 63)                     \
    X(PCI_BUS_ID, hipDeviceAttributePciBusId, 67, 67, 67)                                          \
    X(PCI_DEVICE_ID, hipDeviceAttributePciDeviceId, 68, 68, 68)                                    \
    X(PCI_DOMAIN_ID, hipDeviceAttributePciDomainID, 69, 69, 69)                                    \
    X(MAX_SHARED_MEMORY_PER_BLOCK, hipDeviceAttributeMaxSharedMemoryPerBlock, 74, 74, 74)          \
    X(UNIFIED_ADDRESSING, hipDeviceAttributeUnifiedAddressing, 85, 85, 85)                         \
    X(WARP_SIZE, hipDeviceAttributeWarpSize, 87, 87, 87)                                           \
    X(MAX_SHARED_MEMORY_PER_MP, hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, 10002, 10002,  \
      10002)                                                                                       \
    X(IS_LARGE_BAR, hipDeviceAttributeIsLargeBar, 10011, 10011, 10011)                             \
    X(ASIC_REVISION, hipDeviceAttributeAsicRevision, 10012, 10012, 10012)                          \
    X(PHYSICAL_MP_COUNT, hipDeviceAttributePhysicalMultiProcessorCount, 10015, 10015, 10015)       \
    X(NUMBER_OF_XCCS, hipDeviceAttributeNumberOfXccs, -1, -1, 10018)

typedef enum gpo_hip_attr {
#define GPO_HIP_ATTR_ENUM(id, name, v5, v6, v7) GPO_HIP_ATTR_##id,
    GPO_HIP_ATTRS(GPO_HIP_ATTR_ENUM)
#undef GPO_HIP_ATTR_ENUM
        GPO_HIP_ATTR_COUNT
} gpo_hip_attr;

/* The per-major facts the backend relies on. */
typedef struct gpo_hip_abi {
    int major;                    /* 5, 6, 7 */
    const char *source;           /* the header the numbers were read from */
    int attr[GPO_HIP_ATTR_COUNT]; /* hipDeviceAttribute_t values, -1 absent */
    const char *const *attr_name; /* header names, GPO_HIP_ATTR_COUNT of them */
    const char *props_symbol;     /* the versioned hipGetDeviceProperties */
    size_t props_size;            /* sizeof that major's hipDeviceProp_t */
    size_t props_gcn_arch_name;   /* offsetof gcnArchName (char[256]) */
} gpo_hip_abi;

/* Over-allocation for the props struct: at least 2 KiB and larger than any
 * layout known (so a newer runtime writing a larger struct stays in bounds
 * for a while). */
#define GPO_HIP_PROPS_BUFFER 4096

/* The table for a HIP major; NULL below 5 (pre-reorder numbering). A major
 * above the newest known gets the newest table and *extrapolated = 1. */
const gpo_hip_abi *gpo_hip_abi_for(int major, int *extrapolated);

/* HIP_VERSION encoding: major * 10000000 + minor * 100000 + patch
 * (hip_version.h). "6.2.41133". Returns -1 for a negative value. */
int gpo_hip_version_text(int version, char *out, size_t cap);

/* "hipErrorNoDevice" for known codes, else NULL. */
const char *gpo_hip_error_name(gpo_hip_error code);

/* 1 for a sticky error: code on the GPU faulted and the process cannot use
 * the device again (gpo_hip_sticky in hip_api.c says why these). */
int gpo_hip_error_sticky(gpo_hip_error code);

#endif
