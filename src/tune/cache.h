/* The tuning cache: one append-only JSON-lines journal per device under the
 * cache directory, shared by the tuner (kernel and callback subjects) and the
 * tier-2 micro-benchmarks. A record maps a HARD KEY (any difference is a
 * miss) to what was measured: a tuning result (best, runner-up, search
 * settings, every candidate) or any JSON payload a measurement keeps. SOFT
 * FIELDS (driver, compiler and library versions, device name) never cause a
 * miss: a hit says which of them changed, so the caller re-times the stored
 * winner and runner-up once and keeps the winner when it still holds
 * (MIOpen's trust-but-verify), recording the outcome with
 * gpo_cache_record_verify. docs/tuning.md ("The tuning cache") describes the
 * file format with an example.
 *
 * Failure policy: the cache never fails its host program. A missing or
 * unwritable directory, a corrupt file (set aside and rebuilt), a file of a
 * newer schema (left alone): a warning through the logger, once, and a miss;
 * writes that cannot happen are skipped and still return GPUOPT_OK. Only
 * NULL or malformed arguments (GPUOPT_ERR_INVALID_ARGUMENT) and allocation
 * failures (GPUOPT_ERR_NO_MEMORY) are errors; a miss is GPUOPT_ERR_NOT_FOUND.
 *
 * Threads and processes: a gpo_cache serialises its calls with a mutex.
 * Processes share a file through flock(2): shared to read, exclusive to
 * append or compact. A tune handle is used by one thread at a time and is
 * finished or abandoned before its cache is closed. */
#ifndef GPO_TUNE_CACHE_H
#define GPO_TUNE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "gpuopt/gpuopt.h"
#include "util/log.h"

/* The file schema. Bumped when a reader of the old schema would misread the
 * new one; a file of a newer schema is never read or written. */
#define GPO_CACHE_SCHEMA 1

/* ---- Keys ------------------------------------------------------------------ */

/* The device a file belongs to: its name and its header. */
typedef struct gpo_cache_device {
    char backend[16];      /* primary backend ("cuda") */
    char arch[96];         /* "sm_90", "gfx942"; vendor + name when the backend knows no arch */
    int32_t compute_units; /* -1 unknown */
    char name[256];
    char uuid[64]; /* "" when the backend has none */
    char pci[32];  /* "" when the backend has none */
} gpo_cache_device;

/* The fingerprint of a device record. */
void gpo_cache_device_from_info(const gpuopt_device_info *info, gpo_cache_device *out);

/* The journal's file name, without directory: "<backend>_<arch>_<N>cu_<id>"
 * where id is the UUID, else "pci-<bus id>", else the device name, each
 * lower-cased with every other character turned into '-'; then "@<host>"
 * when `host` is not NULL (network file systems, see gpo_cache_open); then
 * ".jsonl". The name is a hard part of the key only through backend, arch
 * and compute units: a device name that changes with the driver (it does,
 * TensorRT-LLM#17664) renames nothing when a UUID or PCI id is known.
 * GPUOPT_ERR_OUT_OF_RANGE when cap is too small (256 always suffices). */
gpuopt_status gpo_cache_file_name(const gpo_cache_device *dev, const char *host, char *out,
                                  size_t cap);

/* The hard key of a record. Strings may be NULL where they do not apply
 * (read as ""); kind, backend and arch are required. The schema version is
 * part of the key implicitly. */
typedef struct gpo_cache_key {
    const char *kind;         /* what made the record: "kernel", "callback", "bench.<name>" */
    const char *backend;      /* the backend the work ran on (a route of the device) */
    const char *arch;         /* architecture id, as gpo_cache_device.arch */
    int32_t compute_units;    /* -1 unknown */
    const char *source_hash;  /* kernel source(s) */
    const char *options_hash; /* build options */
    const char *space_hash;   /* parameter names, value sets, constraints (gpo_cache_hash_set) */
    const char *workload;     /* problem sizes, element types, user key, as canonical text */
} gpo_cache_key;

/* Soft fields: recorded, compared, never a miss. NULL reads as "" except
 * `library`, where NULL means this library's version. */
typedef struct gpo_cache_soft {
    const char *driver;
    const char *compiler;
    const char *library;
    const char *device_name;
} gpo_cache_soft;

/* Bits of gpo_cache_hit.changed. */
enum { GPO_SOFT_DRIVER = 1, GPO_SOFT_COMPILER = 2, GPO_SOFT_LIBRARY = 4, GPO_SOFT_DEVICE_NAME = 8 };

