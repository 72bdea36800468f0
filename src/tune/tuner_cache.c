/* The tuner and the tuning cache (src/tune/cache.h):
 *
 * - the hard key of a run: kind, the backend of the route the work runs
 *   on, the device's architecture and compute units, a hash of the
 *   subject's definition (source, entry, language, geometry, arguments,
 *   reference, tolerance), a hash of the build options, the space hash of
 *   the space as the user made it, and the workload (problem sizes,
 *   argument types, the user's key);
 * - soft fields: the route's driver and runtime versions, this library's
 *   version, the device name;
 * - a hit answered without building or running anything; a hit whose soft
 *   fields changed re-verified (the stored winner and runner-up re-timed
 *   side by side);
 * - a killed run's candidates read back and preloaded.
 * Parameters travel by name and value, never by position. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "tune/result_impl.h"
#include "tune/tuner.h"
#include "tune/validate.h"

/* One open cache per (context, device), shared by its tuners: a new
 * tuner's first hit then costs a lookup in the index already in memory,
 * not a read of the whole journal. Tuners die before their context, so an
 * entry is gone (its count back to 0) before the context's address can be
 * reused. */
typedef struct shared_cache {
    const gpuopt_context *ctx;
    const gpuopt_device *dev;
    gpo_cache *cache;
    int32_t users;
} shared_cache;

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_cache *shared;
static int32_t nshared, capshared;

static gpo_cache *shared_acquire(gpuopt_tuner *t)
{
    gpo_cache *c = NULL;
    pthread_mutex_lock(&shared_lock);
    for (int32_t i = 0; i < nshared; i++)
        if (shared[i].ctx == t->ctx && shared[i].dev == t->dev) {
            shared[i].users++;
            c = shared[i].cache;
            goto out;
        }
    if (nshared == capshared) {
        int32_t cap = capshared ? capshared * 2 : 4;
        shared_cache *a = realloc(shared, (size_t)cap * sizeof *a);
        if (!a)
            goto out;
        shared = a;
        capshared = cap;
    }
    /* The cache never fails its host: without one, runs are uncached. */
    if (gpo_cache_open_device(t->ctx, t->dev, NULL, &c) != GPUOPT_OK) {
        gpo_log_warn(&t->ctx->log, "tuner: no tuning cache: %s", gpo_detail_get());
        goto out;
    }
    shared[nshared++] = (shared_cache){t->ctx, t->dev, c, 1};
out:
    pthread_mutex_unlock(&shared_lock);
    return c;
}

void gpo_tuner_cache_release(gpuopt_tuner *t)
{
    if (!t->cache)
        return;
    pthread_mutex_lock(&shared_lock);
    for (int32_t i = 0; i < nshared; i++)
        if (shared[i].cache == t->cache && --shared[i].users == 0) {
            gpo_cache_close(shared[i].cache);
            shared[i] = shared[--nshared];
            break;
        }
    if (nshared == 0) {
        free(shared);
        shared = NULL;
        capshared = 0;
    }
    pthread_mutex_unlock(&shared_lock);
    t->cache = NULL;
}

gpo_cache *gpo_tuner_cache(gpuopt_tuner *t)
{
    if (!t->cache_tried) {
        t->cache_tried = 1;
        t->cache = shared_acquire(t);
    }
    return t->cache;
}

/* ---- keys ------------------------------------------------------------------ */

static void geometry_text(gpo_sbuf *b, const char *name, const gpo_geometry *g)
{
    gpo_sbuf_appendf(b, "%s", name);
    for (int i = 0; i < g->dims; i++)
        gpo_sbuf_appendf(b, " %s", gpo_expr_text(g->global[i]));
    gpo_sbuf_append(b, " /");
    for (int i = 0; g->has_local && i < g->dims; i++)
        gpo_sbuf_appendf(b, " %s", gpo_expr_text(g->local[i]));
    gpo_sbuf_append(b, g->has_local ? "\n" : " runtime\n");
}

static void hash_into(gpo_sbuf *b, const char *label, const void *data, size_t len)
{
    char h[32];
    gpo_cache_hash_text(data ? data : "", data ? len : 0, h, sizeof h);
    gpo_sbuf_appendf(b, "%s %s", label, h);
}

