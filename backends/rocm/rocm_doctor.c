/* The ROCm block: an AMD GPU on the PCI bus driven by amdgpu, the KFD
 * (amdgpu's compute interface: /sys/class/kfd and /dev/kfd), the DRM render
 * nodes ROCm allocates memory through (/dev/dri/renderD*), readable and
 * writable by the user (ROCm's install guide adds users to `render` and
 * `video`), the HIP runtime, the visibility variables and, in a container,
 * the devices passed in.
 *
 * The KFD GPUs and the visibility variables are read with the backend's own
 * readers (rocm_kfd.c, rocm_visible.c), so what this block says about them
 * is what enumeration does. */
#include "rocm_doctor.h"

#include <stdlib.h>
#include <string.h>

#include "doctor/doctor.h"
#include "rocm_kfd.h"
#include "rocm_visible.h"
#include "util/strutil.h"

#define AMD_VENDOR 0x1002
#define KFD_NODES "/sys/class/kfd/kfd/topology/nodes"
#define AMD_MAX 32

typedef struct amd_kernel {
    int amdgpu, radeon, kfd;
    char amdgpu_version[64]; /* /sys/module/amdgpu/version (amdgpu-dkms only) */
    gpo_kfd topology;        /* the GPU nodes, in ROCr's order */
    int n_gpus;
    char render[AMD_MAX][32]; /* AMD render nodes in /dev/dri */
    int n_render;
} amd_kernel;

/* Render nodes whose PCI vendor is AMD (or unknown on an AMD machine). */
static void read_render(const gpo_fs *fs, amd_kernel *k, int amd_machine)
{
    char **names = NULL;
    size_t n = 0;
    if (gpo_fs_list(fs, "/dev/dri", &names, &n) != GPUOPT_OK)
        return;
    for (size_t i = 0; i < n && k->n_render < AMD_MAX; i++) {
        if (strncmp(names[i], "renderD", 7) != 0)
            continue;
        char vendor[32] = "";
        gpo_fs_readf(fs, vendor, sizeof vendor, "/sys/class/drm/%s/device/vendor", names[i]);
        if (strtoul(vendor, NULL, 16) == AMD_VENDOR || (!vendor[0] && amd_machine))
            gpo_snprintf(k->render[k->n_render++], 32, "/dev/dri/%s", names[i]);
    }
    gpo_fs_list_free(names, n);
}

