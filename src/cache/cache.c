/* The open tuning cache (cache.h): one journal file kept in step with an
 * in-memory index, and the records written to it.
 *
 * Reading: only the bytes appended since the last read are parsed, unless
 * the file is another one or shrank. Files are replaced only by rename
 * (compaction, setting aside), never rewritten in place, so every fd is
 * checked after locking to still be the file at the path; one that is not
 * is reopened. A corrupt file is set aside.
 *
 * Writing: one line per write(2) under an exclusive flock, the header with
 * the first line, torn tails cut off, and compaction when a bound is
 * passed. Nothing is ever left half-written: a short write is truncated
 * back under the same lock.
 *
 * Records: every line carries "t" (its kind) and "key" (the hash of the
 * hard key) first; "begin" and "entry" lines carry the whole hard key as
 * well, so a file can be read back, listed and checked without the code
 * that wrote it. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"
#include "cache/compact.h"
#include "cache/journal.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/strutil.h"

#define DEFAULT_ENTRIES 2000u
#define DEFAULT_BYTES (8ull << 20)
#define DEFAULT_TOUCH_S 3600

struct gpo_cache {
    pthread_mutex_t lock;
    char dir[GPO_PATH_MAX];
    char path[GPO_PATH_MAX];
    char name[256];
    gpo_cache_device dev;
    gpo_cache_options opt;
    gpo_logger log;

    int state; /* gpo_cache_state of the directory */
    char reason[512];
    int file_status; /* gpo_journal_status of what `path` holds */
    int schema;      /* its header's schema, 0 before one is read */
    unsigned warned; /* WARN_* bits: each cause is said once per cache */

    gpo_cidx ix;
    int have_file; /* ix reflects (dev, ino) up to `consumed` */
    dev_t st_dev;
    ino_t st_ino;
    off_t seen_size;
    struct timespec seen_mtime;
    off_t consumed;
    off_t torn_warned_at;

    int dir_ready;
    int refreshing;  /* re-reading after setting a file aside */
    uint64_t serial; /* for tune ids and temp files */
};

enum { WARN_NEWER = 2, WARN_WRITE = 8, WARN_CORRUPT = 16, WARN_READ = 32 };

static int64_t now_s(const gpo_cache *c)
{
    return c->opt.clock ? c->opt.clock() : (int64_t)time(NULL);
}

/* ---- opening ------------------------------------------------------------------ */

/* File systems where flock may hold only within one client, or not at all
 * (statfs(2) f_type values, linux/magic.h): NFS (MIOpen#2214, rocm-libraries
 * PR #1612 are lock failures there), SMB/CIFS, AFS, Coda, Ceph, Lustre
 * (flock needs the "flock" mount option), GFS2, OCFS2, 9P and FUSE (sshfs,
 * GlusterFS). */
static const unsigned long netfs_magic[] = {
    0x6969,     /* NFS_SUPER_MAGIC */
    0x517B,     /* SMB_SUPER_MAGIC */
    0xFF534D42, /* CIFS_SUPER_MAGIC */
    0xFE534D42, /* SMB2_SUPER_MAGIC */
    0x5346414F, /* AFS_SUPER_MAGIC */
    0x73757245, /* CODA_SUPER_MAGIC */
    0x00C36400, /* CEPH_SUPER_MAGIC */
    0x0BD00BD0, /* Lustre */
    0x01161970, /* GFS2_MAGIC */
    0x7461636F, /* OCFS2_SUPER_MAGIC */
    0x01021997, /* V9FS_MAGIC */
    0x65735546, /* FUSE_SUPER_MAGIC */
};

/* statfs of the directory, or of its nearest existing ancestor. */
static int on_network_fs(const char *dir)
{
    char p[GPO_PATH_MAX];
    gpo_strlcpy(p, dir, sizeof p);
    for (;;) {
        struct statfs sf;
        if (statfs(p, &sf) == 0) {
            for (size_t i = 0; i < sizeof netfs_magic / sizeof netfs_magic[0]; i++)
                if ((unsigned long)(unsigned)sf.f_type == netfs_magic[i])
                    return 1;
            return 0;
        }
        char *slash = strrchr(p, '/');
        if (!slash)
            return 0;
        if (slash == p) {
            if (!p[1])
                return 0;
            p[1] = '\0';
        } else {
            *slash = '\0';
        }
    }
}

