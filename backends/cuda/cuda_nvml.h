/* NVML for the CUDA backend (cuda_nvml.c): opened on first need, once per
 * context, and asked for one GPU's memory by UUID or PCI bus id, with no
 * CUDA context. Every function sets the detail and returns a status. */
#ifndef GPO_CUDA_NVML_H
#define GPO_CUDA_NVML_H

#include <stdint.h>

#include "backend.h"
#include "nvml_api.h"

#define GPO_NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"

typedef struct gpo_nvml {
    void *handle;
    gpo_nvml_api api;
    char library[512]; /* the path loaded */
} gpo_nvml;

/* Opens `user_path` (GPUOPT_NVML_LIBRARY; NULL or "": libnvidia-ml.so.1)
 * and initialises NVML. GPUOPT_ERR_UNAVAILABLE when it is missing or lacks
 * the slice, GPUOPT_ERR_DRIVER when nvmlInit fails, each in words. */
gpuopt_status gpo_nvml_open(const char *user_path, gpo_nvml **out);
/* nvmlShutdown balances the init; the library stays loaded. NULL is fine. */
void gpo_nvml_close(gpo_nvml *nv);

/* The memory of the GPU with `uuid` ("GPU-..." or a MIG instance's
 * "MIG-...") or, without one, at `pci_bus_id`: source
 * GPUOPT_MEMORY_SOURCE_MANAGEMENT. A MIG instance is never looked up by
 * its PCI location, which names the whole GPU. */
gpuopt_status gpo_nvml_read_memory(const gpo_nvml *nv, const char *uuid, const char *pci_bus_id,
                                   gpo_memory_reading *out);

#endif
