/* Host memory the process may use: MemTotal / MemAvailable from
 * /proc/meminfo (proc(5); MemAvailable is the kernel's own estimate of
 * what can be allocated without swapping, since Linux 3.14), capped by the
 * tightest cgroup memory limit read by cgroup.c. Free memory under a limit
 * is the limit minus that cgroup's usage: the OOM killer acts there, not
 * at the host's MemAvailable. A plan reuses the load's reading while it is
 * fresh (memory.h). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_procfs.h"
#include "cpu/memory.h"
#include "util/strutil.h"

static int kib_line(const char *text, const char *key, uint64_t *bytes)
{
    size_t kl = strlen(key);
    for (const char *line = text; line && *line;) {
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            const char *p = line + kl + 1;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p < '0' || *p > '9')
                return -1;
            char *end;
            unsigned long long v = strtoull(p, &end, 10);
            while (*end == ' ')
                end++;
            /* proc(5): the values are in kibibytes although the file says "kB". */
            if (strncmp(end, "kB", 2) != 0 || v > UINT64_MAX / 1024)
                return -1;
            *bytes = (uint64_t)v * 1024;
            return 0;
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return -1;
}

int gpo_cpu_parse_meminfo(const char *text, uint64_t *total, uint64_t *available)
{
    assert(total && available);
    if (!text)
        return -1;
    uint64_t t, a;
    if (kib_line(text, "MemTotal", &t) || t == 0)
        return -1;
    *total = t;
    *available = kib_line(text, "MemAvailable", &a) == 0 ? a : 0;
    return 0;
}

gpuopt_status gpo_cpu_memory_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    assert(fs && f);
    char *text = NULL;
    gpuopt_status st = gpo_fs_read_alloc(fs, "/proc/meminfo", &text, NULL);
    if (st == GPUOPT_ERR_NO_MEMORY)
        return st;
    if (st || gpo_cpu_parse_meminfo(text, &f->mem_total, &f->mem_available)) {
        gpo_cpu_note(f, log, GPUOPT_LOG_WARN, "no usable MemTotal in /proc/meminfo");
        f->mem_total = f->mem_available = 0;
    }
    free(text);

    f->memory_bytes = f->mem_total;
    f->memory_free_bytes = f->mem_available;
    f->memory_read_ns = gpo_now_ns();
    char lim[32];
    if (f->cg_mem_limit) {
        gpo_format_bytes(f->cg_mem_limit, lim, sizeof lim);
        if (!f->memory_bytes || f->cg_mem_limit < f->memory_bytes)
            f->memory_bytes = f->cg_mem_limit;
        uint64_t room = f->cg_mem_usage < f->cg_mem_limit ? f->cg_mem_limit - f->cg_mem_usage : 0;
        if (!f->memory_free_bytes || room < f->memory_free_bytes)
            f->memory_free_bytes = room;
        gpo_snprintf(f->src_memory, sizeof f->src_memory,
                     "/proc/meminfo capped by cgroup limit %s on %s", lim, f->mem_limit_path);
    } else if (f->mem_total) {
        gpo_strlcpy(f->src_memory, "/proc/meminfo (no cgroup memory limit)", sizeof f->src_memory);
    } else {
        gpo_strlcpy(f->src_memory, "unknown", sizeof f->src_memory);
    }
    return GPUOPT_OK;
}

static int fresh(const gpo_cpu_facts *f, uint64_t now_ns)
{
    return f->mem_available && f->memory_read_ns && now_ns >= f->memory_read_ns &&
           now_ns - f->memory_read_ns < GPO_CPU_FREE_FRESH_NS;
}

gpuopt_status gpo_cpu_memory_free(const gpo_fs *fs, const gpo_cpu_facts *f, uint64_t now_ns,
                                  uint64_t *free_bytes)
{
    assert(fs && f && free_bytes);
    if (fresh(f, now_ns)) {
        *free_bytes = f->memory_free_bytes;
        return GPUOPT_OK;
    }
    return gpo_cpu_memory_free_now(fs, f, free_bytes);
}

gpuopt_status gpo_cpu_memory_free_now(const gpo_fs *fs, const gpo_cpu_facts *f,
                                      uint64_t *free_bytes)
{
    assert(fs && f && free_bytes);
    char *text = NULL;
    uint64_t total, avail;
    gpuopt_status st = gpo_fs_read_alloc(fs, "/proc/meminfo", &text, NULL);
    if (st)
        return st;
    int bad = gpo_cpu_parse_meminfo(text, &total, &avail) || avail == 0;
    free(text);
    if (bad)
        return gpo_fail(GPUOPT_ERR_IO, "/proc/meminfo has no usable MemTotal/MemAvailable");
    if (f->cg_mem_limit && f->mem_limit_path[0]) {
        char path[GPO_PATH_MAX + 32];
        uint64_t usage;
        snprintf(path, sizeof path, "%s/%s", f->mem_limit_path,
                 f->mem_cgroup_version == 1 ? "memory.usage_in_bytes" : "memory.current");
        if (gpo_fs_read_u64(fs, path, &usage) == GPUOPT_OK) {
            uint64_t room = usage < f->cg_mem_limit ? f->cg_mem_limit - usage : 0;
            if (room < avail)
                avail = room;
        } else if (f->cg_mem_limit < avail) {
            avail = f->cg_mem_limit;
        }
    }
    *free_bytes = avail;
    return GPUOPT_OK;
}

gpuopt_status gpo_cpu_memory_live(const gpo_fs *fs, const gpo_cpu_facts *f, uint64_t now_ns,
                                  gpo_memory_reading *out)
{
    assert(fs && f && out);
    memset(out, 0, sizeof *out);
    int reuse = fresh(f, now_ns);
    uint64_t free_bytes = 0;
    gpuopt_status st = gpo_cpu_memory_free(fs, f, now_ns, &free_bytes);
    if (st)
        return st;
    out->total = f->memory_bytes;
    out->free = free_bytes;
    out->used = out->total > free_bytes ? out->total - free_bytes : 0;
    out->source = GPUOPT_MEMORY_SOURCE_HOST;
    out->read_ns = reuse ? f->memory_read_ns : now_ns;
    gpo_snprintf(out->source_text, sizeof out->source_text, "%s%s", f->src_memory,
                 reuse ? ", the backend's reading at load" : "");
    return GPUOPT_OK;
}
