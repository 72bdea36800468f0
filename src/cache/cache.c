/* The open tuning cache (cache.h): one device's file, its document in
 * memory, and the writes to it.
 *
 * Reading: the document stands for the file as long as the path names the
 * file the cache holds open (file.h: an open file's inode cannot be
 * reused), so a lookup costs one fstatat until another process writes;
 * then the file is read again, whole.
 *
 * Writing: under the file's lock, the document is brought up to the file
 * (read again when another process replaced it), changed, printed with the
 * bounds applied, and the file replaced whole. A file that is corrupt, of
 * an older schema, or holds records that fail their checks is set aside by
 * that write, which keeps what still reads. */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"
#include "cache/doc.h"
#include "cache/file.h"
#include "util/fs.h"
#include "cache/shared.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/strutil.h"

#define DEFAULT_ENTRIES 2000u
#define DEFAULT_BYTES (8ull << 20)
#define DEFAULT_TOUCH_S 3600

typedef struct noted_use {
    uint64_t hash;
    int64_t when;
} noted_use;

struct gpo_cache {
    pthread_mutex_t lock;
    char dir[GPO_PATH_MAX];
    char path[GPO_PATH_MAX];
    char name[256];
    gpo_cache_device dev;
    gpo_cache_options opt;
    gpo_logger log;

    int state; /* gpo_cache_state */
    char reason[512];
    unsigned warned; /* WARN_* bits: each cause is said once per cache */

    int dirfd; /* the checked directory; -1 before it is opened */
    int fd;    /* the file `doc` was read from or written as; -1 none */
    int whole; /* doc is all of that file: no hit handed over, no change half made */
    gpo_cache_doc doc;
    noted_use *uses; /* uses of hits not written yet */
    size_t n_uses, cap_uses;
    uint64_t serial;           /* for tune ids and temp files */
    int wrote;                 /* the last update replaced the file */
    char shared[GPO_PATH_MAX]; /* the read-only layer; "" none */
};

int32_t gpo_cache_checkpoint_default_ms = 1000;

enum { WARN_DIR = 1, WARN_NEWER = 2, WARN_WRITE = 4, WARN_FILE = 8, WARN_SHARED = 16 };

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
    if (!c->opt.checkpoint_ms)
        c->opt.checkpoint_ms = gpo_cache_checkpoint_default_ms;
    if (!c->opt.lock_wait_ms)
        c->opt.lock_wait_ms = GPO_CACHE_LOCK_WAIT_MS;
    if (log)
        c->log = *log;
    c->dev = *dev;
    c->dirfd = c->fd = -1;
    gpo_strlcpy(c->dir, dir, sizeof c->dir);
    if (c->opt.shared_dir)
        gpo_strlcpy(c->shared, c->opt.shared_dir, sizeof c->shared);
    c->opt.shared_dir = NULL; /* the caller's, copied */
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
    gpo_cache_doc_init(&c->doc);
    if (pthread_mutex_init(&c->lock, NULL)) {
        free(c);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cannot create the cache's lock");
    }
    *out = c;
    return GPUOPT_OK;
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
    if (s == GPO_CACHE_READ_WRITE && c->doc.status == GPO_DOC_NEWER)
        s = GPO_CACHE_READ_ONLY;
    pthread_mutex_unlock(&c->lock);
    if (reason)
        *reason = s == GPO_CACHE_READ_WRITE ? "" : c->reason;
    return (gpo_cache_state)s;
}

/* ---- reading ------------------------------------------------------------------ */

/* Forgets the document: the path no longer names its file. */
static void drop_doc(gpo_cache *c)
{
    gpo_cache_doc_free(&c->doc);
    gpo_cache_doc_init(&c->doc);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->whole = 0;
}

/* The directory, opened and checked once (again when it was removed).
 * 0, or -1 when it does not exist or is not used (then said once and the
 * cache turned off: a directory that fails its checks is not trusted for
 * reading either). */
