/* The cache directory as a whole (dir.c): listing, checking and clearing
 * device files, for gpuopt_cache_list/verify/clear. Only files whose names
 * the cache itself makes are read or removed (device files, their lock
 * files, set-aside copies, temp files): the directory
 * may be shared with anything else, even be $HOME by mistake. A directory
 * that fails the checks of file.h is not read or changed at all:
 * GPUOPT_ERR_IO saying why. A missing directory is an empty cache. */
#ifndef GPO_CACHE_DIR_H
#define GPO_CACHE_DIR_H

#include <cjson/cJSON.h>

#include "cache/key.h"
#include "util/log.h"

/* A JSON listing of every device file under `dir`: {"dir", "files":
 * [{"file", "status", "schema", "bytes", "device", "entries": [record, ...],
 * "unfinished": [tune, ...]}]}. Writes nothing. */
gpuopt_status gpo_cache_dir_list(const char *dir, cJSON **out);

/* Checks every device file, rewriting nothing: {"dir", "ok", "files":
 * [{"file", "status", "schema", "bytes", "detail", "entries",
 * "unfinished", "candidates" (of records and unfinished tunes), "invalid"}],
 * "set_aside": [...],
 * "stale_temp": [...]}. "ok" is false when a file is
 * corrupt, of an older schema, unreadable, or holds entries that fail
 * their checks ("invalid" counts them, "detail" names the first). */
gpuopt_status gpo_cache_dir_verify(const char *dir, cJSON **out);

/* Removes every file the cache made, or only the device's (every host's
 * file of it) when `dev` is not NULL; touches nothing else in the
 * directory; says what it removed at info level. *removed (may be NULL)
 * counts the files removed, lock files aside. */
gpuopt_status gpo_cache_dir_clear(const char *dir, const gpo_cache_device *dev,
                                  const gpo_logger *log, int *removed);

#endif
