/* Regular files only, never blocking, size-capped (file.h). */
#include "file.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void say(char *why, size_t cap, const char *fmt, const char *arg)
{
    if (why && cap)
        snprintf(why, cap, fmt, arg);
}

static const char *type_word(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a plain file";
}

int gpo_file_open(const char *path, int flags, struct stat *st, char *why, size_t cap)
{
    struct stat sb;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
    if (fd < 0) {
        int e = errno;
        say(why, cap, "%s", strerror(e));
        errno = e;
        return -1;
    }
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        say(why, cap, "%s", strerror(e));
        errno = e;
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        say(why, cap, "not a regular file (%s)", type_word(sb.st_mode));
        errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
        return -1;
    }
    /* Reads of a regular file never return EAGAIN, but a file system may
     * honour the flag (FUSE, network file systems): clear it. */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        say(why, cap, "%s", strerror(e));
        errno = e;
        return -1;
    }
    if (st)
        *st = sb;
    return fd;
}

/* "1 MiB", "64 KiB", "100 bytes": a limit as the messages above name it. */
static void size_text(size_t bytes, char *out, size_t cap)
{
    if (bytes >= (1u << 30) && bytes % (1u << 30) == 0)
        snprintf(out, cap, "%zu GiB", bytes >> 30);
    else if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        snprintf(out, cap, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(out, cap, "%zu KiB", bytes >> 10);
    else
        snprintf(out, cap, "%zu bytes", bytes);
}

int gpo_file_read(const char *path, size_t max_bytes, char **out, size_t *len, char *why,
                  size_t cap)
{
    struct stat st;
    assert(out && max_bytes < SIZE_MAX / 4);
    *out = NULL;
    if (len)
        *len = 0;
    int fd = gpo_file_open(path, 0, &st, why, cap);
    if (fd < 0)
        return -1;
    /* The size is a hint (procfs and sysfs files say 0 or 4096): reading
     * grows the buffer as it finds more, up to one byte past the cap. */
    size_t hint = (unsigned long long)st.st_size < max_bytes ? (size_t)st.st_size + 1 : 0;
    char *buf = NULL;
    size_t n = 0, bcap = 0;
    int e = (unsigned long long)st.st_size > max_bytes ? EFBIG : 0;
    while (!e) {
        if (n == bcap) {
            if (bcap > max_bytes) {
                e = EFBIG;
                break;
            }
            size_t grown = bcap ? bcap * 2 : hint > 4096 ? hint : 4096;
            if (grown > max_bytes + 1)
                grown = max_bytes + 1;
            char *bigger = realloc(buf, grown + 1);
            if (!bigger) {
                e = ENOMEM;
                break;
            }
            buf = bigger;
            bcap = grown;
        }
        ssize_t r = read(fd, buf + n, bcap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            e = errno ? errno : EIO;
        else if (r == 0)
            break;
        else
            n += (size_t)r;
    }
    close(fd);
    if (e) {
        free(buf);
        if (e == EFBIG) {
            char lim[32];
            size_text(max_bytes, lim, sizeof lim);
            say(why, cap, "larger than the limit of %s", lim);
        } else {
            say(why, cap, "%s", strerror(e));
        }
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
}
