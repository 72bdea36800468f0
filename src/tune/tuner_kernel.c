/* The kernel subject's setters: the kernel, its geometry and local
 * memory, its arguments, its reference and tolerance. Expressions are
 * parsed and bound to the tuner's space here, so a bad name or a syntax
 * error is reported by the call that brought it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "util/strutil.h"
#include "tune/tuner.h"
#include "tune/validate.h"

#define MAX_ELEMENTS ((int64_t)1 << 40)

static void geometry_free(gpo_geometry *g)
{
    for (int i = 0; i < 3; i++) {
        gpo_expr_destroy(g->global[i]);
        gpo_expr_destroy(g->local[i]);
    }
    memset(g, 0, sizeof *g);
}

static void arg_free(gpo_targ *a)
{
    gpo_expr_destroy(a->expr);
    free(a->data);
    free(a->ref);
    memset(a, 0, sizeof *a);
}

void gpo_kernel_def_free(gpo_kernel_def *k)
{
    free(k->source);
    free(k->entry);
    free(k->options);
    free(k->ref_source);
    free(k->ref_entry);
    free(k->ref_options);
    geometry_free(&k->geo);
    geometry_free(&k->ref_geo);
    gpo_expr_destroy(k->lmem);
    for (int32_t i = 0; i < k->nargs; i++)
        arg_free(&k->args[i]);
    free(k->args);
    memset(k, 0, sizeof *k);
}

/* Parses and binds an expression to the tuner's space; `what` names it in
 * errors ("geometry global[1]"). */
static gpuopt_status compile(gpuopt_tuner *t, const char *text, const char *what, gpo_expr **out)
{
    *out = NULL;
    gpo_expr *e = NULL;
    gpuopt_status st = gpo_expr_parse(text, &e);
    if (st != GPUOPT_OK)
        return gpo_fail(st, "%s: %s", what, gpo_detail_get());
    if ((st = gpo_space_bind(t->space, e, what)) != GPUOPT_OK) {
        gpo_expr_destroy(e);
        return st;
    }
    *out = e;
    return GPUOPT_OK;
}

/* The first parameter an expression reads, or NULL when it reads sizes only. */
static const char *reads_param(const gpo_expr *e)
{
    for (int32_t i = 0; e && i < gpo_expr_var_count(e); i++)
        if (gpo_expr_var_kind(e, i) == GPO_EXPR_PARAM)
            return gpo_expr_var_name(e, i);
    return NULL;
}

static int valid_entry(const char *s)
{
    if (!s || !*s || strlen(s) > 255)
        return 0;
    for (const char *p = s; *p; p++)
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (p > s && *p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_kernel(gpuopt_tuner *t, const char *source,
                                                 const char *entry, int32_t language,
                                                 const char *build_options)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_kernel");
    if (t->subject == GPO_SUBJECT_CALLBACK)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_tuner_set_kernel: this tuner already has a callback subject (a "
                        "tuner tunes one subject)");
    if (!source || !*source)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tuner_set_kernel: the source is %s",
                        source ? "empty" : "NULL");
    if (!valid_entry(entry))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_tuner_set_kernel: entry '%s' is not a C identifier of 1 to 255 "
                        "characters",
                        entry ? entry : "(null)");
    if (!gpo_language_runtime_name(language))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_kernel: language %d unknown (accepted 1 OpenCL C, 2 "
                        "CUDA, 3 HIP)",
                        (int)language);
    char *s = gpo_strdup(source), *e = gpo_strdup(entry);
    char *o = gpo_strdup(build_options ? build_options : "");
    if (!s || !e || !o) {
        free(s);
        free(e);
        free(o);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a kernel");
    }
    gpo_tuner_changed(t);
    free(t->k.source);
    free(t->k.entry);
    free(t->k.options);
    t->k.source = s;
    t->k.entry = e;
    t->k.options = o;
    t->k.language = language;
    t->subject = GPO_SUBJECT_KERNEL;
    return GPUOPT_OK;
}

