/* The CPU backend's ops table: load reads the host's facts once
 * (cpu_state.c), enumerate turns them into the one device "cpu:0"
 * (cpu_device.c), the rules set the knobs of the catalogue below
 * (cpu_rules.c, cpu_tier2.c), and memory_live answers from the load's
 * reading while it is fresh. */
#include <assert.h>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_device.h"
#include "cpu/cpu_rules.h"

static gpuopt_status cpu_enumerate(void *state, const gpo_backend_env *env, gpo_device_list *out)
{
    (void)env;
    assert(state && out);
    gpuopt_device *dev = gpo_device_new();
    if (!dev)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory listing the CPU");
    gpuopt_status st = gpo_cpu_fill_device(gpo_cpu_state_facts(state), dev);
    if (st) {
        gpo_device_free(dev);
        return st;
    }
    return gpo_device_list_push(out, dev);
}

/* The knobs the rules (cpu_rules.c, cpu_tier2.c) set, with their domains;
 * docs/knobs.md ("CPU backend") documents each. `threads` stops at 8192,
 * the most CPUs a Linux kernel can be built for (NR_CPUS with x86's
 * MAXSMP; arch/x86/Kconfig); SVE vectors at 2048 bits (Arm ARM, "SVE
 * vector length": a multiple of 128 up to 2048). */
static const gpo_knob_def cpu_knobs[] = {
    {.name = "threads",
     .type = GPUOPT_KNOB_INT,
     .summary = "worker threads for compute on this CPU",
     .min = 1,
     .max = 8192,
     .units = "threads",
     .maps_to = "torch.set_num_threads, MKL_NUM_THREADS, OPENBLAS_NUM_THREADS, your thread "
                "pool"},
    {.name = "omp.num_threads",
     .type = GPUOPT_KNOB_INT,
     .env = "OMP_NUM_THREADS",
     .summary = "OpenMP team size",
     .min = 1,
     .max = 8192,
     .units = "threads",
     .maps_to = "OMP_NUM_THREADS (libgomp, LLVM libomp, oneAPI)",
     .inputs = GPO_WORDS("threads"),
     .derive = gpo_cpu_derive_omp_num_threads},
    {.name = "omp.proc_bind",
     .type = GPUOPT_KNOB_STRING,
     .env = "OMP_PROC_BIND",
     .summary = "OpenMP thread binding: close, spread, or false (no binding)",
     .words = GPO_WORDS("false", "true", "primary", "close", "spread"),
     .maps_to = "OMP_PROC_BIND (OpenMP 5.2 section 6.4)"},
    {.name = "omp.places",
     .type = GPUOPT_KNOB_STRING,
     .env = "OMP_PLACES",
     .summary = "what an OpenMP thread binds to: cores or threads",
     .words = GPO_WORDS("threads", "cores", "ll_caches", "numa_domains", "sockets"),
     .maps_to = "OMP_PLACES (OpenMP 5.2 section 6.5)",
     .inputs = GPO_WORDS("threads", "omp.proc_bind"),
     .derive = gpo_cpu_derive_omp_places},
    {.name = "cpu.vector_bits",
     .type = GPUOPT_KNOB_INT,
     .summary = "widest usable SIMD vector, in bits",
     .min = 128,
     .max = 2048,
     .step = 128,
     .units = "bits",
     .maps_to = "-mprefer-vector-width=, -msve-vector-bits="},
    {.name = "cpu.tile_bytes",
     .type = GPUOPT_KNOB_BYTES,
     .summary = "cache-blocking tile per thread, in bytes",
     .min = 4096,
     .max = INT64_C(1) << 30,
     .step = 4096,
     .maps_to = "BLIS/oneDNN KC/MC blocking of GEMM and stencil loops"},
    {.name = "numa.placement",
     .type = GPUOPT_KNOB_STRING,
     .summary = "memory placement on a multi-node host: first-touch or local",
     .words = GPO_WORDS("first-touch", "local", "interleave"),
     .maps_to = "numactl --interleave=all / --membind; first-touch initialisation"},
    {.name = "cpu.fpmath_mode",
     .type = GPUOPT_KNOB_STRING,
     .env = "ONEDNN_DEFAULT_FPMATH_MODE",
     .summary = "oneDNN's floating-point math mode: strict, or bf16 where fp32 work may use bf16 "
                "units",
     /* oneDNN developer guide, "Floating-point math mode". */
     .words = GPO_WORDS("STRICT", "BF16", "F16", "TF32", "ANY"),
     .maps_to = "ONEDNN_DEFAULT_FPMATH_MODE; torch.set_float32_matmul_precision(\"medium\") on "
                "CPU"},
};

const gpo_backend gpo_backend_cpu = {
    .abi = GPO_BACKEND_ABI,
    .name = "cpu",
    .description = "host CPU",
    .load = gpo_cpu_state_load,
    .unload = gpo_cpu_state_unload,
    .enumerate = cpu_enumerate,
    .tier0 = gpo_cpu_tier0,
    .tier1 = gpo_cpu_tier1,
    .tier2 = gpo_cpu_tier2,
    .memory_live = gpo_cpu_state_memory_live,
    GPO_BACKEND_TABLE(knobs, cpu_knobs),
};
