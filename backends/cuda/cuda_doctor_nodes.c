/* The layers an NVIDIA GPU needs below the driver library, in the order it
 * needs them: a GPU on the PCI bus with the nvidia kernel module bound to
 * it; the module loaded and listing the GPU in /proc/driver/nvidia (the
 * module's own files, nv-procfs.c in NVIDIA's open-gpu-kernel-modules); the
 * device nodes /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN, readable
 * and writable by the user; in a container, the devices passed in. Each
 * check says what to do where a layer is missing. */
#include <string.h>
#include <strings.h>

#include "cuda_doctor.h"
#include "util/strutil.h"

#define NV_MAX 32 /* /dev/nvidiaN nodes looked at */

/* ---- PCI and kernel module ------------------------------------------------- */

static void check_pci(gpo_dr_run *run, const gpo_cuda_kernel_view *k)
{
    gpo_dr_report *r = run->rep;
    const gpo_dr_facts *fa = &run->facts;
    gpo_dr_finding *ok = NULL;
    size_t n = gpo_dr_pci_count(fa, GPO_CUDA_PCI_VENDOR);
    if (n == 0) {
        gpo_dr_finding *f = gpo_dr_add(r, "cuda", "pci_gpus", GPO_DR_INFO);
        gpo_dr_say(r, f, "no NVIDIA GPU on the PCI bus");
        if (fa->pci_readable)
            gpo_dr_evidence(r, f,
                            "/sys/bus/pci/devices: %zu functions, none with vendor 0x10de "
                            "and a display or accelerator class",
                            fa->n_pci_scanned);
        else
            gpo_dr_evidence(r, f, "/sys/bus/pci/devices cannot be listed");
        return;
    }
    for (size_t i = 0; i < fa->n_gpus; i++) {
        const gpo_dr_pci_gpu *g = &fa->gpus[i];
        if (g->vendor != GPO_CUDA_PCI_VENDOR)
            continue;
        char what[160];
        gpo_snprintf(what, sizeof what, "%s, NVIDIA %s [10de:%04x]", g->bdf,
                     gpo_dr_pci_class_word(g->pci_class), g->device);
        /* Without a driver link, a module that lists the GPU still owns it
         * (recorded trees often lack the link). */
        int listed = 0;
        for (size_t j = 0; !g->driver[0] && j < k->n_gpus; j++)
            listed |= strcasecmp(k->bus[j], g->bdf) == 0;
        if (strcmp(g->driver, "nvidia") == 0 || listed) {
            if (!ok) {
                ok = gpo_dr_add(r, "cuda", "pci_gpus", GPO_DR_OK);
                gpo_dr_say(r, ok, "%zu NVIDIA GPU%s on the PCI bus", n, n == 1 ? "" : "s");
            }
            gpo_dr_evidence(r, ok, "%s: %s", what,
                            listed ? "listed by the nvidia module" : "driver nvidia");
            continue;
        }
        gpo_dr_finding *f;
        char path[64];
        gpo_snprintf(path, sizeof path, "/sys/bus/pci/devices/%s", g->bdf);
        if (!g->driver[0]) {
            f = gpo_dr_add(r, "cuda", "pci_gpus", GPO_DR_PROBLEM);
            gpo_dr_say(r, f, "NVIDIA GPU %s has no kernel driver bound", g->bdf);
            gpo_dr_evidence(r, f, "%s: no driver link", what);
            if (k->module)
                gpo_dr_fix(r, f,
                           "the nvidia module is loaded but did not take this GPU: `sudo "
                           "dmesg | grep -i nvrm` says why (a GPU this driver branch does "
                           "not support, or one excluded with NVreg_ExcludedGpus)");
            else
                gpo_dr_fix(r, f,
                           "install the NVIDIA driver (Debian: nvidia-driver; Ubuntu: "
                           "`sudo ubuntu-drivers install`) and reboot, or `sudo modprobe "
                           "nvidia` where it is installed");
        } else if (strcmp(g->driver, "nouveau") == 0) {
            f = gpo_dr_add(r, "cuda", "pci_gpus", GPO_DR_PROBLEM);
            gpo_dr_say(r, f, "NVIDIA GPU %s is driven by nouveau, which has no CUDA", g->bdf);
            gpo_dr_evidence(r, f, "%s: driver nouveau", what);
            gpo_dr_fix(r, f,
                       "install NVIDIA's driver (its packages blacklist nouveau) and "
                       "reboot");
        } else {
            f = gpo_dr_add(r, "cuda", "pci_gpus", GPO_DR_WARNING);
            gpo_dr_say(r, f, "NVIDIA GPU %s is bound to %s, not to the nvidia driver", g->bdf,
                       g->driver);
            gpo_dr_evidence(r, f, "%s: driver %s", what, g->driver);
            gpo_dr_fix(r, f, "%s",
                       strcmp(g->driver, "vfio-pci") == 0
                           ? "it is reserved for a virtual machine; if this host "
                             "should use it, drop the vfio-pci override (`sudo "
                             "driverctl unset-override <bus id>`) and reboot"
                           : "unbind it and bind the nvidia driver, or leave it if "
                             "that is intended");
        }
        gpo_dr_path(r, f, path);
    }
}

