/* Machine facts every vendor block uses: the GPUs on the PCI bus with the
 * kernel driver bound to each, whether this is a container, and where a
 * vendor library could be. Reads through src/fs.h only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor.h"
#include "util/strutil.h"

#define PCI_DIR "/sys/bus/pci/devices"

const char *gpo_dr_env(const char *name)
{
    return secure_getenv(name);
}

/* PCI base and sub-class codes of compute-capable functions (PCI Code and ID
 * Assignment Specification, PCI-SIG: base class 03h display controllers,
 * 12h processing accelerators). NVIDIA data-centre GPUs are 0302 "3D
 * controller", desktop ones 0300 "VGA", AMD Instinct 0380 or 1200. */
static const struct {
    unsigned class16; /* base << 8 | sub */
    const char *word;
} pci_classes[] = {
    {0x0300, "VGA controller"},     {0x0301, "XGA controller"},         {0x0302, "3D controller"},
    {0x0380, "display controller"}, {0x1200, "processing accelerator"},
};

const char *gpo_dr_pci_class_word(unsigned pci_class)
{
    for (size_t i = 0; i < sizeof pci_classes / sizeof pci_classes[0]; i++)
        if (pci_classes[i].class16 == pci_class >> 8)
            return pci_classes[i].word;
    return (pci_class >> 16) == 0x03 ? "display controller" : "accelerator";
}

static int read_hex(const gpo_fs *fs, const char *bdf, const char *file, unsigned *out)
{
    char buf[32];
    if (gpo_fs_readf(fs, buf, sizeof buf, PCI_DIR "/%s/%s", bdf, file) != GPUOPT_OK)
        return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(buf, &end, 16);
    if (end == buf || errno)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* The bound driver is the last path element of the `driver` link. */
static void read_driver(const gpo_fs *fs, const char *bdf, char *out, size_t cap)
{
    char rel[GPO_PATH_MAX], full[GPO_PATH_MAX], target[GPO_PATH_MAX];
    out[0] = '\0';
    gpo_snprintf(rel, sizeof rel, PCI_DIR "/%s/driver", bdf);
    if (gpo_fs_path(fs, rel, full, sizeof full) != GPUOPT_OK)
        return;
    ssize_t n = readlink(full, target, sizeof target - 1);
    if (n <= 0)
        return;
    target[n] = '\0';
    const char *slash = strrchr(target, '/');
    gpo_strlcpy(out, slash ? slash + 1 : target, cap);
}

static void scan_pci(const gpo_fs *fs, gpo_dr_facts *f)
{
    char **names = NULL;
    size_t n = 0;
    if (gpo_fs_list(fs, PCI_DIR, &names, &n) != GPUOPT_OK)
        return;
    f->pci_readable = 1;
    for (size_t i = 0; i < n && f->n_gpus < GPO_DR_MAX_PCI; i++) {
        unsigned vendor, cls, device = 0;
        f->n_pci_scanned++;
        if (read_hex(fs, names[i], "vendor", &vendor) || read_hex(fs, names[i], "class", &cls))
            continue;
        if ((cls >> 16) != 0x03 && (cls >> 16) != 0x12)
            continue;
        read_hex(fs, names[i], "device", &device);
        gpo_dr_pci_gpu *g = &f->gpus[f->n_gpus++];
        gpo_strlcpy(g->bdf, names[i], sizeof g->bdf);
        g->vendor = vendor;
        g->device = device;
        g->pci_class = cls;
        read_driver(fs, names[i], g->driver, sizeof g->driver);
    }
    gpo_fs_list_free(names, n);
}

/* Markers container engines leave: Docker's /.dockerenv, Podman's
 * /run/.containerenv, a cgroup path naming the engine, and systemd's
 * "container" variable (systemd's Container Interface). */
static void detect_container(const gpo_fs *fs, gpo_dr_facts *f)
{
    static const char *const engines[] = {"docker", "kubepods", "containerd", "libpod", "lxc"};
    if (gpo_fs_exists(fs, "/.dockerenv")) {
        gpo_strlcpy(f->container, "/.dockerenv exists (Docker)", sizeof f->container);
        return;
    }
    if (gpo_fs_exists(fs, "/run/.containerenv")) {
        gpo_strlcpy(f->container, "/run/.containerenv exists (Podman)", sizeof f->container);
        return;
    }
    char *cg = NULL;
    if (gpo_fs_read_alloc(fs, "/proc/1/cgroup", &cg, NULL) == GPUOPT_OK) {
        for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
            if (strstr(cg, engines[i])) {
                gpo_snprintf(f->container, sizeof f->container, "/proc/1/cgroup names %s",
                             engines[i]);
                break;
            }
        }
        free(cg);
        if (f->container[0])
            return;
    }
    const char *env = gpo_dr_env("container");
    if (env && *env)
        gpo_snprintf(f->container, sizeof f->container, "container=%s is set", env);
}

