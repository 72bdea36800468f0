/* Is the NVIDIA driver new enough for the CUDA runtime that will run on it?
 *
 * The driver reports the newest CUDA version it supports
 * (cuDriverGetVersion: 12020 is CUDA 12.2), which the backend's load
 * report carries. The runtime side is what would run on it: NVRTC, the
 * runtime compiler libgpuopt itself builds kernels with (the backend's own,
 * opened by its loader, cuda_nvrtc.c), and the CUDA runtime libcudart,
 * found by soname as the loader finds them. The CUDA Compatibility guide's
 * rules:
 * a runtime of a newer major version than the driver supports does not
 * work; a newer minor version of the same major works through "minor
 * version compatibility" but PTX it generates cannot be JIT-compiled by the
 * older driver (cuModuleLoad fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
 *
 * When libcuda.so.1 is missing, the kernel module's version (580.65.06)
 * still tells which CUDA it supports, through the release notes' table. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cuda_doctor.h"
#include "cuda_load.h"
#include "util/dl.h"
#include "util/strutil.h"

/* Minimum Linux x86_64 driver of each CUDA toolkit's GA release: CUDA
 * Toolkit Release Notes, Table 3 "CUDA Toolkit and Corresponding Driver
 * Versions" (13.0, 12.x and 11.x editions). Newest first. */
static const struct toolkit_driver {
    int major, minor;
    const char *driver;
} toolkit_drivers[] = {
    {13, 0, "580.65.06"}, {12, 9, "575.51.03"}, {12, 8, "570.26"},    {12, 6, "560.28.03"},
    {12, 5, "555.42.02"}, {12, 4, "550.54.14"}, {12, 3, "545.23.06"}, {12, 2, "535.54.03"},
    {12, 1, "530.30.02"}, {12, 0, "525.60.13"}, {11, 8, "520.61.05"}, {11, 7, "515.43.04"},
    {11, 6, "510.39.01"}, {11, 5, "495.29.05"}, {11, 4, "470.42.01"}, {11, 3, "465.19.01"},
    {11, 2, "460.27.03"}, {11, 1, "455.23"},    {11, 0, "450.36.06"},
};

/* Compares dotted versions numerically ("535.104.05" vs "535.54.03"). */
static int version_cmp(const char *a, const char *b)
{
    for (;;) {
        unsigned long x = 0, y = 0;
        int na = sscanf(a, "%lu", &x), nb = sscanf(b, "%lu", &y);
        if (na != 1)
            x = 0;
        if (nb != 1)
            y = 0;
        if (x != y)
            return x < y ? -1 : 1;
        a = strchr(a, '.');
        b = strchr(b, '.');
        if (!a && !b)
            return 0;
        a = a ? a + 1 : "0";
        b = b ? b + 1 : "0";
    }
}

/* The newest CUDA a kernel driver version supports, from the table; 0 when
 * older than every row. */
static int cuda_for_driver(const char *driver, int *major, int *minor)
{
    for (size_t i = 0; i < sizeof toolkit_drivers / sizeof toolkit_drivers[0]; i++) {
        if (version_cmp(driver, toolkit_drivers[i].driver) >= 0) {
            *major = toolkit_drivers[i].major;
            *minor = toolkit_drivers[i].minor;
            return 1;
        }
    }
    return 0;
}

static const char *driver_for_cuda(int major, int minor)
{
    const char *best = NULL;
    for (size_t i = 0; i < sizeof toolkit_drivers / sizeof toolkit_drivers[0]; i++)
        if (toolkit_drivers[i].major == major && toolkit_drivers[i].minor <= minor && !best)
            best = toolkit_drivers[i].driver;
    return best;
}

typedef struct runtime_lib {
    const char *what;   /* "NVRTC" */
    const char *symbol; /* its version call */
    int found;
    int major, minor;
    char path[512];
    char err[512];
} runtime_lib;

/* The NVRTC libgpuopt builds kernels with: the backend's own, opened once
 * per state with the sonames its driver supports, when the backend loaded
 * (`s`, also kernel-only); else the same loader on the user's choice or any
 * soname. */
