/* A result as JSON (everything: settings, timings, every candidate) and as
 * CSV (one row per candidate, one column per parameter), for spreadsheets
 * and plotting. docs/tuning.md ("Results") shows both. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "util/strutil.h"
#include "tune/result_impl.h"

static int add_num(cJSON *o, const char *name, double v)
{
    return cJSON_AddNumberToObject(o, name, isfinite(v) ? v : -1) ? 0 : -1;
}

static int add_stats(cJSON *o, const gpo_stats *s, int timed)
{
    int e = 0;
    e |= add_num(o, "runs", timed ? s->count : 0);
    e |= add_num(o, "median_ns", timed ? s->median : -1);
    e |= add_num(o, "p20_ns", timed ? s->p20 : -1);
    e |= add_num(o, "p80_ns", timed ? s->p80 : -1);
    e |= add_num(o, "min_ns", timed ? s->min : -1);
    e |= add_num(o, "cv", timed ? s->cv : -1);
    return e;
}

static cJSON *cand_json(const gpuopt_result *res, int32_t i)
{
    const gpo_rcand *c = &res->c[i];
    cJSON *o = cJSON_CreateObject();
    cJSON *p = gpo_point_params_json(c->config);
    if (!o || !p || !cJSON_AddItemToObject(o, "params", p)) {
        cJSON_Delete(o);
        cJSON_Delete(p);
        return NULL;
    }
    int e = add_num(o, "index", i);
    e |= !cJSON_AddStringToObject(o, "status", gpo_cache_status_name(c->status));
    e |= add_stats(o, &c->stats, c->timed);
    e |= add_num(o, "compile_ms", c->compile_ms);
    e |= !cJSON_AddStringToObject(o, "message", c->message ? c->message : "");
    e |= !cJSON_AddBoolToObject(o, "resumed", c->resumed);
    if (e) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

GPUOPT_API gpuopt_status gpuopt_result_to_json(const gpuopt_result *res, char **json)
{
    gpo_detail_clear();
    if (json)
        *json = NULL;
    if (!res || !json)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_result_to_json: %s is NULL",
                        res ? "json" : "result");
    cJSON *o = cJSON_CreateObject(), *x;
    char seed[24];
    gpo_snprintf(seed, sizeof seed, "%llu", (unsigned long long)res->seed);
    int e = !o;
    e = e || !cJSON_AddStringToObject(o, "device", res->device);
    e = e || !cJSON_AddStringToObject(o, "device_name", res->device_name);
    e = e || !cJSON_AddStringToObject(o, "backend", res->backend);
    e = e || !cJSON_AddStringToObject(o, "subject", res->subject);
    e = e || add_num(o, "from_cache", res->from_cache);
    e = e || !cJSON_AddBoolToObject(o, "validated", res->validated);
    e = e || !(res->workload ? cJSON_AddStringToObject(o, "workload", res->workload)
                             : cJSON_AddNullToObject(o, "workload"));
    e = e || !cJSON_AddStringToObject(o, "strategy", res->strategy);
    e = e || !cJSON_AddStringToObject(o, "strategy_requested", res->requested);
    /* A decimal string: JSON numbers lose 64-bit integers. */
    e = e || !cJSON_AddStringToObject(o, "seed", seed);
    e = e || !(x = cJSON_AddObjectToObject(o, "budget"));
    e = e || add_num(x, "max_evaluations", res->max_evaluations) ||
        add_num(x, "max_seconds", res->max_seconds) ||
        add_num(x, "max_failures", res->max_failures);
    e = e || !(x = cJSON_AddObjectToObject(o, "timing"));
    e = e || add_num(x, "warmup_ms", res->timing.warmup_ms) ||
        add_num(x, "repeat_ms", res->timing.repeat_ms) ||
        add_num(x, "min_runs", res->timing.min_runs) ||
        add_num(x, "max_runs", res->timing.max_runs) ||
        add_num(x, "probe_runs", res->timing.probe_runs) ||
        add_num(x, "prune_ratio", res->timing.prune_ratio) ||
        add_num(x, "timeout_s", res->timeout_s);
    e = e || !cJSON_AddStringToObject(o, "stop_reason", res->stop);
    e = e || add_num(o, "wall_s", res->wall_s);
    e = e || !(res->legal ? cJSON_AddNumberToObject(o, "legal", (double)res->legal)
                          : cJSON_AddNullToObject(o, "legal"));
    e = e || add_num(o, "evaluations", res->evaluations) || add_num(o, "failures", res->failures);
    e = e || add_num(o, "best", res->best);
    cJSON *fin = NULL, *arr = NULL;
    e = e || !(fin = cJSON_AddArrayToObject(o, "final"));
    for (int32_t i = 0; !e && i < res->nfinal; i++) {
        cJSON *f = cJSON_CreateObject();
        e = !f || !cJSON_AddItemToArray(fin, f) || add_num(f, "index", res->final[i].index) ||
            add_stats(f, &res->final[i].stats, res->final[i].stats.count > 0);
    }
    e = e || !(arr = cJSON_AddArrayToObject(o, "candidates"));
    for (int32_t i = 0; !e && i < res->n; i++) {
        cJSON *c = cand_json(res, i);
        e = !c || !cJSON_AddItemToArray(arr, c);
        if (!c)
            break;
    }
    char *text = e ? NULL : cJSON_Print(o);
    cJSON_Delete(o);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing a result as JSON");
    /* cJSON allocates with malloc: gpuopt_free (free) releases it. */
    *json = text;
    return GPUOPT_OK;
}

