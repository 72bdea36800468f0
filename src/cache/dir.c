/* The cache directory as a whole (dir.h). */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/dir.h"
#include "cache/journal.h"
#include "util/fs.h"
#include "util/strutil.h"

typedef enum file_kind { F_NONE, F_JOURNAL, F_ASIDE, F_TEMP } file_kind;

/* What a directory entry is to the cache, and the journal's base name
 * (without "@host" and extension) it belongs to. */
static file_kind classify(const char *name, char *base, size_t cap)
{
    char j[300];
    file_kind kind = F_JOURNAL;
    const char *m;
    if (name[0] == '.') {
        if (!(m = strstr(name, GPO_CACHE_EXT ".tmp-")))
            return F_NONE;
        kind = F_TEMP;
        gpo_snprintf(j, sizeof j, "%.*s" GPO_CACHE_EXT, (int)(m - name - 1), name + 1);
    } else if ((m = strstr(name, GPO_CACHE_EXT ".corrupt-")) ||
               (m = strstr(name, GPO_CACHE_EXT ".old-"))) {
        kind = F_ASIDE;
        gpo_snprintf(j, sizeof j, "%.*s" GPO_CACHE_EXT, (int)(m - name), name);
    } else {
        gpo_strlcpy(j, name, sizeof j);
    }
    if (!gpo_cache_is_journal_name(j))
        return F_NONE;
    j[strlen(j) - strlen(GPO_CACHE_EXT)] = '\0';
    char *at = strchr(j, '@');
    if (at)
        *at = '\0';
    gpo_strlcpy(base, j, cap);
    return kind;
}

/* The directory's names, sorted. Only a directory that does not exist is
 * an empty list; a path that is something else is an I/O error. */
static gpuopt_status list_dir(const char *dir, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    struct stat st;
    if (stat(dir, &st) != 0)
        return errno == ENOENT ? GPUOPT_OK
                               : gpo_fail(GPUOPT_ERR_IO, "cannot read the cache directory %s: %s",
                                          dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return gpo_fail(GPUOPT_ERR_IO, "the cache directory %s is not a directory", dir);
    gpo_fs fs;
    gpo_fs_init(&fs, NULL);
    gpuopt_status rc = gpo_fs_list(&fs, dir, names, n);
    if (rc == GPUOPT_OK)
        return GPUOPT_OK;
    char why[512];
    gpo_strlcpy(why, gpo_detail_get(), sizeof why); /* not the buffer gpo_fail writes */
    return gpo_fail(rc, "cannot list the cache directory: %s", why);
}

typedef struct scanned {
    int readable;
    size_t bytes;
    gpo_cidx ix;
    gpo_journal_scan scan;
} scanned;

/* Reads one journal under a shared lock, rewriting nothing. */
static void scan_file(const char *path, int flags, scanned *s)
{
    memset(s, 0, sizeof *s);
    gpo_cidx_init(&s->ix);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    int locked = gpo_journal_lock(fd, LOCK_SH) == 0;
    char *buf;
    size_t len;
    if (gpo_journal_slurp(fd, &buf, &len) == 0) {
        s->readable = 1;
        s->bytes = len;
        gpo_journal_apply(&s->ix, buf, len, 1, flags, &s->scan);
        free(buf);
    }
    if (locked)
        flock(fd, LOCK_UN);
    close(fd);
}

static cJSON *file_object(const char *name, const scanned *s)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "file", name);
    cJSON_AddStringToObject(f, "status",
                            s->readable ? gpo_journal_status_name(s->scan.status) : "unreadable");
    cJSON_AddNumberToObject(f, "schema", s->scan.schema);
    cJSON_AddNumberToObject(f, "bytes", (double)s->bytes);
    return f;
}