static void check_module(gpo_dr_run *run, const gpo_cuda_kernel_view *k, size_t on_pci)
{
    gpo_dr_report *r = run->rep;
    gpo_dr_finding *f;
    if (!k->module) {
        f = gpo_dr_add(r, "cuda", "kernel_driver", on_pci ? GPO_DR_PROBLEM : GPO_DR_INFO);
        gpo_dr_say(r, f, "the NVIDIA kernel module is not loaded");
        gpo_dr_evidence(r, f, "/sys/module/nvidia and /proc/driver/nvidia/version do not exist");
        if (k->nouveau)
            gpo_dr_evidence(r, f, "/sys/module/nouveau exists: the nouveau driver is loaded");
        if (on_pci)
            gpo_dr_fix(r, f,
                       "sudo modprobe nvidia (install the NVIDIA driver first if modprobe "
                       "cannot find it: Debian nvidia-driver, Ubuntu `sudo "
                       "ubuntu-drivers install`)");
        gpo_dr_path(r, f, GPO_CUDA_PROCFS_VERSION);
        return;
    }
    f = gpo_dr_add(r, "cuda", "kernel_driver", GPO_DR_OK);
    gpo_dr_say(r, f, "the NVIDIA kernel module%s%s is loaded%s", k->version[0] ? " " : "",
               k->version, k->open_module ? " (open kernel module)" : "");
    gpo_dr_path(r, f, GPO_CUDA_PROCFS_VERSION);
    if (k->version_line[0])
        gpo_dr_evidence(r, f, "/proc/driver/nvidia/version: %s", k->version_line);
    gpo_dr_evidence(r, f, "%s lists %zu GPU%s", GPO_CUDA_PROCFS_GPUS, k->n_gpus,
                    k->n_gpus == 1 ? "" : "s");
    if (on_pci > k->n_gpus) {
        f->status = GPO_DR_WARNING;
        gpo_dr_evidence(r, f, "the PCI bus shows %zu NVIDIA GPU%s", on_pci, on_pci == 1 ? "" : "s");
        gpo_dr_fix(r, f,
                   "the module did not take every GPU: `sudo dmesg | grep -i nvrm` says "
                   "why");
    }
    for (size_t i = 0; i < k->n_gpus; i++) {
        if (strcmp(k->gpus[i].excluded, "Yes") != 0)
            continue;
        gpo_dr_finding *x = gpo_dr_add(r, "cuda", "kernel_driver", GPO_DR_WARNING);
        gpo_dr_say(r, x, "the NVIDIA driver excludes GPU %s", k->bus[i]);
        gpo_dr_evidence(r, x, "%s/%s/information: GPU Excluded: Yes", GPO_CUDA_PROCFS_GPUS,
                        k->bus[i]);
        gpo_dr_fix(r, x,
                   "remove it from the NVreg_ExcludedGpus module option (in "
                   "/etc/modprobe.d) and reload the module, if it should be used");
    }
}

void gpo_cuda_doctor_kernel(gpo_dr_run *run, const gpo_cuda_kernel_view *k, size_t on_pci)
{
    check_pci(run, k);
    check_module(run, k, on_pci);
}

/* ---- Device nodes ------------------------------------------------------------------ */

/* Lists /dev/nvidiaN (N digits), sorted. */
static size_t gpu_nodes(const gpo_fs *fs, char nodes[][32], size_t max)
{
    char **names = NULL;
    size_t n = 0, found = 0;
    if (gpo_fs_list(fs, "/dev", &names, &n) != GPUOPT_OK)
        return 0;
    for (size_t i = 0; i < n && found < max; i++) {
        const char *s = names[i];
        if (strncmp(s, "nvidia", 6) != 0 || !s[6] || strspn(s + 6, "0123456789") != strlen(s + 6))
            continue;
        gpo_snprintf(nodes[found++], 32, "/dev/%s", s);
    }
    gpo_fs_list_free(names, n);
    return found;
}

static const char *const container_fix =
    "start the container with the NVIDIA Container Toolkit: `docker run --gpus all ...` (CDI: "
    "`--device nvidia.com/gpu=all`)";

