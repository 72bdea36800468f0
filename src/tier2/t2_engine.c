/* The tier-2 engine: for each benchmark of a run, the cache key, the
 * lookup, the budget share, the measurement or re-verification, the
 * record, and the knobs (tier2.h describes the flow). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan.h"
#include "util/strutil.h"
#include "tier2/tier2.h"

double gpo_tier2_budget_scale = 1.0;
void (*gpo_tier2_hook)(const char *event, const char *kind);

static void hook(const char *event, const char *kind)
{
    if (gpo_tier2_hook)
        gpo_tier2_hook(event, kind);
}

void gpo_t2_init(gpo_t2 *t2, struct gpuopt_plan *plan, const gpo_route *route,
                 const gpuopt_device *dev, const char *source_hash, const char *options)
{
    memset(t2, 0, sizeof *t2);
    t2->plan = plan;
    t2->dev = dev;
    t2->route = route;
    t2->log = plan ? gpo_plan_log(plan) : NULL;
    t2->backend = route && route->backend ? route->backend->name : "";
    t2->source_hash = source_hash ? source_hash : "";
    t2->options = options ? options : "";
    /* The session's compiler string (compiler_version) would need a
     * session, which a hit must not open: the route's record names the
     * driver and runtime versions, which move with the compiler. */
    if (route) {
        t2->soft.driver = route->info.driver_version;
        t2->soft.compiler = route->info.runtime_version;
    }
    t2->soft.library = NULL; /* this library's version */
    t2->soft.device_name = dev ? dev->info.name : "";
}

double gpo_t2_job_left_ms(const gpo_t2_job *job)
{
    uint64_t now = gpo_now_ns();
    return job && job->deadline_ns > now ? (double)(job->deadline_ns - now) / 1e6 : 0.0;
}

/* ---- the knobs a benchmark produces ---------------------------------------- */

static gpuopt_status add_knob(gpo_t2_job *job, const char *name, const char *type, double value,
                              const char *fmt, va_list ap)
{
    if (!job || !name || !fmt)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2: NULL job, knob name or reason");
    char reason[1024];
    vsnprintf(reason, sizeof reason, fmt, ap);
    if (!job->knobs && !(job->knobs = cJSON_CreateArray()))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    cJSON *k = cJSON_CreateObject();
    if (!k || !cJSON_AddItemToArray(job->knobs, k)) {
        cJSON_Delete(k);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    }
    if (!cJSON_AddStringToObject(k, "name", name) || !cJSON_AddStringToObject(k, "type", type) ||
        !cJSON_AddNumberToObject(k, "value", value) ||
        !cJSON_AddStringToObject(k, "reason", reason))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    return GPUOPT_OK;
}

gpuopt_status gpo_t2_job_knob_int(gpo_t2_job *job, const char *name, int64_t value, const char *fmt,
                                  ...)
{
    va_list ap;
    va_start(ap, fmt);
    gpuopt_status st = add_knob(job, name, "int", (double)value, fmt, ap);
    va_end(ap);
    return st;
}

gpuopt_status gpo_t2_job_knob_bool(gpo_t2_job *job, const char *name, int value, const char *fmt,
                                   ...)
{
    va_list ap;
    va_start(ap, fmt);
    gpuopt_status st = add_knob(job, name, "bool", value ? 1 : 0, fmt, ap);
    va_end(ap);
    return st;
}

gpuopt_status gpo_t2_job_knob_bytes(gpo_t2_job *job, const char *name, uint64_t value,
                                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gpuopt_status st = add_knob(job, name, "bytes", (double)value, fmt, ap);
    va_end(ap);
    return st;
}

gpuopt_status gpo_t2_job_note(gpo_t2_job *job, const char *field, double value)
{
    if (!job || !field)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2: NULL job or field");
    if (!job->extra && !(job->extra = cJSON_CreateObject()))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(job->extra, field);
    if (!cJSON_AddNumberToObject(job->extra, field, value))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    return GPUOPT_OK;
}

/* Sets the knobs of `list` on the plan with `source`; `suffix` (may be "")
 * is appended to every reason. A stored list that does not read is a
 * failure: the record is not ours to trust. */
