/* What loading the CUDA backend leaves (cuda_load.c): the backend state
 * every later step reads (enumerate, rules, memory, apply, runtime, doctor)
 * and the helpers that turn its driver's answers into words. */
#ifndef GPO_CUDA_LOAD_H
#define GPO_CUDA_LOAD_H

#include <sys/types.h>

#include "backend.h"
#include "cuda_api.h"
#include "cuda_nvml.h"
#include "cuda_nvrtc.h"

#define GPO_CUDA_DEFAULT_LIBRARY "libcuda.so.1"

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

    /* NVRTC, opened on first use (gpo_cuda_nvrtc). */
    char nvrtc_path[GPO_PATH_MAX]; /* the user's NVRTC (GPUOPT_NVRTC_LIBRARY), "" */
    gpo_dl_once nvrtc_once;
    gpo_nvrtc *nvrtc;

    /* NVML, opened on first need (gpo_cuda_nvml), for live memory without
     * a context; usable in kernel-only mode too (it needs the kernel
     * driver, not libcuda). */
    char nvml_path[GPO_PATH_MAX]; /* the user's NVML (GPUOPT_NVML_LIBRARY), "" */
    gpo_dl_once nvml_once;
    gpo_nvml *nvml;
} gpo_cuda_state;

/* The ops table's load and unload. */
gpuopt_status gpo_cuda_load(const gpo_backend_env *env, void **state, gpo_backend_report *report);
void gpo_cuda_unload(void *state);

/* GPUOPT_OK in the process that loaded `s`; GPUOPT_ERR_FORKED with the
 * detail set in a fork()ed child, whose copy of driver state is stale. */
gpuopt_status gpo_cuda_check_pid(const gpo_cuda_state *s, const char *what);

/* GPUOPT_OK when `what` ("cuda:0: reading free memory") may call the
 * driver: the library is usable (not kernel-only) and was initialised in
 * this process. Else GPUOPT_ERR_UNSUPPORTED ("<what> needs the CUDA driver
 * library, which is not usable here: <why>") or GPUOPT_ERR_FORKED, with the
 * detail set. */
gpuopt_status gpo_cuda_driver_ready(const gpo_cuda_state *s, const char *what);

/* "13.0" from 13000; "" for an unknown (<= 0) version. */
void gpo_cuda_version_text(int version, char *out, size_t cap);

/* The symbol behind api->cuEventElapsedTime, for reasons. */
#define GPO_CUDA_ELAPSED_CALL(api)                                                                 \
    ((api)->cuEventElapsedTime == (api)->cuEventElapsedTime_v1 ? "cuEventElapsedTime"              \
                                                               : "cuEventElapsedTime_v2")

/* What a sticky result means, for reasons (cuda.h's words on each of them). */
#define GPO_CUDA_STICKY_WORDS                                                                      \
    "a sticky error: code on the device faulted, and every later CUDA call in this process "       \
    "fails the same way, the host program's own CUDA work included (the device's primary "         \
    "context is shared); cuda.h: \"To continue using CUDA, the process must be terminated and "    \
    "relaunched\""

/* A failed driver call in words: "<what>: <call> failed: CUDA_ERROR_X (...)",
 * with the library's own names when `s` has them. Sets the detail and
 * returns `status`, or GPUOPT_ERR_FAULT with GPO_CUDA_STICKY_WORDS added
 * for a sticky result (gpo_cuda_result_sticky), whatever call met it. */
gpuopt_status gpo_cuda_fail_call(const gpo_cuda_state *s, gpuopt_status status, const char *what,
                                 const char *call, gpo_cu_result r);

/* The state's NVRTC, opened on first use (once: a failure is remembered and
 * repeated with its words, since NVRTC is large and a missing one stays
 * missing). */
gpuopt_status gpo_cuda_nvrtc(gpo_cuda_state *s, const gpo_nvrtc **out);

/* The state's NVML, opened on first use (once: a failure is remembered and
 * repeated with its words). */
gpuopt_status gpo_cuda_nvml(gpo_cuda_state *s, const gpo_nvml **out);

/* What to do about a failed cuInit whose reason (the report's, which names
 * the CUresult) is `reason`: the advice of the row of load's table of
 * cuInit results, or NULL when the table has none. For the doctor. */
const char *gpo_cuda_init_advice(const char *reason);

#endif
