/* Where a PCI device sits: its NUMA node and the CPUs local to it, read
 * from PCI sysfs for every device with a bus id, whichever backend found
 * it (as hwloc hangs a GPU under its PCI object's NUMA node). */
#ifndef GPO_LOCALITY_H
#define GPO_LOCALITY_H

#include "device.h"
#include "knob.h"
#include "util/fs.h"

/* Fills dev->numa_node and dev->local_cpus from
 * /sys/bus/pci/devices/<bdf>/numa_node and local_cpulist (through `fs`).
 * Leaves them unknown (-1, "") when the device has no PCI bus id, the files
 * are missing or malformed, or the kernel says -1 (no NUMA, or firmware
 * that does not tell: Documentation/ABI/testing/sysfs-bus-pci,
 * "numa_node"). Never fails. */
void gpo_locality_read(const gpo_fs *fs, gpuopt_device *dev);

/* The form of cpu.affinity's values: 1 when `text` is a Linux CPU list
 * naming at least one CPU ("0-3,8"), else 0. */
int gpo_cpulist_form(const char *text);

/* cpu.affinity_threads: one host thread per CPU of cpu.affinity
 * (OMP_NUM_THREADS). */
gpuopt_status gpo_derive_affinity_threads(const gpo_knob_input *in, const gpo_derive_env *env,
                                          gpo_derivation *out);

/* cpu.affinity_places: OpenMP places, one per CPU of cpu.affinity, in the
 * interval form "{0}:4,{112}:4" (OMP_PLACES). */
gpuopt_status gpo_derive_affinity_places(const gpo_knob_input *in, const gpo_derive_env *env,
                                         gpo_derivation *out);

#endif
