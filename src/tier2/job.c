/* A tier-2 job's knobs and figures (bench.h). */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tier2/bench.h"
#include "util/json.h"
#include "util/strutil.h"

gpuopt_status gpo_t2_knob(gpo_t2_job *job, const char *type, const char *name, double value,
                          const char *fmt, ...)
{
    assert(job && type && name && fmt);
    char reason[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    gpo_json b = {0};
    if (!job->knobs)
        job->knobs = cJSON_CreateArray(); /* NULL fails the add below */
    cJSON *k = gpo_json_object(&b, job->knobs, NULL);
    gpo_json_str(&b, k, "name", name);
    gpo_json_str(&b, k, "type", type);
    gpo_json_num(&b, k, "value", value);
    gpo_json_str(&b, k, "reason", reason);
    return b.failed ? gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory") : GPUOPT_OK;
}

gpuopt_status gpo_t2_note(gpo_t2_job *job, const char *field, double value)
{
    assert(job && field);
    if (!job->extra && !(job->extra = cJSON_CreateObject()))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(job->extra, field);
    if (!cJSON_AddNumberToObject(job->extra, field, value))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    return GPUOPT_OK;
}

gpuopt_status gpo_t2_space_int(const char *param, const int64_t *values, int32_t n,
                               int64_t incumbent, gpuopt_space **out, int32_t *at)
{
    gpuopt_status st = gpuopt_space_create(out);
    if (st == GPUOPT_OK && (st = gpuopt_space_add_int(*out, param, values, n)) != GPUOPT_OK) {
        gpuopt_space_destroy(*out);
        *out = NULL;
    }
    for (int32_t i = 0; at && i < n; i++)
        if (values[i] == incumbent) {
            *at = i;
            return st;
        }
    if (at)
        *at = -1;
    return st;
}

int64_t gpo_t2_value(const gpuopt_result *res, int32_t i, const char *param)
{
    int64_t v = -1;
    gpuopt_point_get_int(gpo_result_point(res, i), param, &v);
    return v;
}

int32_t gpo_t2_find(const gpuopt_result *res, const char *param, int64_t v)
{
    for (int32_t i = 0; i < gpo_result_count_of(res); i++)
        if (gpo_t2_value(res, i, param) == v)
            return i;
    return -1;
}

void gpo_t2_tried(const gpo_t2_job *job, const gpuopt_result *res, const char *param,
                  const char *invalid, char *out, size_t cap)
{
    out[0] = '\0';
    for (uint32_t k = 0; k < (uint32_t)gpo_space_value_count(job->space, 0); k++) {
        int64_t v = gpo_space_value(job->space, 0, k);
        int32_t i = gpo_t2_find(res, param, v), s = i >= 0 ? gpo_result_status(res, i) : -1;
        size_t n = strlen(out);
        gpo_snprintf(out + n, cap - n, "%s%lld%s%s%s", n ? ", " : "", (long long)v,
                     s < 0                   ? " (not measured: budget)"
                     : s == GPO_CAND_INVALID ? " ("
                     : s == GPO_CAND_PRUNED  ? " (pruned)"
                                             : "",
                     s == GPO_CAND_INVALID ? invalid : "", s == GPO_CAND_INVALID ? ")" : "");
    }
}

int gpo_t2_has_pinned(const gpo_runtime_ops *ops)
{
    return ops->host_alloc_pinned && ops->host_free_pinned;
}

gpuopt_status gpo_t2_fill(const gpo_t2_rt *g, gpo_rt_buf *buf, size_t bytes)
{
    enum { CHUNK = 1u << 20 };
    uint32_t *chunk = malloc(CHUNK);
    if (!chunk)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    /* Odd words: never zero, nothing a page or a cache could share. */
    for (size_t i = 0; i < CHUNK / 4; i++)
        chunk[i] = (uint32_t)i * 2654435761u | 1u;
    gpuopt_status st = GPUOPT_OK;
    for (size_t off = 0; off < bytes && !st; off += CHUNK)
        st =
            g->ops->buffer_write(g->rt, buf, off, chunk, bytes - off < CHUNK ? bytes - off : CHUNK);
    free(chunk);
    return st;
}
