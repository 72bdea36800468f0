/* The ROCm knobs that export environment variables: HIP_VISIBLE_DEVICES for
 * the selected device, MIOpen's find mode from the workload, and the
 * HSA_OVERRIDE_GFX_VERSION advice, which is never applied by the library.
 * Rules and sources: docs/knobs.md, "ROCm backend". */
#include <stdlib.h>
#include <string.h>

#include "rocm_rules_env.h"

#include "rules.h"
#include "rocm_visible.h"
#include "util/strutil.h"

/* ---- HIP_VISIBLE_DEVICES ----------------------------------------------------
 *
 * The value is the selected GPU's UUID where the runtime accepts one there,
 * else its HIP index. A UUID names the GPU whatever ROCR_VISIBLE_DEVICES
 * hides and whatever order the GPUs enumerate in, so the value stays right
 * in a child whose environment differs; HIP accepts UUIDs in
 * HIP_VISIBLE_DEVICES from HIP 6.2 (HIP CHANGELOG, "HIP 6.2": "Add UUID
 * support for environment variable HIP_VISIBLE_DEVICES"). An index counts
 * the GPUs ROCR_VISIBLE_DEVICES leaves (HIP filters after ROCr), and when
 * this process already inherited HIP_VISIBLE_DEVICES (or
 * CUDA_VISIBLE_DEVICES, which HIP reads when its own is unset or empty),
 * HIP's index i is the i-th entry of that list, which is what the child
 * must be given. */
#define HIP_UUID_IN_VISIBLE 60200000 /* 6.2.0 in HIP_VERSION's encoding */

gpuopt_status gpo_rocm_set_visible(const gpo_rocm_state *st, const gpo_route *route,
                                   const gpuopt_device *dev, struct gpuopt_plan *plan)
{
    const char *uuid = dev->info.uuid;
    int has_uuid = strncmp(uuid, "GPU-", 4) == 0 && uuid[4];
    char hipv[32] = "";

    if (st->hip_ok)
        gpo_hip_version_text(st->hip.runtime_version, hipv, sizeof hipv);
    if (st->hip_ok && st->hip.runtime_version >= HIP_UUID_IN_VISIBLE && has_uuid)
        return gpo_knob_set_string(plan, "rocm.visible_devices", uuid,
                                   "the selected GPU by its UUID: HIP %s accepts UUIDs in "
                                   "HIP_VISIBLE_DEVICES (from 6.2), and a UUID names this GPU "
                                   "whatever ROCR_VISIBLE_DEVICES hides or the order the GPUs "
                                   "enumerate in",
                                   hipv);

    const char *why_index = !st->hip_ok ? "no HIP runtime here to say whether it takes UUIDs; "
                                          "indexes work with every HIP release"
                            : !has_uuid ? "the GPU reports no UUID"
                                        : "HIP releases before 6.2 take only indexes there";
    const char *name = "HIP_VISIBLE_DEVICES";
    const char *list = getenv(name);
    if (!list || !*list) {
        name = "CUDA_VISIBLE_DEVICES";
        list = getenv(name);
    }
    char entry[128];
    if (list && *list &&
        gpo_rocm_hip_list_entry(list, (size_t)route->index, entry, sizeof entry) == 0)
        return gpo_knob_set_string(plan, "rocm.visible_devices", entry,
                                   "the selected GPU is HIP device %d, entry %d of the inherited "
                                   "%s=%s: a child keeps only that entry (%s%s%s)",
                                   (int)route->index, (int)route->index, name, list, why_index,
                                   hipv[0] ? ", HIP " : "", hipv);
    const char *rocr = getenv("ROCR_VISIBLE_DEVICES");
    char value[16];
    gpo_snprintf(value, sizeof value, "%d", (int)route->index);
    return gpo_knob_set_string(plan, "rocm.visible_devices", value,
                               "the selected GPU is HIP device %d%s%s%s; by index because %s%s%s%s",
                               (int)route->index, rocr ? " of those ROCR_VISIBLE_DEVICES=" : "",
                               rocr ? rocr : "",
                               rocr ? " leaves (HIP counts after ROCr's filter)" : "", why_index,
                               hipv[0] ? " (HIP " : "", hipv, hipv[0] ? ")" : "");
}

