/* The OpenCL block: the ICD loader (libOpenCL.so.1) finds drivers through
 * .icd files, each naming one driver library (the Khronos cl_khr_icd
 * extension; ocl-icd's libOpenCL(7)). Where it looks:
 *   OCL_ICD_FILENAMES   ':'-separated driver libraries, loaded as well
 *   OCL_ICD_VENDORS     a directory used instead of /etc/OpenCL/vendors, or
 *                       one .icd file (relative to /etc/OpenCL/vendors
 *                       when it has no '/')
 *   OPENCL_VENDOR_PATH  ocl-icd's other name for the directory
 *   /etc/OpenCL/vendors the default (under GPUOPT_SYSFS_ROOT when set)
 * No .icd file means no OpenCL platform at all; an .icd naming a library
 * that does not load means that vendor's devices are missing. Paths from
 * the variables are used as given (they are the user's live settings). */
#include "cl_doctor.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cl_load.h"
#include "doctor/doctor.h"
#include "util/dl.h"
#include "util/strutil.h"

/* The gpo_dl_sym table of the ICD slice (cl_api.h, OCL_ICD_API). */
#define OCL_ICD_SYM(field, symbol, required, ret, params)                                          \
    {symbol, offsetof(ocl_icd_api, field), required},
static const gpo_dl_sym icd_syms[] = {OCL_ICD_API(OCL_ICD_SYM)};
#undef OCL_ICD_SYM

#define VENDORS_DIR "/etc/OpenCL/vendors"
#define MAX_ICDS 32

typedef struct icd {
    char file[GPO_PATH_MAX]; /* the .icd, or "OCL_ICD_FILENAMES" */
    char library[GPO_PATH_MAX];
} icd;

typedef struct icd_list {
    icd items[MAX_ICDS];
    size_t n;
    char where[GPO_PATH_MAX + 64]; /* where the .icd files were looked for, in words */
    int dir_missing;
} icd_list;

static void add_icd_file(const gpo_fs *fs, const char *path, icd_list *l)
{
    char text[GPO_PATH_MAX];
    if (l->n == MAX_ICDS || gpo_fs_read(fs, path, text, sizeof text) != GPUOPT_OK)
        return;
    char *nl = strchr(text, '\n');
    if (nl)
        *nl = '\0';
    icd *e = &l->items[l->n++];
    gpo_strlcpy(e->file, path, sizeof e->file);
    gpo_strlcpy(e->library, gpo_trim(text), sizeof e->library);
}

