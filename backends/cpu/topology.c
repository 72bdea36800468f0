/* Host topology from sysfs: online CPUs, physical cores, sockets, NUMA
 * nodes, cache sizes and the maximum clock.
 *
 * Layout: Documentation/ABI/stable/sysfs-devices-system-cpu,
 * Documentation/ABI/testing/sysfs-devices-system-cpu ("cache/indexN"),
 * Documentation/ABI/stable/sysfs-devices-node and
 * Documentation/admin-guide/cputopology.rst of the Linux kernel.
 *
 * Sibling lists are read once per core and once per package, not once per
 * CPU: a CPU already covered by a list seen earlier is skipped, so a
 * 224-CPU host costs about cores + sockets small reads. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_procfs.h"
#include "cpu/topology.h"
#include "util/strutil.h"

#define SYS_CPU "/sys/devices/system/cpu"
#define SYS_NODE "/sys/devices/system/node"

int gpo_cpu_parse_cache_size(const char *text, uint64_t *bytes)
{
    assert(bytes);
    if (!text)
        return -1;
    char *end;
    const char *p = text;
    while (*p == ' ')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    unsigned long long v = strtoull(p, &end, 10);
    static const char units[] = "KMG"; /* the kernel's powers of 1024 */
    const char *unit = *end ? strchr(units, *end) : NULL;
    uint64_t mult = unit ? (uint64_t)1 << (10 * (unit - units + 1)) : 1;
    end += unit != NULL;
    while (*end == ' ' || *end == '\n')
        end++;
    if (*end || v > UINT64_MAX / mult)
        return -1;
    *bytes = v * mult;
    return 0;
}

static int first_cpu(const unsigned char *set)
{
    for (int c = 0; c < GPO_CPU_MAX; c++)
        if (gpo_cpuset_has(set, c))
            return c;
    return -1;
}

/* Reads a CPU list file into `set`; returns the count, -1 when missing or
 * malformed (with a note saying which). */
static int read_cpulist(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f, const char *path,
                        unsigned char *set)
{
    char buf[4096];
    if (gpo_fs_read(fs, path, buf, sizeof buf))
        return -1;
    int n = gpo_parse_cpulist(buf, set, GPO_CPU_MAX);
    if (n < 0)
        gpo_cpu_note(f, log, GPUOPT_LOG_WARN, "%s holds '%.40s', not a CPU list: ignored", path,
                     buf);
    return n;
}

static void read_online(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    int n = read_cpulist(fs, log, f, SYS_CPU "/online", f->online);
    if (n > 0) {
        f->logical_cpus = n;
        gpo_strlcpy(f->src_topology, SYS_CPU, sizeof f->src_topology);
        return;
    }
    /* Without sysfs: count the processors /proc/cpuinfo lists. */
    memset(f->online, 0, sizeof f->online);
    const char *text;
    n = 0;
    if (gpo_cpu_cpuinfo(fs, f, &text) == GPUOPT_OK) {
        const char *cur = text;
        char key[64], val[32];
        while (gpo_cpuinfo_next(&cur, key, sizeof key, val, sizeof val)) {
            if (strcmp(key, "processor") != 0)
                continue;
            int cpu = atoi(val);
            if (cpu >= 0 && cpu < GPO_CPU_MAX && !gpo_cpuset_has(f->online, cpu)) {
                gpo_cpuset_add(f->online, cpu);
                n++;
            }
        }
    }
    if (n > 0) {
        f->logical_cpus = n;
        gpo_strlcpy(f->src_topology, "/proc/cpuinfo processor entries", sizeof f->src_topology);
    } else {
        f->online[0] = 1;
        f->logical_cpus = 1;
        gpo_strlcpy(f->src_topology, "assumed 1 CPU", sizeof f->src_topology);
    }
    gpo_cpu_note(f, log, GPUOPT_LOG_INFO, "no usable %s/online: %s", SYS_CPU, f->src_topology);
}

/* Counts the groups that the sibling lists `leaf` (thread_siblings_list,
 * core_siblings_list) split `cpus` into. -1 when a list is unreadable. */
static int count_groups(const gpo_fs *fs, const unsigned char *cpus, const char *leaf)
{
    unsigned char done[GPO_CPU_SET_BYTES], group[GPO_CPU_SET_BYTES];
    int end = gpo_cpuset_end(cpus);
    size_t used = (size_t)(end + 7) / 8; /* bytes that can hold a CPU of `cpus` */
    memset(done, 0, used);
    int groups = 0;
    for (int c = 0; c < end; c++) {
        if (!gpo_cpuset_has(cpus, c) || gpo_cpuset_has(done, c))
            continue;
        char path[128], buf[4096];
        snprintf(path, sizeof path, SYS_CPU "/cpu%d/topology/%s", c, leaf);
        if (gpo_fs_read(fs, path, buf, sizeof buf) ||
            gpo_parse_cpulist(buf, group, GPO_CPU_MAX) < 1)
            return -1;
        for (size_t i = 0; i < used; i++)
            done[i] |= group[i];
        gpo_cpuset_add(done, c); /* a list not naming c must not loop */
        groups++;
    }
    return groups;
}

