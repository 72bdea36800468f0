/* The CUDA block of gpuopt_context_diagnose (gpo_backend_cuda.diagnose): from the PCI
 * bus up to the driver library, each layer an NVIDIA GPU needs before CUDA
 * can use it, and what to do where one is missing. This file reads what the
 * kernel module says once (through the backend's own readers,
 * cuda_procfs.c) and runs the checks in the order a GPU needs the layers:
 * bus, module and device nodes (cuda_doctor_nodes.c), the driver library
 * and cuInit (cuda_doctor_lib.c), a driver new enough for the CUDA runtime
 * (cuda_doctor_versions.c), no visibility variable hiding the GPUs (the
 * backend's parser, cuda_visible.c), and in a container, the devices passed
 * in. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "cuda_doctor.h"
#include "cuda_visible.h"

static void kernel_view_free(gpo_cuda_kernel_view *k)
{
    gpo_fs_list_free(k->bus, k->n_gpus);
    free(k->gpus);
    free(k->uuids);
}

/* 0, or -1 when out of memory. */
static int read_kernel(const gpo_fs *fs, gpo_cuda_kernel_view *k)
{
    memset(k, 0, sizeof *k);
    k->nouveau = gpo_fs_exists(fs, "/sys/module/nouveau");
    if (gpo_cuda_procfs_version_line(fs, k->version_line, sizeof k->version_line) == 0) {
        gpo_cuda_procfs_parse_version(k->version_line, k->version, sizeof k->version);
        k->open_module = strstr(k->version_line, "Open Kernel Module") != NULL;
        k->module = 1;
    }
    k->module |= gpo_fs_exists(fs, "/sys/module/nvidia");
    if (gpo_cuda_procfs_gpus(fs, &k->bus, &k->n_gpus) != GPUOPT_OK)
        return 0;
    k->gpus = calloc(k->n_gpus, sizeof *k->gpus);
    k->uuids = calloc(k->n_gpus, sizeof *k->uuids);
    if (!k->gpus || !k->uuids)
        return -1;
    for (size_t i = 0; i < k->n_gpus; i++) {
        gpo_cuda_procfs_gpu(fs, k->bus[i], &k->gpus[i]);
        /* Uninitialised GPUs print "GPU-????????-...": no UUID to match. */
        if (gpo_cuda_procfs_uuid_known(k->gpus[i].uuid))
            k->uuids[k->n_uuids++] = k->gpus[i].uuid;
    }
    return 0;
}

/* The backend's state in this context, or NULL when it did not load. This
 * is the CUDA backend's own diagnose, called for its own slot, so the
 * state is the one gpo_cuda_load made. The doctor may open NVRTC through
 * it (cached in the state, under its lock), hence the cast. */
static gpo_cuda_state *backend_state(const gpo_dr_run *run)
{
    const gpo_backend_slot *slot = gpo_dr_slot(run, "cuda");
    return slot ? (gpo_cuda_state *)(uintptr_t)slot->state : NULL;
}

typedef struct visible_arg {
    int n_devices;
    const gpo_cuda_kernel_view *k;
} visible_arg;

static void parse_visible(const char *variable, const char *value, void *arg, gpo_dr_visible *out)
{
    const visible_arg *a = arg;
    (void)variable;
    gpo_cuda_visible_parse(value, a->n_devices, a->k->uuids, a->k->n_uuids, out);
}

void gpo_cuda_diagnose(struct gpo_dr_run *run)
{
    static const char *const vars[] = {"CUDA_VISIBLE_DEVICES"};
    gpo_cuda_kernel_view k;
    if (read_kernel(run->fs, &k) != 0) {
        run->rep->failed = 1;
        kernel_view_free(&k);
        return;
    }
    size_t on_pci = gpo_dr_pci_count(&run->facts, GPO_CUDA_PCI_VENDOR);
    int hardware = on_pci > 0 || k.module || k.n_gpus > 0 || gpo_cuda_doctor_any_node(run->fs);

    gpo_dr_check_backend(run, "cuda", hardware);
    gpo_cuda_doctor_kernel(run, &k, on_pci);
    int blocked = 0;
    int present = gpo_cuda_doctor_nodes(run, &k, hardware, &blocked);
    gpo_cuda_doctor_library(run, k.version, hardware, blocked);
    gpo_cuda_doctor_versions(run, backend_state(run), k.version, hardware);
    int n_devices = k.n_gpus ? (int)k.n_gpus : on_pci ? (int)on_pci : -1;
    visible_arg va = {n_devices, &k};
    gpo_dr_check_visible(run->rep, "cuda", vars, 1, parse_visible, &va, n_devices, hardware);
    gpo_cuda_doctor_container(run, present, on_pci > 0 || k.module);
    kernel_view_free(&k);
}
