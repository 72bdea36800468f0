/* Reading the CPU facts: the readers called in dependency order, over one
 * /proc/cpuinfo text; and the facts derived from them (usable CPUs under a
 * quota, vector lanes, nominal throughput, feature names). The orchestrator
 * on top of the readers: nothing below calls back into this file. */
#include <assert.h>
#include <string.h>

#include "cpu/affinity.h"
#include "cpu/cgroup.h"
#include "cpu/cpu_facts.h"
#include "cpu/cpu_procfs.h"
#include "cpu/cpuid_x86.h"
#include "cpu/cpuinfo_arm.h"
#include "cpu/memory.h"
#include "cpu/topology.h"
#include "cpu/x86_isa.h"
#include "util/strutil.h"

void gpo_cpu_facts_init(gpo_cpu_facts *f)
{
    assert(f);
    memset(f, 0, sizeof *f);
    f->family = f->model = f->stepping = -1;
    f->implementer = f->part = f->variant = f->revision = -1;
    f->logical_cpus = f->physical_cores = f->sockets = f->numa_nodes = -1;
    f->l1d.shared_cpus = f->l2.shared_cpus = f->l3.shared_cpus = -1;
    f->l1d.instances = f->l2.instances = f->l3.instances = -1;
    f->clock_mhz = f->cpuid_max_mhz = -1;
    f->affinity_cores = f->affinity_nodes = -1;
    f->quota_us = -1;
    gpo_strlcpy(f->src_clock, "unknown", sizeof f->src_clock);
    gpo_strlcpy(f->src_quota, "not read", sizeof f->src_quota);
}

/* Which architecture a recorded tree describes: its /proc/cpuinfo tells
 * (arm64 prints MIDR fields, x86 prints vendor_id and flags). */
static int recorded_arch(const gpo_fs *fs, gpo_cpu_facts *f)
{
    const char *text;
    if (gpo_cpu_cpuinfo(fs, f, &text))
        return GPO_CPU_ARCH_UNKNOWN;
    char val[16];
    if (gpo_cpuinfo_field(text, "CPU implementer", val, sizeof val) == 0)
        return GPO_CPU_ARCH_ARM64;
    if (gpo_cpuinfo_field(text, "vendor_id", val, sizeof val) == 0)
        return GPO_CPU_ARCH_X86_64;
    return GPO_CPU_ARCH_UNKNOWN;
}

static int build_arch(void)
{
#if defined(__x86_64__)
    return GPO_CPU_ARCH_X86_64;
#elif defined(__aarch64__)
    return GPO_CPU_ARCH_ARM64;
#else
    return GPO_CPU_ARCH_UNKNOWN;
#endif
}

gpuopt_status gpo_cpu_facts_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    assert(fs && f);
    gpo_cpu_facts_init(f);
    /* Every reader falls back to "unknown" when /proc/cpuinfo cannot be
     * read; running out of memory reading it is no such fact, but a
     * failure of the whole read. The text is kept for the readers. */
    const char *text;
    if (gpo_cpu_cpuinfo(fs, f, &text) == GPUOPT_ERR_NO_MEMORY) {
        gpo_cpu_cpuinfo_release(f);
        return GPUOPT_ERR_NO_MEMORY;
    }
    int arch = gpo_fs_is_recorded(fs) ? recorded_arch(fs, f) : build_arch();
    if (arch == GPO_CPU_ARCH_UNKNOWN)
        arch = build_arch();
    gpuopt_status st = GPUOPT_OK;
    if (arch == GPO_CPU_ARCH_X86_64)
        st = gpo_x86_read(fs, log, f);
    else if (arch == GPO_CPU_ARCH_ARM64)
        st = gpo_arm_read(fs, log, f);
    else
        gpo_strlcpy(f->vendor, "unknown", sizeof f->vendor);
    if (!st)
        st = gpo_cpu_topology_read(fs, log, f);
    if (!st)
        st = gpo_cpu_affinity_read(fs, log, f);
    if (!st) {
        gpo_cpu_topology_span(fs, f);
        st = gpo_cgroup_read(fs, log, f);
    }
    if (!st)
        st = gpo_cpu_memory_read(fs, log, f);
    gpo_cpu_cpuinfo_release(f);
    if (st)
        return st;
    f->usable_cpus = gpo_cpu_usable_from_quota(f->affinity_cpus, f->quota_us, f->period_us);
    return GPUOPT_OK;
}

int32_t gpo_cpu_usable_from_quota(int32_t affinity_cpus, int64_t quota_us, int64_t period_us)
{
    int32_t usable = affinity_cpus > 0 ? affinity_cpus : 1;
    if (quota_us <= 0 || period_us <= 0)
        return usable;
    /* Round a fractional quota up, as the JDK (hotspot cgroupUtil_linux.cpp,
     * ceilf(quota / period)) and Go's runtime since 1.25 do: 1.5 CPUs of
     * quota can keep 2 threads busy 75% of the time, while 1 thread would
     * leave half a CPU unused. uber-go/automaxprocs rounds down instead
     * (to avoid any throttling); docs/knobs.md says why we do not. */
    int64_t ceil_cpus = quota_us / period_us + (quota_us % period_us != 0);
    if (ceil_cpus < 1)
        ceil_cpus = 1;
    return ceil_cpus < usable ? (int32_t)ceil_cpus : usable;
}

int32_t gpo_cpu_simd_lanes(const gpo_cpu_facts *f)
{
    assert(f);
    if (f->arch == GPO_CPU_ARCH_X86_64) {
        if (f->isa & GPO_BIT(GPO_X86_AVX512F))
            return 16;
        if (f->isa & GPO_BIT(GPO_X86_AVX))
            return 8;
        return 4; /* SSE2 is part of x86-64 */
    }
    if (f->arch == GPO_CPU_ARCH_ARM64) {
        if ((f->isa & GPO_BIT(GPO_ARM_SVE)) && f->sve_bits >= 128)
            return f->sve_bits / 32;
        return 4; /* AdvSIMD (NEON) is mandatory in Armv8-A */
    }
    return 1;
}

void gpo_cpu_feature_names(const gpo_cpu_facts *f, void (*fn)(const char *name, void *user),
                           void *user)
{
    assert(f && fn);
    const gpo_isa_name *table = NULL;
    size_t n = 0;
    if (f->arch == GPO_CPU_ARCH_X86_64) {
        table = gpo_x86_isa_names;
        n = gpo_n_x86_isa_names;
    } else if (f->arch == GPO_CPU_ARCH_ARM64) {
        table = gpo_arm_isa_names;
        n = gpo_n_arm_isa_names;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(f->isa & GPO_BIT(table[i].bit)))
            continue;
        const char *name = table[i].display ? table[i].display : table[i].flag;
        if (*name)
            fn(name, user);
    }
}
