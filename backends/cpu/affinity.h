/* The affinity reader: the CPUs this process may run on (affinity.c). */
#ifndef GPO_CPU_AFFINITY_H
#define GPO_CPU_AFFINITY_H

#include "cpu/cpu_facts.h"

/* sched_getaffinity live; the tree's /proc/self/status Cpus_allowed_list
 * when recorded. Falls back to the online CPUs (read them first). */
gpuopt_status gpo_cpu_affinity_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* Finds "Cpus_allowed_list:" in /proc/<pid>/status text (may be NULL) and
 * parses it into f->affinity / affinity_cpus. Returns 0, -1 when absent or
 * malformed. */
int gpo_cpu_parse_status_affinity(const char *status, gpo_cpu_facts *f);

#endif
