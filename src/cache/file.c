/* The tuning cache's files in a directory it trusts (file.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/file.h"
#include "util/fs.h"
#include "util/strutil.h"

void (*gpo_cache_fault_hook)(const char *point);

static void hook(const char *point)
{
    if (gpo_cache_fault_hook)
        gpo_cache_fault_hook(point);
}

/* The directory at `shown` may be trusted: the last one only when this
 * user (or, for a shared layer, root) owns it and nobody else may write it;
 * one above when this user or root owns it and nobody else may rename what
 * is in it. */
static int trusted(const struct stat *st, int last, int flags, const char *shown, char *why,
                   size_t cap)
{
    uid_t me = geteuid();
    mode_t others = st->st_mode & (S_IWGRP | S_IWOTH);
    if (last && st->st_uid != me && !((flags & GPO_DIR_SHARED) && st->st_uid == 0))
        gpo_snprintf(why, cap,
                     "the cache directory %s is owned by uid %u, not by this user (uid %u)", shown,
                     (unsigned)st->st_uid, (unsigned)me);
    else if (last && others)
        gpo_snprintf(why, cap,
                     "the cache directory %s may be written by its group or others (mode %04o)",
                     shown, (unsigned)(st->st_mode & 07777));
    else if (!last && st->st_uid != me && st->st_uid != 0)
        gpo_snprintf(why, cap,
                     "%s, above the cache directory, is owned by uid %u (not this user "
                     "or root)",
                     shown, (unsigned)st->st_uid);
    else if (!last && others && !(st->st_mode & S_ISVTX))
        gpo_snprintf(why, cap,
                     "%s, above the cache directory, may be written by its group or others "
                     "(mode %04o) and has no sticky bit",
                     shown, (unsigned)(st->st_mode & 07777));
    else
        return 0;
    return -1;
}

/* Opens component `comp` of `parent` as a directory: never through a
 * symbolic link when it is the last component, else only through one this
 * user or root owns. */
