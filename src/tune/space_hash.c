/* The space's canonical description and hash (cache keys), and the hash
 * of an index vector (the search's tables). */
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "util/hash.h"
#include "util/strutil.h"
#include "tune/space_impl.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

gpuopt_status gpo_space_canonical(const gpuopt_space *s, char **text)
{
    gpuopt_status st = GPUOPT_OK;
    int32_t n = 0, cap = s ? s->nparams + s->ncons : 0;
    char **lines = NULL;
    gpo_sbuf out;
    gpo_sbuf_init(&out);
    if (text)
        *text = NULL;
    if (!s || !text)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "space canonical: NULL argument");
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

gpuopt_status gpo_space_hash(const gpuopt_space *s, uint64_t *hash)
{
    if (!s || !hash)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "space hash: NULL argument");
    char *text;
    gpuopt_status st = gpo_space_canonical(s, &text);
    if (st != GPUOPT_OK)
        return st;
    *hash = gpo_hash64(text, strlen(text));
    free(text);
    return GPUOPT_OK;
}

uint64_t gpo_space_idx_hash(const gpuopt_space *s, const uint32_t *idx)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int32_t p = 0; s && idx && p < s->nparams; p++)
        h = gpo_hash_mix64(h ^ (idx[p] + 0x100000001b3ull * (uint64_t)(p + 1)));
    return h;
}
