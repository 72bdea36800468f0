/* The tuning cache (cache.c): one JSON file per device under the cache
 * directory, replaced atomically on every write, written by tuning runs
 * (src/tune/run.c): the tuner's and tier 2's built-in benchmarks alike. A
 * record maps a HARD KEY (any difference is a miss) to what was measured: a
 * tuning result (best, runner-up, search settings, every candidate) and any
 * JSON payload the run's owner keeps with it (tier 2: the knobs and their
 * reasons). SOFT FIELDS (driver, compiler and library versions, device
 * name) never cause a miss: a hit says which of them changed, so the caller
 * re-times the stored winner and runner-up once and keeps the winner when
 * it still holds (MIOpen's trust-but-verify), recording the outcome with
 * gpo_cache_record_verify. docs/tuning.md ("The tuning cache") describes the
 * file with an example and why it is not a journal.
 *
 * Failure policy: the cache never fails its host program. A missing or
 * unwritable directory, one it does not trust (file.h), a corrupt file (set
 * aside by the next write, which starts a new one with the records that
 * still read), a file of a newer schema (left alone): a warning through the
 * logger, once, and a miss; writes that cannot happen are skipped and still
 * return GPUOPT_OK. Only malformed records (GPUOPT_ERR_INVALID_ARGUMENT,
 * GPUOPT_ERR_OUT_OF_RANGE) and allocation failures (GPUOPT_ERR_NO_MEMORY)
 * are errors, and then nothing is written; a miss is GPUOPT_ERR_NOT_FOUND.
 * Pointers the functions need are contracts (asserted), not inputs.
 *
 * Threads and processes: a gpo_cache serialises its calls with a mutex.
 * Readers take no lock (a file is only ever replaced whole, by rename);
 * writers take turns on a lock file and re-read the file under it, so no
 * writer's record is lost. A tune handle is used by one thread at a time and
 * is finished or abandoned before its cache is closed. */
#ifndef GPO_CACHE_CACHE_H
#define GPO_CACHE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cache/key.h"
#include "util/log.h"

/* How a tune searched. */
typedef struct gpo_cache_search {
    const char *strategy; /* "exhaustive", "random", ... */
    uint64_t seed;
    int32_t max_evaluations; /* 0: no limit */
    double max_seconds;
    int32_t max_failures;
} gpo_cache_search;

/* ---- Opening ----------------------------------------------------------------- */

typedef struct gpo_cache_options {
    uint32_t max_entries; /* keys per file; 0: 2000 */
    uint64_t max_bytes;   /* bytes per file; 0: 8 MiB */
    /* A tune's candidates are saved (a checkpoint: the file rewritten) when
     * this long has passed since its last save, so a killed run loses at
     * most this much measuring; 0: 1000 ms, < 0: after every candidate. */
    int32_t checkpoint_ms;
    /* How long a writer waits for its turn; 0: GPO_CACHE_LOCK_WAIT_MS. */
    int32_t lock_wait_ms;
    int64_t touch_interval_s; /* a hit records its use when the last one is older; 0: 3600, <0:
                                 always */
    int64_t (*clock)(void);   /* seconds since the epoch; NULL: time(NULL) (tests move time) */
    int32_t
        per_host; /* "@<host>" in the file name: 0 on network file systems, 1 always, -1 never */
    /* A clean hit (complete, no soft field changed) hands the index's
     * record over instead of copying it, so a second lookup of that key in
     * this open cache misses: for a cache opened for one pass that looks
     * each key up once (tier 2 opens one per plan). */
    int hand_over;
    /* A shared, read-only directory asked on a local miss (shared.h); NULL
     * or "": none. Copied by gpo_cache_open. */
    const char *shared_dir;
} gpo_cache_options;

/* What checkpoint_ms 0 means (1000 ms). Tests of killed runs set it to -1
 * (every candidate) before the cache is opened, to know what was saved. */
extern int32_t gpo_cache_checkpoint_default_ms;

typedef enum gpo_cache_state {
    GPO_CACHE_READ_WRITE = 0,
    GPO_CACHE_READ_ONLY = 1, /* lookups work, writes are skipped (why: gpo_cache_state) */
    GPO_CACHE_OFF = 2        /* every lookup misses */
} gpo_cache_state;

typedef struct gpo_cache gpo_cache;

/* Opens the cache file of `dev` under `dir`; nothing is read or created
 * until first use. `opts` may be NULL (defaults); `log` is copied and may be
 * NULL (silent). On a network file system (NFS, SMB/CIFS, AFS, Lustre, Ceph,
 * GlusterFS/FUSE) where flock may lock only within one host, the file name
 * gets "@<hostname>" so that one file is only ever written from one host.
 * Fails only on bad arguments or memory. */
gpuopt_status gpo_cache_open(const char *dir, const gpo_cache_device *dev,
                             const gpo_cache_options *opts, const gpo_logger *log, gpo_cache **out);

/* Writes the uses hits recorded (below) when any are pending, and closes;
 * NULL does nothing. */
void gpo_cache_close(gpo_cache *cache);

/* The cache file's full path. */
const char *gpo_cache_file(const gpo_cache *cache);

