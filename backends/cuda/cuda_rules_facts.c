/* What the CUDA tier-1 rules read, gathered once per plan from the device
 * record (info and details.cuda), the backend state (driver version) and
 * the plan (workload, memory, precision policy), and the texts their
 * reasons share. Below every rule file (cuda_rules.h). */
#include <string.h>

#include "cuda_rules.h"
#include "plan.h"
#include "util/strutil.h"

void gpo_cuda_cc_text(const cuda_facts *f, char *out, size_t cap)
{
    gpo_snprintf(out, cap, "%d.%d", f->cc_major, f->cc_minor);
}

void gpo_cuda_memory_text(const cuda_facts *f, char *out, size_t cap)
{
    char bytes[32];
    gpo_format_bytes(f->memory, bytes, sizeof bytes);
    gpo_snprintf(out, cap, "%s %s", bytes, f->memory_what);
}

static int64_t detail_int(const gpuopt_device *dev, const char *key)
{
    const cJSON *d = dev->details ? cJSON_GetObjectItem(dev->details, "cuda") : NULL;
    const cJSON *v = d ? cJSON_GetObjectItem(d, key) : NULL;
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? 1 : 0;
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

gpuopt_status gpo_cuda_facts_read(const gpo_cuda_state *s, const gpuopt_device *dev,
                                  struct gpuopt_plan *plan, cuda_facts *f)
{
    memset(f, 0, sizeof *f);
    const gpuopt_device_info *in = &dev->info;
    if (in->cc_major < 1 || !(in->features_known & GPUOPT_FEATURE_TF32))
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the driver did not give its compute capability%s%s: rules on "
                        "detected hardware need it",
                        in->id, s && s->kernel_only ? " (" : "",
                        s && s->kernel_only ? "the CUDA driver library is not usable)" : "");
    f->dev = dev;
    f->cc_major = in->cc_major;
    f->cc_minor = in->cc_minor;
    f->arch = in->cc_major * 10 + in->cc_minor;
    f->features = in->features;
    f->warp = in->simd_width > 0 ? in->simd_width : -1;
    f->max_threads_block = in->max_threads_per_block;
    f->max_threads_sm = (int)detail_int(dev, "max_threads_per_multiprocessor");
    f->max_blocks_sm = (int)detail_int(dev, "max_blocks_per_multiprocessor");
    f->l2_bytes = in->l2_bytes ? (int64_t)in->l2_bytes : -1;
    f->persisting_l2_max = detail_int(dev, "max_persisting_l2_bytes");
    f->vmm = (int)detail_int(dev, "virtual_memory_management");
    f->mps = (int)detail_int(dev, "mps_enabled");
    f->driver_version = s ? s->driver_version : -1;
    f->memory = gpo_plan_device_memory(plan, &f->memory_what);
    f->workload = gpo_plan_workload(plan);
    f->reduced = gpo_plan_reduced_precision(plan, f->reduced_why, sizeof f->reduced_why);
    return GPUOPT_OK;
}
