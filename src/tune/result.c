/* Results (result.h), and their JSON and CSV for users (docs/tuning.md,
 * "Results", shows both). */
#include <math.h>
#include <time.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tune/result.h"
#include "util/json.h"
#include "util/strutil.h"

typedef struct gpo_rcand {
    gpuopt_point *config; /* owned; keeps the space alive */
    int32_t status;
    int timed; /* stats hold timed runs (OK, PRUNED) */
    gpo_stats stats;
    double compile_ms;
    char *message;
    int resumed; /* measured by an earlier run and read back from the journal */
} gpo_rcand;

typedef struct gpo_rfinal {
    int32_t index; /* candidate */
    gpo_stats stats;
} gpo_rfinal;

struct gpuopt_result {
    const gpuopt_space *space;
    gpo_rcand *c;
    int32_t n;
    size_t cap, capfinal;
    int32_t best, runner;
    int32_t origin;   /* gpuopt_result_origin */
    int64_t time;     /* from the cache: when measured */
    uint32_t changed; /* from the cache: GPO_SOFT_* bits */
    cJSON *payload;   /* from the cache: the record's payload, or NULL */
    int validated;
    gpo_rfinal *final;
    int32_t nfinal;
    /* how it ran */
    char device[32], device_name[256], backend[16], subject[16];
    char strategy[16], requested[16];
    uint64_t seed;
    int32_t max_evaluations, max_failures;
    double max_seconds;
    int32_t asked_evaluations, asked_failures; /* this run's budget; the above: the answer's */
    double asked_seconds;
    gpo_timing_settings timing;
    double timeout_s;
    char stop[32];
    double wall_s;
    uint64_t legal;
    int32_t evaluations, failures;
    char *workload;
};

gpuopt_result *gpo_result_new(const gpo_result_info *info, const gpuopt_space *space)
{
    gpuopt_result *res = calloc(1, sizeof *res);
    if (!res)
        return NULL;
    gpo_space_ref(space);
    res->space = space;
    res->best = res->runner = -1;
    gpo_strlcpy(res->device, info->device, sizeof res->device);
    gpo_strlcpy(res->device_name, info->device_name, sizeof res->device_name);
    gpo_strlcpy(res->backend, info->backend, sizeof res->backend);
    gpo_strlcpy(res->subject, info->subject, sizeof res->subject);
    gpo_strlcpy(res->requested, gpo_strategy_name(info->strategy), sizeof res->requested);
    gpo_strlcpy(res->strategy, res->requested, sizeof res->strategy);
    res->seed = info->seed;
    res->max_evaluations = info->max_evaluations;
    res->max_seconds = info->max_seconds;
    res->max_failures = info->max_failures;
    res->asked_evaluations = info->max_evaluations;
    res->asked_seconds = info->max_seconds;
    res->asked_failures = info->max_failures;
    res->timing = info->timing;
    res->timeout_s = info->timeout_s;
    res->wall_s = -1;
    if (info->workload && !(res->workload = gpo_strdup(info->workload))) {
        gpuopt_result_destroy(res);
        return NULL;
    }
    return res;
}

GPUOPT_API void gpuopt_result_destroy(gpuopt_result *res)
{
    if (!res)
        return;
    for (int32_t i = 0; i < res->n; i++) {
        gpo_point_destroy(res->c[i].config);
        free(res->c[i].message);
    }
    free(res->c);
    free(res->final);
    free(res->workload);
    cJSON_Delete(res->payload);
    gpo_space_unref(res->space);
    free(res);
}

int32_t gpo_result_add(gpuopt_result *res, const uint32_t *idx, const gpo_eval *ev, int resumed)
{
    if (gpo_grow(&res->c, sizeof *res->c, (size_t)res->n, &res->cap, 16))
        return -1;
    gpo_rcand *c = &res->c[res->n];
    memset(c, 0, sizeof *c);
    if (gpo_point_create(res->space, idx, &c->config) != GPUOPT_OK)
        return -1;
    if (!(c->message = gpo_strdup(ev->msg))) {
        gpo_point_destroy(c->config);
        return -1;
    }
    c->status = ev->status;
    c->timed = ev->stats.count > 0;
    c->stats = ev->stats;
    c->compile_ms = ev->compile_ms;
    c->resumed = resumed;
    return res->n++;
}