/* "driver", "compiler", "library", "device_name"; NULL for another value. */
const char *gpo_cache_soft_name(uint32_t bit);

/* "fnv1a64:<16 hex>" of a text (FNV-1a 64 with a finaliser). cap >= 25. */
gpuopt_status gpo_cache_hash_text(const char *text, size_t len, char *out, size_t cap);

/* The same over a set of texts, one per parameter or constraint ("int TILE
 * 8,16,32", "expr TILE*VEC<=64"). They are sorted before hashing, so the
 * order in which parameters were declared does not change the key. */
gpuopt_status gpo_cache_hash_set(const char *const *items, size_t n, char *out, size_t cap);

/* The canonical text of a hard key (malloc'd; what gets hashed and compared
 * on every hit) and its hash. INVALID_ARGUMENT names the bad field. */
gpuopt_status gpo_cache_key_canon(const gpo_cache_key *key, char **canon, uint64_t *hash);

/* ---- Measurements ----------------------------------------------------------- */

/* Statistics of one evaluated candidate. Times are -1 when not measured. */
typedef struct gpo_cache_stats {
    int32_t status; /* gpuopt_candidate_status: 0 ok .. 6 pruned */
    int32_t runs;
    double median_ns;
    double min_ns;
    double p20_ns;
    double p80_ns;
    double compile_ms; /* -1 when nothing was built */
} gpo_cache_stats;

/* "ok", "invalid", "compile_failed", "launch_failed", "wrong_result",
 * "timeout", "pruned"; NULL outside 0..6. And back (-1 when unknown). */
const char *gpo_cache_status_name(int32_t status);
int32_t gpo_cache_status_parse(const char *name);

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
    uint32_t max_entries;     /* keys per file; 0: 2000 */
    uint64_t max_bytes;       /* bytes per file; 0: 8 MiB */
    int64_t touch_interval_s; /* a hit records its use when the last one is older; 0: 3600, <0:
                                 always */
    int64_t (*clock)(void);   /* seconds since the epoch; NULL: time(NULL) (tests move time) */
    int32_t
        per_host; /* "@<host>" in the file name: 0 on network file systems, 1 always, -1 never */
} gpo_cache_options;

typedef enum gpo_cache_state {
    GPO_CACHE_READ_WRITE = 0,
    GPO_CACHE_READ_ONLY = 1, /* lookups work, writes are skipped (why: gpo_cache_state) */
    GPO_CACHE_OFF = 2        /* every lookup misses */
} gpo_cache_state;

typedef struct gpo_cache gpo_cache;

/* Opens the journal of `dev` under `dir`; nothing is read or created until
 * first use. `opts` may be NULL (defaults); `log` is copied and may be NULL
 * (silent). On a network file system (NFS, SMB/CIFS, AFS, Lustre, Ceph,
 * GlusterFS/FUSE) where flock may lock only within one host, the file name
 * gets "@<hostname>" so that one journal is only ever written from one host.
 * Fails only on bad arguments or memory. */
gpuopt_status gpo_cache_open(const char *dir, const gpo_cache_device *dev,
                             const gpo_cache_options *opts, const gpo_logger *log, gpo_cache **out);

/* Closes; NULL does nothing. */
void gpo_cache_close(gpo_cache *cache);

/* The journal's full path. */
const char *gpo_cache_file(const gpo_cache *cache);

/* The current state and, when not READ_WRITE, why ("" otherwise). */
gpo_cache_state gpo_cache_get_state(gpo_cache *cache, const char **reason);

/* ---- Lookup ------------------------------------------------------------------- */

/* A hit: the stored record, owned by the hit. */
typedef struct gpo_cache_hit {
    cJSON *record;     /* the whole record (folded soft fields and last use) */
    const cJSON *best; /* {"params": {NAME: value}, "status", "runs", "median_ns", ...} or NULL */
    const cJSON *runner_up; /* the same, or NULL */
    const cJSON *payload;   /* what gpo_cache_put stored, or NULL */
    const cJSON *soft;      /* the stored soft fields */
    int complete;           /* 1: the search ran to its end (or a put) */
    int64_t time;           /* when measured, seconds since the epoch */
    uint32_t changed;       /* GPO_SOFT_* bits whose stored value differs from `soft` */
} gpo_cache_hit;

/* The record of `key`, without building or running anything. A record whose
 * verification failed is a miss. Records the use (for LRU eviction) at most
 * once per touch interval. GPUOPT_ERR_NOT_FOUND on a miss (*out NULL). */
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

