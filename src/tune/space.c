/* Parameter spaces and their points (space.h): building a space
 * (parameters, problem sizes, constraints), its canonical text and hash,
 * the lazy walk over the legal space with counting and neighbourhoods,
 * uniform sampling, and points (one value index per parameter) read by
 * name. One module: every part reads the same private layout below. */
#include <assert.h>
#include <ctype.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "util/detail.h"
#include "util/hash.h"
#include "util/strutil.h"
#include "tune/space.h"

typedef struct gpo_param {
    char *name;
    int32_t kind;
    int32_t count;
    int64_t *values; /* integers, or positions 0..count-1 for enums */
    char **text;     /* each value as text */
} gpo_param;

typedef struct gpo_constraint {
    gpo_expr *expr; /* NULL for a callback */
    gpuopt_constraint_fn fn;
    void *user;
    char *id;
    int32_t depth; /* last parameter the expression reads; -1: sizes only */
} gpo_constraint;

struct gpuopt_space {
    atomic_int refs;
    gpo_param *params;
    int32_t nparams;
    char *size_names[GPO_SPACE_MAX_SIZES]; /* few, and bounded: held in place */
    int64_t size_values[GPO_SPACE_MAX_SIZES];
    int32_t nsizes;
    gpo_constraint *cons;
    int32_t ncons;
};

/* The depth at which constraint c can be checked in a space of its current
 * parameter count: callbacks may read anything, so they wait for the last. */
static int32_t constraint_depth(const gpuopt_space *s, const gpo_constraint *c)
{
    return c->expr ? c->depth : s->nparams - 1;
}

/* Checks constraint c against values `vals` (and the index vector, for
 * callbacks): 1 legal, 0 not (undefined counts as not). */
static int constraint_holds(const gpuopt_space *s, const gpo_constraint *c, const uint32_t *idx,
                            const int64_t *vals);

/* The deepest level any constraint needs; -1 when only sizes are tested. */
static int32_t last_constrained(const gpuopt_space *s);

/* Sizes-only constraints hold. */
static int sizes_hold(const gpuopt_space *s);

static gpuopt_status iter_init_depth(gpo_space_iter *it, const gpuopt_space *space, int32_t depth);

/* ---- validation helpers ---------------------------------------------------- */

static int is_identifier(const char *s)
{
    if (!s || !(*s == '_' || isalpha((unsigned char)*s)))
        return 0;
    size_t n = 0;
    for (; s[n]; n++)
        if (!(s[n] == '_' || isalnum((unsigned char)s[n])))
            return 0;
    return n <= GPO_EXPR_MAX_NAME;
}

static int32_t find_size(const gpuopt_space *s, const char *name)
{
    for (int32_t i = 0; i < s->nsizes; i++)
        if (strcmp(s->size_names[i], name) == 0)
            return i;
    return -1;
}

int32_t gpo_space_find_param(const gpuopt_space *s, const char *name)
{
    if (!s || !name)
        return -1;
    for (int32_t i = 0; i < s->nparams; i++)
        if (strcmp(s->params[i].name, name) == 0)
            return i;
    return -1;
}

static gpuopt_status check_new_name(const gpuopt_space *s, const char *what, const char *name)
{
    if (!is_identifier(name))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s name '%.80s' is not a C identifier of 1 to 63 characters", what,
                        name ? name : "(null)");
    if (gpo_space_find_param(s, name) >= 0 || find_size(s, name) >= 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s name '%s' is already used in the space",
                        what, name);
    return GPUOPT_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void param_free(gpo_param *p)
{
    if (p->text)
        for (int32_t k = 0; k < p->count; k++)
            free(p->text[k]);
    free(p->text);
    free(p->values);
    free(p->name);
}

static void constraint_free(gpo_constraint *c)
{
    gpo_expr_destroy(c->expr);
    free(c->id);
}

/* ---- lifecycle ------------------------------------------------------------ */

GPUOPT_API gpuopt_status gpuopt_space_create(gpuopt_space **out)
{
    gpo_detail_clear();
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_space_create: out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a space");
    atomic_init(&(*out)->refs, 1);
    return GPUOPT_OK;
}

void gpo_space_ref(const gpuopt_space *space)
{
    if (space)
        atomic_fetch_add(&((gpuopt_space *)space)->refs, 1);
}

void gpo_space_unref(const gpuopt_space *space)
{
    gpuopt_space *s = (gpuopt_space *)space;
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    for (int32_t i = 0; i < s->nparams; i++)
        param_free(&s->params[i]);
    free(s->params);
    for (int32_t i = 0; i < s->nsizes; i++)
        free(s->size_names[i]);
    for (int32_t i = 0; i < s->ncons; i++)
        constraint_free(&s->cons[i]);
    free(s->cons);
    free(s);
}

GPUOPT_API void gpuopt_space_destroy(gpuopt_space *space)
{
    gpo_space_unref(space);
}

/* ---- parameters ----------------------------------------------------------- */

