/* The CPU quota and memory limit that really bind this process: the
 * tightest over its own cgroup and every ancestor up to the hierarchy's
 * mount, for cgroup v2 (cpu.max, memory.max) and v1 (cpu.cfs_quota_us /
 * cpu.cfs_period_us, memory.limit_in_bytes), chosen per controller as
 * /proc/self/cgroup says (a "hybrid" host has v1 controllers beside an
 * empty v2 hierarchy).
 *
 * Why every ancestor: a limit set on a parent (a Kubernetes pod slice, a
 * systemd slice) binds its children although their own files say "max".
 * Go's runtime reads only the leaf (runtime/cgroup_linux.go says so); the
 * JDK walks v2 ancestors (hotspot cgroupV2Subsystem_linux.cpp). File
 * formats: Documentation/admin-guide/cgroup-v2.rst ("cpu.max",
 * "memory.max", "memory.current") and cgroup-v1/{cpu,memory}.rst; mount
 * lookup: proc(5) "/proc/[pid]/mountinfo". */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cgroup.h"
#include "cpu/cpu_procfs.h"
#include "util/strutil.h"

/* v1 reports "no limit" as PAGE_COUNTER_MAX pages, a number just under
 * 2^63 (9223372036854771712 with 4 KiB pages); anything this large is no
 * limit. */
#define V1_UNLIMITED (UINT64_C(1) << 62)

static int parse_i64(const char *s, const char **end, int64_t *out)
{
    if (!isdigit((unsigned char)*s) && *s != '-')
        return -1;
    errno = 0;
    char *e;
    long long v = strtoll(s, &e, 10);
    if (errno || e == s)
        return -1;
    *out = v;
    *end = e;
    return 0;
}

int gpo_cgroup_parse_cpu_max(const char *text, int64_t *quota, int64_t *period)
{
    assert(quota && period);
    if (!text)
        return -1;
    const char *p = text, *end;
    int64_t q, per = 100000; /* the kernel's default period */
    while (*p == ' ')
        p++;
    if (strncmp(p, "max", 3) == 0) {
        q = -1;
        p += 3;
    } else if (parse_i64(p, &end, &q) == 0 && q > 0) {
        p = end;
    } else {
        return -1;
    }
    if (*p == ' ') {
        while (*p == ' ')
            p++;
        if (parse_i64(p, &end, &per) || per <= 0)
            return -1;
        p = end;
    } else if (*p && *p != '\n') {
        return -1;
    }
    while (*p == ' ' || *p == '\n')
        p++;
    if (*p)
        return -1;
    *quota = q;
    *period = per;
    return 0;
}

int gpo_cgroup_parse_memory_limit(const char *text, uint64_t *limit)
{
    assert(limit);
    if (!text)
        return -1;
    char buf[64];
    if (gpo_strlcpy(buf, text, sizeof buf) >= sizeof buf)
        return -1;
    gpo_trim(buf);
    if (strcmp(buf, "max") == 0) {
        *limit = 0;
        return 0;
    }
    if (!isdigit((unsigned char)buf[0]))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || *end)
        return -1;
    *limit = v >= V1_UNLIMITED ? 0 : (uint64_t)v;
    return 0;
}

/* 1 when `word` is one of the comma-separated items of list[0..n). */
static int in_list(const char *list, size_t n, const char *word)
{
    size_t w = strlen(word);
    const char *p = list, *stop = list + n;
    while (p < stop) {
        const char *comma = memchr(p, ',', (size_t)(stop - p));
        const char *e = comma ? comma : stop;
        if ((size_t)(e - p) == w && memcmp(p, word, w) == 0)
            return 1;
        p = e + 1;
    }
    return 0;
}

/* The cgroup path [s, end) of a hierarchy of `version`, into path and
 * *out; -1 (nothing written) when it does not fit. */
static int found(const char *s, const char *end, int version, char *path, size_t cap, int *out)
{
    size_t n = (size_t)(end - s);
    if (n >= cap)
        return -1;
    memcpy(path, s, n);
    path[n] = '\0';
    *out = version;
    return 0;
}

