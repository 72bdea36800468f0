/* Knobs that follow from the described workload and the device's memory,
 * the same on every backend: the largest batch that fits with headroom, and
 * when the model itself does not fit, advice to quantise or to offload, each
 * with its arithmetic in the reason. Without a workload nothing here is set:
 * these knobs are absent, never guessed.
 *
 * Headroom. Level 0 sizes against total memory and keeps 20% back (the
 * runtime, its libraries and fragmentation take a share we cannot see);
 * level 1 sizes against free memory read now and keeps 10% back. */
#include <inttypes.h>
#include <stdio.h>

#include "plan.h"
#include "rules_core.h"
#include "util/strutil.h"

typedef struct budget {
    uint64_t memory;  /* what we size against */
    uint64_t usable;  /* after headroom */
    const char *what; /* "free" / "total" */
    int keep_pct;
    char text[160];   /* "22.0 GiB free x 0.90 = 19.8 GiB usable" */
} budget;

static void make_budget(const struct gpuopt_plan *p, int tier, budget *b)
{
    b->memory = gpo_plan_device_memory(p, &b->what);
    if (tier == 0) { /* level 0 never relies on a free-memory reading */
        b->memory = p->device->info.memory_bytes;
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

/* Advice when the model does not fit: quantise (assuming 16-bit weights, the
 * common storage; the reason says so) when precision may be traded, else
 * offload the part that does not fit to host memory. */
static gpuopt_status advise_does_not_fit(struct gpuopt_plan *p, const gpuopt_workload *w,
                                         const budget *b)
{
    char model[32], why[256];
    gpo_format_bytes(w->model_bytes, model, sizeof model);
    int reduced = gpo_plan_reduced_precision(p, why, sizeof why);
    if (reduced && !w->quantized) {
        for (int bits = 8; bits >= 4; bits -= 4) {
            uint64_t q = w->model_bytes / 16 * (uint64_t)bits;
            if (q + w->item_bytes <= b->usable) {
                char qs[32];
                gpo_format_bytes(q, qs, sizeof qs);
                return gpo_knob_set_int(p, "model.quantize_bits", bits,
                                        "model %s does not fit in %s; at %d bits (from 16) it "
                                        "takes %s, which fits with room for a batch item; %s",
                                        model, b->text, bits, qs, why);
            }
        }
    }
    uint64_t need = w->model_bytes + w->item_bytes;
    uint64_t off = need > b->usable ? need - b->usable : 0;
    char os[32];
    gpo_format_bytes(off, os, sizeof os);
    return gpo_knob_set_bytes(p, "model.offload_bytes", off,
                              "model %s + one item does not fit in %s%s: keep %s of it in host "
                              "memory (%s)",
                              model, b->text,
                              reduced && !w->quantized ? ", not even at 4 bits" : "", os,
                              reduced ? (w->quantized ? "the model is already quantised" : why) :
                                        why);
}

gpuopt_status gpo_rules_workload(struct gpuopt_plan *p, int tier)
{
    const gpuopt_workload *w = gpo_plan_workload(p);
    if (!w || tier > 1 || (!w->model_bytes && !w->item_bytes))
        return GPUOPT_OK;
    budget b;
    make_budget(p, tier, &b);
    if (!b.memory)
        return gpo_plan_warn(p, "the workload's memory knobs are absent: the device's memory "
                                "size is unknown");
    if (w->model_bytes + w->item_bytes > b.usable)
        return advise_does_not_fit(p, w, &b);
    gpo_knob_unset(p, "model.quantize_bits");
    gpo_knob_unset(p, "model.offload_bytes");
    if (!w->item_bytes)
        return GPUOPT_OK;
    uint64_t batch = (b.usable - w->model_bytes) / w->item_bytes;
    char model[32], item[32];
    gpo_format_bytes(w->model_bytes, model, sizeof model);
    gpo_format_bytes(w->item_bytes, item, sizeof item);
    if (batch > INT32_MAX)
        batch = INT32_MAX;
    return gpo_knob_set_int(p, "batch.max_size", (int64_t)batch,
                            "%s; (usable - model %s) / %s per item = %" PRIu64
                            " items%s",
                            b.text, model, item, batch,
                            w->objective == GPUOPT_OBJECTIVE_LATENCY ?
                                " (an upper bound: a latency-bound program uses smaller batches)" :
                                "");
}