/* The kernel's definition as text, hashed into key_source; the build
 * options into key_options. Both are kept until a setter changes them. */
static gpuopt_status subject_hashes(gpuopt_tuner *t)
{
    if (t->key_valid)
        return GPUOPT_OK;
    if (t->subject != GPO_SUBJECT_KERNEL) {
        t->key_source[0] = t->key_options[0] = '\0';
        t->key_valid = 1;
        return GPUOPT_OK;
    }
    const gpo_kernel_def *k = &t->k;
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    gpo_sbuf_appendf(&b, "gpuopt-kernel 1\nlanguage %s\nentry %s\n",
                     gpo_language_runtime_name(k->language), k->entry);
    hash_into(&b, "source", k->source, strlen(k->source));
    gpo_sbuf_append(&b, "\n");
    geometry_text(&b, "geometry", &k->geo);
    gpo_sbuf_appendf(&b, "local_memory %s\n", k->lmem ? gpo_expr_text(k->lmem) : "none");
    for (uint32_t ix = 0; ix < GPO_TUNER_MAX_ARGS; ix++) {
        const gpo_targ *a = NULL;
        for (int32_t i = 0; i < k->nargs; i++)
            if (k->args[i].index == ix)
                a = &k->args[i];
        if (!a)
            continue;
        gpo_sbuf_appendf(&b, "arg %u %s ", ix, gpo_elem_name(a->type));
        if (a->kind == GPO_ARG_SCALAR_F64) {
            gpo_sbuf_appendf(&b, "value %.17g\n", a->value);
            continue;
        }
        if (a->kind == GPO_ARG_SCALAR) {
            gpo_sbuf_appendf(&b, "scalar %s\n", gpo_expr_text(a->expr));
            continue;
        }
        static const char *const inits[] = {"", "random", "zeros", "constant", "data"};
        gpo_sbuf_appendf(&b, "buffer %s init %s", gpo_expr_text(a->expr), inits[a->init]);
        if (a->init == GPUOPT_INIT_CONSTANT)
            gpo_sbuf_appendf(&b, " %.17g", a->value);
        if (a->init == GPUOPT_INIT_DATA)
            hash_into(&b, "", a->data, a->data_bytes);
        gpo_sbuf_appendf(&b, " output %d", a->is_output);
        if (a->ref)
            hash_into(&b, " expected", a->ref, a->ref_bytes);
        gpo_sbuf_append(&b, "\n");
    }
    if (k->ref_source) {
        gpo_sbuf_appendf(&b, "reference %s ", k->ref_entry);
        hash_into(&b, "source", k->ref_source, strlen(k->ref_source));
        hash_into(&b, " options", k->ref_options, strlen(k->ref_options));
        gpo_sbuf_append(&b, "\n");
        geometry_text(&b, "reference_geometry", &k->ref_geo);
    }
    gpo_sbuf_appendf(&b, "tolerance %.17g %.17g\n", t->abs_tol, t->rel_tol);
    char *text = gpo_sbuf_take(&b);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory making a cache key");
    gpo_cache_hash_text(text, strlen(text), t->key_source, sizeof t->key_source);
    gpo_cache_hash_text(k->options, strlen(k->options), t->key_options, sizeof t->key_options);
    free(text);
    t->key_valid = 1;
    return GPUOPT_OK;
}

static int size_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "K=512;M=512;N=512;types=f32,f32,f32,i32;key=..." */
static char *workload_text(const gpo_trun *r)
{
    const gpuopt_tuner *t = r->t;
    const gpuopt_space *sp = t->space;
    int32_t ns = gpo_space_size_count(sp);
    const char *names[GPO_SPACE_MAX_SIZES];
    for (int32_t i = 0; i < ns; i++)
        names[i] = gpo_space_size_name(sp, i);
    qsort(names, (size_t)ns, sizeof names[0], size_cmp);
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    for (int32_t i = 0; i < ns; i++)
        for (int32_t j = 0; j < ns; j++)
            if (strcmp(gpo_space_size_name(sp, j), names[i]) == 0)
                gpo_sbuf_appendf(&b, "%s%s=%lld", i ? ";" : "", names[i],
                                 (long long)gpo_space_size_values(sp)[j]);
    if (t->subject == GPO_SUBJECT_KERNEL) {
        gpo_sbuf_appendf(&b, "%stypes=", b.len ? ";" : "");
        for (uint32_t ix = 0; ix < GPO_TUNER_MAX_ARGS; ix++)
            for (int32_t i = 0; i < t->k.nargs; i++)
                if (t->k.args[i].index == ix)
                    gpo_sbuf_appendf(&b, "%s%s", ix ? "," : "", gpo_elem_name(t->k.args[i].type));
    }
    if (t->workload_key)
        gpo_sbuf_appendf(&b, "%skey=%s", b.len ? ";" : "", t->workload_key);
    return gpo_sbuf_take(&b);
}