static int open_dir(gpo_cache *c, int create)
{
    struct stat st;
    if (c->dirfd >= 0 && fstat(c->dirfd, &st) == 0 && st.st_nlink > 0)
        return 0;
    if (c->dirfd >= 0) {
        close(c->dirfd); /* removed under us: a new one may stand at the path */
        c->dirfd = -1;
        drop_doc(c);
    }
    char why[400];
    int fd = gpo_cache_dir_open(c->dir, create, why, sizeof why);
    if (fd >= 0) {
        c->dirfd = fd;
        return 0;
    }
    if (fd == GPO_FILE_MISSING)
        return -1; /* a first run: nothing to say */
    c->state = GPO_CACHE_OFF;
    gpo_snprintf(c->reason, sizeof c->reason, "%s", why);
    if (!create && !(c->warned & WARN_DIR))
        gpo_log_warn(&c->log, "the tuning cache is not used: %s; lookups miss", why);
    c->warned |= create ? 0 : WARN_DIR;
    return -1;
}

/* Says once what is wrong with the file just read. */
static void report(gpo_cache *c)
{
    const gpo_cache_doc *d = &c->doc;
    if (d->status == GPO_DOC_NEWER) {
        gpo_snprintf(c->reason, sizeof c->reason, "%s: %s", c->path, d->problem);
        if (!(c->warned & WARN_NEWER))
            gpo_log_warn(&c->log,
                         "cache file %s has schema %d, newer than this library's %d: it is left "
                         "alone; lookups miss and results are not stored",
                         c->path, d->schema, GPO_CACHE_SCHEMA);
        c->warned |= WARN_NEWER;
        return;
    }
    if ((d->status == GPO_DOC_OK || d->status == GPO_DOC_EMPTY) && !d->dropped)
        return;
    if (!(c->warned & WARN_FILE)) {
        if (d->dropped)
            gpo_log_warn(&c->log,
                         "cache file %s: %zu %s not used (%s); the next result stored sets the "
                         "file aside and keeps the rest",
                         c->path, d->dropped,
                         d->dropped == 1 ? "entry failed its checks and is"
                                         : "entries failed their checks and are",
                         d->problem);
        else
            gpo_log_warn(&c->log,
                         "cache file %s is not used (%s): lookups in it miss; the next result "
                         "stored sets it aside and starts a new file",
                         c->path, d->problem);
    }
    c->warned |= WARN_FILE;
}

/* Reads the file at the path into the document. GPUOPT_ERR_NO_MEMORY
 * leaves no document (a writer must not take an empty one for the file). */
static gpuopt_status read_file(gpo_cache *c)
{
    drop_doc(c);
    char *buf = NULL, why[300];
    size_t len = 0;
    int fd = gpo_cache_file_read(c->dirfd, c->name, &buf, &len, why, sizeof why);
    if (fd == GPO_FILE_NO_MEMORY)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory to read %s", c->path);
    c->whole = 1;
    if (fd == GPO_FILE_MISSING)
        return GPUOPT_OK;
    if (fd < 0) {
        c->doc.status = GPO_DOC_CORRUPT;
        gpo_snprintf(c->doc.problem, sizeof c->doc.problem, "%s", why);
        report(c);
        return GPUOPT_OK;
    }
    gpuopt_status st = gpo_cache_doc_parse(&c->doc, buf, len);
    free(buf);
    c->fd = fd;
    if (st) {
        drop_doc(c);
        return gpo_fail(st, "no memory to read %s", c->path);
    }
    report(c);
    return GPUOPT_OK;
}

static void refresh(gpo_cache *c)
{
    if (c->state == GPO_CACHE_OFF)
        return;
    if (open_dir(c, 0)) {
        drop_doc(c);
        return;
    }
    if (c->fd < 0 || !gpo_cache_file_is(c->dirfd, c->name, c->fd))
        read_file(c);
}

/* ---- writing ------------------------------------------------------------------ */

static void not_stored(gpo_cache *c, const char *why)
{
    if (!(c->warned & WARN_WRITE))
        gpo_log_warn(&c->log, "tuning results are not stored in %s: %s", c->dir, why);
    c->warned |= WARN_WRITE;
}

static int64_t noted(const gpo_cache *c, uint64_t hash)
{
    for (size_t i = 0; i < c->n_uses; i++)
        if (c->uses[i].hash == hash)
            return c->uses[i].when;
    return 0;
}

/* A use to write with the next write (without memory it is not noted:
 * uses only order evictions). */
static void note_use(gpo_cache *c, uint64_t hash, int64_t when)
{
    for (size_t i = 0; i < c->n_uses; i++)
        if (c->uses[i].hash == hash) {
            c->uses[i].when = when;
            return;
        }
    if (gpo_grow(&c->uses, sizeof *c->uses, c->n_uses, &c->cap_uses, 8))
        return;
    c->uses[c->n_uses++] = (noted_use){hash, when};
}

