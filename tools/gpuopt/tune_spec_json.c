/* Reading a spec's JSON: paths for messages, type checks with the value and
 * what is accepted, unknown keys, files named relative to the spec, and the
 * program objects (kernel, reference) both use. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_spec_int.h"
#include "util/file.h"

int ts_fail(pctx *p, const char *path, const cJSON *value, const char *fmt, ...)
{
    char shown[96] = "";
    if (value) {
        char *t = cJSON_PrintUnformatted(value);
        if (t) {
            size_t n = strlen(t);
            if (n > 60)
                snprintf(shown, sizeof shown, "%.57s...", t);
            else
                snprintf(shown, sizeof shown, "%s", t);
            free(t);
        }
    }
    int off =
        snprintf(p->err, p->cap, "%s: %s%s", p->file, path && *path ? path : "(top level)", ": ");
    if (off < 0 || (size_t)off >= p->cap)
        return -1;
    if (value) {
        int w = snprintf(p->err + off, p->cap - (size_t)off, "%s is not accepted; ", shown);
        if (w < 0 || (size_t)(off + w) >= p->cap)
            return -1;
        off += w;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + off, p->cap - (size_t)off, fmt, ap);
    va_end(ap);
    return -1;
}

/* A path too long for PATH_CAP is cut (a message is still useful). */
void ts_join(char *out, const char *path, const char *key)
{
    if (snprintf(out, PATH_CAP, "%s%s%s", path, *path ? "." : "", key) >= PATH_CAP)
        out[PATH_CAP - 1] = '\0';
}

void ts_joini(char *out, const char *path, int i)
{
    if (snprintf(out, PATH_CAP, "%s[%d]", path, i) >= PATH_CAP)
        out[PATH_CAP - 1] = '\0';
}

/* Unknown keys are errors (a typo must not silently fall back to a
 * default); "comment" is accepted everywhere, for annotated specs. */
int ts_check_keys(pctx *p, const cJSON *obj, const char *path, const char *const *keys)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        int known = strcmp(it->string, "comment") == 0;
        for (size_t i = 0; keys[i] && !known; i++)
            known = strcmp(it->string, keys[i]) == 0;
        if (known)
            continue;
        char where[PATH_CAP], list[512] = "";
        ts_join(where, path, it->string);
        size_t off = 0;
        for (size_t i = 0; keys[i] && off < sizeof list; i++)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", keys[i]);
        return ts_fail(p, where, NULL, "unknown key; accepted: %s, comment", list);
    }
    return 0;
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

int ts_unique_keys(pctx *p, const cJSON *v, const char *path)
{
    size_t n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        char where[PATH_CAP];
        if (cJSON_IsObject(v))
            ts_join(where, path, it->string);
        else
            ts_joini(where, path, (int)n);
        if (ts_unique_keys(p, it, where))
            return -1;
        n++;
    }
    if (!cJSON_IsObject(v) || n < 2)
        return 0;
    /* Sorted, so that an object of many keys costs n log n. */
    const cJSON **keys = malloc(n * sizeof *keys);
    if (!keys)
        return ts_fail(p, path, NULL, "out of memory");
    n = 0;
    cJSON_ArrayForEach(it, v)
    {
        keys[n++] = it;
    }
    qsort(keys, n, sizeof *keys, cmp_keys);
    int rc = 0;
    for (size_t i = 1; i < n && !rc; i++) {
        if (strcmp(keys[i - 1]->string, keys[i]->string) == 0) {
            char where[PATH_CAP];
            ts_join(where, path, keys[i]->string);
            rc = ts_fail(p, where, NULL,
                         "the key is given twice; each key of an object is given once");
        }
    }
    free(keys);
    return rc;
}

int ts_need_object(pctx *p, const cJSON *v, const char *path)
{
    if (!cJSON_IsObject(v))
        return ts_fail(p, path, v, "expected an object ({...})");
    return 0;
}

int ts_is_int(const cJSON *v, int64_t lo, int64_t hi)
{
    if (!cJSON_IsNumber(v))
        return 0;
    double d = v->valuedouble;
    return d == floor(d) && d >= (double)lo && d <= (double)hi && fabs(d) <= 9007199254740992.0;
}

