/* The ROCm backend: AMD GPUs through the HIP runtime (libamdhip64, opened at
 * run time), enriched by the kernel's KFD topology, and listed from the KFD
 * topology alone when the runtime is missing or unusable (then the backend
 * reports itself unavailable, with the reason and what to install, and
 * still lists the GPUs: backend.h, "kernel-side discovery").
 * See docs/rocm.md for the behaviour in words. */
#include "rocm_backend.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "rocm_device.h"
#include "rocm_doctor.h"
#include "rocm_hip.h"
#include "rocm_kfd.h"
#include "rocm_rules.h"
#include "rocm_rules_env.h"
#include "rocm_rules_math.h"
#include "rocm_runtime.h"
#include "rocm_state.h"
#include "rocm_support.h"
#include "rocm_visible.h"
#include "util/strutil.h"

typedef gpo_rocm_state rocm_state;

static void rocm_unload(void *state)
{
    /* The runtime and hiprtc stay loaded (backend.h: never dlclose a
     * vendor library). */
    gpo_rocm_state_free(state);
}

/* What /dev/kfd says about a runtime that sees no GPU. */
static void kfd_node_facts(const rocm_state *st, char *out, size_t cap)
{
    if (!gpo_fs_exists(&st->fs, "/dev/kfd"))
        gpo_snprintf(out, cap,
                     "/dev/kfd does not exist: the amdgpu kernel driver is not loaded, or this "
                     "container was started without --device=/dev/kfd --device=/dev/dri");
    else if (gpo_fs_access(&st->fs, "/dev/kfd", R_OK | W_OK) != 0)
        gpo_snprintf(out, cap,
                     "/dev/kfd exists but this user cannot open it: add the user to the "
                     "'render' group (and 'video' on older distributions), then log in again");
    else if (st->kfd.present && st->kfd.n == 0)
        gpo_snprintf(out, cap, "/dev/kfd is usable but the KFD topology lists no GPU");
    else
        gpo_snprintf(out, cap,
                     "/dev/kfd is usable: check HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES and "
                     "that this runtime supports the GPU's gfx target");
}

static const char *advice(gpo_hip_failure kind)
{
    switch (kind) {
    case GPO_HIP_NOT_FOUND:
        return "install the HIP runtime (Debian/Ubuntu: libamdhip64-5; AMD's ROCm "
               "repositories: rocm-hip-runtime) or set GPUOPT_HIP_LIBRARY to its path";
    case GPO_HIP_TOO_OLD: return "install ROCm 5.0 or newer";
    case GPO_HIP_OLD_DRIVER:
        return "the amdgpu kernel driver is older than this HIP runtime needs: update the "
               "kernel or amdgpu-dkms, or use an older ROCm";
    default: return NULL;
    }
}

/* The KFD GPUs HIP would show, in its order; `why` says which variable
 * hid what. */
static gpuopt_status kfd_visible(rocm_state *st, char *why, size_t cap)
{
    const char **uuids = NULL;
    gpuopt_status status = GPUOPT_OK;
    gpo_rocm_visibility v;

    st->n_order = 0;
    if (st->kfd.n == 0)
        return GPUOPT_OK;
    st->order = calloc(st->kfd.n, sizeof *st->order);
    uuids = calloc(st->kfd.n, sizeof *uuids);
    if (!st->order || !uuids) {
        status = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory listing KFD GPUs");
        goto out;
    }
    for (size_t i = 0; i < st->kfd.n; i++)
        uuids[i] = st->kfd.gpus[i].uuid;
    st->n_order = gpo_rocm_visible(getenv("ROCR_VISIBLE_DEVICES"), getenv("HIP_VISIBLE_DEVICES"),
                                   getenv("CUDA_VISIBLE_DEVICES"), uuids, st->kfd.n, st->order, &v);
    gpo_rocm_visibility_describe(&v, why, cap);
out:
    free(uuids);
    return status;
}

