/* A cache file's content both ways (doc.c): its lines indexed by hard key,
 * each line read and checked when first needed, and the file printed back
 * with its bounds applied. Pure: no file, no clock, no state; the open
 * cache (cache.c) and the directory tools (dir.c) read and write the bytes.
 *
 * The file is JSON Lines (docs/tuning.md, "The file"), written whole:
 *   {"t":"header","format":"gpuopt-tuning-cache","schema":2,"device":{...},
 *    "library":"0.2.0","written":T}
 *   {"t":"record","key":K,"used":T,...}      the newest finished tune of K
 *   {"t":"unfinished","key":K,"used":T,...}  the newest unfinished tune of K
 * ordered by key, so the same content always prints the same bytes. A line
 * is found by its first bytes alone and parsed only when its key is used:
 * opening a file of thousands of tunes reads no JSON but the header, and a
 * write prints only the lines that changed. A line that does not read, or
 * holds a value outside its range, is never used. */
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

enum { GPO_LINE_RECORD = 0, GPO_LINE_OPEN = 1 };

/* One hard key's lines. */
typedef struct gpo_cache_item {
    uint64_t hash;
    int64_t used;  /* last use, seconds since the epoch */
    char *text[2]; /* the record's and the unfinished tune's line as stored or
                      last printed (no newline); NULL when none, or changed */
    size_t len[2];
    int read;         /* the lines below were read from text (or made here) */
    char *canon;      /* the canonical hard-key text, once read */
    cJSON *record;    /* newest finished record, without its candidates; NULL none */
    cJSON *cands;     /* the record's candidates (array), once read; NULL none */
    char *cands_text; /* the same as stored, until they are read; NULL none */
    cJSON *open;      /* newest unfinished tune, its "candidates" inside; NULL none */
} gpo_cache_item;

typedef enum gpo_doc_status {
    GPO_DOC_OK = 0,
    GPO_DOC_EMPTY = 1,   /* no byte at all */
    GPO_DOC_CORRUPT = 2, /* no header of this format */
    GPO_DOC_NEWER = 3,   /* a newer schema: never read, never written */
    GPO_DOC_OLDER = 4    /* an older schema (0.1's journals): not read */
} gpo_doc_status;

typedef struct gpo_cache_doc {
    gpo_cache_item *items; /* sorted by hash */
    size_t n, cap;
    cJSON *device;     /* the fingerprint the header names; NULL when absent */
    int status;        /* gpo_doc_status */
    int schema;        /* from the header; 0 when unknown */
    size_t dropped;    /* lines found not to read or to fail their checks */
    char problem[300]; /* the first problem, in words */
} gpo_cache_doc;

void gpo_cache_doc_init(gpo_cache_doc *d);
void gpo_cache_doc_free(gpo_cache_doc *d);

/* "ok", "empty", "corrupt", "newer-schema", "older-schema". */
const char *gpo_cache_doc_status_name(int status);

/* Indexes a file's bytes into `d` (initialised, empty): the header is read
 * and checked, every other line only found. GPUOPT_OK, or
 * GPUOPT_ERR_NO_MEMORY. */
gpuopt_status gpo_cache_doc_parse(gpo_cache_doc *d, const char *buf, size_t len);

/* The item of `hash`, or NULL. */
gpo_cache_item *gpo_cache_doc_find(gpo_cache_doc *d, uint64_t hash);

/* Reads and checks the lines of `it` when not read yet, a record's
 * candidates aside (a hit needs none of them: they are read apart, below);
 * a line that fails is dropped from the item and counted in d->dropped.
 * GPUOPT_OK, or GPUOPT_ERR_NO_MEMORY (nothing dropped then). */
gpuopt_status gpo_cache_doc_read(gpo_cache_doc *d, gpo_cache_item *it);

/* Reads and checks the record's candidates of `it` (read) into it->cands;
 * candidates that fail are dropped (the record stays) and counted. */
gpuopt_status gpo_cache_doc_read_cands(gpo_cache_doc *d, gpo_cache_item *it);

/* Reads every item and its candidates: for writes, listings and checks. */
gpuopt_status gpo_cache_doc_read_all(gpo_cache_doc *d);

/* The item of `hash`, created empty (read) with a copy of `canon` when
 * absent, else read; NULL on allocation failure. */
gpo_cache_item *gpo_cache_doc_item(gpo_cache_doc *d, uint64_t hash, const char *canon);

/* Drops the record of `it` with its candidates. */
void gpo_cache_doc_drop_record(gpo_cache_item *it);

/* Says that `it` (read) changed: its lines are printed again. */
void gpo_cache_doc_changed(gpo_cache_item *it);

/* Prints the document for `dev`, written at `now` (malloc'd, *len set; NULL
 * on allocation failure). When the keys pass `max_entries` or the text
 * `max_bytes`, the least recently used keys are evicted from `d` first, down
 * to three quarters of the bound so the next write is not one result away
 * from evicting again: candidates go before records, and the most recently
 * used key always stays. *evicted counts the keys removed. */
char *gpo_cache_doc_print(gpo_cache_doc *d, const gpo_cache_device *dev, int64_t now,
                          uint64_t max_bytes, uint32_t max_entries, size_t *len, size_t *evicted);

#endif
