/* Shared by the CUDA backend's files; nothing outside backends/cuda uses it. */
#ifndef GPO_CUDA_INTERNAL_H
#define GPO_CUDA_INTERNAL_H

#include <sys/types.h>

#include "backend.h"
#include "cuda_api.h"

#define GPO_CUDA_DEFAULT_LIBRARY "libcuda.so.1"

/* What load leaves for enumerate and memory_free. */
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

/* cuda_memory.c */
gpuopt_status gpo_cuda_memory_free(void *state, const gpo_route *route, uint64_t *free_bytes);

/* A failed driver call in words: "<what>: <call> failed: CUDA_ERROR_X (...)".
 * Sets the detail and returns `status`. */
gpuopt_status gpo_cuda_fail_call(const gpo_cuda_state *s, gpuopt_status status, const char *what,
                                 const char *call, gpo_cu_result r);

#endif
