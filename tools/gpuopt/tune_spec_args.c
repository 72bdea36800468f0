/* The spec's kernel arguments and its reference: buffers (type, length
 * expression, initialisation, output flag) and scalars, then a reference
 * kernel or expected data. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_spec_int.h"

static const char types_accepted[] = "accepted: float, double, int, uint, long";

static int parse_type(pctx *p, const cJSON *v, const char *where, int32_t *type)
{
    *type = cJSON_IsString(v) ? tune_spec_type_parse(v->valuestring) : -1;
    if (*type < 0)
        return ts_fail(p, where, v, "%s", types_accepted);
    return 0;
}

/* Inline data: an array of numbers, stored as the element type. */
static int inline_data(pctx *p, const cJSON *arr, const char *where, int32_t type,
                       const void **data, size_t *bytes)
{
    int n = cJSON_GetArraySize(arr);
    if (!cJSON_IsArray(arr) || n == 0)
        return ts_fail(p, where, arr, "expected a non-empty array of numbers");
    size_t esz = ts_type_bytes(type);
    unsigned char *buf = ts_alloc(p->a, esz * (size_t)n);
    if (!buf)
        return ts_fail(p, where, NULL, "out of memory");
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, arr)
    {
        char at[PATH_CAP];
        ts_joini(at, where, i);
        int integral = type != GPUOPT_ELEM_F32 && type != GPUOPT_ELEM_F64;
        if (!cJSON_IsNumber(v) || (integral && !ts_is_int(v, INT64_MIN, INT64_MAX)))
            return ts_fail(p, at, v, "expected %s", integral ? "an integer" : "a number");
        double d = v->valuedouble;
        union {
            float f;
            double g;
            int32_t i;
            uint32_t u;
            int64_t l;
        } x;
        switch (type) {
        case GPUOPT_ELEM_F32: x.f = (float)d; break;
        case GPUOPT_ELEM_F64: x.g = d; break;
        case GPUOPT_ELEM_I32:
            if (d < INT32_MIN || d > INT32_MAX)
                return ts_fail(p, at, v, "out of range for int");
            x.i = (int32_t)d;
            break;
        case GPUOPT_ELEM_U32:
            if (d < 0 || d > UINT32_MAX)
                return ts_fail(p, at, v, "out of range for uint");
            x.u = (uint32_t)d;
            break;
        default: x.l = (int64_t)d; break;
        }
        memcpy(buf + esz * (size_t)i, &x, esz);
        i++;
    }
    *data = buf;
    *bytes = esz * (size_t)n;
    return 0;
}

/* Raw little-endian elements from a file relative to the spec. */
static int file_data(pctx *p, const cJSON *name, const char *where, int32_t type, const void **data,
                     size_t *bytes)
{
    if (!cJSON_IsString(name) || !*name->valuestring)
        return ts_fail(p, where, name,
                       "expected a file name relative to the spec (raw "
                       "little-endian elements)");
    char *text;
    size_t len;
    if (ts_read_rel(p, where, name, TS_MAX_DATA_BYTES, &text, &len))
        return -1;
    if (len == 0 || len % ts_type_bytes(type))
        return ts_fail(p, where, name,
                       "the file holds %zu bytes, not a positive multiple of "
                       "%zu (one %s)",
                       len, ts_type_bytes(type), tune_spec_type_name(type));
    *data = text;
    *bytes = len;
    return 0;
}