/* The current state and, when not READ_WRITE, why ("" otherwise). */
gpo_cache_state gpo_cache_get_state(gpo_cache *cache, const char **reason);

/* ---- Lookup ------------------------------------------------------------------- */

/* A hit: the stored record, owned by the hit. */
typedef struct gpo_cache_hit {
    cJSON *record;     /* the whole record (folded soft fields and last use) */
    const cJSON *best; /* {"params": {NAME: value}, "status", "runs", "median_ns", ...} or NULL */
    const cJSON *runner_up; /* the same, or NULL */
    const cJSON *payload;   /* what gpo_cache_finish stored, or NULL */
    const cJSON *soft;      /* the stored soft fields */
    int complete;           /* 1: the search ran to its end */
    int64_t time;           /* when measured, seconds since the epoch */
    uint32_t changed;       /* GPO_SOFT_* bits whose stored value differs from `soft` */
} gpo_cache_hit;

/* The record of `key`, without building or running anything. A record whose
 * verification failed is a miss. Notes the use (for LRU eviction) at most
 * once per touch interval; notes are written with the next write or when
 * the cache closes. GPUOPT_ERR_NOT_FOUND on a miss (*out NULL). */
gpuopt_status gpo_cache_lookup(gpo_cache *cache, const gpo_cache_key *key,
                               const gpo_cache_soft *soft, gpo_cache_hit **out);
void gpo_cache_hit_free(gpo_cache_hit *hit);

/* The candidates stored for `key` (a JSON array of {"params", "status",
 * stats...} in evaluation order): those of the finished record, or when
 * there is none, those of the newest unfinished tune (a run that crashed or
 * is in progress), so a new run can skip them. *finished says which.
 * GPUOPT_ERR_NOT_FOUND when neither exists. */
gpuopt_status gpo_cache_candidates(gpo_cache *cache, const gpo_cache_key *key, cJSON **out,
                                   int *finished);

/* ---- Writing ------------------------------------------------------------------ */

typedef struct gpo_cache_tune gpo_cache_tune;

/* Starts a tune of `key` (nothing is written yet). The handle is returned
 * even when the cache cannot be written (its writes are then skipped). */
gpuopt_status gpo_cache_begin(gpo_cache *cache, const gpo_cache_key *key,
                              const gpo_cache_soft *soft, const gpo_cache_search *search,
                              gpo_cache_tune **out);

/* Adds one evaluated candidate, saved with the next checkpoint
 * (gpo_cache_options.checkpoint_ms): a killed run loses at most that much
 * measuring, and the next run of the key resumes from the rest. `params`
 * is an object {NAME: number or string}. */
gpuopt_status gpo_cache_add_candidate(gpo_cache_tune *tune, const cJSON *params,
                                      const gpo_cache_stats *stats);

/* Writes the finished record and frees the handle (also on failure). The
 * runner-up and payload may be NULL; `best` may be NULL only when no
 * candidate was valid (the record then says so, and lookups report it). */
gpuopt_status gpo_cache_finish(gpo_cache_tune *tune, const cJSON *best_params,
                               const gpo_cache_stats *best, const cJSON *runner_params,
                               const gpo_cache_stats *runner, int complete, double wall_s,
                               const cJSON *payload);

/* Saves the candidates not saved yet and frees the handle without a
 * finished record (its candidates stay, for a later run to resume). NULL
 * does nothing. */
void gpo_cache_abandon(gpo_cache_tune *tune);

/* Records the outcome of a trust-but-verify re-timing: still_good 1 keeps
 * the record and adopts `soft` (later lookups with it are plain hits); 0
 * drops it (later lookups miss until a new tune finishes). The measured
 * times (ns, <0 when not timed) are kept for the record. */
gpuopt_status gpo_cache_record_verify(gpo_cache *cache, const gpo_cache_key *key,
                                      const gpo_cache_soft *soft, int still_good, double best_ns,
                                      double runner_ns);

/* Marks `key` used now (LRU; written as a hit's use is). NOT_FOUND when
 * there is no such record. */
gpuopt_status gpo_cache_touch(gpo_cache *cache, const gpo_cache_key *key);

/* ---- For the tuner and tier 2 ---------------------------------------------------- */

/* Opens the cache of `device` (its fingerprint) in the context's cache
 * directory (GPUOPT_CACHE_DIR, else $XDG_CACHE_HOME/gpuopt) with the
 * context's logger. For the tuner and the tier-2 measurements. */
struct gpuopt_context;
gpuopt_status gpo_cache_open_device(struct gpuopt_context *ctx, const gpuopt_device *device,
                                    const gpo_cache_options *opts, gpo_cache **out);

/* Merges the finished records of `src` (a parsed and read export section
 * of this cache's format) into the file, in one locked write: a record
 * replaces the local one of its key only when it was measured later, and
 * unfinished tunes are left as they are. *added counts the records written,
 * *kept those left because the local one is as new or newer. GPUOPT_ERR_IO
 * when the file could not be written (read-only, lock busy past its wait). */
struct gpo_cache_doc;
gpuopt_status gpo_cache_merge(gpo_cache *c, struct gpo_cache_doc *src, size_t *added, size_t *kept);

#endif
