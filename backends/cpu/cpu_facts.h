/* What the CPU backend knows about the host: the facts record, the one
 * call that reads it (cpu_facts.c, on top of the readers), and the facts
 * derived from it.
 *
 * The facts are read once per context (load) from the live system or from a
 * recorded tree under GPUOPT_SYSFS_ROOT: every /sys and /proc read goes
 * through src/util/fs.h. Each reader (cpuid_x86.c, cpuinfo_arm.c,
 * topology.c, affinity.c, cgroup.c, memory.c) fills its part, records where
 * the fact came from in `src_*` (shown under details.cpu.sources), and
 * leaves a fact at its "unknown" value (-1, 0, "") when it cannot be read: a
 * missing or malformed file is never fatal, it is a fallback with a note.
 *
 * Only allocation failures are errors here. Pointer arguments are the
 * caller's contract (asserted, not reported). */
#ifndef GPO_CPU_FACTS_H
#define GPO_CPU_FACTS_H

#include <stddef.h>
#include <stdint.h>

#include "util/fs.h"
#include "util/log.h"

/* Largest CPU number handled (Linux NR_CPUS of distribution kernels is
 * 8192 at most; 4096 covers every shipping two-socket and four-socket
 * server). CPUs beyond are ignored with a note. */
#define GPO_CPU_MAX 4096
#define GPO_CPU_SET_BYTES (GPO_CPU_MAX / 8)
#define GPO_CPU_SRC_CAP 512
#define GPO_CPU_NOTES_CAP 1024

typedef enum gpo_cpu_arch {
    GPO_CPU_ARCH_UNKNOWN = 0,
    GPO_CPU_ARCH_X86_64 = 1,
    GPO_CPU_ARCH_ARM64 = 2
} gpo_cpu_arch;

/* A bit of gpo_cpu_facts.isa: GPO_X86_* (x86_isa.h) or GPO_ARM_*
 * (cpuinfo_arm.h), by arch. */
#define GPO_BIT(f) (UINT64_C(1) << (f))

typedef struct gpo_cpu_cache {
    uint64_t size_bytes; /* one instance; 0 unknown */
    int32_t shared_cpus; /* logical CPUs sharing one instance; -1 unknown */
    int32_t instances;   /* instances on the host; -1 unknown */
} gpo_cpu_cache;

