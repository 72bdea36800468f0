/* Internals shared by the spec loader's files. */
#ifndef GPUOPT_TUNE_SPEC_INT_H
#define GPUOPT_TUNE_SPEC_INT_H

#include <stddef.h>

#include "tune_spec.h"

struct ts_arena {
    struct ts_arena_block *head;
};

/* Zeroed memory owned by the arena; NULL when out of memory. */
void *ts_alloc(struct ts_arena *a, size_t bytes);
char *ts_strdup(struct ts_arena *a, const char *s);
char *ts_strndup(struct ts_arena *a, const char *s, size_t n);
void ts_arena_free(struct ts_arena *a);

/* Bytes of one element of a gpuopt_elem_type. */
size_t ts_type_bytes(int32_t type);

/* ---- The loader's parsing context and helpers (tune_spec_json.c) ------- */

typedef struct cJSON cJSON;

typedef struct pctx {
    tune_spec *s;
    struct ts_arena *a;
    const char *file; /* the spec, as named in messages */
    const char *dir;  /* where relative file names are looked up */
    char *err;
    size_t cap;
} pctx;

#define PATH_CAP 256

/* Writes "FILE: PATH: VALUE is not accepted; WHAT" (VALUE when not NULL)
 * into the context's message and returns -1. */
int ts_fail(pctx *p, const char *path, const cJSON *value, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* PATH.KEY and PATH[I]. */
void ts_join(char *out, const char *path, const char *key);
void ts_joini(char *out, const char *path, int i);
/* Unknown keys are errors; "comment" is accepted everywhere. keys ends
 * with NULL. */
int ts_check_keys(pctx *p, const cJSON *obj, const char *path, const char *const *keys);
int ts_need_object(pctx *p, const cJSON *v, const char *path);
/* JSON lets an object repeat a key and cJSON keeps both: a spec may not
 * (which one would count?). Checks `v` and everything in it. */
int ts_unique_keys(pctx *p, const cJSON *v, const char *path);
/* An integral JSON number within [lo, hi] (and exactly representable). */
int ts_is_int(const cJSON *v, int64_t lo, int64_t hi);
int ts_get_str(pctx *p, const cJSON *obj, const char *key, const char *path, int required,
               int allow_empty, const char *dflt, const char **out);
/* An expression string, or a non-negative integer turned into text. */
int ts_get_expr(pctx *p, const cJSON *v, const char *where, const char *example, const char **out);
/* Limits on the files a spec names (docs/tuning.md, "Spec files"): a
 * kernel or reference source, and a buffer's or reference's raw data. */
#define TS_MAX_SPEC_BYTES ((size_t)64 << 20)
#define TS_MAX_SOURCE_BYTES ((size_t)16 << 20)
#define TS_MAX_DATA_BYTES ((size_t)1 << 30)
/* The file `name` (a JSON string) relative to the spec's directory, a
 * regular file of at most max_bytes. */
int ts_read_rel(pctx *p, const char *where, const cJSON *name, size_t max_bytes, char **text,
                size_t *len);
int ts_parse_program(pctx *p, const cJSON *o, const char *path, const char **source,
                     const char **file, const char **entry, const char **options);
int ts_parse_geometry(pctx *p, const cJSON *o, const char *path, const char **global,
                      const char **local);
/* Optional members: a number >= lo, an integer in [lo, INT32_MAX]; absent
 * leaves *out unchanged. */
int ts_get_num(pctx *p, const cJSON *obj, const char *key, const char *path, double lo,
               double *out);
int ts_get_i32(pctx *p, const cJSON *obj, const char *key, const char *path, int32_t lo,
               int32_t *out);
/* A C identifier of at most 63 characters. */
int ts_valid_ident(const char *s);

/* tune_spec_args.c */
int ts_parse_arguments(pctx *p, const cJSON *root);
int ts_parse_reference(pctx *p, const cJSON *root);

#endif