/* ---- MIOPEN_FIND_MODE ------------------------------------------------------------
 *
 * MIOpen docs, "Find and immediate mode", Find modes: NORMAL (1) benchmarks
 * every applicable solver; HYBRID (3) uses a Find-Db entry when there is one
 * and runs the full Find on a miss; DYNAMIC_HYBRID (5, the default) does the
 * same but on a miss skips the kernels that must be compiled per shape;
 * FAST (2) uses the Find-Db or, on a miss, the immediate-mode fallback (a
 * heuristic) and never benchmarks. Results of a Find are kept in the user
 * Find-Db, so a repeated shape pays once per machine. */
static const struct {
    int32_t fixed_shapes;
    int32_t objective;
    const char *mode;
    const char *why;
} find_modes[] = {
    {1, GPUOPT_OBJECTIVE_THROUGHPUT, "NORMAL",
     "shapes repeat and throughput counts: a full Find benchmarks every applicable convolution "
     "solver once per shape (seconds per new shape, then kept in the user Find-Db) and the "
     "fastest runs from then on"},
    {1, GPUOPT_OBJECTIVE_LATENCY, "HYBRID",
     "shapes repeat but the time to the first result counts: Find-Db entries are used as they "
     "are and only shapes missing from it are benchmarked, once"},
    {0, GPUOPT_OBJECTIVE_THROUGHPUT, "DYNAMIC_HYBRID",
     "shapes change: MIOpen's default; a Find-Db miss benchmarks only the kernels that need no "
     "per-shape compile, so a new shape costs little"},
    {0, GPUOPT_OBJECTIVE_LATENCY, "FAST",
     "shapes change and latency counts: the Find-Db or, on a miss, the immediate-mode "
     "heuristic; nothing is benchmarked, so no call stalls on a search (a kernel may be slower "
     "than the best)"},
};

/* The benchmark flag is what PyTorch passes to miopenFind*'s
 * exhaustiveSearch (torch.backends.cudnn.benchmark on ROCm builds:
 * aten/src/ATen/native/miopen/Conv_miopen.cpp); the find mode says how
 * each Find behaves. */
gpuopt_status gpo_rocm_set_miopen(struct gpuopt_plan *plan)
{
    const gpuopt_workload *w = gpo_plan_workload(plan);
    gpuopt_status s;
    if (!w) {
        gpo_knob_unset(plan, "rocm.miopen_find_mode");
        return gpo_knob_set_bool(plan, "rocm.miopen_benchmark", 0,
                                 "no workload was described: searching solvers pays off only "
                                 "for shapes that repeat");
    }
    if (w->fixed_shapes)
        s = gpo_knob_set_bool(plan, "rocm.miopen_benchmark", 1,
                              "the workload's shapes repeat: MIOpen searches its solvers once "
                              "per shape (kept in the user Find-Db) and reuses the fastest");
    else
        s = gpo_knob_set_bool(plan, "rocm.miopen_benchmark", 0,
                              "the workload does not say its shapes repeat: a search for every "
                              "new shape would cost more than it saves");
    if (s)
        return s;
    for (size_t i = 0; i < sizeof find_modes / sizeof find_modes[0]; i++)
        if (find_modes[i].fixed_shapes == (w->fixed_shapes ? 1 : 0) &&
            find_modes[i].objective == w->objective)
            return gpo_knob_set_string(plan, "rocm.miopen_find_mode", find_modes[i].mode, "%s",
                                       find_modes[i].why);
    return GPUOPT_OK;
}

/* ---- HSA_OVERRIDE_GFX_VERSION advice ------------------------------------------------
 *
 * Which GPUs: consumer and workstation targets that the ROCm Linux support
 * matrix does not list (ROCm 6.2, rocm-install-on-linux
 * docs/reference/system-requirements.rst: Radeon and Radeon PRO support
 * only gfx1100 and gfx1030) but that belong to the same LLVM generic
 * target as a listed one (LLVM AMDGPUUsage, "Generic processors":
 * gfx10-3-generic = gfx1030..gfx1036 with no restrictions; gfx11-generic =
 * gfx1100..gfx1103 and gfx1150..gfx1153), where the listed target's code
 * objects use nothing the unlisted one lacks. ROCr then reports the listed
 * target (the variable's value, major.minor.stepping) and libraries load
 * its code objects. The caveats come from LLVM's AMDGPU.td: only gfx1100,
 * gfx1101 and gfx1151 have the larger VGPR file (FeatureGFX11FullVGPRs).
 * No GCN5 or RDNA1 row: their listed relatives (gfx906) use instructions the
 * unlisted parts lack (gfx9-generic excludes dot and mad-mix), and no RDNA1
 * target is listed at all. */
