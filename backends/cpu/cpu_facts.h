/* What the CPU backend knows about the host, and the readers that fill it.
 *
 * The facts are read once per context (load) from the live system or from a
 * recorded tree under GPUOPT_SYSFS_ROOT: every /sys and /proc read goes
 * through src/fs.h. Each reader fills its part, records where the fact came
 * from in `src_*` (shown under details.cpu.sources), and leaves a fact at
 * its "unknown" value (-1, 0, "") when it cannot be read: a missing or
 * malformed file is never fatal, it is a fallback with a note.
 *
 * Only allocation failures and NULL arguments are errors here; every reader
 * returns GPUOPT_OK otherwise. */
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

/* x86-64 ISA features, bit numbers of gpo_cpu_facts.isa on x86-64. The
 * names and meanings are those of Linux /proc/cpuinfo flags
 * (arch/x86/include/asm/cpufeatures.h); cpuid_x86.c maps both the flags
 * and the cpuid bits onto them. */
typedef enum gpo_x86_feature {
    GPO_X86_CMOV,
    GPO_X86_CX8,
    GPO_X86_FXSR,
    GPO_X86_MMX,
    GPO_X86_SSE,
    GPO_X86_SSE2,
    GPO_X86_LM,
    GPO_X86_SSE3,
    GPO_X86_SSSE3,
    GPO_X86_SSE4_1,
    GPO_X86_SSE4_2,
    GPO_X86_POPCNT,
    GPO_X86_CX16,
    GPO_X86_LAHF,
    GPO_X86_PCLMUL,
    GPO_X86_AES,
    GPO_X86_AVX,
    GPO_X86_F16C,
    GPO_X86_FMA,
    GPO_X86_AVX2,
    GPO_X86_BMI1,
    GPO_X86_BMI2,
    GPO_X86_LZCNT,
    GPO_X86_MOVBE,
    GPO_X86_XSAVE,
    GPO_X86_ADX,
    GPO_X86_SHA,
    GPO_X86_CLFLUSHOPT,
    GPO_X86_CLWB,
    GPO_X86_CLZERO,
    GPO_X86_GFNI,
    GPO_X86_VAES,
    GPO_X86_SSE4A,
    GPO_X86_XOP,
    GPO_X86_FMA4,
    GPO_X86_AVX512F,
    GPO_X86_AVX512DQ,
    GPO_X86_AVX512CD,
    GPO_X86_AVX512BW,
    GPO_X86_AVX512VL,
    GPO_X86_AVX512IFMA,
    GPO_X86_AVX512VBMI,
    GPO_X86_AVX512VBMI2,
    GPO_X86_AVX512VNNI,
    GPO_X86_AVX512BITALG,
    GPO_X86_AVX512VPOPCNTDQ,
    GPO_X86_AVX512BF16,
    GPO_X86_AVX512FP16,
    GPO_X86_AVX512VP2INTERSECT,
    GPO_X86_AVX512ER,
    GPO_X86_AVXVNNI,
    GPO_X86_AMX_TILE,
    GPO_X86_AMX_INT8,
    GPO_X86_AMX_BF16,
    GPO_X86_AMX_FP16,
    GPO_X86_HYPERVISOR,
    GPO_X86_FEATURE_COUNT
} gpo_x86_feature;

/* arm64 ISA features, bit numbers of gpo_cpu_facts.isa on arm64; names of
 * the "Features" line of /proc/cpuinfo (arch/arm64/kernel/cpuinfo.c). */
