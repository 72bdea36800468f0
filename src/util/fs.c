/* Root-prefixed reads of /sys and /proc (see fs.h). */
#include "fs.h"

#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "strutil.h"

void gpo_fs_init(gpo_fs *fs, const char *root)
{
    fs->root[0] = '\0';
    if (!root || !*root)
        return;
    gpo_strlcpy(fs->root, root, sizeof fs->root);
    size_t n = strlen(fs->root);
    while (n > 1 && fs->root[n - 1] == '/')
        fs->root[--n] = '\0';
    if (strcmp(fs->root, "/") == 0)
        fs->root[0] = '\0';
}

int gpo_fs_is_recorded(const gpo_fs *fs)
{
    return fs->root[0] != '\0';
}

gpuopt_status gpo_fs_path(const gpo_fs *fs, const char *path, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s%s", fs->root, path);
    if (n < 0 || (size_t)n >= cap)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "path too long: %s%s", fs->root, path);
    return GPUOPT_OK;
}

static gpuopt_status open_path(const gpo_fs *fs, const char *path, int *fd, char *full, size_t cap)
{
    gpuopt_status st = gpo_fs_path(fs, path, full, cap);
    if (st)
        return st;
    /* The live /sys and /proc hold only the kernel's regular files; a
     * recorded tree is anyone's, and a FIFO there would block open(2). */
    char why[128] = "";
    if (gpo_fs_is_recorded(fs))
        *fd = gpo_file_open(full, 0, NULL, why, sizeof why);
    else
        *fd = open(full, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return gpo_fail(GPUOPT_ERR_NOT_FOUND, "%s does not exist", full);
        return gpo_fail(GPUOPT_ERR_IO, "cannot open %s: %s", full, why[0] ? why : strerror(errno));
    }
    return GPUOPT_OK;
}

gpuopt_status gpo_fs_read(const gpo_fs *fs, const char *path, char *buf, size_t cap)
{
    char full[GPO_PATH_MAX];
    int fd;
    assert(cap > 0);
    buf[0] = '\0';
    gpuopt_status st = open_path(fs, path, &fd, full, sizeof full);
    if (st)
        return st;
    size_t len = 0;
    while (len < cap - 1) {
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            buf[0] = '\0';
            return gpo_fail(GPUOPT_ERR_IO, "cannot read %s: %s", full, strerror(e));
        }
        if (r == 0)
            break;
        len += (size_t)r;
        /* A sysfs attribute comes whole from the first read: the kernel
         * formats the entire value into its buffer on read(2) and later
         * reads only page through it (Documentation/filesystems/sysfs.rst,
         * "Reading/Writing Attribute Data"). A recorded tree is regular
         * files, where a short read is the end of the file. So the second
         * read(2) that would only return 0 is skipped: about 1 us per file,
         * and a plan reads dozens. /proc files are read to the end. */
        if (strncmp(path, "/sys/", 5) == 0 && len < cap - 1)
            break;
    }
    close(fd);
    buf[len] = '\0';
    while (len && isspace((unsigned char)buf[len - 1]))
        buf[--len] = '\0';
    return GPUOPT_OK;
}

gpuopt_status gpo_fs_readf(const gpo_fs *fs, char *buf, size_t cap, const char *fmt, ...)
{
    char path[GPO_PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof path)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "path too long");
    return gpo_fs_read(fs, path, buf, cap);
}

gpuopt_status gpo_fs_read_alloc(const gpo_fs *fs, const char *path, char **out, size_t *len)
{
    char full[GPO_PATH_MAX], why[128];
    *out = NULL;
    if (len)
        *len = 0;
    gpuopt_status st = gpo_fs_path(fs, path, full, sizeof full);
    if (st)
        return st;
    if (gpo_file_read(full, GPO_FS_MAX_FILE, out, len, why, sizeof why) == 0)
        return GPUOPT_OK;
    if (errno == ENOENT || errno == ENOTDIR)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND, "%s does not exist", full);
    if (errno == ENOMEM)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory reading %s", full);
    return gpo_fail(GPUOPT_ERR_IO, "cannot read %s: %s", full, why);
}

gpuopt_status gpo_fs_read_u64(const gpo_fs *fs, const char *path, uint64_t *value)
{
    char buf[64];
    gpuopt_status st = gpo_fs_read(fs, path, buf, sizeof buf);
    if (st)
        return st;
    const char *p = buf;
    while (isspace((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s%s holds '%s', not a number", fs->root,
                        path, buf);
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 0);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s%s holds '%s', not a number", fs->root,
                        path, buf);
    *value = (uint64_t)v;
    return GPUOPT_OK;
}

int gpo_fs_exists(const gpo_fs *fs, const char *path)
{
    char full[GPO_PATH_MAX];
    if (gpo_fs_path(fs, path, full, sizeof full))
        return 0;
    return access(full, F_OK) == 0;
}

int gpo_fs_access(const gpo_fs *fs, const char *path, int mode)
{
    char full[GPO_PATH_MAX];
    if (gpo_fs_path(fs, path, full, sizeof full)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return access(full, mode);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void gpo_fs_list_free(char **names, size_t count)
{
    if (!names)
        return;
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

gpuopt_status gpo_fs_list(const gpo_fs *fs, const char *dir, char ***names, size_t *count)
{
    char full[GPO_PATH_MAX];
    *names = NULL;
    *count = 0;
    gpuopt_status st = gpo_fs_path(fs, dir, full, sizeof full);
    if (st)
        return st;
    DIR *d = opendir(full);
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR)
            return gpo_fail(GPUOPT_ERR_NOT_FOUND, "%s does not exist", full);
        return gpo_fail(GPUOPT_ERR_IO, "cannot list %s: %s", full, strerror(errno));
    }
    char **list = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (gpo_grow(&list, sizeof *list, n, &cap, 16))
            goto oom;
        list[n] = gpo_strdup(e->d_name);
        if (!list[n])
            goto oom;
        n++;
    }
    closedir(d);
    if (n)
        qsort(list, n, sizeof *list, cmp_names);
    *names = list;
    *count = n;
    return GPUOPT_OK;
oom:
    closedir(d);
    gpo_fs_list_free(list, n);
    return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory listing %s", full);
}

int gpo_parse_cpulist(const char *text, unsigned char *bitmap, size_t nbits)
{
    memset(bitmap, 0, (nbits + 7) / 8);
    int count = 0;
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p)
        return 0; /* an empty list is valid: no CPUs */
    for (;;) {
        if (!isdigit((unsigned char)*p))
            return -1;
        char *end;
        unsigned long lo = strtoul(p, &end, 10), hi = lo;
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return -1;
            hi = strtoul(p, &end, 10);
            p = end;
            if (hi < lo)
                return -1;
        }
        for (unsigned long c = lo; c <= hi && c < nbits; c++) {
            if (!(bitmap[c / 8] & (1u << (c % 8)))) {
                bitmap[c / 8] |= (unsigned char)(1u << (c % 8));
                count++;
            }
        }
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0')
            return count;
        if (*p != ',')
            return -1;
        p++;
    }
}
