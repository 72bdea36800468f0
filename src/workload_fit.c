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
#include <string.h>

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

int gpo_fit_quantise_bits(uint64_t model, uint64_t item, uint64_t usable)
{
    if (model + item <= usable)
        return 0;
    for (int bits = 8; bits >= 4; bits -= 4)
        if (gpo_fit_quantised(model, bits) + item <= usable)
            return bits;
    return -4;
}

/* The part of a model at `bits` (16 and above: as it is) that, with one
 * item, does not fit in `usable`: what to keep in host memory; 0 when it
 * fits. */
static uint64_t fit_offload(uint64_t model, int64_t bits, uint64_t item, uint64_t usable)
{
    uint64_t need = gpo_fit_quantised(model, bits) + item;
    return need > usable ? need - usable : 0;
}

/* The largest batch of `item`-byte items beside the device-resident part
 * of the model (at `bits`, less `offload` kept in host memory) in
 * `usable`; 0 when not one item fits. `item` > 0. */
static uint64_t fit_batch(uint64_t model, int64_t bits, uint64_t offload, uint64_t item,
                          uint64_t usable)
{
    uint64_t q = gpo_fit_quantised(model, bits);
    uint64_t resident = q - (offload < q ? offload : q);
    if (!item || resident + item > usable)
        return 0;
    uint64_t batch = (usable - resident) / item;
    return batch > INT32_MAX ? INT32_MAX : batch;
}

void gpo_fit_advise(const gpo_fit_case *c, gpo_fit_advice *out)
{
    char m[32], q[32], it[32], off[32];
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    memset(out, 0, sizeof *out);
    out->batch = -1;
    gpo_format_bytes(c->model, m, sizeof m);
    gpo_format_bytes(c->item, it, sizeof it);
    gpo_sbuf_appendf(&b, "%s", c->usable_text);
    int bits = gpo_fit_quantise_bits(c->model, c->item, c->usable);
    if (bits && c->reduced && !c->quantized) {
        out->bits = bits < 0 ? 4 : bits;
        gpo_format_bytes(gpo_fit_quantised(c->model, out->bits), q, sizeof q);
        gpo_sbuf_appendf(&b, "; model %s does not fit: quantise to %d bits (from 16: %s)%s", m,
                         (int)out->bits, q, bits < 0 ? ", which still does not fit" : "");
    } else if (bits) {
        gpo_sbuf_appendf(&b, "; model %s does not fit, and quantising does not apply (%s)", m,
                         c->quantized ? "the model is already quantised" : c->reduced_why);
    } else if (c->model) {
        gpo_sbuf_appendf(&b, "; model %s fits", m);
    }
    int64_t qbits = out->bits ? out->bits : 16;
    uint64_t offload = fit_offload(c->model, qbits, c->item, c->usable);
    if (offload && c->separate) {
        out->offload = offload;
        gpo_format_bytes(offload, off, sizeof off);
        gpo_sbuf_appendf(&b, "; keep %s of it in host memory (offload)", off);
    } else if (offload) {
        gpo_sbuf_appendf(&b, "; offloading to host memory does not apply: %s", c->separate_why);
    }
    if (c->item) {
        out->batch = (int64_t)fit_batch(c->model, qbits, out->offload, c->item, c->usable);
        gpo_format_bytes(gpo_fit_quantised(c->model, qbits) - out->offload, q, sizeof q);
        if (out->batch)
            gpo_sbuf_appendf(&b, "; batch (usable - %s on the device) / %s per item = %lld items",
                             q, it, (long long)out->batch);
        else
            gpo_sbuf_appendf(&b, "; not one item of %s fits beside %s on the device", it, q);
    }
    gpo_strlcpy(out->text, b.data ? b.data : "", sizeof out->text);
    gpo_sbuf_free(&b);
}

/* Offloading keeps part of the model in host memory and streams it over
 * the bus; it means nothing where the device's memory is the host's. */
int gpo_fit_memory_is_separate(const gpuopt_device *dev, char *why, size_t cap)
{
    if (dev->info.type == GPUOPT_DEVICE_TYPE_CPU)
        return gpo_say(0, why, cap, "%s is a CPU device, whose memory is host memory",
                       dev->info.id);
    if (dev->info.integrated == 1)
        return gpo_say(0, why, cap, "%s is an integrated GPU, which shares host memory",
                       dev->info.id);
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
    if (!size)
        return gpo_say(0, out->how, sizeof out->how, "%s", missing);
    env_budget(env, b);
    if (!b->memory)
        return gpo_say(0, out->how, sizeof out->how, "the device's memory size is unknown");
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
    uint64_t offload = fit_offload(w->model_bytes, bits, w->item_bytes, b.usable);
    char mt[96], item[32], needs[32], usable[32], off[32], sep[256], tail[300] = "";
    model_text(w->model_bytes, bits, mt, sizeof mt);
    if (!offload)
        return gpo_say(GPUOPT_OK, out->how, sizeof out->how, "%s and one item fit in %s", mt,
                       b.text);
    gpo_format_bytes(w->item_bytes, item, sizeof item);
    gpo_format_bytes(need, needs, sizeof needs);
    if (!gpo_fit_memory_is_separate(env->dev, sep, sizeof sep)) {
        gpo_snprintf(out->how, sizeof out->how,
                     "%s + one item %s = %s does not fit in %s, and offloading to host memory "
                     "does not apply: %s",
                     mt, item, needs, b.text, sep);
        return gpo_say(GPUOPT_OK, out->warning, sizeof out->warning,
                       "the workload does not fit: %s", out->how);
    }
    gpo_format_bytes(b.usable, usable, sizeof usable);
    gpo_format_bytes(offload, off, sizeof off);
    if (bits >= 16)
        gpo_snprintf(tail, sizeof tail, " (not quantised: %s)",
                     env->reduced && w->quantized ? "the model is already quantised"
                                                  : env->reduced_why);
    out->present = 1;
    gpo_snprintf(out->value, sizeof out->value, "%" PRIu64, offload);
    return gpo_say(GPUOPT_OK, out->how, sizeof out->how,
                   "%s + one item %s = %s does not fit in %s: keep %s - %s = %s of it in host "
                   "memory%s",
                   mt, item, needs, b.text, needs, usable, off, tail);
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
    char mt[96], item[32], offs[64] = "";
    model_text(w->model_bytes, bits, mt, sizeof mt);
    gpo_format_bytes(w->item_bytes, item, sizeof item);
    if (off) {
        char o[32];
        gpo_format_bytes(off, o, sizeof o);
        gpo_snprintf(offs, sizeof offs, " - %s kept in host memory", o);
    }
    uint64_t batch = fit_batch(w->model_bytes, bits, off, w->item_bytes, b.usable);
    if (!batch)
        return gpo_say(GPUOPT_OK, out->how, sizeof out->how,
                       "%s%s and one item of %s do not fit in %s: no batch to size", mt, offs, item,
                       b.text);
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
