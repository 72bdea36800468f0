/* A journal on disk: its line format and the in-memory index built from
 * its lines (journal.c). One item per hard key holds its newest finished
 * record, its newest unfinished tune and its last use; later lines win, so
 * reading a file front to back, or only its new tail, gives the same index
 * as the writers meant. Also the two file helpers every reader of a
 * journal needs: flock retried on EINTR and reading a whole open file.
 * Used by the open cache (cache.c), compaction (compact.c) and the
 * directory tools (dir.c). */
#ifndef GPO_CACHE_JOURNAL_H
#define GPO_CACHE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cache/key.h"

#define GPO_CACHE_FORMAT "gpuopt-tuning-cache"
/* Longest line accepted from a file: bounds what one record can cost to
 * parse. */
#define GPO_CACHE_LINE_MAX (1u << 20)

/* ---- Index of one journal ---------------------------------------------------- */

typedef struct gpo_cidx_item {
    uint64_t hash;
    char *canon;   /* canonical hard-key text (the key itself: in record or open_begin) */
    cJSON *record; /* newest finished record (soft and use folded in); NULL when none */
    char record_tune[17];
    cJSON *open_begin; /* "begin" line of the newest unfinished tune; NULL when none */
    char open_tune[17];
    int64_t used;       /* last use, seconds since the epoch */
    int64_t touched_at; /* when this process last wrote a use (read back, or skipped) */
} gpo_cidx_item;

typedef struct gpo_cidx {
    gpo_cidx_item *items;
    size_t n, cap;
    uint32_t *slots; /* open addressing on the hash: item index + 1, 0 empty */
    size_t nslots;
    cJSON *header; /* the header line, NULL before it is read */
    size_t lines;  /* lines applied, header included */
    size_t live;   /* items with a record or an open tune */
} gpo_cidx;

void gpo_cidx_init(gpo_cidx *ix);
void gpo_cidx_free(gpo_cidx *ix);
gpo_cidx_item *gpo_cidx_find(gpo_cidx *ix, uint64_t hash);

/* ---- Parsing ----------------------------------------------------------------- */

typedef enum gpo_journal_status {
    GPO_J_OK = 0,
    GPO_J_EMPTY = 1,   /* no byte, or nothing but a torn first line */
    GPO_J_CORRUPT = 2, /* bad header, or a bad line before the last */
    GPO_J_NEWER = 3,   /* a newer schema: never read, never written */
    GPO_J_OLDER = 4,   /* an older schema this library cannot read */
    GPO_J_FOREIGN = 5  /* the first line is not a cache header at all */
} gpo_journal_status;

const char *gpo_journal_status_name(int status);

typedef struct gpo_journal_scan {
    int status;      /* gpo_journal_status */
    int schema;      /* from the header, 0 when unknown */
    size_t consumed; /* bytes of complete lines taken, from the start of the chunk */
    size_t torn;     /* bytes after the last newline (a torn last line) */
    size_t bad_line; /* 1-based line number of the problem within the file */
    size_t lines;    /* complete lines seen in this chunk */
    size_t cands;    /* candidate lines among them */
    size_t bad;      /* bad lines skipped (GPO_J_SKIP_BAD) */
    char problem[200];
} gpo_journal_scan;

/* Flags of gpo_journal_apply. */
enum {
    GPO_J_STRICT = 1,  /* parse candidate lines fully (verify) instead of checking their shape */
    GPO_J_SKIP_BAD = 2 /* skip bad lines, counting them, instead of stopping (salvage) */
};

/* Applies the complete lines of buf[0, len) to the index. `first_line` is
 * the 1-based number of buf's first line in the file (1: buf starts with
 * the header). Bytes after the last newline are a torn line (a writer that
 * died mid-write), ignored; a bad complete line is corruption. */
void gpo_journal_apply(gpo_cidx *ix, const char *buf, size_t len, size_t first_line, int flags,
                       gpo_journal_scan *scan);

/* Calls fn for each complete line of buf that parses, with its object and
 * raw text (no newline); used by compaction and candidate listing. */
typedef void (*gpo_journal_line_fn)(const cJSON *line, const char *raw, size_t rawlen, void *user);
void gpo_journal_each(const char *buf, size_t len, gpo_journal_line_fn fn, void *user);

/* Parses one line (no newline) into an object; NULL when it is not one
 * complete JSON object. */
cJSON *gpo_journal_parse_line(const char *raw, size_t len);

/* The header object for a device (the caller adds it to nothing; free it). */
cJSON *gpo_journal_header(const gpo_cache_device *dev, int64_t now);

/* Prints `obj` as one line with its newline (malloc'd, *len set); NULL on
 * allocation failure (*len 0) or when the line would pass
 * GPO_CACHE_LINE_MAX (*len its length). */
char *gpo_journal_print(const cJSON *obj, size_t *len);

/* flock(2) retried on EINTR; -1 with errno when refused. */
int gpo_journal_lock(int fd, int op);

/* Reads a whole open file into a malloc'd buffer (NUL-terminated); -1 on
 * failure. */
int gpo_journal_slurp(int fd, char **buf, size_t *len);

/* write(2) of all n bytes, retried on EINTR and short writes; -1 with
 * errno on failure. */
int gpo_journal_write(int fd, const char *buf, size_t n);

#endif
