/* The core's workload rule, the same on every backend: advice to quantise
 * when the described model does not fit the device's memory and precision
 * may be traded, with the arithmetic in the reason. The knobs that follow
 * from it (model.offload_bytes, batch.max_size) are derived after the
 * user's overrides (src/workload_fit.c). Without a workload nothing here is
 * set. */
#include "device.h"
#include "rules.h"
#include "rules_core.h"
#include "util/strutil.h"
#include "workload_fit.h"

gpuopt_status gpo_rules_workload(struct gpuopt_plan *p, int tier)
{
    const gpuopt_workload *w = gpo_plan_workload(p);
    if (!w || tier > 1 || (!w->model_bytes && !w->item_bytes))
        return GPUOPT_OK;
    const gpuopt_device *dev = gpo_plan_device(p);
    const char *what;
    uint64_t memory = gpo_plan_device_memory(p, &what);
    gpo_fit_budget b;
    gpo_fit_budget_make(memory, what, dev->info.memory_bytes, tier, &b);
    gpo_knob_unset(p, "model.quantize_bits");
    if (!b.memory)
        return tier == 0 ? gpo_plan_warn(p, "the workload's memory knobs are absent: the "
                                            "device's memory size is unknown")
                         : GPUOPT_OK;
    int bits = gpo_fit_quantise_bits(w->model_bytes, w->item_bytes, b.usable);
    if (!bits)
        return GPUOPT_OK;
    char why[256], model[32], qs[32], sep[256];
    if (!gpo_plan_reduced_precision(p, why, sizeof why) || w->quantized)
        return GPUOPT_OK; /* model.offload_bytes says what to do, and why not this */
    gpo_format_bytes(w->model_bytes, model, sizeof model);
    if (bits > 0) {
        gpo_format_bytes(gpo_fit_quantised(w->model_bytes, bits), qs, sizeof qs);
        return gpo_knob_set_int(p, "model.quantize_bits", bits,
                                "model %s does not fit in %s; at %d bits (from 16) it "
                                "takes %s, which fits with room for a batch item; %s",
                                model, b.text, bits, qs, why);
    }
    gpo_format_bytes(gpo_fit_quantised(w->model_bytes, 4), qs, sizeof qs);
    int separate = gpo_fit_memory_is_separate(dev, sep, sizeof sep);
    return gpo_knob_set_int(p, "model.quantize_bits", 4,
                            "model %s does not fit in %s, not even at 4 bits (from 16: %s): "
                            "quantise to 4 bits, the smallest this plan advises, %s; %s",
                            model, b.text, qs,
                            separate ? "and keep the rest in host memory (model.offload_bytes)"
                                     : "though it still does not fit",
                            why);
}