typedef gpuopt_status (*change_fn)(gpo_cache *c, void *arg);

/* One write: fn changes the document, brought up to the file under the
 * lock; the file is replaced by the result. Returns fn's failure or
 * GPUOPT_ERR_NO_MEMORY; a write that cannot happen is said and is OK. */
static gpuopt_status update(gpo_cache *c, change_fn fn, void *arg)
{
    if (c->state == GPO_CACHE_READ_WRITE && open_dir(c, 1) && c->state == GPO_CACHE_READ_WRITE) {
        not_stored(c, "the cache directory vanished while it was created");
        return GPUOPT_OK;
    }
    if (c->state != GPO_CACHE_READ_WRITE) {
        not_stored(c, c->reason);
        return GPUOPT_OK;
    }
    char why[400];
    int lock = gpo_cache_file_lock(c->dirfd, c->name, c->opt.lock_wait_ms, why, sizeof why);
    if (lock == GPO_FILE_BUSY) {
        gpo_log_warn(&c->log, "a tuning result was not stored in %s: %s", c->path, why);
        return GPUOPT_OK;
    }
    if (lock < 0) {
        /* Writing without the lock could lose another writer's result. */
        c->state = GPO_CACHE_READ_ONLY;
        gpo_snprintf(c->reason, sizeof c->reason,
                     "%s; put GPUOPT_CACHE_DIR on a file system that supports flock", why);
        not_stored(c, c->reason);
        return GPUOPT_OK;
    }
    char *text = NULL;
    gpuopt_status st = GPUOPT_OK;
    gpo_cache_doc *d = &c->doc;
    /* Every line is read before the file is written again (lookups read
     * only theirs): a line that does not read is found now, and the file
     * set aside by this write rather than carried forward. */
    size_t dropped = d->dropped;
    if (!c->whole || c->fd < 0 || !gpo_cache_file_is(c->dirfd, c->name, c->fd))
        st = read_file(c);
    if (st || (st = gpo_cache_doc_read_all(d)) != GPUOPT_OK) {
        drop_doc(c);
        goto out;
    }
    if (d->dropped != dropped)
        report(c);
    if (d->status == GPO_DOC_NEWER) {
        not_stored(c, c->reason);
        goto out;
    }
    const char *aside = d->status == GPO_DOC_OLDER                        ? "old"
                        : d->status == GPO_DOC_CORRUPT || d->dropped != 0 ? "corrupt"
                                                                          : NULL;
    for (size_t i = 0; i < c->n_uses && !st; i++) {
        gpo_cache_item *it = gpo_cache_doc_find(d, c->uses[i].hash);
        if (it && c->uses[i].when > it->used && !(st = gpo_cache_doc_read(d, it))) {
            it->used = c->uses[i].when;
            gpo_cache_doc_changed(it);
        }
    }
    if (st || (st = fn(c, arg)) != GPUOPT_OK) {
        if (st != GPUOPT_ERR_NOT_FOUND) /* a change half made */
            drop_doc(c);
        goto out;
    }
    size_t len = 0, evicted = 0;
    text = gpo_cache_doc_print(d, &c->dev, now_s(c), c->opt.max_bytes, c->opt.max_entries, &len,
                               &evicted);
    if (!text) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory to write the tuning cache");
        drop_doc(c);
        goto out;
    }
    char moved[300];
    if (aside &&
        gpo_cache_file_set_aside(c->dirfd, c->name, aside, now_s(c), moved, sizeof moved) == 0)
        gpo_log_warn(&c->log, "cache file %s was %s (%s): set aside as %s; %s", c->path,
                     aside[0] == 'o' ? "of an older schema" : "damaged", d->problem, moved,
                     d->status == GPO_DOC_OK ? "the entries that still read are kept"
                                             : "a new file is started");
    int fd = gpo_cache_file_replace(c->dirfd, c->name, text, len, ++c->serial);
    if (fd < 0) {
        if (!(c->warned & WARN_WRITE))
            gpo_log_warn(&c->log, "cannot write cache file %s: %s", c->path, strerror(errno));
        c->warned |= WARN_WRITE;
        drop_doc(c);
        goto out;
    }
    if (c->fd >= 0)
        close(c->fd);
    c->fd = fd;
    c->whole = 1;
    c->wrote = 1;
    d->status = GPO_DOC_OK;
    d->dropped = 0;
    c->n_uses = 0;
    if (evicted)
        gpo_log_info(&c->log,
                     "cache file %s: %zu least recently used entr%s evicted (bounds: %u "
                     "entries, %llu bytes)",
                     c->path, evicted, evicted == 1 ? "y" : "ies", c->opt.max_entries,
                     (unsigned long long)c->opt.max_bytes);