static void check_pci(gpo_dr_run *run)
{
    gpo_dr_report *r = run->rep;
    const gpo_dr_facts *fa = &run->facts;
    size_t n = gpo_dr_pci_count(fa, AMD_VENDOR);
    gpo_dr_finding *ok = NULL;
    if (n == 0) {
        gpo_dr_finding *f = gpo_dr_add(r, "rocm", "pci_gpus", GPO_DR_INFO);
        gpo_dr_say(r, f, "no AMD GPU on the PCI bus");
        gpo_dr_evidence(r, f,
                        fa->pci_readable ? "/sys/bus/pci/devices: no function with vendor "
                                           "0x1002 and a display or accelerator class"
                                         : "/sys/bus/pci/devices cannot be listed");
        return;
    }
    for (size_t i = 0; i < fa->n_gpus; i++) {
        const gpo_dr_pci_gpu *g = &fa->gpus[i];
        if (g->vendor != AMD_VENDOR)
            continue;
        char what[160];
        gpo_snprintf(what, sizeof what, "%s, AMD %s [1002:%04x]", g->bdf,
                     gpo_dr_pci_class_word(g->pci_class), g->device);
        if (strcmp(g->driver, "amdgpu") == 0) {
            if (!ok) {
                ok = gpo_dr_add(r, "rocm", "pci_gpus", GPO_DR_OK);
                gpo_dr_say(r, ok, "%zu AMD GPU%s on the PCI bus", n, n == 1 ? "" : "s");
            }
            gpo_dr_evidence(r, ok, "%s: driver amdgpu", what);
            continue;
        }
        gpo_dr_finding *f;
        if (!g->driver[0]) {
            f = gpo_dr_add(r, "rocm", "pci_gpus", GPO_DR_PROBLEM);
            gpo_dr_say(r, f, "AMD GPU %s has no kernel driver bound", g->bdf);
            gpo_dr_fix(r, f,
                       "sudo modprobe amdgpu; if it does not take the GPU, `sudo dmesg | "
                       "grep amdgpu` names the missing firmware (package linux-firmware "
                       "or firmware-amd-graphics)");
        } else if (strcmp(g->driver, "radeon") == 0) {
            f = gpo_dr_add(r, "rocm", "pci_gpus", GPO_DR_PROBLEM);
            gpo_dr_say(r, f, "AMD GPU %s is driven by radeon, which has no ROCm support", g->bdf);
            gpo_dr_fix(r, f,
                       "for GCN 1 and 2 GPUs, boot with radeon.si_support=0 "
                       "radeon.cik_support=0 amdgpu.si_support=1 amdgpu.cik_support=1; "
                       "older GPUs cannot run ROCm");
        } else {
            f = gpo_dr_add(r, "rocm", "pci_gpus", GPO_DR_WARNING);
            gpo_dr_say(r, f, "AMD GPU %s is bound to %s, not to amdgpu", g->bdf, g->driver);
            gpo_dr_fix(r, f, "%s",
                       strcmp(g->driver, "vfio-pci") == 0
                           ? "it is reserved for a virtual machine; drop the "
                             "vfio-pci override if this host should use it"
                           : "bind it to amdgpu, or leave it if that is intended");
        }
        gpo_dr_evidence(r, f, "%s: driver %s", what, g->driver[0] ? g->driver : "none");
    }
}

static void check_kernel(gpo_dr_run *run, const amd_kernel *k, int on_pci)
{
    gpo_dr_report *r = run->rep;
    gpo_dr_finding *f;
    if (!k->amdgpu && !k->kfd) {
        f = gpo_dr_add(r, "rocm", "kernel_driver", on_pci ? GPO_DR_PROBLEM : GPO_DR_INFO);
        gpo_dr_say(r, f, "the amdgpu kernel driver is not loaded");
        gpo_dr_evidence(r, f, "/sys/module/amdgpu and /sys/class/kfd do not exist");
        if (k->radeon)
            gpo_dr_evidence(r, f, "/sys/module/radeon exists: the radeon driver is loaded");
        if (on_pci)
            gpo_dr_fix(r, f, "sudo modprobe amdgpu (from the kernel, or ROCm's amdgpu-dkms)");
        gpo_dr_path(r, f, "/sys/module/amdgpu");
        return;
    }
    if (!k->kfd) {
        f = gpo_dr_add(r, "rocm", "kernel_driver", GPO_DR_PROBLEM);
        gpo_dr_say(r, f, "amdgpu is loaded without KFD, its compute interface");
        gpo_dr_evidence(r, f, "/sys/module/amdgpu exists; /sys/class/kfd does not");
        gpo_dr_fix(r, f,
                   "use a kernel built with CONFIG_HSA_AMD=y (distribution kernels are), "
                   "or install ROCm's amdgpu-dkms");
        gpo_dr_path(r, f, "/sys/class/kfd");
        return;
    }
    f = gpo_dr_add(r, "rocm", "kernel_driver",
                   k->n_gpus == 0 && on_pci ? GPO_DR_PROBLEM
                   : k->n_gpus              ? GPO_DR_OK
                                            : GPO_DR_INFO);
    gpo_dr_say(r, f, "amdgpu%s%s is loaded and KFD lists %d GPU%s", k->amdgpu_version[0] ? " " : "",
               k->amdgpu_version, k->n_gpus, k->n_gpus == 1 ? "" : "s");
    gpo_dr_path(r, f, KFD_NODES);
    gpo_dr_evidence(r, f, "%s: %d GPU node%s (simd_count above 0)", KFD_NODES, k->n_gpus,
                    k->n_gpus == 1 ? "" : "s");
    if (k->amdgpu_version[0])
        gpo_dr_evidence(r, f, "/sys/module/amdgpu/version: %s (amdgpu-dkms)", k->amdgpu_version);
    if (k->n_gpus == 0 && on_pci)
        gpo_dr_fix(r, f,
                   "KFD does not use this GPU: ROCm supports GFX8 (Fiji, Polaris) and "
                   "newer; `sudo dmesg | grep kfd` says why");
}