static void versions(rocm_state *st)
{
    char amdgpu[32] = "";
    char hipv[32] = "";
    /* Only amdgpu-dkms publishes a module version; the in-tree driver
     * follows the kernel. */
    if (gpo_fs_read(&st->fs, "/sys/module/amdgpu/version", amdgpu, sizeof amdgpu) != GPUOPT_OK)
        amdgpu[0] = '\0';
    if (st->hip.runtime_version >= 0)
        gpo_hip_version_text(st->hip.runtime_version, st->runtime_version,
                             sizeof st->runtime_version);
    if (st->hip.driver_version >= 0)
        gpo_hip_version_text(st->hip.driver_version, hipv, sizeof hipv);
    if (hipv[0] && amdgpu[0])
        gpo_snprintf(st->driver_version, sizeof st->driver_version, "%s (amdgpu %s)", hipv, amdgpu);
    else if (hipv[0])
        gpo_strlcpy(st->driver_version, hipv, sizeof st->driver_version);
    else if (amdgpu[0])
        gpo_snprintf(st->driver_version, sizeof st->driver_version, "amdgpu %s", amdgpu);
}

static gpuopt_status rocm_load(const gpo_backend_env *env, void **state, gpo_backend_report *rep)
{
    rocm_state *st = NULL;
    gpuopt_status status = GPUOPT_OK;
    char why[1024];
    char facts[320] = "";
    char vis[256] = "";

    assert(env && state && rep);
    *state = NULL;
    memset(rep, 0, sizeof *rep);
    int init_pid = gpo_hip_init_pid();
    if (init_pid && init_pid != (int)getpid()) {
        /* Checked before touching the runtime: in such a child HIP calls
         * may hang or fail in ways that say nothing. */
        gpo_snprintf(rep->reason, sizeof rep->reason,
                     "this process was fork()ed from process %d after it had initialised the "
                     "HIP runtime, which cannot be used in such a child: use HIP only in "
                     "processes started with spawn (or fork before initialising HIP)",
                     init_pid);
        return gpo_fail(GPUOPT_ERR_FORKED, "rocm: %s", rep->reason);
    }
    status = gpo_rocm_state_new(gpo_env_fs(env), gpo_env_library(env, "hiprtc"), &st);
    if (status != GPUOPT_OK)
        return status;
    status = gpo_kfd_scan(&st->fs, &st->kfd);
    if (status != GPUOPT_OK)
        goto out;

    /* Without the amdgpu KFD driver (no /dev/kfd, no GPU in the topology)
     * the HIP runtime cannot see a GPU, and opening it costs 15 ms or more
     * (it pulls in LLVM): every machine without an AMD GPU would pay that.
     * Open it anyway when the user named a library. */
    if (!gpo_env_library(env, "hip") && st->kfd.n == 0 && !gpo_fs_exists(&st->fs, "/dev/kfd")) {
        gpo_snprintf(rep->reason, sizeof rep->reason,
                     "no AMD GPU driver here: /dev/kfd does not exist and the KFD topology "
                     "(/sys/class/kfd) lists no GPU, so the HIP runtime was not opened (it could "
                     "not see a GPU); set GPUOPT_HIP_LIBRARY to open it anyway");
        status = gpo_fail(GPUOPT_ERR_UNAVAILABLE, "%s", rep->reason);
        rocm_unload(st);
        st = NULL;
        goto out;
    }

    gpo_hip_failure kind = gpo_hip_open(&st->hip, gpo_env_library(env, "hip"), why, sizeof why);
    gpo_strlcpy(rep->library, st->hip.library, sizeof rep->library);
    versions(st);
    gpo_strlcpy(rep->driver_version, st->driver_version, sizeof rep->driver_version);
    gpo_strlcpy(rep->runtime_version, st->runtime_version, sizeof rep->runtime_version);

    if (kind == GPO_HIP_OK) {
        st->hip_ok = 1;
        gpo_dl_resolve(st->hip.handle, gpo_hip_rt_syms, gpo_hip_rt_n_syms, &st->rt, st->rt_missing,
                       sizeof st->rt_missing);
        if (st->hip.abi_extrapolated)
            gpo_snprintf(rep->reason, sizeof rep->reason,
                         "HIP %s is newer than this library's tables: HIP %d's attribute "
                         "numbering and property layout are assumed",
                         st->runtime_version, st->hip.abi->major);
        else if (st->hip.device_count == 0)
            gpo_snprintf(rep->reason, sizeof rep->reason, "HIP %s reports no GPU",
                         st->runtime_version);
        else if (st->hip.note[0])
            gpo_strlcpy(rep->reason, st->hip.note, sizeof rep->reason);
        gpo_log_debug(gpo_env_log(env), "rocm: HIP %s from %s, %d device(s), KFD %zu GPU(s)",
                      st->runtime_version, st->hip.library, st->hip.device_count, st->kfd.n);
        goto out;
    }

    /* The runtime cannot be used: say why in words, and list what the
     * kernel sees so the user learns a GPU is there. */
    if (kind == GPO_HIP_NO_DEVICE)
        kfd_node_facts(st, facts, sizeof facts);
    status = kfd_visible(st, vis, sizeof vis);
    if (status != GPUOPT_OK)
        goto out;
    const char *fix = advice(kind);
    gpo_sbuf r;
    gpo_sbuf_init(&r);
    gpo_sbuf_append(&r, why);
    if (facts[0])
        gpo_sbuf_appendf(&r, "; %s", facts);
    if (st->n_order > 0)
        gpo_sbuf_appendf(&r,
                         "; %zu AMD GPU(s) found in the kernel's KFD topology are listed "
                         "without the runtime%s%s%s",
                         st->n_order, vis[0] ? " (" : "", vis, vis[0] ? ")" : "");
    else if (st->kfd.n > 0)
        gpo_sbuf_appendf(&r, "; the KFD topology has %zu GPU(s) but %s", st->kfd.n, vis);
    else if (!facts[0] && st->kfd.note[0])
        gpo_sbuf_appendf(&r, "; %s", st->kfd.note);
    if (fix)
        gpo_sbuf_appendf(&r, "; %s", fix);
    gpo_strlcpy(rep->reason, r.data && !r.failed ? r.data : why, sizeof rep->reason);
    gpo_sbuf_free(&r);
    if (st->n_order > 0) {
        /* Unavailable, but with a state: the core still enumerates, and
         * plans for these devices repeat why. */
        gpo_strlcpy(st->unavailable, rep->reason, sizeof st->unavailable);
        status = gpo_fail(GPUOPT_ERR_UNAVAILABLE, "%s", rep->reason);
        goto out;
    }
    status = gpo_fail(kind == GPO_HIP_BROKEN ? GPUOPT_ERR_DRIVER : GPUOPT_ERR_UNAVAILABLE, "%s",
                      rep->reason);
    rocm_unload(st);
    st = NULL;

out:
    if (st && status != GPUOPT_OK && status != GPUOPT_ERR_UNAVAILABLE) {
        rocm_unload(st);
        st = NULL;
    }
    *state = st;
    return status;
}