int gpo_cgroup_parse_self(const char *text, const char *controller, char *path, size_t cap,
                          int *version)
{
    assert(controller && path && cap && version);
    if (!text)
        return -1;
    const char *v2 = NULL, *v2_end = NULL;
    for (const char *line = text; *line;) {
        const char *eol = strchr(line, '\n');
        const char *end = eol ? eol : line + strlen(line);
        const char *c1 = memchr(line, ':', (size_t)(end - line));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
        if (c2) {
            /* The path is everything after the second colon: cgroup names
             * may hold colons themselves. */
            if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0') {
                v2 = c2 + 1;
                v2_end = end;
            } else if (in_list(c1 + 1, (size_t)(c2 - c1 - 1), controller)) {
                return found(c2 + 1, end, 1, path, cap, version);
            }
        }
        line = eol ? eol + 1 : end;
    }
    return v2 ? found(v2, v2_end, 2, path, cap, version) : -1;
}

/* Copies a mountinfo field, decoding the octal escapes (\040 for a space)
 * the kernel writes. */
static void copy_field(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
            s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            out[o++] = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
}

int gpo_cgroup_parse_mountinfo(const char *text, const char *controller, int version,
                               char *mount_point, size_t mp_cap, char *root, size_t root_cap)
{
    assert(controller && mount_point && root && mp_cap && root_cap);
    if (!text)
        return -1;
    for (const char *line = text; *line;) {
        const char *eol = strchr(line, '\n');
        const char *end = eol ? eol : line + strlen(line);
        /* Fields: id parent major:minor root mount-point options [optional...]
         * " - " fstype source super-options. */
        const char *dash = NULL;
        for (const char *q = line; q + 2 < end; q++) {
            if (q[0] == ' ' && q[1] == '-' && q[2] == ' ') {
                dash = q + 3;
                break;
            }
        }
        const char *f[6];
        size_t flen[6];
        int nf = 0;
        const char *p = line, *stop = dash ? dash - 3 : end;
        while (p < stop && nf < 6) {
            while (p < stop && *p == ' ')
                p++;
            const char *s = p;
            while (p < stop && *p != ' ')
                p++;
            if (p > s) {
                f[nf] = s;
                flen[nf] = (size_t)(p - s);
                nf++;
            }
        }
        if (nf >= 6 && dash) {
            const char *fs_type = dash, *te = memchr(dash, ' ', (size_t)(end - dash));
            const char *super = NULL;
            size_t super_len = 0;
            if (te) {
                const char *src = te + 1, *se = memchr(src, ' ', (size_t)(end - src));
                if (se) {
                    super = se + 1;
                    super_len = (size_t)(end - super);
                }
            }
            size_t tlen = te ? (size_t)(te - fs_type) : (size_t)(end - fs_type);
            int match = 0;
            if (version == 2)
                match = tlen == 7 && memcmp(fs_type, "cgroup2", 7) == 0;
            else
                match = tlen == 6 && memcmp(fs_type, "cgroup", 6) == 0 && super &&
                        in_list(super, super_len, controller);
            if (match) {
                copy_field(f[4], flen[4], mount_point, mp_cap);
                copy_field(f[3], flen[3], root, root_cap);
                return 0;
            }
        }
        line = eol ? eol + 1 : end;
    }
    return -1;
}

typedef struct cg_where {
    int version;
    char mount[GPO_PATH_MAX]; /* where the hierarchy is mounted */
    char dir[GPO_PATH_MAX];   /* the process's cgroup directory under it */
} cg_where;

