/* Internals shared by the ROCm backend's files: the HIP runtime (rocm_hip.c),
 * the kernel's KFD topology (rocm_kfd.c), libdrm's marketing names
 * (rocm_ids.c), device visibility (rocm_visible.c), the device records
 * built from them (rocm_device.c), the backend's state (rocm_backend.c), its
 * knob rules (rocm_rules.c, rocm_rules_env.c), hiprtc (rocm_hiprtc.c) and
 * the tier-2 runtime ops (rocm_runtime.c). Nothing here leaves the backend. */
#ifndef GPO_ROCM_INTERNAL_H
#define GPO_ROCM_INTERNAL_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/amd.h"
#include "backend.h"
#include "util/fs.h"
#include "hip_api.h"
#include "hip_rt_api.h"

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

/* The target ID HIP reports for a device ("gfx90a:sramecc+:xnack-"),
 * read from the props struct of the runtime's major; "" when unknown. */
void gpo_hip_target(const gpo_hip *hip, int ordinal, char *out, size_t cap);

/* ---- hiprtc (rocm_hiprtc.c) ---------------------------------------------------- */

typedef struct gpo_hiprtc {
    void *handle;
    gpo_hiprtc_fns fn;
    int in_runtime;    /* 1: the functions come from libamdhip64 itself (ROCm 5, 6) */
    int version_major; /* hiprtcVersion, -1 unknown */
    int version_minor;
    char library[512]; /* path of what provides the functions */
    /* comgr's ISA list (the compiler hiprtc drives), NULL when no comgr
     * could be opened. */
    gpo_comgr_isa_count_fn isa_count;
    gpo_comgr_isa_name_fn isa_name;
    char comgr[512];
} gpo_hiprtc;

/* Opens hiprtc: `path` (the user's GPUOPT_HIPRTC_LIBRARY / "hiprtc"
 * library) when given, else libhiprtc.so.<hip_major> and the other majors
 * newest first, else `hip_handle` when the HIP runtime exports the hiprtc
 * functions itself (ROCm 5 and 6). Sets the detail and returns
 * GPUOPT_ERR_UNAVAILABLE when none can be used. */
gpuopt_status gpo_hiprtc_open(gpo_hiprtc *rtc, const char *path, void *hip_handle, int hip_major);

/* 1: comgr lists `target` (compared without feature suffixes); 0: it
 * does not (`known` then lists what it knows, comma-separated); -1: no
 * comgr to ask. */
int gpo_hiprtc_target_known(const gpo_hiprtc *rtc, const char *target, char *known, size_t cap);

/* Compiles HIP `source` for `target` (a gfx target ID) with the extra
 * `options` (whitespace-separated; may be NULL; must not name a target).
 * On success *code / *size hold the code object (malloc'd) and *log the
 * compiler's warnings or NULL. On failure: GPUOPT_ERR_BUILD with *log the
 * compiler's full log (malloc'd), GPUOPT_ERR_UNSUPPORTED for a target
 * comgr does not know (compiling it aborts some comgr releases),
 * GPUOPT_ERR_INVALID_ARGUMENT, GPUOPT_ERR_NO_MEMORY or GPUOPT_ERR_DRIVER;
 * the detail says which. */
gpuopt_status gpo_hiprtc_compile(const gpo_hiprtc *rtc, const char *source, const char *target,
                                 const char *options, void **code, size_t *size, char **log);

/* "hiprtc 6.2 (libhiprtc.so.6)" */
void gpo_hiprtc_describe(const gpo_hiprtc *rtc, char *out, size_t cap);

/* ---- The backend's state (rocm_backend.c) ---------------------------------------- */

typedef struct gpo_rocm_state {
    gpo_fs fs;
    gpo_kfd kfd;
    gpo_hip hip;
    int hip_ok;    /* 1: devices come from HIP */
    pid_t pid;     /* the process that loaded it */
    size_t *order; /* KFD path: visible GPUs, in HIP's order */
    size_t n_order;
    char driver_version[64];
    char runtime_version[64];
    char unavailable[512];          /* load's reason when devices come from KFD alone */
    char hiprtc_path[GPO_PATH_MAX]; /* the user's hiprtc library, "" for the sonames */
    pthread_mutex_t rtc_lock;       /* guards the lazy hiprtc open below */
    int rtc_tried;                  /* 1: opened or failed once (never retried) */
    gpuopt_status rtc_status;
    char rtc_reason[768];
    gpo_hiprtc rtc;
} gpo_rocm_state;

/* HIP state from before a fork() is stale in the child: GPUOPT_ERR_FORKED
 * with words naming `what`, else GPUOPT_OK. */
gpuopt_status gpo_rocm_check_fork(const gpo_rocm_state *st, const char *what);

/* hiprtc for this state, opened on first use (once; a failure is kept and
 * repeated with its reason). */
gpuopt_status gpo_rocm_hiprtc(gpo_rocm_state *st, const gpo_hiprtc **rtc);

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

/* ---- Rules (rocm_rules.c, rocm_rules_env.c) -------------------------------------- */

#define GPO_ROCM_N_KNOBS 10
extern const gpo_knob_def gpo_rocm_knobs[GPO_ROCM_N_KNOBS];

gpuopt_status gpo_rocm_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan);
gpuopt_status gpo_rocm_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan);

/* Math knobs (rocm_rules_math.c, tier 1): matrix units, bf16, fp8, the
 * autocast dtype and the dimension multiple, for a known target `a`,
 * whether reduced precision is allowed (`reduced`, `why` in words) and the
 * workload (may be NULL). */
gpuopt_status gpo_rocm_rules_math(const gpo_amd_arch_info *a, int reduced, const char *why,
                                  const gpuopt_workload *w, struct gpuopt_plan *plan);

/* Environment knobs (rocm_rules_env.c): HIP_VISIBLE_DEVICES for the
 * selected device (tier 0), MIOpen's benchmark flag and find mode from the
 * workload and the HSA_OVERRIDE_GFX_VERSION advice (tier 1). */
gpuopt_status gpo_rocm_set_visible(const gpo_rocm_state *st, const gpo_route *route,
                                   const gpuopt_device *dev, struct gpuopt_plan *plan);
gpuopt_status gpo_rocm_set_miopen(struct gpuopt_plan *plan);
gpuopt_status gpo_rocm_set_override_advice(const gpuopt_device *dev, struct gpuopt_plan *plan);

/* The HSA_OVERRIDE_GFX_VERSION value for an unlisted consumer target whose
 * ISA matches a listed one ("10.3.0" for gfx1031), with the listed target
 * and the caveat; NULL when the target does not qualify. */
typedef struct gpo_rocm_override {
    const char *gfx;    /* "gfx1031" */
    const char *as;     /* "gfx1030", listed in the support matrix */
    const char *value;  /* "10.3.0" */
    const char *family; /* the LLVM generic target both belong to */
    const char *caveat; /* what differs, in words */
} gpo_rocm_override;
const gpo_rocm_override *gpo_rocm_override_for(const char *gfx);

/* ---- Runtime ops (rocm_runtime.c) -------------------------------------------------- */

extern const gpo_runtime_ops gpo_rocm_runtime;

/* The backend table (rocm_backend.c). */
extern const gpo_backend gpo_backend_rocm;

/* rocm_doctor.c: the ROCm block of gpuopt_context_diagnose (gpo_backend_rocm.diagnose). */
struct gpo_dr_run;
void gpo_dr_check_rocm(struct gpo_dr_run *run);

#endif
