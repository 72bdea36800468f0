/* The cgroup reader: the CPU quota and memory limit that bind this
 * process, the tightest over its cgroup and every ancestor, v1 or v2 per
 * controller (cgroup.c). The parsers take text that may be NULL (a file
 * that could not be read) and return -1 for it. */
#ifndef GPO_CPU_CGROUP_H
#define GPO_CPU_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/cpu_facts.h"

/* Parses cgroup v2 cpu.max ("max 100000", "150000 100000", "150000").
 * *quota = -1 for "max". Returns 0, -1 when malformed. */
int gpo_cgroup_parse_cpu_max(const char *text, int64_t *quota, int64_t *period);

/* Parses a memory limit file (v2 memory.max: bytes or "max"; v1
 * memory.limit_in_bytes). *limit = 0 when unlimited (v1 reports a number
 * near 2^63 for that). Returns 0, -1 when malformed. */
int gpo_cgroup_parse_memory_limit(const char *text, uint64_t *limit);

/* Finds the cgroup path of `controller` ("cpu", "memory") in
 * /proc/self/cgroup text: the v1 line naming the controller, else the v2
 * "0::" line (*version says which). Returns 0, -1 when absent. */
int gpo_cgroup_parse_self(const char *text, const char *controller, char *path, size_t cap,
                          int *version);

/* Finds where the hierarchy of `controller` is mounted in
 * /proc/self/mountinfo text (v1: fstype cgroup with the controller among
 * its options; version 2: fstype cgroup2). Writes the mount point and the
 * mount's root within the hierarchy. Returns 0, -1 when not mounted. */
int gpo_cgroup_parse_mountinfo(const char *text, const char *controller, int version,
                               char *mount_point, size_t mp_cap, char *root, size_t root_cap);

/* Tightest cpu quota and memory limit (with that cgroup's usage) over the
 * process's cgroup and every ancestor, v2 or v1 per controller. */
gpuopt_status gpo_cgroup_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

#endif