static gpuopt_status add_param(gpuopt_space *s, const char *name, int32_t kind, const int64_t *ints,
                               const char *const *texts, int32_t count)
{
    gpuopt_status st;
    gpo_param p = {0};
    if (!s)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "space: NULL space");
    if ((st = check_new_name(s, "parameter", name)) != GPUOPT_OK)
        return st;
    if ((kind == GPO_PARAM_INT && !ints) || (kind == GPO_PARAM_ENUM && !texts))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "parameter %s: NULL values", name);
    if (count < 1 || count > GPO_SPACE_MAX_VALUES)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "parameter %s: %d values; 1 to %d accepted", name,
                        (int)count, GPO_SPACE_MAX_VALUES);
    if (s->nparams >= GPO_SPACE_MAX_PARAMS)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "parameter %s: a space holds at most %d", name,
                        GPO_SPACE_MAX_PARAMS);
    p.kind = kind;
    p.name = gpo_strdup(name);
    p.values = malloc((size_t)count * sizeof *p.values);
    p.text = calloc((size_t)count, sizeof *p.text);
    if (!p.name || !p.values || !p.text)
        goto oom;
    p.count = count;
    for (int32_t k = 0; k < count; k++) {
        if (kind == GPO_PARAM_INT) {
            p.values[k] = ints[k];
            p.text[k] = gpo_asprintf("%lld", (long long)ints[k]);
        } else {
            const char *t = texts[k];
            size_t n = t ? strlen(t) : 0;
            int ok = n > 0 && n <= 255;
            for (size_t i = 0; ok && i < n; i++)
                ok = t[i] > 0x20 && t[i] < 0x7f;
            if (!ok) {
                st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                              "parameter %s: value %d is %s; enum values are 1 to 255 printable "
                              "ASCII characters without spaces (they become -D%s=value)",
                              name, (int)k, t ? "not" : "NULL", name);
                goto out;
            }
            p.values[k] = k;
            p.text[k] = gpo_strdup(t);
        }
        if (!p.text[k])
            goto oom;
    }
    /* Duplicates: sort a copy of the texts (an integer's is its decimal,
     * one text per value) and compare neighbours. */
    char **sorted = malloc((size_t)count * sizeof *sorted);
    if (!sorted)
        goto oom;
    memcpy(sorted, p.text, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, cmp_str);
    const char *q = kind == GPO_PARAM_ENUM ? "'" : "";
    for (int32_t k = 1; k < count && st == GPUOPT_OK; k++)
        if (strcmp(sorted[k], sorted[k - 1]) == 0)
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "parameter %s: value %s%s%s appears twice",
                          name, q, sorted[k], q);
    free(sorted);
    if (st != GPUOPT_OK)
        goto out;
    gpo_param *grown = realloc(s->params, (size_t)(s->nparams + 1) * sizeof *grown);
    if (!grown)
        goto oom;
    s->params = grown;
    s->params[s->nparams++] = p;
    memset(&p, 0, sizeof p);
out:
    param_free(&p);
    return st;
oom:
    st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding parameter %s", name);
    goto out;
}

GPUOPT_API gpuopt_status gpuopt_space_add_int(gpuopt_space *space, const char *name,
                                              const int64_t *values, int32_t count)
{
    gpo_detail_clear();
    return add_param(space, name, GPO_PARAM_INT, values, NULL, count);
}

GPUOPT_API gpuopt_status gpuopt_space_add_enum(gpuopt_space *space, const char *name,
                                               const char *const *values, int32_t count)
{
    gpo_detail_clear();
    return add_param(space, name, GPO_PARAM_ENUM, NULL, values, count);
}

/* ---- sizes ---------------------------------------------------------------- */

GPUOPT_API gpuopt_status gpuopt_space_set_size(gpuopt_space *space, const char *name, int64_t value)
{
    gpo_detail_clear();
    if (!space || !name)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_space_set_size: NULL argument");
    int32_t i = find_size(space, name);
    if (i >= 0) {
        space->size_values[i] = value;
        return GPUOPT_OK;
    }
    gpuopt_status st = check_new_name(space, "size", name);
    if (st != GPUOPT_OK)
        return st;
    if (space->nsizes >= GPO_SPACE_MAX_SIZES)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "size %s: a space holds at most %d sizes", name,
                        GPO_SPACE_MAX_SIZES);
    char *copy = gpo_strdup(name);
    if (!copy)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding size %s", name);
    space->size_names[space->nsizes] = copy;
    space->size_values[space->nsizes++] = value;
    return GPUOPT_OK;
}

/* ---- constraints ------------------------------------------------------------ */

gpuopt_status gpo_space_bind(const gpuopt_space *s, gpo_expr *e, const char *what)
{
    assert(s && e);
    for (int32_t v = 0; v < gpo_expr_var_count(e); v++) {
        const char *name = gpo_expr_var_name(e, v);
        int32_t p = gpo_space_find_param(s, name), z = find_size(s, name);
        if (p >= 0) {
            gpo_expr_bind(e, v, GPO_EXPR_PARAM, p);
        } else if (z >= 0) {
            gpo_expr_bind(e, v, GPO_EXPR_SIZE, z);
        } else {
            gpo_sbuf known;
            gpo_sbuf_init(&known);
            for (int32_t i = 0; i < s->nparams; i++)
                gpo_sbuf_appendf(&known, "%s%s", i ? ", " : "", s->params[i].name);
            for (int32_t i = 0; i < s->nsizes; i++)
                gpo_sbuf_appendf(&known, "%s%s", i || s->nparams ? ", " : "", s->size_names[i]);
            gpuopt_status st = gpo_fail(
                GPUOPT_ERR_NOT_FOUND, "%s '%.200s': unknown name '%s' (known: %s)",
                what ? what : "expression", gpo_expr_source(e), name,
                known.len ? known.data : "none; sizes must be set before expressions use them");
            gpo_sbuf_free(&known);
            return st;
        }
    }
    return GPUOPT_OK;
}