static int by_hash(const void *a, const void *b)
{
    const gpo_cidx_item *x = *(const gpo_cidx_item *const *)a;
    const gpo_cidx_item *y = *(const gpo_cidx_item *const *)b;
    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* Records (and unfinished tunes) of an index, in key order. */
static void add_entries(cJSON *f, gpo_cidx *ix)
{
    cJSON *entries = cJSON_AddArrayToObject(f, "entries");
    cJSON *unfinished = cJSON_AddArrayToObject(f, "unfinished");
    gpo_cidx_item **v = malloc((ix->n ? ix->n : 1) * sizeof *v);
    if (!v || !entries || !unfinished) {
        free(v);
        return;
    }
    for (size_t i = 0; i < ix->n; i++)
        v[i] = &ix->items[i];
    qsort(v, ix->n, sizeof *v, by_hash);
    for (size_t i = 0; i < ix->n; i++) {
        cJSON *r = v[i]->record ? cJSON_Duplicate(v[i]->record, 1) : NULL;
        if (r) {
            cJSON_DeleteItemFromObjectCaseSensitive(r, "t");
            cJSON_DeleteItemFromObjectCaseSensitive(r, "used");
            cJSON_AddNumberToObject(r, "used", (double)v[i]->used);
            cJSON_AddItemToArray(entries, r);
        }
        cJSON *b = v[i]->open_begin ? cJSON_Duplicate(v[i]->open_begin, 1) : NULL;
        if (b) {
            cJSON_DeleteItemFromObjectCaseSensitive(b, "t");
            cJSON_AddItemToArray(unfinished, b);
        }
    }
    free(v);
}

/* The directory's names and the report object {"dir": dir} (its fields
 * are checked with the rest once filled). */
static gpuopt_status dir_begin(const char *dir, char ***names, size_t *n, cJSON **o, cJSON **out)
{
    assert(dir && *dir && out);
    *out = NULL;
    gpuopt_status st = list_dir(dir, names, n);
    if (st)
        return st;
    *o = cJSON_CreateObject();
    cJSON_AddStringToObject(*o, "dir", dir);
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_dir_list(const char *dir, cJSON **out)
{
    char **names = NULL, base[300], path[GPO_PATH_MAX];
    size_t n = 0;
    cJSON *o = NULL;
    gpuopt_status st = dir_begin(dir, &names, &n, &o, out);
    if (st)
        return st;
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    for (size_t i = 0; files && i < n; i++) {
        if (classify(names[i], base, sizeof base) != F_JOURNAL)
            continue;
        gpo_snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        scanned s;
        scan_file(path, 0, &s);
        cJSON *f = file_object(names[i], &s);
        if (s.ix.header)
            cJSON_AddItemToObject(
                f, "device",
                cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(s.ix.header, "device"), 1));
        if (s.readable && s.scan.status == GPO_J_OK)
            add_entries(f, &s.ix);
        cJSON_AddItemToArray(files, f);
        gpo_cidx_free(&s.ix);
    }
    gpo_fs_list_free(names, n);
    if (!files) {
        cJSON_Delete(o);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for the cache listing");
    }
    *out = o;
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_dir_verify(const char *dir, cJSON **out)
{
    char **names = NULL, base[300], path[GPO_PATH_MAX];
    size_t n = 0;
    cJSON *o = NULL;
    gpuopt_status st = dir_begin(dir, &names, &n, &o, out);
    if (st)
        return st;
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    cJSON *aside = cJSON_AddArrayToObject(o, "set_aside");
    cJSON *temps = cJSON_AddArrayToObject(o, "stale_temp");
    int ok = 1;
    for (size_t i = 0; files && aside && temps && i < n; i++) {
        file_kind k = classify(names[i], base, sizeof base);
        if (k == F_ASIDE || k == F_TEMP)
            cJSON_AddItemToArray(k == F_ASIDE ? aside : temps, cJSON_CreateString(names[i]));
        if (k != F_JOURNAL)
            continue;
        gpo_snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        scanned s;
        scan_file(path, GPO_J_STRICT, &s);
        cJSON *f = file_object(names[i], &s);
        char detail[300] = "";
        if (!s.readable)
            gpo_snprintf(detail, sizeof detail, "cannot be read");
        else if (s.scan.status != GPO_J_OK && s.scan.status != GPO_J_EMPTY)
            gpo_snprintf(detail, sizeof detail, "line %zu: %s", s.scan.bad_line, s.scan.problem);
        else if (s.scan.torn)
            gpo_snprintf(detail, sizeof detail,
                         "a torn last line of %zu bytes (ignored; cut off by the next write)",
                         s.scan.torn);
        if (!s.readable || s.scan.status == GPO_J_CORRUPT || s.scan.status == GPO_J_OLDER)
            ok = 0;
        size_t entries = 0, unfinished = 0;
        for (size_t j = 0; j < s.ix.n; j++) {
            entries += s.ix.items[j].record != NULL;
            unfinished += s.ix.items[j].open_begin != NULL;
        }
        cJSON_AddStringToObject(f, "detail", detail);
        cJSON_AddNumberToObject(f, "lines", (double)s.scan.lines);
        cJSON_AddNumberToObject(f, "entries", (double)entries);
        cJSON_AddNumberToObject(f, "unfinished", (double)unfinished);
        cJSON_AddNumberToObject(f, "candidates", (double)s.scan.cands);
        cJSON_AddNumberToObject(f, "torn_bytes", (double)s.scan.torn);
        cJSON_AddItemToArray(files, f);
        gpo_cidx_free(&s.ix);
    }
    gpo_fs_list_free(names, n);
    if (!files || !aside || !temps || !cJSON_AddBoolToObject(o, "ok", ok)) {
        cJSON_Delete(o);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for the cache report");
    }
    *out = o;
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_dir_clear(const char *dir, const gpo_cache_device *dev,
                                  const gpo_logger *log, int *removed)
{
    assert(dir && *dir);
    if (removed)
        *removed = 0;
    char want[300] = "", base[300], path[GPO_PATH_MAX];
    if (dev) {
        gpuopt_status st = gpo_cache_file_name(dev, NULL, want, sizeof want);
        if (st)
            return st;
        want[strlen(want) - strlen(GPO_CACHE_EXT)] = '\0';
    }
    char **names = NULL;
    size_t n = 0;
    gpuopt_status st = list_dir(dir, &names, &n), first = GPUOPT_OK;
    if (st)
        return st;
    for (size_t i = 0; i < n; i++) {
        file_kind k = classify(names[i], base, sizeof base);
        if (k == F_NONE || (dev && strcmp(base, want) != 0))
            continue;
        gpo_snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        /* A journal is removed under its exclusive lock, so no append or
         * compaction is half-way through it; writers waiting on the lock
         * find the path gone and start a new file. */
        int fd = k == F_JOURNAL ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
        if (fd >= 0)
            gpo_journal_lock(fd, LOCK_EX);
        if (unlink(path) == 0) {
            if (removed)
                (*removed)++;
            gpo_log_info(log, "removed cache file %s", path);
        } else if (errno != ENOENT && first == GPUOPT_OK) {
            first = gpo_fail(GPUOPT_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
        }
        if (fd >= 0)
            close(fd);
    }
    gpo_fs_list_free(names, n);
    return first;
}
