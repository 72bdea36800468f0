/* CPU tier 0 (safe on any CPU of the architecture) and tier 1 (from the
 * detected facts), and the catalogue of the knobs they set. Every rule and
 * its source is documented in docs/knobs.md ("CPU backend"); each reason
 * names the fact behind the value. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "cpu/cpu_rules.h"
#include "cpu/cpu_state.h"
#include "cpu/cpuinfo_arm.h"
#include "cpu/x86_isa.h"
#include "plan.h"
#include "util/strutil.h"

const gpo_knob_def gpo_cpu_knobs[GPO_CPU_N_KNOBS] = {
    {"threads", GPUOPT_KNOB_INT, NULL, "worker threads for compute on this CPU"},
    {"omp.num_threads", GPUOPT_KNOB_INT, "OMP_NUM_THREADS", "OpenMP team size"},
    {"omp.proc_bind", GPUOPT_KNOB_STRING, "OMP_PROC_BIND",
     "OpenMP thread binding: close, spread, or false (no binding)"},
    {"omp.places", GPUOPT_KNOB_STRING, "OMP_PLACES",
     "what an OpenMP thread binds to: cores or threads"},
    {"cpu.vector_bits", GPUOPT_KNOB_INT, NULL, "widest usable SIMD vector, in bits"},
    {"cpu.tile_bytes", GPUOPT_KNOB_BYTES, NULL, "cache-blocking tile per thread, in bytes"},
    {"numa.placement", GPUOPT_KNOB_STRING, NULL,
     "memory placement on a multi-node host: first-touch or local"},
    {"cpu.fpmath_mode", GPUOPT_KNOB_STRING, "ONEDNN_DEFAULT_FPMATH_MODE",
     "oneDNN's floating-point math mode: strict, or bf16 where fp32 work may use bf16 units"},
};

/* Tier 0: what holds on every CPU of the architecture, no fact read. */
static const struct {
    int32_t arch;
    int32_t vector_bits;
    const char *vector_why;
    uint64_t tile_bytes;
    const char *tile_why;
} tier0_table[] = {
    {GPO_CPU_ARCH_X86_64, 128,
     "SSE2 (128-bit) is part of every x86-64 CPU (AMD64 architecture; x86-64 psABI baseline)",
     128 * 1024,
     "half of 256 KiB, the smallest per-core L2 of x86-64 cores (Nehalem to Skylake client; "
     "Intel optimization reference manual)"},
    {GPO_CPU_ARCH_ARM64, 128, "AdvSIMD/NEON (128-bit) is mandatory in Armv8-A (Arm ARM A1.5)",
     64 * 1024,
     "half of 128 KiB, the smallest L2 a Cortex-A53 cluster is built with (Cortex-A53 TRM)"},
};

gpuopt_status gpo_cpu_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan)
{
    (void)route;
    assert(state && dev && plan);
    (void)dev;
    const gpo_cpu_facts *f = gpo_cpu_state_facts(state);
    gpuopt_status st = gpo_knob_set_int(plan, "threads", 1,
                                        "tier 0 reads no fact: one worker thread is correct on "
                                        "any CPU");
    for (size_t i = 0; !st && i < sizeof tier0_table / sizeof tier0_table[0]; i++) {
        if (tier0_table[i].arch != f->arch)
            continue;
        st = gpo_knob_set_int(plan, "cpu.vector_bits", tier0_table[i].vector_bits, "%s",
                              tier0_table[i].vector_why);
        if (!st)
            st = gpo_knob_set_bytes(plan, "cpu.tile_bytes", tier0_table[i].tile_bytes, "%s",
                                    tier0_table[i].tile_why);
    }
    if (!st)
        st = gpo_knob_set_string(plan, "cpu.fpmath_mode", "STRICT",
                                 "tier 0 reads no fact: fp32 computed as fp32 is correct on any "
                                 "CPU");
    return st;
}

/* ---- tier 1 ---------------------------------------------------------------- */

static const char *quota_file(const gpo_cpu_facts *f)
{
    return f->cgroup_version == 1 ? "cpu.cfs_quota_us/cpu.cfs_period_us" : "cpu.max";
}

/* Why `threads` is what it is: the mask, and the quota when there is one. */
static void threads_why(const gpo_cpu_facts *f, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%d CPUs in this process's affinity mask (%s)", f->affinity_cpus,
                     f->src_affinity);
    if (n < 0 || (size_t)n >= cap)
        return;
    if (f->quota_us < 0) {
        gpo_snprintf(out + n, cap - (size_t)n, "; no cgroup CPU quota => %d threads",
                     f->usable_cpus);
        return;
    }
    gpo_snprintf(out + n, cap - (size_t)n,
                 "; cgroup v%d %s %lld/%lld = %g CPUs on %s%s => %d threads", f->cgroup_version,
                 quota_file(f), (long long)f->quota_us, (long long)f->period_us, f->quota_cpus,
                 f->quota_path,
                 f->usable_cpus < f->affinity_cpus ? ", rounded up" : ", not below the mask",
                 f->usable_cpus);
}

