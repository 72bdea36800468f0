/* Small pieces of spec handling shared by the loader and the command: the
 * arena that owns a spec's strings, the name tables (strategies, element
 * types), size overrides and the sizes' text. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_spec_int.h"

struct ts_arena_block {
    struct ts_arena_block *next;
    max_align_t data[];
};

void *ts_alloc(struct ts_arena *a, size_t bytes)
{
    struct ts_arena_block *b = calloc(1, sizeof *b + (bytes ? bytes : 1));
    if (!b)
        return NULL;
    b->next = a->head;
    a->head = b;
    return b->data;
}

char *ts_strndup(struct ts_arena *a, const char *s, size_t n)
{
    char *d = ts_alloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *ts_strdup(struct ts_arena *a, const char *s)
{
    return ts_strndup(a, s, strlen(s));
}

void ts_arena_free(struct ts_arena *a)
{
    if (!a)
        return;
    struct ts_arena_block *b = a->head;
    while (b) {
        struct ts_arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(a);
}

/* The values of the public gpuopt_strategy, in order. */
static const char *const strategy_names[] = {"auto", "exhaustive", "random", "annealing", "model"};

int32_t tune_spec_strategy_parse(const char *name)
{
    for (int32_t i = 0; name && i < (int32_t)(sizeof strategy_names / sizeof *strategy_names); i++)
        if (strcmp(name, strategy_names[i]) == 0)
            return i;
    return -1;
}

const char *tune_spec_strategy_name(int32_t strategy)
{
    if (strategy < 0 || strategy >= (int32_t)(sizeof strategy_names / sizeof *strategy_names))
        return "?";
    return strategy_names[strategy];
}

/* The values of the public gpuopt_isolation, in order. */
static const char *const isolation_names[] = {"auto", "in-process", "worker"};

int32_t tune_spec_isolation_parse(const char *name)
{
    for (int32_t i = 0; name && i < (int32_t)(sizeof isolation_names / sizeof *isolation_names);
         i++)
        if (strcmp(name, isolation_names[i]) == 0)
            return i;
    return -1;
}

/* Element types: the OpenCL C name first (what spec files use), then the
 * short form. Values are gpuopt_elem_type's. */
static const struct {
    const char *name, *alias;
    int32_t type;
} type_names[] = {
    {"float", "f32", GPUOPT_ELEM_F32}, {"double", "f64", GPUOPT_ELEM_F64},
    {"int", "i32", GPUOPT_ELEM_I32},   {"uint", "u32", GPUOPT_ELEM_U32},
    {"long", "i64", GPUOPT_ELEM_I64},
};

int32_t tune_spec_type_parse(const char *name)
{
    for (size_t i = 0; name && i < sizeof type_names / sizeof *type_names; i++)
        if (strcmp(name, type_names[i].name) == 0 || strcmp(name, type_names[i].alias) == 0)
            return type_names[i].type;
    return -1;
}

const char *tune_spec_type_name(int32_t type)
{
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (type_names[i].type == type)
            return type_names[i].name;
    return "?";
}

size_t ts_type_bytes(int32_t type)
{
    return type == GPUOPT_ELEM_F64 || type == GPUOPT_ELEM_I64 ? 8 : 4;
}

int tune_spec_set_size(tune_spec *spec, const char *assignment, char *err, size_t cap)
{
    assert(spec && assignment);
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment) {
        snprintf(err, cap, "--size %s: accepted NAME=VALUE, such as N=1024", assignment);
        return -1;
    }
    size_t n = (size_t)(eq - assignment);
    ts_size *sz = NULL;
    for (int32_t i = 0; i < spec->n_sizes; i++)
        if (strlen(spec->sizes[i].name) == n && strncmp(spec->sizes[i].name, assignment, n) == 0)
            sz = &spec->sizes[i];
    if (!sz) {
        int off = snprintf(err, cap, "--size %s: %s has no size '%.*s'; its sizes: ", assignment,
                           spec->file, (int)n, assignment);
        for (int32_t i = 0; i < spec->n_sizes && off >= 0 && (size_t)off < cap; i++)
            off +=
                snprintf(err + off, cap - (size_t)off, "%s%s", i ? ", " : "", spec->sizes[i].name);
        if (spec->n_sizes == 0 && off >= 0 && (size_t)off < cap)
            snprintf(err + off, cap - (size_t)off, "(none)");
        return -1;
    }
    const char *v = eq + 1;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno || x < 0 || !isdigit((unsigned char)*v)) {
        snprintf(err, cap, "--size %s: '%s' is not accepted; expected a non-negative integer",
                 assignment, v);
        return -1;
    }
    sz->value = x;
    return 0;
}

void tune_spec_sizes_text(const tune_spec *spec, char *out, size_t cap)
{
    size_t off = 0;
    if (cap)
        out[0] = '\0';
    for (int32_t i = 0; spec && i < spec->n_sizes && off < cap; i++) {
        int w = snprintf(out + off, cap - off, "%s%s=%lld", i ? " " : "", spec->sizes[i].name,
                         (long long)spec->sizes[i].value);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}