typedef enum gpo_arm_feature {
    GPO_ARM_FP,
    GPO_ARM_ASIMD,
    GPO_ARM_AES,
    GPO_ARM_CRC32,
    GPO_ARM_ATOMICS,
    GPO_ARM_FPHP,
    GPO_ARM_ASIMDHP,
    GPO_ARM_ASIMDRDM,
    GPO_ARM_JSCVT,
    GPO_ARM_FCMA,
    GPO_ARM_LRCPC,
    GPO_ARM_DCPOP,
    GPO_ARM_SHA3,
    GPO_ARM_ASIMDDP,
    GPO_ARM_SVE,
    GPO_ARM_ASIMDFHM,
    GPO_ARM_DIT,
    GPO_ARM_USCAT,
    GPO_ARM_ILRCPC,
    GPO_ARM_FLAGM,
    GPO_ARM_PACA,
    GPO_ARM_SVE2,
    GPO_ARM_SVEI8MM,
    GPO_ARM_SVEBF16,
    GPO_ARM_I8MM,
    GPO_ARM_BF16,
    GPO_ARM_SME,
    GPO_ARM_FEATURE_COUNT
} gpo_arm_feature;

#define GPO_BIT(f) (UINT64_C(1) << (f))

/* One ISA feature: its bit, its /proc/cpuinfo spelling, and the name shown
 * in details (NULL: the same as the flag; "": not shown, a baseline
 * feature every CPU of the architecture has). */
typedef struct gpo_isa_name {
    int32_t bit;
    const char *flag;
    const char *display;
} gpo_isa_name;

extern const gpo_isa_name gpo_x86_isa_names[];
extern const size_t gpo_n_x86_isa_names;
extern const gpo_isa_name gpo_arm_isa_names[];
extern const size_t gpo_n_arm_isa_names;

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
     * hundreds of KiB on a large host) and released at its end. */
    char *cpuinfo;
    int32_t cpuinfo_read;   /* 1 once tried */
    int32_t cpuinfo_status; /* gpuopt_status of that read */
} gpo_cpu_facts;

/* Every fact unknown. */
void gpo_cpu_facts_init(gpo_cpu_facts *f);

/* Appends a note ("; "-separated, truncated when full) and logs it at
 * `level`. */
void gpo_cpu_note(gpo_cpu_facts *f, const gpo_logger *log, int32_t level, const char *fmt, ...)
    GPO_PRINTF(4, 5);

/* /proc/cpuinfo of f's tree, read on first use and kept in f->cpuinfo.
 * Returns the read's status (the same one on later calls) with *text set,
 * or *text NULL on failure. gpo_cpu_facts_read releases it; a caller
 * running the readers one by one calls gpo_cpu_cpuinfo_release. */
gpuopt_status gpo_cpu_cpuinfo(const gpo_fs *fs, gpo_cpu_facts *f, const char **text);
void gpo_cpu_cpuinfo_release(gpo_cpu_facts *f);

/* Iterates the "key : value" lines of /proc/cpuinfo text: returns 1 with
 * the trimmed key and value (truncated to their caps), 0 at the end. A
 * blank line (between processors) comes back with an empty key. */
int gpo_cpuinfo_next(const char **cursor, char *key, size_t kcap, char *val, size_t vcap);

/* The value of the first line called `key`. Returns 0, -1 when absent. */
int gpo_cpuinfo_field(const char *text, const char *key, char *val, size_t vcap);

/* Reads everything, in dependency order (ISA, topology, affinity, cgroup,
 * memory), then derives usable_cpus and the capped memory. */
gpuopt_status gpo_cpu_facts_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* ---- x86-64 (cpuid_x86.c) ------------------------------------------------ */

/* Feature bits from a /proc/cpuinfo "flags" value (space-separated). */
/* The feature bits named in a blank-separated list of flag names (the
 * /proc/cpuinfo "flags" / "Features" line), by a table's names. Unknown
 * names are skipped; NULL gives 0. */
uint64_t gpo_isa_from_names(const char *names, const gpo_isa_name *table, size_t n);

uint64_t gpo_x86_features_from_flags(const char *flags);

/* 1..4: the highest x86-64 psABI level whose features are all present;
 * 0 when not even x86-64-v1 (x86_uarch.c). */
int32_t gpo_x86_level(uint64_t isa);

