/* The memory reader: host memory from /proc/meminfo capped by the cgroup
 * limit (memory.c), read at load and again for a plan when the load's
 * reading has aged. */
#ifndef GPO_CPU_MEMORY_H
#define GPO_CPU_MEMORY_H

#include <stdint.h>

#include "backend.h"
#include "cpu/cpu_facts.h"

/* How long a reading of free memory stands for "now": a plan made this
 * soon after the load (the usual create, select, plan sequence) takes the
 * load's reading instead of opening /proc/meminfo and the cgroup's usage
 * again. Free memory moves while the caller reads the plan anyway. */
#define GPO_CPU_FREE_FRESH_NS (UINT64_C(100) * 1000 * 1000)

/* MemTotal / MemAvailable in bytes from /proc/meminfo text (may be NULL).
 * Returns 0, -1 when MemTotal is absent or malformed (mem_available may
 * stay 0). */
int gpo_cpu_parse_meminfo(const char *text, uint64_t *total, uint64_t *available);

/* /proc/meminfo, then memory_bytes / memory_free_bytes capped by the
 * cgroup limit (read first), and memory_read_ns. */
gpuopt_status gpo_cpu_memory_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* Free memory at now_ns (CLOCK_MONOTONIC): f's reading when it has
 * MemAvailable and was taken less than GPO_CPU_FREE_FRESH_NS before now_ns,
 * else gpo_cpu_memory_free_now. */
gpuopt_status gpo_cpu_memory_free(const gpo_fs *fs, const gpo_cpu_facts *f, uint64_t now_ns,
                                  uint64_t *free_bytes);

/* Free memory read now: MemAvailable, capped by the limit minus the current
 * usage of the cgroup holding f->cg_mem_limit. GPUOPT_ERR_IO when
 * /proc/meminfo has no MemAvailable, its read's status when it cannot be
 * read. */
gpuopt_status gpo_cpu_memory_free_now(const gpo_fs *fs, const gpo_cpu_facts *f,
                                      uint64_t *free_bytes);

/* The ops table's memory_live: free memory as gpo_cpu_memory_free gives it
 * at now_ns, with the total the plan sizes against (MemTotal capped by the
 * cgroup limit), source GPUOPT_MEMORY_SOURCE_HOST, the words of where it
 * came from, and read_ns the load's when its reading was reused. */
gpuopt_status gpo_cpu_memory_live(const gpo_fs *fs, const gpo_cpu_facts *f, uint64_t now_ns,
                                  gpo_memory_reading *out);

#endif