static gpuopt_status set_binding(const gpo_cpu_facts *f, int threads, struct gpuopt_plan *plan)
{
    gpuopt_status st;
    if (f->usable_cpus < f->affinity_cpus) {
        /* Under a quota the scheduler spreads the threads over the whole
         * mask; pinning them would tie them to CPUs other cgroups share. */
        gpo_knob_unset(plan, "omp.places");
        return gpo_knob_set_string(plan, "omp.proc_bind", "false",
                                   "a CPU quota of %g CPUs is below the %d CPUs of the mask: "
                                   "leave the %d threads unbound so the scheduler can move them",
                                   f->quota_cpus, f->affinity_cpus, f->usable_cpus);
    }
    if (f->affinity_nodes > 1)
        st = gpo_knob_set_string(plan, "omp.proc_bind", "spread",
                                 "the mask spans %d NUMA nodes: spread threads so every node's "
                                 "memory bandwidth and caches are used",
                                 f->affinity_nodes);
    else
        st = gpo_knob_set_string(plan, "omp.proc_bind", "close",
                                 "the mask lies in one NUMA node: keep threads close, sharing "
                                 "its last-level cache");
    if (st)
        return st;
    if (f->affinity_cores > 0 && threads <= f->affinity_cores)
        return gpo_knob_set_string(plan, "omp.places", "cores",
                                   "%d threads fit on the %d physical cores of the mask: one "
                                   "per core%s",
                                   threads, f->affinity_cores,
                                   f->affinity_cpus > f->affinity_cores ? ", SMT siblings left idle"
                                                                        : "");
    return gpo_knob_set_string(plan, "omp.places", "threads",
                               "%d threads on %d physical cores (SMT): one per hardware thread",
                               f->usable_cpus, f->affinity_cores);
}

static gpuopt_status set_vector(const gpo_cpu_facts *f, struct gpuopt_plan *plan)
{
    int32_t bits = gpo_cpu_simd_lanes(f) * 32;
    if (f->arch == GPO_CPU_ARCH_X86_64) {
        const char *what = (f->isa & GPO_BIT(GPO_X86_AVX512F)) ? "avx512f"
                           : (f->isa & GPO_BIT(GPO_X86_AVX))   ? "avx, no avx512f"
                                                               : "SSE2 only, no avx";
        return gpo_knob_set_int(plan, "cpu.vector_bits", bits,
                                "%s (%s) => %d-bit vectors, %d fp32 lanes", what, f->src_isa, bits,
                                bits / 32);
    }
    if (f->arch == GPO_CPU_ARCH_ARM64) {
        if (bits > 128)
            return gpo_knob_set_int(plan, "cpu.vector_bits", bits,
                                    "sve with a %d-bit vector length (%s) => %d fp32 lanes", bits,
                                    f->src_isa, bits / 32);
        return gpo_knob_set_int(plan, "cpu.vector_bits", bits, "%s (%s) => 128-bit NEON vectors",
                                (f->isa & GPO_BIT(GPO_ARM_SVE)) ? "sve of unknown or 128-bit length"
                                                                : "asimd, no sve",
                                f->src_isa);
    }
    return GPUOPT_OK;
}

static gpuopt_status set_tile(const gpo_cpu_facts *f, struct gpuopt_plan *plan)
{
    if (!f->l2.size_bytes || f->l2.shared_cpus < 1)
        return GPUOPT_OK; /* tier 0's value stands */
    /* Half of one thread's L2 share, leaving the rest to the other
     * operands (Goto and van de Geijn, "Anatomy of High-Performance Matrix
     * Multiplication", ACM TOMS 2008: the L2 block takes about half of L2).
     * The threads sharing one L2 are every CPU sharing it when the plan
     * uses SMT siblings, one per core otherwise. */
    int32_t smt = f->physical_cores > 0 && f->logical_cpus > f->physical_cores
                      ? f->logical_cpus / f->physical_cores
                      : 1;
    int32_t sharers = f->l2.shared_cpus;
    if (f->affinity_cores > 0 && f->usable_cpus <= f->affinity_cores && sharers >= smt)
        sharers /= smt;
    if (sharers < 1)
        sharers = 1;
    uint64_t tile = f->l2.size_bytes / (uint64_t)sharers / 2;
    tile &= ~(uint64_t)4095;
    if (tile < 4096)
        tile = 4096;
    char l2[32];
    gpo_format_bytes(f->l2.size_bytes, l2, sizeof l2);
    return gpo_knob_set_bytes(plan, "cpu.tile_bytes", tile,
                              "L2 of %s per %d CPU%s (%s), %d thread%s of this plan on each: "
                              "half of one thread's share",
                              l2, f->l2.shared_cpus, f->l2.shared_cpus == 1 ? "" : "s",
                              f->src_caches, sharers, sharers == 1 ? "" : "s");
}

