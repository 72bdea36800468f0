/* Whether a described workload fits a device's memory (src/workload_fit.h),
 * and the two derived knobs that follow: the part of the model to keep in
 * host memory, and the largest batch beside the part the device holds.
 * Each carries its arithmetic in its reason. Without a workload these
 * knobs are absent, never guessed.
 *
 * Weights are assumed to be stored in 16 bits (the usual storage of models
 * that are not quantised): quantising to b bits keeps b/16 of model_bytes. */
#include "workload_fit.h"

#include <inttypes.h>
#include <stdio.h>

#include "device.h"
#include "util/strutil.h"

void gpo_fit_budget_make(uint64_t memory, const char *what, uint64_t total, int level,
                         gpo_fit_budget *b)
{
    b->memory = memory;
    b->what = what;
    if (level == 0) { /* level 0 never relies on a free-memory reading */
        b->memory = total;
        b->what = "total";
    }
    b->keep_pct = b->what[0] == 'f' ? 10 : 20;
    b->usable = b->memory / 100 * (uint64_t)(100 - b->keep_pct);
    char m[32], u[32];
    gpo_format_bytes(b->memory, m, sizeof m);
    gpo_format_bytes(b->usable, u, sizeof u);
    gpo_snprintf(b->text, sizeof b->text, "%s %s x %.2f = %s usable", m, b->what,
                 (100 - b->keep_pct) / 100.0, u);
}

uint64_t gpo_fit_quantised(uint64_t model_bytes, int64_t bits)
{
    return bits >= 16 ? model_bytes : model_bytes / 16 * (uint64_t)bits;
}

/* Offloading keeps part of the model in host memory and streams it over
 * the bus; it means nothing where the device's memory is the host's. */
int gpo_fit_memory_is_separate(const gpuopt_device *dev, char *why, size_t cap)
{
    if (dev->info.type == GPUOPT_DEVICE_TYPE_CPU) {
        gpo_snprintf(why, cap, "%s is a CPU device, whose memory is host memory", dev->info.id);
        return 0;
    }
    if (dev->info.integrated == 1) {
        gpo_snprintf(why, cap, "%s is an integrated GPU, which shares host memory", dev->info.id);
        return 0;
    }
    return 1;
}

/* The budget of the level the plan reached (0, or 1 and above). */
static void env_budget(const gpo_derive_env *env, gpo_fit_budget *b)
{
    gpo_fit_budget_make(env->memory, env->memory_what, env->memory_total, env->level >= 1 ? 1 : 0,
                        b);
}

/* The budget for a derivation that needs the workload's `size` (the model's
 * or an item's): 1, or 0 with the knob absent and the missing fact in its
 * `how`. */
static int derive_budget(const gpo_derive_env *env, uint64_t size, const char *missing,
                         gpo_fit_budget *b, gpo_derivation *out)
{
    out->present = 0;
    if (!size) {
        gpo_snprintf(out->how, sizeof out->how, "%s", missing);
        return 0;
    }
    env_budget(env, b);
    if (!b->memory) {
        gpo_snprintf(out->how, sizeof out->how, "the device's memory size is unknown");
        return 0;
    }
    return 1;
}

/* "model 30 GiB at 8 bits = 15 GiB" or "model 30 GiB". */
static void model_text(uint64_t model, int64_t bits, char *out, size_t cap)
{
    char m[32], q[32];
    gpo_format_bytes(model, m, sizeof m);
    gpo_format_bytes(gpo_fit_quantised(model, bits), q, sizeof q);
    if (bits < 16)
        gpo_snprintf(out, cap, "model %s at %d bits = %s", m, (int)bits, q);
    else
        gpo_snprintf(out, cap, "model %s", m);
}