void gpo_dr_facts_read(const gpo_fs *fs, gpo_dr_facts *f)
{
    memset(f, 0, sizeof *f);
    scan_pci(fs, f);
    detect_container(fs, f);
}

size_t gpo_dr_pci_count(const gpo_dr_facts *f, unsigned vendor)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n_gpus; i++)
        n += f->gpus[i].vendor == vendor;
    return n;
}

/* Where distributions, container toolkits and WSL put vendor libraries,
 * after LD_LIBRARY_PATH: Debian/Ubuntu multiarch, Fedora/RHEL lib64, the
 * NVIDIA Container Toolkit's /usr/local/nvidia, WSL2's /usr/lib/wsl/lib,
 * ROCm's /opt/rocm/lib. */
#if defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#elif defined(__powerpc64__)
#define MULTIARCH "powerpc64le-linux-gnu"
#else
#define MULTIARCH "linux-gnu"
#endif
static const char *const usual_dirs[] = {
    "/usr/lib/" MULTIARCH,     "/lib/" MULTIARCH,  "/usr/lib64",    "/usr/lib",
    "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib", "/opt/rocm/lib",
};

static int look_in(gpo_dr_report *r, gpo_dr_finding *f, const gpo_fs *fs, const char *dir,
                   const char *file, gpo_sbuf *missing)
{
    char path[GPO_PATH_MAX];
    gpo_snprintf(path, sizeof path, "%s/%s", dir, file);
    if (gpo_fs_exists(fs, path)) {
        gpo_dr_evidence(r, f, "%s exists", path);
        return 1;
    }
    gpo_sbuf_appendf(missing, "%s%s", missing->len ? ", " : "", dir);
    return 0;
}

int gpo_dr_find_library(gpo_dr_report *r, gpo_dr_finding *f, const gpo_fs *fs, const char *file)
{
    gpo_sbuf missing;
    int found = 0;
    gpo_sbuf_init(&missing);
    const char *ld = gpo_dr_env("LD_LIBRARY_PATH");
    if (ld && *ld) {
        /* What the environment names is the live system's, as the loader
         * reads it; only the fixed folders below are under the root. */
        gpo_fs live;
        gpo_fs_init(&live, NULL);
        gpo_dr_evidence(r, f, "LD_LIBRARY_PATH=%s", ld);
        char *copy = gpo_strdup(ld), *save = NULL;
        if (!copy)
            r->failed = 1;
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save))
            found += look_in(r, f, &live, d, file, &missing);
        free(copy);
    } else {
        gpo_dr_evidence(r, f, "LD_LIBRARY_PATH is not set");
    }
    for (size_t i = 0; i < sizeof usual_dirs / sizeof usual_dirs[0]; i++)
        found += look_in(r, f, fs, usual_dirs[i], file, &missing);
    if (missing.len)
        gpo_dr_evidence(r, f, "no %s in %s%s", file, missing.data,
                        gpo_fs_is_recorded(fs) ? " (under the recorded root)" : "");
    if (missing.failed)
        r->failed = 1;
    gpo_sbuf_free(&missing);
    return found;
}
