/* Tier 2 (tier2.h): the one list of built-in benchmarks, each a tuning run
 * of its job; the cache answers first for all of them, then what missed
 * shares the budget; the knobs go on the plan.
 *
 * Budget (docs/knobs.md, "Measured (tier 2)"): from the start of the tier,
 * opening the session and building the kernels included, shared by the
 * benchmarks that missed the cache by their weights; the target is
 * 2 s for the whole plan the first time on PoCL. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache.h"
#include "plan.h"
#include "tier2/bench.h"
#include "util/json.h"
#include "util/strutil.h"

#define RUNTIME_BUDGET_MS 1500.0
#define HOST_BUDGET_MS 500.0

double gpo_tier2_budget_scale = 1.0;
void (*gpo_tier2_hook)(const char *event, const char *kind);

/* The bandwidth comes last: its buffers outgrow the last-level cache (a
 * 512 MiB pair on PoCL here), and its minimum runs on a busy machine can
 * outlast the whole budget; last, it overruns alone instead of leaving
 * the sweeps nothing but tier 1's values. */
static const gpo_t2_bench *const benches[] = {
    &gpo_t2_bench_latency, &gpo_t2_bench_transfer, &gpo_t2_bench_copy,      &gpo_t2_bench_stream,
    &gpo_t2_bench_reduce,  &gpo_t2_bench_tile,     &gpo_t2_bench_bandwidth,
};
#define N_BENCHES (sizeof benches / sizeof benches[0])

static void hook(const char *event, const char *kind)
{
    if (gpo_tier2_hook)
        gpo_tier2_hook(event, kind);
}

/* Why a stored knob list cannot be set on the plan ("" when it can): each
 * entry must name a knob of the catalogue with its declared type, and hold
 * a value inside its domain. A record is data from a file, so this is
 * checked before anything is set; the callers measure again instead. */
static int knobs_invalid(const gpo_t2 *t2, const cJSON *list, char *why, size_t cap)
{
    static const char *const types[] = {
        [GPUOPT_KNOB_BOOL] = "bool", [GPUOPT_KNOB_INT] = "int", [GPUOPT_KNOB_BYTES] = "bytes"};
    const cJSON *k;
    if (!cJSON_IsArray(list))
        return gpo_say(-1, why, cap, "no knob list");
    cJSON_ArrayForEach(k, list)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(k, "type");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(k, "value");
        const gpo_knob_def *def =
            cJSON_IsString(name) ? gpo_plan_knob_def(t2->plan, name->valuestring) : NULL;
        /* Range before conversion: a double outside int64_t never is. */
        double v = cJSON_IsNumber(value) ? value->valuedouble : NAN;
        if (!def || def->derive || def->type < 0 ||
            (size_t)def->type >= sizeof types / sizeof types[0] || !types[def->type] ||
            !cJSON_IsString(type) || strcmp(type->valuestring, types[def->type]) != 0 ||
            !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(k, "reason")) ||
            !(v >= -9.2e18 && v <= 9.2e18) || v != floor(v))
            return gpo_say(-1, why, cap,
                           "a stored knob %s%s%s without a known name, its type or an "
                           "integer value",
                           cJSON_IsString(name) ? "\"" : "",
                           cJSON_IsString(name) ? name->valuestring : "",
                           cJSON_IsString(name) ? "\"" : "");
        char text[32], domain[256];
        gpo_snprintf(text, sizeof text, "%.0f", v);
        if (gpo_knob_check(def, (int64_t)v, text, domain, sizeof domain))
            return gpo_say(-1, why, cap, "knob %s: %s", def->name, domain);
    }
    return 0;
}

/* Sets the knobs of `list` (checked by knobs_invalid) on the plan with
 * `source`; `suffix` (may be "") is appended to every reason. */
