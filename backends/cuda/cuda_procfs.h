/* Readers of the NVIDIA kernel module's own description of its GPUs
 * (/proc/driver/nvidia), below everything that needs it: load (the GPUs
 * and version when libcuda.so.1 cannot be used), enumerate (kernel-only
 * records) and the doctor (the kernel_driver and device_nodes checks). The
 * format is what the module prints (NVIDIA open-gpu-kernel-modules,
 * kernel-open/nvidia/nv-procfs.c: nv_procfs_read_gpu_info and
 * nv_procfs_read_version): "Key: \t value", one per line. Every read goes
 * through gpo_fs (GPUOPT_SYSFS_ROOT). */
#ifndef GPO_CUDA_PROCFS_H
#define GPO_CUDA_PROCFS_H

#include <stddef.h>

#include "util/fs.h"

#define GPO_CUDA_PROCFS_GPUS "/proc/driver/nvidia/gpus"
#define GPO_CUDA_PROCFS_VERSION "/proc/driver/nvidia/version"

/* The bus ids of /proc/driver/nvidia/gpus that hold an information file,
 * sorted (PCI order); the caller frees them with gpo_fs_list_free.
 * GPUOPT_ERR_NOT_FOUND when the folder is missing or lists no GPU. */
gpuopt_status gpo_cuda_procfs_gpus(const gpo_fs *fs, char ***bus_ids, size_t *n);

/* The first line of /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX
 * Open Kernel Module for x86_64  580.65.06  Release Build ..."); 0, or -1
 * with "" when the file cannot be read. */
int gpo_cuda_procfs_version_line(const gpo_fs *fs, char *line, size_t cap);
/* The version in such a line ("580.65.06"); "" when it holds none. */
void gpo_cuda_procfs_parse_version(const char *line, char *out, size_t cap);
/* Both at once: the loaded module's version, "" when unknown. */
void gpo_cuda_procfs_version(const gpo_fs *fs, char *out, size_t cap);

/* The fields of one GPU's information file that anything here reads. */
typedef struct gpo_cuda_gpu_info {
    char model[256];
    char uuid[64]; /* as printed: "GPU-????????-..." before the GPU was initialised */
    char bus[32];
    char vbios[64];
    char bus_type[16];
    char minor[16];
    char firmware[64];
    char excluded[8]; /* "Yes" when NVreg_ExcludedGpus names it */
} gpo_cuda_gpu_info;

/* Reads /proc/driver/nvidia/gpus/<bus_id>/information; 0, or -1 with every
 * field "" when it cannot be read. */
int gpo_cuda_procfs_gpu(const gpo_fs *fs, const char *bus_id, gpo_cuda_gpu_info *gi);

/* The device node of the GPU at `bus_id`: "/dev/nvidia<Device Minor>" (the
 * module creates /dev/nvidiaN for minor N; NVML's nvmlDeviceGetMinorNumber
 * answers the same number, and Slurm's NVML plugin names File= from it:
 * SchedMD slurm src/plugins/gpu/nvml/gpu_nvml.c). "" when the information
 * file is missing or its minor is not a number. */
void gpo_cuda_procfs_device_file(const gpo_fs *fs, const char *bus_id, char *out, size_t cap);

/* 1 when `uuid` is one the module knows ("GPU-" and hex), not the question
 * marks it prints for a GPU it has not initialised. */
int gpo_cuda_procfs_uuid_known(const char *uuid);

#endif
