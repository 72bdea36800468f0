/* Opening and reading files whose path someone else chose (a config file,
 * a tune spec and the files it names, a recorded sysfs tree, the cache's
 * files): regular files only, never blocking on open, with a size cap.
 *
 * A FIFO with no writer blocks open(2) forever and a device such as
 * /dev/zero never ends: both hung or exhausted the library before (issue
 * 12). Plain C and POSIX, no other file of the library: the CLI's spec
 * loader compiles this file too. Failures come back as errno and a clause
 * in `why` ("not a regular file (a FIFO)", "larger than the limit of 1 MiB")
 * that the caller puts after the path and what the file is for. */
#ifndef GPO_FILE_H
#define GPO_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/* Opens `path` read-only (O_RDONLY | O_CLOEXEC, plus `flags`, such as
 * O_NOFOLLOW) if it is a regular file. The open itself uses O_NONBLOCK, so
 * it returns at once whatever the file is; fstat then refuses anything but
 * a regular file, and O_NONBLOCK is cleared for the reads. Returns the
 * descriptor (with its stat in *st when st is not NULL), or -1 with errno
 * set: open's errno, EISDIR for a directory, EINVAL for any other type. */
int gpo_file_open(const char *path, int flags, struct stat *st, char *why, size_t cap);

/* Reads the whole regular file `path` into *out (malloc'd, NUL-terminated;
 * *len bytes without the NUL when len is not NULL). A file longer than
 * `max_bytes` (by its size, or by what reading finds: a file can grow) is
 * EFBIG. Returns 0, or -1 with errno (those of gpo_file_open, EFBIG, EIO
 * for a read error, ENOMEM) and `why`; *out is then NULL. */
int gpo_file_read(const char *path, size_t max_bytes, char **out, size_t *len, char *why,
                  size_t cap);

#endif
