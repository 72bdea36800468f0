/* Opening libcuda.so.1, initialising the driver, and saying in words why it
 * cannot be used. Creates no context: cuInit only. */
#include "cuda_load.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_procfs.h"
#include "util/strutil.h"

/* The process in which this library's cuInit succeeded, 0 before. A fork()ed
 * child inherits the value but not a usable driver: NVIDIA's driver fails
 * cuInit there (CUDA_ERROR_NOT_INITIALIZED), and handles copied from the
 * parent are stale. */
static atomic_int cuda_init_pid;

/* cuInit failures: what load returns (GPUOPT_ERR_UNAVAILABLE when no usable
 * driver or device is there, GPUOPT_ERR_DRIVER when one is there but
 * broken), what the result means (the report's reason) and what to do
 * about it (the doctor's fix; NULL where the doctor says more from what it
 * sees: a hidden or missing GPU, the toolkit's stub). Meanings from the
 * CUresult documentation in cuda.h 13.0 and the CUDA Compatibility guide
 * (forward-compatibility package, "cuda-compat"). */
static const struct init_reason {
    gpo_cu_result result;
    gpuopt_status status;
    const char *words;
    const char *advice;
} init_reasons[] = {
    {GPO_CUDA_ERROR_NO_DEVICE, GPUOPT_ERR_UNAVAILABLE,
     "the NVIDIA driver found no CUDA-capable GPU", NULL},
    /* Present but broken: a library that shadows the driver's. */
    {GPO_CUDA_ERROR_STUB_LIBRARY, GPUOPT_ERR_DRIVER,
     "the CUDA toolkit's stub libcuda was found instead of a driver: install the NVIDIA "
     "driver, and keep the toolkit's lib64/stubs directory (meant for linking only) out of "
     "LD_LIBRARY_PATH and the loader cache",
     NULL},
    {GPO_CUDA_ERROR_INSUFFICIENT_DRIVER, GPUOPT_ERR_DRIVER,
     "the installed NVIDIA driver is older than this CUDA library needs: update the NVIDIA "
     "driver",
     "update the NVIDIA driver"},
    {GPO_CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, GPUOPT_ERR_DRIVER,
     "the installed NVIDIA driver is older than this call needs: update the NVIDIA driver",
     "update the NVIDIA driver"},
    {GPO_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, GPUOPT_ERR_DRIVER,
     "the CUDA driver library does not match the version of the loaded NVIDIA kernel module "
     "(after a driver update without a reboot, or a forward-compatibility libcuda on a kernel "
     "driver it does not support): reboot, or install one matching driver version",
     "the driver library and the loaded kernel module are different versions: reboot after a "
     "driver update, or reinstall one driver version (library and module)"},
    {GPO_CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, GPUOPT_ERR_DRIVER,
     "a CUDA forward-compatibility libcuda (cuda-compat) is in use but this GPU does not "
     "support forward compatibility: take the compat library out of the library path, or "
     "hide the unsupported GPU with CUDA_VISIBLE_DEVICES",
     "a forward-compatibility libcuda (cuda-compat) is in use on a GPU that does not support "
     "it: take the compat directory out of LD_LIBRARY_PATH and /etc/ld.so.conf.d"},
    {GPO_CUDA_ERROR_NOT_INITIALIZED, GPUOPT_ERR_DRIVER,
     "the driver refused to initialise, as it does in a process fork()ed from one that had "
     "already initialised CUDA: use CUDA only in the child, or start children with spawn "
     "instead of fork",
     "this process was fork()ed from one that had initialised CUDA: use CUDA in processes "
     "started with spawn, or fork before anything initialises CUDA"},
    {GPO_CUDA_ERROR_OPERATING_SYSTEM, GPUOPT_ERR_DRIVER,
     "a system call inside the driver failed: check that /dev/nvidiactl and /dev/nvidia* "
     "exist and that this user may read and write them",
     "a system call inside the driver failed: see device_nodes and device_permissions, and in "
     "a container that the devices were passed in"},
    {GPO_CUDA_ERROR_SYSTEM_NOT_READY, GPUOPT_ERR_DRIVER,
     "the system is not ready for CUDA: a driver daemon is missing (on NVSwitch systems, "
     "nvidia-fabricmanager must be running)",
     "a driver daemon is missing: `sudo systemctl enable --now nvidia-fabricmanager` on "
     "NVSwitch systems (its version must match the driver's)"},
    {GPO_CUDA_ERROR_DEVICE_UNAVAILABLE, GPUOPT_ERR_DRIVER,
     "the GPUs are unavailable now: each is in an exclusive-process or prohibited compute "
     "mode, held by another process or closed to all",
     "every GPU is busy in an exclusive compute mode or prohibited: `nvidia-smi -q -d COMPUTE` "
     "shows the mode; `sudo nvidia-smi -c DEFAULT` shares them"},
};