out:
    gpo_cache_file_unlock(lock);
    free(text);
    return st;
}

static gpuopt_status no_change(gpo_cache *c, void *arg)
{
    (void)c, (void)arg;
    return GPUOPT_OK;
}

void gpo_cache_close(gpo_cache *c)
{
    if (!c)
        return;
    if (c->n_uses && c->state == GPO_CACHE_READ_WRITE)
        update(c, no_change, NULL);
    drop_doc(c);
    if (c->dirfd >= 0)
        close(c->dirfd);
    free(c->uses);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* ---- lookups -------------------------------------------------------------------- */

static gpuopt_status check_key(const gpo_cache_key *key, char **canon, uint64_t *hash, char hex[17])
{
    gpuopt_status st = gpo_cache_key_canon(key, canon, hash);
    if (st == GPUOPT_OK)
        gpo_cache_hex16(*hash, hex);
    return st;
}

/* The item of `key` in the document brought up to the file, with the
 * cache locked (the caller unlocks on GPUOPT_OK); NULL when the key's text
 * differs (a hash collision) or there is none. */
static gpuopt_status locate(gpo_cache *c, const gpo_cache_key *key, char hex[17],
                            gpo_cache_item **it)
{
    assert(c && key);
    char *canon = NULL;
    uint64_t hash;
    gpuopt_status st = check_key(key, &canon, &hash, hex);
    if (st)
        return st;
    pthread_mutex_lock(&c->lock);
    refresh(c);
    size_t dropped = c->doc.dropped;
    *it = gpo_cache_doc_find(&c->doc, hash);
    if (*it && gpo_cache_doc_read(&c->doc, *it)) {
        free(canon);
        pthread_mutex_unlock(&c->lock);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory to read %s", c->path);
    }
    if (c->doc.dropped != dropped)
        report(c);
    if (*it && (!(*it)->canon || strcmp((*it)->canon, canon) != 0))
        *it = NULL;
    free(canon);
    return GPUOPT_OK;
}

static gpuopt_status lookup_here(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft,
                                 gpo_cache_hit **out)
{
    assert(out);
    *out = NULL;
    char hex[17];
    gpo_cache_item *it;
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
    if (hand_over) {
        it->record = NULL;
        c->whole = 0;
    }
    r = hit->record;
    hit->best = cJSON_GetObjectItemCaseSensitive(r, "best");
    hit->runner_up = cJSON_GetObjectItemCaseSensitive(r, "runner_up");
    hit->payload = cJSON_GetObjectItemCaseSensitive(r, "payload");
    hit->best = cJSON_IsObject(hit->best) ? hit->best : NULL;
    hit->runner_up = cJSON_IsObject(hit->runner_up) ? hit->runner_up : NULL;
    hit->payload = cJSON_IsObject(hit->payload) ? hit->payload : NULL;
    hit->soft = cJSON_GetObjectItemCaseSensitive(r, "soft");
    hit->complete = complete;
    /* Checked when read (doc.c): an integer 0..2^53. */
    hit->time = (int64_t)cJSON_GetObjectItemCaseSensitive(r, "time")->valuedouble;
    hit->changed = changed;
    /* The use is noted coarsely: once per key per touch interval keeps hits
     * fast and writes rare. */
    int64_t now = now_s(c), last = noted(c, it->hash);
    last = it->used > last ? it->used : last;
    if (c->opt.touch_interval_s < 0 || now - last >= c->opt.touch_interval_s)
        note_use(c, it->hash, now);
    *out = hit;
out:
    pthread_mutex_unlock(&c->lock);
    return st;
}

/* On a local miss: the shared layer's record of `key`, merged into the
 * local file. 1 when the file now has it. */
static int from_shared(gpo_cache *c, const gpo_cache_key *key)
{
    char *canon = NULL, hex[17], why[400] = "";
    uint64_t hash;
    if (check_key(key, &canon, &hash, hex))
        return 0;
    gpo_cache_doc d;
    gpo_cache_doc_init(&d);
    gpuopt_status st = gpo_cache_shared_find(c->shared, &c->dev, hash, canon, &d, why, sizeof why);
    free(canon);
    size_t added = 0, kept = 0;
    if (st == GPUOPT_ERR_IO && !(c->warned & WARN_SHARED)) {
        gpo_log_warn(&c->log, "the shared tuning cache is not used: %s", why);
        c->warned |= WARN_SHARED;
    }
    if (st == GPUOPT_OK && gpo_cache_merge(c, &d, &added, &kept) == GPUOPT_OK && added)
        gpo_log_info(&c->log, "tuning cache: the result of key %s taken from the shared cache %s",
                     hex, c->shared);
    gpo_cache_doc_free(&d);
    return added > 0;
}

gpuopt_status gpo_cache_lookup(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft,
                               gpo_cache_hit **out)
{
    gpuopt_status st = lookup_here(c, key, soft, out);
    if (st != GPUOPT_ERR_NOT_FOUND || !c->shared[0] || c->state != GPO_CACHE_READ_WRITE)
        return st;
    char detail[512];
    gpo_strlcpy(detail, gpo_detail_get(), sizeof detail);
    if (from_shared(c, key))
        return lookup_here(c, key, soft, out);
    return gpo_fail(GPUOPT_ERR_NOT_FOUND, "%s (nor in the shared cache %s)", detail, c->shared);
}

void gpo_cache_hit_free(gpo_cache_hit *hit)
{
    if (!hit)
        return;
    cJSON_Delete(hit->record);
    free(hit);
}

gpuopt_status gpo_cache_candidates(gpo_cache *c, const gpo_cache_key *key, cJSON **out,
                                   int *finished)
{
    assert(out && finished);
    *out = NULL;
    *finished = 0;
    char hex[17];
    gpo_cache_item *it;
    gpuopt_status st = locate(c, key, hex, &it);
    if (st)
        return st;
    if (!it || (!it->record && !it->open)) {
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no stored candidates for key %s in %s", hex, c->path);
        goto out;
    }
    *finished = it->record != NULL;
    if (gpo_cache_doc_read_cands(&c->doc, it)) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for candidates");
        goto out;
    }
    const cJSON *src =
        *finished ? it->cands : cJSON_GetObjectItemCaseSensitive(it->open, "candidates");
    if (!(*out = src ? cJSON_Duplicate(src, 1) : cJSON_CreateArray()))
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for candidates");
out:
    pthread_mutex_unlock(&c->lock);
    return st;
}