typedef struct gpo_cpu_facts {
    int32_t arch;       /* gpo_cpu_arch */
    char vendor_id[32]; /* raw: "GenuineIntel", "AuthenticAMD", "0x41" */
    char vendor[64];    /* normalised: "Intel", "AMD", "Arm" */
    char model_name[256];
    int32_t family, model, stepping;              /* x86 display values; -1 unknown */
    int32_t implementer, part, variant, revision; /* arm64 MIDR fields; -1 unknown */
    uint64_t isa;            /* GPO_BIT(GPO_X86_*) or GPO_BIT(GPO_ARM_*) by arch */
    char microarch[32];      /* GCC -march / -mcpu style: "sapphirerapids", "neoverse-n1" */
    char isa_level[32];      /* "x86-64-v4", "armv8.2-a" */
    int32_t x86_level;       /* 1..4 on x86-64, 0 elsewhere */
    uint32_t cpuid_max_leaf; /* highest basic cpuid leaf, live x86 only; 0 otherwise */
    int32_t cpuid_max_mhz;   /* cpuid leaf 0x16 maximum clock, live x86 outside a
                                hypervisor; -1 otherwise */
    int32_t sve_bits;        /* arm64 SVE vector length in bits, 0 none or unknown */

    unsigned char online[GPO_CPU_SET_BYTES];
    int32_t logical_cpus; /* online */
    int32_t physical_cores;
    int32_t sockets;
    int32_t numa_nodes;
    gpo_cpu_cache l1d, l2, l3;
    int32_t clock_mhz; /* max; -1 unknown */

    unsigned char affinity[GPO_CPU_SET_BYTES];
    int32_t affinity_cpus;  /* CPUs this process may run on (nproc) */
    int32_t affinity_cores; /* physical cores those CPUs belong to; -1 unknown */
    int32_t affinity_nodes; /* NUMA nodes those CPUs belong to; -1 unknown */

    int32_t cgroup_version; /* of the cpu controller: 0 none found, 1, 2 */
    int64_t quota_us;       /* tightest CPU quota; -1 none */
    int64_t period_us;
    double quota_cpus;             /* quota_us / period_us; 0 when none */
    char quota_path[GPO_PATH_MAX]; /* cgroup directory holding it */
    int32_t usable_cpus;           /* affinity bounded by the quota rounded up */

    uint64_t mem_total, mem_available; /* /proc/meminfo, bytes; 0 unknown */
    int32_t mem_cgroup_version;        /* of the memory controller: 0 none found, 1, 2 */
    uint64_t cg_mem_limit;             /* tightest cgroup memory limit; 0 none */
    uint64_t cg_mem_usage;             /* usage of the cgroup holding that limit */
    char mem_limit_path[GPO_PATH_MAX];
    uint64_t memory_bytes, memory_free_bytes; /* capped by the cgroup */
    uint64_t memory_read_ns;                  /* CLOCK_MONOTONIC time of that reading; 0 none */

    char src_isa[GPO_CPU_SRC_CAP];
    char src_microarch[GPO_CPU_SRC_CAP];
    char src_topology[GPO_CPU_SRC_CAP];
    char src_caches[GPO_CPU_SRC_CAP];
    char src_clock[GPO_CPU_SRC_CAP];
    char src_affinity[GPO_CPU_SRC_CAP];
    char src_quota[GPO_CPU_SRC_CAP];
    char src_memory[GPO_CPU_SRC_CAP];
    char notes[GPO_CPU_NOTES_CAP]; /* fallbacks taken, "; "-separated */

    /* /proc/cpuinfo, read at most once per gpo_cpu_facts_read (it can be
     * hundreds of KiB on a large host) and released at its end
     * (cpu_procfs.h). */
    char *cpuinfo;
    int32_t cpuinfo_read;   /* 1 once tried */
    int32_t cpuinfo_status; /* gpuopt_status of that read */
} gpo_cpu_facts;

/* Every fact unknown. */
void gpo_cpu_facts_init(gpo_cpu_facts *f);

/* Reads everything, in dependency order (ISA, topology, affinity, cgroup,
 * memory), then derives usable_cpus and the capped memory. */
gpuopt_status gpo_cpu_facts_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* ---- derived facts ---------------------------------------------------------- */

/* usable_cpus = min(affinity_cpus, ceil(quota_cpus)), at least 1. */
int32_t gpo_cpu_usable_from_quota(int32_t affinity_cpus, int64_t quota_us, int64_t period_us);

/* fp32 lanes of the widest usable vector (4 for SSE/NEON, 8 AVX, 16
 * AVX-512, SVE length / 32). */
int32_t gpo_cpu_simd_lanes(const gpo_cpu_facts *f);

/* (The core's throughput, which is not the ISA's width: cpu_peak.h.) */

/* Feature names of f->isa for details ("sse4.2", "avx2", "amx", "neon", ...),
 * in table order; calls fn for each. */
void gpo_cpu_feature_names(const gpo_cpu_facts *f, void (*fn)(const char *name, void *user),
                           void *user);

/* CPU-set helpers over f->affinity-sized bitmaps. */
static inline int gpo_cpuset_has(const unsigned char *set, int cpu)
{
    return cpu >= 0 && cpu < GPO_CPU_MAX && (set[cpu / 8] >> (cpu % 8)) & 1;
}

/* Adds cpu to a set (0 <= cpu < GPO_CPU_MAX). */
static inline void gpo_cpuset_add(unsigned char *set, int cpu)
{
    set[cpu / 8] |= (unsigned char)(1u << (cpu % 8));
}

/* One past the highest CPU of a set; 0 for an empty set. Loops over CPUs
 * stop there instead of at GPO_CPU_MAX. */
static inline int gpo_cpuset_end(const unsigned char *set)
{
    for (int b = GPO_CPU_SET_BYTES - 1; b >= 0; b--)
        for (int bit = 7; set[b] && bit >= 0; bit--)
            if ((set[b] >> bit) & 1)
                return b * 8 + bit + 1;
    return 0;
}

#endif