/* Every feature levels 1..level need (0 for level < 1). */
uint64_t gpo_x86_level_features(int32_t level);

enum {
    GPO_X86_VENDOR_OTHER = 0,
    GPO_X86_VENDOR_INTEL = 1,
    GPO_X86_VENDOR_AMD = 2,
    GPO_X86_VENDOR_HYGON = 3
};

/* GPO_X86_VENDOR_* of a cpuid vendor string; *name (may be NULL) gets the
 * normalised vendor name ("Intel") or NULL when unknown. */
int gpo_x86_vendor(const char *vendor_id, const char **name);

/* Fills microarch from the vendor/family/model table, falling back to the
 * feature set (and saying why in src_microarch). */
void gpo_x86_name_microarch(gpo_cpu_facts *f);

/* Vendor, model, family and features: cpuid on the live system, the tree's
 * /proc/cpuinfo when recorded (or when cpuid is not available). */
gpuopt_status gpo_x86_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* Live cpuid only (x86 builds): fills vendor, family/model/stepping, brand
 * and isa (with OS support for AVX/AVX-512/AMX state checked in XCR0).
 * Under a hypervisor the brand is left empty (each cpuid traps there; the
 * caller reads it from /proc/cpuinfo).
 * Returns 0, or -1 when not built for x86 or cpuid is missing. */
int gpo_x86_cpuid_live(gpo_cpu_facts *f);

/* Maximum core frequency from cpuid leaf 0x16 (live x86 only, after
 * gpo_x86_cpuid_live filled f->cpuid_max_leaf), -1 when the leaf is absent
 * or reports 0 (common under hypervisors). */
int32_t gpo_x86_cpuid_max_mhz(const gpo_cpu_facts *f);

/* ---- arm64 (cpuinfo_arm.c) ----------------------------------------------- */

/* Feature bits from a /proc/cpuinfo "Features" value. */
uint64_t gpo_arm_features_from_names(const char *names);

/* Feature bits from getauxval(AT_HWCAP) and getauxval(AT_HWCAP2) values. */
uint64_t gpo_arm_features_from_hwcap(uint64_t hwcap, uint64_t hwcap2);

/* Parses arm64 /proc/cpuinfo text: MIDR fields of the first processor and
 * its Features (isa). Returns 0, -1 when the text holds no arm64 processor. */
int gpo_arm_parse_cpuinfo(const char *text, gpo_cpu_facts *f);

/* Fills vendor, microarch (core name) and isa_level from the MIDR table,
 * falling back to the feature set. */
void gpo_arm_name_core(gpo_cpu_facts *f);

/* Reads /proc/cpuinfo (+ getauxval live on arm64, + the SVE vector length). */
gpuopt_status gpo_arm_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* ---- topology (topology.c) ----------------------------------------------- */

/* Logical CPUs, physical cores, sockets, NUMA nodes, caches, max clock. */
gpuopt_status gpo_cpu_topology_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* Physical cores and NUMA nodes that the CPUs of f->affinity belong to. */
void gpo_cpu_topology_span(const gpo_fs *fs, gpo_cpu_facts *f);

/* Parses a sysfs cache size ("32K", "1024K", "32768K", "36M"). Returns 0 or
 * -1 when malformed. */
int gpo_cpu_parse_cache_size(const char *text, uint64_t *bytes);

/* ---- affinity (affinity.c) ----------------------------------------------- */

/* sched_getaffinity live; the tree's /proc/self/status Cpus_allowed_list
 * when recorded. Falls back to the online CPUs. */
gpuopt_status gpo_cpu_affinity_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* Finds "Cpus_allowed_list:" in /proc/<pid>/status text and parses it into
 * f->affinity / affinity_cpus. Returns 0, -1 when absent or malformed. */
int gpo_cpu_parse_status_affinity(const char *status, gpo_cpu_facts *f);

/* ---- cgroup (cgroup.c) --------------------------------------------------- */