static gpuopt_status push_constraint(gpuopt_space *s, gpo_constraint *c)
{
    if (s->ncons >= GPO_SPACE_MAX_CONSTRAINTS)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "a space holds at most %d constraints",
                        GPO_SPACE_MAX_CONSTRAINTS);
    gpo_constraint *grown = realloc(s->cons, (size_t)(s->ncons + 1) * sizeof *grown);
    if (!grown)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding a constraint");
    s->cons = grown;
    s->cons[s->ncons++] = *c;
    memset(c, 0, sizeof *c);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_space_add_constraint(gpuopt_space *space, const char *expression)
{
    gpo_detail_clear();
    gpo_constraint c = {0};
    gpuopt_status st;
    if (!space || !expression)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_space_add_constraint: NULL argument");
    if ((st = gpo_expr_parse(expression, &c.expr)) != GPUOPT_OK)
        goto out;
    if ((st = gpo_space_bind(space, c.expr, "constraint")) != GPUOPT_OK)
        goto out;
    c.depth = -1;
    for (int32_t v = 0; v < gpo_expr_var_count(c.expr); v++)
        if (gpo_expr_var_kind(c.expr, v) == GPO_EXPR_PARAM &&
            gpo_expr_var_index(c.expr, v) > c.depth)
            c.depth = gpo_expr_var_index(c.expr, v);
    st = push_constraint(space, &c);
out:
    constraint_free(&c);
    return st;
}

GPUOPT_API gpuopt_status gpuopt_space_add_constraint_fn(gpuopt_space *space,
                                                        gpuopt_constraint_fn fn, void *user,
                                                        const char *id)
{
    gpo_detail_clear();
    if (!space || !fn || !id)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_space_add_constraint_fn: NULL space, function or id");
    size_t n = strlen(id);
    int ok = n > 0 && n <= 255;
    for (size_t i = 0; ok && i < n; i++)
        ok = id[i] >= 0x20 && id[i] < 0x7f;
    if (!ok)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "constraint id '%.80s' must be 1 to 255 printable ASCII characters", id);
    for (int32_t i = 0; i < space->ncons; i++)
        if (space->cons[i].id && strcmp(space->cons[i].id, id) == 0)
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "constraint id '%s' is already used in the space", id);
    gpo_constraint c = {NULL, fn, user, gpo_strdup(id), 0};
    if (!c.id)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding a constraint");
    gpuopt_status st = push_constraint(space, &c);
    constraint_free(&c);
    return st;
}

/* ---- reading ---------------------------------------------------------------- */

int32_t gpo_space_param_count(const gpuopt_space *s)
{
    return s ? s->nparams : 0;
}

const char *gpo_space_param_name(const gpuopt_space *s, int32_t p)
{
    return s && p >= 0 && p < s->nparams ? s->params[p].name : NULL;
}

int32_t gpo_space_value_count(const gpuopt_space *s, int32_t p)
{
    return s && p >= 0 && p < s->nparams ? s->params[p].count : 0;
}

int64_t gpo_space_value(const gpuopt_space *s, int32_t p, uint32_t k)
{
    return s && p >= 0 && p < s->nparams && k < (uint32_t)s->params[p].count
               ? s->params[p].values[k]
               : 0;
}

const char *gpo_space_value_text(const gpuopt_space *s, int32_t p, uint32_t k)
{
    return s && p >= 0 && p < s->nparams && k < (uint32_t)s->params[p].count ? s->params[p].text[k]
                                                                             : NULL;
}

int32_t gpo_space_size_count(const gpuopt_space *s)
{
    return s ? s->nsizes : 0;
}

const char *gpo_space_size_name(const gpuopt_space *s, int32_t i)
{
    return s && i >= 0 && i < s->nsizes ? s->size_names[i] : NULL;
}

const int64_t *gpo_space_size_values(const gpuopt_space *s)
{
    return s ? s->size_values : NULL;
}

/* ---- legality ---------------------------------------------------------------- */

static int constraint_holds(const gpuopt_space *s, const gpo_constraint *c, const uint32_t *idx,
                            const int64_t *vals)
{
    if (c->expr) {
        int64_t v;
        return gpo_expr_eval(c->expr, vals, s->nparams, s->size_values, s->nsizes, &v) ==
                   GPO_EXPR_OK &&
               v != 0;
    }
    gpuopt_point cfg;
    gpo_point_borrow(&cfg, s, idx);
    return c->fn(&cfg, c->user) != 0;
}

static int sizes_hold(const gpuopt_space *s)
{
    for (int32_t i = 0; i < s->ncons; i++)
        if (constraint_depth(s, &s->cons[i]) < 0 && !constraint_holds(s, &s->cons[i], NULL, NULL))
            return 0;
    return 1;
}

static int32_t last_constrained(const gpuopt_space *s)
{
    int32_t last = -1;
    for (int32_t i = 0; i < s->ncons; i++) {
        int32_t d = constraint_depth(s, &s->cons[i]);
        if (d > last)
            last = d;
    }
    return last;
}

int gpo_space_eval(const gpuopt_space *s, const uint32_t *idx, const gpo_expr *e, int64_t *out)
{
    if (!s || !idx || !e || !out)
        return GPO_EXPR_UNDEFINED;
    int64_t vals[GPO_SPACE_MAX_PARAMS];
    for (int32_t p = 0; p < s->nparams; p++) {
        if (idx[p] >= (uint32_t)s->params[p].count)
            return GPO_EXPR_UNDEFINED;
        vals[p] = s->params[p].values[idx[p]];
    }
    return gpo_expr_eval(e, vals, s->nparams, s->size_values, s->nsizes, out);
}

