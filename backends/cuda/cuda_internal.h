/* Shared by the CUDA backend's files; nothing outside backends/cuda uses it. */
#ifndef GPO_CUDA_INTERNAL_H
#define GPO_CUDA_INTERNAL_H

#include <pthread.h>
#include <sys/types.h>

#include "backend.h"
#include "cuda_api.h"
#include "nvrtc_api.h"

#define GPO_CUDA_DEFAULT_LIBRARY "libcuda.so.1"

/* NVRTC as opened by cuda_nvrtc.c. */
#define GPO_NVRTC_MAX_ARCHS 64
#define GPO_NVRTC_MAX_OPTIONS 128
typedef struct gpo_nvrtc {
    void *handle;
    gpo_nvrtc_api api;
    int major, minor;
    int archs[GPO_NVRTC_MAX_ARCHS]; /* ascending, "sm_XY" as XY */
    int n_archs;                    /* -1: this NVRTC cannot list them (before 11.2) */
    char library[512];              /* the path loaded */
} gpo_nvrtc;

/* What a compilation gives: a CUBIN (machine code for sm_XY) or PTX text
 * (NUL-terminated) that the driver compiles when loading it. */
typedef struct gpo_nvrtc_image {
    char *data;
    size_t size;
    int cubin;
    char target[32]; /* "sm_90", "compute_120" */
} gpo_nvrtc_image;

/* What load leaves for enumerate, memory_free and the runtime. */
typedef struct gpo_cuda_state {
    /* Driver mode: the library loaded and cuInit succeeded. */
    void *handle;
    gpo_cuda_api api;
    int driver_version;      /* cuDriverGetVersion (13000), -1 when it failed */
    char kernel_version[64]; /* "580.65.06" from /proc/driver/nvidia/version, "" */
    pid_t pid;               /* the process that initialised the driver */

    /* Kernel-only mode: no usable driver library, but the kernel module
     * lists GPUs under /proc/driver/nvidia/gpus (bus ids, sorted). */
    int kernel_only;
    char **kernel_gpus;
    size_t n_kernel_gpus;
    char why_unusable[512]; /* the reason the library is not used */

    /* NVRTC, opened on the first kernel build of a runtime session. */
    char nvrtc_path[GPO_PATH_MAX]; /* the user's NVRTC (GPUOPT_NVRTC_LIBRARY), "" */
    pthread_mutex_t nvrtc_lock;
    int nvrtc_tried;
    gpo_nvrtc *nvrtc;
    gpuopt_status nvrtc_status;
    char nvrtc_why[1024];
} gpo_cuda_state;

extern const gpo_backend gpo_backend_cuda;

/* cuda_load.c */
gpuopt_status gpo_cuda_load(const gpo_backend_env *env, void **state, gpo_backend_report *report);
void gpo_cuda_unload(void *state);
/* GPUOPT_OK in the process that loaded `s`; GPUOPT_ERR_FORKED with the
 * detail set in a fork()ed child, whose copy of driver state is stale. */
gpuopt_status gpo_cuda_check_pid(const gpo_cuda_state *s, const char *what);
/* "13.0" from 13000. */
void gpo_cuda_version_text(int version, char *out, size_t cap);

/* cuda_enum.c: devices through the driver API, without a context. */
/* A record for device `index` with the CUDA facts every path shares
 * (vendor, type, id, route); GPUOPT_ERR_NO_MEMORY with the detail set. */
gpuopt_status gpo_cuda_device_new(int index, gpuopt_device **out);
gpuopt_status gpo_cuda_enumerate_driver(gpo_cuda_state *s, const gpo_backend_env *env,
                                        gpo_device_list *out);

/* cuda_procfs.c: the kernel module's view. */
/* Lists /proc/driver/nvidia/gpus into s->kernel_gpus; GPUOPT_ERR_NOT_FOUND
 * when the directory is missing or empty. */
gpuopt_status gpo_cuda_procfs_scan(const gpo_fs *fs, gpo_cuda_state *s);
/* "580.65.06" from /proc/driver/nvidia/version; "" when unreadable. */
void gpo_cuda_procfs_version(const gpo_fs *fs, char *out, size_t cap);
gpuopt_status gpo_cuda_enumerate_kernel(gpo_cuda_state *s, const gpo_backend_env *env,
                                        gpo_device_list *out);

/* cuda_nvrtc.c. Every function sets the detail and returns a status. */
/* Opens `user_path` (the user's choice; NULL or "": none), else the newest
 * libnvrtc.so.* whose CUDA major is not above the driver's (driver_version
 * 13000; <= 0: any). */
gpuopt_status gpo_nvrtc_open(const char *user_path, int driver_version, gpo_nvrtc **out);
void gpo_nvrtc_close(gpo_nvrtc *nv);
/* The target for a device of capability major.minor: "sm_XY" with *cubin 1
 * when this NVRTC knows the architecture, "compute_XY" of the newest one it
 * knows below (PTX, *cubin 0) for a newer device; GPUOPT_ERR_UNSUPPORTED for
 * a device older than all it knows. */
gpuopt_status gpo_nvrtc_target(const gpo_nvrtc *nv, int cc_major, int cc_minor, char *target,
                               size_t cap, int *cubin);
/* Compiles `source` with `options` (blank-separated, quotes group) for the
 * device; an -arch/--gpu-architecture option in `options` wins. On
 * GPUOPT_ERR_BUILD *log holds NVRTC's log (malloc'd); on success it holds
 * warnings or NULL. `img` is the caller's (gpo_nvrtc_image_free). */
gpuopt_status gpo_nvrtc_compile(const gpo_nvrtc *nv, const char *source, const char *options,
                                int cc_major, int cc_minor, gpo_nvrtc_image *img, char **log);
void gpo_nvrtc_image_free(gpo_nvrtc_image *img);
/* "NVRTC 13.0". */
void gpo_nvrtc_version_text(const gpo_nvrtc *nv, char *out, size_t cap);
/* The state's NVRTC, opened on first use (once; a failure is remembered and
 * repeated with its words). */
gpuopt_status gpo_cuda_nvrtc(gpo_cuda_state *s, const gpo_nvrtc **out);

/* cuda_rt_session.c, cuda_rt_kernel.c: the runtime ops for tier 2. */
extern const gpo_runtime_ops gpo_cuda_runtime_ops;

/* cuda_rules.c, cuda_knobs.c: the knob catalogue and tier 0/1 rules. */
#define GPO_CUDA_N_KNOBS 17
extern const gpo_knob_def gpo_cuda_knobs[GPO_CUDA_N_KNOBS];
gpuopt_status gpo_cuda_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan);
gpuopt_status gpo_cuda_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan);

/* cuda_memory.c */
gpuopt_status gpo_cuda_memory_free(void *state, const gpo_route *route, uint64_t *free_bytes);

/* cuda_apply.c: gpuopt_plan_apply(GPUOPT_APPLY_DEVICE) on the calling
 * thread's current context (the L2 set-aside for persisting accesses). */
gpuopt_status gpo_cuda_apply_device(void *state, const gpo_route *route,
                                    const struct gpuopt_plan *plan, gpo_sbuf *report);

/* A failed driver call in words: "<what>: <call> failed: CUDA_ERROR_X (...)".
 * Sets the detail and returns `status`. */
gpuopt_status gpo_cuda_fail_call(const gpo_cuda_state *s, gpuopt_status status, const char *what,
                                 const char *call, gpo_cu_result r);

#endif
