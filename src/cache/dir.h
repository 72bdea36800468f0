/* The cache directory as a whole (dir.c): listing, checking and clearing
 * journals, for gpuopt_cache_list/verify/clear. Only files whose names the
 * cache itself makes are read or removed (journals, their set-aside copies,
 * compaction temp files): the directory may be shared with anything else,
 * even be $HOME by mistake. */
#ifndef GPO_CACHE_DIR_H
#define GPO_CACHE_DIR_H

#include <cjson/cJSON.h>

#include "cache/key.h"
#include "util/log.h"

/* A JSON listing of every journal under `dir`: {"dir", "files": [{"file",
 * "status", "schema", "bytes", "device", "entries": [record, ...]}]}. A
 * missing directory is an empty list. Reads under shared locks, writes
 * nothing. */
gpuopt_status gpo_cache_dir_list(const char *dir, cJSON **out);

/* Checks every journal line by line, rewriting nothing: {"dir", "ok",
 * "files": [{"file", "status", "detail", "lines", "entries", "unfinished",
 * "bytes"}], "set_aside": [...], "stale_temp": [...]}. "ok" is false when
 * a file is corrupt or unreadable. */
gpuopt_status gpo_cache_dir_verify(const char *dir, cJSON **out);

/* Removes every journal (with its set-aside copies and stale temp files),
 * or only the device's when `dev` is not NULL. Touches nothing else in the
 * directory; says what it removed at info level. *removed (may be NULL)
 * counts the files removed. */
gpuopt_status gpo_cache_dir_clear(const char *dir, const gpo_cache_device *dev,
                                  const gpo_logger *log, int *removed);

#endif