static void list_dir(const gpo_fs *fs, const char *dir, icd_list *l)
{
    char **names = NULL, path[GPO_PATH_MAX];
    size_t n = 0;
    if (gpo_fs_list(fs, dir, &names, &n) != GPUOPT_OK) {
        l->dir_missing = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(names[i]);
        if (len < 5 || strcmp(names[i] + len - 4, ".icd") != 0)
            continue;
        gpo_snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        add_icd_file(fs, path, l);
    }
    gpo_fs_list_free(names, n);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void collect(const gpo_fs *fs, icd_list *l)
{
    gpo_fs live;
    gpo_fs_init(&live, NULL);
    const char *files = gpo_dr_env("OCL_ICD_FILENAMES");
    if (files && *files) {
        char *copy = gpo_strdup(files), *save = NULL;
        for (char *p = copy ? strtok_r(copy, ":", &save) : NULL; p && l->n < MAX_ICDS;
             p = strtok_r(NULL, ":", &save)) {
            icd *e = &l->items[l->n++];
            gpo_strlcpy(e->file, "OCL_ICD_FILENAMES", sizeof e->file);
            gpo_strlcpy(e->library, p, sizeof e->library);
        }
        free(copy);
    }
    const char *vendors = gpo_dr_env("OCL_ICD_VENDORS");
    const char *vpath = gpo_dr_env("OPENCL_VENDOR_PATH");
    if (vendors && *vendors) {
        size_t len = strlen(vendors);
        if (is_dir(vendors)) {
            gpo_snprintf(l->where, sizeof l->where, "OCL_ICD_VENDORS=%s", vendors);
            list_dir(&live, vendors, l);
        } else if (len > 4 && strcmp(vendors + len - 4, ".icd") == 0) {
            char path[GPO_PATH_MAX];
            gpo_snprintf(l->where, sizeof l->where, "OCL_ICD_VENDORS=%s", vendors);
            if (strchr(vendors, '/')) {
                add_icd_file(&live, vendors, l);
            } else {
                gpo_snprintf(path, sizeof path, VENDORS_DIR "/%s", vendors);
                add_icd_file(fs, path, l);
            }
        } else {
            gpo_snprintf(l->where, sizeof l->where,
                         "OCL_ICD_VENDORS=%s (neither a directory nor an .icd file)", vendors);
            l->dir_missing = 1;
        }
    } else if (vpath && *vpath) {
        gpo_snprintf(l->where, sizeof l->where, "OPENCL_VENDOR_PATH=%s", vpath);
        list_dir(&live, vpath, l);
    } else {
        gpo_snprintf(l->where, sizeof l->where, "%s%s", VENDORS_DIR,
                     gpo_fs_is_recorded(fs) ? " (under the recorded root)" : "");
        list_dir(fs, VENDORS_DIR, l);
    }
}

static void check_icds(gpo_dr_run *run, const icd_list *l)
{
    gpo_dr_report *r = run->rep;
    gpo_dr_finding *f;
    if (l->n == 0) {
        f = gpo_dr_add(r, "opencl", "icd_registry", GPO_DR_PROBLEM);
        gpo_dr_say(r, f, "no OpenCL driver (ICD) is registered, so OpenCL has no platform");
        gpo_dr_evidence(r, f, "%s: %s", l->where,
                        l->dir_missing ? "does not exist" : "holds no .icd file");
        gpo_dr_evidence(r, f, "OCL_ICD_FILENAMES is %s",
                        gpo_dr_env("OCL_ICD_FILENAMES") ? "empty" : "not set");
        gpo_dr_path(r, f, VENDORS_DIR);
        gpo_dr_fix(r, f,
                   "install an OpenCL driver: pocl-opencl-icd (any CPU), intel-opencl-icd "
                   "(Intel GPUs), mesa-opencl-icd (Mesa's Rusticl), nvidia-opencl-icd or "
                   "the NVIDIA driver's OpenCL part, rocm-opencl-runtime (AMD)");
        return;
    }
    f = gpo_dr_add(r, "opencl", "icd_registry", GPO_DR_OK);
    gpo_dr_say(r, f, "%zu OpenCL driver%s (ICD) registered", l->n, l->n == 1 ? "" : "s");
    gpo_dr_evidence(r, f, "looked in %s", l->where);
    for (size_t i = 0; i < l->n; i++)
        gpo_dr_evidence(r, f, "%s: %s", l->items[i].file, l->items[i].library);

    /* The backend opens only the ICD loader; the loader opens each ICD and
     * leaves out, without a word, one that does not load or is not an ICD
     * (ocl-icd says why only when built with debug support and run with
     * OCL_ICD_DEBUG, libOpenCL(7)). So the doctor opens the library each
     * .icd file names to say which driver is broken and why. Opening one
     * the loader already holds returns the loader's handle; nothing in it
     * is called. */
    for (size_t i = 0; i < l->n; i++) {
        const icd *e = &l->items[i];
        char err[1024], path[GPO_PATH_MAX], missing[8];
        void *h = e->library[0] ? gpo_dl_open(e->library, err, sizeof err) : NULL;
        if (!e->library[0])
            gpo_strlcpy(err, "the file names no library", sizeof err);
        if (!h) {
            f = gpo_dr_add(r, "opencl", "icd_library", GPO_DR_PROBLEM);
            gpo_dr_say(r, f, "%s names %s, which does not load", e->file,
                       e->library[0] ? e->library : "nothing");
            gpo_dr_evidence(r, f, "%s", err);
            gpo_dr_path(r, f, e->file);
            gpo_dr_fix(r, f,
                       "install the package that provides %s (or the driver it belongs "
                       "to), or remove the stale %s",
                       e->library[0] ? e->library : "the library", e->file);
            continue;
        }
        gpo_dl_path(h, path, sizeof path);
        ocl_icd_api icd_api;
        memset(&icd_api, 0, sizeof icd_api);
        /* Every entry is optional: this cannot fail, it fills what is there. */
        gpo_dl_resolve(h, icd_syms, sizeof icd_syms / sizeof icd_syms[0], &icd_api, missing,
                       sizeof missing);
        int icd_ok = icd_api.IcdGetPlatformIDs || icd_api.GetExtensionFunctionAddress;
        f = gpo_dr_add(r, "opencl", "icd_library", icd_ok ? GPO_DR_OK : GPO_DR_PROBLEM);
        gpo_dr_path(r, f, e->file);
        if (icd_ok) {
            gpo_dr_say(r, f, "%s loads", e->library);
        } else {
            gpo_dr_say(r, f, "%s loads but is not an OpenCL ICD", e->library);
            gpo_dr_fix(r, f,
                       "point %s at the vendor's ICD library, not at an OpenCL loader or "
                       "another library",
                       e->file);
        }
        gpo_dr_evidence(r, f, "%s -> %s", e->library, path[0] ? path : e->library);
    }
}

/* The platforms the backend's load found, as evidence: which drivers the
 * loader really got working. */
static void platforms_evidence(gpo_dr_report *r, gpo_dr_finding *f, const ocl_state *st)
{
    if (st->n_platforms == 0)
        gpo_dr_evidence(r, f, "the loader lists no platform");
    for (cl_uint i = 0; i < st->n_platforms; i++) {
        const ocl_platform *p = &st->platforms[i];
        if (p->devices_err != CL_SUCCESS)
            gpo_dr_evidence(r, f, "platform \"%s\" (%s): clGetDeviceIDs failed (%s, %d)", p->name,
                            p->version, gpo_ocl_error_name(p->devices_err), (int)p->devices_err);
        else
            gpo_dr_evidence(r, f, "platform \"%s\" (%s): %u device%s", p->name, p->version,
                            p->n_devices, p->n_devices == 1 ? "" : "s");
    }
}

/* What the backend's own load found: the loader it opened (the library
 * the user chose, or the soname) and its platforms. */
static void check_loader(gpo_dr_run *run, size_t n_icds)
{
    const gpo_backend_slot *s = gpo_dr_slot(run, "opencl");
    if (!s || s->status == GPUOPT_BACKEND_DISABLED)
        return;
    gpo_dr_report *r = run->rep;
    gpo_dr_finding *f;
    if (s->report.library[0]) {
        f = gpo_dr_add(r, "opencl", "loader_library", GPO_DR_OK);
        gpo_dr_say(r, f, "the OpenCL ICD loader is loaded from %s", s->report.library);
        gpo_dr_path(r, f, s->report.library);
        /* The state is the backend's (cl_load.h) once it loaded. */
        if (s->status == GPUOPT_BACKEND_AVAILABLE && s->state)
            platforms_evidence(r, f, s->state);
        return;
    }
    if (s->status == GPUOPT_BACKEND_AVAILABLE)
        return;
    const char *user = gpo_dr_library(run, "opencl");
    const char *name = gpo_ocl_library_name(user);
    f = gpo_dr_add(r, "opencl", "loader_library", n_icds ? GPO_DR_PROBLEM : GPO_DR_INFO);
    gpo_dr_say(r, f, "the OpenCL ICD loader (%s) was not loaded", name);
    gpo_dr_evidence(r, f, "%s", s->report.reason);
    gpo_dr_path(r, f, name);
    if (user && user[0])
        gpo_dr_evidence(r, f, "GPUOPT_OPENCL_LIBRARY or the config file chose %s", user);
    else
        gpo_dr_find_library(r, f, run->fs, name);
    gpo_dr_fix(r, f,
               "install the ICD loader: ocl-icd-libopencl1 (Debian/Ubuntu), "
               "ocl-icd (Fedora/RHEL), or point GPUOPT_OPENCL_LIBRARY at it");
}

/* udev makes the render nodes, with the group and mode of its rules (the
 * kfd rule of ROCm's fix does not apply to other vendors' GPUs). */
#define NODE_MODE_FIX                                                                              \
    "the mode gives no group read-write access: a udev rule such as SUBSYSTEM==\"drm\", "          \
    "KERNEL==\"renderD*\", GROUP=\"render\", MODE=\"0660\" in /etc/udev/rules.d, then "            \
    "`sudo usermod -aG render %s` and log in again"

/* DRM render nodes of GPUs other than AMD's and NVIDIA's (Intel's compute
 * runtime and Mesa's Rusticl work through them). */
static void check_render_nodes(gpo_dr_run *run)
{
    char **names = NULL;
    size_t n = 0, seen = 0;
    char paths[MAX_ICDS][64];
    const char *ptrs[MAX_ICDS];
    gpo_dr_node nodes[MAX_ICDS];
    if (gpo_fs_list(run->fs, "/dev/dri", &names, &n) != GPUOPT_OK)
        return;
    for (size_t i = 0; i < n && seen < MAX_ICDS; i++) {
        char vendor[32] = "";
        if (strncmp(names[i], "renderD", 7) != 0)
            continue;
        gpo_fs_readf(run->fs, vendor, sizeof vendor, "/sys/class/drm/%s/device/vendor", names[i]);
        unsigned long v = strtoul(vendor, NULL, 16);
        if (!vendor[0] || v == 0x1002 || v == 0x10de)
            continue; /* AMD's are the ROCm block's; NVIDIA's serve no compute */
        gpo_snprintf(paths[seen], sizeof paths[seen], "/dev/dri/%s", names[i]);
        ptrs[seen] = paths[seen];
        gpo_dr_node_stat(run->fs, &run->user, paths[seen], &nodes[seen]);
        seen++;
    }
    gpo_fs_list_free(names, n);
    if (seen && !gpo_dr_nodes_denied(run->rep, run->fs, &run->user, "opencl", NODE_MODE_FIX, ptrs,
                                     nodes, seen)) {
        gpo_dr_finding *f = gpo_dr_add(run->rep, "opencl", "device_permissions", GPO_DR_OK);
        gpo_dr_say(run->rep, f, "%s may read and write the GPU render nodes", run->user.name);
    }
}

void gpo_ocl_diagnose(gpo_dr_run *run)
{
    icd_list *l = calloc(1, sizeof *l);
    if (!l) {
        run->rep->failed = 1;
        return;
    }
    collect(run->fs, l);
    gpo_dr_check_backend(run, "opencl", l->n > 0);
    check_icds(run, l);
    check_loader(run, l->n);
    check_render_nodes(run);
    free(l);
}
