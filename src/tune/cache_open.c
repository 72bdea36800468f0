/* Opening a cache: bounds and defaults, the journal's name (with the host
 * on network file systems), and the small shared helpers (clock, flock). */
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

void (*gpo_cache_fault_hook)(const char *point);

int64_t gpo_cache_now(const gpo_cache *c)
{
    return c->opt.clock ? c->opt.clock() : (int64_t)time(NULL);
}

int gpo_cache_lock_fd(int fd, int op)
{
    while (flock(fd, op) != 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

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
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!dir || !dev)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", dir ? "dev" : "dir");
    if (!*dir)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the cache directory is empty");
    if (strlen(dir) + 300 > GPO_PATH_MAX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "the cache directory path is %zu bytes long",
                        strlen(dir));
    if (opts && (opts->per_host < -1 || opts->per_host > 1))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "per_host %d: accepted -1, 0, 1",
                        (int)opts->per_host);
    gpo_cache *c = calloc(1, sizeof *c);
    if (!c)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache");
    if (opts)
        c->opt = *opts;
    if (!c->opt.max_entries)
        c->opt.max_entries = GPO_CACHE_DEFAULT_ENTRIES;
    if (!c->opt.max_bytes)
        c->opt.max_bytes = GPO_CACHE_DEFAULT_BYTES;
    if (!c->opt.touch_interval_s)
        c->opt.touch_interval_s = GPO_CACHE_DEFAULT_TOUCH_S;
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