/* Parses cgroup v2 cpu.max ("max 100000", "150000 100000", "150000").
 * *quota = -1 for "max". Returns 0, -1 when malformed. */
int gpo_cgroup_parse_cpu_max(const char *text, int64_t *quota, int64_t *period);

/* Parses a memory limit file (v2 memory.max: bytes or "max"; v1
 * memory.limit_in_bytes). *limit = 0 when unlimited (v1 reports a number
 * near 2^63 for that). Returns 0, -1 when malformed. */
int gpo_cgroup_parse_memory_limit(const char *text, uint64_t *limit);

/* Finds the cgroup path of `controller` ("cpu", "memory") in
 * /proc/self/cgroup text: the v1 line naming the controller, else the v2
 * "0::" line (*version says which). Returns 0, -1 when absent. */
int gpo_cgroup_parse_self(const char *text, const char *controller, char *path, size_t cap,
                          int *version);

/* Finds where the hierarchy of `controller` is mounted in
 * /proc/self/mountinfo text (v1: fstype cgroup with the controller among
 * its options; version 2: fstype cgroup2). Writes the mount point and the
 * mount's root within the hierarchy. Returns 0, -1 when not mounted. */
int gpo_cgroup_parse_mountinfo(const char *text, const char *controller, int version,
                               char *mount_point, size_t mp_cap, char *root, size_t root_cap);

/* Tightest cpu quota and memory limit over the process's cgroup and every
 * ancestor, v2 or v1 per controller. */
gpuopt_status gpo_cgroup_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* ---- memory (memory.c) --------------------------------------------------- */

/* MemTotal / MemAvailable in bytes from /proc/meminfo text. Returns 0, -1
 * when MemTotal is absent or malformed (mem_available may stay 0). */
int gpo_cpu_parse_meminfo(const char *text, uint64_t *total, uint64_t *available);

/* /proc/meminfo, then memory_bytes / memory_free_bytes capped by the
 * cgroup limit (read first). */
gpuopt_status gpo_cpu_memory_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* Free memory now: MemAvailable, capped by the limit minus the current
 * usage of the cgroup holding f->cg_mem_limit. GPUOPT_ERR_IO when
 * /proc/meminfo cannot be read. */
gpuopt_status gpo_cpu_memory_free_now(const gpo_fs *fs, const gpo_cpu_facts *f,
                                      uint64_t *free_bytes);

/* ---- derived facts (cpu_facts.c) ----------------------------------------- */

/* usable_cpus = min(affinity_cpus, ceil(quota_cpus)), at least 1. */
int32_t gpo_cpu_usable_from_quota(int32_t affinity_cpus, int64_t quota_us, int64_t period_us);

/* fp32 lanes of the widest usable vector (4 for SSE/NEON, 8 AVX, 16
 * AVX-512, SVE length / 32). */
int32_t gpo_cpu_simd_lanes(const gpo_cpu_facts *f);

/* Nominal fp32 FLOP per cycle per core (lanes x 2 for FMA x pipes). */
int32_t gpo_cpu_flops_per_cycle(const gpo_cpu_facts *f);

/* Peak fp32 GFLOP/s estimate: usable physical cores x GHz x FLOP/cycle;
 * 0 when the clock is unknown. Ordering only. */
double gpo_cpu_est_gflops(const gpo_cpu_facts *f);

/* Feature names of f->isa for details ("sse4.2", "avx2", "amx", "neon", ...),
 * in table order; calls fn for each. */
void gpo_cpu_feature_names(const gpo_cpu_facts *f, void (*fn)(const char *name, void *user),
                           void *user);

/* CPU-set helpers over f->affinity-sized bitmaps. */
static inline int gpo_cpuset_has(const unsigned char *set, int cpu)
{
    return cpu >= 0 && cpu < GPO_CPU_MAX && (set[cpu / 8] >> (cpu % 8)) & 1;
}

#endif