static gpuopt_status set_knobs(gpo_t2 *t2, const cJSON *list, int32_t source, const char *suffix)
{
    struct gpuopt_plan *p = t2->plan;
    int32_t was = p->cur_source;
    gpuopt_status st = GPUOPT_OK;
    const cJSON *k;
    p->cur_source = source;
    cJSON_ArrayForEach(k, list)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(k, "type");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(k, "value");
        const cJSON *reason = cJSON_GetObjectItemCaseSensitive(k, "reason");
        if (!cJSON_IsString(name) || !cJSON_IsString(type) || !cJSON_IsNumber(value) ||
            !cJSON_IsString(reason)) {
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                          "tier 2: a stored knob lacks its name, type, value or reason");
            break;
        }
        const char *ty = type->valuestring;
        double v = value->valuedouble;
        if (strcmp(ty, "bool") == 0)
            st = gpo_knob_set_bool(p, name->valuestring, v != 0, "%s%s", reason->valuestring,
                                   suffix);
        else if (strcmp(ty, "bytes") == 0 && v >= 0)
            st = gpo_knob_set_bytes(p, name->valuestring, (uint64_t)v, "%s%s", reason->valuestring,
                                    suffix);
        else if (strcmp(ty, "int") == 0)
            st = gpo_knob_set_int(p, name->valuestring, (int64_t)v, "%s%s", reason->valuestring,
                                  suffix);
        else
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2: stored knob %s has type \"%s\"",
                          name->valuestring, ty);
        if (st)
            break;
    }
    p->cur_source = was;
    return st;
}

/* ---- one job ------------------------------------------------------------------ */

static void job_clear(gpo_t2_job *job)
{
    cJSON_Delete(job->knobs);
    cJSON_Delete(job->extra);
    cJSON_Delete(job->best_params);
    cJSON_Delete(job->runner_params);
    cJSON_Delete(job->resume);
    gpo_cache_abandon(job->tune);
    job->knobs = job->extra = job->best_params = job->runner_params = job->resume = NULL;
    job->tune = NULL;
}

static gpuopt_status job_key(gpo_t2 *t2, gpo_t2_job *job, void *user)
{
    const gpo_t2_bench *b = job->bench;
    gpo_snprintf(job->kind, sizeof job->kind, "bench.%s", b->name);
    gpuopt_status st =
        b->describe(t2, user, job->workload, sizeof job->workload, job->space, sizeof job->space);
    if (st)
        return st;
    job->space_hash[0] = '\0';
    if (job->space[0]) {
        st = gpo_cache_hash_text(job->space, strlen(job->space), job->space_hash,
                                 sizeof job->space_hash);
        if (st)
            return st;
    }
    gpo_cache_device cd;
    gpo_cache_device_from_info(&t2->dev->info, &cd);
    job->key.kind = job->kind;
    job->key.backend = t2->backend;
    job->key.compute_units = cd.compute_units;
    job->key.source_hash = t2->source_hash;
    job->key.options_hash = t2->options;
    job->key.space_hash = job->space_hash;
    job->key.workload = job->workload;
    return GPUOPT_OK;
}

static gpuopt_status payload_of(gpo_t2_job *job, cJSON **out)
{
    cJSON *p = job->extra ? cJSON_Duplicate(job->extra, 1) : cJSON_CreateObject();
    cJSON *k = !p ? NULL : job->knobs ? cJSON_Duplicate(job->knobs, 1) : cJSON_CreateArray();
    if (!p || !k || !cJSON_AddItemToObject(p, "knobs", k)) {
        cJSON_Delete(k);
        cJSON_Delete(p);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    }
    *out = p;
    return GPUOPT_OK;
}

/* Writes what a measurement found: a plain record, or the finished sweep. */
static gpuopt_status store(gpo_t2 *t2, gpo_t2_job *job, double wall_s)
{
    cJSON *payload = NULL;
    gpuopt_status st = payload_of(job, &payload);
    if (st)
        return st;
    if (job->tune) {
        st = gpo_cache_finish(job->tune, job->best_params, job->best_params ? &job->best : NULL,
                              job->runner_params, job->runner_params ? &job->runner : NULL,
                              job->complete, wall_s, payload);
        job->tune = NULL;
    } else if (t2->cache) {
        st = gpo_cache_put(t2->cache, &job->key, &t2->soft, payload);
    }
    cJSON_Delete(payload);
    return st;
}