/* x86 /proc/cpuinfo fallback: distinct "physical id" and (physical id,
 * core id) pairs. */
static void cores_from_cpuinfo(const gpo_fs *fs, gpo_cpu_facts *f)
{
    const char *text;
    if (gpo_cpu_cpuinfo(fs, f, &text))
        return;
    enum { MAXP = 1024 };
    static const int none = -1;
    int *pairs = malloc(sizeof(int) * 2 * MAXP);
    int npairs = 0, pkg = none, sockets = 0, packages[64];
    if (!pairs)
        goto out;
    const char *cur = text;
    char key[64], val[32];
    while (gpo_cpuinfo_next(&cur, key, sizeof key, val, sizeof val)) {
        if (strcmp(key, "physical id") == 0) {
            pkg = atoi(val);
            int seen = 0;
            for (int i = 0; i < sockets; i++)
                seen |= packages[i] == pkg;
            if (!seen && sockets < 64)
                packages[sockets++] = pkg;
        } else if (strcmp(key, "core id") == 0 && pkg != none) {
            int core = atoi(val), seen = 0;
            for (int i = 0; i < npairs; i++)
                seen |= pairs[2 * i] == pkg && pairs[2 * i + 1] == core;
            if (!seen && npairs < MAXP) {
                pairs[2 * npairs] = pkg;
                pairs[2 * npairs + 1] = core;
                npairs++;
            }
        }
    }
    if (npairs > 0 && sockets > 0) {
        f->physical_cores = npairs;
        f->sockets = sockets;
    }
out:
    free(pairs);
}

static void read_cores(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    int cores = count_groups(fs, f->online, "thread_siblings_list");
    int sockets = count_groups(fs, f->online, "core_siblings_list");
    if (cores > 0 && sockets > 0) {
        f->physical_cores = cores;
        f->sockets = sockets;
        return;
    }
    cores_from_cpuinfo(fs, f);
    if (f->physical_cores > 0) {
        gpo_cpu_note(f, log, GPUOPT_LOG_INFO,
                     "no sysfs sibling lists: cores and sockets from /proc/cpuinfo");
        return;
    }
    f->physical_cores = f->logical_cpus;
    f->sockets = 1;
    gpo_cpu_note(
        f, log, GPUOPT_LOG_INFO,
        "no CPU topology in sysfs or /proc/cpuinfo: assuming one core per CPU (%d), 1 socket",
        f->logical_cpus);
}

static void read_nodes(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    unsigned char nodes[GPO_CPU_SET_BYTES];
    int n = read_cpulist(fs, log, f, SYS_NODE "/online", nodes);
    if (n > 0) {
        f->numa_nodes = n;
        return;
    }
    /* A kernel without CONFIG_NUMA has no node directory: one node. */
    f->numa_nodes = 1;
}

/* The kernel numbers a CPU's caches index0, index1, ... without gaps
 * (drivers/base/cacheinfo.c); more than 8 levels/types exist nowhere. */
#define MAX_CACHE_INDEX 8

/* Each level and type has one index: once L1d, L2 and L3 are known, the
 * indices left (an instruction cache, an L4) change nothing and are not
 * read. */
static int caches_known(const gpo_cpu_facts *f)
{
    return f->l1d.size_bytes && f->l2.size_bytes && f->l3.size_bytes;
}

static void read_caches(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    int cpu = first_cpu(f->online);
    char dir[128];
    snprintf(dir, sizeof dir, SYS_CPU "/cpu%d/cache", cpu < 0 ? 0 : cpu);
    int found = 0;
    for (int i = 0; i < MAX_CACHE_INDEX && !caches_known(f); i++) {
        char type[32], level[16], size[32], shared[4096];
        /* "type" first: a missing index ends the list, and instruction
         * caches need no further read. */
        if (gpo_fs_readf(fs, type, sizeof type, "%s/index%d/type", dir, i))
            break;
        found++;
        if (strcmp(type, "Instruction") == 0 ||
            gpo_fs_readf(fs, level, sizeof level, "%s/index%d/level", dir, i))
            continue;
        gpo_cpu_cache *c = NULL;
        if (strcmp(level, "1") == 0 && strcmp(type, "Data") == 0)
            c = &f->l1d;
        else if (strcmp(level, "2") == 0)
            c = &f->l2;
        else if (strcmp(level, "3") == 0)
            c = &f->l3;
        if (!c || gpo_fs_readf(fs, size, sizeof size, "%s/index%d/size", dir, i))
            continue;
        if (gpo_cpu_parse_cache_size(size, &c->size_bytes)) {
            gpo_cpu_note(f, log, GPUOPT_LOG_WARN, "%s/index%d/size holds '%.20s': ignored", dir, i,
                         size);
            c->size_bytes = 0;
            continue;
        }
        unsigned char set[GPO_CPU_SET_BYTES];
        int n = -1;
        if (gpo_fs_readf(fs, shared, sizeof shared, "%s/index%d/shared_cpu_list", dir, i) ==
            GPUOPT_OK)
            n = gpo_parse_cpulist(shared, set, GPO_CPU_MAX);
        /* Instances: one per group of sharing CPUs, assuming every group is
         * alike (as lscpu does when it multiplies). */
        c->shared_cpus = n > 0 ? n : 1;
        c->instances = (f->logical_cpus + c->shared_cpus - 1) / c->shared_cpus;
    }
    if (!found) {
        gpo_cpu_note(f, log, GPUOPT_LOG_INFO, "no %s: cache sizes unknown", dir);
        gpo_strlcpy(f->src_caches, "unknown", sizeof f->src_caches);
        return;
    }
    gpo_snprintf(f->src_caches, sizeof f->src_caches, "%s", dir);
}