void gpo_tkey_free(gpo_tkey *k)
{
    free(k->workload);
    memset(k, 0, sizeof *k);
}

gpuopt_status gpo_tkey_make(gpo_trun *r)
{
    gpuopt_tuner *t = r->t;
    gpo_tkey *k = &r->key;
    gpo_tkey_free(k);
    gpuopt_status st = subject_hashes(t);
    if (st != GPUOPT_OK)
        return st;
    const gpuopt_device_info *info = &t->dev->info;
    if (t->subject == GPO_SUBJECT_KERNEL) {
        const gpo_route *route = gpo_kernel_route(t, &st);
        if (!route)
            return st;
        info = &route->info;
        gpo_strlcpy(k->backend, route->backend->name, sizeof k->backend);
    } else {
        gpo_strlcpy(k->backend, t->dev->info.backend, sizeof k->backend);
    }
    gpo_cache_device cd;
    gpo_cache_device_from_info(&t->dev->info, &cd);
    gpo_strlcpy(k->arch, cd.arch, sizeof k->arch);
    k->compute_units = cd.compute_units;
    gpo_strlcpy(k->source_hash, t->key_source, sizeof k->source_hash);
    gpo_strlcpy(k->options_hash, t->key_options, sizeof k->options_hash);
    if (!(k->workload = workload_text(r)))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory making a cache key");
    gpo_strlcpy(k->driver, info->driver_version, sizeof k->driver);
    gpo_strlcpy(k->compiler, info->runtime_version, sizeof k->compiler);
    gpo_strlcpy(k->device_name, t->dev->info.name, sizeof k->device_name);
    k->key.kind = r->ops->kind;
    k->key.backend = k->backend;
    k->key.arch = k->arch;
    k->key.compute_units = k->compute_units;
    k->key.source_hash = k->source_hash;
    k->key.options_hash = k->options_hash;
    k->key.space_hash = t->space_hash;
    k->key.workload = k->workload;
    k->soft.driver = k->driver;
    k->soft.compiler = k->compiler;
    k->soft.library = NULL;
    k->soft.device_name = k->device_name;
    /* The key is made even when unused: results show the workload. */
    if (t->cache_mode == GPUOPT_CACHE_OFF)
        return GPUOPT_OK;
    if (t->subject == GPO_SUBJECT_CALLBACK && !t->workload_key) {
        gpo_log_info(&t->ctx->log, "tuner: a callback subject without a workload key is not "
                                   "cached (gpuopt_tuner_set_workload_key names it)");
        return GPUOPT_OK;
    }
    char *canon = NULL;
    uint64_t h;
    if (gpo_cache_key_canon(&k->key, &canon, &h) != GPUOPT_OK) {
        /* A key too long to store (a huge workload key): run uncached. */
        gpo_log_warn(&t->ctx->log, "tuner: not cached: %s", gpo_detail_get());
        return GPUOPT_OK;
    }
    free(canon);
    k->usable = gpo_tuner_cache(t) != NULL;
    return GPUOPT_OK;
}

/* ---- parameters by name and value -------------------------------------------- */