gpuopt_status gpo_cache_touch(gpo_cache *c, const gpo_cache_key *key)
{
    char hex[17];
    gpo_cache_item *it;
    gpuopt_status st = locate(c, key, hex, &it);
    if (st)
        return st;
    if (!it || (!it->record && !it->open))
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no cached result for key %s to touch", hex);
    else
        note_use(c, it->hash, now_s(c));
    pthread_mutex_unlock(&c->lock);
    return st;
}

/* ---- tunes ---------------------------------------------------------------------- */

struct gpo_cache_tune {
    gpo_cache *cache;
    uint64_t hash;
    char *canon;
    char key[17];
    char id[17];
    int32_t evaluated, unsaved;
    uint64_t saved_ns; /* the last checkpoint (or the start) */
    cJSON *begin;      /* key, tune, time, hard, soft and search: the record's start */
    cJSON *cands;      /* every candidate so far */
};

static void tune_free(gpo_cache_tune *t)
{
    free(t->canon);
    cJSON_Delete(t->begin);
    cJSON_Delete(t->cands);
    free(t);
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
    gpo_cache_tune *t = calloc(1, sizeof *t);
    if (!t)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a tune");
    gpuopt_status st = check_key(key, &t->canon, &t->hash, t->key);
    if (st) {
        tune_free(t);
        return st;
    }
    t->cache = c;
    t->saved_ns = gpo_now_ns();
    pthread_mutex_lock(&c->lock);
    /* Unique across processes and tunes. */
    char seed[96];
    int n = snprintf(seed, sizeof seed, "%ld/%llu/%llu/%p", (long)getpid(),
                     (unsigned long long)gpo_now_ns(), (unsigned long long)++c->serial, (void *)t);
    int64_t now = now_s(c);
    pthread_mutex_unlock(&c->lock);
    gpo_cache_hex16(gpo_hash64(seed, (size_t)n), t->id);
    char seedtext[24];
    gpo_snprintf(seedtext, sizeof seedtext, "%llu", (unsigned long long)search->seed);
    cJSON *o = t->begin = cJSON_CreateObject();
    gpo_json b = {.failed = !o || !(t->cands = cJSON_CreateArray())};
    /* "key" and "used" first: a file's lines are found by them (doc.h). */
    gpo_json_str(&b, o, "key", t->key);
    gpo_json_num(&b, o, "used", (double)now);
    gpo_json_num(&b, o, "time", (double)now);
    gpo_json_str(&b, o, "tune", t->id);
    gpo_json_add(&b, o, "hard", b.failed ? NULL : gpo_cache_key_to_json(key));
    gpo_json_add(&b, o, "soft", b.failed ? NULL : gpo_cache_soft_to_json(soft));
    gpo_json_str(&b, o, "strategy", search->strategy);
    gpo_json_str(&b, o, "seed", seedtext);
    cJSON *budget = gpo_json_object(&b, o, "budget");
    gpo_json_num(&b, budget, "max_evaluations", search->max_evaluations);
    gpo_json_num(&b, budget, "max_seconds", search->max_seconds);
    gpo_json_num(&b, budget, "max_failures", search->max_failures);
    if (b.failed) {
        tune_free(t);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a tune record");
    }
    *out = t;
    return GPUOPT_OK;
}