int gpo_space_is_legal(const gpuopt_space *s, const uint32_t *idx)
{
    if (!s || !idx)
        return 0;
    int64_t vals[GPO_SPACE_MAX_PARAMS];
    for (int32_t p = 0; p < s->nparams; p++) {
        if (idx[p] >= (uint32_t)s->params[p].count)
            return 0;
        vals[p] = s->params[p].values[idx[p]];
    }
    /* Expressions first, callbacks last, as in the walk. */
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < s->ncons; i++)
            if ((s->cons[i].expr != NULL) == (pass == 0) &&
                !constraint_holds(s, &s->cons[i], idx, vals))
                return 0;
    return 1;
}

int gpo_space_raw_size(const gpuopt_space *s, uint64_t *raw)
{
    uint64_t r = 1;
    int fits = 1;
    for (int32_t p = 0; s && p < s->nparams; p++)
        if (__builtin_mul_overflow(r, (uint64_t)s->params[p].count, &r)) {
            r = UINT64_MAX;
            fits = 0;
            break;
        }
    if (raw)
        *raw = r;
    return fits ? 0 : -1;
}

GPUOPT_API gpuopt_status gpuopt_space_count(const gpuopt_space *space, uint64_t *raw,
                                            uint64_t *legal)
{
    gpo_detail_clear();
    if (raw)
        *raw = 0;
    if (legal)
        *legal = 0;
    if (!space || !raw)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_space_count: %s is NULL",
                        space ? "raw" : "space");
    if (legal) {
        int exact;
        gpuopt_status st = gpo_space_count_legal(space, 0, 0, legal, &exact);
        if (st != GPUOPT_OK) {
            *legal = 0;
            return st;
        }
    }
    gpo_space_raw_size(space, raw);
    return GPUOPT_OK;
}

/* ---- copy --------------------------------------------------------------------- */

gpuopt_status gpo_space_clone(const gpuopt_space *s, gpuopt_space **out)
{
    gpuopt_status st;
    gpuopt_space *c = NULL;
    assert(s && out);
    *out = NULL;
    if ((st = gpuopt_space_create(&c)) != GPUOPT_OK)
        return st;
    for (int32_t p = 0; p < s->nparams && st == GPUOPT_OK; p++)
        st = add_param(c, s->params[p].name, s->params[p].kind, s->params[p].values,
                       (const char *const *)s->params[p].text, s->params[p].count);
    for (int32_t i = 0; i < s->nsizes && st == GPUOPT_OK; i++)
        st = gpuopt_space_set_size(c, s->size_names[i], s->size_values[i]);
    for (int32_t i = 0; i < s->ncons && st == GPUOPT_OK; i++) {
        gpo_constraint k = s->cons[i];
        k.id = NULL;
        k.expr = NULL;
        if (s->cons[i].expr)
            st = gpo_expr_clone(s->cons[i].expr, &k.expr);
        else if (!(k.id = gpo_strdup(s->cons[i].id)))
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a space");
        if (st == GPUOPT_OK)
            st = push_constraint(c, &k);
        constraint_free(&k);
    }
    if (st != GPUOPT_OK) {
        gpo_space_unref(c);
        return st;
    }
    *out = c;
    return GPUOPT_OK;
}

/* The space's canonical description and hash (cache keys), and the hash
 * of an index vector (the search's tables). */

gpuopt_status gpo_space_canonical(const gpuopt_space *s, char **text)
{
    gpuopt_status st = GPUOPT_OK;
    assert(s && text);
    int32_t n = 0, cap = s->nparams + s->ncons;
    char **lines = NULL;
    gpo_sbuf out;
    gpo_sbuf_init(&out);
    *text = NULL;
    lines = calloc((size_t)cap + 1, sizeof *lines);
    if (!lines)
        goto oom;
    for (int32_t p = 0; p < s->nparams; p++) {
        const gpo_param *pr = &s->params[p];
        gpo_sbuf b;
        gpo_sbuf_init(&b);
        if (pr->kind == GPO_PARAM_INT) {
            int64_t *v = malloc((size_t)pr->count * sizeof *v);
            if (!v)
                goto oom;
            memcpy(v, pr->values, (size_t)pr->count * sizeof *v);
            qsort(v, (size_t)pr->count, sizeof *v, cmp_i64);
            gpo_sbuf_appendf(&b, "int %s", pr->name);
            for (int32_t k = 0; k < pr->count; k++)
                gpo_sbuf_appendf(&b, "%s%lld", k ? "," : " ", (long long)v[k]);
            free(v);
        } else {
            /* In the given order: expressions see an enum by position, so
             * reordering its values changes what constraints mean.
             * Length-prefixed: enum values may contain commas. */
            gpo_sbuf_appendf(&b, "enum %s", pr->name);
            for (int32_t k = 0; k < pr->count; k++)
                gpo_sbuf_appendf(&b, " %zu:%s", strlen(pr->text[k]), pr->text[k]);
        }
        if (!(lines[n++] = gpo_sbuf_take(&b)))
            goto oom;
    }
    for (int32_t i = 0; i < s->ncons; i++) {
        const gpo_constraint *c = &s->cons[i];
        lines[n] = c->expr ? gpo_asprintf("constraint %s", gpo_expr_text(c->expr))
                           : gpo_asprintf("callback %s", c->id);
        if (!lines[n++])
            goto oom;
    }
    qsort(lines, (size_t)n, sizeof *lines, cmp_str);
    gpo_sbuf_append(&out, "gpuopt-space 1\n");
    for (int32_t i = 0; i < n; i++)
        gpo_sbuf_appendf(&out, "%s\n", lines[i]);
    if (!(*text = gpo_sbuf_take(&out)))
        goto oom;
    goto out;
oom:
    st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory describing a space");
out:
    for (int32_t i = 0; lines && i < n; i++)
        free(lines[i]);
    free(lines);
    gpo_sbuf_free(&out);
    return st;
}

