/* The cache directory as a whole (dir.h). */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/dir.h"
#include "cache/doc.h"
#include "cache/file.h"
#include "util/json.h"
#include "util/strutil.h"

typedef enum file_kind { K_NONE, K_FILE, K_LOCK, K_ASIDE, K_TEMP } file_kind;

/* What a directory entry is to the cache, and the base name (without
 * "@host" and extension) of the device file it belongs to. */
static file_kind classify(const char *name, char *base, size_t cap)
{
    char f[300];
    const char *m;
    file_kind kind = K_FILE;
    gpo_strlcpy(f, name[0] == '.' ? name + 1 : name, sizeof f);
    if (name[0] == '.') {
        if (!(m = strstr(f, ".tmp-")))
            return K_NONE;
        kind = K_TEMP;
    } else if ((m = strstr(f, ".corrupt-")) || (m = strstr(f, ".old-"))) {
        kind = K_ASIDE;
    } else if ((m = strstr(f, ".lock")) && !m[5]) {
        kind = K_LOCK;
    }
    if (kind != K_FILE)
        f[m - f] = '\0';
    if (!gpo_cache_is_file_name(f))
        return K_NONE;
    *strrchr(f, '.') = '\0';
    char *at = strchr(f, '@');
    if (at)
        *at = '\0';
    gpo_strlcpy(base, f, cap);
    return kind;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The checked directory and its names, sorted. A directory that does not
 * exist is an empty list (*dirfd -1); one that fails its checks, or a path
 * that is something else, is an I/O error naming why. */
static gpuopt_status list_dir(const char *dir, int *dirfd, char ***names, size_t *n)
{
    char why[400];
    *names = NULL;
    *n = 0;
    *dirfd = gpo_cache_dir_open(dir, 0, why, sizeof why);
    if (*dirfd == GPO_FILE_MISSING)
        return GPUOPT_OK;
    if (*dirfd < 0)
        return gpo_fail(GPUOPT_ERR_IO, "cannot use the cache directory %s: %s", dir, why);
    int fd = dup(*dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        close(*dirfd);
        *dirfd = -1;
        return gpo_fail(GPUOPT_ERR_IO, "cannot list the cache directory %s: %s", dir,
                        strerror(errno));
    }
    size_t cap = 0;
    struct dirent *e;
    char base[300];
    gpuopt_status st = GPUOPT_OK;
    while (!st && (e = readdir(d))) {
        if (classify(e->d_name, base, sizeof base) == K_NONE)
            continue;
        if (gpo_grow(names, sizeof **names, *n, &cap, 16) ||
            !((*names)[*n] = gpo_strdup(e->d_name)))
            st = GPUOPT_ERR_NO_MEMORY;
        else
            (*n)++;
    }
    closedir(d);
    if (st) {
        free_names(*names, *n);
        close(*dirfd);
        *dirfd = -1;
        return gpo_fail(st, "no memory to list the cache directory");
    }
    if (*n)
        qsort(*names, *n, sizeof **names, by_name);
    return GPUOPT_OK;
}

typedef struct scanned {
    const char *status;
    size_t bytes;
    gpo_cache_doc doc;
} scanned;

/* Reads one device file, rewriting nothing. */
static gpuopt_status scan(int dirfd, const char *name, scanned *s)
{
    char *buf = NULL, why[300];
    size_t len = 0;
    gpo_cache_doc_init(&s->doc);
    s->status = "unreadable";
    s->bytes = 0;
    int fd = gpo_cache_file_read(dirfd, name, &buf, &len, why, sizeof why);
    if (fd == GPO_FILE_NO_MEMORY)
        return GPUOPT_ERR_NO_MEMORY;
    if (fd < 0) {
        gpo_strlcpy(s->doc.problem, fd == GPO_FILE_MISSING ? "removed while listed" : why,
                    sizeof s->doc.problem);
        return GPUOPT_OK;
    }
    close(fd);
    gpuopt_status st = gpo_cache_doc_parse(&s->doc, buf, len);
    if (!st)
        st = gpo_cache_doc_read_all(&s->doc);
    free(buf);
    s->bytes = len;
    s->status = gpo_cache_doc_status_name(s->doc.dropped ? GPO_DOC_CORRUPT : s->doc.status);
    return st;
}

/* {"file", "status", "schema", "bytes"} */
static cJSON *file_object(const char *name, const scanned *s)
{
    cJSON *f = cJSON_CreateObject();
    if (!f || !cJSON_AddStringToObject(f, "file", name) ||
        !cJSON_AddStringToObject(f, "status", s->status) ||
        !cJSON_AddNumberToObject(f, "schema", s->doc.schema) ||
        !cJSON_AddNumberToObject(f, "bytes", (double)s->bytes)) {
        cJSON_Delete(f);
        return NULL;
    }
    return f;
}

/* The file's device, each item's record, and each unfinished tune without
 * its candidates; 0, or -1 without memory. */
static int add_entries(cJSON *f, gpo_cache_doc *d)
{
    gpo_json b = {0};
    cJSON *entries = gpo_json_array(&b, f, "entries");
    cJSON *unfinished = gpo_json_array(&b, f, "unfinished");
    if (d->device)
        gpo_json_add(&b, f, "device", d->device);
    d->device = NULL; /* f's now, or freed */
    for (size_t i = 0; !b.failed && i < d->n; i++) {
        const gpo_cache_item *it = &d->items[i];
        if (it->record)
            gpo_json_add(&b, entries, NULL, cJSON_Duplicate(it->record, 1));
        cJSON *u =
            it->open ? gpo_json_add(&b, unfinished, NULL, cJSON_Duplicate(it->open, 1)) : NULL;
        if (u)
            cJSON_DeleteItemFromObjectCaseSensitive(u, "candidates");
    }
    return b.failed ? -1 : 0;
}

typedef gpuopt_status (*report_fn)(int dirfd, const char *name, file_kind kind, cJSON *out,
                                   int *ok);

/* The report {"dir", "files": [...], ...} of every name the cache made. */
static gpuopt_status report(const char *dir, report_fn fn, cJSON **out)
{
    assert(dir && *dir && out);
    *out = NULL;
    char **names = NULL, base[300];
    size_t n = 0;
    int dirfd = -1, ok = 1;
    gpuopt_status st = list_dir(dir, &dirfd, &names, &n);
    if (st)
        return st;
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "dir", dir) || !cJSON_AddArrayToObject(o, "files") ||
        !cJSON_AddArrayToObject(o, "set_aside") || !cJSON_AddArrayToObject(o, "stale_temp"))
        st = GPUOPT_ERR_NO_MEMORY;
    for (size_t i = 0; !st && i < n; i++)
        st = fn(dirfd, names[i], classify(names[i], base, sizeof base), o, &ok);
    if (!st && !cJSON_AddBoolToObject(o, "ok", ok))
        st = GPUOPT_ERR_NO_MEMORY;
    free_names(names, n);
    if (dirfd >= 0)
        close(dirfd);
    if (st) {
        cJSON_Delete(o);
        return gpo_fail(st, "no memory for the cache report");
    }
    *out = o;
    return GPUOPT_OK;
}