static gpuopt_status set_knobs(gpo_t2 *t2, const cJSON *list, int32_t source, const char *suffix)
{
    struct gpuopt_plan *p = t2->plan;
    int32_t was = p->cur_source;
    gpuopt_status st = GPUOPT_OK;
    const cJSON *k;
    char why[400];
    if (knobs_invalid(t2, list, why, sizeof why))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2: %s", why);
    p->cur_source = source;
    cJSON_ArrayForEach(k, list)
    {
        const char *name = cJSON_GetObjectItemCaseSensitive(k, "name")->valuestring;
        const char *ty = cJSON_GetObjectItemCaseSensitive(k, "type")->valuestring;
        const char *reason = cJSON_GetObjectItemCaseSensitive(k, "reason")->valuestring;
        int64_t v = (int64_t)cJSON_GetObjectItemCaseSensitive(k, "value")->valuedouble;
        if (strcmp(ty, "bool") == 0)
            st = gpo_knob_set_bool(p, name, v != 0, "%s%s", reason, suffix);
        else if (strcmp(ty, "bytes") == 0)
            st = gpo_knob_set_bytes(p, name, (uint64_t)v, "%s%s", reason, suffix);
        else
            st = gpo_knob_set_int(p, name, v, "%s%s", reason, suffix);
        if (st)
            break;
    }
    p->cur_source = was;
    return st;
}

