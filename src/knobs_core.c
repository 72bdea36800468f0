/* The core's knob catalogue: knobs that several backends set with the same
 * meaning. Backend-only knobs live in each backend's catalogue. Every entry
 * is documented in docs/knobs.md. */
#include "knob.h"

#include "gpuopt/gpuopt.h"

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
    /* Measured (tier 2): src/tier2/ and backends/cpu/cpu_tier2.c. */
    {"launch.reduce_block_size", GPUOPT_KNOB_INT, NULL,
     "threads per block / work-items per work-group for a reduction kernel"},
    {"transfer.pinned", GPUOPT_KNOB_BOOL, NULL,
     "stage host-device copies through pinned (page-locked) host memory"},
    {"measured.memory_bandwidth", GPUOPT_KNOB_INT, NULL,
     "device (or host) memory bandwidth of a copy, in bytes per second (read + written)"},
    {"measured.memory_bandwidth_1thread", GPUOPT_KNOB_INT, NULL,
     "host memory bandwidth of a copy by one thread, in bytes per second (read + written)"},
    {"measured.h2d_pageable", GPUOPT_KNOB_INT, NULL,
     "host-to-device copy rate from malloc'd memory, in bytes per second"},
    {"measured.h2d_pinned", GPUOPT_KNOB_INT, NULL,
     "host-to-device copy rate from pinned memory, in bytes per second"},
    {"measured.d2h_pageable", GPUOPT_KNOB_INT, NULL,
     "device-to-host copy rate into malloc'd memory, in bytes per second"},
    {"measured.d2h_pinned", GPUOPT_KNOB_INT, NULL,
     "device-to-host copy rate into pinned memory, in bytes per second"},
    {"measured.launch_latency_ns", GPUOPT_KNOB_INT, NULL,
     "an empty kernel's launch-to-completion time on the host clock, in nanoseconds"},
};

const size_t gpo_n_core_knobs = sizeof gpo_core_knobs / sizeof gpo_core_knobs[0];
