/* A cache file's content both ways (doc.c): parsed into one item per hard
 * key, every value checked on the way in, and printed back with the file's
 * bounds applied. Pure: no file, no clock, no state; the open cache
 * (cache.c) and the directory tools (dir.c) read and write the bytes.
 *
 * The file is one JSON object (docs/tuning.md, "The file"):
 *   {"format": "gpuopt-tuning-cache", "schema": 2, "device": {...},
 *    "library": "0.2.0", "written": T,
 *    "records": [record, ...],      the newest finished tune per key
 *    "unfinished": [tune, ...]}     the newest unfinished tune per key
 * printed one record per line, ordered by key, so the same content always
 * prints the same bytes. */
#ifndef GPO_CACHE_DOC_H
#define GPO_CACHE_DOC_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cache/key.h"

#define GPO_CACHE_FORMAT "gpuopt-tuning-cache"
/* A record or candidate printed longer than this is refused when stored:
 * it bounds what one value costs to keep and to read back. */
#define GPO_CACHE_RECORD_MAX (1u << 20)

/* One hard key's state. */
typedef struct gpo_cache_item {
    uint64_t hash;
    char *canon;   /* the canonical hard-key text (gpo_cache_key_canon) */
    cJSON *record; /* newest finished record, without its candidates; NULL none */
    cJSON *cands;  /* the record's candidates (array); NULL none */
    cJSON *open;   /* newest unfinished tune, its "candidates" inside; NULL none */
    int64_t used;  /* last use, seconds since the epoch */
} gpo_cache_item;

typedef enum gpo_doc_status {
    GPO_DOC_OK = 0,
    GPO_DOC_EMPTY = 1,   /* no byte at all */
    GPO_DOC_CORRUPT = 2, /* not one JSON object of this format */
    GPO_DOC_NEWER = 3,   /* a newer schema: never read, never written */
    GPO_DOC_OLDER = 4    /* an older schema: not read */
} gpo_doc_status;

typedef struct gpo_cache_doc {
    gpo_cache_item *items; /* sorted by hash */
    size_t n, cap;
    cJSON *device;     /* the fingerprint the file names; NULL when absent */
    int status;        /* gpo_doc_status */
    int schema;        /* from the file; 0 when unknown */
    size_t dropped;    /* records and tunes that failed their checks (not in items) */
    char problem[300]; /* the first problem, in words */
} gpo_cache_doc;

void gpo_cache_doc_init(gpo_cache_doc *d);
void gpo_cache_doc_free(gpo_cache_doc *d);

/* "ok", "empty", "corrupt", "newer-schema", "older-schema". */
const char *gpo_cache_doc_status_name(int status);

/* Parses a file's bytes into `d` (initialised, empty). A record or tune
 * that fails a check is dropped and counted (the rest is kept); the
 * document's status says whether it could be read at all. GPUOPT_OK, or
 * GPUOPT_ERR_NO_MEMORY (`d` then holds what was parsed). */
gpuopt_status gpo_cache_doc_parse(gpo_cache_doc *d, const char *buf, size_t len);

/* The item of `hash`, or NULL. */
gpo_cache_item *gpo_cache_doc_find(gpo_cache_doc *d, uint64_t hash);

/* The item of `hash`, created empty with a copy of `canon` when absent;
 * NULL on allocation failure. */
gpo_cache_item *gpo_cache_doc_item(gpo_cache_doc *d, uint64_t hash, const char *canon);

/* Prints the document for `dev`, written at `now` (malloc'd, *len set; NULL
 * on allocation failure). When the keys pass `max_entries` or the text
 * `max_bytes`, the least recently used keys are evicted from `d` first, down
 * to three quarters of the bound so the next write is not one result away
 * from evicting again: candidates go before records, and the most recently
 * used key always stays. *evicted counts the keys removed. */
char *gpo_cache_doc_print(gpo_cache_doc *d, const gpo_cache_device *dev, int64_t now,
                          uint64_t max_bytes, uint32_t max_entries, size_t *len, size_t *evicted);

#endif