static void day_of(int64_t t, char *out, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (t <= 0 || !gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d", &tm))
        gpo_strlcpy(out, "an earlier run", cap);
}

/* ---- one job ------------------------------------------------------------------- */

enum { JOB_SKIP, JOB_HIT, JOB_VERIFY, JOB_MEASURE };

typedef struct job_run {
    gpo_t2_job job;
    int what; /* JOB_* */
    char space_hash[32];
    gpo_cache_key key;
    gpo_run_spec spec;
    gpo_run *run;
    gpuopt_result *answer; /* a hit's or a verification's */
} job_run;

static void job_end(job_run *j)
{
    gpo_run_end(j->run); /* tears the benchmark's subject down */
    gpuopt_result_destroy(j->answer);
    if (j->job.space)
        gpuopt_space_destroy(j->job.space);
    cJSON_Delete(j->job.knobs);
    cJSON_Delete(j->job.extra);
}

/* The job's run: its key from static facts only, the cache's answer. */
static gpuopt_status begin(gpo_t2 *t2, job_run *j, const gpo_t2_bench *b, gpo_cache *cache,
                           const gpo_cache_device *cd, const gpo_cache_soft *soft,
                           const char *source_hash)
{
    gpo_t2_job *job = &j->job;
    job->bench = b;
    job->t2 = t2;
    job->finalists = 1;
    job->floor = GPO_NOISE_FLOOR;
    gpo_snprintf(job->kind, sizeof job->kind, "bench.%s", b->name);
    gpuopt_status st = b->describe(t2, job);
    if (st == GPUOPT_ERR_UNSUPPORTED) {
        gpo_log_debug(t2->log, "%s: tier 2 %s skipped: %s", t2->dev->info.id, job->kind,
                      gpo_detail_get());
        j->what = JOB_SKIP;
        return GPUOPT_OK;
    }
    char *canon = NULL;
    if (!st && !(st = gpo_space_canonical(job->space, &canon)))
        st = gpo_cache_hash_text(canon, strlen(canon), j->space_hash, sizeof j->space_hash);
    free(canon);
    if (st)
        return st;
    j->key = (gpo_cache_key){job->kind,   t2->backend, cd->arch,      cd->compute_units,
                             source_hash, "",          j->space_hash, job->workload};
    gpo_run_spec *s = &j->spec;
    s->space = job->space;
    s->ops = &gpo_t2_subject;
    s->subject = job;
    s->log = t2->log;
    gpo_search_defaults(&s->search);
    s->search.strategy = GPO_STRATEGY_EXHAUSTIVE;
    s->timing = job->timing;
    s->repeat_share = job->repeat_share;
    s->incumbent = job->has_incumbent ? &job->incumbent : NULL;
    s->floor = job->floor;
    s->finalists = job->finalists;
    s->remeasure_changed = job->remeasure_changed;
    s->measure_all = job->measure_all;
    s->cache = cache;
    s->cache_mode = GPUOPT_CACHE_USE;
    s->key = &j->key;
    s->soft = soft;
    s->info = (gpo_result_info){.device = t2->dev->info.id,
                                .device_name = t2->dev->info.name,
                                .backend = t2->backend,
                                .subject = job->kind,
                                .strategy = GPO_STRATEGY_EXHAUSTIVE,
                                .timing = job->timing,
                                .workload = job->workload};
    if ((st = gpo_run_begin(s, &j->run)) != GPUOPT_OK)
        return st;
    int found = gpo_run_lookup(j->run, NULL);
    if (found < 0)
        return (gpuopt_status)-found;
    j->what = found == GPO_RUN_CHANGED ? JOB_VERIFY : JOB_MEASURE;
    const gpo_cache_hit *hit = gpo_run_hit(j->run);
    const cJSON *knobs =
        found == GPO_RUN_HIT ? cJSON_GetObjectItemCaseSensitive(hit->payload, "knobs") : NULL;
    char why[400];
    if (!knobs)
        return GPUOPT_OK; /* a record without knobs is not ours: measure */
    if (knobs_invalid(t2, knobs, why, sizeof why)) {
        gpo_log_warn(t2->log, "%s: tier 2 %s: the cached record is not used (%s): measuring again",
                     t2->dev->info.id, job->kind, why);
        return GPUOPT_OK;
    }
    char day[32], suffix[64];
    day_of(hit->time, day, sizeof day);
    gpo_snprintf(suffix, sizeof suffix, " (measured %s, from the tuning cache)", day);
    hook("hit", job->kind);
    j->what = JOB_HIT;
    return set_knobs(t2, knobs, GPUOPT_SOURCE_CACHE, suffix);
}

/* "block 512 holds against the runner-up 256 (100 us vs 150 us)" */
static void verify_note(const gpo_t2_job *job, const gpuopt_result *res, char *out, size_t cap)
{
    const char *param = gpo_space_param_name(job->space, 0);
    const gpo_stats *w = gpo_result_stats(res, 0);
    char a[32], b[32];
    gpo_format_ns(w->median, a, sizeof a);
    if (gpo_result_count_of(res) < 2) {
        gpo_snprintf(out, cap, "%s %lld still runs (%s; it had no runner-up)", param,
                     (long long)gpo_t2_value(res, 0, param), a);
        return;
    }
    gpo_format_ns(gpo_result_stats(res, 1)->median, b, sizeof b);
    gpo_snprintf(out, cap, "%s %lld holds against the runner-up %lld (%s vs %s)", param,
                 (long long)gpo_t2_value(res, 0, param), (long long)gpo_t2_value(res, 1, param), a,
                 b);
}

/* Re-times a changed record's winner and runner-up; *done 1 when it held
 * and its knobs are set. */
static gpuopt_status verify(gpo_t2 *t2, job_run *j, int *done)
{
    gpo_t2_job *job = &j->job;
    char what[64], day[32], note[256], suffix[512];
    *done = 0;
    hook("verify", job->kind);
    gpuopt_status st = gpo_run_verify(j->run, &j->answer);
    if (st == GPUOPT_ERR_NOT_FOUND) {
        gpo_log_debug(t2->log, "%s: tier 2 %s: the stored winner did not hold: measuring again",
                      t2->dev->info.id, job->kind);
        return GPUOPT_OK;
    }
    if (st)
        return st;
    const cJSON *knobs = cJSON_GetObjectItemCaseSensitive(gpo_result_payload(j->answer), "knobs");
    if (knobs_invalid(t2, knobs, note, sizeof note)) {
        gpo_log_warn(t2->log, "%s: tier 2 %s: the cached record is not used (%s): measuring again",
                     t2->dev->info.id, job->kind, note);
        return GPUOPT_OK;
    }
    gpo_cache_soft_words(gpo_result_changed(j->answer), what, sizeof what);
    day_of(gpo_result_time(j->answer), day, sizeof day);
    verify_note(job, j->answer, note, sizeof note);
    gpo_log_debug(t2->log, "%s: tier 2 %s: the %s changed; the stored winner holds: %s",
                  t2->dev->info.id, job->kind, what, note);
    gpo_snprintf(suffix, sizeof suffix,
                 " (measured %s; re-verified now because the %s changed: %s)", day, what, note);
    st = set_knobs(t2, knobs, GPUOPT_SOURCE_BENCHMARK, suffix);
    *done = !st;
    return st;
}

/* Measures a job: its run, then the knobs, the record and the plan. */
static gpuopt_status measure(gpo_t2 *t2, job_run *j)
{
    gpo_t2_job *job = &j->job;
    uint64_t t0 = gpo_now_ns();
    hook("measure", job->kind);
    const gpuopt_result *res = NULL;
    gpuopt_result *done = NULL;
    cJSON *payload = NULL;
    gpuopt_status st = gpo_run_tune(j->run, &res);
    if (!st && gpo_result_best_index(res) < 0)
        st =
            gpo_fail(GPUOPT_ERR_UNSUPPORTED, "tier 2 %s: nothing could be measured (%s)", job->kind,
                     gpo_result_count_of(res) ? gpo_result_message(res, 0) : "no point");
    if (!st)
        st = job->bench->knobs(job, res);
    if (!st) {
        gpo_json b = {0};
        payload = job->extra ? cJSON_Duplicate(job->extra, 1) : cJSON_CreateObject();
        if (!gpo_json_add(&b, payload, "knobs", payload ? cJSON_Duplicate(job->knobs, 1) : NULL))
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    }
    if (!st)
        st = gpo_run_finish(j->run, payload, &done);
    if (!st)
        st = set_knobs(t2, job->knobs, GPUOPT_SOURCE_BENCHMARK, "");
    cJSON_Delete(payload);
    gpuopt_result_destroy(done);
    gpo_log_debug(t2->log, "%s: tier 2 %s measured in %.1f ms", t2->dev->info.id, job->kind,
                  (double)(gpo_now_ns() - t0) / 1e6);
    return st;
}

/* ---- the run -------------------------------------------------------------------- */

static gpuopt_status run_all(gpo_t2 *t2, const char *source, double budget_ms)
{
    job_run *jobs = calloc(N_BENCHES, sizeof *jobs);
    if (!jobs)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2: out of memory");
    uint64_t start = gpo_now_ns();
    double scale = gpo_tier2_budget_scale > 0 ? gpo_tier2_budget_scale : 1.0;
    int unlimited = isinf(scale);
    uint64_t deadline = unlimited ? start : start + (uint64_t)(budget_ms * scale * 1e6);
    /* The session's compiler string (compiler_version) would need a
     * session, which a hit must not open: the route's record names the
     * driver and runtime versions, which move with the compiler. */
    const gpo_cache_soft soft = {t2->route->info.driver_version, t2->route->info.runtime_version,
                                 NULL, t2->dev->info.name};
    char hash[32], why[256] = "";
    gpuopt_status st = gpo_cache_hash_text(source, strlen(source), hash, sizeof hash);
    gpo_cache *cache = NULL;
    gpo_cache_device cd;
    gpo_cache_device_from_info(&t2->dev->info, &cd);
    const gpo_config *cfg = gpo_plan_config(t2->plan);
    /* Opened for this plan, each key looked up once: hits hand over. */
    const gpo_cache_options once = {.hand_over = 1};
    if (!st && cfg && !cfg->cache_dir[0])
        gpo_strlcpy(why, GPO_NO_CACHE_DIR, sizeof why);
    else if (!st && cfg) {
        st = gpo_cache_open(cfg->cache_dir, &cd, &once, t2->log, &cache);
        if (st && st != GPUOPT_ERR_NO_MEMORY) {
            gpo_strlcpy(why, gpo_detail_get(), sizeof why);
            st = GPUOPT_OK;
        }
    }
    /* Pass 1: keys and lookups; plain hits set their knobs at once. */
    double weights = 0;
    for (size_t i = 0; i < N_BENCHES && !st; i++) {
        st = begin(t2, &jobs[i], benches[i], cache, &cd, &soft, hash);
        if (jobs[i].what == JOB_VERIFY || jobs[i].what == JOB_MEASURE)
            weights += benches[i]->weight;
    }
    /* Pass 2: what missed shares the budget, in list order. */
    int measured = 0;
    for (size_t i = 0; i < N_BENCHES && !st; i++) {
        job_run *j = &jobs[i];
        if (j->what != JOB_VERIFY && j->what != JOB_MEASURE)
            continue;
        uint64_t now = gpo_now_ns();
        double left = deadline > now ? (double)(deadline - now) : 0;
        double share = left * (weights > 0 ? benches[i]->weight / weights : 1) / 1e9;
        /* 0 is no budget; a spent one is not unlimited. */
        gpo_run_set_seconds(j->run, unlimited ? 0 : share > 1e-9 ? share : 1e-9);
        weights -= benches[i]->weight;
        int done = 0;
        if (j->what == JOB_VERIFY)
            st = verify(t2, j, &done);
        if (!st && !done) {
            st = measure(t2, j);
            measured++;
        }
    }
    if (!st)
        gpo_log_debug(t2->log, "%s: tier 2 on %s took %.1f ms (%d measured)%s%s", t2->dev->info.id,
                      t2->backend, (double)(gpo_now_ns() - start) / 1e6, measured,
                      why[0] ? "; nothing cached: " : "", why);
    for (size_t i = 0; i < N_BENCHES; i++)
        job_end(&jobs[i]);
    free(jobs);
    gpo_cache_close(cache);
    return st;
}

static void init(gpo_t2 *t2, struct gpuopt_plan *plan, const gpo_route *route,
                 const gpuopt_device *dev)
{
    memset(t2, 0, sizeof *t2);
    t2->plan = plan;
    t2->dev = dev;
    t2->route = route;
    t2->log = gpo_plan_log(plan);
    t2->backend = route->backend->name;
    /* The sweeps start from the earlier tiers' choices. */
    if (!gpo_knob_get_int(plan, "launch.block_size", &t2->block) || t2->block < 1)
        t2->block = 256;
    if (!gpo_knob_get_int(plan, "launch.block_multiple", &t2->multiple) || t2->multiple < 1)
        t2->multiple = 1;
    const gpo_config *cfg = gpo_plan_config(plan);
    gpo_fs live;
    gpo_fs_init(&live, NULL);
    gpo_t2_noise_read(cfg ? &cfg->fs : &live, &t2->noise);
}

gpuopt_status gpo_tier2_generic(void *state, const gpo_route *route, const gpuopt_device *dev,
                                struct gpuopt_plan *plan)
{
    const gpo_runtime_ops *ops = route->backend->runtime;
    if (!ops)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "the %s backend cannot run code on the device (no runtime ops)",
                        route->backend->name);
    const char *source = gpo_t2_kernel_source(ops->language);
    if (!source)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "tier 2 has no kernels in the %s backend's language \"%s\"",
                        route->backend->name, ops->language ? ops->language : "(none)");
    gpo_t2 t2;
    init(&t2, plan, route, dev);
    t2.rt = (gpo_t2_rt){.ops = ops, .state = state, .route = route, .source = source};
    gpuopt_status st = run_all(&t2, source, RUNTIME_BUDGET_MS);
    if (t2.rt.rt)
        gpo_log_debug(t2.log, "%s: tier 2 session on %s: open %.1f ms, build %.1f ms", dev->info.id,
                      route->backend->name, t2.rt.open_ms, t2.rt.build_ms);
    gpo_t2_session_close(&t2.rt);
    return st;
}

gpuopt_status gpo_tier2_host(const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan, const gpo_t2_host *host)
{
    gpo_t2 t2;
    init(&t2, plan, route, dev);
    t2.host = host;
    return run_all(&t2, host->kernels, HOST_BUDGET_MS);
}