static gpuopt_status push(gpo_device_list *out, const rocm_state *st, gpuopt_device *dev)
{
    gpo_strlcpy(dev->info.driver_version, st->driver_version, sizeof dev->info.driver_version);
    gpo_strlcpy(dev->info.runtime_version, st->runtime_version, sizeof dev->info.runtime_version);
    return gpo_device_list_push(out, dev);
}

static gpuopt_status enumerate_hip(rocm_state *st, gpo_device_list *out)
{
    int n = st->hip.device_count;
    gpo_hip_device *hd = NULL;
    cJSON **notes = NULL;
    gpuopt_status status = GPUOPT_OK;

    if (n <= 0)
        return GPUOPT_OK;
    hd = calloc((size_t)n, sizeof *hd);
    notes = calloc((size_t)n, sizeof *notes);
    if (!hd || !notes) {
        status = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory listing HIP devices");
        goto out;
    }
    /* Every device first: matching KFD nodes by PCI needs them all. */
    for (int i = 0; i < n; i++) {
        notes[i] = cJSON_CreateArray();
        gpo_hip_query(&st->hip, i, &hd[i], notes[i]);
    }
    for (int i = 0; i < n && status == GPUOPT_OK; i++) {
        gpuopt_device *dev = NULL;
        const gpo_kfd_gpu *k = gpo_rocm_match_kfd(&st->kfd, hd, i);
        status = gpo_rocm_device_from_hip(i, k, &hd[i], notes[i], &dev);
        if (status == GPUOPT_OK)
            status = push(out, st, dev);
    }
out:
    if (notes)
        for (int i = 0; i < n; i++)
            cJSON_Delete(notes[i]);
    free(notes);
    free(hd);
    return status;
}

