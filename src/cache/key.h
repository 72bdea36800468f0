/* Keys of the tuning cache, and the values a record holds: device
 * fingerprints and file names, the canonical hard-key text and its hash,
 * soft fields, candidate statistics, and their JSON both ways. Pure
 * functions: no file, no state. The layers above (doc.c, cache.c, dir.c)
 * and every writer of records (the tuner, tier 2) build on these.
 *
 * Keys hash with gpo_hash64 (src/util/hash.h). Not cryptographic: a
 * collision costs a compare, since every hit checks the full key text.
 * Changing the hash changes every key: it is part of the schema. */
#ifndef GPO_CACHE_KEY_H
#define GPO_CACHE_KEY_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "gpuopt/gpuopt.h"

/* The file schema, part of every key. Bumped when a reader of the old
 * schema would misread the new one; a file of a newer schema is never read
 * or written. */
#define GPO_CACHE_SCHEMA 2
/* Longest string field in a key. */
#define GPO_CACHE_FIELD_MAX 4096u

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

/* The fingerprint a file header names ({"backend", "arch", "compute_units",
 * "name", "uuid", "pci"}), checked as a file name needs it; -1 when a
 * field is missing, of the wrong type or too long. */
int gpo_cache_device_from_json(const cJSON *json, gpo_cache_device *out);

/* 1 when `a` and `b` are the same product: backend, architecture and
 * compute units, the device part of every hard key. */
int gpo_cache_device_same_kind(const gpo_cache_device *a, const gpo_cache_device *b);

/* The cache file's name, without directory: "<backend>_<arch>_<N>cu_<id>"
 * where id is the UUID, else "pci-<bus id>", else the device name, each
 * lower-cased with every other character turned into '-'; then "@<host>"
 * when `host` is not NULL (network file systems, see gpo_cache_open); then
 * ".jsonl". The name is a hard part of the key only through backend, arch
 * and compute units: a device name that changes with the driver (it does,
 * TensorRT-LLM#17664) renames nothing when a UUID or PCI id is known.
 * GPUOPT_ERR_OUT_OF_RANGE when cap is too small (256 always suffices). */
gpuopt_status gpo_cache_file_name(const gpo_cache_device *dev, const char *host, char *out,
                                  size_t cap);

/* 1 when `name` is one gpo_cache_file_name makes:
 * "<backend>_<arch>_<N>cu_<id>[@host].jsonl". */
int gpo_cache_is_file_name(const char *name);

/* The same name as 0.1's journals: a 0.1 library finds a newer schema in
 * the header and leaves the file alone; this one finds 0.1's older schema
 * and sets it aside. */
#define GPO_CACHE_EXT ".jsonl"

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
    const char *space_hash;   /* of the space's canonical text (gpo_space_canonical) */
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

/* The names of the bits set in `changed`, joined by ", " ("driver,
 * compiler"); "" when none. */
void gpo_cache_soft_words(uint32_t changed, char *out, size_t cap);

/* "fnv1a64:<16 hex>" of a text (FNV-1a 64 with a finaliser). cap >= 25. */
gpuopt_status gpo_cache_hash_text(const char *text, size_t len, char *out, size_t cap);

/* The canonical text of a hard key (malloc'd; what gets hashed and compared
 * on every hit) and its hash (hash may be NULL). INVALID_ARGUMENT names the
 * bad field. */
gpuopt_status gpo_cache_key_canon(const gpo_cache_key *key, char **canon, uint64_t *hash);

/* 16 lower-case hex digits and a NUL; and back (-1 unless exactly 16). */
void gpo_cache_hex16(uint64_t value, char out[17]);
int gpo_cache_parse16(const char *hex, uint64_t *value);

/* The hard key back from its stored object (views into `hard`). -1 when a
 * field is missing or of the wrong type. */
int gpo_cache_key_from_json(const cJSON *hard, gpo_cache_key *key);
cJSON *gpo_cache_key_to_json(const gpo_cache_key *key);
cJSON *gpo_cache_soft_to_json(const gpo_cache_soft *soft);
/* GPO_SOFT_* bits whose stored value differs from `soft`. */
uint32_t gpo_cache_soft_diff(const cJSON *stored, const gpo_cache_soft *soft);

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

/* Parameters per candidate: as many as a space may have
 * (GPO_SPACE_MAX_PARAMS); the bound keeps checking a crafted file linear. */
#define GPO_CACHE_PARAMS_MAX 64

/* -1 when `params` is not an object of at most GPO_CACHE_PARAMS_MAX names
 * to numbers or strings. */
int gpo_cache_params_valid(const cJSON *params, char *why, size_t cap);
/* -1 when a statistic is out of range or not finite. */
int gpo_cache_stats_valid(const gpo_cache_stats *s, char *why, size_t cap);
/* Adds "status", "runs", "median_ns", ... to obj; -1 when an allocation
 * failed (obj then holds some of them: the caller drops it). */
int gpo_cache_stats_to_json(cJSON *obj, const gpo_cache_stats *s);
/* A stored candidate ({"params", "status", "runs", "median_ns", ...}) read
 * back and checked as gpo_cache_params_valid and gpo_cache_stats_valid
 * check what is stored: 0, or -1 with `why`. `out` may be NULL. */
int gpo_cache_candidate_valid(const cJSON *cand, gpo_cache_stats *out, char *why, size_t cap);

#endif
