/* Reading the journal: keeping the index in step with the file (reading
 * only what was appended since), and setting corrupt files aside.
 *
 * Files are replaced only by rename (compaction, setting aside), never
 * rewritten in place, so every fd is checked after locking to still be the
 * file at the path; one that is not is reopened. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cache_int.h"
#include "util/strutil.h"

void gpo_cache_reset_index(gpo_cache *c)
{
    gpo_cidx_free(&c->ix);
    gpo_cidx_init(&c->ix);
    c->have_file = 0;
    c->consumed = 0;
    c->file_status = GPO_J_EMPTY;
    c->schema = 0;
}

int gpo_cache_same_file(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

int gpo_cache_slurp(int fd, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    struct stat st;
    if (fstat(fd, &st))
        return -1;
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *b = malloc(cap);
    if (!b)
        return -1;
    for (;;) {
        if (n + 1 == cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return -1;
            }
            b = nb;
            cap *= 2;
        }
        ssize_t r = pread(fd, b + n, cap - 1 - n, (off_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(b);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

/* Brings the index up to the content of `fd` (locked by the caller):
 * only the bytes appended since the last read, unless the file is another
 * one or shrank. Returns the file's gpo_journal_status, or -1 when it
 * cannot be read. */
int gpo_cache_sync_fd(gpo_cache *c, int fd)
{
    struct stat st;
    if (fstat(fd, &st))
        return -1;
    if (!(c->have_file && st.st_dev == c->st_dev && st.st_ino == c->st_ino &&
          st.st_size >= c->consumed)) {
        gpo_cache_reset_index(c);
        c->have_file = 1;
        c->st_dev = st.st_dev;
        c->st_ino = st.st_ino;
        c->torn_warned_at = -1;
    }
    c->seen_size = st.st_size;
    c->seen_mtime = st.st_mtim;
    if (c->file_status != GPO_J_OK && c->file_status != GPO_J_EMPTY)
        return c->file_status; /* known bad: never read past its header again */
    size_t want = (size_t)(st.st_size - c->consumed);
    if (!want)
        return c->file_status;
    char *buf = malloc(want);
    if (!buf)
        return -1;
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(fd, buf + got, want - got, c->consumed + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    gpo_journal_scan scan;
    gpo_journal_apply(&c->ix, buf, got, c->ix.lines + 1, 0, &scan);
    free(buf);
    c->consumed += (off_t)scan.consumed;
    if (scan.schema)
        c->schema = scan.schema;
    c->file_status = scan.status == GPO_J_EMPTY && c->ix.header ? GPO_J_OK : scan.status;
    if (scan.torn && scan.status == GPO_J_OK && c->torn_warned_at != c->consumed) {
        c->torn_warned_at = c->consumed;
        gpo_log_warn(&c->log,
                     "cache file %s ends in a torn line (%zu bytes, a writer stopped mid-line): "
                     "ignored, and cut off by the next write",
                     c->path, scan.torn);
    }
    if (scan.status == GPO_J_NEWER && !(c->warned & WARN_NEWER)) {
        c->warned |= WARN_NEWER;
        gpo_snprintf(c->reason, sizeof c->reason, "%s: %s", c->path, scan.problem);
        gpo_log_warn(&c->log,
                     "cache file %s has schema %d, newer than this library's %d: it is left "
                     "alone; lookups miss and results are not stored",
                     c->path, scan.schema, GPO_CACHE_SCHEMA);
    }
    if (scan.status == GPO_J_CORRUPT || scan.status == GPO_J_OLDER)
        gpo_snprintf(c->reason, sizeof c->reason, "line %zu: %s", scan.bad_line, scan.problem);
    return c->file_status;
}

/* With the file at the path locked exclusively through `fd`: keeps the
 * corrupt file as "<name>.corrupt-<time>" and starts again. When its header
 * was sound, every record that still reads is carried into the new file
 * (a hard link keeps the old bytes, then compaction renames the salvaged
 * copy over the path, so the path never goes missing under a writer). */
void gpo_cache_set_aside_locked(gpo_cache *c, int fd)
{
    char aside[GPO_PATH_MAX + 64], why[512];
    gpo_strlcpy(why, c->reason, sizeof why);
    int older = c->file_status == GPO_J_OLDER;
    const char *word = older ? "old" : "corrupt";
    long long t = (long long)gpo_cache_now(c);
    struct stat st;
    gpo_snprintf(aside, sizeof aside, "%s.%s-%lld", c->path, word, t);
    for (int i = 1; i < 100 && lstat(aside, &st) == 0; i++)
        gpo_snprintf(aside, sizeof aside, "%s.%s-%lld-%d", c->path, word, t, i);
    int salvaged = 0;
    if (!older && c->ix.header && link(c->path, aside) == 0) {
        char *buf;
        size_t n;
        if (gpo_cache_slurp(fd, &buf, &n) == 0) {
            salvaged = gpo_cache_compact_locked(c, buf, n, 1) == 0;
            free(buf);
        }
        if (!salvaged && unlink(c->path) != 0)
            salvaged = -1;
    } else if (rename(c->path, aside) != 0) {
        salvaged = -1;
    }
    if (salvaged < 0) {
        if (!(c->warned & WARN_CORRUPT))
            gpo_log_warn(&c->log, "cache file %s is %s (%s) and cannot be set aside: %s", c->path,
                         word, why, strerror(errno));
        c->warned |= WARN_CORRUPT;
        return;
    }
    gpo_log_warn(&c->log, "cache file %s was %s (%s): set aside as %s; %s", c->path, word, why,
                 aside,
                 salvaged ? "the records that still read were kept" : "a new file is started");
    gpo_cache_reset_index(c);
}

/* Sets a corrupt file aside from a reader: re-read under an exclusive lock
 * first, since another process may already have replaced it. */
static void set_aside(gpo_cache *c)
{
    if (c->state != GPO_CACHE_READ_WRITE) {
        if (!(c->warned & WARN_CORRUPT))
            gpo_log_warn(&c->log, "cache file %s is corrupt (%s); lookups in it miss", c->path,
                         c->reason);
        c->warned |= WARN_CORRUPT;
        return;
    }
    int fd = open(c->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    if (gpo_cache_lock_fd(fd, LOCK_EX) == 0 && gpo_cache_same_file(fd, c->path)) {
        gpo_cache_reset_index(c);
        int s = gpo_cache_sync_fd(c, fd);
        if (s == GPO_J_CORRUPT || s == GPO_J_OLDER)
            gpo_cache_set_aside_locked(c, fd);
    }
    close(fd);
}

void gpo_cache_refresh(gpo_cache *c)
{
    if (c->state == GPO_CACHE_OFF)
        return;
    struct stat st;
    if (stat(c->path, &st) != 0) {
        if (errno != ENOENT && !(c->warned & WARN_READ)) {
            c->warned |= WARN_READ;
            gpo_log_warn(&c->log, "cannot read cache file %s: %s; lookups miss", c->path,
                         strerror(errno));
        }
        if (c->have_file)
            gpo_cache_reset_index(c); /* removed by gpuopt_cache_clear or set aside elsewhere */
        return;
    }
    if (c->have_file && st.st_dev == c->st_dev && st.st_ino == c->st_ino &&
        st.st_size == c->seen_size && st.st_mtim.tv_sec == c->seen_mtime.tv_sec &&
        st.st_mtim.tv_nsec == c->seen_mtime.tv_nsec)
        return;
    int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno != ENOENT && !(c->warned & WARN_READ)) {
            c->warned |= WARN_READ;
            gpo_log_warn(&c->log, "cannot open cache file %s: %s; lookups miss", c->path,
                         strerror(errno));
        }
        return;
    }
    /* Without a lock (a file system that refuses flock) reading is still
     * safe: appends are whole lines and replacement is by rename. */
    int locked = gpo_cache_lock_fd(fd, LOCK_SH) == 0;
    int s = gpo_cache_sync_fd(c, fd);
    if (locked)
        flock(fd, LOCK_UN);
    close(fd);
    if (s == GPO_J_CORRUPT || s == GPO_J_OLDER) {
        set_aside(c);
        /* Read what replaced it (the salvaged records), once. */
        if (!c->have_file && !c->refreshing) {
            c->refreshing = 1;
            gpo_cache_refresh(c);
            c->refreshing = 0;
        }
    }
}

gpuopt_status gpo_cache_read_all(gpo_cache *c, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? GPUOPT_ERR_NOT_FOUND : GPUOPT_ERR_IO;
    int locked = gpo_cache_lock_fd(fd, LOCK_SH) == 0;
    int rc = gpo_cache_slurp(fd, buf, len);
    if (locked)
        flock(fd, LOCK_UN);
    close(fd);
    return rc ? GPUOPT_ERR_IO : GPUOPT_OK;
}
