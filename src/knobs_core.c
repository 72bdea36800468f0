/* The core's knob catalogue: knobs that several backends set with the same
 * meaning. Backend-only knobs live in each backend's catalogue. Every entry
 * is documented in docs/knobs.md. */
#include "plan.h"

const gpo_knob_def gpo_core_knobs[] = {
    {"launch.block_size", GPUOPT_KNOB_INT, NULL,
     "threads per block / work-items per work-group for a 1-D streaming kernel"},
    {"launch.block_multiple", GPUOPT_KNOB_INT, NULL,
     "block sizes should be a multiple of this (warp, wavefront, SIMD width)"},
};

const size_t gpo_n_core_knobs = sizeof gpo_core_knobs / sizeof gpo_core_knobs[0];
