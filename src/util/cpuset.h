/* CPU sets as the kernel writes them ("0-19,40-59") and the CPUs this
 * process may run on, for every part of the library that places work on
 * CPUs: the CPU backend's thread count and the core's GPU affinity rule
 * (src/locality.c) read the same mask the same way. */
#ifndef GPO_CPUSET_H
#define GPO_CPUSET_H

#include <stddef.h>

#include "fs.h"

/* Largest CPU number + 1 the library handles; the kernel's default
 * NR_CPUS on x86-64 distribution kernels is 8192, machines past 4096 CPUs
 * are not met here. */
#define GPO_CPUSET_BITS 4096
#define GPO_CPUSET_BYTES (GPO_CPUSET_BITS / 8)

/* Writes the set of `nbits` bits as a Linux CPU list ("0-3,8,10-11"), ""
 * when empty. Returns 0, or -1 when it does not fit in cap (out then holds
 * ""). */
int gpo_cpulist_format(const unsigned char *set, size_t nbits, char *out, size_t cap);

/* The CPUs this process may run on: sched_getaffinity(2) on the live system
 * (the kernel keeps the mask inside the cgroup's cpuset.cpus.effective,
 * Documentation/admin-guide/cgroup-v2.rst "Cpuset"), the recorded tree's
 * /proc/self/status "Cpus_allowed_list" otherwise, so a tree gives the same
 * answer on any machine. Fills `set` (GPO_CPUSET_BYTES) and `src` (where
 * it came from); returns the number of CPUs, or -1 when neither answers. */
int gpo_process_cpus(const gpo_fs *fs, unsigned char *set, char *src, size_t cap);

/* Finds "Cpus_allowed_list:" in /proc/<pid>/status text (may be NULL) and
 * parses it into `set` (GPO_CPUSET_BYTES). Returns the number of CPUs, -1
 * when absent, malformed or empty. */
int gpo_parse_status_cpus(const char *status, unsigned char *set);

#endif
