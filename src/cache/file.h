/* The tuning cache's files in a directory it trusts (file.c): opening the
 * directory with its checks, a writer's lock, reading a cache file safely
 * and replacing it atomically. After the directory is opened, every
 * operation is relative to its descriptor (openat, renameat, unlinkat), so a
 * path swapped after the checks is never followed. Used by the open cache
 * (cache.c) and the directory tools (dir.c).
 *
 * Why a directory is trusted (docs/security.md, "Cache directory"): what a
 * cache file holds is fed into plans and tuning results, so only this user
 * may be able to change it. The cache directory itself must be owned by the
 * effective user and writable by nobody else; every directory above it must
 * belong to that user or to root and be writable by nobody else unless it
 * has the sticky bit (as /tmp has, where others cannot rename what is
 * ours); the last component is never a symbolic link, and one above it is
 * followed only when it belongs to this user or to root. */
#ifndef GPO_CACHE_FILE_H
#define GPO_CACHE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of a cache file that are read at most: eight times what a file is
 * written to by default (gpo_cache_options.max_bytes). */
#define GPO_CACHE_READ_MAX (64u << 20)

/* How long a writer waits for its turn by default. One turn is one
 * read-modify-write of one file (milliseconds); a writer waits this long
 * only behind a process stopped while it held the lock, or a hung file
 * server. */
#define GPO_CACHE_LOCK_WAIT_MS 30000

/* Results besides a descriptor. */
enum {
    GPO_FILE_MISSING = -1, /* no such file or directory */
    GPO_FILE_REFUSED = -2, /* not used, `why` says why */
    GPO_FILE_BUSY = -3,    /* the lock was held past the wait */
    GPO_FILE_NO_MEMORY = -4
};

/* Opens `path` as the cache directory, creating the missing directories
 * (mode 0700) with GPO_DIR_CREATE, and checks it and each directory on the way
 * (above). Returns its descriptor, GPO_FILE_MISSING when it does not exist
 * without GPO_DIR_CREATE, or GPO_FILE_REFUSED with `why`. */
int gpo_cache_dir_open(const char *path, int flags, char *why, size_t cap);
/* gpo_cache_dir_open's flags: create what is missing; a shared layer, read
 * only, whose directory root may own as well (a ConfigMap, an NFS export). */
enum { GPO_DIR_CREATE = 1, GPO_DIR_SHARED = 2 };

/* Reads `name` in `dirfd`: a regular file (a FIFO, device or link is
 * refused before anything blocks on it: opened with O_NOFOLLOW and
 * O_NONBLOCK, then fstat) of at most GPO_CACHE_READ_MAX bytes. Returns the
 * open descriptor, which the caller keeps: while it is open the file's
 * inode cannot be reused, so gpo_cache_file_is tells for sure whether the
 * path still names these bytes. Or GPO_FILE_MISSING, GPO_FILE_REFUSED with
 * `why`, GPO_FILE_NO_MEMORY. *buf is NUL-terminated; the caller frees it. */
int gpo_cache_file_read(int dirfd, const char *name, char **buf, size_t *len, char *why,
                        size_t cap);

/* 1 when `name` in `dirfd` is the file open as `fd`. */
int gpo_cache_file_is(int dirfd, const char *name, int fd);

/* Takes the exclusive lock that writers of `name` share: flock(2) on
 * "<name>.lock", polled until `wait_ms` pass. Returns the lock's
 * descriptor (gpo_cache_file_unlock releases it), GPO_FILE_BUSY when the
 * wait ran out, or GPO_FILE_REFUSED (no flock on this file system, a lock
 * file that is not a regular file) with `why`. */
int gpo_cache_file_lock(int dirfd, const char *name, int32_t wait_ms, char *why, size_t cap);
void gpo_cache_file_unlock(int fd);

/* Replaces `name` by len bytes of buf, holding the lock: a temp file
 * ".<name>.tmp-<pid>-<serial>" written, fsync'd and renamed over the name,
 * so a crash or power loss at any point leaves the old file or the new one,
 * whole (the temp files of writers that died are removed first). Returns
 * the new file's descriptor (see gpo_cache_file_read), or -1 with errno. */
int gpo_cache_file_replace(int dirfd, const char *name, const char *buf, size_t len,
                           uint64_t serial);

/* Renames `name` to "<name>.<word>-<now>" (with "-<i>" when that exists),
 * holding the lock; the new name goes to out. 0, or -1 with errno. */
int gpo_cache_file_set_aside(int dirfd, const char *name, const char *word, int64_t now, char *out,
                             size_t cap);

/* Called at named points of a replacement ("write:temp-written",
 * "write:before-rename", "write:renamed") when not NULL, so tests can kill
 * a process exactly there. */
extern void (*gpo_cache_fault_hook)(const char *point);

#endif
