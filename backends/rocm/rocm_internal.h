/* Internals shared by the ROCm backend's files: the HIP runtime (rocm_hip.c),
 * the kernel's KFD topology (rocm_kfd.c), libdrm's marketing names
 * (rocm_ids.c), device visibility (rocm_visible.c) and the device records
 * built from them (rocm_device.c). Nothing here leaves the backend. */
#ifndef GPO_ROCM_INTERNAL_H
#define GPO_ROCM_INTERNAL_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "amd_arch.h"
#include "backend.h"
#include "fs.h"
#include "hip_api.h"

/* ---- KFD topology (/sys/class/kfd/kfd/topology) --------------------------- */

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
    uint64_t unique_id;  /* 0 when the part has none (gfx8) */
    uint64_t hive_id;    /* XGMI hive, 0 when none */
    uint64_t vram_bytes; /* sum of frame-buffer mem_banks */
    int32_t revision;    /* PCI revision (sysfs), -1 unknown */
    char pci[32];        /* "0000:c1:00.0" */
    char uuid[32];       /* "GPU-1a2b3c4d5e6f7081", "" when unique_id is 0 */
    char name[128];      /* amdgpu.ids marketing name, "" unknown */
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

/* ---- libdrm amdgpu.ids ----------------------------------------------------- */

#define GPO_AMDGPU_IDS_PATH "/usr/share/libdrm/amdgpu.ids"

/* Looks up (device_id, revision) in the text of an amdgpu.ids file ("1002
 * device, revision, name" lines, hex). revision -1 matches when every entry
 * of that device carries the same name. Returns 1 and fills out, else 0. */
int gpo_amdgpu_ids_lookup(const char *text, uint32_t device_id, int32_t revision, char *out,
                          size_t cap);

/* ---- Visibility ------------------------------------------------------------ */

/* What the HIP runtime would show, for the KFD path: ROCR_VISIBLE_DEVICES
 * (ROCr's filter, applied first) then HIP_VISIBLE_DEVICES, or
 * CUDA_VISIBLE_DEVICES when HIP's is unset or empty (HIP's filter over what
 * ROCr left). `rocr`, `hip`, `cuda` are the variables' values (NULL when
 * unset). uuids[i] is GPU i's "GPU-..." text or "". Writes the visible GPUs'
 * indexes, in their new order, to order[] (room for n) and returns how many.
 * `why` (may be NULL) tells which variable filtered what. */
size_t gpo_rocm_visible(const char *rocr, const char *hip, const char *cuda,
                        const char *const *uuids, size_t n, size_t *order, char *why,
                        size_t why_cap);

/* ---- HIP runtime ------------------------------------------------------------ */

typedef struct gpo_hip {
    void *handle;
    gpo_hip_fns fn;
    const gpo_hip_abi *abi;
    int abi_extrapolated;
    int runtime_version; /* hipRuntimeGetVersion, -1 unknown */
    int driver_version;  /* hipDriverGetVersion, -1 unknown */
    int device_count;
    char library[512]; /* path actually loaded */
    char note[320];    /* a call that failed without stopping the load */
} gpo_hip;

/* Why gpo_hip_open failed, so the backend can pick status and wording. */
typedef enum gpo_hip_failure {
    GPO_HIP_OK = 0,
    GPO_HIP_NOT_FOUND = 1, /* no library could be opened */
    GPO_HIP_BROKEN = 2,    /* opened, but symbols missing or a call failed */
    GPO_HIP_TOO_OLD = 3,   /* HIP 4.x or older */
    GPO_HIP_NO_DEVICE = 4, /* the runtime sees no GPU */
    GPO_HIP_OLD_DRIVER = 5 /* hipErrorInsufficientDriver */
} gpo_hip_failure;

/* Opens the runtime (`path`, else libamdhip64.so.7/.6/.5/.so), resolves
 * the symbols, reads the versions, initialises and counts devices. Fills
 * `reason` in words on failure and returns the kind. No device context is
 * created. On failure hip->handle may stay open (never dlclose'd). */
gpo_hip_failure gpo_hip_open(gpo_hip *hip, const char *path, char *reason, size_t cap);

/* The process that initialised the HIP runtime through this library, 0
 * when none did. */
int gpo_hip_init_pid(void);

/* Words for a HIP error: "hipErrorNoDevice (100): no ROCm-capable device is
 * detected" (the runtime's own name and text when it has them). */
void gpo_hip_error_text(const gpo_hip *hip, gpo_hip_error e, char *out, size_t cap);

/* What HIP says about one device. Values the runtime refused are -1 / 0 / ""
 * and each refusal is appended to `notes` (a cJSON array, may be NULL). */
typedef struct gpo_hip_device {
    char name[256];
    char target[64];              /* gcnArchName: "gfx90a:sramecc+:xnack-" */
    int attr[GPO_HIP_ATTR_COUNT]; /* -1 when unknown */
    uint64_t total_mem;
    char uuid[32]; /* "GPU-..." or "" */
} gpo_hip_device;

void gpo_hip_query(const gpo_hip *hip, int ordinal, gpo_hip_device *out, cJSON *notes);

/* Free and total memory of one device: hipMemGetInfo on the device made
 * current with hipSetDevice, the calling thread's previous device restored. */
gpuopt_status gpo_hip_memory(const gpo_hip *hip, int ordinal, uint64_t *free_bytes,
                             uint64_t *total_bytes);

/* ---- Device records ---------------------------------------------------------- */

/* Builds the record of HIP device `ordinal` from what HIP said (hd), enriched
 * by `kfd` (may be NULL), the KFD node of the same GPU. `notes` (may be NULL)
 * is copied into the details. */
gpuopt_status gpo_rocm_device_from_hip(int ordinal, const gpo_kfd_gpu *kfd,
                                       const gpo_hip_device *hd, const cJSON *notes,
                                       gpuopt_device **out);

/* Builds the record of a GPU seen only in the KFD topology; `index` is the
 * ordinal HIP would give it. */
gpuopt_status gpo_rocm_device_from_kfd(const gpo_kfd_gpu *kfd, int index, gpuopt_device **out);

/* The KFD node that is HIP device hd: same UUID, else the n-th node with the
 * same PCI location where hd is the n-th HIP device there. NULL when none. */
const gpo_kfd_gpu *gpo_rocm_match_kfd(const gpo_kfd *kfd, const gpo_hip_device *all, int ordinal);

/* The backend table (rocm_backend.c). */
extern const gpo_backend gpo_backend_rocm;

#endif