/* Finds the directory of the process's cgroup for `controller`. */
static int locate(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f, const char *self,
                  const char *mountinfo, const char *controller, cg_where *w)
{
    char path[GPO_PATH_MAX], root[GPO_PATH_MAX];
    if (!self || gpo_cgroup_parse_self(self, controller, path, sizeof path, &w->version))
        return -1;
    if (!mountinfo || gpo_cgroup_parse_mountinfo(mountinfo, controller, w->version, w->mount,
                                                 sizeof w->mount, root, sizeof root)) {
        /* No mountinfo: the places systemd and container runtimes mount at. */
        gpo_strlcpy(root, "/", sizeof root);
        if (w->version == 2)
            gpo_strlcpy(w->mount,
                        gpo_fs_exists(fs, "/sys/fs/cgroup/cgroup.controllers")
                            ? "/sys/fs/cgroup"
                            : "/sys/fs/cgroup/unified",
                        sizeof w->mount);
        else
            gpo_snprintf(w->mount, sizeof w->mount, "/sys/fs/cgroup/%s", controller);
        if (!gpo_fs_exists(fs, w->mount))
            return -1;
    }
    /* The mount's root is the part of the hierarchy it shows (a container
     * sees its own cgroup at the mount point). */
    const char *rel = path;
    size_t rl = strlen(root);
    if (strstr(path, "/..")) {
        /* Seen from inside a cgroup namespace, a cgroup outside it reads
         * "/../..": never walk above the mount. */
        gpo_cpu_note(f, log, GPUOPT_LOG_INFO,
                     "cgroup %s lies outside this cgroup namespace: using %s", path, w->mount);
        rel = "";
    } else if (strcmp(root, "/") == 0) {
        rel = path;
    } else if (strncmp(path, root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0')) {
        rel = path + rl;
    } else {
        gpo_cpu_note(f, log, GPUOPT_LOG_INFO,
                     "cgroup %s is outside the mounted part %s of the %s hierarchy: using %s", path,
                     root, controller, w->mount);
        rel = "";
    }
    if (strcmp(rel, "/") == 0)
        rel = "";
    int n = snprintf(w->dir, sizeof w->dir, "%s%s", w->mount, rel);
    if (n < 0 || (size_t)n >= sizeof w->dir)
        return -1;
    return 0;
}

/* Strips the last component of dir; 0 when dir was already `mount`. */
static int parent(char *dir, const char *mount)
{
    if (strcmp(dir, mount) == 0)
        return 0;
    char *slash = strrchr(dir, '/');
    if (!slash || (size_t)(slash - dir) < strlen(mount))
        gpo_strlcpy(dir, mount, GPO_PATH_MAX);
    else
        *slash = '\0';
    return 1;
}

static void read_cpu(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f, cg_where *w)
{
    char dir[GPO_PATH_MAX], buf[128], file[GPO_PATH_MAX + 32];
    const char *name = w->version == 2 ? "cpu.max" : "cpu.cfs_quota_us";
    int levels = 0;
    gpo_strlcpy(dir, w->dir, sizeof dir);
    do {
        int64_t quota, period;
        snprintf(file, sizeof file, "%s/%s", dir, name);
        if (gpo_fs_read(fs, file, buf, sizeof buf))
            continue;
        levels++;
        if (w->version == 2) {
            if (gpo_cgroup_parse_cpu_max(buf, &quota, &period)) {
                gpo_cpu_note(f, log, GPUOPT_LOG_WARN,
                             "%s holds '%.40s', not \"<quota|max> <period>\": ignored", file, buf);
                continue;
            }
        } else {
            char pbuf[64], pfile[GPO_PATH_MAX + 32];
            snprintf(pfile, sizeof pfile, "%s/cpu.cfs_period_us", dir);
            const char *e1, *e2;
            if (parse_i64(buf, &e1, &quota) == 0 && !*e1 && quota == -1)
                continue; /* no quota here: the period does not matter */
            if (parse_i64(buf, &e1, &quota) || *e1 || gpo_fs_read(fs, pfile, pbuf, sizeof pbuf) ||
                parse_i64(pbuf, &e2, &period) || *e2 || period <= 0 || quota == 0 || quota < -1) {
                gpo_cpu_note(f, log, GPUOPT_LOG_WARN,
                             "%s '%.40s' with its cpu.cfs_period_us is not a quota: ignored", file,
                             buf);
                continue;
            }
        }
        if (quota < 0)
            continue;
        double cpus = (double)quota / (double)period;
        if (f->quota_us < 0 || cpus < f->quota_cpus) {
            f->quota_us = quota;
            f->period_us = period;
            f->quota_cpus = cpus;
            gpo_strlcpy(f->quota_path, dir, sizeof f->quota_path);
        }
    } while (parent(dir, w->mount));

    f->cgroup_version = w->version;
    if (f->quota_us >= 0)
        gpo_snprintf(f->src_quota, sizeof f->src_quota,
                     "cgroup v%d %s %lld/%lld on %s (tightest of %d levels)", w->version,
                     w->version == 2 ? "cpu.max" : "cpu.cfs_quota_us/cpu.cfs_period_us",
                     (long long)f->quota_us, (long long)f->period_us, f->quota_path, levels);
    else
        gpo_snprintf(f->src_quota, sizeof f->src_quota, "cgroup v%d: no CPU quota on %s or its %s",
                     w->version, w->dir, "ancestors");
}

/* Under v1 a parent's limit binds its children only with
 * memory.use_hierarchy=1 (deprecated, and the only behaviour of current
 * kernels); the tightest limit is taken either way, erring on the small
 * side. */
static void read_memory(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f, cg_where *w)
{
    char dir[GPO_PATH_MAX], buf[128], file[GPO_PATH_MAX + 32];
    const char *limit_name = w->version == 2 ? "memory.max" : "memory.limit_in_bytes";
    const char *usage_name = w->version == 2 ? "memory.current" : "memory.usage_in_bytes";
    f->mem_cgroup_version = w->version;
    gpo_strlcpy(dir, w->dir, sizeof dir);
    do {
        uint64_t limit, usage;
        snprintf(file, sizeof file, "%s/%s", dir, limit_name);
        if (gpo_fs_read(fs, file, buf, sizeof buf))
            continue;
        if (gpo_cgroup_parse_memory_limit(buf, &limit)) {
            gpo_cpu_note(f, log, GPUOPT_LOG_WARN,
                         "%s holds '%.40s', not a byte count or \"max\": ignored", file, buf);
            continue;
        }
        if (limit == 0 || (f->cg_mem_limit && limit >= f->cg_mem_limit))
            continue;
        f->cg_mem_limit = limit;
        f->cg_mem_usage = 0;
        gpo_strlcpy(f->mem_limit_path, dir, sizeof f->mem_limit_path);
        snprintf(file, sizeof file, "%s/%s", dir, usage_name);
        if (gpo_fs_read_u64(fs, file, &usage) == GPUOPT_OK)
            f->cg_mem_usage = usage;
    } while (parent(dir, w->mount));
}

gpuopt_status gpo_cgroup_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    assert(fs && f);
    gpuopt_status st = GPUOPT_OK;
    char *self = NULL, *mountinfo = NULL;
    cg_where *w = malloc(sizeof *w);
    if (!w) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory reading cgroups");
        goto out;
    }
    st = gpo_fs_read_alloc(fs, "/proc/self/cgroup", &self, NULL);
    if (st == GPUOPT_ERR_NO_MEMORY)
        goto out;
    st = gpo_fs_read_alloc(fs, "/proc/self/mountinfo", &mountinfo, NULL);
    if (st == GPUOPT_ERR_NO_MEMORY)
        goto out;
    st = GPUOPT_OK;

    if (locate(fs, log, f, self, mountinfo, "cpu", w) == 0) {
        read_cpu(fs, log, f, w);
    } else {
        gpo_strlcpy(f->src_quota, "no cgroup cpu controller found", sizeof f->src_quota);
    }
    if (locate(fs, log, f, self, mountinfo, "memory", w) == 0) {
        read_memory(fs, log, f, w);
    }
out:
    free(w);
    free(self);
    free(mountinfo);
    return st;
}
