/* The CUDA driver library: was libcuda.so.1 found, is it the driver's or the
 * toolkit's stub, and if cuInit failed, what the failure means and what to
 * do. Reads what the backend's load left in its report (the reason names
 * the CUresult in words, cuda_load.c) and takes the advice for a cuInit
 * result from load's own table, so the doctor opens no library and keeps
 * no second table of driver results; it adds where the library could have
 * been. */
#include <string.h>

#include "cuda_doctor.h"
#include "cuda_load.h"
#include "util/strutil.h"

static int is_stub(const gpo_backend_slot *s)
{
    return strstr(s->report.library, "/stubs/") != NULL ||
           strstr(s->report.reason, "CUDA_ERROR_STUB_LIBRARY") != NULL;
}

/* The user-space half of a driver branch, by distribution. */
static void install_fix(gpo_dr_report *r, gpo_dr_finding *f, const char *kernel_version,
                        const gpo_dr_facts *facts)
{
    char branch[16];
    gpo_strlcpy(branch, kernel_version[0] ? kernel_version : "<branch>", sizeof branch);
    char *dot = strchr(branch, '.');
    if (dot)
        *dot = '\0';
    if (facts->container[0])
        gpo_dr_fix(r, f,
                   "in a container, libcuda.so.1 comes from the host through the NVIDIA "
                   "Container Toolkit: `docker run --gpus all ...` (or "
                   "NVIDIA_DRIVER_CAPABILITIES=compute,utility)");
    else
        gpo_dr_fix(r, f,
                   "install the driver's libcuda.so.1%s%s (Debian: libcuda1; Ubuntu: "
                   "libnvidia-compute-%s; Fedora/RHEL: nvidia-driver-cuda-libs), the same "
                   "version as the kernel module",
                   kernel_version[0] ? " of version " : "", kernel_version, branch);
}

static void check_open_failure(gpo_dr_run *run, const gpo_backend_slot *s,
                               const char *kernel_version, int hardware)
{
    gpo_dr_report *r = run->rep;
    const char *user = gpo_dr_library(run, "cuda");
    gpo_dr_finding *f =
        gpo_dr_add(r, "cuda", "driver_library", hardware ? GPO_DR_PROBLEM : GPO_DR_INFO);
    if (user) {
        gpo_dr_say(r, f, "%s (GPUOPT_CUDA_LIBRARY) cannot be opened", user);
        gpo_dr_path(r, f, user);
    } else {
        gpo_dr_say(r, f,
                   "libcuda.so.1, the NVIDIA driver's CUDA library, is not installed or "
                   "not on the loader's path");
        gpo_dr_path(r, f, "libcuda.so.1");
    }
    gpo_dr_evidence(r, f, "%s", s->report.reason);
    if (user)
        gpo_dr_evidence(r, f, "GPUOPT_CUDA_LIBRARY=%s", user);
    int found = gpo_dr_find_library(r, f, run->fs, "libcuda.so.1");
    if (user)
        gpo_dr_fix(r, f,
                   "point GPUOPT_CUDA_LIBRARY at the driver's libcuda.so.1, or unset it to "
                   "use the loader's search");
    else if (found)
        gpo_dr_fix(r, f,
                   "the library is on disk but the loader does not search there: add its "
                   "directory to /etc/ld.so.conf.d/ and run `sudo ldconfig` (or to "
                   "LD_LIBRARY_PATH)");
    else if (hardware)
        install_fix(r, f, kernel_version, &run->facts);
}

static void check_stub(gpo_dr_run *run, const gpo_backend_slot *s)
{
    gpo_dr_report *r = run->rep;
    const char *user = gpo_dr_library(run, "cuda");
    gpo_dr_finding *f = gpo_dr_add(r, "cuda", "stub_library", GPO_DR_PROBLEM);
    gpo_dr_say(r, f, "the CUDA toolkit's stub libcuda was loaded instead of the driver's");
    gpo_dr_path(r, f, s->report.library[0] ? s->report.library : NULL);
    gpo_dr_evidence(r, f, "library: %s", s->report.library[0] ? s->report.library : "?");
    gpo_dr_evidence(r, f, "%s", s->report.reason);
    if (user) {
        gpo_dr_evidence(r, f, "GPUOPT_CUDA_LIBRARY=%s", user);
        gpo_dr_fix(r, f,
                   "unset GPUOPT_CUDA_LIBRARY (or point it at the driver's libcuda.so.1): "
                   "the stub under lib64/stubs is for linking only; install the NVIDIA "
                   "driver if it is missing");
    } else {
        gpo_dr_fix(r, f,
                   "take the toolkit's lib64/stubs directory out of LD_LIBRARY_PATH and "
                   "/etc/ld.so.conf.d (it is for linking only, then `sudo ldconfig`), and "
                   "install the NVIDIA driver if it is missing");
    }
}