cJSON *gpo_config_params_json(const gpuopt_config *c)
{
    const gpuopt_space *s = gpo_config_space(c);
    const uint32_t *idx = gpo_config_indices(c);
    cJSON *o = cJSON_CreateObject();
    for (int32_t p = 0; o && p < gpo_space_param_count(s); p++) {
        const char *name = gpo_space_param_name(s, p);
        cJSON *v = gpo_space_param_kind(s, p) == GPO_PARAM_INT
                       ? cJSON_AddNumberToObject(o, name, (double)gpo_space_value(s, p, idx[p]))
                       : cJSON_AddStringToObject(o, name, gpo_space_value_text(s, p, idx[p]));
        if (!v) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

int gpo_params_to_idx(const gpuopt_space *s, const cJSON *params, uint32_t *idx)
{
    int32_t np = gpo_space_param_count(s);
    if (!cJSON_IsObject(params) || cJSON_GetArraySize(params) != np)
        return -1;
    for (int32_t p = 0; p < np; p++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, gpo_space_param_name(s, p));
        int32_t n = gpo_space_value_count(s, p), k;
        int is_int = gpo_space_param_kind(s, p) == GPO_PARAM_INT;
        if (is_int ? !cJSON_IsNumber(v) : !cJSON_IsString(v))
            return -1;
        for (k = 0; k < n; k++)
            if (is_int ? (double)gpo_space_value(s, p, (uint32_t)k) == v->valuedouble
                       : strcmp(gpo_space_value_text(s, p, (uint32_t)k), v->valuestring) == 0)
                break;
        if (k == n)
            return -1;
        idx[p] = (uint32_t)k;
    }
    return 0;
}

void gpo_eval_to_cache_stats(const gpo_eval *ev, gpo_cache_stats *out)
{
    int timed = ev->stats.count > 0;
    out->status = ev->status;
    out->runs = timed ? ev->stats.count : 0;
    out->median_ns = timed ? ev->stats.median : -1;
    out->min_ns = timed ? ev->stats.min : -1;
    out->p20_ns = timed ? ev->stats.p20 : -1;
    out->p80_ns = timed ? ev->stats.p80 : -1;
    out->compile_ms = ev->compile_ms;
}

static double num(const cJSON *o, const char *name, double fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : fallback;
}

/* A stored candidate ({"params", "status", "runs", "median_ns", ...}) as an
 * evaluation; -1 when it does not read. */
static int stored_eval(const cJSON *o, gpo_eval *ev)
{
    memset(ev, 0, sizeof *ev);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "status");
    ev->status = cJSON_IsString(s) ? gpo_cache_status_parse(s->valuestring) : -1;
    if (ev->status < 0)
        return -1;
    ev->compile_ms = num(o, "compile_ms", -1);
    double median = num(o, "median_ns", -1), runs = num(o, "runs", 0);
    if ((ev->status == GPO_CAND_OK || ev->status == GPO_CAND_PRUNED) && !(median >= 0))
        return -1;
    if (median >= 0) {
        ev->stats.count = runs >= 1 && runs < 1e9 ? (int32_t)runs : 1;
        ev->stats.median = median;
        ev->stats.min = num(o, "min_ns", median);
        ev->stats.p20 = num(o, "p20_ns", median);
        ev->stats.p80 = num(o, "p80_ns", median);
        ev->stats.max = ev->stats.p80;
        ev->stats.mean = median;
    }
    return 0;
}

/* ---- answers from a hit -------------------------------------------------------- */