static gpuopt_status rocm_enumerate(void *state, const gpo_backend_env *env, gpo_device_list *out)
{
    rocm_state *st = state;
    gpuopt_status status = GPUOPT_OK;

    (void)env; /* load read what it needs */
    assert(st && out);
    status = gpo_rocm_check_fork(st, "enumerate");
    if (status != GPUOPT_OK)
        return status;
    if (st->hip_ok)
        return enumerate_hip(st, out);
    for (size_t i = 0; i < st->n_order && status == GPUOPT_OK; i++) {
        gpuopt_device *dev = NULL;
        status = gpo_rocm_device_from_kfd(&st->kfd.gpus[st->order[i]], (int)i, &dev);
        if (status == GPUOPT_OK)
            status = push(out, st, dev);
    }
    return status;
}

/* VRAM from amdgpu's own counters, which need no ROCm user space and no
 * context: /sys/bus/pci/devices/<bus id>/mem_info_vram_total and
 * mem_info_vram_used, in bytes (drivers/gpu/drm/amd/amdgpu/amdgpu_vram_mgr.c;
 * "Memory Info" in the kernel's amdgpu documentation). Through the sysfs
 * root, so recorded trees test it. */
static gpuopt_status sysfs_memory(const rocm_state *st, const char *pci, gpo_memory_reading *out)
{
    char path[128];
    uint64_t total = 0, used = 0;
    gpuopt_status a, b;
    gpo_snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/mem_info_vram_total", pci);
    a = gpo_fs_read_u64(&st->fs, path, &total);
    gpo_snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/mem_info_vram_used", pci);
    b = gpo_fs_read_u64(&st->fs, path, &used);
    if (a != GPUOPT_OK || b != GPUOPT_OK || used > total || !total)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "amdgpu's /sys/bus/pci/devices/%s/mem_info_vram_{total,used} %s", pci,
                        a != GPUOPT_OK || b != GPUOPT_OK ? "cannot be read"
                                                         : "do not make sense (used > total)");
    out->total = total;
    out->used = used;
    out->free = total - used;
    out->source = GPUOPT_MEMORY_SOURCE_KERNEL;
    out->read_ns = gpo_now_ns();
    gpo_snprintf(out->source_text, sizeof out->source_text,
                 "amdgpu sysfs mem_info_vram_total and mem_info_vram_used of %s", pci);
    return GPUOPT_OK;
}

/* amdgpu's counters first (no context, no runtime), then the HIP runtime's
 * hipMemGetInfo where HIP is loaded. */
static gpuopt_status rocm_memory_live(void *state, const gpo_route *route, uint32_t flags,
                                      gpo_memory_reading *out)
{
    rocm_state *st = state;
    (void)flags; /* HIP initialised its devices when it loaded: no context is made here */
    assert(st && route && out);
    memset(out, 0, sizeof *out);
    gpuopt_status status = gpo_rocm_check_fork(st, "memory_live");
    if (status != GPUOPT_OK)
        return status;
    char sysfs_why[512] = "no PCI location to find amdgpu's counters by";
    if (route->info.pci_bus_id[0]) {
        if (sysfs_memory(st, route->info.pci_bus_id, out) == GPUOPT_OK)
            return GPUOPT_OK;
        gpo_strlcpy(sysfs_why, gpo_detail_get(), sizeof sysfs_why);
    }
    if (!st->hip_ok)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "free memory unknown: %s, and no HIP runtime",
                        sysfs_why);
    uint64_t free_bytes = 0, total = 0;
    status = gpo_hip_memory(&st->hip, route->index, &free_bytes, &total);
    if (status != GPUOPT_OK)
        return status;
    out->total = total ? total : route->info.memory_bytes;
    out->free = free_bytes;
    out->used = out->total > free_bytes ? out->total - free_bytes : 0;
    out->source = GPUOPT_MEMORY_SOURCE_RUNTIME;
    out->read_ns = gpo_now_ns();
    gpo_snprintf(out->source_text, sizeof out->source_text, "HIP hipMemGetInfo (%s)", sysfs_why);
    return GPUOPT_OK;
}

