/* The CUDA block of gpuopt_context_diagnose, in three checks under one orchestrator
 * (cuda_doctor.c): the machine's layers below the driver library
 * (cuda_doctor_nodes.c: PCI, kernel module, device nodes, container), the
 * driver library and cuInit (cuda_doctor_lib.c), and the driver against
 * the CUDA runtime it must serve (cuda_doctor_versions.c). They use the
 * generic doctor API (src/doctor/doctor.h) and the backend's own readers and
 * load results, never a second reading of the same facts. */
#ifndef GPO_CUDA_DOCTOR_H
#define GPO_CUDA_DOCTOR_H

#include "cuda_load.h"
#include "cuda_procfs.h"
#include "doctor/doctor.h"

/* NVIDIA's PCI vendor id (PCI-SIG; the PCI ID Repository, pci-ids.ucw.cz). */
#define GPO_CUDA_PCI_VENDOR 0x10de

/* What the NVIDIA kernel module says, read once per block. */
typedef struct gpo_cuda_kernel_view {
    int module;             /* /sys/module/nvidia or /proc/driver/nvidia/version */
    int nouveau;            /* /sys/module/nouveau */
    char version[64];       /* "580.65.06" */
    char version_line[256]; /* /proc/driver/nvidia/version's first line */
    int open_module;        /* "Open Kernel Module" */
    char **bus;             /* the GPUs it lists (bus ids, PCI order) */
    gpo_cuda_gpu_info *gpus;
    size_t n_gpus;
    const char **uuids; /* the known UUIDs among them */
    size_t n_uuids;
} gpo_cuda_kernel_view;

/* cuda_doctor_nodes.c */
/* pci_gpus and kernel_driver: the GPUs on the bus and the module that
 * drives them; `on_pci` NVIDIA GPUs are on the bus. */
void gpo_cuda_doctor_kernel(gpo_dr_run *run, const gpo_cuda_kernel_view *k, size_t on_pci);
/* 1 when /dev holds any NVIDIA node (a sign of the hardware). */
int gpo_cuda_doctor_any_node(const gpo_fs *fs);
/* device_nodes and device_permissions; `wanted`: the machine shows NVIDIA
 * hardware. Returns how many nodes are present; *blocked is 1 when one the
 * driver needs is missing or denied. */
int gpo_cuda_doctor_nodes(gpo_dr_run *run, const gpo_cuda_kernel_view *k, int wanted, int *blocked);
/* container: the NVIDIA Container Toolkit's variable and the nodes passed in. */
void gpo_cuda_doctor_container(gpo_dr_run *run, int nodes_present, int host_gpu);

/* cuda_doctor_lib.c: driver_library, stub_library and driver_init, from the
 * backend's load report. */
void gpo_cuda_doctor_library(gpo_dr_run *run, const char *kernel_version, int hardware,
                             int nodes_blocked);

/* cuda_doctor_versions.c: runtime_version; `s` is the backend's state when
 * it loaded (its NVRTC is the one compared), else NULL. */
void gpo_cuda_doctor_versions(gpo_dr_run *run, gpo_cuda_state *s, const char *kernel_version,
                              int hardware);

#endif