gpuopt_status gpo_result_from_hit(gpo_trun *r, const gpo_cache_hit *hit, int32_t from_cache,
                                  gpuopt_result **out)
{
    gpuopt_tuner *t = r->t;
    uint32_t idx[GPO_SPACE_MAX_PARAMS + 1];
    gpo_eval ev;
    *out = NULL;
    if (hit->best &&
        (gpo_params_to_idx(t->space, cJSON_GetObjectItemCaseSensitive(hit->best, "params"), idx) !=
             0 ||
         stored_eval(hit->best, &ev) != 0 || ev.status != GPO_CAND_OK))
        return gpo_fail(GPUOPT_ERR_NOT_FOUND, "the cached winner does not fit this space");
    gpuopt_result *res = gpo_result_new(t, t->space);
    if (!res || gpo_result_set_workload(res, r->key.backend, r->key.workload) != 0)
        goto nomem;
    gpo_result_set_from_cache(res, from_cache);
    if (hit->best) {
        if (gpo_result_add(res, idx, &ev, 0) < 0)
            goto nomem;
        gpo_result_set_best(res, 0);
        if (hit->runner_up &&
            gpo_params_to_idx(t->space, cJSON_GetObjectItemCaseSensitive(hit->runner_up, "params"),
                              idx) == 0 &&
            stored_eval(hit->runner_up, &ev) == 0 && gpo_result_add(res, idx, &ev, 0) < 0)
            goto nomem;
    }
    const cJSON *strategy = cJSON_GetObjectItemCaseSensitive(hit->record, "strategy");
    if (cJSON_IsString(strategy))
        gpo_strlcpy(res->strategy, strategy->valuestring, sizeof res->strategy);
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(hit->record, "seed");
    if (cJSON_IsString(seed))
        res->seed = strtoull(seed->valuestring, NULL, 10);
    res->wall_s = num(hit->record, "wall_s", -1);
    res->evaluations = (int32_t)num(hit->record, "evaluated", 0);
    gpo_strlcpy(res->stop, "cached", sizeof res->stop);
    *out = res;
    if (!hit->best)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "the cached tune of this key found no valid candidate (tune again with "
                        "GPUOPT_CACHE_REFRESH after changing the kernel or the space)");
    return GPUOPT_OK;
nomem:
    gpuopt_result_destroy(res);
    return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory answering from the cache");
}

/* The stored candidate `o` as a configuration of the run's space, legal
 * there; NULL when it does not map (or no memory: r->fatal). */
static gpuopt_config *stored_config(gpo_trun *r, const cJSON *o)
{
    uint32_t idx[GPO_SPACE_MAX_PARAMS + 1];
    gpuopt_config *c = NULL;
    if (!o ||
        gpo_params_to_idx(r->space, cJSON_GetObjectItemCaseSensitive(o, "params"), idx) != 0 ||
        !gpo_space_is_legal(r->space, idx))
        return NULL;
    if ((r->fatal = gpo_config_create(r->space, idx, &c)) != GPUOPT_OK)
        return NULL;
    return c;
}

gpuopt_status gpo_verify_hit(gpo_trun *r, const gpo_cache_hit *hit, gpuopt_result **out)
{
    gpuopt_tuner *t = r->t;
    gpuopt_config *cfg[2] = {NULL, NULL};
    gpo_prep *prep[2] = {NULL, NULL};
    gpo_stats stats[2];
    gpo_eval ev[2];
    int32_t k = 0, win = -1;
    gpuopt_status st = GPUOPT_OK;
    *out = NULL;
    memset(stats, 0, sizeof stats);
    char changed[80] = "";
    for (uint32_t bit = 1; bit <= GPO_SOFT_DEVICE_NAME; bit <<= 1)
        if (hit->changed & bit)
            gpo_snprintf(changed + strlen(changed), sizeof changed - strlen(changed), "%s%s",
                         changed[0] ? ", " : "", gpo_cache_soft_name(bit));
    gpo_log_info(&t->ctx->log,
                 "tuner: cached result found, but the %s changed: re-timing the "
                 "stored winner and runner-up",
                 changed);
    if ((st = gpo_trun_space(r)) != GPUOPT_OK)
        goto out;
    if (!hit->best || !(cfg[0] = stored_config(r, hit->best))) {
        st = r->fatal;
        goto verdict;
    }
    cfg[1] = stored_config(r, hit->runner_up);
    if ((st = r->fatal) != GPUOPT_OK || (st = gpo_trun_setup(r)) != GPUOPT_OK)
        goto out;
    r->best_ns = num(hit->best, "median_ns", -1);
    for (int i = 0; i < 2; i++) {
        memset(&ev[i], 0, sizeof ev[i]);
        ev[i].compile_ms = -1;
        if (!cfg[i])
            continue;
        int32_t s = gpo_eval_ready(r, cfg[i], &prep[i], &ev[i]);
        if (s == GPO_FATAL) {
            st = r->fatal;
            goto out;
        }
        if (s != GPO_CAND_OK) {
            gpo_log_info(&t->ctx->log, "tuner: the stored %s fails now: %s",
                         i ? "runner-up" : "winner", ev[i].msg);
            if (i == 0)
                goto verdict;
        }
        ev[i].status = s;
    }
    k = prep[1] ? 2 : 1;
    win = gpo_eval_retime(r, prep, k, stats);
    if (win < 0 && r->fatal != GPUOPT_OK) {
        st = r->fatal;
        goto out;
    }
verdict:;
    int good = win == 0;
    if (gpo_cache_record_verify(t->cache, &r->key.key, &r->key.soft, good,
                                stats[0].count ? stats[0].median : -1,
                                k > 1 && stats[1].count ? stats[1].median : -1) != GPUOPT_OK)
        gpo_log_warn(&t->ctx->log, "tuner: verification not recorded: %s", gpo_detail_get());
    if (!good) {
        gpo_log_info(&t->ctx->log, "tuner: the stored winner did not hold: tuning again");
        st = GPUOPT_ERR_NOT_FOUND;
        goto out;
    }
    gpuopt_result *res = gpo_result_new(t, t->space);
    if (!res || gpo_result_set_workload(res, r->key.backend, r->key.workload) != 0) {
        gpuopt_result_destroy(res);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory answering from the cache");
        goto out;
    }
    gpo_result_set_from_cache(res, 2);
    gpo_result_set_validated(res, r->validated);
    gpo_strlcpy(res->stop, "cached, re-verified", sizeof res->stop);
    for (int32_t i = 0; i < k; i++) {
        ev[i].stats = stats[i];
        gpo_snprintf(ev[i].msg, sizeof ev[i].msg, "re-timed after a change of the %s", changed);
        if (gpo_result_add(res, gpo_config_indices(cfg[i]), &ev[i], 0) < 0 ||
            gpo_result_add_final(res, i, &stats[i]) != 0) {
            gpuopt_result_destroy(res);
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory answering from the cache");
            goto out;
        }
    }
    gpo_result_set_best(res, 0);
    *out = res;
out:
    for (int i = 0; i < 2; i++) {
        if (prep[i])
            r->ops->release(r, prep[i]);
        gpo_config_destroy(cfg[i]);
    }
    return st;
}