static gpuopt_status set_numa(const gpo_cpu_facts *f, struct gpuopt_plan *plan)
{
    if (f->numa_nodes <= 1) {
        gpo_knob_unset(plan, "numa.placement");
        return GPUOPT_OK;
    }
    if (f->affinity_nodes > 1)
        return gpo_knob_set_string(
            plan, "numa.placement", "first-touch",
            "%d NUMA nodes and this process's CPUs span %d: initialise data in the thread that "
            "uses it so its pages land on that thread's node (numactl --interleave=all for data "
            "every thread reads)",
            f->numa_nodes, f->affinity_nodes);
    return gpo_knob_set_string(plan, "numa.placement", "local",
                               "%d NUMA nodes but this process's CPUs lie in one: allocate on "
                               "that node (the default local policy, or numactl --membind)",
                               f->numa_nodes);
}

/* bf16 arithmetic units: AVX512_BF16 or AMX-BF16 on x86 (Intel SDM vol. 2,
 * VDPBF16PS and TDPBF16PS), FEAT_BF16 on arm64 (Arm ARM A2.2). */
static int has_bf16_units(const gpo_cpu_facts *f, const char **which)
{
    static const struct {
        int32_t arch;
        int bit;
        const char *name;
    } units[] = {
        {GPO_CPU_ARCH_X86_64, GPO_X86_AMX_BF16, "amx_bf16"},
        {GPO_CPU_ARCH_X86_64, GPO_X86_AVX512BF16, "avx512_bf16"},
        {GPO_CPU_ARCH_ARM64, GPO_ARM_BF16, "bf16"},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (units[i].arch == f->arch && (f->isa & GPO_BIT(units[i].bit))) {
            *which = units[i].name;
            return 1;
        }
    }
    return 0;
}

/* oneDNN (and PyTorch/TensorFlow on CPU through it) may run fp32 matmuls and
 * convolutions on bf16 units when the math mode allows it (oneDNN developer
 * guide, "Floating-point math mode"; ONEDNN_DEFAULT_FPMATH_MODE since oneDNN
 * 2.7). Only when precision may be traded: the core's one rule decides. */
static gpuopt_status set_fpmath(const gpo_cpu_facts *f, struct gpuopt_plan *plan)
{
    char why[256];
    const char *unit = NULL;
    int reduced = gpo_plan_reduced_precision(plan, why, sizeof why);
    int units = has_bf16_units(f, &unit);
    if (reduced && units)
        return gpo_knob_set_string(plan, "cpu.fpmath_mode", "BF16",
                                   "%s (%s) and %s: fp32 matmuls and convolutions may run on bf16 "
                                   "units (about 8 bits of mantissa instead of 24)",
                                   unit, f->src_isa, why);
    if (!units)
        return gpo_knob_set_string(plan, "cpu.fpmath_mode", "STRICT",
                                   "no bf16 arithmetic units (avx512_bf16, amx_bf16, arm64 "
                                   "bf16; %s): fp32 stays fp32",
                                   f->src_isa);
    return gpo_knob_set_string(plan, "cpu.fpmath_mode", "STRICT",
                               "%s (%s) could run fp32 work in bf16, but %s", unit, f->src_isa,
                               why);
}

/* A latency-bound workload runs one item at a time: SMT siblings share a
 * core's execution units and caches, so one thread per physical core
 * finishes a single item sooner (Intel optimization reference manual,
 * "Hyper-Threading Technology" performance considerations). */
static int latency_threads(const gpo_cpu_facts *f, const struct gpuopt_plan *plan)
{
    const gpuopt_workload *w = gpo_plan_workload(plan);
    if (!w || w->objective != GPUOPT_OBJECTIVE_LATENCY || f->affinity_cores <= 0 ||
        f->affinity_cores >= f->usable_cpus)
        return 0;
    return f->affinity_cores;
}

gpuopt_status gpo_cpu_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan)
{
    (void)route;
    assert(state && dev && plan);
    (void)dev;
    const gpo_cpu_facts *f = gpo_cpu_state_facts(state);
    char why[1024 + GPO_PATH_MAX];
    threads_why(f, why, sizeof why);
    int threads = f->usable_cpus;
    int lat = latency_threads(f, plan);
    if (lat) {
        size_t n = strlen(why);
        gpo_snprintf(why + n, sizeof why - n,
                     "; the workload is latency-bound and the mask has %d physical cores for %d "
                     "CPUs (SMT): one thread per core => %d threads",
                     f->affinity_cores, f->usable_cpus, lat);
        threads = lat;
    }
    gpuopt_status st = gpo_knob_set_int(plan, "threads", threads, "%s", why);
    if (!st)
        st = gpo_knob_set_int(plan, "omp.num_threads", threads, "as threads: %s", why);
    if (!st)
        st = set_binding(f, threads, plan);
    if (!st)
        st = set_vector(f, plan);
    if (!st)
        st = set_tile(f, plan);
    if (!st)
        st = set_numa(f, plan);
    if (!st)
        st = set_fpmath(f, plan);
    return st;
}
