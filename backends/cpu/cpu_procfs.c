/* The helpers every CPU reader shares (see cpu_procfs.h). */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_procfs.h"
#include "util/strutil.h"

void gpo_cpu_note(gpo_cpu_facts *f, const gpo_logger *log, int32_t level, const char *fmt, ...)
{
    assert(f && fmt);
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = strlen(f->notes);
    if (len + 3 < sizeof f->notes)
        gpo_snprintf(f->notes + len, sizeof f->notes - len, "%s%s", len ? "; " : "", msg);
    gpo_log(log, level, "cpu: %s", msg);
}

gpuopt_status gpo_cpu_cpuinfo(const gpo_fs *fs, gpo_cpu_facts *f, const char **text)
{
    assert(fs && f && text);
    *text = NULL;
    if (!f->cpuinfo_read) {
        f->cpuinfo_read = 1;
        f->cpuinfo_status = gpo_fs_read_alloc(fs, "/proc/cpuinfo", &f->cpuinfo, NULL);
        if (f->cpuinfo_status)
            return (gpuopt_status)f->cpuinfo_status; /* fs.c's detail names the path */
    }
    if (f->cpuinfo_status)
        return gpo_fail((gpuopt_status)f->cpuinfo_status, "%s/proc/cpuinfo could not be read",
                        fs->root);
    *text = f->cpuinfo;
    return GPUOPT_OK;
}

void gpo_cpu_cpuinfo_release(gpo_cpu_facts *f)
{
    assert(f);
    free(f->cpuinfo);
    f->cpuinfo = NULL;
    f->cpuinfo_read = 0;
    f->cpuinfo_status = 0;
}

/* [from, to) into out, cut to fit, without surrounding blanks. */
static void copy_trimmed(char *out, size_t cap, const char *from, const char *to)
{
    size_t n = (size_t)(to - from) < cap ? (size_t)(to - from) : cap - 1;
    memcpy(out, from, n);
    out[n] = '\0';
    gpo_trim(out);
}

int gpo_cpuinfo_next(const char **cursor, char *key, size_t kcap, char *val, size_t vcap)
{
    assert(cursor && key && val && kcap && vcap);
    if (!*cursor || !**cursor)
        return 0;
    const char *line = *cursor;
    const char *eol = strchr(line, '\n');
    const char *end = eol ? eol : line + strlen(line);
    *cursor = eol ? eol + 1 : end;
    const char *colon = memchr(line, ':', (size_t)(end - line));
    copy_trimmed(key, kcap, line, colon ? colon : end);
    copy_trimmed(val, vcap, colon ? colon + 1 : end, end);
    return 1;
}

int gpo_cpuinfo_field(const char *text, const char *key, char *val, size_t vcap)
{
    assert(key && val && vcap);
    const char *cur = text;
    char k[64];
    while (gpo_cpuinfo_next(&cur, k, sizeof k, val, vcap))
        if (strcmp(k, key) == 0)
            return 0;
    val[0] = '\0';
    return -1;
}

uint64_t gpo_isa_from_names(const char *names, const gpo_isa_name *table, size_t n)
{
    assert(table || !n);
    uint64_t isa = 0;
    const char *p = names;
    while (p && *p) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *start = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        size_t len = (size_t)(p - start);
        for (size_t i = 0; len && i < n; i++) {
            if (strlen(table[i].flag) == len && memcmp(table[i].flag, start, len) == 0) {
                isa |= GPO_BIT(table[i].bit);
                break;
            }
        }
    }
    return isa;
}