void gpo_result_set_search(gpuopt_result *res, const gpo_search *s, double wall_s)
{
    const char *name = gpo_strategy_name(gpo_search_strategy(s));
    if (name)
        gpo_strlcpy(res->strategy, name, sizeof res->strategy);
    gpo_strlcpy(res->stop, gpo_search_stop_reason(s), sizeof res->stop);
    res->legal = gpo_search_legal(s);
    res->evaluations = gpo_search_evaluations(s);
    res->failures = gpo_search_failures(s);
    res->wall_s = wall_s;
}

void gpo_result_set_best(gpuopt_result *res, int32_t index)
{
    res->best = index >= 0 && index < res->n ? index : -1;
}

void gpo_result_set_runner(gpuopt_result *res, int32_t index)
{
    res->runner = index >= 0 && index < res->n ? index : -1;
}

void gpo_result_set_validated(gpuopt_result *res, int validated)
{
    res->validated = validated;
}

void gpo_result_set_origin(gpuopt_result *res, int32_t from, int64_t time, uint32_t changed,
                           cJSON *payload)
{
    res->origin = from;
    res->time = time;
    res->changed = changed;
    cJSON_Delete(res->payload);
    res->payload = payload;
}

static double num(const cJSON *o, const char *name, double fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : fallback;
}

void gpo_result_set_record(gpuopt_result *res, const cJSON *record, const char *stop)
{
    const cJSON *strategy = cJSON_GetObjectItemCaseSensitive(record, "strategy");
    if (cJSON_IsString(strategy))
        gpo_strlcpy(res->strategy, strategy->valuestring, sizeof res->strategy);
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(record, "seed");
    if (cJSON_IsString(seed))
        res->seed = strtoull(seed->valuestring, NULL, 10);
    /* The answer's own budget, not this run's: data from disk, so a value
     * out of range stays unknown (-1) and is never converted. */
    const cJSON *budget = cJSON_GetObjectItemCaseSensitive(record, "budget");
    double ev = num(budget, "max_evaluations", -1), fl = num(budget, "max_failures", -1);
    res->max_evaluations = ev >= 0 && ev <= INT32_MAX ? (int32_t)ev : -1;
    res->max_failures = fl >= 0 && fl <= INT32_MAX ? (int32_t)fl : -1;
    res->max_seconds = num(budget, "max_seconds", -1) >= 0 ? num(budget, "max_seconds", -1) : -1;
    res->wall_s = num(record, "wall_s", -1);
    res->evaluations = (int32_t)num(record, "evaluated", 0);
    gpo_strlcpy(res->stop, stop, sizeof res->stop);
}

int gpo_result_add_final(gpuopt_result *res, int32_t index, const gpo_stats *stats)
{
    if (gpo_grow(&res->final, sizeof *res->final, (size_t)res->nfinal, &res->capfinal, 4))
        return -1;
    res->final[res->nfinal++] = (gpo_rfinal){index, *stats};
    return 0;
}

int32_t gpo_result_index_of(const gpuopt_result *res, const gpuopt_point *c)
{
    int32_t np = gpo_space_param_count(res->space);
    for (int32_t i = 0; i < res->n; i++)
        if (memcmp(gpo_point_indices(res->c[i].config), gpo_point_indices(c),
                   (size_t)np * sizeof(uint32_t)) == 0)
            return i;
    return -1;
}

int32_t gpo_result_count_of(const gpuopt_result *res)
{
    return res->n;
}

int32_t gpo_result_best_index(const gpuopt_result *res)
{
    return res->best;
}

int32_t gpo_result_runner_index(const gpuopt_result *res)
{
    return res->runner;
}

const gpuopt_point *gpo_result_point(const gpuopt_result *res, int32_t i)
{
    return res->c[i].config;
}

int32_t gpo_result_status(const gpuopt_result *res, int32_t i)
{
    return res->c[i].status;
}

const char *gpo_result_message(const gpuopt_result *res, int32_t i)
{
    return res->c[i].message;
}

const gpo_stats *gpo_result_stats(const gpuopt_result *res, int32_t i)
{
    for (int32_t f = 0; f < res->nfinal; f++)
        if (res->final[f].index == i && res->final[f].stats.count > 0)
            return &res->final[f].stats;
    return res->c[i].timed ? &res->c[i].stats : NULL;
}

int64_t gpo_result_time(const gpuopt_result *res)
{
    return res->time;
}

uint32_t gpo_result_changed(const gpuopt_result *res)
{
    return res->changed;
}

const cJSON *gpo_result_payload(const gpuopt_result *res)
{
    return res->payload;
}