/* {"params": {...}, "status": ..., stats}, checked whole; NULL without
 * memory. */
static cJSON *candidate_json(const cJSON *params, const gpo_cache_stats *s)
{
    cJSON *o = cJSON_CreateObject(), *p = cJSON_Duplicate(params, 1);
    if (!o || !p || !cJSON_AddItemToObject(o, "params", p)) {
        cJSON_Delete(o);
        cJSON_Delete(p);
        return NULL;
    }
    if (gpo_cache_stats_to_json(o, s)) {
        cJSON_Delete(o);
        return NULL;
    }
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

/* GPUOPT_ERR_OUT_OF_RANGE when `o` prints longer than a record may be. */
static gpuopt_status check_size(const cJSON *o, const char *what)
{
    char *text = cJSON_PrintUnformatted(o);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a %s", what);
    size_t n = strlen(text);
    free(text);
    if (n > GPO_CACHE_RECORD_MAX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "a %s of %zu bytes: at most %u are stored", what,
                        n, GPO_CACHE_RECORD_MAX);
    return GPUOPT_OK;
}

/* The tune's candidates so far as the key's unfinished tune. */
static gpuopt_status put_open(gpo_cache *c, void *arg)
{
    const gpo_cache_tune *t = arg;
    gpo_cache_item *it = gpo_cache_doc_item(&c->doc, t->hash, t->canon);
    cJSON *o = it ? cJSON_Duplicate(t->begin, 1) : NULL;
    cJSON *cands = o ? cJSON_Duplicate(t->cands, 1) : NULL;
    if (!cands || !cJSON_AddItemToObject(o, "candidates", cands)) {
        cJSON_Delete(o);
        cJSON_Delete(cands);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory to save a tune's candidates");
    }
    cJSON_Delete(it->open);
    it->open = o;
    int64_t now = now_s(c);
    it->used = now > it->used ? now : it->used; /* being measured: not to evict */
    gpo_cache_doc_changed(it);
    return GPUOPT_OK;
}

static gpuopt_status checkpoint(gpo_cache_tune *t)
{
    pthread_mutex_lock(&t->cache->lock);
    gpuopt_status st = update(t->cache, put_open, t);
    pthread_mutex_unlock(&t->cache->lock);
    if (st == GPUOPT_OK) {
        t->saved_ns = gpo_now_ns();
        t->unsaved = 0;
    }
    return st;
}

gpuopt_status gpo_cache_add_candidate(gpo_cache_tune *t, const cJSON *params,
                                      const gpo_cache_stats *stats)
{
    assert(t);
    gpuopt_status st = check_candidate(params, stats, "candidate");
    if (st)
        return st;
    cJSON *o = candidate_json(params, stats);
    if (!o)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a candidate record");
    if ((st = check_size(o, "candidate")) != GPUOPT_OK || !cJSON_AddItemToArray(t->cands, o)) {
        cJSON_Delete(o);
        return st ? st : gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a candidate record");
    }
    t->evaluated++;
    t->unsaved++;
    int32_t every = t->cache->opt.checkpoint_ms;
    if (every < 0 || gpo_now_ns() - t->saved_ns >= (uint64_t)every * 1000000u)
        st = checkpoint(t);
    return st;
}

void gpo_cache_abandon(gpo_cache_tune *t)
{
    if (!t)
        return;
    if (t->unsaved)
        checkpoint(t); /* what a later run resumes from */
    tune_free(t);
}

typedef struct finished {
    const gpo_cache_tune *t;
    cJSON *record, *cands; /* taken by put_record */
} finished;

/* The finished record replaces the key's record and unfinished tune (this
 * run's or an older one's: the record supersedes them for resuming; a run
 * still going saves its own again at its next checkpoint). */
static gpuopt_status put_record(gpo_cache *c, void *arg)
{
    finished *f = arg;
    gpo_cache_item *it = gpo_cache_doc_item(&c->doc, f->t->hash, f->t->canon);
    if (!it)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache record");
    gpo_cache_doc_drop_record(it);
    cJSON_Delete(it->open);
    it->record = f->record;
    it->cands = f->cands;
    it->open = NULL;
    f->record = f->cands = NULL;
    int64_t now = now_s(c);
    it->used = now > it->used ? now : it->used;
    gpo_cache_doc_changed(it);
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_finish(gpo_cache_tune *t, const cJSON *best_params,
                               const gpo_cache_stats *best, const cJSON *runner_params,
                               const gpo_cache_stats *runner, int complete, double wall_s,
                               const cJSON *payload)
{
    assert(t);
    gpuopt_status st = GPUOPT_OK;
    finished f = {t, NULL, NULL};
    if ((best_params || best) && (st = check_candidate(best_params, best, "best")))
        goto out;
    if ((runner_params || runner) && (st = check_candidate(runner_params, runner, "runner-up")))
        goto out;
    assert(!(runner_params && !best_params));
    assert(isfinite(wall_s) && (wall_s >= 0 || wall_s == -1));
    assert(!payload || cJSON_IsObject(payload));
    gpo_cache *c = t->cache;
    pthread_mutex_lock(&c->lock);
    int64_t now = now_s(c);
    pthread_mutex_unlock(&c->lock);
    cJSON *o = f.record = cJSON_Duplicate(t->begin, 1);
    gpo_json b = {.failed = !o};
    if (o) {
        cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "time"), (double)now);
        cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "used"), (double)now);
    }
    /* What the run did not have is null. */
    gpo_json_add(&b, o, "best", best ? candidate_json(best_params, best) : cJSON_CreateNull());
    gpo_json_add(&b, o, "runner_up",
                 runner ? candidate_json(runner_params, runner) : cJSON_CreateNull());
    gpo_json_bool(&b, o, "complete", complete);
    gpo_json_num(&b, o, "evaluated", t->evaluated);
    gpo_json_num(&b, o, "wall_s", wall_s);
    gpo_json_add(&b, o, "payload", payload ? cJSON_Duplicate(payload, 1) : cJSON_CreateNull());
    if (b.failed) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache record");
        goto out;
    }
    if ((st = check_size(o, "cache record")) != GPUOPT_OK)
        goto out;
    f.cands = t->cands;
    t->cands = NULL;
    t->unsaved = 0; /* the record carries them */
    pthread_mutex_lock(&c->lock);
    st = update(c, put_record, &f);
    pthread_mutex_unlock(&c->lock);
