/* CPU tier 0 (safe on any CPU of the architecture) and tier 1 (from the
 * detected facts), and the catalogue of the knobs they set. Every rule and
 * its source is documented in docs/knobs.md ("CPU backend"); each reason
 * names the fact behind the value. */
#include <stdio.h>
#include <string.h>

#include "cpu/cpu_backend.h"
#include "strutil.h"

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

static const gpo_cpu_facts *facts_of(void *state, const gpuopt_device *dev,
                                     struct gpuopt_plan *plan)
{
    if (!state || !dev || !plan) {
        gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cpu rules: NULL %s",
                 !state ? "backend state"
                 : !dev ? "device"
                        : "plan");
        return NULL;
    }
    return gpo_cpu_state_facts(state);
}

gpuopt_status gpo_cpu_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan)
{
    (void)route;
    const gpo_cpu_facts *f = facts_of(state, dev, plan);
    if (!f)
        return GPUOPT_ERR_INVALID_ARGUMENT;
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

static gpuopt_status set_binding(const gpo_cpu_facts *f, struct gpuopt_plan *plan)
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
    if (f->affinity_cores > 0 && f->usable_cpus <= f->affinity_cores)
        return gpo_knob_set_string(plan, "omp.places", "cores",
                                   "%d threads fit on the %d physical cores of the mask: one "
                                   "per core%s",
                                   f->usable_cpus, f->affinity_cores,
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

gpuopt_status gpo_cpu_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan)
{
    (void)route;
    const gpo_cpu_facts *f = facts_of(state, dev, plan);
    if (!f)
        return GPUOPT_ERR_INVALID_ARGUMENT;
    char why[1024 + GPO_PATH_MAX];
    threads_why(f, why, sizeof why);
    gpuopt_status st = gpo_knob_set_int(plan, "threads", f->usable_cpus, "%s", why);
    if (!st)
        st = gpo_knob_set_int(plan, "omp.num_threads", f->usable_cpus, "as threads: %s", why);
    if (!st)
        st = set_binding(f, plan);
    if (!st)
        st = set_vector(f, plan);
    if (!st)
        st = set_tile(f, plan);
    if (!st)
        st = set_numa(f, plan);
    return st;
}