/* A name into one of the report's lists. */
static gpuopt_status add_name(cJSON *o, const char *list, const char *name)
{
    cJSON *s = cJSON_CreateString(name);
    if (!s || !cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(o, list), s)) {
        cJSON_Delete(s);
        return GPUOPT_ERR_NO_MEMORY;
    }
    return GPUOPT_OK;
}

static gpuopt_status list_one(int dirfd, const char *name, file_kind kind, cJSON *o, int *ok)
{
    (void)ok;
    if (kind != K_FILE)
        return GPUOPT_OK;
    scanned s;
    gpuopt_status st = scan(dirfd, name, &s);
    cJSON *f = st ? NULL : file_object(name, &s);
    if (!f || add_entries(f, &s.doc) ||
        !cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(o, "files"), f)) {
        cJSON_Delete(f);
        st = GPUOPT_ERR_NO_MEMORY;
    }
    gpo_cache_doc_free(&s.doc);
    return st;
}

gpuopt_status gpo_cache_dir_list(const char *dir, cJSON **out)
{
    return report(dir, list_one, out);
}

static gpuopt_status verify_one(int dirfd, const char *name, file_kind kind, cJSON *o, int *ok)
{
    if (kind == K_ASIDE || kind == K_TEMP)
        return add_name(o, kind == K_ASIDE ? "set_aside" : "stale_temp", name);
    if (kind != K_FILE)
        return GPUOPT_OK;
    scanned s;
    gpuopt_status st = scan(dirfd, name, &s);
    const gpo_cache_doc *d = &s.doc;
    size_t entries = 0, unfinished = 0, cands = 0;
    for (size_t i = 0; i < d->n; i++) {
        entries += d->items[i].record != NULL;
        unfinished += d->items[i].open != NULL;
        cands += (size_t)cJSON_GetArraySize(d->items[i].cands) +
                 (size_t)cJSON_GetArraySize(
                     cJSON_GetObjectItemCaseSensitive(d->items[i].open, "candidates"));
    }
    /* A newer schema is not broken, only not ours to read. */
    if (d->dropped || !strcmp(s.status, "unreadable") || d->status == GPO_DOC_CORRUPT ||
        d->status == GPO_DOC_OLDER)
        *ok = 0;
    cJSON *f = st ? NULL : file_object(name, &s);
    if (!f || !cJSON_AddStringToObject(f, "detail", d->problem) ||
        !cJSON_AddNumberToObject(f, "entries", (double)entries) ||
        !cJSON_AddNumberToObject(f, "unfinished", (double)unfinished) ||
        !cJSON_AddNumberToObject(f, "candidates", (double)cands) ||
        !cJSON_AddNumberToObject(f, "invalid", (double)d->dropped) ||
        !cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(o, "files"), f)) {
        cJSON_Delete(f);
        st = GPUOPT_ERR_NO_MEMORY;
    }
    gpo_cache_doc_free(&s.doc);
    return st;
}