/* LD_LIBRARY_PATH naming a stubs directory shadows the driver for every
 * program, even when this one loaded the right library. */
static void check_stub_path(gpo_dr_run *run, int already)
{
    const char *ld = gpo_dr_env("LD_LIBRARY_PATH");
    if (already || !ld || !strstr(ld, "/stubs"))
        return;
    gpo_dr_finding *f = gpo_dr_add(run->rep, "cuda", "stub_library", GPO_DR_WARNING);
    gpo_dr_say(run->rep, f,
               "LD_LIBRARY_PATH lists a stubs directory, whose libcuda would "
               "shadow the driver's");
    gpo_dr_evidence(run->rep, f, "LD_LIBRARY_PATH=%s", ld);
    gpo_dr_path(run->rep, f, "LD_LIBRARY_PATH");
    gpo_dr_fix(run->rep, f,
               "remove the .../stubs entry from LD_LIBRARY_PATH (stubs are for "
               "linking only)");
}

static void check_init(gpo_dr_run *run, const gpo_backend_slot *s, int hardware, int nodes_blocked)
{
    gpo_dr_report *r = run->rep;
    const char *reason = s->report.reason;
    gpo_dr_finding *f;
    if (strstr(reason, "CUDA_ERROR_NO_DEVICE")) {
        const char *cvd = gpo_dr_env("CUDA_VISIBLE_DEVICES");
        f = gpo_dr_add(r, "cuda", "driver_init", hardware ? GPO_DR_PROBLEM : GPO_DR_INFO);
        gpo_dr_say(r, f, "the NVIDIA driver found no GPU it may use");
        gpo_dr_evidence(r, f, "%s", reason);
        if (cvd)
            gpo_dr_fix(r, f, "CUDA_VISIBLE_DEVICES='%s' is set: see visible_devices", cvd);
        else if (nodes_blocked)
            gpo_dr_fix(r, f,
                       "the device nodes are missing or not accessible: see device_nodes "
                       "and device_permissions");
        else if (hardware)
            gpo_dr_fix(r, f,
                       "`nvidia-smi` and `sudo dmesg | grep -i nvrm` show what the driver "
                       "thinks of the GPU");
        return;
    }
    const char *advice = gpo_cuda_init_advice(reason);
    f = gpo_dr_add(r, "cuda", "driver_init", GPO_DR_PROBLEM);
    gpo_dr_say(r, f, "the NVIDIA driver library loaded but cannot be used");
    gpo_dr_evidence(r, f, "%s", reason);
    gpo_dr_path(r, f, s->report.library);
    if (advice)
        gpo_dr_fix(r, f, "%s", advice);
    else
        gpo_dr_fix(r, f,
                   "the driver's own words are above; `nvidia-smi` and `sudo dmesg | grep "
                   "-i nvrm` say more");
}

void gpo_cuda_doctor_library(gpo_dr_run *run, const char *kernel_version, int hardware,
                             int nodes_blocked)
{
    const gpo_backend_slot *s = gpo_dr_slot(run, "cuda");
    if (!s || s->status == GPUOPT_BACKEND_DISABLED) {
        check_stub_path(run, 0);
        return;
    }
    gpo_dr_report *r = run->rep;
    int stub = is_stub(s);
    if (stub) {
        check_stub(run, s);
    } else if (!s->report.library[0] && s->status != GPUOPT_BACKEND_AVAILABLE &&
               !strstr(s->report.reason, "fork()")) {
        check_open_failure(run, s, kernel_version, hardware);
    } else if (strstr(s->report.reason, " lacks ")) {
        gpo_dr_finding *f = gpo_dr_add(r, "cuda", "driver_library", GPO_DR_PROBLEM);
        gpo_dr_say(r, f, "%s is not a usable NVIDIA driver library", s->report.library);
        gpo_dr_evidence(r, f, "%s", s->report.reason);
        gpo_dr_path(r, f, s->report.library);
        gpo_dr_fix(r, f,
                   "install the NVIDIA driver's libcuda.so.1 and make sure it is the one "
                   "found first (GPUOPT_CUDA_LIBRARY, LD_LIBRARY_PATH)");
    } else if (!s->report.library[0]) {
        check_init(run, s, hardware, nodes_blocked);
    } else {
        gpo_dr_finding *f = gpo_dr_add(r, "cuda", "driver_library", GPO_DR_OK);
        gpo_dr_say(r, f, "the driver's CUDA library is loaded from %s", s->report.library);
        gpo_dr_path(r, f, s->report.library);
        if (s->report.driver_version[0])
            gpo_dr_evidence(r, f, "cuDriverGetVersion: CUDA %s", s->report.driver_version);
        if (s->status != GPUOPT_BACKEND_AVAILABLE)
            check_init(run, s, hardware, nodes_blocked);
    }
    check_stub_path(run, stub);
}
