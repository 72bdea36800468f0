/* Writing the journal: one line per write(2) under an exclusive flock,
 * the header with the first line, torn tails cut off, and compaction when
 * a bound is passed. Nothing is ever left half-written: a short write is
 * truncated back under the same lock. */
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

static void cannot_write(gpo_cache *c, const char *fmt, const char *arg, int err)
{
    c->state = GPO_CACHE_READ_ONLY;
    gpo_snprintf(c->reason, sizeof c->reason, fmt, arg, strerror(err));
    if (!(c->warned & WARN_WRITE))
        gpo_log_warn(&c->log, "tuning results are not stored: %s", c->reason);
    c->warned |= WARN_WRITE;
}

/* mkdir -p with 0700 (the XDG base directory spec's mode). */
static int ensure_dir(gpo_cache *c)
{
    char p[GPO_PATH_MAX];
    gpo_strlcpy(p, c->dir, sizeof p);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s)
            continue;
        char keep = *s;
        *s = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            cannot_write(c, "cannot create the cache directory %s: %s", p, errno);
            return -1;
        }
        *s = keep;
        if (!keep)
            break;
    }
    struct stat st;
    if (stat(c->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        cannot_write(c, "the cache directory %s is not a directory (%s)", c->dir, ENOTDIR);
        return -1;
    }
    c->dir_ready = 1;
    return 0;
}

static int write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static size_t live_items(const gpo_cidx *ix)
{
    size_t n = 0;
    for (size_t i = 0; i < ix->n; i++)
        n += ix->items[i].record || ix->items[i].open_begin;
    return n;
}

/* One write under the exclusive lock: the header too when the file is new,
 * so no reader ever sees a file without one. */
static int append_locked(gpo_cache *c, int fd, const char *line, size_t len)
{
    off_t size = c->seen_size;
    if (size > c->consumed) {
        /* A torn tail: its writer died mid-line (we hold the lock, so no
         * live writer owns it). Cut it off so the next line starts clean. */
        if (ftruncate(fd, c->consumed) != 0)
            return -1;
        size = c->consumed;
    }
    char *hline = NULL, *buf = (char *)line;
    size_t n = len;
    if (size == 0) {
        size_t hlen = 0;
        cJSON *h = gpo_journal_header(&c->dev, gpo_cache_now(c));
        hline = h ? gpo_journal_print(h, &hlen) : NULL;
        cJSON_Delete(h);
        buf = hline ? malloc(hlen + len) : NULL;
        if (!buf) {
            free(hline);
            errno = ENOMEM;
            return -1;
        }
        memcpy(buf, hline, hlen);
        memcpy(buf + hlen, line, len);
        n = hlen + len;
    }
    int rc = write_all(fd, buf, n);
    int err = errno;
    if (rc != 0 && ftruncate(fd, size) != 0) {
        /* Nothing more can be done; the torn tail is cut by the next writer. */
    }
    if (buf != line)
        free(buf);
    free(hline);
    errno = err;
    return rc;
}

void gpo_cache_append(gpo_cache *c, const char *line, size_t len)
{
    if (c->state != GPO_CACHE_READ_WRITE) {
        if (!(c->warned & WARN_WRITE))
            gpo_log_warn(&c->log, "tuning results are not stored: %s", c->reason);
        c->warned |= WARN_WRITE;
        return;
    }
    if (!c->dir_ready && ensure_dir(c))
        return;
    for (int tries = 0; tries < 8; tries++) {
        int fd = open(c->path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
            cannot_write(c, "cannot open %s: %s", c->path, errno);
            return;
        }
        if (gpo_cache_lock_fd(fd, LOCK_EX) != 0) {
            /* Appending without the lock could interleave with another
             * writer; the safe answer is not to write at all. */
            cannot_write(c,
                         "flock on %s failed (%s); put GPUOPT_CACHE_DIR on a file system "
                         "that supports it",
                         c->path, errno);
            close(fd);
            return;
        }
        if (!gpo_cache_same_file(fd, c->path)) {
            close(fd); /* replaced while we waited: take the new one */
            continue;
        }
        int s = gpo_cache_sync_fd(c, fd);
        if (s == GPO_J_CORRUPT || s == GPO_J_OLDER) {
            gpo_cache_set_aside_locked(c, fd);
            close(fd);
            continue;
        }
        if (s == GPO_J_NEWER) {
            if (!(c->warned & WARN_WRITE))
                gpo_log_warn(&c->log,
                             "tuning results are not stored in %s: its schema %d is newer than "
                             "this library's %d",
                             c->path, c->schema, GPO_CACHE_SCHEMA);
            c->warned |= WARN_WRITE;
            close(fd);
            return;
        }
        if (s < 0 || append_locked(c, fd, line, len) != 0) {
            if (!(c->warned & WARN_WRITE))
                gpo_log_warn(&c->log, "cannot write cache file %s: %s", c->path, strerror(errno));
            c->warned |= WARN_WRITE;
            close(fd);
            return;
        }
        if (gpo_cache_fault_hook)
            gpo_cache_fault_hook("append:written");
        /* Read our own line back (cheap: only the new bytes), so the bounds
         * below count it. */
        gpo_cache_sync_fd(c, fd);
        if ((uint64_t)c->seen_size > c->opt.max_bytes || live_items(&c->ix) > c->opt.max_entries) {
            char *buf;
            size_t n;
            if (gpo_cache_slurp(fd, &buf, &n) == 0) {
                if (gpo_cache_compact_locked(c, buf, n, 0) == 0)
                    gpo_cache_reset_index(c);
                free(buf);
            }
        }
        close(fd);
        return;
    }
    gpo_log_warn(&c->log, "cache file %s kept being replaced; one result was not stored", c->path);
}

gpuopt_status gpo_cache_compact(gpo_cache *c)
{
    gpo_detail_clear();
    if (!c)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cache is NULL");
    pthread_mutex_lock(&c->lock);
    for (int tries = 0; c->state == GPO_CACHE_READ_WRITE && tries < 8; tries++) {
        int fd = open(c->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            break; /* nothing to compact */
        if (gpo_cache_lock_fd(fd, LOCK_EX) != 0) {
            close(fd);
            break;
        }
        if (!gpo_cache_same_file(fd, c->path)) {
            close(fd);
            continue;
        }
        int s = gpo_cache_sync_fd(c, fd);
        if (s == GPO_J_CORRUPT || s == GPO_J_OLDER)
            gpo_cache_set_aside_locked(c, fd);
        char *buf;
        size_t n;
        if (s == GPO_J_OK && gpo_cache_slurp(fd, &buf, &n) == 0) {
            if (gpo_cache_compact_locked(c, buf, n, 0) == 0)
                gpo_cache_reset_index(c);
            free(buf);
        }
        close(fd);
        break;
    }
    pthread_mutex_unlock(&c->lock);
    return GPUOPT_OK;
}
