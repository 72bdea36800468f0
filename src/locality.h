/* Where a PCI device sits: its NUMA node and the CPUs local to it, read
 * from PCI sysfs for every device with a bus id, whichever backend found
 * it (as hwloc hangs a GPU under its PCI object's NUMA node). */
#ifndef GPO_LOCALITY_H
#define GPO_LOCALITY_H

#include "device.h"
#include "util/fs.h"

/* Fills dev->numa_node and dev->local_cpus from
 * /sys/bus/pci/devices/<bdf>/numa_node and local_cpulist (through `fs`).
 * Leaves them unknown (-1, "") when the device has no PCI bus id, the files
 * are missing or malformed, or the kernel says -1 (no NUMA, or firmware
 * that does not tell: Documentation/ABI/testing/sysfs-bus-pci,
 * "numa_node"). Never fails. */
void gpo_locality_read(const gpo_fs *fs, gpuopt_device *dev);

#endif
