/* The topology reader: online CPUs, physical cores, sockets, NUMA nodes,
 * caches and the maximum clock from sysfs, with /proc/cpuinfo as the
 * fallback (topology.c). */
#ifndef GPO_CPU_TOPOLOGY_H
#define GPO_CPU_TOPOLOGY_H

#include "cpu/cpu_facts.h"

/* Logical CPUs, physical cores, sockets, NUMA nodes, caches, max clock
 * (cpufreq, else f->cpuid_max_mhz, else /proc/cpuinfo). */
gpuopt_status gpo_cpu_topology_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* Physical cores and NUMA nodes that the CPUs of f->affinity belong to
 * (after gpo_cpu_affinity_read). */
void gpo_cpu_topology_span(const gpo_fs *fs, gpo_cpu_facts *f);

/* Parses a sysfs cache size ("32K", "1024K", "32768K", "36M"). Returns 0 or
 * -1 when malformed or NULL. */
int gpo_cpu_parse_cache_size(const char *text, uint64_t *bytes);

#endif