/* udev makes /dev/kfd and the render nodes, with the group and mode of
 * its rules. */
#define NODE_MODE_FIX                                                                              \
    "the mode gives no group read-write access: a udev rule such as "                              \
    "SUBSYSTEM==\"kfd\", GROUP=\"render\", MODE=\"0660\" (and the same for drm render "            \
    "nodes) in /etc/udev/rules.d, then `sudo usermod -aG render %s` and log in again"

static int check_nodes(gpo_dr_run *run, const amd_kernel *k, int hardware)
{
    gpo_dr_report *r = run->rep;
    const gpo_fs *fs = run->fs;
    char nodes[AMD_MAX + 1][32];
    gpo_dr_node st[AMD_MAX + 1];
    size_t n = 0;
    gpo_strlcpy(nodes[n++], "/dev/kfd", 32);
    for (int i = 0; i < k->n_render; i++)
        gpo_strlcpy(nodes[n++], k->render[i], 32);
    int present = 0, denied = 0;
    for (size_t i = 0; i < n; i++) {
        gpo_dr_node_stat(fs, &run->user, nodes[i], &st[i]);
        present += st[i].exists;
    }
    if (!present && !hardware) {
        gpo_dr_finding *f = gpo_dr_add(r, "rocm", "device_nodes", GPO_DR_INFO);
        gpo_dr_say(r, f, "no /dev/kfd and no AMD render node");
        gpo_dr_evidence(r, f, "/dev/kfd does not exist");
        return 0;
    }
    gpo_dr_finding *f;
    int missing = 0;
    if (!st[0].exists) {
        missing++;
        f = gpo_dr_add(r, "rocm", "device_nodes", GPO_DR_PROBLEM);
        gpo_dr_say(r, f, "/dev/kfd is missing");
        gpo_dr_path(r, f, "/dev/kfd");
        gpo_dr_evidence(r, f, "/dev/kfd does not exist%s",
                        k->kfd ? " although /sys/class/kfd does" : "");
        gpo_dr_fix(r, f, "%s",
                   run->facts.container[0]
                       ? "pass it into the container: `docker run --device=/dev/kfd "
                         "--device=/dev/dri --group-add video --group-add render ...`"
                       : "load amdgpu with KFD (see kernel_driver); udev makes "
                         "/dev/kfd when it loads");
    }
    if (k->n_render == 0) {
        missing++;
        f = gpo_dr_add(r, "rocm", "device_nodes", GPO_DR_PROBLEM);
        gpo_dr_say(r, f, "no AMD render node in /dev/dri");
        gpo_dr_path(r, f, "/dev/dri");
        gpo_dr_evidence(r, f, "/dev/dri has no renderD* node of an AMD GPU");
        gpo_dr_fix(r, f, "%s",
                   run->facts.container[0]
                       ? "pass /dev/dri into the container (`--device=/dev/dri`)"
                       : "amdgpu creates them when it drives the GPU: see pci_gpus "
                         "and kernel_driver");
    }
    if (!missing) {
        f = gpo_dr_add(r, "rocm", "device_nodes", GPO_DR_OK);
        gpo_dr_say(r, f, "/dev/kfd and %d AMD render node%s are present", k->n_render,
                   k->n_render == 1 ? "" : "s");
        for (size_t i = 0; i < n; i++)
            gpo_dr_evidence(r, f, "%s exists", nodes[i]);
    }
    const char *paths[AMD_MAX + 1];
    for (size_t i = 0; i < n; i++)
        paths[i] = nodes[i];
    denied = gpo_dr_nodes_denied(r, fs, &run->user, "rocm", NODE_MODE_FIX, paths, st, n);
    if (present && !denied) {
        f = gpo_dr_add(r, "rocm", "device_permissions", GPO_DR_OK);
        gpo_dr_say(r, f, "%s may read and write /dev/kfd and the render nodes", run->user.name);
    }
    return present ? (denied || missing ? -1 : 1) : 0;
}