out:
    cJSON_Delete(f.record);
    cJSON_Delete(f.cands);
    gpo_cache_abandon(t); /* a refused record still leaves its candidates to resume */
    return st;
}

typedef struct verified {
    uint64_t hash;
    const gpo_cache_soft *soft;
    int still_good;
    double best_ns, runner_ns;
} verified;

static gpuopt_status put_verify(gpo_cache *c, void *arg)
{
    const verified *v = arg;
    gpo_cache_item *it = gpo_cache_doc_find(&c->doc, v->hash);
    if (it && gpo_cache_doc_read(&c->doc, it))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory to read %s", c->path);
    if (!it || !it->record)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND, "no cached result to verify in %s", c->path);
    int64_t now = now_s(c);
    it->used = now > it->used ? now : it->used;
    gpo_cache_doc_changed(it);
    if (!v->still_good) {
        gpo_cache_doc_drop_record(it);
        return GPUOPT_OK;
    }
    cJSON *soft = gpo_cache_soft_to_json(v->soft), *o = cJSON_CreateObject();
    if (!soft || !o || !cJSON_AddNumberToObject(o, "time", (double)now) ||
        !cJSON_AddNumberToObject(o, "best_ns", v->best_ns < 0 ? -1 : v->best_ns) ||
        !cJSON_AddNumberToObject(o, "runner_up_ns", v->runner_ns < 0 ? -1 : v->runner_ns)) {
        cJSON_Delete(soft);
        cJSON_Delete(o);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a verification record");
    }
    /* Removed and added, not replaced: cJSON 1.7.15's replace leaves the
     * item unnamed when copying the name fails. A failure here drops the
     * change whole (update). */
    cJSON_DeleteItemFromObjectCaseSensitive(it->record, "soft");
    cJSON_DeleteItemFromObjectCaseSensitive(it->record, "verified");
    if (!cJSON_AddItemToObject(it->record, "soft", soft)) {
        cJSON_Delete(soft);
        cJSON_Delete(o);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a verification record");
    }
    if (!cJSON_AddItemToObject(it->record, "verified", o)) {
        cJSON_Delete(o);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a verification record");
    }
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_record_verify(gpo_cache *c, const gpo_cache_key *key,
                                      const gpo_cache_soft *soft, int still_good, double best_ns,
                                      double runner_ns)
{
    if (!isfinite(best_ns) || !isfinite(runner_ns))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "a re-timed value is not finite");
    char hex[17];
    gpo_cache_item *it;
    gpuopt_status st = locate(c, key, hex, &it);
    if (st)
        return st;
    if (!it || !it->record)
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no cached result for key %s to verify", hex);
    else
        st = update(c, put_verify, &(verified){it->hash, soft, still_good, best_ns, runner_ns});
    pthread_mutex_unlock(&c->lock);
    return st;
}