uint64_t gpo_space_idx_hash(const gpuopt_space *s, const uint32_t *idx)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int32_t p = 0; s && idx && p < s->nparams; p++)
        h = gpo_hash_mix64(h ^ (idx[p] + 0x100000001b3ull * (uint64_t)(p + 1)));
    return h;
}

/* The lazy walk over the legal space, counting, and neighbourhoods.
 *
 * The walk is an odometer over value indices, parameter 0 outermost. At
 * level d it assigns parameter d and tests the constraints whose deepest
 * parameter is d; a failure advances parameter d without descending, which
 * skips every completion of that prefix at once. Memory is O(parameters +
 * constraints) whatever the size of the space. */

enum { FRESH = 0, CHECK = 1, RETURNED = 2, DONE = 3 };

static gpuopt_status iter_init_depth(gpo_space_iter *it, const gpuopt_space *s, int32_t depth)
{
    assert(it && s);
    memset(it, 0, sizeof *it);
    int32_t n = s->nparams;
    it->space = s;
    it->depth = depth < n - 1 ? depth : n - 1;
    it->idx = calloc((size_t)n + 1, sizeof *it->idx);
    it->vals = calloc((size_t)n + 1, sizeof *it->vals);
    it->order = calloc((size_t)s->ncons + 1, sizeof *it->order);
    it->first = calloc((size_t)n + 2, sizeof *it->first);
    if (!it->idx || !it->vals || !it->order || !it->first) {
        gpo_space_iter_free(it);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory walking a space");
    }
    /* Counting sort of the constraints by depth (-1 .. n-1). */
    for (int32_t i = 0; i < s->ncons; i++)
        it->first[constraint_depth(s, &s->cons[i]) + 1 + 1]++;
    for (int32_t d = 1; d <= n + 1; d++)
        it->first[d] += it->first[d - 1];
    int32_t *fill = calloc((size_t)n + 2, sizeof *fill);
    if (!fill) {
        gpo_space_iter_free(it);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory walking a space");
    }
    memcpy(fill, it->first, ((size_t)n + 1) * sizeof *fill);
    /* Within a depth, expressions before callbacks: callbacks are the
     * user's code and may be slow, and the header promises they only see
     * configurations every expression accepted. */
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < s->ncons; i++)
            if ((s->cons[i].expr != NULL) == (pass == 0))
                it->order[fill[constraint_depth(s, &s->cons[i]) + 1]++] = i;
    free(fill);
    it->state = FRESH;
    return GPUOPT_OK;
}

gpuopt_status gpo_space_iter_init(gpo_space_iter *it, const gpuopt_space *space)
{
    return iter_init_depth(it, space, space ? space->nparams - 1 : 0);
}

void gpo_space_iter_free(gpo_space_iter *it)
{
    if (!it)
        return;
    free(it->idx);
    free(it->vals);
    free(it->order);
    free(it->first);
    memset(it, 0, sizeof *it);
}

void gpo_space_iter_seek(gpo_space_iter *it, const uint32_t *idx)
{
    if (!it || !it->idx || !idx)
        return;
    memcpy(it->idx, idx, (size_t)it->space->nparams * sizeof *idx);
    it->level = 0;
    it->seeking = 1;
    it->gave_up = 0;
    it->state = sizes_hold(it->space) ? CHECK : DONE;
}

static int level_holds(gpo_space_iter *it, int32_t d)
{
    const gpuopt_space *s = it->space;
    for (int32_t k = it->first[d + 1]; k < it->first[d + 2]; k++)
        if (!constraint_holds(s, &s->cons[it->order[k]], it->idx, it->vals))
            return 0;
    return 1;
}

int gpo_space_iter_next(gpo_space_iter *it)
{
    if (!it || !it->idx || it->state == DONE)
        return 0;
    const gpuopt_space *s = it->space;
    if (it->depth < 0) { /* no parameters: only the empty configuration */
        int first = it->state != RETURNED && sizes_hold(s);
        it->state = first ? RETURNED : DONE;
        return first;
    }
    if (it->state == FRESH) {
        if (!sizes_hold(s)) {
            it->state = DONE;
            return 0;
        }
        memset(it->idx, 0, (size_t)s->nparams * sizeof *it->idx);
        it->level = 0;
        it->seeking = 0;
    } else if (it->state == RETURNED) {
        it->idx[it->level]++;
    }
    it->state = CHECK;
    int32_t d = it->level;
    for (;; it->steps++) {
        if (it->max_steps && it->steps >= it->max_steps) {
            it->gave_up = 1;
            it->state = DONE;
            return 0;
        }
        if (it->idx[d] >= (uint32_t)s->params[d].count) {
            if (d == 0) {
                it->state = DONE;
                return 0;
            }
            it->seeking = 0;
            d--;
            it->idx[d]++;
            continue;
        }
        it->vals[d] = s->params[d].values[it->idx[d]];
        if (!level_holds(it, d)) {
            it->seeking = 0;
            it->idx[d]++;
            continue;
        }
        if (d == it->depth)
            break;
        d++;
        if (!it->seeking)
            it->idx[d] = 0;
    }
    it->seeking = 0;
    it->level = d;
    it->state = RETURNED;
    return 1;
}