static const char *const modprobe_fix =
    "sudo nvidia-modprobe -c 0 -u (or run nvidia-smi once as root): the nodes are made by "
    "nvidia-modprobe or the driver's udev rules when the module loads";

int gpo_cuda_doctor_any_node(const gpo_fs *fs)
{
    char probe[1][32];
    return gpo_fs_exists(fs, "/dev/nvidiactl") || gpu_nodes(fs, probe, 1);
}

/* The NVIDIA module makes its nodes itself, with the mode and group of its
 * NVreg_DeviceFileMode/NVreg_DeviceFileGID options: no udev rule applies. */
#define NODE_MODE_FIX                                                                              \
    "the mode gives no group read-write access: set the NVIDIA module options "                    \
    "NVreg_DeviceFileMode=0660 and NVreg_DeviceFileGID=<gid of video> in "                         \
    "/etc/modprobe.d (or 0666 for everyone), reload the module, and add %s to that "               \
    "group"

static int check_nodes(gpo_dr_run *run, const gpo_cuda_kernel_view *k, int wanted)
{
    gpo_dr_report *r = run->rep;
    const gpo_fs *fs = run->fs;
    char nodes[NV_MAX + 2][32];
    size_t n = 0;
    gpo_strlcpy(nodes[n++], "/dev/nvidiactl", 32);
    gpo_strlcpy(nodes[n++], "/dev/nvidia-uvm", 32);
    size_t n_gpu = gpu_nodes(fs, nodes + n, NV_MAX);
    n += n_gpu;

    gpo_dr_node st[NV_MAX + 2];
    int present = 0, denied = 0;
    gpo_sbuf have;
    gpo_sbuf_init(&have);
    for (size_t i = 0; i < n; i++) {
        gpo_dr_node_stat(fs, &run->user, nodes[i], &st[i]);
        if (st[i].exists) {
            present++;
            gpo_sbuf_appendf(&have, "%s%s", have.len ? ", " : "", nodes[i]);
        }
    }
    if (have.failed)
        r->failed = 1;
    if (!present && !wanted) {
        gpo_dr_finding *f = gpo_dr_add(r, "cuda", "device_nodes", GPO_DR_INFO);
        gpo_dr_say(r, f, "no NVIDIA device nodes");
        gpo_dr_evidence(r, f, "/dev has no nvidiactl, nvidia-uvm or nvidiaN");
        gpo_sbuf_free(&have);
        return 0;
    }
    gpo_dr_finding *f;
    int missing = 0;
    if (!present) {
        /* None at all: one finding, one fix. */
        missing = 1;
        f = gpo_dr_add(r, "cuda", "device_nodes", GPO_DR_PROBLEM);
        gpo_dr_path(r, f, "/dev/nvidiactl");
        gpo_dr_say(r, f, "no NVIDIA device node in /dev");
        gpo_dr_evidence(r, f, "/dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN do not exist%s",
                        k->module ? " although the nvidia module is loaded" : "");
        gpo_dr_fix(r, f, "%s",
                   run->facts.container[0] ? container_fix
                   : k->module             ? modprobe_fix
                                           : "load the NVIDIA driver first (see kernel_driver)");
    }
    for (size_t i = 0; present && i < 2; i++) {
        if (st[i].exists)
            continue;
        missing++;
        f = gpo_dr_add(r, "cuda", "device_nodes", GPO_DR_PROBLEM);
        gpo_dr_path(r, f, nodes[i]);
        gpo_dr_say(r, f, "%s is missing", nodes[i]);
        gpo_dr_evidence(r, f, "%s does not exist; present: %s", nodes[i], have.data);
        if (run->facts.container[0])
            gpo_dr_fix(r, f, "%s", container_fix);
        else if (i == 1)
            gpo_dr_fix(r, f,
                       "sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c 0 (CUDA "
                       "needs the unified-memory module's node)");
        else
            gpo_dr_fix(r, f, "%s", modprobe_fix);
    }
    if (present && k->n_gpus > n_gpu) {
        missing++;
        f = gpo_dr_add(r, "cuda", "device_nodes", n_gpu ? GPO_DR_WARNING : GPO_DR_PROBLEM);
        gpo_dr_say(r, f, "the kernel lists %zu NVIDIA GPU%s but /dev has %zu /dev/nvidiaN node%s",
                   k->n_gpus, k->n_gpus == 1 ? "" : "s", n_gpu, n_gpu == 1 ? "" : "s");
        gpo_dr_evidence(r, f, "present: %s", have.data);
        gpo_dr_fix(r, f, "%s",
                   run->facts.container[0] ? "pass every GPU into the container (`--gpus all`)"
                                           : modprobe_fix);
    }
    if (!missing) {
        f = gpo_dr_add(r, "cuda", "device_nodes", GPO_DR_OK);
        gpo_dr_say(r, f, "the NVIDIA device nodes are present");
        gpo_dr_evidence(r, f, "%s", have.data ? have.data : "");
    }
    const char *paths[NV_MAX + 2];
    for (size_t i = 0; i < n; i++)
        paths[i] = nodes[i];
    denied = gpo_dr_nodes_denied(r, fs, &run->user, "cuda", NODE_MODE_FIX, paths, st, n);
    if (present && !denied) {
        f = gpo_dr_add(r, "cuda", "device_permissions", GPO_DR_OK);
        gpo_dr_say(r, f, "%s may read and write every NVIDIA device node", run->user.name);
        gpo_dr_evidence(r, f, "access(R_OK|W_OK) allowed on %s", have.data ? have.data : "");
    }
    gpo_sbuf_free(&have);
    return present;
}