/* Every knob the rules (rocm_rules*.c) set; the core refuses one that is
 * not here, and docs/knobs.md documents each ("ROCm backend"). */
/* The knobs the rules (rocm_rules.c and below) set, with their domains;
 * docs/knobs.md ("ROCm backend") documents each. MIOpen's find modes are
 * its documented names ("Find and immediate mode"); PyTorch reads
 * HIPBLASLT_ALLOW_TF32 and TORCH_ALLOW_TF32_CUBLAS_OVERRIDE as "0"/"1"
 * (c10::utils::check_env). */
static const gpo_knob_def rocm_knobs[] = {
    {.name = "rocm.matrix_units",
     .type = GPUOPT_KNOB_STRING,
     .summary = "matrix instructions of this GPU: mfma (CDNA), wmma (RDNA3 and later) or none",
     .words = GPO_WORDS("none", "mfma", "wmma"),
     .maps_to = "which kernel families apply: rocWMMA, Composable Kernel, hipBLASLt MFMA/WMMA"},
    {.name = "rocm.dim_multiple",
     .type = GPUOPT_KNOB_INT,
     .summary = "make matrix dimensions (M, N, K, channels) multiples of this many elements (the "
                "plan's precision) so they fill whole MFMA/WMMA tiles or aligned rows",
     .min = 1,
     .max = 256,
     .units = "elements",
     .maps_to = "pad GEMM M, N, K and channels (pad_to_multiple_of, vocabulary padding)",
     .inputs = GPO_WORDS("rocm.fp8", "rocm.autocast_dtype"),
     .derive = gpo_rocm_derive_dim_multiple},
    {.name = "rocm.tf32",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "allow XF32 (TF32-class) matrix math for fp32 matrix multiplications",
     .maps_to = "torch.backends.cuda.matmul.allow_tf32 (PyTorch on ROCm keeps the cuda names)"},
    {.name = "rocm.hipblaslt_allow_tf32",
     .type = GPUOPT_KNOB_STRING,
     .env = "HIPBLASLT_ALLOW_TF32",
     .summary = "PyTorch on ROCm uses TF32 for matrix multiplications only with 1; 0 refuses it",
     .words = GPO_WORDS("0", "1"),
     .maps_to = "HIPBLASLT_ALLOW_TF32 (read by PyTorch on ROCm)",
     .inputs = GPO_WORDS("rocm.tf32"),
     .derive = gpo_rocm_derive_hipblaslt_allow_tf32},
    {.name = "rocm.torch_tf32_override",
     .type = GPUOPT_KNOB_STRING,
     .env = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
     .summary = "1 makes PyTorch allow TF32 for fp32 matrix multiplications",
     .words = GPO_WORDS("1"),
     .maps_to = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE (read by PyTorch at start)",
     .inputs = GPO_WORDS("rocm.tf32"),
     .derive = gpo_rocm_derive_torch_tf32_override},
    {.name = "rocm.bf16",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "bfloat16 matrix math may be used",
     .maps_to = "torch.autocast(..., dtype=torch.bfloat16), model.to(torch.bfloat16)"},
    {.name = "rocm.fp8",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "8-bit floating point matrix math may be used",
     .maps_to = "torch.float8_e4m3fnuz / float8_e4m3fn GEMMs, hipBLASLt fp8"},
    {.name = "rocm.autocast_dtype",
     .type = GPUOPT_KNOB_STRING,
     .summary = "the reduced precision for mixed-precision math: bfloat16, float16, or float32 "
                "(none)",
     .words = GPO_WORDS("bfloat16", "float16", "float32"),
     .maps_to = "torch.autocast(\"cuda\", dtype=...) on ROCm builds",
     .inputs = GPO_WORDS("rocm.bf16"),
     .derive = gpo_rocm_derive_autocast_dtype},
    {.name = "rocm.miopen_benchmark",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "let MIOpen search its convolution solvers once per input shape and keep the "
                "fastest",
     .maps_to = "torch.backends.cudnn.benchmark on ROCm builds"},
    {.name = "rocm.miopen_find_mode",
     .type = GPUOPT_KNOB_STRING,
     .env = "MIOPEN_FIND_MODE",
     .summary = "how MIOpen picks convolution kernels: NORMAL, HYBRID, DYNAMIC_HYBRID or FAST",
     .words = GPO_WORDS("NORMAL", "FAST", "HYBRID", "DYNAMIC_HYBRID"),
     .maps_to = "MIOPEN_FIND_MODE (read by MIOpen)"},
    {.name = "rocm.deferred_loading",
     .type = GPUOPT_KNOB_STRING,
     .env = "HIP_ENABLE_DEFERRED_LOADING",
     .summary = "when HIP loads a program's kernels: 1 on first use (HIP's default), 0 all at "
                "start",
     .words = GPO_WORDS("0", "1"),
     .maps_to = "HIP_ENABLE_DEFERRED_LOADING (read by the HIP runtime, ROCm clr)"},
    {.name = "rocm.visible_devices",
     .type = GPUOPT_KNOB_STRING,
     .env = "HIP_VISIBLE_DEVICES",
     .summary = "the one GPU the HIP runtime of a program started with this plan shows: the "
                "selected one",
     .maps_to = "HIP_VISIBLE_DEVICES; torch.cuda.set_device / hipSetDevice with the index"},
    {.name = "rocm.gfx_override_advice",
     .type = GPUOPT_KNOB_STRING,
     .summary = "UNSAFE advice, never applied: the HSA_OVERRIDE_GFX_VERSION value that would run "
                "this unlisted GPU as a listed target with the same ISA",
     .form = gpo_rocm_gfx_version_ok,
     .form_text = "a gfx version major.minor.stepping, such as 10.3.0"},
    {.name = "rocm.hsa_override_gfx_version",
     .type = GPUOPT_KNOB_STRING,
     .env = "HSA_OVERRIDE_GFX_VERSION",
     .summary = "UNSAFE, set only when the user opts in: the gfx version ROCr reports for the GPU",
     .form = gpo_rocm_gfx_version_ok,
     .form_text = "a gfx version major.minor.stepping, such as 10.3.0",
     .maps_to = "HSA_OVERRIDE_GFX_VERSION (read by ROCr at start)"},
};

