/* Fuzz target helpers (fuzz_util.h). */
#define _XOPEN_SOURCE 700
#include "fuzz_util.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch[256];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    if (ftw->level > 0)
        remove(path);
    return 0;
}

void fz_empty_dir(const char *dir)
{
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_scratch(void)
{
    fz_empty_dir(scratch);
    rmdir(scratch);
}

const char *fz_scratch(void)
{
    if (!scratch[0]) {
        /* tmpfs: each input rewrites files, and a disk file system with
         * discard on takes milliseconds per unlink. */
        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp)
            tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(scratch, sizeof scratch, "%s/gpuopt-fuzz.XXXXXX", tmp);
        if (!mkdtemp(scratch)) {
            perror("mkdtemp");
            abort();
        }
        atexit(remove_scratch);
    }
    return scratch;
}

const char *fz_write(int slot, const char *name, const void *data, size_t len)
{
    static char paths[4][512];
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", fz_scratch(), name);
    int fd = open(paths[slot], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w <= 0)
            break;
        p += w;
        len -= (size_t)w;
    }
    close(fd);
    return paths[slot];
}

char *fz_text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t)
        abort();
    memcpy(t, data, size);
    t[size] = '\0';
    return t;
}

void fz_log_sink(int32_t level, const char *message, void *user)
{
    (void)level;
    (void)user;
    /* Touch every byte, so a message built from freed or unterminated
     * memory is caught here. */
    volatile size_t n = strlen(message);
    (void)n;
}

void fz_check(int ok, const char *fmt, ...)
{
    if (ok)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("FINDING: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}
