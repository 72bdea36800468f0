/* Reading the CPU facts in order, and the facts derived from them
 * (usable CPUs under a quota, vector lanes, nominal throughput). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_facts.h"
#include "util/strutil.h"

void gpo_cpu_facts_init(gpo_cpu_facts *f)
{
    if (!f)
        return;
    memset(f, 0, sizeof *f);
    f->family = f->model = f->stepping = -1;
    f->implementer = f->part = f->variant = f->revision = -1;
    f->logical_cpus = f->physical_cores = f->sockets = f->numa_nodes = -1;
    f->l1d.shared_cpus = f->l2.shared_cpus = f->l3.shared_cpus = -1;
    f->l1d.instances = f->l2.instances = f->l3.instances = -1;
    f->clock_mhz = -1;
    f->affinity_cores = f->affinity_nodes = -1;
    f->quota_us = -1;
    gpo_strlcpy(f->src_clock, "unknown", sizeof f->src_clock);
    gpo_strlcpy(f->src_quota, "not read", sizeof f->src_quota);
}

void gpo_cpu_note(gpo_cpu_facts *f, const gpo_logger *log, int32_t level, const char *fmt, ...)
{
    if (!f || !fmt)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = strlen(f->notes);
    if (len + 3 < sizeof f->notes)
        gpo_snprintf(f->notes + len, sizeof f->notes - len, "%s%s", len ? "; " : "", msg);
    gpo_log(log, level, "cpu: %s", msg);
}

int gpo_cpuinfo_next(const char **cursor, char *key, size_t kcap, char *val, size_t vcap)
{
    if (!cursor || !*cursor || !**cursor || !key || !val || !kcap || !vcap)
        return 0;
    const char *line = *cursor;
    const char *eol = strchr(line, '\n');
    const char *end = eol ? eol : line + strlen(line);
    *cursor = eol ? eol + 1 : end;
    const char *colon = memchr(line, ':', (size_t)(end - line));
    const char *kend = colon ? colon : end;
    size_t kn = (size_t)(kend - line);
    if (kn >= kcap)
        kn = kcap - 1;
    memcpy(key, line, kn);
    key[kn] = '\0';
    gpo_trim(key);
    val[0] = '\0';
    if (colon) {
        size_t vn = (size_t)(end - colon - 1);
        if (vn >= vcap)
            vn = vcap - 1;
        memcpy(val, colon + 1, vn);
        val[vn] = '\0';
        gpo_trim(val);
    }
    return 1;
}

int gpo_cpuinfo_field(const char *text, const char *key, char *val, size_t vcap)
{
    if (!text || !key || !val || !vcap)
        return -1;
    const char *cur = text;
    char k[64];
    while (gpo_cpuinfo_next(&cur, k, sizeof k, val, vcap))
        if (strcmp(k, key) == 0)
            return 0;
    val[0] = '\0';
    return -1;
}

gpuopt_status gpo_cpu_cpuinfo(const gpo_fs *fs, gpo_cpu_facts *f, const char **text)
{
    if (text)
        *text = NULL;
    if (!fs || !f || !text)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpo_cpu_cpuinfo: NULL argument");
    if (!f->cpuinfo_read) {
        f->cpuinfo_read = 1;
        f->cpuinfo_status = gpo_fs_read_alloc(fs, "/proc/cpuinfo", &f->cpuinfo, NULL);
        if (f->cpuinfo_status)
            return (gpuopt_status)f->cpuinfo_status; /* fs.c's detail names the path */
    }
    if (f->cpuinfo_status)
        return gpo_fail((gpuopt_status)f->cpuinfo_status, "%s/proc/cpuinfo could not be read",
                        fs->root);
    *text = f->cpuinfo;
    return GPUOPT_OK;
}

void gpo_cpu_cpuinfo_release(gpo_cpu_facts *f)
{
    if (!f)
        return;
    free(f->cpuinfo);
    f->cpuinfo = NULL;
    f->cpuinfo_read = 0;
    f->cpuinfo_status = 0;
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
    if (!fs || !f)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpo_cpu_facts_read: NULL argument");
    gpo_cpu_facts_init(f);
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
    if (!f)
        return -1;
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

int32_t gpo_cpu_flops_per_cycle(const gpo_cpu_facts *f)
{
    if (!f)
        return 0;
    int32_t lanes = gpo_cpu_simd_lanes(f);
    /* Nominal: two vector pipes per core, each an FMA (2 FLOP per lane)
     * where the ISA has FMA, else one add and one multiply pipe. Intel's
     * optimisation manual gives 32 FLOP/cycle for Haswell (AVX2+FMA) and
     * 64 for two-FMA AVX-512 parts; Neoverse N1's two 128-bit pipes give 16. */
    int fma = 1;
    if (f->arch == GPO_CPU_ARCH_X86_64)
        fma = (f->isa & (GPO_BIT(GPO_X86_FMA) | GPO_BIT(GPO_X86_AVX512F))) != 0;
    return fma ? lanes * 2 * 2 : lanes * 2;
}

double gpo_cpu_est_gflops(const gpo_cpu_facts *f)
{
    if (!f || f->clock_mhz <= 0)
        return 0.0;
    int32_t cores = f->usable_cpus > 0 ? f->usable_cpus : 1;
    /* SMT siblings share one core's vector pipes. */
    int32_t phys = f->affinity_cores > 0 ? f->affinity_cores : f->physical_cores;
    if (phys > 0 && phys < cores)
        cores = phys;
    return (double)cores * f->clock_mhz / 1000.0 * gpo_cpu_flops_per_cycle(f);
}

void gpo_cpu_feature_names(const gpo_cpu_facts *f, void (*fn)(const char *name, void *user),
                           void *user)
{
    if (!f || !fn)
        return;
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

uint64_t gpo_isa_from_names(const char *names, const gpo_isa_name *table, size_t n)
{
    uint64_t isa = 0;
    const char *p = names;
    while (p && *p) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *start = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        size_t len = (size_t)(p - start);
        for (size_t i = 0; len && i < n; i++) {
            if (strlen(table[i].flag) == len && memcmp(table[i].flag, start, len) == 0) {
                isa |= GPO_BIT(table[i].bit);
                break;
            }
        }
    }
    return isa;
}
