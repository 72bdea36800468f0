/* The CPUs this process may run on: sched_getaffinity(2) on the live
 * system (what nproc, OpenMP runtimes and the JDK count), the recorded
 * tree's /proc/self/status "Cpus_allowed_list" otherwise, so fixtures give
 * the same answer on any test machine. A cpuset cgroup is already folded
 * into the mask by the kernel. */
#include <assert.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/affinity.h"
#include "cpu/cpu_procfs.h"
#include "util/strutil.h"

int gpo_cpu_parse_status_affinity(const char *status, gpo_cpu_facts *f)
{
    static const char key[] = "Cpus_allowed_list:";
    assert(f);
    if (!status)
        return -1;
    const char *p = status;
    while (p && *p) {
        if (strncmp(p, key, sizeof key - 1) == 0) {
            const char *v = p + sizeof key - 1;
            const char *eol = strchr(v, '\n');
            size_t n = eol ? (size_t)(eol - v) : strlen(v);
            char buf[4096];
            if (n >= sizeof buf)
                return -1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            unsigned char set[GPO_CPU_SET_BYTES];
            int count = gpo_parse_cpulist(buf, set, GPO_CPU_MAX);
            if (count < 1)
                return -1;
            memcpy(f->affinity, set, sizeof set);
            f->affinity_cpus = count;
            return 0;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return -1;
}

static int live_affinity(gpo_cpu_facts *f)
{
    cpu_set_t *set = CPU_ALLOC(GPO_CPU_MAX);
    if (!set)
        return -1;
    size_t size = CPU_ALLOC_SIZE(GPO_CPU_MAX);
    CPU_ZERO_S(size, set);
    int count = -1;
    if (sched_getaffinity(0, size, set) == 0) {
        memset(f->affinity, 0, sizeof f->affinity);
        count = CPU_COUNT_S(size, set);
        /* Stop at the last CPU of the mask, not at GPO_CPU_MAX. */
        for (int c = 0, seen = 0; seen < count && c < GPO_CPU_MAX; c++) {
            if (CPU_ISSET_S((size_t)c, size, set)) {
                gpo_cpuset_add(f->affinity, c);
                seen++;
            }
        }
    }
    CPU_FREE(set);
    if (count < 1)
        return -1;
    f->affinity_cpus = count;
    return 0;
}

gpuopt_status gpo_cpu_affinity_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    assert(fs && f);
    if (!gpo_fs_is_recorded(fs)) {
        if (live_affinity(f) == 0) {
            gpo_strlcpy(f->src_affinity, "sched_getaffinity", sizeof f->src_affinity);
            return GPUOPT_OK;
        }
        gpo_cpu_note(f, log, GPUOPT_LOG_INFO, "sched_getaffinity failed: using online CPUs");
    } else {
        char *status = NULL;
        gpuopt_status st = gpo_fs_read_alloc(fs, "/proc/self/status", &status, NULL);
        if (st == GPUOPT_ERR_NO_MEMORY)
            return st;
        int ok = st == GPUOPT_OK && gpo_cpu_parse_status_affinity(status, f) == 0;
        free(status);
        if (ok) {
            gpo_strlcpy(f->src_affinity, "/proc/self/status Cpus_allowed_list",
                        sizeof f->src_affinity);
            return GPUOPT_OK;
        }
        gpo_cpu_note(f, log, GPUOPT_LOG_INFO,
                     "no usable Cpus_allowed_list in /proc/self/status: using online CPUs");
    }
    memcpy(f->affinity, f->online, sizeof f->affinity);
    f->affinity_cpus = f->logical_cpus > 0 ? f->logical_cpus : 1;
    gpo_strlcpy(f->src_affinity, "online CPUs (no affinity mask)", sizeof f->src_affinity);
    return GPUOPT_OK;
}