gpuopt_status gpo_cache_open(const char *dir, const gpo_cache_device *dev,
                             const gpo_cache_options *opts, const gpo_logger *log, gpo_cache **out)
{
    assert(dir && *dir && dev && out);
    assert(!opts || (opts->per_host >= -1 && opts->per_host <= 1));
    *out = NULL;
    if (strlen(dir) + 300 > GPO_PATH_MAX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "the cache directory path is %zu bytes long",
                        strlen(dir));
    gpo_cache *c = calloc(1, sizeof *c);
    if (!c)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache");
    if (opts)
        c->opt = *opts;
    if (!c->opt.max_entries)
        c->opt.max_entries = DEFAULT_ENTRIES;
    if (!c->opt.max_bytes)
        c->opt.max_bytes = DEFAULT_BYTES;
    if (!c->opt.touch_interval_s)
        c->opt.touch_interval_s = DEFAULT_TOUCH_S;
    if (log)
        c->log = *log;
    c->dev = *dev;
    gpo_strlcpy(c->dir, dir, sizeof c->dir);
    size_t dl = strlen(c->dir);
    while (dl > 1 && c->dir[dl - 1] == '/')
        c->dir[--dl] = '\0';
    char host[256] = "";
    int per_host = c->opt.per_host == 1 || (c->opt.per_host == 0 && on_network_fs(c->dir));
    if (per_host && gethostname(host, sizeof host - 1) != 0)
        gpo_strlcpy(host, "host", sizeof host);
    gpuopt_status st = gpo_cache_file_name(dev, per_host ? host : NULL, c->name, sizeof c->name);
    if (st) {
        free(c);
        return st;
    }
    if (per_host)
        gpo_log_info(&c->log,
                     "cache directory %s is on a network file system: this host keeps its own "
                     "file %s (locks may not hold across hosts)",
                     c->dir, c->name);
    gpo_snprintf(c->path, sizeof c->path, "%s/%s", c->dir, c->name);
    c->file_status = GPO_J_EMPTY;
    c->torn_warned_at = -1;
    gpo_cidx_init(&c->ix);
    if (pthread_mutex_init(&c->lock, NULL)) {
        free(c);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cannot create the cache's lock");
    }
    *out = c;
    return GPUOPT_OK;
}

