/* Where a PCI device sits: its NUMA node and the CPUs local to it, read
 * from PCI sysfs for every device with a bus id, whichever backend found
 * it (as hwloc hangs a GPU under its PCI object's NUMA node). */
#ifndef GPO_LOCALITY_H
#define GPO_LOCALITY_H

#include "device.h"
#include "knob.h"
#include "util/cpuset.h"
#include "util/fs.h"

/* Each CPU's logical core index, as hwloc numbers cores (lstopo -l "Core
 * L#") and Slurm's gres.conf Cores= wants them (gres.conf(5), Cores: "a
 * logical core index ... Core 0 will be the first core on the first
 * socket"): cores ordered by package, then by their first CPU. Read once
 * per context, only when the device list is written out (plans never need
 * it). */
typedef struct gpo_core_map {
    int state;                     /* 0 not read, 1 read, -1 the topology files are missing */
    int16_t core[GPO_CPUSET_BITS]; /* -1: not an online CPU */
} gpo_core_map;

/* Fills dev->numa_node and dev->local_cpus from
 * /sys/bus/pci/devices/<bdf>/numa_node and local_cpulist (through `fs`).
 * Leaves them unknown (-1, "") when the device has no PCI bus id, the files
 * are missing or malformed, or the kernel says -1 (no NUMA, or firmware
 * that does not tell: Documentation/ABI/testing/sysfs-bus-pci,
 * "numa_node"). Never fails. */
void gpo_locality_read(const gpo_fs *fs, gpuopt_device *dev);

/* Fills dev->local_cores from dev->local_cpus, reading `map` first when it
 * was not read yet; leaves it "" when the CPU topology is unknown. */
void gpo_locality_cores(const gpo_fs *fs, gpo_core_map *map, gpuopt_device *dev);

/* The form of cpu.affinity's values: 1 when `text` is a Linux CPU list
 * naming at least one CPU ("0-3,8"), else 0. */
int gpo_cpulist_form(const char *text);

/* cpu.affinity_threads: one host thread per CPU of cpu.affinity
 * (OMP_NUM_THREADS). Absent on a CPU device (both derivations), whose
 * backend's threads and omp.* knobs export the same variables. */
gpuopt_status gpo_derive_affinity_threads(const gpo_knob_input *in, const gpo_derive_env *env,
                                          gpo_derivation *out);

/* cpu.affinity_places: OpenMP places, one per CPU of cpu.affinity, in the
 * interval form "{0}:4,{112}:4" (OMP_PLACES). */
gpuopt_status gpo_derive_affinity_places(const gpo_knob_input *in, const gpo_derive_env *env,
                                         gpo_derivation *out);

#endif
