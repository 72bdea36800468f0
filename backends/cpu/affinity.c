/* The CPUs this process may run on (what nproc, OpenMP runtimes and the
 * JDK count), read by the library's one reader (src/util/cpuset.c) and
 * kept in the CPU facts with where they came from. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/affinity.h"
#include "cpu/cpu_procfs.h"
#include "util/cpuset.h"
#include "util/strutil.h"

int gpo_cpu_parse_status_affinity(const char *status, gpo_cpu_facts *f)
{
    assert(f);
    unsigned char set[GPO_CPU_SET_BYTES];
    int count = gpo_parse_status_cpus(status, set);
    if (count < 1)
        return -1;
    memcpy(f->affinity, set, sizeof set);
    f->affinity_cpus = count;
    return 0;
}

gpuopt_status gpo_cpu_affinity_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    assert(fs && f);
    unsigned char set[GPO_CPU_SET_BYTES];
    char src[sizeof f->src_affinity];
    int count = gpo_process_cpus(fs, set, src, sizeof src);
    if (count >= 1) {
        memcpy(f->affinity, set, sizeof set);
        f->affinity_cpus = count;
        gpo_strlcpy(f->src_affinity, src, sizeof f->src_affinity);
        return GPUOPT_OK;
    }
    gpo_cpu_note(f, log, GPUOPT_LOG_INFO,
                 gpo_fs_is_recorded(fs)
                     ? "no usable Cpus_allowed_list in /proc/self/status: using online CPUs"
                     : "sched_getaffinity failed: using online CPUs");
    memcpy(f->affinity, f->online, sizeof f->affinity);
    f->affinity_cpus = f->logical_cpus > 0 ? f->logical_cpus : 1;
    gpo_strlcpy(f->src_affinity, "online CPUs (no affinity mask)", sizeof f->src_affinity);
    return GPUOPT_OK;
}