void gpo_cache_close(gpo_cache *c)
{
    if (!c)
        return;
    gpo_cidx_free(&c->ix);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

const char *gpo_cache_file(const gpo_cache *c)
{
    return c ? c->path : "";
}

gpo_cache_state gpo_cache_get_state(gpo_cache *c, const char **reason)
{
    if (!c) {
        if (reason)
            *reason = "no cache";
        return GPO_CACHE_OFF;
    }
    pthread_mutex_lock(&c->lock);
    int s = c->state;
    if (s == GPO_CACHE_READ_WRITE && c->file_status == GPO_J_NEWER)
        s = GPO_CACHE_READ_ONLY;
    pthread_mutex_unlock(&c->lock);
    if (reason)
        *reason = s == GPO_CACHE_READ_WRITE ? "" : c->reason;
    return (gpo_cache_state)s;
}

/* ---- reading ------------------------------------------------------------------ */

static void reset_index(gpo_cache *c)
{
    gpo_cidx_free(&c->ix);
    gpo_cidx_init(&c->ix);
    c->have_file = 0;
    c->consumed = 0;
    c->file_status = GPO_J_EMPTY;
    c->schema = 0;
}

static int same_file(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* Brings the index up to the content of `fd` (locked by the caller):
 * only the bytes appended since the last read, unless the file is another
 * one or shrank. Returns the file's gpo_journal_status, or -1 when it
 * cannot be read. */
static int sync_fd(gpo_cache *c, int fd)
{
    struct stat st;
    if (fstat(fd, &st))
        return -1;
    if (!(c->have_file && st.st_dev == c->st_dev && st.st_ino == c->st_ino &&
          st.st_size >= c->consumed)) {
        reset_index(c);
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

/* Rewrites the journal held exclusively (compact.h); 0 when replaced. */
static int compact_locked(gpo_cache *c, const char *buf, size_t len, int salvage)
{
    gpo_compact_target t = {c->dir,           c->name, c->path,   c->opt.max_entries,
                            c->opt.max_bytes, &c->log, &c->serial};
    return gpo_journal_compact(&t, buf, len, salvage);
}

/* With the file at the path locked exclusively through `fd`: keeps the
 * corrupt file as "<name>.corrupt-<time>" and starts again. When its header
 * was sound, every record that still reads is carried into the new file
 * (a hard link keeps the old bytes, then compaction renames the salvaged
 * copy over the path, so the path never goes missing under a writer). */
static void set_aside_locked(gpo_cache *c, int fd)
{
    char aside[GPO_PATH_MAX + 64], why[512];
    gpo_strlcpy(why, c->reason, sizeof why);
    int older = c->file_status == GPO_J_OLDER;
    const char *word = older ? "old" : "corrupt";
    long long t = (long long)now_s(c);
    struct stat st;
    gpo_snprintf(aside, sizeof aside, "%s.%s-%lld", c->path, word, t);
    for (int i = 1; i < 100 && lstat(aside, &st) == 0; i++)
        gpo_snprintf(aside, sizeof aside, "%s.%s-%lld-%d", c->path, word, t, i);
    int salvaged = 0;
    if (!older && c->ix.header && link(c->path, aside) == 0) {
        char *buf;
        size_t n;
        if (gpo_journal_slurp(fd, &buf, &n) == 0) {
            salvaged = compact_locked(c, buf, n, 1) == 0;
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
    reset_index(c);
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
    if (gpo_journal_lock(fd, LOCK_EX) == 0 && same_file(fd, c->path)) {
        reset_index(c);
        int s = sync_fd(c, fd);
        if (s == GPO_J_CORRUPT || s == GPO_J_OLDER)
            set_aside_locked(c, fd);
    }
    close(fd);
}

static void refresh(gpo_cache *c)
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
            reset_index(c); /* removed by gpuopt_cache_clear or set aside elsewhere */
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
    int locked = gpo_journal_lock(fd, LOCK_SH) == 0;
    int s = sync_fd(c, fd);
    if (locked)
        flock(fd, LOCK_UN);
    close(fd);
    if (s == GPO_J_CORRUPT || s == GPO_J_OLDER) {
        set_aside(c);
        /* Read what replaced it (the salvaged records), once. */
        if (!c->have_file && !c->refreshing) {
            c->refreshing = 1;
            refresh(c);
            c->refreshing = 0;
        }
    }
}

static gpuopt_status read_all(gpo_cache *c, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? GPUOPT_ERR_NOT_FOUND : GPUOPT_ERR_IO;
    int locked = gpo_journal_lock(fd, LOCK_SH) == 0;
    int rc = gpo_journal_slurp(fd, buf, len);
    if (locked)
        flock(fd, LOCK_UN);
    close(fd);
    return rc ? GPUOPT_ERR_IO : GPUOPT_OK;
}

/* ---- writing ------------------------------------------------------------------ */

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
        cJSON *h = gpo_journal_header(&c->dev, now_s(c));
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
    int rc = gpo_journal_write(fd, buf, n);
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

static void append(gpo_cache *c, const char *line, size_t len)
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
        if (gpo_journal_lock(fd, LOCK_EX) != 0) {
            /* Appending without the lock could interleave with another
             * writer; the safe answer is not to write at all. */
            cannot_write(c,
                         "flock on %s failed (%s); put GPUOPT_CACHE_DIR on a file system "
                         "that supports it",
                         c->path, errno);
            close(fd);
            return;
        }
        if (!same_file(fd, c->path)) {
            close(fd); /* replaced while we waited: take the new one */
            continue;
        }
        int s = sync_fd(c, fd);
        if (s == GPO_J_CORRUPT || s == GPO_J_OLDER) {
            set_aside_locked(c, fd);
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
        sync_fd(c, fd);
        if ((uint64_t)c->seen_size > c->opt.max_bytes || live_items(&c->ix) > c->opt.max_entries) {
            char *buf;
            size_t n;
            if (gpo_journal_slurp(fd, &buf, &n) == 0) {
                if (compact_locked(c, buf, n, 0) == 0)
                    reset_index(c);
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
    assert(c);
    pthread_mutex_lock(&c->lock);
    for (int tries = 0; c->state == GPO_CACHE_READ_WRITE && tries < 8; tries++) {
        int fd = open(c->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            break; /* nothing to compact */
        if (gpo_journal_lock(fd, LOCK_EX) != 0) {
            close(fd);
            break;
        }
        if (!same_file(fd, c->path)) {
            close(fd);
            continue;
        }
        int s = sync_fd(c, fd);
        if (s == GPO_J_CORRUPT || s == GPO_J_OLDER)
            set_aside_locked(c, fd);
        char *buf;
        size_t n;
        if (s == GPO_J_OK && gpo_journal_slurp(fd, &buf, &n) == 0) {
            if (compact_locked(c, buf, n, 0) == 0)
                reset_index(c);
            free(buf);
        }
        close(fd);
        break;
    }
    pthread_mutex_unlock(&c->lock);
    return GPUOPT_OK;
}

/* ---- records ------------------------------------------------------------------ */

struct gpo_cache_tune {
    gpo_cache *cache;
    char key[17];
    char id[17];
    int32_t evaluated;
    int64_t started_ns;
    cJSON *begin; /* hard, soft and search, reused by the finished record */
};

/* A line that starts {"t":..., "key":...}; NULL on allocation failure. */
static cJSON *line_start(const char *type, const char *key)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "t", type) || !cJSON_AddStringToObject(o, "key", key)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Prints and appends `o` (consumed). */
static gpuopt_status emit(gpo_cache *c, cJSON *o)
{
    size_t n = 0;
    char *line = o ? gpo_journal_print(o, &n) : NULL;
    cJSON_Delete(o);
    if (!line && n)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "a cache record of %zu bytes: at most %u are stored per line", n,
                        GPO_CACHE_LINE_MAX);
    if (!line)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache record");
    append(c, line, n);
    free(line);
    return GPUOPT_OK;
}

static gpuopt_status check_key(const gpo_cache_key *key, char **canon, uint64_t *hash, char hex[17])
{
    gpuopt_status st = gpo_cache_key_canon(key, canon, hash);
    if (st == GPUOPT_OK)
        gpo_cache_hex16(*hash, hex);
    return st;
}

/* Locks the cache, brings its index up to the file and finds the item of
 * `key` (NULL when the file is unsound or the key's text differs). On
 * GPUOPT_OK the lock is held: the caller unlocks. */
static gpuopt_status locate(gpo_cache *c, const gpo_cache_key *key, char hex[17],
                            gpo_cidx_item **it)
{
    assert(c && key);
    char *canon = NULL;
    uint64_t hash;
    gpuopt_status st = check_key(key, &canon, &hash, hex);
    if (st)
        return st;
    pthread_mutex_lock(&c->lock);
    refresh(c);
    *it = c->file_status == GPO_J_OK ? gpo_cidx_find(&c->ix, hash) : NULL;
    if (*it && strcmp((*it)->canon, canon) != 0)
        *it = NULL;
    free(canon);
    return GPUOPT_OK;
}

static gpuopt_status touch_line(gpo_cache *c, gpo_cidx_item *it)
{
    char hex[17];
    gpo_cache_hex16(it->hash, hex);
    cJSON *o = line_start("touch", hex);
    if (o && !cJSON_AddNumberToObject(o, "time", (double)now_s(c))) {
        cJSON_Delete(o);
        o = NULL;
    }
    it->touched_at = now_s(c);
    return emit(c, o);
}

gpuopt_status gpo_cache_lookup(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft,
                               gpo_cache_hit **out)
{
    assert(out);
    *out = NULL;
    char hex[17];
    gpo_cidx_item *it;
    gpuopt_status st = locate(c, key, hex, &it);
    if (st)
        return st;
    if (!it || !it->record) {
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no cached result for key %s in %s", hex, c->path);
        goto out;
    }
    const cJSON *r = it->record;
    int complete = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "complete"));
    uint32_t changed = gpo_cache_soft_diff(cJSON_GetObjectItemCaseSensitive(r, "soft"), soft);
    int hand_over = c->opt.hand_over && complete && !changed;
    gpo_cache_hit *hit = calloc(1, sizeof *hit);
    if (!hit || !(hit->record = hand_over ? it->record : cJSON_Duplicate(r, 1))) {
        free(hit);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache hit");
        goto out;
    }
    if (hand_over)
        it->record = NULL;
    r = hit->record;
    hit->best = cJSON_GetObjectItemCaseSensitive(r, "best");
    hit->runner_up = cJSON_GetObjectItemCaseSensitive(r, "runner_up");
    hit->payload = cJSON_GetObjectItemCaseSensitive(r, "payload");
    hit->best = cJSON_IsObject(hit->best) ? hit->best : NULL;
    hit->runner_up = cJSON_IsObject(hit->runner_up) ? hit->runner_up : NULL;
    hit->payload = cJSON_IsNull(hit->payload) ? NULL : hit->payload;
    hit->soft = cJSON_GetObjectItemCaseSensitive(r, "soft");
    hit->complete = complete;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "time");
    hit->time = cJSON_IsNumber(t) ? (int64_t)t->valuedouble : 0;
    hit->changed = changed;
    /* The use is recorded coarsely: one line per key per touch interval
     * keeps hits fast and the journal small. */
    int64_t now = now_s(c);
    int64_t last = it->used > it->touched_at ? it->used : it->touched_at;
    if (c->opt.touch_interval_s < 0 || now - last >= c->opt.touch_interval_s)
        touch_line(c, it);
    *out = hit;
out:
    pthread_mutex_unlock(&c->lock);
    return st;
}

void gpo_cache_hit_free(gpo_cache_hit *hit)
{
    if (!hit)
        return;
    cJSON_Delete(hit->record);
    free(hit);
}

typedef struct cand_pick {
    const char *key, *tune;
    cJSON *arr;
    int failed;
} cand_pick;

static void pick_cand(const cJSON *o, const char *raw, size_t n, void *user)
{
    (void)raw;
    (void)n;
    cand_pick *p = user;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "t");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "key");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "tune");
    if (!cJSON_IsString(t) || strcmp(t->valuestring, "cand") || !cJSON_IsString(k) ||
        strcmp(k->valuestring, p->key) || !cJSON_IsString(u) || strcmp(u->valuestring, p->tune))
        return;
    cJSON *c = cJSON_Duplicate(o, 1);
    if (!c) {
        p->failed = 1;
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(c, "t");
    cJSON_DeleteItemFromObjectCaseSensitive(c, "key");
    cJSON_DeleteItemFromObjectCaseSensitive(c, "tune");
    cJSON_AddItemToArray(p->arr, c);
}

gpuopt_status gpo_cache_candidates(gpo_cache *c, const gpo_cache_key *key, cJSON **out,
                                   int *finished)
{
    assert(out && finished);
    *out = NULL;
    *finished = 0;
    char hex[17], tune[17];
    gpo_cidx_item *it;
    gpuopt_status st = locate(c, key, hex, &it);
    if (st)
        return st;
    char *buf = NULL;
    size_t len = 0;
    cand_pick p = {hex, tune, NULL, 0};
    if (!it || (!it->record_tune[0] && !it->open_tune[0])) {
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no stored candidates for key %s in %s", hex, c->path);
        goto out;
    }
    *finished = it->record_tune[0] != '\0';
    memcpy(tune, *finished ? it->record_tune : it->open_tune, sizeof tune);
    st = read_all(c, &buf, &len);
    if (st) {
        st = gpo_fail(st, "cannot read %s", c->path);
        goto out;
    }
    if (!(p.arr = cJSON_CreateArray())) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for candidates");
        goto out;
    }
    gpo_journal_each(buf, len, pick_cand, &p);
    if (p.failed) {
        cJSON_Delete(p.arr);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for candidates");
        goto out;
    }
    *out = p.arr;
out:
    pthread_mutex_unlock(&c->lock);
    free(buf);
    return st;
}