static int open_component(int parent, const char *comp, int last, int create)
{
    int fd = openat(parent, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
        if (mkdirat(parent, comp, 0700) != 0 && errno != EEXIST)
            return -1;
        fd = openat(parent, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    struct stat ls;
    if (fd < 0 && !last && (errno == ELOOP || errno == ENOTDIR) &&
        fstatat(parent, comp, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode)) {
        if (ls.st_uid != geteuid() && ls.st_uid != 0) {
            errno = EPERM;
            return -1;
        }
        fd = openat(parent, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    if (fd < 0 && errno == ENOTDIR && fstatat(parent, comp, &ls, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(ls.st_mode))
        errno = ELOOP;
    return fd;
}

int gpo_cache_dir_open(const char *path, int flags, char *why, size_t cap)
{
    int create = flags & GPO_DIR_CREATE;
    char buf[GPO_PATH_MAX], shown[GPO_PATH_MAX];
    gpo_strlcpy(buf, path, sizeof buf);
    gpo_strlcpy(shown, path[0] == '/' ? "" : ".", sizeof shown);
    int fd = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        gpo_snprintf(why, cap, "cannot open %s: %s", path[0] == '/' ? "/" : ".", strerror(errno));
        if (fd >= 0)
            close(fd);
        return GPO_FILE_REFUSED;
    }
    char *save = NULL, *comp = strtok_r(buf, "/", &save);
    if (trusted(&st, comp == NULL, flags, path[0] == '/' ? "/" : ".", why, cap)) {
        close(fd);
        return GPO_FILE_REFUSED;
    }
    while (comp) {
        char *next = strtok_r(NULL, "/", &save);
        size_t n = strlen(shown);
        gpo_snprintf(shown + n, sizeof shown - n, "/%s", comp);
        int sub = open_component(fd, comp, next == NULL, create);
        int err = errno;
        close(fd);
        if (sub < 0) {
            if (err == ENOENT && !create)
                return gpo_say(GPO_FILE_MISSING, why, cap, "%s does not exist", shown);
            if (err == ELOOP && !next)
                gpo_snprintf(why, cap, "the cache directory %s is a symbolic link", shown);
            else if (err == EPERM)
                gpo_snprintf(why, cap, "%s is a symbolic link owned by another user", shown);
            else
                gpo_snprintf(why, cap, "cannot %s %s: %s",
                             create && err != ENOTDIR ? "create or open" : "open", shown,
                             strerror(err));
            return GPO_FILE_REFUSED;
        }
        fd = sub;
        if (fstat(fd, &st) != 0 || trusted(&st, next == NULL, flags, shown, why, cap)) {
            close(fd);
            return GPO_FILE_REFUSED;
        }
        comp = next;
    }
    return fd;
}

static const char *kind_of(mode_t m)
{
    return S_ISFIFO(m)                ? "a FIFO"
           : S_ISDIR(m)               ? "a directory"
           : S_ISSOCK(m)              ? "a socket"
           : S_ISCHR(m) || S_ISBLK(m) ? "a device"
                                      : "not a regular file";
}

int gpo_cache_file_read(int dirfd, const char *name, char **buf, size_t *len, char *why, size_t cap)
{
    *buf = NULL;
    *len = 0;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return GPO_FILE_MISSING;
        return gpo_say(GPO_FILE_REFUSED, why, cap, "%s",
                       errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    }
    struct stat st;
    int rc = GPO_FILE_REFUSED;
    if (fstat(fd, &st) != 0) {
        gpo_snprintf(why, cap, "%s", strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        gpo_snprintf(why, cap, "it is %s, not a regular file", kind_of(st.st_mode));
    } else if ((uint64_t)st.st_size > GPO_CACHE_READ_MAX) {
        gpo_snprintf(why, cap, "it is %lld bytes, over the read limit of %u MiB",
                     (long long)st.st_size, GPO_CACHE_READ_MAX >> 20);
    } else if (!(*buf = malloc((size_t)st.st_size + 1))) {
        rc = GPO_FILE_NO_MEMORY;
    } else {
        size_t want = (size_t)st.st_size, got = 0;
        while (got < want) {
            ssize_t r = pread(fd, *buf + got, want - got, (off_t)got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        (*buf)[got] = '\0';
        *len = got;
        return fd;
    }
    close(fd);
    return rc;
}

int gpo_cache_file_is(int dirfd, const char *name, int fd)
{
    struct stat a, b;
    return fd >= 0 && fstat(fd, &a) == 0 && fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int gpo_cache_file_lock(int dirfd, const char *name, int32_t wait_ms, char *why, size_t cap)
{
    char lock[300];
    gpo_snprintf(lock, sizeof lock, "%s.lock", name);
    uint64_t start = gpo_now_ns(), limit = (uint64_t)(wait_ms > 0 ? wait_ms : 0) * 1000000u;
    long pause_ns = 1000000;
    for (;;) {
        int fd = openat(dirfd, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            gpo_snprintf(why, cap, "cannot use the lock file %s: %s", lock,
                         fd < 0 ? strerror(errno) : "it is not a regular file");
            if (fd >= 0)
                close(fd);
            return GPO_FILE_REFUSED;
        }
        for (;;) {
            if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                break;
            if (errno == EINTR)
                continue;
            if (errno != EWOULDBLOCK) {
                gpo_snprintf(why, cap, "flock on %s failed: %s", lock, strerror(errno));
                close(fd);
                return GPO_FILE_REFUSED;
            }
            if (gpo_now_ns() - start >= limit) {
                gpo_snprintf(why, cap,
                             "another process held %s for %.1f s, the longest a writer "
                             "waits",
                             lock, (double)limit / 1e9);
                close(fd);
                return GPO_FILE_BUSY;
            }
            /* Polled, since flock cannot time out; the pause grows to
             * 16 ms, a fraction of one turn under a loaded disk. */
            struct timespec ts = {0, pause_ns};
            nanosleep(&ts, NULL);
            if (pause_ns < 16000000)
                pause_ns *= 2;
        }
        /* A lock file removed while we waited (gpuopt cache clear) guards
         * nothing: take the one at the path now. */
        if (gpo_cache_file_is(dirfd, lock, fd))
            return fd;
        close(fd);
    }
}

void gpo_cache_file_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* releases the flock */
}

/* Temp files of `name` left by writers that died: the caller holds the
 * lock that every writer holds while its temp file exists. */
static void remove_stale_temps(int dirfd, const char *name)
{
    int dup_fd = dup(dirfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return;
    }
    rewinddir(d);
    char prefix[300];
    gpo_snprintf(prefix, sizeof prefix, ".%s.tmp-", name);
    size_t pl = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, pl) == 0)
            unlinkat(dirfd, e->d_name, 0);
    closedir(d);
}

int gpo_cache_file_replace(int dirfd, const char *name, const char *buf, size_t len,
                           uint64_t serial)
{
    char tmp[320];
    gpo_snprintf(tmp, sizeof tmp, ".%s.tmp-%ld-%llu", name, (long)getpid(),
                 (unsigned long long)serial);
    remove_stale_temps(dirfd, name);
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = 0;
    for (size_t off = 0; !rc && off < len;) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = -1;
        else
            off += (size_t)w;
    }
    if (!rc)
        hook("write:temp-written");
    /* The data must reach the disk before the rename does, or a power loss
     * can leave an empty file under the name. */
    if (!rc && fsync(fd) != 0)
        rc = -1;
    if (!rc)
        hook("write:before-rename");
    if (!rc && renameat(dirfd, tmp, dirfd, name) != 0)
        rc = -1;
    if (rc) {
        int err = errno;
        unlinkat(dirfd, tmp, 0);
        close(fd);
        errno = err;
        return -1;
    }
    /* The directory is not fsync'd: a power loss may undo the last renames
     * (the old file is back, whole), which costs re-measuring; forcing each
     * one to disk would double the cost of every write. */
    hook("write:renamed");
    return fd;
}

int gpo_cache_file_set_aside(int dirfd, const char *name, const char *word, int64_t now, char *out,
                             size_t cap)
{
    struct stat st;
    gpo_snprintf(out, cap, "%s.%s-%lld", name, word, (long long)now);
    for (int i = 1; i < 1000 && fstatat(dirfd, out, &st, AT_SYMLINK_NOFOLLOW) == 0; i++)
        gpo_snprintf(out, cap, "%s.%s-%lld-%d", name, word, (long long)now, i);
    return renameat(dirfd, name, dirfd, out);
}