/* A CSV field, quoted when it needs to be (RFC 4180). */
static void csv_field(gpo_sbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        gpo_sbuf_append(b, s);
        return;
    }
    gpo_sbuf_append(b, "\"");
    for (const char *p = s; *p; p++)
        gpo_sbuf_append(b, *p == '"' ? "\"\"" : (char[2]){*p, 0});
    gpo_sbuf_append(b, "\"");
}

static void csv_num(gpo_sbuf *b, double v)
{
    gpo_sbuf_appendf(b, ",%.12g", isfinite(v) ? v : -1);
}

GPUOPT_API gpuopt_status gpuopt_result_to_csv(const gpuopt_result *res, char **csv)
{
    gpo_detail_clear();
    if (csv)
        *csv = NULL;
    if (!res || !csv)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_result_to_csv: %s is NULL",
                        res ? "csv" : "result");
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    int32_t np = gpo_space_param_count(res->space);
    gpo_sbuf_append(&b, "index");
    for (int32_t p = 0; p < np; p++) {
        gpo_sbuf_append(&b, ",");
        csv_field(&b, gpo_space_param_name(res->space, p));
    }
    gpo_sbuf_append(&b, ",status,runs,median_ns,p20_ns,p80_ns,min_ns,compile_ms,best,message\n");
    for (int32_t i = 0; i < res->n; i++) {
        const gpo_rcand *c = &res->c[i];
        const uint32_t *idx = gpo_point_indices(c->config);
        gpo_sbuf_appendf(&b, "%d", (int)i);
        for (int32_t p = 0; p < np; p++) {
            gpo_sbuf_append(&b, ",");
            csv_field(&b, gpo_space_value_text(res->space, p, idx[p]));
        }
        gpo_sbuf_appendf(&b, ",%s", gpo_cache_status_name(c->status));
        csv_num(&b, c->timed ? c->stats.count : 0);
        csv_num(&b, c->timed ? c->stats.median : -1);
        csv_num(&b, c->timed ? c->stats.p20 : -1);
        csv_num(&b, c->timed ? c->stats.p80 : -1);
        csv_num(&b, c->timed ? c->stats.min : -1);
        csv_num(&b, c->compile_ms);
        gpo_sbuf_appendf(&b, ",%d,", i == res->best);
        csv_field(&b, c->message ? c->message : "");
        gpo_sbuf_append(&b, "\n");
    }
    char *text = gpo_sbuf_take(&b);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing a result as CSV");
    *csv = text;
    return GPUOPT_OK;
}
