/* Latency advice (docs/latency.md): the core's derived knobs for a workload
 * described as latency-oriented, computed from what tier 2 measured
 * (launch latency, transfer rates and per-copy cost) and the workload's
 * step (launches, time target, bytes each way, items), after the user's
 * overrides. Every number in their reasons is a measured, detected or
 * described value, or a share computed from them. Reads no plan: the
 * derivation environment (src/knob.h) hands it the facts. */
#ifndef GPO_LATENCY_H
#define GPO_LATENCY_H

#include "knob.h"

/* A cost at or above this share of the step target is worth the advice's
 * constraints (a graph's static shapes, a stream pipeline's pinned
 * buffers); below it, the most the advice can save is within the
 * run-to-run spread of a step, and the reason says so. */
#define GPO_LATENCY_SHARE_PCT 10

/* From measured.launch_latency_ns: capture the step in a graph. */
gpuopt_status gpo_derive_launch_graph(const gpo_knob_input *in, const gpo_derive_env *env,
                                      gpo_derivation *out);

/* From launch.graph: warm-up steps before serving. */
gpuopt_status gpo_derive_warmup_runs(const gpo_knob_input *in, const gpo_derive_env *env,
                                     gpo_derivation *out);

/* From batch.max_size: the step's peak, allocated once. */
gpuopt_status gpo_derive_prealloc_bytes(const gpo_knob_input *in, const gpo_derive_env *env,
                                        gpo_derivation *out);

/* From the measured transfer rates and costs (pinned, pageable, per copy)
 * and transfer.pinned: streams to overlap the step's copies with its
 * kernels. */
gpuopt_status gpo_derive_transfer_streams(const gpo_knob_input *in, const gpo_derive_env *env,
                                          gpo_derivation *out);

#endif