static void check_runtime(gpo_dr_run *run, const amd_kernel *k, int hardware, int nodes)
{
    gpo_dr_report *r = run->rep;
    const gpo_backend_slot *s = gpo_dr_slot(run, "rocm");
    if (!s || s->status == GPUOPT_BACKEND_DISABLED)
        return;
    gpo_dr_finding *f;
    if (s->status == GPUOPT_BACKEND_AVAILABLE && s->report.library[0]) {
        f = gpo_dr_add(r, "rocm", "runtime_library", GPO_DR_OK);
        gpo_dr_say(r, f, "the HIP runtime%s%s is loaded from %s",
                   s->report.runtime_version[0] ? " " : "", s->report.runtime_version,
                   s->report.library);
    } else if (!s->report.library[0]) {
        f = gpo_dr_add(r, "rocm", "runtime_library", hardware ? GPO_DR_PROBLEM : GPO_DR_INFO);
        gpo_dr_say(r, f, "no HIP runtime (libamdhip64) was loaded");
        gpo_dr_evidence(r, f, "%s", s->report.reason);
        if (!gpo_dr_find_library(r, f, run->fs, "libamdhip64.so.6") &&
            !gpo_dr_find_library(r, f, run->fs, "libamdhip64.so.5") && hardware)
            gpo_dr_fix(r, f,
                       "install ROCm's HIP runtime (package hip-runtime-amd from "
                       "repo.radeon.com, or Debian/Ubuntu libamdhip64-5); the GPUs are "
                       "still listed from the KFD topology without it");
        else if (hardware)
            gpo_dr_fix(r, f,
                       "the library is on disk but not on the loader's path: add its "
                       "directory (usually /opt/rocm/lib) to /etc/ld.so.conf.d/ and run "
                       "`sudo ldconfig`, or set GPUOPT_HIP_LIBRARY");
    } else {
        f = gpo_dr_add(r, "rocm", "runtime_library", hardware ? GPO_DR_PROBLEM : GPO_DR_INFO);
        gpo_dr_say(r, f, "the HIP runtime loaded but cannot use a GPU");
        gpo_dr_evidence(r, f, "%s", s->report.reason);
        if (hardware)
            gpo_dr_fix(r, f, "%s",
                       nodes < 0 ? "see device_nodes and device_permissions: HIP "
                                   "needs read-write /dev/kfd and render nodes"
                                 : "`rocminfo` and `sudo dmesg | grep -i kfd` say "
                                   "more");
    }
    gpo_dr_path(r, f, s->report.library[0] ? s->report.library : NULL);
    if (s->report.runtime_version[0] && (k->amdgpu || k->kfd)) {
        char osrel[128] = "";
        gpo_fs_read(run->fs, "/proc/sys/kernel/osrelease", osrel, sizeof osrel);
        gpo_dr_finding *v = gpo_dr_add(r, "rocm", "runtime_version", GPO_DR_INFO);
        gpo_dr_say(r, v, "HIP runtime %s on %s", s->report.runtime_version,
                   k->amdgpu_version[0] ? "amdgpu-dkms" : "the kernel's own amdgpu");
        gpo_dr_evidence(r, v, "amdgpu: %s",
                        k->amdgpu_version[0] ? k->amdgpu_version
                        : osrel[0]           ? osrel
                                             : "version unknown");
        gpo_dr_evidence(r, v,
                        "ROCm's compatibility matrix lists the kernel drivers each "
                        "release supports; a runtime much newer than the driver may lack "
                        "features");
    }
}