gpuopt_status gpo_cache_dir_verify(const char *dir, cJSON **out)
{
    return report(dir, verify_one, out);
}

/* Removes `name` (relative to dirfd); counts it and says so. */
static gpuopt_status remove_one(int dirfd, const char *dir, const char *name, const gpo_logger *log,
                                int *removed)
{
    if (unlinkat(dirfd, name, 0) == 0) {
        (*removed)++;
        gpo_log_info(log, "removed cache file %s/%s", dir, name);
    } else if (errno != ENOENT) {
        return gpo_fail(GPUOPT_ERR_IO, "cannot remove %s/%s: %s", dir, name, strerror(errno));
    }
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_dir_clear(const char *dir, const gpo_cache_device *dev,
                                  const gpo_logger *log, int *removed)
{
    assert(dir && *dir);
    int count = 0;
    char want[300] = "", base[300];
    if (dev) {
        gpuopt_status st = gpo_cache_file_name(dev, NULL, want, sizeof want);
        if (st)
            return st;
        *strrchr(want, '.') = '\0';
    }
    char **names = NULL;
    size_t n = 0;
    int dirfd = -1;
    gpuopt_status st = list_dir(dir, &dirfd, &names, &n), first = GPUOPT_OK;
    if (st)
        return st;
    for (size_t i = 0; i < n; i++) {
        file_kind k = classify(names[i], base, sizeof base);
        if (dev && strcmp(base, want) != 0)
            continue;
        if (k != K_FILE && k != K_LOCK) {
            st = remove_one(dirfd, dir, names[i], log, &count);
            first = first ? first : st;
            continue;
        }
        /* A device file goes under its writers' lock, so no write is cut in
         * half, and the lock file with it: a writer that waited on it takes
         * the new one (file.c). A lock alone is one a writer left before
         * its first file. */
        char file[300], lock[320], why[300];
        struct stat ls;
        gpo_strlcpy(file, names[i], sizeof file);
        if (k == K_LOCK)
            file[strlen(file) - 5] = '\0';
        gpo_snprintf(lock, sizeof lock, "%s.lock", file);
        if (k == K_LOCK && fstatat(dirfd, lock, &ls, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* went with its file */
        int fd = gpo_cache_file_lock(dirfd, file, GPO_CACHE_LOCK_WAIT_MS, why, sizeof why);
        st = remove_one(dirfd, dir, file, log, &count);
        first = first ? first : st;
        if (fd >= 0)
            unlinkat(dirfd, lock, 0);
        gpo_cache_file_unlock(fd);
    }
    free_names(names, n);
    if (dirfd >= 0)
        close(dirfd);
    if (removed)
        *removed = count;
    return first;
}
