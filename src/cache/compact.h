/* Compaction: a journal rewritten as its latest state (compact.c). Per key,
 * the newest finished record (uses and verifications folded in) with the
 * candidates of its tune, and the newest unfinished tune with its
 * candidates; everything else is history and goes. Over a bound (keys or
 * bytes per file), the least recently used keys are evicted down to 3/4 of
 * it, so the next compaction is not one append away; candidates go before
 * records do. Output is ordered by key, so compacting twice gives the same
 * bytes. Written to a temp file in the same directory, fsync'd, renamed over
 * the journal, and the directory fsync'd: a crash leaves the old file or the
 * new one, never a mix. */
#ifndef GPO_CACHE_COMPACT_H
#define GPO_CACHE_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "util/log.h"

/* The journal to rewrite, held exclusively by the caller. */
typedef struct gpo_compact_target {
    const char *dir, *name, *path; /* path = dir "/" name */
    uint32_t max_entries;
    uint64_t max_bytes;
    const gpo_logger *log;
    uint64_t *serial; /* bumped for a unique temp-file name */
} gpo_compact_target;

/* Rewrites the journal whose whole content is buf[0, len). `salvage`: the
 * file is corrupt after a valid header; keep every record that still reads.
 * Returns 0 when the file at the path was replaced. */
int gpo_journal_compact(const gpo_compact_target *t, const char *buf, size_t len, int salvage);

/* Called at named points of appends and compactions ("append:written",
 * "compact:temp-written", "compact:before-rename", "compact:renamed") when
 * not NULL, so tests can kill a process exactly there. */
extern void (*gpo_cache_fault_hook)(const char *point);

#endif
