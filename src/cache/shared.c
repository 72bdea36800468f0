/* The shared, read-only layer (shared.h). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/file.h"
#include "cache/shared.h"
#include "util/strutil.h"

/* Looks in one file; 1 found (in *d), 0 not, -1 without memory. */
static int look(int dirfd, const char *name, const gpo_cache_device *dev, uint64_t hash,
                const char *canon, gpo_cache_doc *d)
{
    char *buf = NULL, why[300];
    size_t len = 0;
    int fd = gpo_cache_file_read(dirfd, name, &buf, &len, why, sizeof why);
    if (fd == GPO_FILE_NO_MEMORY)
        return -1;
    if (fd < 0)
        return 0;
    close(fd);
    gpo_cache_doc_init(d);
    gpo_cache_device here;
    int found = 0;
    gpuopt_status st = gpo_cache_doc_parse(d, buf, len);
    free(buf);
    if (!st && d->status == GPO_DOC_OK && d->device &&
        gpo_cache_device_from_json(d->device, &here) == 0 &&
        gpo_cache_device_same_kind(&here, dev)) {
        gpo_cache_item *it = gpo_cache_doc_find(d, hash);
        if (it && (st = gpo_cache_doc_read(d, it)) == GPUOPT_OK)
            found = it->record && it->canon && strcmp(it->canon, canon) == 0;
    }
    if (!found)
        gpo_cache_doc_free(d);
    return st == GPUOPT_ERR_NO_MEMORY ? -1 : found;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

gpuopt_status gpo_cache_shared_find(const char *dir, const gpo_cache_device *dev, uint64_t hash,
                                    const char *canon, gpo_cache_doc *out, char *why, size_t cap)
{
    int dirfd = gpo_cache_dir_open(dir, GPO_DIR_SHARED, why, cap);
    if (dirfd == GPO_FILE_MISSING)
        return GPUOPT_ERR_NOT_FOUND;
    if (dirfd < 0)
        return GPUOPT_ERR_IO;
    int lfd = dup(dirfd);
    DIR *dp = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (!dp) {
        if (lfd >= 0)
            close(lfd);
        close(dirfd);
        return gpo_say(GPUOPT_ERR_IO, why, cap, "cannot list %s", dir);
    }
    char **names = NULL;
    size_t n = 0;
    int nomem = 0;
    for (struct dirent *e; !nomem && (e = readdir(dp));) {
        if (!gpo_cache_is_file_name(e->d_name))
            continue;
        char **v = realloc(names, (n + 1) * sizeof *names);
        if (v)
            names = v;
        if (!v || !(names[n] = gpo_strdup(e->d_name)))
            nomem = 1;
        else
            n++;
    }
    closedir(dp);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    int found = 0;
    for (size_t i = 0; !nomem && !found && i < n; i++) {
        found = look(dirfd, names[i], dev, hash, canon, out);
        nomem = found < 0;
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    close(dirfd);
    if (nomem)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory to read the shared cache %s", dir);
    return found ? GPUOPT_OK : GPUOPT_ERR_NOT_FOUND;
}