/* "hard" and "soft" objects of a record or begin line. */
static int add_key_soft(cJSON *o, const gpo_cache_key *key, const gpo_cache_soft *soft)
{
    cJSON *hard = gpo_cache_key_to_json(key), *s = gpo_cache_soft_to_json(soft);
    if (!hard || !s || !cJSON_AddItemToObject(o, "hard", hard)) {
        cJSON_Delete(hard);
        cJSON_Delete(s);
        return -1;
    }
    return cJSON_AddItemToObject(o, "soft", s) ? 0 : (cJSON_Delete(s), -1);
}

gpuopt_status gpo_cache_begin(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft,
                              const gpo_cache_search *search, gpo_cache_tune **out)
{
    assert(c && key && search && search->strategy && *search->strategy && out);
    *out = NULL;
    if (search->max_evaluations < 0 || search->max_failures < 0 || !isfinite(search->max_seconds) ||
        search->max_seconds < 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "the search budget has a negative or infinite "
                        "bound (evaluations %d, seconds %g, failures %d)",
                        (int)search->max_evaluations, search->max_seconds,
                        (int)search->max_failures);
    char *canon = NULL;
    uint64_t hash;
    gpo_cache_tune *t = calloc(1, sizeof *t);
    if (!t)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a tune");
    gpuopt_status st = check_key(key, &canon, &hash, t->key);
    free(canon);
    if (st) {
        free(t);
        return st;
    }
    t->cache = c;
    t->started_ns = (int64_t)gpo_now_ns();
    pthread_mutex_lock(&c->lock);
    /* Unique across processes and tunes: two processes tuning the same key
     * at once keep their candidates apart. */
    char seed[96];
    int n = snprintf(seed, sizeof seed, "%ld/%llu/%llu/%p", (long)getpid(),
                     (unsigned long long)gpo_now_ns(), (unsigned long long)++c->serial, (void *)t);
    gpo_cache_hex16(gpo_hash64(seed, (size_t)n), t->id);
    char seedtext[24];
    gpo_snprintf(seedtext, sizeof seedtext, "%llu", (unsigned long long)search->seed);
    cJSON *o = line_start("begin", t->key);
    cJSON *b = NULL;
    if (!o || !cJSON_AddStringToObject(o, "tune", t->id) ||
        !cJSON_AddNumberToObject(o, "time", (double)now_s(c)) || add_key_soft(o, key, soft) ||
        !cJSON_AddStringToObject(o, "strategy", search->strategy) ||
        !cJSON_AddStringToObject(o, "seed", seedtext) ||
        !(b = cJSON_AddObjectToObject(o, "budget")) ||
        !cJSON_AddNumberToObject(b, "max_evaluations", search->max_evaluations) ||
        !cJSON_AddNumberToObject(b, "max_seconds", search->max_seconds) ||
        !cJSON_AddNumberToObject(b, "max_failures", search->max_failures) ||
        !(t->begin = cJSON_Duplicate(o, 1))) {
        cJSON_Delete(o);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a tune record");
    } else {
        st = emit(c, o);
    }
    pthread_mutex_unlock(&c->lock);
    if (st) {
        cJSON_Delete(t->begin);
        free(t);
        return st;
    }
    *out = t;
    return GPUOPT_OK;
}

