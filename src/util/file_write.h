/* Writing a whole file so that a reader never sees half of it: the bytes
 * go to a temporary file beside the target, reach the disk (fsync), and
 * the temporary file is renamed over the target, which POSIX makes atomic
 * (rename(2): "If newpath already exists, it will be atomically
 * replaced"). A crash or a failure leaves the old file, or none. */
#ifndef GPO_FILE_WRITE_H
#define GPO_FILE_WRITE_H

#include <stddef.h>

#include "detail.h"

/* Writes `len` bytes of `data` to `path` as above, with the mode a new
 * file gets from the umask (0666 & ~umask). GPUOPT_ERR_IO, the detail
 * naming the path and the system's words, when it cannot; the temporary
 * file is removed then. */
gpuopt_status gpo_file_write_atomic(const char *path, const void *data, size_t len);

#endif