/* An optional string member. */
int ts_get_str(pctx *p, const cJSON *obj, const char *key, const char *path, int required,
               int allow_empty, const char *dflt, const char **out)
{
    char where[PATH_CAP];
    ts_join(where, path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = dflt;
    if (!v) {
        if (required)
            return ts_fail(p, where, NULL, "missing; expected a string");
        return 0;
    }
    if (!cJSON_IsString(v) || (!allow_empty && !*v->valuestring))
        return ts_fail(p, where, v, "expected a%s string", allow_empty ? "" : " non-empty");
    *out = v->valuestring;
    return 0;
}

/* An expression: a non-empty string, or a non-negative integer (written
 * back as text, since the library takes expressions as text). */
int ts_get_expr(pctx *p, const cJSON *v, const char *where, const char *example, const char **out)
{
    if (cJSON_IsString(v) && *v->valuestring) {
        *out = v->valuestring;
        return 0;
    }
    if (ts_is_int(v, 0, INT64_MAX)) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)v->valuedouble);
        *out = ts_strdup(p->a, buf);
        return *out ? 0 : ts_fail(p, where, NULL, "out of memory");
    }
    return ts_fail(p, where, v, "expected an expression such as \"%s\" or a non-negative integer",
                   example);
}

/* A number member >= lo (optional, default kept). */
int ts_get_num(pctx *p, const cJSON *obj, const char *key, const char *path, double lo, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return 0;
    char where[PATH_CAP];
    ts_join(where, path, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo) || !isfinite(v->valuedouble))
        return ts_fail(p, where, v, "expected a number >= %g", lo);
    *out = v->valuedouble;
    return 0;
}

int ts_get_i32(pctx *p, const cJSON *obj, const char *key, const char *path, int32_t lo,
               int32_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return 0;
    char where[PATH_CAP];
    ts_join(where, path, key);
    if (!ts_is_int(v, lo, INT32_MAX))
        return ts_fail(p, where, v, "expected an integer from %d to %d", (int)lo, INT32_MAX);
    *out = (int32_t)v->valuedouble;
    return 0;
}

/* Reads a file named relative to the spec's directory: a regular file of
 * at most max_bytes (util/file.h). */
int ts_read_rel(pctx *p, const char *where, const cJSON *name, size_t max_bytes, char **text,
                size_t *len)
{
    const char *n = name->valuestring;
    char full[4096], why[128];
    if (n[0] == '/' || !p->dir || !*p->dir)
        snprintf(full, sizeof full, "%s", n);
    else
        snprintf(full, sizeof full, "%s/%s", p->dir, n);
    char *buf = NULL;
    size_t used = 0;
    if (gpo_file_read(full, max_bytes, &buf, &used, why, sizeof why))
        return ts_fail(p, where, name, "the file cannot be %s: %s: %s",
                       errno == EFBIG || errno == EIO ? "read" : "opened", full, why);
    *text = ts_strndup(p->a, buf, used);
    free(buf);
    if (!*text)
        return ts_fail(p, where, NULL, "out of memory reading %s", full);
    if (len)
        *len = used;
    return 0;
}

int ts_valid_ident(const char *s)
{
    if (!s || !*s || strlen(s) > 63 || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (const char *c = s; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return 0;
    return 1;
}

/* A program: {"file" or "source", "entry", "build_options"}; for the
 * kernel also "language". */
int ts_parse_program(pctx *p, const cJSON *o, const char *path, const char **source,
                     const char **file, const char **entry, const char **options)
{
    char where[PATH_CAP];
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "file");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "source");
    if (f && src)
        return ts_fail(p, path, NULL, "give either \"file\" or \"source\", not both");
    if (!f && !src)
        return ts_fail(p, path, NULL,
                       "missing \"file\" (a kernel source file, relative to the "
                       "spec) or \"source\" (the source text)");
    if (f) {
        ts_join(where, path, "file");
        if (!cJSON_IsString(f) || !*f->valuestring)
            return ts_fail(p, where, f, "expected a file name relative to the spec");
        char *text;
        if (ts_read_rel(p, where, f, TS_MAX_SOURCE_BYTES, &text, NULL))
            return -1;
        *source = text;
        *file = f->valuestring;
    } else {
        ts_join(where, path, "source");
        if (!cJSON_IsString(src) || !*src->valuestring)
            return ts_fail(p, where, src, "expected the kernel source as a non-empty string");
        *source = src->valuestring;
        *file = NULL;
    }
    if (ts_get_str(p, o, "entry", path, 1, 0, NULL, entry) ||
        ts_get_str(p, o, "build_options", path, 0, 1, "", options))
        return -1;
    ts_join(where, path, "entry");
    if (!ts_valid_ident(*entry))
        return ts_fail(p, where, cJSON_GetObjectItemCaseSensitive(o, "entry"),
                       "expected the kernel function's name (a C identifier)");
    return 0;
}
