/* CPU lists and the process's allowed CPUs (see cpuset.h). */
#include "cpuset.h"

#include <assert.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

static int has(const unsigned char *set, size_t c)
{
    return (set[c / 8] >> (c % 8)) & 1;
}

int gpo_cpulist_format(const unsigned char *set, size_t nbits, char *out, size_t cap)
{
    assert(set && out && cap > 0);
    size_t used = 0;
    out[0] = '\0';
    for (size_t c = 0; c < nbits; c++) {
        if (!has(set, c))
            continue;
        size_t hi = c;
        while (hi + 1 < nbits && has(set, hi + 1))
            hi++;
        int n = hi == c ? snprintf(out + used, cap - used, "%s%zu", used ? "," : "", c)
                        : snprintf(out + used, cap - used, "%s%zu-%zu", used ? "," : "", c, hi);
        if (n < 0 || (size_t)n >= cap - used) {
            out[0] = '\0';
            return -1;
        }
        used += (size_t)n;
        c = hi;
    }
    return 0;
}

int gpo_parse_status_cpus(const char *status, unsigned char *set)
{
    static const char key[] = "Cpus_allowed_list:";
    assert(set);
    for (const char *p = status; p && *p;) {
        if (strncmp(p, key, sizeof key - 1) == 0) {
            const char *v = p + sizeof key - 1;
            const char *eol = strchr(v, '\n');
            size_t n = eol ? (size_t)(eol - v) : strlen(v);
            char buf[4096];
            if (n >= sizeof buf)
                return -1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            int count = gpo_parse_cpulist(buf, set, GPO_CPUSET_BITS);
            return count >= 1 ? count : -1;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return -1;
}

static int live_cpus(unsigned char *set)
{
    cpu_set_t *cs = CPU_ALLOC(GPO_CPUSET_BITS);
    if (!cs)
        return -1;
    size_t size = CPU_ALLOC_SIZE(GPO_CPUSET_BITS);
    CPU_ZERO_S(size, cs);
    int count = -1;
    if (sched_getaffinity(0, size, cs) == 0) {
        memset(set, 0, GPO_CPUSET_BYTES);
        count = CPU_COUNT_S(size, cs);
        /* Stop at the last CPU of the mask, not at GPO_CPUSET_BITS. */
        for (int c = 0, seen = 0; seen < count && c < GPO_CPUSET_BITS; c++)
            if (CPU_ISSET_S((size_t)c, size, cs)) {
                set[c / 8] |= (unsigned char)(1u << (c % 8));
                seen++;
            }
    }
    CPU_FREE(cs);
    return count >= 1 ? count : -1;
}

int gpo_process_cpus(const gpo_fs *fs, unsigned char *set, char *src, size_t cap)
{
    assert(fs && set && src);
    if (!gpo_fs_is_recorded(fs)) {
        gpo_strlcpy(src, "sched_getaffinity", cap);
        return live_cpus(set);
    }
    char *status = NULL;
    if (gpo_fs_read_alloc(fs, "/proc/self/status", &status, NULL) != GPUOPT_OK)
        return -1;
    int count = gpo_parse_status_cpus(status, set);
    free(status);
    gpo_strlcpy(src, "/proc/self/status Cpus_allowed_list", cap);
    return count;
}