gpuopt_status gpo_derive_offload_bytes(const gpo_knob_input *in, const gpo_derive_env *env,
                                       gpo_derivation *out)
{
    const gpuopt_workload *w = env->workload;
    gpo_fit_budget b;
    if (!derive_budget(env, w ? w->model_bytes : 0, "no model size was described", &b, out))
        return GPUOPT_OK;
    int64_t bits = in[0].present ? in[0].ival : 16;
    uint64_t need = gpo_fit_quantised(w->model_bytes, bits) + w->item_bytes;
    char mt[96], item[32], needs[32], usable[32], off[32], sep[256], tail[300] = "";
    model_text(w->model_bytes, bits, mt, sizeof mt);
    if (need <= b.usable) {
        gpo_snprintf(out->how, sizeof out->how, "%s and one item fit in %s", mt, b.text);
        return GPUOPT_OK;
    }
    gpo_format_bytes(w->item_bytes, item, sizeof item);
    gpo_format_bytes(need, needs, sizeof needs);
    if (!gpo_fit_memory_is_separate(env->dev, sep, sizeof sep)) {
        gpo_snprintf(out->how, sizeof out->how,
                     "%s + one item %s = %s does not fit in %s, and offloading to host memory "
                     "does not apply: %s",
                     mt, item, needs, b.text, sep);
        gpo_snprintf(out->warning, sizeof out->warning, "the workload does not fit: %s", out->how);
        return GPUOPT_OK;
    }
    gpo_format_bytes(b.usable, usable, sizeof usable);
    gpo_format_bytes(need - b.usable, off, sizeof off);
    if (bits >= 16)
        gpo_snprintf(tail, sizeof tail, " (not quantised: %s)",
                     env->reduced && w->quantized ? "the model is already quantised"
                                                  : env->reduced_why);
    out->present = 1;
    gpo_snprintf(out->value, sizeof out->value, "%" PRIu64, need - b.usable);
    gpo_snprintf(out->how, sizeof out->how,
                 "%s + one item %s = %s does not fit in %s: keep %s - %s = %s of it in host "
                 "memory%s",
                 mt, item, needs, b.text, needs, usable, off, tail);
    return GPUOPT_OK;
}

gpuopt_status gpo_derive_batch_max_size(const gpo_knob_input *in, const gpo_derive_env *env,
                                        gpo_derivation *out)
{
    const gpuopt_workload *w = env->workload;
    gpo_fit_budget b;
    if (!derive_budget(env, w ? w->item_bytes : 0, "no item size was described", &b, out))
        return GPUOPT_OK;
    int64_t bits = in[0].present ? in[0].ival : 16;
    uint64_t q = gpo_fit_quantised(w->model_bytes, bits);
    uint64_t off = in[1].present ? (uint64_t)in[1].ival : 0;
    if (off > q)
        off = q;
    uint64_t resident = q - off;
    char mt[96], item[32], offs[64] = "";
    model_text(w->model_bytes, bits, mt, sizeof mt);
    gpo_format_bytes(w->item_bytes, item, sizeof item);
    if (off) {
        char o[32];
        gpo_format_bytes(off, o, sizeof o);
        gpo_snprintf(offs, sizeof offs, " - %s kept in host memory", o);
    }
    if (resident + w->item_bytes > b.usable) {
        gpo_snprintf(out->how, sizeof out->how,
                     "%s%s and one item of %s do not fit in %s: no batch to size", mt, offs, item,
                     b.text);
        return GPUOPT_OK;
    }
    uint64_t batch = (b.usable - resident) / w->item_bytes;
    if (batch > INT32_MAX)
        batch = INT32_MAX;
    out->present = 1;
    gpo_snprintf(out->value, sizeof out->value, "%" PRIu64, batch);
    gpo_snprintf(out->how, sizeof out->how,
                 "%s; (usable - %s%s) / %s per item = %" PRIu64 " items%s", b.text, mt, offs, item,
                 batch,
                 w->objective == GPUOPT_OBJECTIVE_LATENCY
                     ? " (an upper bound: a latency-bound program uses smaller batches)"
                     : "");
    return GPUOPT_OK;
}
