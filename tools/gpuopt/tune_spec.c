/* Loading a tuning spec: JSON in, a checked tune_spec out. Every value is
 * checked for its type and range here, before any device work, and every
 * message names the file, the JSON path, the value and what is accepted
 * (the helpers are in tune_spec_json.c; arguments and the reference in
 * tune_spec_args.c). Expressions are only checked for being strings here:
 * the library parses them (tune_spec_apply maps its errors back to the
 * JSON path). */
#include <assert.h>
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

static int parse_kernel(pctx *p, const cJSON *root)
{
    tune_spec *s = p->s;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "kernel");
    static const char *const keys[] = {"file",     "source",        "entry",
                                       "language", "build_options", NULL};
    if (!k)
        return ts_fail(p, "kernel", NULL, "missing; expected {\"file\": ..., \"entry\": ...}");
    if (ts_need_object(p, k, "kernel") || ts_check_keys(p, k, "kernel", keys) ||
        ts_parse_program(p, k, "kernel", &s->source, &s->source_file, &s->entry, &s->build_options))
        return -1;
    const char *lang;
    if (ts_get_str(p, k, "language", "kernel", 0, 0, "opencl-c", &lang))
        return -1;
    static const struct {
        const char *name;
        int32_t lang;
    } langs[] = {{"opencl-c", GPUOPT_LANG_OPENCL_C},
                 {"opencl", GPUOPT_LANG_OPENCL_C},
                 {"cuda", GPUOPT_LANG_CUDA},
                 {"hip", GPUOPT_LANG_HIP}};
    s->language = -1;
    for (size_t i = 0; i < sizeof langs / sizeof *langs; i++)
        if (strcmp(lang, langs[i].name) == 0)
            s->language = langs[i].lang;
    if (s->language < 0)
        return ts_fail(
            p, "kernel.language", cJSON_GetObjectItemCaseSensitive(k, "language"),
            "accepted: \"opencl-c\" (or \"opencl\"), \"cuda\" (NVRTC), \"hip\" (hiprtc)");
    return 0;
}

static int parse_params(pctx *p, const cJSON *root)
{
    tune_spec *s = p->s;
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "parameters");
    if (!ps)
        return ts_fail(p, "parameters", NULL,
                       "missing; expected an object such as {\"TILE\": [8, 16, 32]}");
    if (!cJSON_IsObject(ps) || !ps->child)
        return ts_fail(
            p, "parameters", ps,
            "expected a non-empty object of NAME: [values], such as {\"TILE\": [8, 16]}");
    s->n_params = cJSON_GetArraySize(ps);
    s->params = ts_alloc(p->a, sizeof *s->params * (size_t)s->n_params);
    if (!s->params)
        return ts_fail(p, "parameters", NULL, "out of memory");
    int32_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, ps)
    {
        ts_param *prm = &s->params[i++];
        char where[PATH_CAP];
        ts_join(where, "parameters", it->string);
        if (!ts_valid_ident(it->string))
            return ts_fail(p, where, NULL,
                           "the name is not accepted; expected a C identifier of at "
                           "most 63 characters (it becomes a -D define)");
        prm->name = it->string;
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) == 0)
            return ts_fail(p, where, it, "expected a non-empty array of integers or of strings");
        prm->count = cJSON_GetArraySize(it);
        prm->is_enum = cJSON_IsString(it->child);
        if (prm->is_enum)
            prm->texts = ts_alloc(p->a, sizeof *prm->texts * (size_t)prm->count);
        else
            prm->ints = ts_alloc(p->a, sizeof *prm->ints * (size_t)prm->count);
        if (!prm->texts && !prm->ints)
            return ts_fail(p, where, NULL, "out of memory");
        int32_t j = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, it)
        {
            char at[PATH_CAP];
            ts_joini(at, where, j);
            if (prm->is_enum) {
                if (!cJSON_IsString(v) || !*v->valuestring)
                    return ts_fail(p, at, v,
                                   "every value must be a non-empty string, like the first");
                for (const char *c = v->valuestring; *c; c++)
                    if (*c <= ' ' || *c > '~')
                        return ts_fail(p, at, v,
                                       "expected printable ASCII without spaces (the "
                                       "kernel receives -D%s=VALUE)",
                                       prm->name);
                for (int32_t q = 0; q < j; q++)
                    if (strcmp(prm->texts[q], v->valuestring) == 0)
                        return ts_fail(p, at, v, "duplicate value; each value once");
                prm->texts[j] = v->valuestring;
            } else {
                if (!ts_is_int(v, INT64_MIN, INT64_MAX))
                    return ts_fail(p, at, v, "every value must be an integer, like the first%s",
                                   cJSON_IsString(v) ? " (or make every value a string)" : "");
                int64_t x = (int64_t)v->valuedouble;
                for (int32_t q = 0; q < j; q++)
                    if (prm->ints[q] == x)
                        return ts_fail(p, at, v, "duplicate value; each value once");
                prm->ints[j] = x;
            }
            j++;
        }
    }
    return 0;
}

