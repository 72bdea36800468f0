/* PCI locality of a device (see locality.h). The files are the kernel's
 * (Documentation/ABI/testing/sysfs-bus-pci: "numa_node", "local_cpulist"
 * and its mask twin "local_cpus"); what the tools built on them show is
 * the same, e.g. `nvidia-smi topo -m` "CPU Affinity" / "NUMA Affinity"
 * and hwloc's PCI objects. */
#include "locality.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cpuset.h"
#include "util/strutil.h"

static int has(const unsigned char *set, size_t c)
{
    return (set[c / 8] >> (c % 8)) & 1;
}

/* Reads topology/<file> of `cpu` as a CPU set; 0, or -1. */
static int topology_set(const gpo_fs *fs, size_t cpu, const char *file, unsigned char *set)
{
    char text[1024];
    return gpo_fs_readf(fs, text, sizeof text, "/sys/devices/system/cpu/cpu%zu/topology/%s", cpu,
                        file) == GPUOPT_OK &&
                   gpo_parse_cpulist(text, set, GPO_CPUSET_BITS) > 0
               ? 0
               : -1;
}

/* Documentation/ABI/stable/sysfs-devices-system-cpu, topology/:
 * core_siblings_list (the CPUs of one package) and thread_siblings_list
 * (the CPUs of one core). One read per package and one per core, not per
 * CPU: detection on a 224-CPU machine reads 114 files, not 448. */
static void core_map_read(const gpo_fs *fs, gpo_core_map *map)
{
    char text[1024];
    unsigned char online[GPO_CPUSET_BYTES], done[GPO_CPUSET_BYTES] = {0};
    unsigned char *pkg = malloc(GPO_CPUSET_BYTES), *sib = malloc(GPO_CPUSET_BYTES);
    map->state = -1;
    for (size_t c = 0; c < GPO_CPUSET_BITS; c++)
        map->core[c] = -1;
    if (!pkg || !sib ||
        gpo_fs_read(fs, "/sys/devices/system/cpu/online", text, sizeof text) != GPUOPT_OK ||
        gpo_parse_cpulist(text, online, GPO_CPUSET_BITS) < 1)
        goto out;
    /* Packages in the order of their first CPU; in each, cores in the
     * order of their first CPU. */
    int16_t next = 0;
    for (size_t c = 0; c < GPO_CPUSET_BITS; c++) {
        if (!has(online, c) || has(done, c))
            continue;
        if (topology_set(fs, c, "core_siblings_list", pkg) != 0)
            goto out;
        for (size_t k = c; k < GPO_CPUSET_BITS; k++) {
            if (!has(pkg, k) || !has(online, k) || map->core[k] >= 0)
                continue;
            if (topology_set(fs, k, "thread_siblings_list", sib) != 0)
                goto out;
            for (size_t t = 0; t < GPO_CPUSET_BITS; t++)
                if (has(sib, t) && has(online, t))
                    map->core[t] = next;
            next++;
        }
        for (size_t i = 0; i < GPO_CPUSET_BYTES; i++)
            done[i] |= pkg[i];
    }
    map->state = 1;
out:
    if (map->state != 1)
        for (size_t c = 0; c < GPO_CPUSET_BITS; c++)
            map->core[c] = -1;
    free(pkg);
    free(sib);
}

void gpo_locality_cores(const gpo_fs *fs, gpo_core_map *map, gpuopt_device *dev)
{
    assert(fs && map && dev);
    unsigned char cpus[GPO_CPUSET_BYTES], cores[GPO_CPUSET_BYTES] = {0};
    if (dev->local_cores[0] || gpo_parse_cpulist(dev->local_cpus, cpus, GPO_CPUSET_BITS) < 1)
        return;
    if (map->state == 0)
        core_map_read(fs, map);
    if (map->state != 1)
        return;
    for (size_t c = 0; c < GPO_CPUSET_BITS; c++)
        if (has(cpus, c) && map->core[c] >= 0)
            cores[map->core[c] / 8] |= (unsigned char)(1u << (map->core[c] % 8));
    gpo_cpulist_format(cores, GPO_CPUSET_BITS, dev->local_cores, sizeof dev->local_cores);
}