/* Compiles a geometry; `params_ok` 0 refuses parameters (a reference's). */
static gpuopt_status geometry(gpuopt_tuner *t, const char *const global[3],
                              const char *const local[3], int params_ok, const char *fn,
                              gpo_geometry *out)
{
    gpo_geometry g;
    memset(&g, 0, sizeof g);
    gpuopt_status st = GPUOPT_OK;
    if (!global || !global[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: global[0] is needed", fn);
    while (g.dims < 3 && global[g.dims])
        g.dims++;
    for (int i = g.dims; i < 3; i++)
        if (global[i])
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "%s: global[%d] is given after an unused global[%d]", fn, i, g.dims);
    g.has_local = local != NULL;
    for (int i = 0; local && i < 3; i++)
        if ((i < g.dims) != (local[i] != NULL))
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "%s: local[%d] is %s, but %d dimension%s used (a local size for "
                            "each used dimension, or local NULL)",
                            fn, i, local[i] ? "given" : "NULL", g.dims,
                            g.dims > 1 ? "s are" : " is");
    char what[64];
    for (int i = 0; i < g.dims && st == GPUOPT_OK; i++) {
        gpo_snprintf(what, sizeof what, "%s global[%d]", fn, i);
        st = compile(t, global[i], what, &g.global[i]);
        if (st == GPUOPT_OK && local) {
            gpo_snprintf(what, sizeof what, "%s local[%d]", fn, i);
            st = compile(t, local[i], what, &g.local[i]);
        }
        const char *p = NULL;
        if (st == GPUOPT_OK && !params_ok &&
            ((p = reads_param(g.global[i])) || (p = reads_param(g.local[i]))))
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                          "%s: dimension %d reads parameter %s; a reference's geometry is of "
                          "problem sizes only",
                          fn, i, p);
    }
    if (st != GPUOPT_OK) {
        geometry_free(&g);
        return st;
    }
    *out = g;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_geometry(gpuopt_tuner *t, const char *const global[3],
                                                   const char *const local[3])
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_geometry");
    gpo_geometry g;
    gpuopt_status st = geometry(t, global, local, 1, "gpuopt_tuner_set_geometry", &g);
    if (st != GPUOPT_OK)
        return st;
    gpo_tuner_changed(t);
    geometry_free(&t->k.geo);
    t->k.geo = g;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_local_memory(gpuopt_tuner *t, const char *bytes)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_local_memory");
    gpo_expr *e = NULL;
    if (bytes) {
        gpuopt_status st = compile(t, bytes, "gpuopt_tuner_set_local_memory", &e);
        if (st != GPUOPT_OK)
            return st;
    }
    gpo_tuner_changed(t);
    gpo_expr_destroy(t->k.lmem);
    t->k.lmem = e;
    return GPUOPT_OK;
}

/* The argument slot for `index`, emptied for reuse or appended. */
static gpo_targ *arg_slot(gpuopt_tuner *t, uint32_t index)
{
    for (int32_t i = 0; i < t->k.nargs; i++)
        if (t->k.args[i].index == index)
            return &t->k.args[i];
    gpo_targ *a = realloc(t->k.args, (size_t)(t->k.nargs + 1) * sizeof *a);
    if (!a)
        return NULL;
    t->k.args = a;
    memset(&a[t->k.nargs], 0, sizeof *a);
    a[t->k.nargs].index = index;
    return &a[t->k.nargs++];
}

static gpuopt_status check_arg(uint32_t index, int32_t type, const char *fn)
{
    if (index >= GPO_TUNER_MAX_ARGS)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s: argument index %u (0 to %d accepted)", fn,
                        index, GPO_TUNER_MAX_ARGS - 1);
    if (!gpo_elem_size(type))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: element type %d unknown (accepted 1 f32, 2 f64, 3 i32, 4 u32, 5 i64)",
                        fn, (int)type);
    return GPUOPT_OK;
}

/* Evaluates a parameter-free expression with the current sizes. */
static int eval_sizes_only(const gpuopt_tuner *t, const gpo_expr *e, int64_t *v)
{
    uint32_t idx[GPO_SPACE_MAX_PARAMS + 1] = {0};
    return gpo_space_eval(t->space, idx, e, v) == GPO_EXPR_OK ? 0 : -1;
}