static int parse_constraints_sizes(pctx *p, const cJSON *root)
{
    tune_spec *s = p->s;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(root, "constraints");
    if (cs) {
        if (!cJSON_IsArray(cs))
            return ts_fail(p, "constraints", cs,
                           "expected an array of expressions such as [\"MWG %% MWI == 0\"]");
        s->n_constraints = cJSON_GetArraySize(cs);
        s->constraints = ts_alloc(p->a, sizeof *s->constraints * (size_t)(s->n_constraints + 1));
        if (!s->constraints)
            return ts_fail(p, "constraints", NULL, "out of memory");
        int i = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cs)
        {
            char at[PATH_CAP];
            ts_joini(at, "constraints", i);
            if (!cJSON_IsString(c) || !*c->valuestring)
                return ts_fail(p, at, c,
                               "expected an expression string such as \"TILE * VW <= 64\"");
            s->constraints[i++] = c->valuestring;
        }
    }
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(root, "sizes");
    if (ss) {
        if (!cJSON_IsObject(ss))
            return ts_fail(p, "sizes", ss, "expected an object such as {\"M\": 512, \"N\": 512}");
        s->n_sizes = cJSON_GetArraySize(ss);
        s->sizes = ts_alloc(p->a, sizeof *s->sizes * (size_t)(s->n_sizes + 1));
        if (!s->sizes)
            return ts_fail(p, "sizes", NULL, "out of memory");
        int i = 0;
        const cJSON *z;
        cJSON_ArrayForEach(z, ss)
        {
            char at[PATH_CAP];
            ts_join(at, "sizes", z->string);
            if (!ts_valid_ident(z->string))
                return ts_fail(p, at, NULL, "the name is not accepted; expected a C identifier");
            for (int32_t q = 0; q < s->n_params; q++)
                if (strcmp(s->params[q].name, z->string) == 0)
                    return ts_fail(p, at, NULL,
                                   "a parameter has the same name; names are shared "
                                   "by parameters and sizes");
            if (!ts_is_int(z, 0, INT64_MAX))
                return ts_fail(p, at, z, "expected a non-negative integer");
            s->sizes[i].name = z->string;
            s->sizes[i++].value = (int64_t)z->valuedouble;
        }
    }
    return 0;
}

/* "global"/"local" lists of 1 to 3 expressions. */
static int parse_dims(pctx *p, const cJSON *o, const char *path, const char *key, int required,
                      const char **out, int *ndims)
{
    char where[PATH_CAP];
    ts_join(where, path, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *ndims = 0;
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return ts_fail(p, where, NULL,
                           "missing; expected 1 to 3 expressions such as "
                           "[\"N / NWI\", \"M / MWI\"]");
        return 0;
    }
    int n = cJSON_GetArraySize(v);
    if (!cJSON_IsArray(v) || n < 1 || n > TS_MAX_DIMS)
        return ts_fail(p, where, v, "expected an array of 1 to 3 expressions (one per dimension)%s",
                       required ? "" : ", or null to let the runtime choose");
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        char at[PATH_CAP];
        ts_joini(at, where, i);
        if (ts_get_expr(p, e, at, "N / WPT", &out[i]))
            return -1;
        i++;
    }
    *ndims = n;
    return 0;
}

int ts_parse_geometry(pctx *p, const cJSON *o, const char *path, const char **global,
                      const char **local)
{
    int ng, nl;
    if (parse_dims(p, o, path, "global", 1, global, &ng) ||
        parse_dims(p, o, path, "local", 0, local, &nl))
        return -1;
    if (nl && nl != ng) {
        char where[PATH_CAP];
        ts_join(where, path, "local");
        return ts_fail(p, where, cJSON_GetObjectItemCaseSensitive(o, "local"),
                       "expected as many dimensions as \"global\" (%d)", ng);
    }
    return 0;
}