/* {"params": {...}, "status": ..., stats} */
static cJSON *candidate_json(const cJSON *params, const gpo_cache_stats *s)
{
    cJSON *o = cJSON_CreateObject(), *p = cJSON_Duplicate(params, 1);
    if (!o || !p || !cJSON_AddItemToObject(o, "params", p)) {
        cJSON_Delete(o);
        cJSON_Delete(p);
        return NULL;
    }
    gpo_cache_stats_to_json(o, s);
    return o;
}

static gpuopt_status check_candidate(const cJSON *params, const gpo_cache_stats *s,
                                     const char *what)
{
    char why[200];
    assert(params && s);
    if (gpo_cache_params_valid(params, why, sizeof why) ||
        gpo_cache_stats_valid(s, why, sizeof why))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: %s", what, why);
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_add_candidate(gpo_cache_tune *t, const cJSON *params,
                                      const gpo_cache_stats *stats)
{
    assert(t);
    gpuopt_status st = check_candidate(params, stats, "candidate");
    if (st)
        return st;
    cJSON *o = line_start("cand", t->key), *body = candidate_json(params, stats);
    if (!o || !body || !cJSON_AddStringToObject(o, "tune", t->id)) {
        cJSON_Delete(o);
        cJSON_Delete(body);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a candidate record");
    }
    /* Flattened after "tune", so every candidate line starts the same way. */
    while (body->child) {
        cJSON *f = cJSON_DetachItemViaPointer(body, body->child);
        cJSON_AddItemToObject(o, f->string, f);
    }
    cJSON_Delete(body);
    pthread_mutex_lock(&t->cache->lock);
    st = emit(t->cache, o);
    pthread_mutex_unlock(&t->cache->lock);
    if (st == GPUOPT_OK)
        t->evaluated++;
    return st;
}

void gpo_cache_abandon(gpo_cache_tune *t)
{
    if (!t)
        return;
    cJSON_Delete(t->begin);
    free(t);
}

/* A finished record: the begin line's key, soft fields and search, then
 * what was found. */
static cJSON *record_from(const cJSON *begin, const char *key, int64_t now)
{
    cJSON *o = line_start("entry", key);
    static const char *const copy[] = {"tune", "hard", "soft", "strategy", "seed", "budget"};
    if (!o || !cJSON_AddNumberToObject(o, "time", (double)now)) {
        cJSON_Delete(o);
        return NULL;
    }
    for (size_t i = 0; begin && i < sizeof copy / sizeof copy[0]; i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(begin, copy[i]);
        cJSON *d = f ? cJSON_Duplicate(f, 1) : NULL;
        if (f && (!d || !cJSON_AddItemToObject(o, copy[i], d))) {
            cJSON_Delete(d);
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

static int add_optional(cJSON *o, const char *name, cJSON *v, int had)
{
    if (!had)
        return cJSON_AddNullToObject(o, name) ? 0 : -1;
    if (!v || !cJSON_AddItemToObject(o, name, v)) {
        cJSON_Delete(v);
        return -1;
    }
    return 0;
}

gpuopt_status gpo_cache_finish(gpo_cache_tune *t, const cJSON *best_params,
                               const gpo_cache_stats *best, const cJSON *runner_params,
                               const gpo_cache_stats *runner, int complete, double wall_s,
                               const cJSON *payload)
{
    assert(t);
    gpuopt_status st = GPUOPT_OK;
    if ((best_params || best) && (st = check_candidate(best_params, best, "best")))
        goto out;
    if ((runner_params || runner) && (st = check_candidate(runner_params, runner, "runner-up")))
        goto out;
    assert(!(runner_params && !best_params));
    assert(isfinite(wall_s) && (wall_s >= 0 || wall_s == -1));
    assert(!payload || cJSON_IsObject(payload));
    gpo_cache *c = t->cache;
    pthread_mutex_lock(&c->lock);
    cJSON *o = record_from(t->begin, t->key, now_s(c));
    if (!o || add_optional(o, "best", best ? candidate_json(best_params, best) : NULL, !!best) ||
        add_optional(o, "runner_up", runner ? candidate_json(runner_params, runner) : NULL,
                     !!runner) ||
        !cJSON_AddBoolToObject(o, "complete", complete != 0) ||
        !cJSON_AddNumberToObject(o, "evaluated", t->evaluated) ||
        !cJSON_AddNumberToObject(o, "wall_s", wall_s) ||
        add_optional(o, "payload", payload ? cJSON_Duplicate(payload, 1) : NULL, !!payload)) {
        cJSON_Delete(o);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache record");
    } else {
        st = emit(c, o);
    }
    pthread_mutex_unlock(&c->lock);
out:
    gpo_cache_abandon(t);
    return st;
}

gpuopt_status gpo_cache_record_verify(gpo_cache *c, const gpo_cache_key *key,
                                      const gpo_cache_soft *soft, int still_good, double best_ns,
                                      double runner_ns)
{
    if (!isfinite(best_ns) || !isfinite(runner_ns))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "a re-timed value is not finite");
    char hex[17];
    gpo_cidx_item *it;
    gpuopt_status st = locate(c, key, hex, &it);
    if (st)
        return st;
    cJSON *o = NULL, *s = NULL;
    if (!it || !it->record) {
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no cached result for key %s to verify", hex);
    } else if (!(o = line_start("verify", hex)) || !(s = gpo_cache_soft_to_json(soft)) ||
               !cJSON_AddNumberToObject(o, "time", (double)now_s(c)) ||
               !cJSON_AddItemToObject(o, "soft", s) ||
               !cJSON_AddBoolToObject(o, "ok", still_good != 0) ||
               !cJSON_AddNumberToObject(o, "best_ns", best_ns < 0 ? -1 : best_ns) ||
               !cJSON_AddNumberToObject(o, "runner_up_ns", runner_ns < 0 ? -1 : runner_ns)) {
        if (!cJSON_GetObjectItemCaseSensitive(o, "soft"))
            cJSON_Delete(s);
        cJSON_Delete(o);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a verification record");
    } else {
        st = emit(c, o);
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

gpuopt_status gpo_cache_touch(gpo_cache *c, const gpo_cache_key *key)
{
    char hex[17];
    gpo_cidx_item *it;
    gpuopt_status st = locate(c, key, hex, &it);
    if (st)
        return st;
    if (!it || (!it->record && !it->open_begin))
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no cached result for key %s to touch", hex);
    else
        st = touch_line(c, it);
    pthread_mutex_unlock(&c->lock);
    return st;
}