const char *gpo_cuda_init_advice(const char *reason)
{
    for (size_t i = 0; i < sizeof init_reasons / sizeof init_reasons[0]; i++) {
        const char *name = gpo_cuda_result_name(init_reasons[i].result);
        const char *at = name ? strstr(reason, name) : NULL;
        size_t n = name ? strlen(name) : 0;
        /* The whole name, not a longer one it begins. */
        if (at && !(at[n] == '_' || (at[n] >= 'A' && at[n] <= 'Z')))
            return init_reasons[i].advice;
    }
    return NULL;
}

void gpo_cuda_version_text(int version, char *out, size_t cap)
{
    if (version <= 0)
        gpo_snprintf(out, cap, "%s", "");
    else
        gpo_snprintf(out, cap, "%d.%d", version / 1000, (version % 1000) / 10);
}

gpuopt_status gpo_cuda_check_pid(const gpo_cuda_state *s, const char *what)
{
    pid_t now = getpid();
    if (s->pid && s->pid != now)
        return gpo_fail(GPUOPT_ERR_FORKED,
                        "%s: the CUDA driver was initialised in process %ld and this is a "
                        "fork()ed child (%ld), where the parent's driver state is stale: "
                        "create a new context in a process that has not inherited CUDA "
                        "(spawn instead of fork)",
                        what, (long)s->pid, (long)now);
    return GPUOPT_OK;
}

gpuopt_status gpo_cuda_driver_ready(const gpo_cuda_state *s, const char *what)
{
    if (s->kernel_only)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s needs the CUDA driver library, which is not usable here: %s", what,
                        s->why_unusable);
    return gpo_cuda_check_pid(s, what);
}

gpuopt_status gpo_cuda_fail_call(const gpo_cuda_state *s, gpuopt_status status, const char *what,
                                 const char *call, gpo_cu_result r)
{
    char words[256];
    gpo_cuda_result_words(s ? &s->api : NULL, r, words, sizeof words);
    if (gpo_cuda_result_sticky(r))
        return gpo_fail(GPUOPT_ERR_FAULT, "%s: %s failed: %s: %s", what, call, words,
                        GPO_CUDA_STICKY_WORDS);
    return gpo_fail(status, "%s: %s failed: %s", what, call, words);
}

static void state_free(gpo_cuda_state *s)
{
    if (!s)
        return;
    /* The library handle is deliberately kept: unloading a GPU driver while
     * the process runs on is a known source of crashes at exit. */
    gpo_fs_list_free(s->kernel_gpus, s->n_kernel_gpus);
    gpo_nvrtc_close(s->nvrtc);
    gpo_dl_once_destroy(&s->nvrtc_once);
    gpo_nvml_close(s->nvml);
    gpo_dl_once_destroy(&s->nvml_once);
    free(s);
}

static gpuopt_status open_nvrtc(void *arg)
{
    gpo_cuda_state *s = arg;
    return gpo_nvrtc_open(s->nvrtc_path, s->driver_version, &s->nvrtc);
}

gpuopt_status gpo_cuda_nvrtc(gpo_cuda_state *s, const gpo_nvrtc **out)
{
    gpuopt_status st = gpo_dl_once_run(&s->nvrtc_once, open_nvrtc, s);
    *out = st ? NULL : s->nvrtc;
    return st;
}

static gpuopt_status open_nvml(void *arg)
{
    gpo_cuda_state *s = arg;
    return gpo_nvml_open(s->nvml_path, &s->nvml);
}

gpuopt_status gpo_cuda_nvml(gpo_cuda_state *s, const gpo_nvml **out)
{
    gpuopt_status st = gpo_dl_once_run(&s->nvml_once, open_nvml, s);
    *out = st ? NULL : s->nvml;
    return st;
}

void gpo_cuda_unload(void *state)
{
    state_free(state);
}

/* The GPUs the kernel module lists, into the state (replacing any). */
static gpuopt_status scan_kernel_gpus(const gpo_fs *fs, gpo_cuda_state *s)
{
    gpo_fs_list_free(s->kernel_gpus, s->n_kernel_gpus);
    return gpo_cuda_procfs_gpus(fs, &s->kernel_gpus, &s->n_kernel_gpus);
}

/* The library is unusable for `why` (already in words). With
 * GPUOPT_ERR_UNAVAILABLE (no driver library) and GPUs listed by the kernel
 * module, the state turns kernel-only and load returns it with the status,
 * so the core still lists those GPUs (the contract in backend.h). A broken
 * driver (GPUOPT_ERR_DRIVER) lists nothing: its reason counts the GPUs. */
