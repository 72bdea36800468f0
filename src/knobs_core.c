/* The core's knob catalogue: knobs that several backends set with the same
 * meaning. Backend-only knobs live in each backend's catalogue. Every entry
 * is documented in docs/knobs.md, domain and derivation included.
 *
 * Ranges. Group sizes stop at 8192 work-items, the largest any OpenCL
 * implementation here reports (Intel's CPU runtime; PoCL 4096, CUDA and
 * HIP 1024); measured rates stop at 2^50 per second (1 PiB/s, a hundred
 * times today's fastest HBM) and launch latencies at a minute, so a
 * corrupt cache entry or a broken timer cannot become a plan. */
#include "knob.h"

#include "gpuopt/gpuopt.h"
#include "latency.h"
#include "locality.h"
#include "workload_fit.h"

#define PER_SECOND_MAX (INT64_C(1) << 50)

/* A measured (tier-2) value: a positive integer up to `max`. */
#define MEASURED(name_, max_, units_, summary_)                                                    \
    {                                                                                              \
        .name = name_, .type = GPUOPT_KNOB_INT, .summary = summary_, .min = 1, .max = max_,        \
        .units = units_                                                                            \
    }

const gpo_knob_def gpo_core_knobs[] = {
    {.name = "launch.block_size",
     .type = GPUOPT_KNOB_INT,
     .summary = "threads per block / work-items per work-group for a 1-D streaming kernel",
     .min = 1,
     .max = 8192,
     .units = "work-items",
     .maps_to = "CUDA/HIP blockDim.x, OpenCL local_work_size[0]"},
    {.name = "launch.block_multiple",
     .type = GPUOPT_KNOB_INT,
     .summary = "block sizes should be a multiple of this (warp, wavefront, SIMD width)",
     .min = 1,
     .max = 1024,
     .units = "work-items",
     .maps_to = "round block sizes up to a multiple of this"},
    {.name = "model.quantize_bits",
     .type = GPUOPT_KNOB_INT,
     .summary = "the model does not fit: quantise its weights to this many bits",
     .min = 2,
     .max = 8,
     .units = "bits per weight",
     .maps_to = "bitsandbytes load_in_8bit/load_in_4bit, GPTQ/AWQ bit width"},
    {.name = "model.offload_bytes",
     .type = GPUOPT_KNOB_BYTES,
     .summary = "the model does not fit: keep this much of it in host memory",
     .min = 1,
     .max = INT64_C(1) << 50,
     .maps_to = "Accelerate device_map/max_memory, vLLM --cpu-offload-gb",
     .inputs = GPO_WORDS("model.quantize_bits"),
     .derive = gpo_derive_offload_bytes},
    {.name = "batch.max_size",
     .type = GPUOPT_KNOB_INT,
     .summary = "largest batch whose items fit in device memory beside the model, with headroom",
     .min = 1,
     .max = INT32_MAX,
     .units = "items",
     .maps_to = "DataLoader(batch_size=...), --max-batch-size",
     .inputs = GPO_WORDS("model.quantize_bits", "model.offload_bytes"),
     .derive = gpo_derive_batch_max_size},
    /* Measured (tier 2): src/tier2/ and backends/cpu/cpu_tier2.c. */
    {.name = "launch.reduce_block_size",
     .type = GPUOPT_KNOB_INT,
     .summary = "threads per block / work-items per work-group for a reduction kernel",
     .min = 1,
     .max = 8192,
     .units = "work-items",
     .maps_to = "CUB/rocPRIM BLOCK_THREADS, OpenCL reduction work-group"},
    {.name = "transfer.pinned",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "stage host-device copies through pinned (page-locked) host memory",
     .maps_to = "DataLoader(pin_memory=True), cudaHostAlloc/hipHostMalloc staging"},
    MEASURED("measured.memory_bandwidth", PER_SECOND_MAX, "bytes/s",
             "device (or host) memory bandwidth of a copy, in bytes per second (read + written)"),
    MEASURED("measured.memory_bandwidth_1thread", PER_SECOND_MAX, "bytes/s",
             "host memory bandwidth of a copy by one thread, in bytes per second (read + written)"),
    MEASURED("measured.h2d_pageable", PER_SECOND_MAX, "bytes/s",
             "host-to-device copy rate from malloc'd memory, in bytes per second"),
    MEASURED("measured.h2d_pinned", PER_SECOND_MAX, "bytes/s",
             "host-to-device copy rate from pinned memory, in bytes per second"),
    MEASURED("measured.d2h_pageable", PER_SECOND_MAX, "bytes/s",
             "device-to-host copy rate into malloc'd memory, in bytes per second"),
    MEASURED("measured.d2h_pinned", PER_SECOND_MAX, "bytes/s",
             "device-to-host copy rate into pinned memory, in bytes per second"),
    /* The memory manager's settings (src/memory/manager.c): no rule sets
     * them; a user does (config file "knobs", GPUOPT_KNOBS, the API), and
     * gpuopt_memory_create reads them from the plan. */
    {.name = "memory.budget_bytes",
     .type = GPUOPT_KNOB_BYTES,
     .summary = "device memory the program may use, for the memory manager (default: the plan's "
                "headroom rule)",
     .min = 1,
     .max = INT64_C(1) << 50,
     .maps_to = "gpuopt_memory budget; torch.cuda.set_per_process_memory_fraction(budget / "
                "total)"},
    {.name = "memory.budget_percent",
     .type = GPUOPT_KNOB_INT,
     .summary = "the memory manager's budget as a share of the device's total memory",
     .min = 1,
     .max = 100,
     .units = "percent",
     .maps_to = "gpuopt_memory budget; torch.cuda.set_per_process_memory_fraction"},
    {.name = "memory.warn_percent",
     .type = GPUOPT_KNOB_INT,
     .summary = "the memory manager warns at or above this share of its budget or of the device's "
                "memory in use (default 90)",
     .min = 1,
     .max = 100,
     .units = "percent",
     .maps_to = "gpuopt_memory_check"},
    MEASURED("measured.launch_latency_ns", INT64_C(60000000000), "ns",
             "an empty kernel's launch-to-completion time on the host clock, in nanoseconds"),
    MEASURED("measured.h2d_latency_ns", INT64_C(60000000000), "ns",
             "a 4 KiB blocking host-to-device copy on the host clock: what every transfer pays "
             "once, in nanoseconds"),
    MEASURED("measured.d2h_latency_ns", INT64_C(60000000000), "ns",
             "a 4 KiB blocking device-to-host copy on the host clock: what every transfer pays "
             "once, in nanoseconds"),
    /* Latency advice (src/latency.c, docs/latency.md): derived from the
     * measurements above and the workload's step, so an override of a
     * measured value (or of the advice itself) always reaches them. */
    {.name = "launch.graph",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "capture a step's launches once and replay them as one graph",
     .maps_to = "CUDA graphs (cudaStreamBeginCapture, cudaGraphLaunch), "
                "torch.compile(mode=\"reduce-overhead\"), torch.cuda.CUDAGraph; hipGraph on ROCm; "
                "cl_khr_command_buffer on OpenCL",
     .inputs = GPO_WORDS("measured.launch_latency_ns"),
     .derive = gpo_derive_launch_graph},
    {.name = "warmup.runs",
     .type = GPUOPT_KNOB_INT,
     .summary = "steps to run once before serving, so no real request pays for loading, tuning "
                "or capturing",
     .min = 1,
     .max = 1000,
     .units = "steps",
     .maps_to = "a warm-up loop before the first request (per input shape)",
     .inputs = GPO_WORDS("launch.graph"),
     .derive = gpo_derive_warmup_runs},
    {.name = "prealloc.bytes",
     .type = GPUOPT_KNOB_BYTES,
     .summary = "device memory to allocate once before the first step, so no step waits for the "
                "driver's allocator",
     .min = 1,
     .max = INT64_C(1) << 50,
     .maps_to = "one torch.empty(n, dtype=torch.uint8, device=\"cuda\") freed before serving (the "
                "caching allocator keeps the block); a memory pool (cudaMemPool, hipMemPool)",
     .inputs = GPO_WORDS("batch.max_size"),
     .derive = gpo_derive_prealloc_bytes},
    {.name = "transfer.streams",
     .type = GPUOPT_KNOB_INT,
     .summary = "streams (queues) to spread a step over so its copies overlap its kernels; 1: "
                "no overlap",
     .min = 1,
     .max = 8,
     .units = "streams",
     .maps_to = "torch.cuda.Stream / cudaStreamCreate with cudaMemcpyAsync from pinned memory "
                "(DataLoader(pin_memory=True), tensor.to(non_blocking=True)); hipStream; "
                "OpenCL out-of-order or several command queues",
     .inputs =
         GPO_WORDS("measured.h2d_pinned", "measured.d2h_pinned", "measured.h2d_pageable",
                   "measured.d2h_pageable", "measured.h2d_latency_ns", "measured.d2h_latency_ns"),
     .derive = gpo_derive_transfer_streams},
    /* Locality (src/rules_locality.c, docs/fleet.md): the CPUs next to the
     * device, and the host threads that follow them. */
    {.name = "cpu.affinity",
     .type = GPUOPT_KNOB_STRING,
     .summary = "CPUs the host threads that feed the device should run on: those of its NUMA node "
                "that this process may use",
     .form = gpo_cpulist_form,
     .form_text = "a Linux CPU list naming at least one CPU (0-3,8)",
     .units = "CPU list",
     .maps_to = "sched_setaffinity, taskset -c, numactl --physcpubind; gpuopt plan --bind; "
                "Slurm --cpu-bind, the Kubernetes CPU manager"},
    {.name = "cpu.affinity_threads",
     .type = GPUOPT_KNOB_INT,
     .env = "OMP_NUM_THREADS",
     .summary = "host threads for the device's feeding work: one per CPU of cpu.affinity",
     .min = 1,
     .max = 4096,
     .units = "threads",
     .maps_to = "torch.set_num_threads, OMP_NUM_THREADS",
     .inputs = GPO_WORDS("cpu.affinity"),
     .derive = gpo_derive_affinity_threads},
    {.name = "cpu.affinity_places",
     .type = GPUOPT_KNOB_STRING,
     .env = "OMP_PLACES",
     .summary = "OpenMP places: one per CPU of cpu.affinity, so OpenMP threads stay on them",
     .maps_to = "OMP_PLACES (OpenMP 5.2 section 6.5)",
     .inputs = GPO_WORDS("cpu.affinity"),
     .derive = gpo_derive_affinity_places},
};

const size_t gpo_n_core_knobs = sizeof gpo_core_knobs / sizeof gpo_core_knobs[0];