static void check_container(gpo_dr_run *run, int kfd_present, int host_gpu)
{
    if (!run->facts.container[0])
        return;
    gpo_dr_report *r = run->rep;
    gpo_dr_finding *f;
    if (kfd_present) {
        f = gpo_dr_add(r, "rocm", "container", GPO_DR_OK);
        gpo_dr_say(r, f, "in a container with /dev/kfd passed in");
    } else {
        f = gpo_dr_add(r, "rocm", "container", host_gpu ? GPO_DR_PROBLEM : GPO_DR_INFO);
        gpo_dr_say(r, f, "in a container without /dev/kfd%s",
                   host_gpu ? ", on a host with an AMD GPU" : "");
        gpo_dr_fix(r, f,
                   "%sstart it with `docker run --device=/dev/kfd --device=/dev/dri "
                   "--group-add video --group-add render ...` (Kubernetes: the AMD GPU "
                   "device plugin's amd.com/gpu resource)",
                   host_gpu ? "" : "if the host has an AMD GPU, ");
    }
    gpo_dr_evidence(r, f, "container: %s", run->facts.container);
}

/* ---- Visibility -------------------------------------------------------------- */

typedef struct visible_arg {
    const char *rocr, *hip, *cuda; /* the values this process has, NULL when unset */
    const char *uuids[GPO_ROCM_VISIBLE_MAX];
    size_t n; /* the KFD GPUs, in ROCr's order */
} visible_arg;

/* gpo_dr_check_visible's reading of one variable: the backend's own parser
 * over every variable at once (HIP filters what ROCr left), reported for
 * the one asked about. Only the variables ROCr and HIP read come here. */
static void parse_visible(const char *variable, const char *value, void *arg, gpo_dr_visible *out)
{
    const visible_arg *a = arg;
    size_t order[GPO_ROCM_VISIBLE_MAX];
    gpo_rocm_visibility v;
    int rocr = strcmp(variable, "ROCR_VISIBLE_DEVICES") == 0;
    int hip = strcmp(variable, "HIP_VISIBLE_DEVICES") == 0;
    gpo_rocm_visible(rocr ? value : a->rocr, hip ? value : a->hip, hip || rocr ? a->cuda : value,
                     a->uuids, a->n, order, &v);
    const gpo_rocm_filter *f = rocr ? &v.rocr : &v.hip;
    memset(out, 0, sizeof *out);
    if (!f->variable || strcmp(f->variable, variable) != 0)
        return; /* not one HIP reads: check_visible never asks */
    out->valid = (int)f->out;
    out->total = (int)f->entries;
    gpo_strlcpy(out->bad, f->stop, sizeof out->bad);
    gpo_strlcpy(out->why_bad, f->why, sizeof out->why_bad);
}

/* A variable that is set but changes nothing for HIP, and why. */
static void not_read(gpo_dr_report *r, const char *variable, const char *value, const char *why)
{
    gpo_dr_finding *f = gpo_dr_add(r, "rocm", "visible_devices", GPO_DR_INFO);
    gpo_dr_say(r, f, "%s='%s' changes nothing for HIP", variable, value);
    gpo_dr_evidence(r, f, "%s", why);
    gpo_dr_path(r, f, variable);
}