static gpuopt_status unusable(const gpo_backend_env *env, gpo_cuda_state *s,
                              gpo_backend_report *rep, gpuopt_status status, const char *why,
                              const char *advice)
{
    const gpo_fs *fs = gpo_env_fs(env);
    gpo_strlcpy(s->why_unusable, why, sizeof s->why_unusable);
    if (scan_kernel_gpus(fs, s) != GPUOPT_OK) {
        gpo_snprintf(rep->reason, sizeof rep->reason, "%s", why);
        return gpo_fail(status, "cuda: %s", why);
    }
    gpo_cuda_procfs_version(fs, s->kernel_version, sizeof s->kernel_version);
    char kernel[128];
    gpo_snprintf(kernel, sizeof kernel, "the NVIDIA kernel driver%s%s lists %zu GPU%s",
                 s->kernel_version[0] ? " " : "", s->kernel_version, s->n_kernel_gpus,
                 s->n_kernel_gpus == 1 ? "" : "s");
    if (status != GPUOPT_ERR_UNAVAILABLE) {
        gpo_snprintf(rep->reason, sizeof rep->reason, "%s; %s", why, kernel);
        return gpo_fail(status, "cuda: %s", rep->reason);
    }
    s->kernel_only = 1;
    gpo_strlcpy(rep->driver_version, s->kernel_version, sizeof rep->driver_version);
    gpo_snprintf(rep->reason, sizeof rep->reason, "%s; %s, shown without CUDA%s%s", why, kernel,
                 advice ? ": " : "", advice ? advice : "");
    return gpo_fail(status, "cuda: %s", rep->reason);
}

/* What to install when libcuda.so.1 is missing but the kernel module is
 * loaded: the user-space half of the same driver version. */
static void install_advice(const gpo_fs *fs, char *out, size_t cap)
{
    char version[64], branch[16], match[96] = "";
    gpo_cuda_procfs_version(fs, version, sizeof version);
    gpo_strlcpy(branch, version[0] ? version : "<version>", sizeof branch);
    char *dot = strchr(branch, '.');
    if (dot)
        *dot = '\0';
    if (version[0])
        gpo_snprintf(match, sizeof match, " of version %s", version);
    gpo_snprintf(out, cap,
                 "install the driver's libcuda.so.1%s (Debian: libcuda1; Ubuntu: "
                 "libnvidia-compute-%s), or in a container use the NVIDIA Container Toolkit "
                 "(--gpus)",
                 match, branch);
}

static gpuopt_status init_failed(const gpo_backend_env *env, gpo_cuda_state *s,
                                 gpo_backend_report *rep, gpo_cu_result r)
{
    char words[256], why[512];
    const struct init_reason *known = NULL;
    for (size_t i = 0; i < sizeof init_reasons / sizeof init_reasons[0]; i++)
        if (init_reasons[i].result == r)
            known = &init_reasons[i];
    gpo_cuda_result_words(&s->api, r, words, sizeof words);
    if (!known) {
        gpo_snprintf(why, sizeof why, "cuInit failed with %s (library %s)", words, rep->library);
        return unusable(env, s, rep, GPUOPT_ERR_DRIVER, why, NULL);
    }
    gpo_snprintf(why, sizeof why, "cuInit failed with %s: %s (library %s)", words, known->words,
                 rep->library);
    if (r == GPO_CUDA_ERROR_NO_DEVICE) {
        /* Not kernel-only: a GPU the driver hides (CUDA_VISIBLE_DEVICES)
         * must stay hidden; only point at the likely cause. */
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        size_t n = strlen(why);
        gpuopt_status status = known->status;
        if (visible) {
            gpo_snprintf(why + n, sizeof why - n, "; CUDA_VISIBLE_DEVICES='%s' may hide them",
                         visible);
        } else if (scan_kernel_gpus(gpo_env_fs(env), s) == GPUOPT_OK && s->n_kernel_gpus > 0) {
            /* GPUs the kernel has but the driver cannot open: present but
             * broken (device nodes this user may not open, or a container
             * without them), not absent. */
            gpo_snprintf(why + n, sizeof why - n,
                         "; the kernel driver lists %zu GPU%s: check that this user may open "
                         "/dev/nvidia*",
                         s->n_kernel_gpus, s->n_kernel_gpus == 1 ? "" : "s");
            status = GPUOPT_ERR_DRIVER;
        }
        gpo_strlcpy(rep->reason, why, sizeof rep->reason);
        return gpo_fail(status, "%s", why);
    }
    return unusable(env, s, rep, known->status, why, NULL);
}

