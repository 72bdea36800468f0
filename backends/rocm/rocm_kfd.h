/* The kernel's own description of AMD GPUs: the KFD topology under
 * /sys/class/kfd/kfd/topology (rocm_kfd.c). Read by the backend's load
 * (devices without a runtime, enrichment with one) and by its doctor block
 * (the same GPUs, in the same order, for the visibility variables). */
#ifndef GPO_ROCM_KFD_H
#define GPO_ROCM_KFD_H

#include <stddef.h>
#include <stdint.h>

#include "gpuopt/gpuopt.h"
#include "util/fs.h"

/* One GPU node. Numbers the kernel did not publish are 0 (counts) or -1. */
typedef struct gpo_kfd_gpu {
    uint32_t node;               /* topology node number */
    uint32_t gpu_id;             /* nodes/N/gpu_id */
    uint32_t gfx_target_version; /* 90402 */
    char gfx[16];                /* "gfx942", "" when the version is not a target */
    int32_t simd_count;          /* every SIMD of the node (all XCCs on newer kernels) */
    int32_t simd_per_cu;
    int32_t cu_count; /* simd_count / simd_per_cu */
    int32_t wave_front_size;
    int32_t lds_size_kb;
    int32_t max_engine_clk_mhz; /* max_engine_clk_fcompute */
    int32_t num_xcc;            /* 1 when the kernel predates the property */
    int32_t array_count;
    int32_t max_waves_per_simd;
    int32_t cpu_cores_count; /* > 0 on old combined APU nodes */
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t location_id; /* (bus << 8) | (device << 3) | function */
    uint32_t domain;
    int32_t drm_render_minor;
    int32_t num_sdma_engines; /* host-device copy engines (SDMA), -1 unknown */
    uint64_t unique_id;       /* 0 when the part has none (gfx8) */
    uint64_t hive_id;         /* XGMI hive, 0 when none */
    uint64_t vram_bytes;      /* sum of frame-buffer mem_banks */
    int32_t revision;         /* PCI revision (sysfs), -1 unknown */
    char pci[32];             /* "0000:c1:00.0" */
    char uuid[32];            /* "GPU-1a2b3c4d5e6f7081", "" when unique_id is 0 */
    char name[128];           /* amdgpu.ids marketing name, "" unknown */
} gpo_kfd_gpu;

typedef struct gpo_kfd {
    gpo_kfd_gpu *gpus; /* GPU nodes in node order (what ROCr enumerates) */
    size_t n;
    int present;    /* 1: the topology directory exists */
    char note[256]; /* why a node was skipped or the topology unreadable */
} gpo_kfd;

/* Reads the topology under fs's root. A missing topology is not an error
 * (present = 0, n = 0). GPUOPT_ERR_NO_MEMORY is the only failure. */
gpuopt_status gpo_kfd_scan(const gpo_fs *fs, gpo_kfd *out);
void gpo_kfd_free(gpo_kfd *kfd);

/* Parses one "key value" properties text into *gpu (the KFD field names).
 * Returns 0, or -1 when it is not a GPU node (simd_count 0 or absent). */
int gpo_kfd_parse_properties(const char *text, gpo_kfd_gpu *gpu);

/* "0000:c1:00.0" from KFD's domain and location_id. */
void gpo_kfd_pci_text(uint32_t domain, uint32_t location_id, char *out, size_t cap);

#endif