static void probe_nvrtc(const gpo_dr_run *run, gpo_cuda_state *s, runtime_lib *rt)
{
    const gpo_nvrtc *nv = NULL;
    gpo_nvrtc *own = NULL;
    gpuopt_status st;
    memset(rt, 0, sizeof *rt);
    rt->what = "NVRTC";
    rt->symbol = "nvrtcVersion";
    if (s) {
        st = gpo_cuda_nvrtc(s, &nv);
    } else {
        st = gpo_nvrtc_open(gpo_dr_library(run, "nvrtc"), 0, &own);
        nv = own;
    }
    if (st == GPUOPT_ERR_NO_MEMORY)
        run->rep->failed = 1; /* not "NVRTC is missing": the report fails */
    if (st) {
        gpo_strlcpy(rt->err, gpo_detail_get(), sizeof rt->err);
        return;
    }
    rt->found = 1;
    rt->major = nv->major;
    rt->minor = nv->minor;
    gpo_strlcpy(rt->path, nv->library, sizeof rt->path);
    gpo_nvrtc_close(own);
}

/* libcudart is not the backend's: it runs on the driver API and never loads
 * the CUDA runtime. A host program does (PyTorch, a CUDA application), so
 * the doctor looks for it here, with the one call it needs. */
typedef struct cudart_api {
    int (*cudaRuntimeGetVersion)(int *version);
} cudart_api;

static const gpo_dl_sym cudart_syms[] = {
    {"cudaRuntimeGetVersion", offsetof(cudart_api, cudaRuntimeGetVersion), GPO_DL_REQUIRED},
};

static void probe_cudart(runtime_lib *rt)
{
    static const char *const names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
                                        NULL};
    cudart_api api;
    char missing[64];
    memset(rt, 0, sizeof *rt);
    rt->what = "the CUDA runtime (libcudart)";
    rt->symbol = "cudaRuntimeGetVersion";
    void *h = gpo_dl_open_first(names, rt->err, sizeof rt->err);
    if (!h)
        return;
    gpo_dl_path(h, rt->path, sizeof rt->path);
    int v = 0;
    int resolved = gpo_dl_resolve(h, cudart_syms, sizeof cudart_syms / sizeof cudart_syms[0], &api,
                                  missing, sizeof missing) == GPUOPT_OK;
    if (resolved && api.cudaRuntimeGetVersion(&v) == 0 && v > 0) {
        rt->found = 1;
        rt->major = v / 1000;
        rt->minor = (v % 1000) / 10;
    } else {
        gpo_snprintf(rt->err, sizeof rt->err, "%s: %s %s", rt->path, rt->symbol,
                     resolved ? "failed" : "is missing");
    }
}

/* The driver side: "12.2" from cuDriverGetVersion, else derived from the
 * kernel module's version. */
typedef struct driver_side {
    int known;
    int major, minor;
    char words[160];
} driver_side;

static void driver_side_read(const gpo_dr_run *run, const char *kernel_version, driver_side *d)
{
    memset(d, 0, sizeof *d);
    const gpo_backend_slot *s = gpo_dr_slot(run, "cuda");
    /* The backend reports the driver's CUDA version ("13.0") when libcuda
     * answered, and the kernel module's ("580.65.06") when it lists GPUs
     * from the kernel only; CUDA majors are far below 100. */
    const char *kernel = kernel_version;
    if (s && s->report.driver_version[0] && !strstr(s->report.library, "/stubs/") &&
        sscanf(s->report.driver_version, "%d.%d", &d->major, &d->minor) == 2) {
        if (d->major > 0 && d->major < 100) {
            d->known = 1;
            gpo_snprintf(d->words, sizeof d->words,
                         "the driver supports CUDA %d.%d (cuDriverGetVersion)", d->major, d->minor);
            return;
        }
        if (!kernel[0])
            kernel = s->report.driver_version;
    }
    d->major = d->minor = 0;
    if (kernel[0] && cuda_for_driver(kernel, &d->major, &d->minor)) {
        d->known = 1;
        gpo_snprintf(d->words, sizeof d->words,
                     "kernel driver %s supports CUDA up to %d.%d (CUDA release notes, table 3)",
                     kernel, d->major, d->minor);
    }
}