/* ---- merging records from elsewhere (an export) ------------------------------ */

typedef struct merging {
    gpo_cache_doc *src;
    size_t added, kept;
    int ran; /* the file was read under its lock */
} merging;

static int64_t record_time(const cJSON *record)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(record, "time");
    return cJSON_IsNumber(t) ? (int64_t)t->valuedouble : 0; /* checked when read: 0..2^53 */
}

static gpuopt_status put_merge(gpo_cache *c, void *arg)
{
    merging *m = arg;
    m->added = m->kept = 0;
    m->ran = 1;
    for (size_t i = 0; i < m->src->n; i++) {
        const gpo_cache_item *s = &m->src->items[i];
        if (!s->record)
            continue;
        gpo_cache_item *it = gpo_cache_doc_item(&c->doc, s->hash, s->canon);
        if (!it)
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for an imported record");
        if (it->record && record_time(it->record) >= record_time(s->record)) {
            m->kept++; /* never over a result measured here later (or the same) */
            continue;
        }
        cJSON *record = cJSON_Duplicate(s->record, 1);
        cJSON *cands = s->cands ? cJSON_Duplicate(s->cands, 1) : NULL;
        if (!record || (s->cands && !cands)) {
            cJSON_Delete(record);
            cJSON_Delete(cands);
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for an imported record");
        }
        gpo_cache_doc_drop_record(it);
        it->record = record;
        it->cands = cands;
        it->used = s->used > it->used ? s->used : it->used;
        gpo_cache_doc_changed(it);
        m->added++;
    }
    return m->added ? GPUOPT_OK : GPUOPT_ERR_NOT_FOUND; /* nothing to write */
}

gpuopt_status gpo_cache_merge(gpo_cache *c, gpo_cache_doc *src, size_t *added, size_t *kept)
{
    assert(c && src && added && kept);
    merging m = {src, 0, 0, 0};
    pthread_mutex_lock(&c->lock);
    c->wrote = 0;
    gpuopt_status st = update(c, put_merge, &m);
    int wrote = c->wrote;
    char why[sizeof c->reason];
    gpo_strlcpy(why, c->state == GPO_CACHE_READ_WRITE ? "the log says why" : c->reason, sizeof why);
    pthread_mutex_unlock(&c->lock);
    if (st == GPUOPT_ERR_NOT_FOUND)
        st = GPUOPT_OK;
    *added = wrote ? m.added : 0;
    *kept = m.kept;
    if (st == GPUOPT_OK && !wrote && (m.added || !m.ran))
        st = gpo_fail(GPUOPT_ERR_IO, "the records were not written to %s: %s", c->path, why);
    return st;
}
