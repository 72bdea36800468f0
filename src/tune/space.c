/* Building a parameter space: parameters, problem sizes, constraints; its
 * public API, cloning, legality of one configuration. The canonical text
 * and hash are in space_hash.c; walking and neighbours in space_walk.c;
 * sampling in space_sample.c; configurations in space_config.c. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "util/strutil.h"
#include "tune/space_impl.h"

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
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_space_create: NULL output");
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
    free(s->size_names);
    free(s->size_values);
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
    gpo_param p;
    memset(&p, 0, sizeof p);
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
    if (!p.name || !p.values || !p.text) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding parameter %s", name);
        goto out;
    }
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
        if (!p.text[k]) {
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding parameter %s", name);
            goto out;
        }
    }
    /* Duplicates: sort a copy and compare neighbours. */
    if (kind == GPO_PARAM_INT) {
        int64_t *sorted = malloc((size_t)count * sizeof *sorted);
        if (!sorted) {
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding parameter %s", name);
            goto out;
        }
        memcpy(sorted, p.values, (size_t)count * sizeof *sorted);
        qsort(sorted, (size_t)count, sizeof *sorted, cmp_i64);
        int32_t dup = -1;
        for (int32_t k = 1; k < count && dup < 0; k++)
            if (sorted[k] == sorted[k - 1])
                dup = k;
        if (dup >= 0)
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "parameter %s: value %lld appears twice",
                          name, (long long)sorted[dup]);
        free(sorted);
    } else {
        char **sorted = malloc((size_t)count * sizeof *sorted);
        if (!sorted) {
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding parameter %s", name);
            goto out;
        }
        memcpy(sorted, p.text, (size_t)count * sizeof *sorted);
        qsort(sorted, (size_t)count, sizeof *sorted, cmp_str);
        int32_t dup = -1;
        for (int32_t k = 1; k < count && dup < 0; k++)
            if (strcmp(sorted[k], sorted[k - 1]) == 0)
                dup = k;
        if (dup >= 0)
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "parameter %s: value '%s' appears twice",
                          name, sorted[dup]);
        free(sorted);
    }
    if (st != GPUOPT_OK)
        goto out;
    gpo_param *grown = realloc(s->params, (size_t)(s->nparams + 1) * sizeof *grown);
    if (!grown) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding parameter %s", name);
        goto out;
    }
    s->params = grown;
    s->params[s->nparams++] = p;
    memset(&p, 0, sizeof p);
out:
    param_free(&p);
    return st;
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
    char **names = realloc(space->size_names, (size_t)(space->nsizes + 1) * sizeof *names);
    if (names)
        space->size_names = names;
    int64_t *values = realloc(space->size_values, (size_t)(space->nsizes + 1) * sizeof *values);
    if (values)
        space->size_values = values;
    char *copy = gpo_strdup(name);
    if (!names || !values || !copy) {
        free(copy);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding size %s", name);
    }
    space->size_names[space->nsizes] = copy;
    space->size_values[space->nsizes++] = value;
    return GPUOPT_OK;
}

/* ---- constraints ------------------------------------------------------------ */

gpuopt_status gpo_space_bind(const gpuopt_space *s, gpo_expr *e, const char *what)
{
    if (!s || !e)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "bind: NULL space or expression");
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
    gpo_constraint c;
    memset(&c, 0, sizeof c);
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

int32_t gpo_space_param_kind(const gpuopt_space *s, int32_t p)
{
    return s && p >= 0 && p < s->nparams ? s->params[p].kind : 0;
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

int gpo_constraint_holds(const gpuopt_space *s, const gpo_constraint *c, const uint32_t *idx,
                         const int64_t *vals)
{
    if (c->expr) {
        int64_t v;
        return gpo_expr_eval(c->expr, vals, s->nparams, s->size_values, s->nsizes, &v) ==
                   GPO_EXPR_OK &&
               v != 0;
    }
    gpuopt_config cfg;
    gpo_config_borrow(&cfg, s, idx);
    return c->fn(&cfg, c->user) != 0;
}

int gpo_space_sizes_hold(const gpuopt_space *s)
{
    for (int32_t i = 0; i < s->ncons; i++)
        if (gpo_constraint_depth(s, &s->cons[i]) < 0 &&
            !gpo_constraint_holds(s, &s->cons[i], NULL, NULL))
            return 0;
    return 1;
}

int32_t gpo_space_last_constrained(const gpuopt_space *s)
{
    int32_t last = -1;
    for (int32_t i = 0; i < s->ncons; i++) {
        int32_t d = gpo_constraint_depth(s, &s->cons[i]);
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
                !gpo_constraint_holds(s, &s->cons[i], idx, vals))
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
    if (!space || !raw)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_space_count: NULL space or raw");
    gpo_space_raw_size(space, raw);
    if (!legal)
        return GPUOPT_OK;
    int exact;
    return gpo_space_count_legal(space, 0, 0, legal, &exact);
}

/* ---- copy --------------------------------------------------------------------- */

gpuopt_status gpo_space_clone(const gpuopt_space *s, gpuopt_space **out)
{
    gpuopt_status st;
    gpuopt_space *c = NULL;
    if (out)
        *out = NULL;
    if (!s || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "space clone: NULL argument");
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