void gpo_result_cache_stats(const gpuopt_result *res, int32_t i, gpo_cache_stats *out)
{
    /* A finalist's figures are those of the side-by-side re-timing that
     * chose the winner, so the stored best and runner-up compare as they
     * were compared (the search's own figures ran at other moments). */
    const gpo_rcand *c = &res->c[i];
    const gpo_stats *st = gpo_result_stats(res, i);
    out->status = c->status;
    out->runs = st ? st->count : 0;
    out->median_ns = st ? st->median : -1;
    out->min_ns = st ? st->min : -1;
    out->p20_ns = st ? st->p20 : -1;
    out->p80_ns = st ? st->p80 : -1;
    out->compile_ms = c->compile_ms;
}

/* ---- public reading ---------------------------------------------------------- */

/* The first released layout ends with `message`. */
static const size_t first_candidate_size =
    offsetof(gpuopt_candidate, message) + sizeof(const char *);

static gpuopt_status fill(const gpuopt_result *res, int32_t i, gpuopt_candidate *out)
{
    const gpo_rcand *c = &res->c[i];
    gpuopt_candidate v;
    memset(&v, 0, sizeof v);
    v.struct_size = out->struct_size < sizeof v ? out->struct_size : sizeof v;
    v.point = c->config;
    v.status = c->status;
    v.runs = c->timed ? c->stats.count : 0;
    v.median_ns = c->timed ? c->stats.median : -1;
    v.p20_ns = c->timed ? c->stats.p20 : -1;
    v.p80_ns = c->timed ? c->stats.p80 : -1;
    v.min_ns = c->timed ? c->stats.min : -1;
    v.compile_ms = c->compile_ms;
    v.message = c->message;
    memcpy(out, &v, v.struct_size);
    return GPUOPT_OK;
}

/* The checks of gpuopt_result_best and gpuopt_result_at, clearing the
 * caller's candidate first (failure means no output) when its struct_size
 * is one the library knows. */
static gpuopt_status check_out(const gpuopt_result *res, gpuopt_candidate *out, const char *fn)
{
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: candidate is NULL", fn);
    size_t have = out->struct_size;
    GPO_CHECK_STRUCT_SIZE(fn, gpuopt_candidate, have, first_candidate_size);
    memset(out, 0, have < sizeof *out ? have : sizeof *out);
    out->struct_size = have;
    if (!res)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: result is NULL", fn);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_result_best(const gpuopt_result *res, gpuopt_candidate *best)
{
    gpo_detail_clear();
    gpuopt_status st = check_out(res, best, "gpuopt_result_best");
    if (st != GPUOPT_OK)
        return st;
    if (res->best < 0)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "gpuopt_result_best: no valid candidate among the %d evaluated (the "
                        "result lists each with its status and message)",
                        (int)res->n);
    return fill(res, res->best, best);
}

GPUOPT_API gpuopt_status gpuopt_result_count(const gpuopt_result *res, int32_t *count)
{
    GPO_ENTRY_OUT("gpuopt_result_count: ", res, "result", count, 0);
    *count = res->n;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_result_at(const gpuopt_result *res, int32_t index,
                                          gpuopt_candidate *candidate)
{
    gpo_detail_clear();
    gpuopt_status st = check_out(res, candidate, "gpuopt_result_at");
    if (st != GPUOPT_OK)
        return st;
    if (index < 0 || index >= res->n)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "gpuopt_result_at: index %d of %d candidates",
                        (int)index, (int)res->n);
    return fill(res, index, candidate);
}

GPUOPT_API gpuopt_status gpuopt_result_get_origin(const gpuopt_result *res, int32_t *origin)
{
    GPO_ENTRY_OUT("gpuopt_result_get_origin: ", res, "result", origin, 0);
    *origin = res->origin;
    return GPUOPT_OK;
}

/* ---- JSON and CSV -------------------------------------------------------------- */

/* A number; a non-finite one (no measurement) as -1. */
static void put_num(gpo_json *b, cJSON *o, const char *name, double v)
{
    gpo_json_num(b, o, name, isfinite(v) ? v : -1);
}

static void add_stats(gpo_json *b, cJSON *o, const gpo_stats *s, int timed)
{
    put_num(b, o, "runs", timed ? s->count : 0);
    put_num(b, o, "median_ns", timed ? s->median : -1);
    put_num(b, o, "p20_ns", timed ? s->p20 : -1);
    put_num(b, o, "p80_ns", timed ? s->p80 : -1);
    put_num(b, o, "min_ns", timed ? s->min : -1);
    put_num(b, o, "cv", timed ? s->cv : -1);
}