int gpo_cuda_doctor_nodes(gpo_dr_run *run, const gpo_cuda_kernel_view *k, int wanted, int *blocked)
{
    size_t before = run->rep->n;
    int present = check_nodes(run, k, wanted);
    /* A node the driver needs, missing or denied: the likely cause of
     * CUDA_ERROR_NO_DEVICE, which the library check then points at. */
    *blocked = 0;
    for (size_t i = before; i < run->rep->n; i++)
        *blocked |= run->rep->items[i].status == GPO_DR_PROBLEM;
    return present;
}

/* ---- Container -------------------------------------------------------------------------- */

static const char *const toolkit_fix =
    "start the container with the NVIDIA Container Toolkit: `docker run --gpus all ...` "
    "(Podman/CDI: `--device nvidia.com/gpu=all`; Kubernetes: request nvidia.com/gpu in the "
    "pod's resources)";

void gpo_cuda_doctor_container(gpo_dr_run *run, int nodes_present, int host_gpu)
{
    gpo_dr_report *r = run->rep;
    const char *nvd = gpo_dr_env("NVIDIA_VISIBLE_DEVICES");
    const char *where = run->facts.container;
    gpo_dr_finding *f;
    if (nvd) {
        int none = !*nvd || strcmp(nvd, "void") == 0 || strcmp(nvd, "none") == 0;
        if (none) {
            f = gpo_dr_add(r, "cuda", "container", GPO_DR_WARNING);
            gpo_dr_say(r, f,
                       "NVIDIA_VISIBLE_DEVICES='%s' tells the NVIDIA Container Toolkit "
                       "to pass no GPU in",
                       nvd);
            gpo_dr_fix(r, f,
                       "start the container with NVIDIA_VISIBLE_DEVICES=all (or the GPU "
                       "indices or UUIDs to use)");
        } else if (!nodes_present) {
            f = gpo_dr_add(r, "cuda", "container", GPO_DR_PROBLEM);
            gpo_dr_say(r, f,
                       "NVIDIA_VISIBLE_DEVICES='%s' asks for GPUs, but no /dev/nvidia* "
                       "node is here: the container was started without the NVIDIA "
                       "runtime",
                       nvd);
            gpo_dr_evidence(r, f, "/dev/nvidiactl and /dev/nvidiaN do not exist");
            gpo_dr_fix(r, f, "%s", toolkit_fix);
        } else {
            f = gpo_dr_add(r, "cuda", "container", GPO_DR_OK);
            gpo_dr_say(r, f, "NVIDIA_VISIBLE_DEVICES='%s' and the device nodes are here", nvd);
        }
        gpo_dr_evidence(r, f,
                        "NVIDIA_VISIBLE_DEVICES=%s (read by the NVIDIA Container "
                        "Toolkit when the container starts)",
                        nvd);
        if (where[0])
            gpo_dr_evidence(r, f, "container: %s", where);
        gpo_dr_path(r, f, "NVIDIA_VISIBLE_DEVICES");
        return;
    }
    if (!where[0])
        return;
    if (nodes_present) {
        f = gpo_dr_add(r, "cuda", "container", GPO_DR_OK);
        gpo_dr_say(r, f, "in a container with the NVIDIA device nodes passed in");
    } else {
        f = gpo_dr_add(r, "cuda", "container", host_gpu ? GPO_DR_PROBLEM : GPO_DR_INFO);
        gpo_dr_say(r, f, "in a container without NVIDIA device nodes%s",
                   host_gpu ? ", on a host with an NVIDIA GPU" : "");
        gpo_dr_fix(r, f, "%s%s", host_gpu ? "" : "if the host has an NVIDIA GPU, ", toolkit_fix);
    }
    gpo_dr_evidence(r, f, "container: %s", where);
}
