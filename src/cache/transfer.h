/* Finished tuning records carried between machines (transfer.c): an export
 * of a cache directory's device files, and its import into another, so
 * identical nodes answer from one measurement (docs/tuning.md, "Sharing
 * results").
 *
 * An export is JSON Lines: per device file, its header line (with the
 * device's fingerprint) and its finished records, exactly as the file holds
 * them (unfinished tunes and per-candidate lists stay home), then one end
 * line {"t":"end","format":"gpuopt-tuning-cache-export","files":F,
 * "records":R} whose counts tell a whole export from a cut one. */
#ifndef GPO_CACHE_TRANSFER_H
#define GPO_CACHE_TRANSFER_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cache/key.h"
#include "util/log.h"

#define GPO_CACHE_EXPORT_FORMAT "gpuopt-tuning-cache-export"

/* The export of every device file in `dir`, or only `dev`'s (every host's
 * file of it) when not NULL; malloc'd text. A missing directory exports
 * no file. Files that fail their checks are left out (gpuopt cache verify
 * names them); so are records that do. */
gpuopt_status gpo_cache_export(const char *dir, const gpo_cache_device *dev, char **text);

/* Imports an export into `dir`. Every section is read and checked first:
 * a cut export, a section of another schema, a line that fails its checks
 * refuse the whole import (GPUOPT_ERR_INVALID_ARGUMENT naming the line)
 * and nothing is written. Then each section's records go to the file of
 * the first device of `here` with the same backend, architecture and
 * compute units (the device part of every record's hard key), or, with
 * `all`, to the file of the exported device itself when none matches
 * (a shared directory); otherwise the section is skipped. Each file is
 * merged in one locked, atomic write (gpo_cache_merge: a newer local
 * record is never replaced). *report: {"files": [{"device", "file",
 * "records", "imported", "kept_newer", "skipped"}], "imported",
 * "kept_newer"}. */
gpuopt_status gpo_cache_import(const char *dir, const char *text, size_t len,
                               const gpo_cache_device *here, size_t n_here, int all,
                               const gpo_logger *log, cJSON **report);

#endif