static void cand_json(gpo_json *b, cJSON *arr, const gpuopt_result *res, int32_t i)
{
    const gpo_rcand *c = &res->c[i];
    cJSON *o = gpo_json_object(b, arr, NULL);
    gpo_json_add(b, o, "params", b->failed ? NULL : gpo_point_params_json(c->config));
    put_num(b, o, "index", i);
    gpo_json_str(b, o, "status", gpo_cache_status_name(c->status));
    add_stats(b, o, &c->stats, c->timed);
    put_num(b, o, "compile_ms", c->compile_ms);
    gpo_json_str(b, o, "message", c->message ? c->message : "");
    gpo_json_bool(b, o, "resumed", c->resumed);
}

/* gpuopt_result_origin in JSON: the enumerators' words. */
static const char *const origin_words[] = {"tuned", "cache_hit", "cache_verified"};

GPUOPT_API gpuopt_status gpuopt_result_to_json(const gpuopt_result *res, char **json)
{
    GPO_ENTRY_OUT("gpuopt_result_to_json: ", res, "result", json, NULL);
    char seed[24], measured_at[32] = "";
    gpo_snprintf(seed, sizeof seed, "%llu", (unsigned long long)res->seed);
    time_t when = (time_t)res->time;
    struct tm tm;
    if (res->time > 0 && gmtime_r(&when, &tm))
        strftime(measured_at, sizeof measured_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    gpo_json b = {0};
    cJSON *o = cJSON_CreateObject(), *x;
    b.failed = !o;
    gpo_json_str(&b, o, "device", res->device);
    gpo_json_str(&b, o, "device_name", res->device_name);
    gpo_json_str(&b, o, "backend", res->backend);
    gpo_json_str(&b, o, "subject", res->subject);
    gpo_json_str(&b, o, "origin", origin_words[res->origin]);
    gpo_json_bool(&b, o, "validated", res->validated);
    gpo_json_str(&b, o, "workload", res->workload);
    gpo_json_str(&b, o, "strategy", res->strategy);
    gpo_json_str(&b, o, "strategy_requested", res->requested);
    /* A decimal string: JSON numbers lose 64-bit integers. */
    gpo_json_str(&b, o, "seed", seed);
    x = gpo_json_object(&b, o, "budget");
    put_num(&b, x, "max_evaluations", res->max_evaluations);
    put_num(&b, x, "max_seconds", res->max_seconds);
    put_num(&b, x, "max_failures", res->max_failures);
    x = gpo_json_object(&b, o, "budget_requested");
    put_num(&b, x, "max_evaluations", res->asked_evaluations);
    put_num(&b, x, "max_seconds", res->asked_seconds);
    put_num(&b, x, "max_failures", res->asked_failures);
    gpo_json_str(&b, o, "measured_at", res->time > 0 ? measured_at : NULL);
    x = gpo_json_object(&b, o, "timing");
    put_num(&b, x, "warmup_ms", res->timing.warmup_ms);
    put_num(&b, x, "repeat_ms", res->timing.repeat_ms);
    put_num(&b, x, "min_runs", res->timing.min_runs);
    put_num(&b, x, "max_runs", res->timing.max_runs);
    put_num(&b, x, "probe_runs", res->timing.probe_runs);
    put_num(&b, x, "prune_ratio", res->timing.prune_ratio);
    put_num(&b, x, "timeout_s", res->timeout_s);
    gpo_json_str(&b, o, "stop_reason", res->stop);
    put_num(&b, o, "wall_s", res->wall_s);
    gpo_json_num_or_null(&b, o, "legal", (double)res->legal, res->legal != 0);
    put_num(&b, o, "evaluations", res->evaluations);
    put_num(&b, o, "failures", res->failures);
    put_num(&b, o, "best", res->best);
    x = gpo_json_array(&b, o, "final");
    for (int32_t i = 0; !b.failed && i < res->nfinal; i++) {
        cJSON *f = gpo_json_object(&b, x, NULL);
        put_num(&b, f, "index", res->final[i].index);
        add_stats(&b, f, &res->final[i].stats, res->final[i].stats.count > 0);
    }
    x = gpo_json_array(&b, o, "candidates");
    for (int32_t i = 0; !b.failed && i < res->n; i++)
        cand_json(&b, x, res, i);
    char *text = b.failed ? NULL : cJSON_Print(o);
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
    GPO_ENTRY_OUT("gpuopt_result_to_csv: ", res, "result", csv, NULL);
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