gpuopt_status gpo_space_count_legal(const gpuopt_space *s, uint64_t limit, uint64_t max_steps,
                                    uint64_t *count, int *exact)
{
    assert(s && count && exact);
    *count = 0;
    *exact = 1;
    /* Parameters after the last constrained one never make a prefix
     * illegal: each legal prefix stands for the product of their counts. */
    int32_t last = last_constrained(s);
    uint64_t tail = 1;
    for (int32_t p = last + 1; p < s->nparams; p++)
        if (__builtin_mul_overflow(tail, (uint64_t)s->params[p].count, &tail))
            tail = UINT64_MAX;
    if (last < 0) {
        *count = sizes_hold(s) ? tail : 0;
        if (limit && *count > limit)
            *exact = 0;
        return GPUOPT_OK;
    }
    gpo_space_iter it;
    gpuopt_status st = iter_init_depth(&it, s, last);
    if (st != GPUOPT_OK)
        return st;
    it.max_steps = max_steps;
    uint64_t n = 0;
    while (gpo_space_iter_next(&it)) {
        if (__builtin_add_overflow(n, tail, &n))
            n = UINT64_MAX;
        if (limit && n > limit) {
            *exact = 0;
            break;
        }
    }
    if (it.gave_up)
        *exact = 0;
    gpo_space_iter_free(&it);
    *count = n;
    return GPUOPT_OK;
}

/* ---- neighbours ----------------------------------------------------------------- */

int32_t gpo_space_neighbour_max(const gpuopt_space *s, int flags)
{
    if (!s)
        return 0;
    int32_t n = s->nparams;
    return 2 * n + ((flags & GPO_NB_PAIRS) ? 2 * n * (n - 1) : 0);
}

gpuopt_status gpo_space_neighbours(const gpuopt_space *s, const uint32_t *idx, int flags,
                                   uint32_t *out, int32_t max, int32_t *n)
{
    assert(s && idx && out && n && max >= 0);
    *n = 0;
    int32_t np = s->nparams;
    uint32_t cand[GPO_SPACE_MAX_PARAMS];
    for (int32_t p = 0; p < np; p++)
        if (idx[p] >= (uint32_t)s->params[p].count)
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "neighbours: index %u of %s out of range",
                            idx[p], s->params[p].name);
    int32_t got = 0;
    for (int32_t p = 0; p < np && got < max; p++) {
        for (int dir = -1; dir <= 1 && got < max; dir += 2) {
            memcpy(cand, idx, (size_t)np * sizeof *cand);
            for (int64_t k = (int64_t)idx[p] + dir; k >= 0 && k < s->params[p].count; k += dir) {
                cand[p] = (uint32_t)k;
                if (gpo_space_is_legal(s, cand)) {
                    memcpy(out + (size_t)got * (size_t)np, cand, (size_t)np * sizeof *cand);
                    got++;
                    break;
                }
                if (!(flags & GPO_NB_NEAREST_LEGAL))
                    break;
            }
        }
    }
    if (flags & GPO_NB_PAIRS) {
        for (int32_t p = 0; p < np; p++)
            for (int32_t q = p + 1; q < np; q++)
                for (int dp = -1; dp <= 1; dp += 2)
                    for (int dq = -1; dq <= 1 && got < max; dq += 2) {
                        int64_t a = (int64_t)idx[p] + dp, b = (int64_t)idx[q] + dq;
                        if (a < 0 || a >= s->params[p].count || b < 0 || b >= s->params[q].count)
                            continue;
                        memcpy(cand, idx, (size_t)np * sizeof *cand);
                        cand[p] = (uint32_t)a;
                        cand[q] = (uint32_t)b;
                        if (gpo_space_is_legal(s, cand))
                            memcpy(out + (size_t)got++ * (size_t)np, cand,
                                   (size_t)np * sizeof *cand);
                    }
    }
    *n = got;
    return GPUOPT_OK;
}

/* Uniform sampling of legal configurations without materialising the space.
 *
 * Three modes, chosen by what the space turns out to be:
 *
 * rejection  Draw every index uniformly from the raw product and keep the
 *            draw if it is legal. Exact, no memory, and fast while the
 *            legal fraction is not tiny: 1/f tries per draw on average.
 * index      When rejection keeps failing (under 1 legal in 32 over at
 *            least 256 tries, or 256 misses in a row), walk the space once
 *            up to its last constrained parameter and keep every legal
 *            prefix, bit-packed into one uint64 (each parameter takes
 *            ceil(log2(count)) bits). A draw picks a prefix uniformly and
 *            completes it with uniform free parameters: every prefix has
 *            the same number of completions, so the draw is uniform over
 *            the legal space. At most GPO_SAMPLER_INDEX_MAX prefixes
 *            (8 bytes each, 16 MiB).
 * walk       When the index does not fit (too many prefixes, more than
 *            64 bits of prefix, or more than 2^26 walk steps to build):
 *            a uniform raw point, then the next legal configuration in
 *            walk order, wrapping. Favours configurations that follow long
 *            illegal runs, and gives up (no draw) after 2^24 steps: a
 *            space whose constraints only close on its last parameters
 *            while nearly all of it is illegal cannot be sampled cheaply
 *            by any of the three.
 */

#define GPO_SAMPLER_INDEX_MAX (1u << 21)
#define GPO_SAMPLER_INDEX_STEPS (1ull << 26) /* walk steps to build the index */
#define GPO_SAMPLER_WALK_STEPS (1ull << 24)  /* walk steps per draw in walk mode */
#define REJECT_STREAK 256
#define REJECT_MIN_TRIES 256
#define REJECT_MIN_RATE (1.0 / 32)

enum { MODE_REJECT, MODE_INDEX, MODE_WALK, MODE_EMPTY };

struct gpo_sampler {
    const gpuopt_space *space;
    int mode;
    uint64_t tries, hits;
    uint64_t *index;
    uint64_t nindex;
    int32_t prefix; /* last parameter stored in the index */
    uint8_t bits[GPO_SPACE_MAX_PARAMS];
    gpo_space_iter walk;
    int walk_ready;
};