static int parse_init(pctx *p, const cJSON *a, const char *path, ts_arg *arg)
{
    char where[PATH_CAP];
    ts_join(where, path, "init");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, "init");
    static const char accepted[] =
        "accepted: \"random\", \"zeros\", {\"constant\": X}, {\"data\": [...]} or "
        "{\"file\": \"name.bin\"}";
    arg->init = GPUOPT_INIT_ZEROS;
    if (!v)
        return 0;
    if (cJSON_IsString(v)) {
        if (strcmp(v->valuestring, "random") == 0)
            arg->init = GPUOPT_INIT_RANDOM;
        else if (strcmp(v->valuestring, "zeros") == 0)
            arg->init = GPUOPT_INIT_ZEROS;
        else
            return ts_fail(p, where, v, "%s", accepted);
        return 0;
    }
    if (!cJSON_IsObject(v) || cJSON_GetArraySize(v) != 1)
        return ts_fail(p, where, v, "%s", accepted);
    const cJSON *c = v->child;
    char at[PATH_CAP];
    ts_join(at, where, c->string);
    if (strcmp(c->string, "constant") == 0) {
        if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble))
            return ts_fail(p, at, c, "expected a number");
        arg->init = GPUOPT_INIT_CONSTANT;
        arg->constant = c->valuedouble;
        return 0;
    }
    arg->init = GPUOPT_INIT_DATA;
    if (strcmp(c->string, "data") == 0)
        return inline_data(p, c, at, arg->type, &arg->data, &arg->data_bytes);
    if (strcmp(c->string, "file") == 0)
        return file_data(p, c, at, arg->type, &arg->data, &arg->data_bytes);
    return ts_fail(p, where, v, "%s", accepted);
}

static int parse_arg(pctx *p, const cJSON *a, const char *path, ts_arg *arg)
{
    char where[PATH_CAP];
    if (!cJSON_IsObject(a))
        return ts_fail(p, path, a,
                       "expected {\"buffer\": TYPE, \"size\": ...} or "
                       "{\"scalar\": TYPE, \"value\": ...}");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(a, "buffer");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(a, "scalar");
    if ((b != NULL) == (s != NULL))
        return ts_fail(p, path, NULL, "give exactly one of \"buffer\": TYPE or \"scalar\": TYPE");
    if (b) {
        static const char *const keys[] = {"buffer", "size", "init", "output", "name", NULL};
        arg->kind = TS_ARG_BUFFER;
        ts_join(where, path, "buffer");
        if (ts_check_keys(p, a, path, keys) || parse_type(p, b, where, &arg->type))
            return -1;
        ts_join(where, path, "size");
        const cJSON *sz = cJSON_GetObjectItemCaseSensitive(a, "size");
        if (!sz)
            return ts_fail(p, where, NULL,
                           "missing; expected the element count, an expression "
                           "such as \"M * K\"");
        if (ts_get_expr(p, sz, where, "M * K", &arg->count) || parse_init(p, a, path, arg))
            return -1;
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(a, "output");
        ts_join(where, path, "output");
        if (o && !cJSON_IsBool(o))
            return ts_fail(p, where, o, "expected true or false");
        arg->output = cJSON_IsTrue(o);
        const char *label;
        return ts_get_str(p, a, "name", path, 0, 0, NULL, &label);
    }
    static const char *const keys[] = {"scalar", "value", "name", NULL};
    arg->kind = TS_ARG_SCALAR;
    ts_join(where, path, "scalar");
    if (ts_check_keys(p, a, path, keys) || parse_type(p, s, where, &arg->type))
        return -1;
    ts_join(where, path, "value");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, "value");
    int fp = arg->type == GPUOPT_ELEM_F32 || arg->type == GPUOPT_ELEM_F64;
    if (!v)
        return ts_fail(p, where, NULL, "missing; expected %s",
                       fp ? "a number" : "an expression such as \"N\" or an integer");
    if (cJSON_IsString(v) && *v->valuestring) {
        arg->expr = v->valuestring;
    } else if (fp && cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
        arg->number = v->valuedouble;
    } else if (!fp && ts_is_int(v, INT64_MIN, INT64_MAX)) {
        char buf[32];
        double d = v->valuedouble;
        /* Negative literals go through the expression parser as unary minus. */
        snprintf(buf, sizeof buf, "%s%lld", d < 0 ? "0 - " : "", (long long)fabs(d));
        arg->expr = ts_strdup(p->a, buf);
        if (!arg->expr)
            return ts_fail(p, where, NULL, "out of memory");
    } else {
        return ts_fail(p, where, v, "expected %s",
                       fp ? "a number, or an expression string over sizes"
                          : "an integer or an expression such as \"N\"");
    }
    const char *label;
    return ts_get_str(p, a, "name", path, 0, 0, NULL, &label);
}