GPUOPT_API gpuopt_status gpuopt_tuner_add_buffer(gpuopt_tuner *t, uint32_t index, int32_t type,
                                                 const char *count_expression, int32_t init,
                                                 double constant, const void *data,
                                                 int32_t is_output)
{
    static const char fn[] = "gpuopt_tuner_add_buffer";
    GPO_CHECK_TUNER(t, "gpuopt_tuner_add_buffer");
    gpuopt_status st = check_arg(index, type, fn);
    if (st != GPUOPT_OK)
        return st;
    if (!count_expression)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the count expression is NULL", fn);
    if (init < GPUOPT_INIT_RANDOM || init > GPUOPT_INIT_DATA)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: init %d unknown (accepted 1 random, 2 zeros, 3 constant, 4 data)", fn,
                        (int)init);
    if (init == GPUOPT_INIT_CONSTANT && !isfinite(constant))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the constant is not finite", fn);
    if (init == GPUOPT_INIT_DATA && !data)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: GPUOPT_INIT_DATA with NULL data", fn);
    char what[64];
    gpo_snprintf(what, sizeof what, "%s count of argument %u", fn, index);
    gpo_expr *e = NULL;
    if ((st = compile(t, count_expression, what, &e)) != GPUOPT_OK)
        return st;
    void *copy = NULL;
    size_t bytes = 0;
    if (init == GPUOPT_INIT_DATA) {
        int64_t n = 0;
        const char *p = reads_param(e);
        if (p)
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                          "%s: argument %u has data but its count reads parameter %s (data has "
                          "one length)",
                          fn, index, p);
        else if (eval_sizes_only(t, e, &n) != 0 || n < 1 || n > MAX_ELEMENTS)
            st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                          "%s: the count of argument %u ('%s') is undefined or outside 1 .. 2^40",
                          fn, index, gpo_expr_source(e));
        else if (!(copy = malloc(bytes = (size_t)n * gpo_elem_size(type))))
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying %zu bytes of data", bytes);
        else
            memcpy(copy, data, bytes);
    }
    gpo_targ *a = st == GPUOPT_OK ? arg_slot(t, index) : NULL;
    if (st == GPUOPT_OK && !a)
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding an argument");
    if (st != GPUOPT_OK) {
        gpo_expr_destroy(e);
        free(copy);
        return st;
    }
    gpo_tuner_changed(t);
    arg_free(a);
    a->index = index;
    a->kind = GPO_ARG_BUFFER;
    a->type = type;
    a->expr = e;
    a->fixed = reads_param(e) == NULL;
    a->init = init;
    a->value = constant;
    a->data = copy;
    a->data_bytes = bytes;
    a->is_output = is_output != 0;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_add_scalar(gpuopt_tuner *t, uint32_t index, int32_t type,
                                                 const char *expression)
{
    static const char fn[] = "gpuopt_tuner_add_scalar";
    GPO_CHECK_TUNER(t, "gpuopt_tuner_add_scalar");
    gpuopt_status st = check_arg(index, type, fn);
    if (st != GPUOPT_OK)
        return st;
    if (!expression)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the expression is NULL", fn);
    char what[64];
    gpo_snprintf(what, sizeof what, "%s argument %u", fn, index);
    gpo_expr *e = NULL;
    if ((st = compile(t, expression, what, &e)) != GPUOPT_OK)
        return st;
    gpo_targ *a = arg_slot(t, index);
    if (!a) {
        gpo_expr_destroy(e);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding an argument");
    }
    gpo_tuner_changed(t);
    arg_free(a);
    a->index = index;
    a->kind = GPO_ARG_SCALAR;
    a->type = type;
    a->expr = e;
    a->fixed = reads_param(e) == NULL;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_add_scalar_f64(gpuopt_tuner *t, uint32_t index, int32_t type,
                                                     double value)
{
    static const char fn[] = "gpuopt_tuner_add_scalar_f64";
    GPO_CHECK_TUNER(t, "gpuopt_tuner_add_scalar_f64");
    gpuopt_status st = check_arg(index, type, fn);
    if (st != GPUOPT_OK)
        return st;
    static const double lo[] = {0, 0, 0, -2147483648.0, 0, -9223372036854775808.0};
    static const double hi[] = {0, 0, 0, 2147483647.0, 4294967295.0, 9223372036854775807.0};
    if (!gpo_elem_is_float(type) &&
        !(value == floor(value) && value >= lo[type] &&
          (type == GPUOPT_ELEM_I64 ? value < hi[type] : value <= hi[type])))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s: %g is not a %s value", fn, value,
                        gpo_elem_name(type));
    gpo_targ *a = arg_slot(t, index);
    if (!a)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding an argument");
    gpo_tuner_changed(t);
    arg_free(a);
    a->index = index;
    a->kind = GPO_ARG_SCALAR_F64;
    a->type = type;
    a->value = value;
    a->fixed = 1;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_reference_kernel(gpuopt_tuner *t, const char *source,
                                                           const char *entry,
                                                           const char *build_options,
                                                           const char *const global[3],
                                                           const char *const local[3])
{
    static const char fn[] = "gpuopt_tuner_set_reference_kernel";
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_reference_kernel");
    if (!source) {
        gpo_tuner_changed(t);
        free(t->k.ref_source);
        free(t->k.ref_entry);
        free(t->k.ref_options);
        t->k.ref_source = t->k.ref_entry = t->k.ref_options = NULL;
        geometry_free(&t->k.ref_geo);
        return GPUOPT_OK;
    }
    if (t->subject == GPO_SUBJECT_CALLBACK)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: a callback subject validates through its validate callback", fn);
    if (!*source)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the source is empty", fn);
    if (!valid_entry(entry))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: entry '%s' is not a C identifier of 1 to 255 characters", fn,
                        entry ? entry : "(null)");
    gpo_geometry g;
    gpuopt_status st = geometry(t, global, local, 0, fn, &g);
    if (st != GPUOPT_OK)
        return st;
    char *s = gpo_strdup(source), *e = gpo_strdup(entry);
    char *o = gpo_strdup(build_options ? build_options : "");
    if (!s || !e || !o) {
        free(s);
        free(e);
        free(o);
        geometry_free(&g);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a reference kernel");
    }
    gpo_tuner_changed(t);
    free(t->k.ref_source);
    free(t->k.ref_entry);
    free(t->k.ref_options);
    geometry_free(&t->k.ref_geo);
    t->k.ref_source = s;
    t->k.ref_entry = e;
    t->k.ref_options = o;
    t->k.ref_geo = g;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_reference_data(gpuopt_tuner *t, uint32_t index,
                                                         const void *data, size_t bytes)
{
    static const char fn[] = "gpuopt_tuner_set_reference_data";
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_reference_data");
    gpo_targ *a = NULL;
    for (int32_t i = 0; i < t->k.nargs; i++)
        if (t->k.args[i].index == index)
            a = &t->k.args[i];
    if (!a || a->kind != GPO_ARG_BUFFER)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "%s: argument %u is not a buffer (add it with gpuopt_tuner_add_buffer "
                        "first)",
                        fn, index);
    if (!a->is_output)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: argument %u is not an output (is_output 0): nothing compares it", fn,
                        index);
    if (data && bytes == 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: 0 bytes of data", fn);
    int64_t n = 0;
    if (data && a->fixed && eval_sizes_only(t, a->expr, &n) == 0 && n > 0 &&
        (uint64_t)n * gpo_elem_size(a->type) != bytes)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: argument %u holds %lld %s elements (%llu bytes), the data has %zu "
                        "bytes",
                        fn, index, (long long)n, gpo_elem_name(a->type),
                        (unsigned long long)((uint64_t)n * gpo_elem_size(a->type)), bytes);
    void *copy = NULL;
    if (data) {
        if (!(copy = malloc(bytes)))
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying %zu bytes", bytes);
        memcpy(copy, data, bytes);
    }
    gpo_tuner_changed(t);
    free(a->ref);
    a->ref = copy;
    a->ref_bytes = data ? bytes : 0;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_tolerance(gpuopt_tuner *t, double abs_tol, double rel_tol)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_tolerance");
    if (!(isfinite(abs_tol) && abs_tol >= 0 && isfinite(rel_tol) && rel_tol >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_tolerance: %g and %g (finite values >= 0 accepted)",
                        abs_tol, rel_tol);
    gpo_tuner_changed(t);
    t->abs_tol = abs_tol;
    t->rel_tol = rel_tol;
    return GPUOPT_OK;
}
