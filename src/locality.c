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
        gpo_parse_cpulist(text, set, GPO_CPUSET_BITS) > 0)
        gpo_cpulist_format(set, GPO_CPUSET_BITS, dev->local_cpus, sizeof dev->local_cpus);
}

int gpo_cpulist_form(const char *text)
{
    unsigned char set[GPO_CPUSET_BYTES];
    return text && gpo_parse_cpulist(text, set, GPO_CPUSET_BITS) > 0;
}

gpuopt_status gpo_derive_affinity_threads(const gpo_knob_input *in, const gpo_derive_env *env,
                                          gpo_derivation *out)
{
    (void)env;
    unsigned char set[GPO_CPUSET_BYTES];
    int n = in[0].present ? gpo_parse_cpulist(in[0].text, set, GPO_CPUSET_BITS) : 0;
    out->present = n > 0;
    if (!out->present) {
        gpo_snprintf(out->how, sizeof out->how, "cpu.affinity is not set");
        return GPUOPT_OK;
    }
    gpo_snprintf(out->value, sizeof out->value, "%d", n);
    gpo_snprintf(out->how, sizeof out->how, "one host thread per CPU of cpu.affinity (%s)",
                 in[0].text);
    return GPUOPT_OK;
}

gpuopt_status gpo_derive_affinity_places(const gpo_knob_input *in, const gpo_derive_env *env,
                                         gpo_derivation *out)
{
    (void)env;
    unsigned char set[GPO_CPUSET_BYTES];
    out->present = 0;
    if (!in[0].present || gpo_parse_cpulist(in[0].text, set, GPO_CPUSET_BITS) < 1) {
        gpo_snprintf(out->how, sizeof out->how, "cpu.affinity is not set");
        return GPUOPT_OK;
    }
    /* OpenMP 5.2 section 6.5 (OMP_PLACES): "{lower}:length" is `length`
     * places of one CPU each, starting at `lower`. libgomp and LLVM's
     * libomp bind threads when OMP_PLACES is set and OMP_PROC_BIND is not
     * (libgomp manual, OMP_PROC_BIND). */
    size_t used = 0;
    for (size_t c = 0; c < GPO_CPUSET_BITS; c++) {
        if (!((set[c / 8] >> (c % 8)) & 1))
            continue;
        size_t hi = c;
        while (hi + 1 < GPO_CPUSET_BITS && ((set[(hi + 1) / 8] >> ((hi + 1) % 8)) & 1))
            hi++;
        int w = snprintf(out->value + used, sizeof out->value - used, "%s{%zu}:%zu",
                         used ? "," : "", c, hi - c + 1);
        if (w < 0 || (size_t)w >= sizeof out->value - used) {
            out->value[0] = '\0';
            gpo_snprintf(out->how, sizeof out->how,
                         "cpu.affinity (%s) has too many ranges to write as OpenMP places",
                         in[0].text);
            return GPUOPT_OK;
        }
        used += (size_t)w;
        c = hi;
    }
    out->present = 1;
    gpo_snprintf(out->how, sizeof out->how, "one OpenMP place per CPU of cpu.affinity (%s)",
                 in[0].text);
    return GPUOPT_OK;
}