gpuopt_status gpo_sampler_create(const gpuopt_space *space, gpo_sampler **out)
{
    assert(space && out);
    *out = NULL;
    gpo_sampler *sm = calloc(1, sizeof *sm);
    if (!sm)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a sampler");
    gpo_space_ref(space);
    sm->space = space;
    sm->mode = sizes_hold(space) ? MODE_REJECT : MODE_EMPTY;
    *out = sm;
    return GPUOPT_OK;
}

void gpo_sampler_destroy(gpo_sampler *sm)
{
    if (!sm)
        return;
    free(sm->index);
    if (sm->walk_ready)
        gpo_space_iter_free(&sm->walk);
    gpo_space_unref(sm->space);
    free(sm);
}

const char *gpo_sampler_mode(const gpo_sampler *sm)
{
    static const char *const names[] = {"rejection", "index", "walk", "empty"};
    return sm ? names[sm->mode] : "none";
}

uint64_t gpo_sampler_bytes(const gpo_sampler *sm)
{
    return sm ? sm->nindex * sizeof *sm->index : 0;
}

static void draw_raw(const gpuopt_space *s, gpo_rng *rng, int32_t from, uint32_t *idx)
{
    for (int32_t p = from; p < s->nparams; p++)
        idx[p] = (uint32_t)gpo_rng_below(rng, (uint64_t)s->params[p].count);
}

static int bits_for(int32_t count)
{
    int b = 0;
    while (b < 31 && ((int64_t)1 << b) < count)
        b++;
    return b;
}

/* Builds the prefix index; falls back to MODE_WALK when it cannot. */
static void build_index(gpo_sampler *sm)
{
    const gpuopt_space *s = sm->space;
    int32_t last = last_constrained(s);
    int total = 0;
    for (int32_t p = 0; p <= last; p++)
        total += sm->bits[p] = (uint8_t)bits_for(s->params[p].count);
    sm->mode = MODE_WALK;
    if (last < 0 || total > 64)
        return;
    gpo_space_iter it;
    if (iter_init_depth(&it, s, last) != GPUOPT_OK)
        return;
    it.max_steps = GPO_SAMPLER_INDEX_STEPS;
    size_t cap = 0, n = 0;
    uint64_t *index = NULL;
    int ok = 1;
    while (ok && gpo_space_iter_next(&it)) {
        if (n == GPO_SAMPLER_INDEX_MAX || gpo_grow(&index, sizeof *index, n, &cap, 1024)) {
            ok = 0;
            break;
        }
        uint64_t key = 0;
        for (int32_t p = 0; p <= last; p++)
            key = (sm->bits[p] == 64 ? 0 : key << sm->bits[p]) | it.idx[p];
        index[n++] = key;
    }
    if (it.gave_up)
        ok = 0;
    gpo_space_iter_free(&it);
    if (!ok) {
        free(index);
        return;
    }
    if (n == 0) {
        free(index);
        sm->mode = MODE_EMPTY;
        return;
    }
    uint64_t *fit = realloc(index, n * sizeof *fit);
    sm->index = fit ? fit : index;
    sm->nindex = n;
    sm->prefix = last;
    sm->mode = MODE_INDEX;
}

static int draw_walk(gpo_sampler *sm, gpo_rng *rng, uint32_t *idx)
{
    const gpuopt_space *s = sm->space;
    if (!sm->walk_ready) {
        if (gpo_space_iter_init(&sm->walk, s) != GPUOPT_OK)
            return 0;
        sm->walk_ready = 1;
    }
    draw_raw(s, rng, 0, idx);
    sm->walk.steps = 0;
    sm->walk.max_steps = GPO_SAMPLER_WALK_STEPS;
    gpo_space_iter_seek(&sm->walk, idx);
    if (!gpo_space_iter_next(&sm->walk)) {
        if (sm->walk.gave_up)
            return 0;
        memset(idx, 0, (size_t)s->nparams * sizeof *idx);
        gpo_space_iter_seek(&sm->walk, idx);
        if (!gpo_space_iter_next(&sm->walk)) {
            if (!sm->walk.gave_up)
                sm->mode = MODE_EMPTY;
            return 0;
        }
    }
    memcpy(idx, sm->walk.idx, (size_t)s->nparams * sizeof *idx);
    return 1;
}

int gpo_sampler_draw(gpo_sampler *sm, gpo_rng *rng, uint32_t *idx)
{
    if (!sm || !rng || !idx)
        return 0;
    const gpuopt_space *s = sm->space;
    if (sm->mode == MODE_REJECT) {
        for (int streak = 0; streak < REJECT_STREAK; streak++) {
            sm->tries++;
            draw_raw(s, rng, 0, idx);
            if (gpo_space_is_legal(s, idx)) {
                sm->hits++;
                return 1;
            }
            if (sm->tries >= REJECT_MIN_TRIES && (double)sm->hits < REJECT_MIN_RATE * sm->tries)
                break;
        }
        build_index(sm);
    }
    if (sm->mode == MODE_INDEX) {
        uint64_t key = sm->index[gpo_rng_below(rng, sm->nindex)];
        for (int32_t p = sm->prefix; p >= 0; p--) {
            idx[p] = (uint32_t)(key & ((1ull << sm->bits[p]) - 1));
            key = sm->bits[p] >= 64 ? 0 : key >> sm->bits[p];
        }
        draw_raw(s, rng, sm->prefix + 1, idx);
        return 1;
    }
    if (sm->mode == MODE_WALK)
        return draw_walk(sm, rng, idx);
    return 0;
}

/* ---- points: one value index per parameter, read by name ---------------------- */

