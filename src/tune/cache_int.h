/* What the tuning cache's files share among themselves: the in-memory index
 * of a journal, line parsing, and the open cache's state. Nothing outside
 * src/tune/cache*.c includes this. */
#ifndef GPO_TUNE_CACHE_INT_H
#define GPO_TUNE_CACHE_INT_H

#include <pthread.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cache.h"
#include "util/fs.h"

#define GPO_CACHE_FORMAT "gpuopt-tuning-cache"
#define GPO_CACHE_EXT ".jsonl"
#define GPO_CACHE_DEFAULT_ENTRIES 2000u
#define GPO_CACHE_DEFAULT_BYTES (8ull << 20)
#define GPO_CACHE_DEFAULT_TOUCH_S 3600
/* Longest line accepted from a file and longest string field in a key:
 * bounds what one record can cost to parse. */
#define GPO_CACHE_LINE_MAX (1u << 20)
#define GPO_CACHE_FIELD_MAX 4096u

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

/* ---- Keys (cache_key.c) --------------------------------------------------------- */

/* Keys hash with gpo_hash64 (src/hash.h). Not cryptographic: a collision
 * costs a compare, since every hit checks the full key text. Changing the
 * hash changes every key: it is part of the schema. */
/* 16 lower-case hex digits and a NUL; and back (-1 unless exactly 16). */
void gpo_cache_hex16(uint64_t value, char out[17]);
int gpo_cache_parse16(const char *hex, uint64_t *value);

/* The hard key back from its stored object (views into `hard`). -1 when a
 * field is missing or of the wrong type. */
int gpo_cache_key_from_json(const cJSON *hard, gpo_cache_key *key);
cJSON *gpo_cache_key_to_json(const gpo_cache_key *key);
cJSON *gpo_cache_soft_to_json(const gpo_cache_soft *soft);
uint32_t gpo_cache_soft_diff(const cJSON *stored, const gpo_cache_soft *soft);
/* -1 when `params` is not an object of names to numbers or strings. */
int gpo_cache_params_valid(const cJSON *params, char *why, size_t cap);
/* -1 when a statistic is out of range or not finite. */
int gpo_cache_stats_valid(const gpo_cache_stats *s, char *why, size_t cap);
/* Adds "status", "runs", "median_ns", ... to obj. */
void gpo_cache_stats_to_json(cJSON *obj, const gpo_cache_stats *s);

/* ---- An open cache ---------------------------------------------------------------- */

struct gpo_cache {
    pthread_mutex_t lock;
    char dir[GPO_PATH_MAX];
    char path[GPO_PATH_MAX];
    char name[256];
    gpo_cache_device dev;
    gpo_cache_options opt;
    gpo_logger log;

    int state; /* gpo_cache_state of the directory */
    char reason[512];
    int file_status; /* gpo_journal_status of what `path` holds */
    int schema;      /* its header's schema, 0 before one is read */
    unsigned warned; /* WARN_* bits: each cause is said once per cache */

    gpo_cidx ix;
    int have_file; /* ix reflects (dev, ino) up to `consumed` */
    dev_t st_dev;
    ino_t st_ino;
    off_t seen_size;
    struct timespec seen_mtime;
    off_t consumed;
    off_t torn_warned_at;

    int dir_ready;
    int refreshing;  /* re-reading after setting a file aside */
    uint64_t serial; /* for tune ids */
};

enum {
    WARN_DIR = 1,
    WARN_NEWER = 2,
    WARN_LOCK = 4,
    WARN_WRITE = 8,
    WARN_CORRUPT = 16,
    WARN_READ = 32
};

int64_t gpo_cache_now(const gpo_cache *c);

/* flock(2) retried on EINTR; -1 with errno when refused. */
int gpo_cache_lock_fd(int fd, int op);

/* cache_file.c, with c->lock held. */
void gpo_cache_refresh(gpo_cache *c);
/* Forgets the index (the file was replaced, removed or set aside). */
void gpo_cache_reset_index(gpo_cache *c);
/* 1 when `fd` is still the file at `path` (not replaced by a rename). */
int gpo_cache_same_file(int fd, const char *path);
/* Brings the index up to the content of `fd` (locked by the caller):
 * only the bytes appended since the last read, unless the file is another
 * one or shrank. Returns its gpo_journal_status, or -1 when unreadable. */
int gpo_cache_sync_fd(gpo_cache *c, int fd);
/* With the file at the path held exclusively through `fd`: keeps the
 * corrupt file as "<name>.corrupt-<time>" and starts again. */
void gpo_cache_set_aside_locked(gpo_cache *c, int fd);
/* Reads the whole journal under a shared lock; *buf NULL when absent. */
gpuopt_status gpo_cache_read_all(gpo_cache *c, char **buf, size_t *len);

/* cache_append.c, with c->lock held: appends one printed line (with its
 * newline); skipped with a warning when the cache cannot be written. */
void gpo_cache_append(gpo_cache *c, const char *line, size_t len);

/* cache_compact.c: rewrites the journal, held exclusively by the caller,
 * whose whole content is buf[0, len). `salvage`: the file is corrupt after
 * a valid header; keep every record that still reads. Returns 0 when the
 * file at the path was replaced. */
int gpo_cache_compact_locked(gpo_cache *c, const char *buf, size_t len, int salvage);
/* Reads a whole open file into a malloc'd buffer (NUL-terminated). */
int gpo_cache_slurp(int fd, char **buf, size_t *len);

/* cache_dir.c: the base of a journal's name, for matching set-aside files. */
int gpo_cache_is_journal_name(const char *name);

#endif