static void check_visible(gpo_dr_run *run, const amd_kernel *k, int hardware)
{
    gpo_dr_report *r = run->rep;
    visible_arg *a = calloc(1, sizeof *a);
    const char *vars[3];
    size_t n_vars = 0;
    if (!a) {
        r->failed = 1;
        return;
    }
    a->rocr = gpo_dr_env("ROCR_VISIBLE_DEVICES");
    a->hip = gpo_dr_env("HIP_VISIBLE_DEVICES");
    a->cuda = gpo_dr_env("CUDA_VISIBLE_DEVICES");
    a->n = k->topology.n < GPO_ROCM_VISIBLE_MAX ? k->topology.n : GPO_ROCM_VISIBLE_MAX;
    for (size_t i = 0; i < a->n; i++)
        a->uuids[i] = k->topology.gpus[i].uuid;

    /* What ROCr and HIP read (rocm_visible.c has the sources): ROCr's
     * variable whenever it is set; HIP's when not empty, else
     * CUDA_VISIBLE_DEVICES (which only matters here on a machine with AMD
     * GPUs); GPU_DEVICE_ORDINAL only in AMD's OpenCL runtime. */
    int hip_empty = a->hip && !*a->hip;
    vars[n_vars++] = "ROCR_VISIBLE_DEVICES";
    if (!hip_empty)
        vars[n_vars++] = "HIP_VISIBLE_DEVICES";
    if (hardware && !(a->hip && *a->hip))
        vars[n_vars++] = "CUDA_VISIBLE_DEVICES";
    if (hip_empty)
        not_read(r, "HIP_VISIBLE_DEVICES", "",
                 "HIP reads an empty HIP_VISIBLE_DEVICES as unset and takes "
                 "CUDA_VISIBLE_DEVICES instead, when that is set and not empty");
    if (hardware && a->cuda && a->hip && *a->hip)
        not_read(r, "CUDA_VISIBLE_DEVICES", a->cuda,
                 "HIP reads CUDA_VISIBLE_DEVICES only when HIP_VISIBLE_DEVICES is unset or "
                 "empty, and HIP_VISIBLE_DEVICES is set here");
    const char *ordinal = gpo_dr_env("GPU_DEVICE_ORDINAL");
    if (ordinal)
        not_read(r, "GPU_DEVICE_ORDINAL", ordinal,
                 "AMD's runtime reads GPU_DEVICE_ORDINAL for OpenCL only; HIP reads "
                 "HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES)");

    int noted = 0;
    for (size_t i = 0; i < n_vars; i++) {
        const char *value = gpo_dr_env(vars[i]);
        if (!value || k->n_gpus > 0)
            continue;
        /* Nothing to filter: what the variable says cannot be the reason a
         * GPU is missing (kernel_driver says what is). */
        gpo_dr_finding *f = gpo_dr_add(r, "rocm", "visible_devices", GPO_DR_INFO);
        gpo_dr_say(r, f, "%s='%s' has no AMD GPU to act on", vars[i], value);
        gpo_dr_evidence(r, f, "the KFD topology lists no GPU");
        gpo_dr_path(r, f, vars[i]);
        noted = 1;
    }
    if (!noted)
        gpo_dr_check_visible(r, "rocm", vars, n_vars, parse_visible, a, k->n_gpus, hardware);
    free(a);
}

void gpo_dr_check_rocm(gpo_dr_run *run)
{
    amd_kernel *k = calloc(1, sizeof *k);
    if (!k) {
        run->rep->failed = 1;
        return;
    }
    const gpo_fs *fs = run->fs;
    k->amdgpu = gpo_fs_exists(fs, "/sys/module/amdgpu");
    k->radeon = gpo_fs_exists(fs, "/sys/module/radeon");
    k->kfd = gpo_fs_exists(fs, "/sys/class/kfd");
    gpo_fs_read(fs, "/sys/module/amdgpu/version", k->amdgpu_version, sizeof k->amdgpu_version);
    if (gpo_kfd_scan(fs, &k->topology) != GPUOPT_OK)
        run->rep->failed = 1;
    k->n_gpus = (int)k->topology.n;
    int on_pci = (int)gpo_dr_pci_count(&run->facts, AMD_VENDOR);
    int kfd_node = gpo_fs_exists(fs, "/dev/kfd");
    int hardware = on_pci > 0 || k->amdgpu || k->n_gpus > 0 || kfd_node;
    read_render(fs, k, hardware);

    gpo_dr_check_backend(run, "rocm", hardware);
    check_pci(run);
    check_kernel(run, k, on_pci);
    int nodes = check_nodes(run, k, hardware);
    check_runtime(run, k, hardware, nodes);
    check_visible(run, k, hardware);
    check_container(run, kfd_node, on_pci > 0 || k->amdgpu);
    gpo_kfd_free(&k->topology);
    free(k);
}