gpuopt_status gpo_point_create(const gpuopt_space *space, const uint32_t *idx, gpuopt_point **out)
{
    assert(space && idx && out);
    *out = NULL;
    for (int32_t p = 0; p < space->nparams; p++)
        if (idx[p] >= (uint32_t)space->params[p].count)
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "config: index %u of parameter %s is past its %d values", idx[p],
                            space->params[p].name, (int)space->params[p].count);
    gpuopt_point *c = calloc(1, sizeof *c);
    uint32_t *copy = calloc((size_t)space->nparams + 1, sizeof *copy);
    if (!c || !copy) {
        free(c);
        free(copy);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a configuration");
    }
    memcpy(copy, idx, (size_t)space->nparams * sizeof *copy);
    gpo_space_ref(space);
    c->space = space;
    c->idx = copy;
    c->owned = 1;
    *out = c;
    return GPUOPT_OK;
}

void gpo_point_destroy(gpuopt_point *c)
{
    if (!c || !c->owned)
        return;
    free((void *)c->idx);
    gpo_space_unref(c->space);
    free(c);
}

void gpo_point_borrow(gpuopt_point *c, const gpuopt_space *space, const uint32_t *idx)
{
    if (!c)
        return;
    c->space = space;
    c->idx = idx;
    c->owned = 0;
}

const gpuopt_space *gpo_point_space(const gpuopt_point *c)
{
    return c ? c->space : NULL;
}

const uint32_t *gpo_point_indices(const gpuopt_point *c)
{
    return c ? c->idx : NULL;
}

/* Finds the parameter for a public read; sets the detail on failure. */
/* The parameter `name` of a point, for the public readers; `fn` names the
 * caller in the detail. */
static gpuopt_status lookup(const gpuopt_point *c, const char *name, const void *value,
                            const char *fn, int32_t *p)
{
    if (!c || !c->space || !name || !value)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                        !c || !c->space ? "point"
                        : !name         ? "name"
                                        : "value");
    *p = gpo_space_find_param(c->space, name);
    if (*p < 0)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND, "%s: the point has no parameter '%.80s'", fn, name);
    if (!c->idx || c->idx[*p] >= (uint32_t)c->space->params[*p].count)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s: the value of %s is out of range", fn, name);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_point_get_int(const gpuopt_point *point, const char *name,
                                              int64_t *value)
{
    gpo_detail_clear();
    if (value)
        *value = 0;
    int32_t p;
    gpuopt_status st = lookup(point, name, value, "gpuopt_point_get_int", &p);
    if (st == GPUOPT_OK)
        *value = point->space->params[p].values[point->idx[p]];
    return st;
}

GPUOPT_API gpuopt_status gpuopt_point_get_text(const gpuopt_point *point, const char *name,
                                               const char **value)
{
    gpo_detail_clear();
    if (value)
        *value = NULL;
    int32_t p;
    gpuopt_status st = lookup(point, name, value, "gpuopt_point_get_text", &p);
    if (st == GPUOPT_OK)
        *value = point->space->params[p].text[point->idx[p]];
    return st;
}

GPUOPT_API gpuopt_status gpuopt_point_to_string(const gpuopt_point *point, char **text)
{
    gpo_detail_clear();
    if (text)
        *text = NULL;
    if (!point || !point->space || !text || (!point->idx && point->space->nparams))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_point_to_string: %s is NULL",
                        text ? "point" : "text");
    const gpuopt_space *s = point->space;
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    for (int32_t p = 0; p < s->nparams; p++) {
        if (point->idx[p] >= (uint32_t)s->params[p].count) {
            gpo_sbuf_free(&b);
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "gpuopt_point_to_string: the value of %s is out of range",
                            s->params[p].name);
        }
        gpo_sbuf_appendf(&b, "%s%s=%s", p ? " " : "", s->params[p].name,
                         s->params[p].text[point->idx[p]]);
    }
    *text = gpo_sbuf_take(&b);
    if (!*text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory formatting a point");
    return GPUOPT_OK;
}

cJSON *gpo_point_params_json(const gpuopt_point *c)
{
    const gpuopt_space *s = gpo_point_space(c);
    const uint32_t *idx = gpo_point_indices(c);
    cJSON *o = cJSON_CreateObject();
    for (int32_t p = 0; o && p < gpo_space_param_count(s); p++) {
        const char *name = gpo_space_param_name(s, p);
        cJSON *v = s->params[p].kind == GPO_PARAM_INT
                       ? cJSON_AddNumberToObject(o, name, (double)gpo_space_value(s, p, idx[p]))
                       : cJSON_AddStringToObject(o, name, gpo_space_value_text(s, p, idx[p]));
        if (!v) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

int gpo_space_params_idx(const gpuopt_space *s, const cJSON *params, uint32_t *idx)
{
    int32_t np = gpo_space_param_count(s);
    if (!cJSON_IsObject(params) || cJSON_GetArraySize(params) != np)
        return -1;
    for (int32_t p = 0; p < np; p++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, gpo_space_param_name(s, p));
        int32_t n = gpo_space_value_count(s, p), k;
        int is_int = s->params[p].kind == GPO_PARAM_INT;
        if (is_int ? !cJSON_IsNumber(v) : !cJSON_IsString(v))
            return -1;
        for (k = 0; k < n; k++)
            if (is_int ? (double)gpo_space_value(s, p, (uint32_t)k) == v->valuedouble
                       : strcmp(gpo_space_value_text(s, p, (uint32_t)k), v->valuestring) == 0)
                break;
        if (k == n)
            return -1;
        idx[p] = (uint32_t)k;
    }
    return 0;
}