static const gpo_library_var rocm_libraries[] = {
    {"hip", "GPUOPT_HIP_LIBRARY"},
    {"hiprtc", "GPUOPT_HIPRTC_LIBRARY"},
    {"roctx", "GPUOPT_ROCTX_LIBRARY"},
};

const gpo_backend gpo_backend_rocm = {
    .abi = GPO_BACKEND_ABI,
    .name = "rocm",
    .description = "AMD ROCm (HIP runtime, KFD topology)",
    .native_gpu = 1,
    .fork_sensitive = 1,
    .load = rocm_load,
    .unload = rocm_unload,
    .enumerate = rocm_enumerate,
    .tier0 = gpo_rocm_tier0,
    .tier1 = gpo_rocm_tier1,
    .tier2 = NULL, /* the core's measured tier drives .runtime */
    .memory_live = rocm_memory_live,
    .runtime = &gpo_rocm_runtime,
    .apply_device = NULL, /* no device setting is the library's to own on ROCm */
    GPO_BACKEND_TABLE(knobs, rocm_knobs),
    GPO_BACKEND_TABLE(libraries, rocm_libraries),
    .diagnose = gpo_dr_check_rocm,
    .toolchain_dropped = gpo_rocm_toolchain_dropped,
    .ranges = &gpo_rocm_roctx_ranges,
};