static int parse_search(pctx *p, const cJSON *root)
{
    tune_spec *s = p->s;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    if (t) {
        static const char *const keys[] = {"abs", "rel", NULL};
        if (ts_need_object(p, t, "tolerance") || ts_check_keys(p, t, "tolerance", keys) ||
            ts_get_num(p, t, "abs", "tolerance", 0, &s->abs_tol) ||
            ts_get_num(p, t, "rel", "tolerance", 0, &s->rel_tol))
            return -1;
        s->has_tolerance = 1;
    }
    if (ts_get_str(p, root, "workload_key", "", 0, 0, NULL, &s->workload_key))
        return -1;
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(root, "timing");
    s->warmup_ms = 5;
    s->repeat_ms = 50;
    s->min_runs = 3;
    s->max_runs = 100;
    s->timeout_s = -1;
    if (tm) {
        static const char *const keys[] = {"warmup_ms", "repeat_ms", "min_runs", "max_runs",
                                           "timeout_s", "isolation", NULL};
        if (ts_need_object(p, tm, "timing") || ts_check_keys(p, tm, "timing", keys) ||
            ts_get_num(p, tm, "warmup_ms", "timing", 0, &s->warmup_ms) ||
            ts_get_num(p, tm, "repeat_ms", "timing", 0, &s->repeat_ms) ||
            ts_get_i32(p, tm, "min_runs", "timing", 1, &s->min_runs) ||
            ts_get_i32(p, tm, "max_runs", "timing", 1, &s->max_runs) ||
            ts_get_num(p, tm, "timeout_s", "timing", 0, &s->timeout_s))
            return -1;
        if (s->max_runs < s->min_runs)
            return ts_fail(p, "timing.max_runs", cJSON_GetObjectItemCaseSensitive(tm, "max_runs"),
                           "expected at least timing.min_runs (%d)", (int)s->min_runs);
        const char *iso;
        if (ts_get_str(p, tm, "isolation", "timing", 0, 0, "auto", &iso))
            return -1;
        if ((s->isolation = tune_spec_isolation_parse(iso)) < 0)
            return ts_fail(p, "timing.isolation", cJSON_GetObjectItemCaseSensitive(tm, "isolation"),
                           "accepted: auto, in-process, worker");
        s->has_timing = 1;
    }
    const cJSON *se = cJSON_GetObjectItemCaseSensitive(root, "search");
    if (se) {
        static const char *const keys[] = {
            "strategy", "max_evaluations", "max_seconds", "max_failures", "seed", NULL};
        if (ts_need_object(p, se, "search") || ts_check_keys(p, se, "search", keys) ||
            ts_get_i32(p, se, "max_evaluations", "search", 0, &s->max_evaluations) ||
            ts_get_num(p, se, "max_seconds", "search", 0, &s->max_seconds) ||
            ts_get_i32(p, se, "max_failures", "search", 0, &s->max_failures))
            return -1;
        const char *st;
        if (ts_get_str(p, se, "strategy", "search", 0, 0, "auto", &st))
            return -1;
        s->strategy = tune_spec_strategy_parse(st);
        if (s->strategy < 0)
            return ts_fail(p, "search.strategy", cJSON_GetObjectItemCaseSensitive(se, "strategy"),
                           "accepted: auto, exhaustive, random, annealing, model");
        const cJSON *seed = cJSON_GetObjectItemCaseSensitive(se, "seed");
        if (seed) {
            char *end = NULL;
            errno = 0;
            if (ts_is_int(seed, 0, INT64_MAX))
                s->seed = (uint64_t)seed->valuedouble;
            else if (cJSON_IsString(seed) && isdigit((unsigned char)seed->valuestring[0]) &&
                     (s->seed = strtoull(seed->valuestring, &end, 10), !*end && !errno))
                ;
            else
                return ts_fail(p, "search.seed", seed,
                               "expected a non-negative integer (as a string beyond 2^53)");
        }
    }
    return 0;
}

static int parse_default(pctx *p, const cJSON *root)
{
    tune_spec *s = p->s;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "default");
    if (!d)
        return 0;
    if (!cJSON_IsObject(d))
        return ts_fail(p, "default", d,
                       "expected an object giving every parameter a value, such "
                       "as {\"TILE\": 16}");
    s->defaults = ts_alloc(p->a, sizeof *s->defaults * (size_t)s->n_params);
    if (!s->defaults)
        return ts_fail(p, "default", NULL, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, d)
    {
        char at[PATH_CAP];
        ts_join(at, "default", it->string);
        const ts_param *prm = NULL;
        for (int32_t q = 0; q < s->n_params; q++)
            if (strcmp(s->params[q].name, it->string) == 0)
                prm = &s->params[q];
        if (!prm)
            return ts_fail(p, at, NULL, "no parameter has this name");
        /* Keys are unique (ts_unique_keys), so n_defaults stays within
         * n_params. */
        assert(s->n_defaults < s->n_params);
        char text[32];
        const char *val = NULL;
        for (int32_t j = 0; j < prm->count; j++) {
            if (prm->is_enum && cJSON_IsString(it) && !strcmp(prm->texts[j], it->valuestring))
                val = prm->texts[j];
            if (!prm->is_enum && ts_is_int(it, INT64_MIN, INT64_MAX) &&
                prm->ints[j] == (int64_t)it->valuedouble) {
                snprintf(text, sizeof text, "%lld", (long long)prm->ints[j]);
                val = ts_strdup(p->a, text);
            }
        }
        if (!val)
            return ts_fail(p, at, it, "expected one of the values of parameters.%s", prm->name);
        s->defaults[s->n_defaults].name = prm->name;
        s->defaults[s->n_defaults++].text = val;
    }
    if (s->n_defaults != s->n_params) {
        for (int32_t q = 0; q < s->n_params; q++)
            if (!cJSON_GetObjectItemCaseSensitive(d, s->params[q].name))
                return ts_fail(p, "default", NULL,
                               "parameter %s has no value; a default names "
                               "every parameter",
                               s->params[q].name);
    }
    return 0;
}