gpuopt_status gpo_cuda_load(const gpo_backend_env *env, void **state, gpo_backend_report *report)
{
    gpuopt_status st = GPUOPT_OK;
    gpo_cuda_state *s = NULL;
    char err[512], missing[512], why[1024], advice[512];

    assert(env && state && report);
    *state = NULL;
    memset(report, 0, sizeof *report);

    int init_pid = atomic_load(&cuda_init_pid);
    if (init_pid && init_pid != (int)getpid()) {
        gpo_snprintf(report->reason, sizeof report->reason,
                     "this process was fork()ed from process %d after it had initialised CUDA; "
                     "the NVIDIA driver cannot be used in such a child: use CUDA only in "
                     "processes started with spawn (or fork before initialising CUDA)",
                     init_pid);
        return gpo_fail(GPUOPT_ERR_FORKED, "cuda: %s", report->reason);
    }

    s = calloc(1, sizeof *s);
    if (!s) {
        gpo_strlcpy(report->reason, "out of memory", sizeof report->reason);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda: out of memory loading the backend");
    }
    s->driver_version = -1;
    {
        const char *nvrtc = gpo_env_library(env, "nvrtc");
        gpo_strlcpy(s->nvrtc_path, nvrtc ? nvrtc : "", sizeof s->nvrtc_path);
    }
    gpo_dl_once_init(&s->nvrtc_once);
    {
        const char *nvml = gpo_env_library(env, "nvml");
        gpo_strlcpy(s->nvml_path, nvml ? nvml : "", sizeof s->nvml_path);
    }
    gpo_dl_once_init(&s->nvml_once);

    const char *user_path = gpo_env_library(env, "cuda");
    const char *name = user_path ? user_path : GPO_CUDA_DEFAULT_LIBRARY;
    s->handle = gpo_dl_open(name, err, sizeof err);
    if (!s->handle) {
        if (user_path)
            gpo_snprintf(why, sizeof why, "cannot open %s (GPUOPT_CUDA_LIBRARY): %s", user_path,
                         err);
        else
            gpo_snprintf(why, sizeof why,
                         "libcuda.so.1, the NVIDIA driver's CUDA library, cannot be opened "
                         "(%s)",
                         err);
        install_advice(gpo_env_fs(env), advice, sizeof advice);
        st = unusable(env, s, report, GPUOPT_ERR_UNAVAILABLE, why, advice);
        goto out;
    }
    gpo_dl_path(s->handle, report->library, sizeof report->library);
    if (!report->library[0])
        gpo_strlcpy(report->library, name, sizeof report->library);
    gpo_log_debug(gpo_env_log(env), "cuda: opened %s", report->library);

    if (gpo_dl_resolve(s->handle, gpo_cuda_syms, gpo_cuda_n_syms, &s->api, missing,
                       sizeof missing) != GPUOPT_OK) {
        gpo_snprintf(why, sizeof why,
                     "%s lacks %s: it is not an NVIDIA driver library, or one too old for this "
                     "backend",
                     report->library, missing);
        st = unusable(env, s, report, GPUOPT_ERR_DRIVER, why, NULL);
        goto out;
    }
    /* Before cuEventElapsedTime_v2 (CUDA 12.8) the unversioned symbol is
     * the call (GPO_CUDA_ELAPSED_CALL names which one). */
    if (!s->api.cuEventElapsedTime)
        s->api.cuEventElapsedTime = s->api.cuEventElapsedTime_v1;

    /* cuDriverGetVersion needs no cuInit, so the version is known even when
     * initialisation fails. Its failure alone does not make CUDA unusable. */
    int version = -1;
    gpo_cu_result r = s->api.cuDriverGetVersion(&version);
    if (r == GPO_CUDA_SUCCESS && version > 0) {
        s->driver_version = version;
        gpo_cuda_version_text(version, report->driver_version, sizeof report->driver_version);
    }
    gpo_cuda_procfs_version(gpo_env_fs(env), s->kernel_version, sizeof s->kernel_version);

    gpo_cu_result ir = s->api.cuInit(0);
    if (ir != GPO_CUDA_SUCCESS) {
        st = init_failed(env, s, report, ir);
        goto out;
    }
    s->pid = getpid();
    atomic_store(&cuda_init_pid, (int)s->pid);

    if (r != GPO_CUDA_SUCCESS || version <= 0) {
        char words[256];
        gpo_cuda_result_words(&s->api, r, words, sizeof words);
        gpo_snprintf(report->reason, sizeof report->reason,
                     "note: cuDriverGetVersion failed (%s%s), so the CUDA driver version is "
                     "unknown",
                     r == GPO_CUDA_SUCCESS ? "it answered " : words,
                     r == GPO_CUDA_SUCCESS ? "a version of 0" : "");
    }
    gpo_log_debug(gpo_env_log(env), "cuda: driver %s initialised (%s)", report->driver_version,
                  report->library);

out:
    /* A kernel-only state goes back with GPUOPT_ERR_UNAVAILABLE. */
    if (st == GPUOPT_OK || s->kernel_only)
        *state = s;
    else
        state_free(s);
    return st;
}
