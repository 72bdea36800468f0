/* Whether a described workload fits a device's memory, in arithmetic a
 * reason can carry: the memory budget with its headroom, the size of
 * quantised weights, whether offloading to host memory means anything on
 * the device, and the two derived knobs of the core's catalogue that
 * follow from them (workload_fit.c). Reads no plan: its callers hand it
 * the facts, so the catalogue (src/knobs_core.c) can name the derivations
 * without pointing back at the plan. */
#ifndef GPO_WORKLOAD_FIT_H
#define GPO_WORKLOAD_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "knob.h"

typedef struct gpo_fit_budget {
    uint64_t memory;  /* what we size against */
    uint64_t usable;  /* after headroom */
    const char *what; /* "free" / "total" */
    int keep_pct;
    char text[160]; /* "22.0 GiB free x 0.90 = 19.8 GiB usable" */
} gpo_fit_budget;

/* Level 0 sizes against total memory and keeps 20% back (the runtime, its
 * libraries and fragmentation take a share nothing reports); level 1 and
 * above size against `memory` (free memory when it was read, `what` says
 * which) and keep 10% back when it is free memory. */
void gpo_fit_budget_make(uint64_t memory, const char *what, uint64_t total, int level,
                         gpo_fit_budget *b);

/* The size of 16-bit weights quantised to `bits` (16 and above: as they are). */
uint64_t gpo_fit_quantised(uint64_t model_bytes, int64_t bits);

/* 0 with the reason in `why` when the device's memory is the host's (a
 * CPU device, an integrated GPU): offloading to host memory then means
 * nothing. */
int gpo_fit_memory_is_separate(const gpuopt_device *dev, char *why, size_t cap);

/* Derived from model.quantize_bits: the part of the (quantised) model that
 * must stay in host memory, only where device memory is separate. */
gpuopt_status gpo_derive_offload_bytes(const gpo_knob_input *in, const gpo_derive_env *env,
                                       gpo_derivation *out);

/* Derived from model.quantize_bits and model.offload_bytes: the largest
 * batch beside the part of the model the device holds. */
gpuopt_status gpo_derive_batch_max_size(const gpo_knob_input *in, const gpo_derive_env *env,
                                        gpo_derivation *out);

#endif