/* ---- resuming a killed run --------------------------------------------------------- */

gpuopt_status gpo_resume_fetch(gpo_trun *r)
{
    if (!r->key.usable || r->t->cache_mode == GPUOPT_CACHE_OFF)
        return GPUOPT_OK;
    cJSON *arr = NULL;
    int finished = 0;
    if (gpo_cache_candidates(r->t->cache, &r->key.key, &arr, &finished) != GPUOPT_OK)
        return GPUOPT_OK; /* nothing stored: a fresh start */
    if (finished) {
        cJSON_Delete(arr);
        return GPUOPT_OK;
    }
    r->resume = arr;
    return GPUOPT_OK;
}

gpuopt_status gpo_resume_apply(gpo_trun *r)
{
    if (!r->resume)
        return GPUOPT_OK;
    uint32_t idx[GPO_SPACE_MAX_PARAMS + 1];
    int32_t used = 0, skipped = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, r->resume)
    {
        gpo_eval ev;
        if (gpo_params_to_idx(r->space, cJSON_GetObjectItemCaseSensitive(c, "params"), idx) != 0 ||
            stored_eval(c, &ev) != 0 || !gpo_space_is_legal(r->space, idx) ||
            gpo_search_preload(r->search, idx, ev.status, ev.stats.count ? ev.stats.median : 0) !=
                GPUOPT_OK) {
            skipped++; /* another space's, a duplicate, or unreadable */
            continue;
        }
        gpo_snprintf(ev.msg, sizeof ev.msg, "resumed from the journal of an unfinished run");
        if (gpo_result_add(r->result, idx, &ev, 1) < 0)
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory resuming a run");
        gpo_cache_stats cs;
        gpo_eval_to_cache_stats(&ev, &cs);
        if (r->journal)
            gpo_cache_add_candidate(r->journal, cJSON_GetObjectItemCaseSensitive(c, "params"), &cs);
        used++;
    }
    gpo_log_info(&r->t->ctx->log, "tuner: resumed %d candidates of an unfinished run (%d skipped)",
                 (int)used, (int)skipped);
    cJSON_Delete(r->resume);
    r->resume = NULL;
    r->best_ns = gpo_search_best_value(r->search);
    return GPUOPT_OK;
}
