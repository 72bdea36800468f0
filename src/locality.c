/* PCI locality of a device (see locality.h). The files are the kernel's
 * (Documentation/ABI/testing/sysfs-bus-pci: "numa_node", "local_cpulist"
 * and its mask twin "local_cpus"); what the tools built on them show is
 * the same, e.g. `nvidia-smi topo -m` "CPU Affinity" / "NUMA Affinity"
 * and hwloc's PCI objects. */
#include "locality.h"

#include <assert.h>
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