/* Starts a tune of `key`: writes a "begin" record. The handle is returned
 * even when the cache cannot be written (its writes are then skipped). */
gpuopt_status gpo_cache_begin(gpo_cache *cache, const gpo_cache_key *key,
                              const gpo_cache_soft *soft, const gpo_cache_search *search,
                              gpo_cache_tune **out);

/* Appends one evaluated candidate at once (one write(2)): a crash loses
 * nothing finished. `params` is an object {NAME: number or string}. */
gpuopt_status gpo_cache_add_candidate(gpo_cache_tune *tune, const cJSON *params,
                                      const gpo_cache_stats *stats);

/* Writes the finished record and frees the handle (also on failure). The
 * runner-up and payload may be NULL; `best` may be NULL only when no
 * candidate was valid (the record then says so, and lookups report it). */
gpuopt_status gpo_cache_finish(gpo_cache_tune *tune, const cJSON *best_params,
                               const gpo_cache_stats *best, const cJSON *runner_params,
                               const gpo_cache_stats *runner, int complete, double wall_s,
                               const cJSON *payload);

/* Frees the handle without a finished record (its candidates stay, for a
 * later run to resume). NULL does nothing. */
void gpo_cache_abandon(gpo_cache_tune *tune);

/* Stores one measured value with no search behind it (tier-2
 * micro-benchmarks): `payload` is any JSON object. */
gpuopt_status gpo_cache_put(gpo_cache *cache, const gpo_cache_key *key, const gpo_cache_soft *soft,
                            const cJSON *payload);

/* Records the outcome of a trust-but-verify re-timing: still_good 1 keeps
 * the record and adopts `soft` (later lookups with it are plain hits); 0
 * drops it (later lookups miss until a new tune finishes). The measured
 * times (ns, <0 when not timed) are kept for the record. */
gpuopt_status gpo_cache_record_verify(gpo_cache *cache, const gpo_cache_key *key,
                                      const gpo_cache_soft *soft, int still_good, double best_ns,
                                      double runner_ns);

/* Marks `key` used now (LRU). NOT_FOUND when there is no such record. */
gpuopt_status gpo_cache_touch(gpo_cache *cache, const gpo_cache_key *key);

/* Rewrites the journal keeping only the latest record per key with its
 * candidates, folding uses and verifications in, and evicting the least
 * recently used keys when the file is over its bounds (down to 3/4 of
 * them). Temp file + fsync + rename + fsync of the directory: a crash at
 * any point leaves either the old or the new file. Appends trigger it by
 * themselves when the file passes a bound. */
gpuopt_status gpo_cache_compact(gpo_cache *cache);

/* ---- The directory (gpuopt_cache_*) ---------------------------------------------- */

/* A JSON listing of every journal under `dir`: {"dir", "files": [{"file",
 * "status", "schema", "bytes", "device", "entries": [record, ...]}]}. A
 * missing directory is an empty list. Reads under shared locks, writes
 * nothing. */
gpuopt_status gpo_cache_dir_list(const char *dir, const gpo_logger *log, cJSON **out);

/* Checks every journal line by line, rewriting nothing: {"dir", "ok",
 * "files": [{"file", "status", "detail", "lines", "entries", "unfinished",
 * "bytes"}], "set_aside": [...], "stale_temp": [...]}. "ok" is false when
 * a file is corrupt or unreadable. */
gpuopt_status gpo_cache_dir_verify(const char *dir, const gpo_logger *log, cJSON **out);

/* Removes every journal (with its set-aside copies and stale temp files),
 * or only the device's when `dev` is not NULL. Touches nothing else in the
 * directory. *removed (may be NULL) counts the files removed. */
gpuopt_status gpo_cache_dir_clear(const char *dir, const gpo_cache_device *dev,
                                  const gpo_logger *log, int *removed);

/* Opens the cache of `device` (its fingerprint) in the context's cache
 * directory (GPUOPT_CACHE_DIR, else $XDG_CACHE_HOME/gpuopt) with the
 * context's logger. For the tuner and the tier-2 measurements. */
struct gpuopt_context;
gpuopt_status gpo_cache_open_device(struct gpuopt_context *ctx, const gpuopt_device *device,
                                    const gpo_cache_options *opts, gpo_cache **out);

/* ---- Tests ----------------------------------------------------------------------- */

/* Called at named points of appends and compactions ("append:written",
 * "compact:temp-written", "compact:before-rename", "compact:renamed") when
 * not NULL, so tests can kill a process exactly there. */
extern void (*gpo_cache_fault_hook)(const char *point);

#endif