static void compare(gpo_dr_run *run, const driver_side *d, const runtime_lib *rt, int hardware)
{
    gpo_dr_report *r = run->rep;
    gpo_dr_finding *f;
    const char *need = driver_for_cuda(rt->major, rt->minor);
    if (!d->known) {
        f = gpo_dr_add(r, "cuda", "runtime_version", GPO_DR_INFO);
        gpo_dr_say(r, f, "%s %d.%d is installed; the driver's CUDA version is unknown", rt->what,
                   rt->major, rt->minor);
        if (need && hardware)
            gpo_dr_fix(r, f, "CUDA %d.%d needs NVIDIA driver >= %s", rt->major, rt->minor, need);
    } else if (d->major > rt->major || (d->major == rt->major && d->minor >= rt->minor)) {
        f = gpo_dr_add(r, "cuda", "runtime_version", GPO_DR_OK);
        gpo_dr_say(r, f, "the driver is new enough for %s %d.%d", rt->what, rt->major, rt->minor);
        gpo_dr_evidence(r, f, "%s", d->words);
    } else if (d->major == rt->major) {
        f = gpo_dr_add(r, "cuda", "runtime_version", GPO_DR_WARNING);
        gpo_dr_say(r, f,
                   "%s %d.%d is newer than the driver's CUDA %d.%d: it runs through minor "
                   "version compatibility, but PTX it produces cannot be JIT-compiled by "
                   "this driver",
                   rt->what, rt->major, rt->minor, d->major, d->minor);
        gpo_dr_evidence(r, f, "%s", d->words);
        gpo_dr_fix(r, f,
                   "update the NVIDIA driver to >= %s (CUDA %d.%d's), or use a CUDA "
                   "%d.%d runtime",
                   need ? need : "the one its release notes name", rt->major, rt->minor, d->major,
                   d->minor);
    } else {
        f = gpo_dr_add(r, "cuda", "runtime_version", GPO_DR_PROBLEM);
        gpo_dr_say(r, f, "the driver is older than %s %d.%d needs: it supports CUDA %d.%d",
                   rt->what, rt->major, rt->minor, d->major, d->minor);
        gpo_dr_evidence(r, f, "%s", d->words);
        gpo_dr_fix(r, f,
                   "update the NVIDIA driver to >= %s (CUDA %d.%d's minimum), or use a "
                   "CUDA %d.x runtime that this driver supports",
                   need ? need : "the version its release notes name", rt->major, rt->minor,
                   d->major);
    }
    gpo_dr_evidence(r, f, "%s: %s %d.%d", rt->path, rt->symbol, rt->major, rt->minor);
    gpo_dr_path(r, f, rt->path);
}

void gpo_cuda_doctor_versions(gpo_dr_run *run, gpo_cuda_state *s, const char *kernel_version,
                              int hardware)
{
    driver_side d;
    runtime_lib libs[2];
    driver_side_read(run, kernel_version, &d);
    probe_nvrtc(run, s, &libs[0]);
    probe_cudart(&libs[1]);
    int any = 0;
    for (size_t i = 0; i < 2; i++) {
        if (libs[i].found) {
            compare(run, &d, &libs[i], hardware);
            any = 1;
        }
    }
    if (any)
        return;
    gpo_dr_finding *f = gpo_dr_add(run->rep, "cuda", "runtime_version", GPO_DR_INFO);
    gpo_dr_say(run->rep, f, "no CUDA runtime or NVRTC found to compare with the driver");
    for (size_t i = 0; i < 2; i++)
        gpo_dr_evidence(run->rep, f, "%s: %s", libs[i].what,
                        libs[i].err[0] ? libs[i].err : "not found");
    if (d.known)
        gpo_dr_evidence(run->rep, f, "%s", d.words);
}
