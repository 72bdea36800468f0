/* The core's knob catalogue: knobs that several backends set with the same
 * meaning. Backend-only knobs live in each backend's catalogue. Every entry
 * is documented in docs/knobs.md. */
#include "plan.h"

const gpo_knob_def gpo_core_knobs[] = {
    {"launch.block_size", GPUOPT_KNOB_INT, NULL,
     "threads per block / work-items per work-group for a 1-D streaming kernel"},
    {"launch.block_multiple", GPUOPT_KNOB_INT, NULL,
     "block sizes should be a multiple of this (warp, wavefront, SIMD width)"},
    {"batch.max_size", GPUOPT_KNOB_INT, NULL,
     "largest batch whose items fit in device memory beside the model, with headroom"},
    {"model.quantize_bits", GPUOPT_KNOB_INT, NULL,
     "the model does not fit: quantise its weights to this many bits"},
    {"model.offload_bytes", GPUOPT_KNOB_BYTES, NULL,
     "the model does not fit: keep this much of it in host memory"},
};

const size_t gpo_n_core_knobs = sizeof gpo_core_knobs / sizeof gpo_core_knobs[0];
