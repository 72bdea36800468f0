/* The slice of NVML (the NVIDIA Management Library, libnvidia-ml.so.1, part
 * of every NVIDIA driver install) that the CUDA backend calls to read a
 * GPU's memory without a CUDA context, declared here so the library builds
 * without the CUDA toolkit or the GPU Deployment Kit, as cuda_api.h does
 * for the driver. Values and prototypes follow nvml.h (NVML API Reference,
 * "Device Queries", "Initialization and Cleanup", "Error reporting").
 *
 * nvml.h maps some names to versioned symbols (#define nvmlInit nvmlInit_v2,
 * #define nvmlDeviceGetHandleByPciBusId nvmlDeviceGetHandleByPciBusId_v2):
 * the unversioned symbols keep older ABIs (nvmlInit without _v2 attaches
 * to every GPU, even ones this user cannot use), so the versioned ones are
 * resolved. nvmlDeviceGetMemoryInfo keeps its first ABI (nvmlMemory_t of
 * three unsigned long long); its _v2 adds reserved memory through a
 * versioned struct and is not needed here. */
#ifndef GPO_NVML_API_H
#define GPO_NVML_API_H

#include <stddef.h>

#include "util/dl.h"

typedef int gpo_nvml_return;
typedef struct gpo_nvml_device_st *gpo_nvml_device;

/* nvmlMemory_t: bytes. "used" counts what is allocated, reserved memory
 * included (nvml.h: "Sum of Reserved and Allocated device memory"). */
typedef struct gpo_nvml_memory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} gpo_nvml_memory;

/* nvmlReturn_t (nvml.h), every value up to NVML_ERROR_INVALID_STATE, so a
 * result is named even when nvmlErrorString is missing. */
#define GPO_NVML_RETURNS(X)                                                                        \
    X(NVML_SUCCESS, 0)                                                                             \
    X(NVML_ERROR_UNINITIALIZED, 1)                                                                 \
    X(NVML_ERROR_INVALID_ARGUMENT, 2)                                                              \
    X(NVML_ERROR_NOT_SUPPORTED, 3)                                                                 \
    X(NVML_ERROR_NO_PERMISSION, 4)                                                                 \
    X(NVML_ERROR_ALREADY_INITIALIZED, 5)                                                           \
    X(NVML_ERROR_NOT_FOUND, 6)                                                                     \
    X(NVML_ERROR_INSUFFICIENT_SIZE, 7)                                                             \
    X(NVML_ERROR_INSUFFICIENT_POWER, 8)                                                            \
    X(NVML_ERROR_DRIVER_NOT_LOADED, 9)                                                             \
    X(NVML_ERROR_TIMEOUT, 10)                                                                      \
    X(NVML_ERROR_IRQ_ISSUE, 11)                                                                    \
    X(NVML_ERROR_LIBRARY_NOT_FOUND, 12)                                                            \
    X(NVML_ERROR_FUNCTION_NOT_FOUND, 13)                                                           \
    X(NVML_ERROR_CORRUPTED_INFOROM, 14)                                                            \
    X(NVML_ERROR_GPU_IS_LOST, 15)                                                                  \
    X(NVML_ERROR_RESET_REQUIRED, 16)                                                               \
    X(NVML_ERROR_OPERATING_SYSTEM, 17)                                                             \
    X(NVML_ERROR_LIB_RM_VERSION_MISMATCH, 18)                                                      \
    X(NVML_ERROR_IN_USE, 19)                                                                       \
    X(NVML_ERROR_MEMORY, 20)                                                                       \
    X(NVML_ERROR_NO_DATA, 21)                                                                      \
    X(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, 22)                                                       \
    X(NVML_ERROR_INSUFFICIENT_RESOURCES, 23)                                                       \
    X(NVML_ERROR_FREQ_NOT_SUPPORTED, 24)                                                           \
    X(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, 25)                                                    \
    X(NVML_ERROR_DEPRECATED, 26)                                                                   \
    X(NVML_ERROR_NOT_READY, 27)                                                                    \
    X(NVML_ERROR_GPU_NOT_FOUND, 28)                                                                \
    X(NVML_ERROR_INVALID_STATE, 29)                                                                \
    X(NVML_ERROR_UNKNOWN, 999)

#define GPO_NVML_RETURN_ENUM_(name, value) GPO_##name = value,
enum { GPO_NVML_RETURNS(GPO_NVML_RETURN_ENUM_) };

/* X(field, symbol, required, return type, params). nvmlInit_v2 and
 * nvmlDeviceGetHandleByUUID since NVML 4.304 (R304), the _v2 PCI lookup
 * since R319 (nvml.h history); a MIG instance's "MIG-..." UUID is accepted
 * by nvmlDeviceGetHandleByUUID since R470. */
#define GPO_NVML_API(X)                                                                            \
    X(nvmlInit, nvmlInit_v2, GPO_DL_REQUIRED, gpo_nvml_return, (void))                             \
    X(nvmlShutdown, nvmlShutdown, GPO_DL_OPTIONAL, gpo_nvml_return, (void))                        \
    X(nvmlErrorString, nvmlErrorString, GPO_DL_OPTIONAL, const char *, (gpo_nvml_return result))   \
    X(nvmlDeviceGetHandleByUUID, nvmlDeviceGetHandleByUUID, GPO_DL_REQUIRED, gpo_nvml_return,      \
      (const char *uuid, gpo_nvml_device *device))                                                 \
    X(nvmlDeviceGetHandleByPciBusId, nvmlDeviceGetHandleByPciBusId_v2, GPO_DL_OPTIONAL,            \
      gpo_nvml_return, (const char *pci_bus_id, gpo_nvml_device *device))                          \
    X(nvmlDeviceGetMemoryInfo, nvmlDeviceGetMemoryInfo, GPO_DL_REQUIRED, gpo_nvml_return,          \
      (gpo_nvml_device device, gpo_nvml_memory * memory))

#define GPO_NVML_PFN_(field, symbol, required, ret, params) typedef ret(*gpo_pfn_##field) params;
GPO_NVML_API(GPO_NVML_PFN_)

typedef struct gpo_nvml_api {
#define GPO_NVML_FIELD_(field, symbol, required, ret, params) gpo_pfn_##field field;
    GPO_NVML_API(GPO_NVML_FIELD_)
} gpo_nvml_api;

#endif