static void read_clock(const gpo_fs *fs, gpo_cpu_facts *f)
{
    int cpu = first_cpu(f->online);
    char path[128];
    uint64_t khz;
    snprintf(path, sizeof path, SYS_CPU "/cpu%d/cpufreq/cpuinfo_max_freq", cpu < 0 ? 0 : cpu);
    if (gpo_fs_read_u64(fs, path, &khz) == GPUOPT_OK && khz >= 1000 && khz < 100000000) {
        f->clock_mhz = (int32_t)(khz / 1000);
        gpo_strlcpy(f->src_clock, path, sizeof f->src_clock);
        return;
    }
    /* Filled by the live x86 reader only (a recorded tree has no cpuid). */
    if (f->cpuid_max_mhz > 0) {
        f->clock_mhz = f->cpuid_max_mhz;
        gpo_strlcpy(f->src_clock, "cpuid leaf 0x16 maximum frequency", sizeof f->src_clock);
        return;
    }
    /* Without cpufreq (virtual machines, some arm64 servers): the highest
     * "cpu MHz" the kernel shows, a current rather than a maximum clock. */
    const char *text;
    if (gpo_cpu_cpuinfo(fs, f, &text))
        return;
    double best = 0;
    const char *cur = text;
    char key[64], val[64];
    while (gpo_cpuinfo_next(&cur, key, sizeof key, val, sizeof val)) {
        if (strcmp(key, "cpu MHz") != 0)
            continue;
        char *end;
        double mhz = strtod(val, &end);
        if (end != val && !*end && mhz > best && mhz < 100000)
            best = mhz;
    }
    if (best >= 1) {
        f->clock_mhz = (int32_t)(best + 0.5);
        gpo_strlcpy(f->src_clock, "/proc/cpuinfo cpu MHz (current, no cpufreq)",
                    sizeof f->src_clock);
    }
}

gpuopt_status gpo_cpu_topology_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    assert(fs && f);
    read_online(fs, log, f);
    read_cores(fs, log, f);
    read_nodes(fs, log, f);
    read_caches(fs, log, f);
    read_clock(fs, f);
    return GPUOPT_OK;
}

void gpo_cpu_topology_span(const gpo_fs *fs, gpo_cpu_facts *f)
{
    assert(fs && f);
    /* The usual case, a mask of every online CPU, needs no more reads. */
    if (memcmp(f->affinity, f->online, sizeof f->online) == 0 && f->physical_cores > 0 &&
        f->numa_nodes > 0) {
        f->affinity_cores = f->physical_cores;
        f->affinity_nodes = f->numa_nodes;
        return;
    }
    f->affinity_cores = count_groups(fs, f->affinity, "thread_siblings_list");
    if (f->affinity_cores < 0 && f->logical_cpus > 0 && f->physical_cores > 0)
        f->affinity_cores =
            (f->affinity_cpus * f->physical_cores + f->logical_cpus - 1) / f->logical_cpus;

    char **names = NULL;
    size_t count = 0;
    if (gpo_fs_list(fs, SYS_NODE, &names, &count)) {
        f->affinity_nodes = 1;
        return;
    }
    int spanned = 0;
    for (size_t i = 0; i < count; i++) {
        if (strncmp(names[i], "node", 4) != 0 || names[i][4] < '0' || names[i][4] > '9')
            continue;
        char buf[4096];
        unsigned char set[GPO_CPU_SET_BYTES];
        if (gpo_fs_readf(fs, buf, sizeof buf, SYS_NODE "/%s/cpulist", names[i]) ||
            gpo_parse_cpulist(buf, set, GPO_CPU_MAX) < 1)
            continue;
        for (size_t b = 0; b < sizeof set; b++) {
            if (set[b] & f->affinity[b]) {
                spanned++;
                break;
            }
        }
    }
    gpo_fs_list_free(names, count);
    f->affinity_nodes = spanned > 0 ? spanned : 1;
}