int ts_parse_arguments(pctx *p, const cJSON *root)
{
    tune_spec *s = p->s;
    const cJSON *as = cJSON_GetObjectItemCaseSensitive(root, "arguments");
    if (!as)
        return ts_fail(p, "arguments", NULL, "missing; expected the kernel's arguments in order");
    if (!cJSON_IsArray(as) || cJSON_GetArraySize(as) == 0)
        return ts_fail(p, "arguments", as,
                       "expected a non-empty array, one entry per kernel "
                       "argument in order");
    s->n_args = (uint32_t)cJSON_GetArraySize(as);
    s->args = ts_alloc(p->a, sizeof *s->args * s->n_args);
    if (!s->args)
        return ts_fail(p, "arguments", NULL, "out of memory");
    int i = 0, outputs = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, as)
    {
        char at[PATH_CAP];
        ts_joini(at, "arguments", i);
        if (parse_arg(p, a, at, &s->args[i]))
            return -1;
        outputs += s->args[i].output;
        i++;
    }
    if (!outputs)
        return ts_fail(p, "arguments", NULL,
                       "no buffer has \"output\": true; mark what the "
                       "kernel writes, so results can be checked");
    return 0;
}

static int parse_ref_data(pctx *p, const cJSON *d)
{
    tune_spec *s = p->s;
    if (!cJSON_IsArray(d) || cJSON_GetArraySize(d) == 0)
        return ts_fail(p, "reference.data", d,
                       "expected [{\"argument\": INDEX, \"file\": \"expected.bin\"}, ...]");
    s->n_ref_data = cJSON_GetArraySize(d);
    s->ref_data = ts_alloc(p->a, sizeof *s->ref_data * (size_t)s->n_ref_data);
    if (!s->ref_data)
        return ts_fail(p, "reference.data", NULL, "out of memory");
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, d)
    {
        static const char *const keys[] = {"argument", "file", "data", NULL};
        char at[PATH_CAP], w[PATH_CAP];
        ts_joini(at, "reference.data", i);
        if (ts_need_object(p, e, at) || ts_check_keys(p, e, at, keys))
            return -1;
        const cJSON *ix = cJSON_GetObjectItemCaseSensitive(e, "argument");
        ts_join(w, at, "argument");
        if (!ts_is_int(ix, 0, (int64_t)s->n_args - 1) ||
            s->args[(int)ix->valuedouble].kind != TS_ARG_BUFFER ||
            !s->args[(int)ix->valuedouble].output)
            return ts_fail(p, w, ix,
                           "expected the index (0-based) of an argument with "
                           "\"output\": true");
        ts_ref_data *rd = &s->ref_data[i];
        rd->index = (uint32_t)ix->valuedouble;
        int32_t type = s->args[rd->index].type;
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "file");
        const cJSON *dv = cJSON_GetObjectItemCaseSensitive(e, "data");
        if ((f != NULL) == (dv != NULL))
            return ts_fail(p, at, NULL, "give exactly one of \"file\" or \"data\"");
        ts_join(w, at, f ? "file" : "data");
        if (f ? file_data(p, f, w, type, &rd->data, &rd->bytes)
              : inline_data(p, dv, w, type, &rd->data, &rd->bytes))
            return -1;
        i++;
    }
    return 0;
}

int ts_parse_reference(pctx *p, const cJSON *root)
{
    tune_spec *s = p->s;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "reference");
    if (!r)
        return 0;
    static const char *const keys[] = {"file",   "source", "entry", "build_options",
                                       "global", "local",  "data",  NULL};
    if (ts_need_object(p, r, "reference") || ts_check_keys(p, r, "reference", keys))
        return -1;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(r, "data");
    int has_kernel = cJSON_GetObjectItemCaseSensitive(r, "file") ||
                     cJSON_GetObjectItemCaseSensitive(r, "source") ||
                     cJSON_GetObjectItemCaseSensitive(r, "entry");
    if (d && has_kernel)
        return ts_fail(p, "reference", NULL,
                       "give either a reference kernel (\"file\", "
                       "\"entry\", \"global\") or \"data\", not both");
    if (d)
        return parse_ref_data(p, d);
    if (ts_parse_program(p, r, "reference", &s->ref_source, &s->ref_file, &s->ref_entry,
                         &s->ref_options))
        return -1;
    return ts_parse_geometry(p, r, "reference", s->ref_global, s->ref_local);
}