static int parse_root(pctx *p, const cJSON *root)
{
    tune_spec *s = p->s;
    static const char *const keys[] = {
        "name",         "kernel",       "parameters", "constraints", "sizes",
        "geometry",     "local_memory", "arguments",  "reference",   "tolerance",
        "workload_key", "timing",       "search",     "default",     NULL};
    if (!cJSON_IsObject(root))
        return ts_fail(p, "", root, "a spec is one JSON object");
    if (ts_check_keys(p, root, "", keys) || ts_get_str(p, root, "name", "", 0, 0, NULL, &s->name) ||
        parse_kernel(p, root) || parse_params(p, root) || parse_constraints_sizes(p, root))
        return -1;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "geometry");
    static const char *const gkeys[] = {"global", "local", NULL};
    if (!g)
        return ts_fail(p, "geometry", NULL,
                       "missing; expected {\"global\": [...], \"local\": [...]}");
    if (ts_need_object(p, g, "geometry") || ts_check_keys(p, g, "geometry", gkeys) ||
        ts_parse_geometry(p, g, "geometry", s->global, s->local))
        return -1;
    const cJSON *lm = cJSON_GetObjectItemCaseSensitive(root, "local_memory");
    if (lm && ts_get_expr(p, lm, "local_memory", "4 * TILE * TILE", &s->local_memory))
        return -1;
    return ts_parse_arguments(p, root) || ts_parse_reference(p, root) || parse_search(p, root) ||
           parse_default(p, root);
}

tune_spec *tune_spec_parse(const char *text, const char *file, const char *dir, char *err,
                           size_t cap)
{
    assert(text && err && cap);
    err[0] = '\0';
    if (!file)
        file = "(spec)";
    tune_spec *s = calloc(1, sizeof *s);
    struct ts_arena *a = calloc(1, sizeof *a);
    if (!s || !a) {
        free(s);
        free(a);
        snprintf(err, cap, "%s: out of memory", file);
        return NULL;
    }
    s->arena = a;
    pctx p = {s, a, file, dir ? dir : ".", err, cap};
    s->file = ts_strdup(a, file);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        /* cJSON says where it stopped: turn it into line and column. */
        const char *at = cJSON_GetErrorPtr();
        int line = 1, col = 1;
        for (const char *c = text; at && c < at && *c; c++) {
            if (*c == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        int near = 0; /* the rest of the line, at most 30 characters */
        while (at && near < 30 && at[near] && at[near] != '\n' && at[near] != '\r')
            near++;
        snprintf(err, cap, "%s: not valid JSON at line %d, column %d (near '%.*s')", file, line,
                 col, near, at ? at : "");
        goto fail;
    }
    s->json = root;
    if (ts_unique_keys(&p, root, "") || parse_root(&p, root))
        goto fail;
    if (!s->name) {
        const char *base = strrchr(file, '/');
        base = base ? base + 1 : file;
        size_t n = strlen(base);
        if (n > 5 && strcmp(base + n - 5, ".json") == 0)
            n -= 5;
        s->name = ts_strndup(a, base, n);
    }
    return s;
fail:
    tune_spec_free(s);
    return NULL;
}

tune_spec *tune_spec_load(const char *path, char *err, size_t cap)
{
    assert(path && err && cap);
    char *buf = NULL, why[128];
    size_t used = 0;
    if (gpo_file_read(path, TS_MAX_SPEC_BYTES, &buf, &used, why, sizeof why)) {
        if (errno == EFBIG)
            snprintf(err, cap, "%s: %s; a spec names its data files instead", path, why);
        else
            snprintf(err, cap, "%s: cannot be opened: %s", path, why);
        return NULL;
    }
    if (strlen(buf) != used) {
        snprintf(err, cap, "%s: contains a NUL byte; a spec is JSON text", path);
        free(buf);
        return NULL;
    }
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path == 0 ? 1 : slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    tune_spec *s = tune_spec_parse(buf, path, dir, err, cap);
    free(buf);
    return s;
}

void tune_spec_free(tune_spec *spec)
{
    if (!spec)
        return;
    cJSON_Delete(spec->json);
    ts_arena_free(spec->arena);
    free(spec);
}
