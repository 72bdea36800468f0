/* A whole file or none (file_write.h). */
#include "file_write.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "strutil.h"

/* Distinguishes the temporary files of two threads of one process. */
static atomic_uint serial;

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len > (size_t)SSIZE_MAX ? (size_t)SSIZE_MAX : len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The directory part of `path` ("." for a bare name), for its fsync. */
static void dir_of(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        gpo_strlcpy(out, ".", cap);
    else if (slash == path)
        gpo_strlcpy(out, "/", cap);
    else
        gpo_snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

gpuopt_status gpo_file_write_atomic(const char *path, const void *data, size_t len)
{
    assert(path && (data || len == 0));
    char tmp[GPO_PATH_MAX + 64];
    unsigned n = atomic_fetch_add(&serial, 1u);
    if (!*path || strlen(path) >= GPO_PATH_MAX)
        return gpo_fail(GPUOPT_ERR_IO, "cannot write \"%s\": the path is empty or too long", path);
    gpo_snprintf(tmp, sizeof tmp, "%s.tmp-%ld-%u", path, (long)getpid(), n);
    /* O_EXCL and O_NOFOLLOW: never write through a file or link someone
     * else put at the temporary name. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0)
        return gpo_fail(GPUOPT_ERR_IO, "cannot write \"%s\": creating %s: %s", path, tmp,
                        strerror(errno));
    const char *step = "writing";
    int rc = write_all(fd, data, len);
    if (!rc && (rc = fsync(fd)) != 0)
        step = "syncing";
    int err = errno;
    if (close(fd) != 0 && !rc) {
        rc = -1;
        err = errno;
        step = "closing";
    }
    if (!rc && rename(tmp, path) != 0) {
        rc = -1;
        err = errno;
        step = "renaming the temporary file over it";
    }
    if (rc) {
        unlink(tmp);
        return gpo_fail(GPUOPT_ERR_IO, "cannot write \"%s\": %s: %s", path, step, strerror(err));
    }
    /* The rename reaches the disk with its directory. */
    char dir[GPO_PATH_MAX];
    dir_of(path, dir, sizeof dir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return GPUOPT_OK;
}