#define SAME_ISA "the same instructions and registers (LLVM: gfx10-3-generic has no restrictions)"
#define SMALL_VGPR                                                                                 \
    "it has 1024 VGPRs per SIMD where gfx1100 has 1536, so gfx1100 code tuned for its occupancy "  \
    "can fail to launch with hipErrorLaunchOutOfResources"
#define FULL_VGPR "the same VGPR file as gfx1100; only gfx1100's hardware-bug workarounds differ"

static const gpo_rocm_override overrides[] = {
    {"gfx1031", "gfx1030", "10.3.0", "gfx10-3-generic", SAME_ISA},
    {"gfx1032", "gfx1030", "10.3.0", "gfx10-3-generic", SAME_ISA},
    {"gfx1033", "gfx1030", "10.3.0", "gfx10-3-generic", SAME_ISA},
    {"gfx1034", "gfx1030", "10.3.0", "gfx10-3-generic", SAME_ISA},
    {"gfx1035", "gfx1030", "10.3.0", "gfx10-3-generic", SAME_ISA},
    {"gfx1036", "gfx1030", "10.3.0", "gfx10-3-generic", SAME_ISA},
    {"gfx1101", "gfx1100", "11.0.0", "gfx11-generic", FULL_VGPR},
    {"gfx1102", "gfx1100", "11.0.0", "gfx11-generic", SMALL_VGPR},
    {"gfx1103", "gfx1100", "11.0.0", "gfx11-generic", SMALL_VGPR},
    {"gfx1150", "gfx1100", "11.0.0", "gfx11-generic", SMALL_VGPR},
    {"gfx1151", "gfx1100", "11.0.0", "gfx11-generic", FULL_VGPR},
    {"gfx1152", "gfx1100", "11.0.0", "gfx11-generic", SMALL_VGPR},
    {"gfx1153", "gfx1100", "11.0.0", "gfx11-generic", SMALL_VGPR},
};

const gpo_rocm_override *gpo_rocm_override_for(const char *gfx)
{
    if (!gfx)
        return NULL;
    size_t n = strcspn(gfx, ":");
    for (size_t i = 0; i < sizeof overrides / sizeof overrides[0]; i++)
        if (strlen(overrides[i].gfx) == n && strncmp(overrides[i].gfx, gfx, n) == 0)
            return &overrides[i];
    return NULL;
}

gpuopt_status gpo_rocm_set_override_advice(const gpuopt_device *dev, struct gpuopt_plan *plan)
{
    const gpo_rocm_override *o = gpo_rocm_override_for(dev->info.arch_name);
    if (!o) {
        gpo_knob_unset(plan, "rocm.gfx_override_advice");
        return GPUOPT_OK;
    }
    const char *have = getenv("HSA_OVERRIDE_GFX_VERSION");
    return gpo_knob_set_string(
        plan, "rocm.gfx_override_advice", o->value,
        "UNSAFE, not applied: %s is not in ROCm's support matrix (ROCm 6.2 Linux lists gfx1100 "
        "and gfx1030 for Radeon), but it shares %s's ISA (LLVM %s), so with "
        "HSA_OVERRIDE_GFX_VERSION=%s ROCr reports %s and ROCm libraries load their %s code "
        "objects, which is what makes their \"no kernel image\" / hipErrorNoBinaryForGpu errors "
        "go away; %s; AMD does not support it and wrong results or crashes are possible; to "
        "opt in, set the knob rocm.hsa_override_gfx_version=%s (GPUOPT_KNOBS, the config file's "
        "\"knobs\" or gpuopt_context_set_knob): the library never sets it itself%s%s",
        o->gfx, o->as, o->family, o->value, o->as, o->as, o->caveat, o->value,
        have ? "; HSA_OVERRIDE_GFX_VERSION is already set here: " : "", have ? have : "");
}