static void changed_words(uint32_t changed, char *out, size_t cap)
{
    out[0] = '\0';
    for (uint32_t bit = 1; bit <= GPO_SOFT_DEVICE_NAME; bit <<= 1) {
        if (!(changed & bit))
            continue;
        size_t n = strlen(out);
        gpo_snprintf(out + n, cap - n, "%s%s", n ? ", " : "", gpo_cache_soft_name(bit));
    }
}

static void day_of(int64_t t, char *out, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (t <= 0 || !gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d", &tm))
        gpo_strlcpy(out, "an earlier run", cap);
}

/* Measures a job: its benchmark, then the record and the knobs. */
static gpuopt_status measure(gpo_t2 *t2, gpo_t2_job *job, void *user)
{
    uint64_t t0 = gpo_now_ns();
    job->complete = 1;
    hook("measure", job->kind);
    gpuopt_status st = job->bench->measure(t2, job, user);
    if (!st)
        st = store(t2, job, (double)(gpo_now_ns() - t0) / 1e9);
    if (!st && job->knobs)
        st = set_knobs(t2, job->knobs, GPUOPT_SOURCE_BENCHMARK, "");
    t2->measured++;
    gpo_log_debug(t2->log, "%s: tier 2 %s measured in %.1f ms%s", t2->dev->info.id, job->kind,
                  (double)(gpo_now_ns() - t0) / 1e6,
                  st              ? ""
                  : job->complete ? ""
                                  : " (budget spent before the last candidate)");
    return st;
}

/* Re-times a changed hit's winner and runner-up; 1 in *done when it held
 * and its knobs are set. */
static gpuopt_status verify(gpo_t2 *t2, gpo_t2_job *job, void *user, const gpo_cache_hit *hit,
                            int *done)
{
    char what[64], day[32];
    int keep = 0;
    *done = 0;
    changed_words(hit->changed, what, sizeof what);
    job->hit = hit;
    job->verify_best_ns = job->verify_runner_ns = -1;
    job->verify_note[0] = '\0';
    hook("verify", job->kind);
    gpuopt_status st = job->bench->verify(t2, job, user, &keep);
    job->hit = NULL;
    if (st)
        return st;
    if (t2->cache) {
        st = gpo_cache_record_verify(t2->cache, &job->key, &t2->soft, keep, job->verify_best_ns,
                                     job->verify_runner_ns);
        if (st)
            return st;
    }
    gpo_log_debug(t2->log, "%s: tier 2 %s: the %s changed; %s: %s", t2->dev->info.id, job->kind,
                  what, keep ? "the stored winner holds" : "measuring again", job->verify_note);
    if (!keep)
        return GPUOPT_OK;
    const cJSON *knobs = cJSON_GetObjectItemCaseSensitive(hit->payload, "knobs");
    day_of(hit->time, day, sizeof day);
    char suffix[512];
    gpo_snprintf(suffix, sizeof suffix,
                 " (measured %s; re-verified now because the %s changed: %s)", day, what,
                 job->verify_note);
    st = set_knobs(t2, knobs, GPUOPT_SOURCE_BENCHMARK, suffix);
    *done = !st;
    return st;
}

/* ---- the run -------------------------------------------------------------------- */

enum { JOB_SKIP, JOB_HIT, JOB_VERIFY, JOB_MEASURE };

gpuopt_status gpo_t2_run(gpo_t2 *t2, const gpo_t2_bench *const *list, size_t n, void *user,
                         double budget_ms)
{
    if (!t2 || !t2->plan || !t2->dev || !t2->route || (!list && n))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2: NULL run, plan, device or route");
    gpo_t2_job *jobs = calloc(n ? n : 1, sizeof *jobs);
    gpo_cache_hit **hits = calloc(n ? n : 1, sizeof *hits);
    int *what = calloc(n ? n : 1, sizeof *what);
    gpo_cache_device cd;
    gpuopt_status st = GPUOPT_OK;
    if (!jobs || !hits || !what) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
        goto out;
    }
    double scale = gpo_tier2_budget_scale > 0 ? gpo_tier2_budget_scale : 1.0;
    t2->start_ns = gpo_now_ns();
    t2->deadline_ns = t2->start_ns + (uint64_t)(budget_ms * scale * 1e6);
    gpo_cache_device_from_info(&t2->dev->info, &cd);

    const gpo_config *cfg = gpo_plan_config(t2->plan);
    if (!t2->cache && cfg) {
        st = gpo_cache_open(cfg->cache_dir, &cd, NULL, t2->log, &t2->cache);
        if (st == GPUOPT_ERR_NO_MEMORY)
            goto out;
        if (st) {
            gpo_snprintf(t2->cache_why, sizeof t2->cache_why, "%s", gpo_detail_get());
            st = GPUOPT_OK;
        }
    }

    /* Pass 1: keys and lookups; plain hits set their knobs at once. */
    double weights = 0;
    for (size_t i = 0; i < n; i++) {
        gpo_t2_job *job = &jobs[i];
        job->bench = list[i];
        if (!job->bench || !job->bench->describe || !job->bench->measure) {
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2: benchmark %zu is incomplete", i);
            goto out;
        }
        job->key.arch = cd.arch;
        st = job_key(t2, job, user);
        if (st == GPUOPT_ERR_UNSUPPORTED) {
            gpo_log_debug(t2->log, "%s: tier 2 %s skipped: %s", t2->dev->info.id, job->kind,
                          gpo_detail_get());
            what[i] = JOB_SKIP;
            st = GPUOPT_OK;
            continue;
        }
        if (st)
            goto out;
        what[i] = JOB_MEASURE;
        if (t2->cache) {
            st = gpo_cache_lookup(t2->cache, &job->key, &t2->soft, &hits[i]);
            if (st == GPUOPT_ERR_NO_MEMORY || st == GPUOPT_ERR_INVALID_ARGUMENT ||
                st == GPUOPT_ERR_OUT_OF_RANGE)
                goto out;
            st = GPUOPT_OK;
        }
        const gpo_cache_hit *h = hits[i];
        const cJSON *knobs = h ? cJSON_GetObjectItemCaseSensitive(h->payload, "knobs") : NULL;
        if (h && h->complete && cJSON_IsArray(knobs) && !h->changed) {
            char day[32], suffix[64];
            day_of(h->time, day, sizeof day);
            gpo_snprintf(suffix, sizeof suffix, " (measured %s, from the tuning cache)", day);
            hook("hit", job->kind);
            st = set_knobs(t2, knobs, GPUOPT_SOURCE_CACHE, suffix);
            if (st)
                goto out;
            what[i] = JOB_HIT;
            continue;
        }
        if (h && h->complete && cJSON_IsArray(knobs) && h->best && job->bench->verify)
            what[i] = JOB_VERIFY;
        if (h && !h->complete) {
            int finished = 0;
            st = gpo_cache_candidates(t2->cache, &job->key, &job->resume, &finished);
            if (st == GPUOPT_ERR_NO_MEMORY)
                goto out;
            st = GPUOPT_OK;
        }
        weights += job->bench->weight;
    }

    /* Pass 2: what missed shares the budget, in list order. */
    for (size_t i = 0; i < n; i++) {
        gpo_t2_job *job = &jobs[i];
        if (what[i] == JOB_SKIP || what[i] == JOB_HIT)
            continue;
        uint64_t now = gpo_now_ns();
        uint64_t left = t2->deadline_ns > now ? t2->deadline_ns - now : 0;
        double share = weights > 0 ? job->bench->weight / weights : 1.0;
        job->deadline_ns = now + (uint64_t)((double)left * share);
        weights -= job->bench->weight;
        if (what[i] == JOB_VERIFY) {
            int done = 0;
            st = verify(t2, job, user, hits[i], &done);
            if (st)
                goto out;
            if (done)
                continue;
        }
        st = measure(t2, job, user);
        if (st)
            goto out;
    }
    gpo_log_debug(t2->log, "%s: tier 2 on %s took %.1f ms (%d measured)%s%s", t2->dev->info.id,
                  t2->backend, (double)(gpo_now_ns() - t2->start_ns) / 1e6, t2->measured,
                  t2->cache_why[0] ? "; nothing cached: " : "", t2->cache_why);
out:
    for (size_t i = 0; jobs && i < n; i++) {
        job_clear(&jobs[i]);
        if (hits)
            gpo_cache_hit_free(hits[i]);
    }
    free(jobs);
    free(hits);
    free(what);
    gpo_cache_close(t2->cache);
    t2->cache = NULL;
    return st;
}