void gpo_locality_read(const gpo_fs *fs, gpuopt_device *dev)
{
    assert(fs && dev);
    char bdf[32], text[sizeof dev->local_cpus];
    if (gpo_pci_normalise(dev->info.pci_bus_id, bdf, sizeof bdf) != 0)
        return;
    if (gpo_fs_readf(fs, text, sizeof text, "/sys/bus/pci/devices/%s/numa_node", bdf) ==
        GPUOPT_OK) {
        char *end;
        long node = strtol(text, &end, 10);
        /* -1: the kernel does not know (one node, or firmware without
         * _PXM); a node past 4095 is not a node Linux builds for. */
        if (end != text && !*end && node >= 0 && node < 4096)
            dev->numa_node = (int32_t)node;
    }
    unsigned char set[GPO_CPUSET_BYTES];
    if (gpo_fs_readf(fs, text, sizeof text, "/sys/bus/pci/devices/%s/local_cpulist", bdf) ==
            GPUOPT_OK &&
        gpo_parse_cpulist(text, set, GPO_CPUSET_BITS) > 0) {
        gpo_cpulist_format(set, GPO_CPUSET_BITS, dev->local_cpus, sizeof dev->local_cpus);
    }
}

int gpo_cpulist_form(const char *text)
{
    unsigned char set[GPO_CPUSET_BYTES];
    return text && gpo_parse_cpulist(text, set, GPO_CPUSET_BITS) > 0;
}

/* On a CPU device the backend's own threads, omp.num_threads and
 * omp.places say how many threads and where, and export the same
 * variables: the affinity's thread knobs stay out of its way. */
static int cpu_device(const gpo_derive_env *env, gpo_derivation *out)
{
    if (!env->dev || env->dev->info.type != GPUOPT_DEVICE_TYPE_CPU)
        return 0;
    out->present = 0;
    return gpo_say(1, out->how, sizeof out->how,
                   "a CPU device's threads are its backend's threads and omp.* knobs");
}

gpuopt_status gpo_derive_affinity_threads(const gpo_knob_input *in, const gpo_derive_env *env,
                                          gpo_derivation *out)
{
    unsigned char set[GPO_CPUSET_BYTES];
    if (cpu_device(env, out))
        return GPUOPT_OK;
    int n = in[0].present ? gpo_parse_cpulist(in[0].text, set, GPO_CPUSET_BITS) : 0;
    out->present = n > 0;
    if (!out->present)
        return gpo_say(GPUOPT_OK, out->how, sizeof out->how, "cpu.affinity is not set");
    gpo_snprintf(out->value, sizeof out->value, "%d", n);
    return gpo_say(GPUOPT_OK, out->how, sizeof out->how,
                   "one host thread per CPU of cpu.affinity (%s)", in[0].text);
}

gpuopt_status gpo_derive_affinity_places(const gpo_knob_input *in, const gpo_derive_env *env,
                                         gpo_derivation *out)
{
    unsigned char set[GPO_CPUSET_BYTES];
    if (cpu_device(env, out))
        return GPUOPT_OK;
    out->present = 0;
    if (!in[0].present || gpo_parse_cpulist(in[0].text, set, GPO_CPUSET_BITS) < 1)
        return gpo_say(GPUOPT_OK, out->how, sizeof out->how, "cpu.affinity is not set");
    /* OpenMP 5.2 section 6.5 (OMP_PLACES): "{lower}:length" is `length`
     * places of one CPU each, starting at `lower`. libgomp and LLVM's
     * libomp bind threads when OMP_PLACES is set and OMP_PROC_BIND is not
     * (libgomp manual, OMP_PROC_BIND). */
    size_t used = 0;
    for (size_t c = 0; c < GPO_CPUSET_BITS; c++) {
        if (!has(set, c))
            continue;
        size_t hi = c;
        while (hi + 1 < GPO_CPUSET_BITS && has(set, hi + 1))
            hi++;
        int w = snprintf(out->value + used, sizeof out->value - used, "%s{%zu}:%zu",
                         used ? "," : "", c, hi - c + 1);
        if (w < 0 || (size_t)w >= sizeof out->value - used) {
            out->value[0] = '\0';
            return gpo_say(GPUOPT_OK, out->how, sizeof out->how,
                           "cpu.affinity has too many ranges to write as OpenMP places in %zu "
                           "characters",
                           sizeof out->value - 1);
        }
        used += (size_t)w;
        c = hi;
    }
    out->present = 1;
    return gpo_say(GPUOPT_OK, out->how, sizeof out->how,
                   "one OpenMP place per CPU of cpu.affinity (%s)", in[0].text);
}
