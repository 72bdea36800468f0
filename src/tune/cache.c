/* The cache's records: lookups against the in-memory index, and the lines
 * a tune, a measurement or a verification appends. Every line carries "t"
 * (its kind) and "key" (the hash of the hard key) first; "begin" and
 * "entry" lines carry the whole hard key as well, so a file can be read
 * back, listed and checked without the code that wrote it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_int.h"
#include "util/hash.h"
#include "util/strutil.h"

struct gpo_cache_tune {
    gpo_cache *cache;
    char key[17];
    char id[17];
    int32_t evaluated;
    int64_t started_ns;
    cJSON *begin; /* hard, soft and search, reused by the finished record */
};

/* A line that starts {"t":..., "key":...}; NULL on allocation failure. */
static cJSON *line_start(const char *type, const char *key)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "t", type) || !cJSON_AddStringToObject(o, "key", key)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Prints and appends `o` (consumed). */
static gpuopt_status emit(gpo_cache *c, cJSON *o)
{
    size_t n = 0;
    char *line = o ? gpo_journal_print(o, &n) : NULL;
    cJSON_Delete(o);
    if (!line && n)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "a cache record of %zu bytes: at most %u are stored per line", n,
                        GPO_CACHE_LINE_MAX);
    if (!line)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache record");
    gpo_cache_append(c, line, n);
    free(line);
    return GPUOPT_OK;
}

static gpuopt_status check_key(const gpo_cache_key *key, char **canon, uint64_t *hash, char hex[17])
{
    gpuopt_status st = gpo_cache_key_canon(key, canon, hash);
    if (st == GPUOPT_OK)
        gpo_cache_hex16(*hash, hex);
    return st;
}

/* The item of a key when the file is sound and the key's text matches. */
static gpo_cidx_item *find(gpo_cache *c, const char *canon, uint64_t hash)
{
    if (c->file_status != GPO_J_OK)
        return NULL;
    gpo_cidx_item *it = gpo_cidx_find(&c->ix, hash);
    return it && strcmp(it->canon, canon) == 0 ? it : NULL;
}

static gpuopt_status touch_line(gpo_cache *c, gpo_cidx_item *it)
{
    char hex[17];
    gpo_cache_hex16(it->hash, hex);
    cJSON *o = line_start("touch", hex);
    if (o && !cJSON_AddNumberToObject(o, "time", (double)gpo_cache_now(c))) {
        cJSON_Delete(o);
        o = NULL;
    }
    it->touched_at = gpo_cache_now(c);
    return emit(c, o);
}

gpuopt_status gpo_cache_lookup(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft,
                               gpo_cache_hit **out)
{
    gpo_detail_clear();
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!c || !key)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", c ? "key" : "cache");
    char *canon = NULL, hex[17];
    uint64_t hash;
    gpuopt_status st = check_key(key, &canon, &hash, hex);
    if (st)
        return st;
    pthread_mutex_lock(&c->lock);
    gpo_cache_refresh(c);
    gpo_cidx_item *it = find(c, canon, hash);
    if (!it || !it->record) {
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no cached result for key %s in %s", hex, c->path);
        goto out;
    }
    gpo_cache_hit *hit = calloc(1, sizeof *hit);
    if (!hit || !(hit->record = cJSON_Duplicate(it->record, 1))) {
        free(hit);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache hit");
        goto out;
    }
    const cJSON *r = hit->record;
    hit->best = cJSON_GetObjectItemCaseSensitive(r, "best");
    hit->runner_up = cJSON_GetObjectItemCaseSensitive(r, "runner_up");
    hit->payload = cJSON_GetObjectItemCaseSensitive(r, "payload");
    hit->best = cJSON_IsObject(hit->best) ? hit->best : NULL;
    hit->runner_up = cJSON_IsObject(hit->runner_up) ? hit->runner_up : NULL;
    hit->payload = cJSON_IsNull(hit->payload) ? NULL : hit->payload;
    hit->soft = cJSON_GetObjectItemCaseSensitive(r, "soft");
    hit->complete = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "complete"));
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "time");
    hit->time = cJSON_IsNumber(t) ? (int64_t)t->valuedouble : 0;
    hit->changed = gpo_cache_soft_diff(hit->soft, soft);
    /* The use is recorded coarsely: one line per key per touch interval
     * keeps hits fast and the journal small. */
    int64_t now = gpo_cache_now(c);
    int64_t last = it->used > it->touched_at ? it->used : it->touched_at;
    if (c->opt.touch_interval_s < 0 || now - last >= c->opt.touch_interval_s)
        touch_line(c, it);
    *out = hit;
out:
    pthread_mutex_unlock(&c->lock);
    free(canon);
    return st;
}

void gpo_cache_hit_free(gpo_cache_hit *hit)
{
    if (!hit)
        return;
    cJSON_Delete(hit->record);
    free(hit);
}

typedef struct cand_pick {
    const char *key, *tune;
    cJSON *arr;
    int failed;
} cand_pick;

static void pick_cand(const cJSON *o, const char *raw, size_t n, void *user)
{
    (void)raw;
    (void)n;
    cand_pick *p = user;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "t");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "key");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "tune");
    if (!cJSON_IsString(t) || strcmp(t->valuestring, "cand") || !cJSON_IsString(k) ||
        strcmp(k->valuestring, p->key) || !cJSON_IsString(u) || strcmp(u->valuestring, p->tune))
        return;
    cJSON *c = cJSON_Duplicate(o, 1);
    if (!c) {
        p->failed = 1;
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(c, "t");
    cJSON_DeleteItemFromObjectCaseSensitive(c, "key");
    cJSON_DeleteItemFromObjectCaseSensitive(c, "tune");
    cJSON_AddItemToArray(p->arr, c);
}

gpuopt_status gpo_cache_candidates(gpo_cache *c, const gpo_cache_key *key, cJSON **out,
                                   int *finished)
{
    gpo_detail_clear();
    if (!out || !finished)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", out ? "finished" : "out");
    *out = NULL;
    *finished = 0;
    if (!c || !key)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", c ? "key" : "cache");
    char *canon = NULL, hex[17], tune[17];
    uint64_t hash;
    gpuopt_status st = check_key(key, &canon, &hash, hex);
    if (st)
        return st;
    pthread_mutex_lock(&c->lock);
    gpo_cache_refresh(c);
    gpo_cidx_item *it = find(c, canon, hash);
    char *buf = NULL;
    size_t len = 0;
    cand_pick p = {hex, tune, NULL, 0};
    if (!it || (!it->record_tune[0] && !it->open_tune[0])) {
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no stored candidates for key %s in %s", hex, c->path);
        goto out;
    }
    *finished = it->record_tune[0] != '\0';
    memcpy(tune, *finished ? it->record_tune : it->open_tune, sizeof tune);
    st = gpo_cache_read_all(c, &buf, &len);
    if (st) {
        st = gpo_fail(st, "cannot read %s", c->path);
        goto out;
    }
    if (!(p.arr = cJSON_CreateArray())) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for candidates");
        goto out;
    }
    gpo_journal_each(buf, len, pick_cand, &p);
    if (p.failed) {
        cJSON_Delete(p.arr);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for candidates");
        goto out;
    }
    *out = p.arr;
out:
    pthread_mutex_unlock(&c->lock);
    free(buf);
    free(canon);
    return st;
}

/* "hard" and "soft" objects of a record or begin line. */
static int add_key_soft(cJSON *o, const gpo_cache_key *key, const gpo_cache_soft *soft)
{
    cJSON *hard = gpo_cache_key_to_json(key), *s = gpo_cache_soft_to_json(soft);
    if (!hard || !s || !cJSON_AddItemToObject(o, "hard", hard)) {
        cJSON_Delete(hard);
        cJSON_Delete(s);
        return -1;
    }
    return cJSON_AddItemToObject(o, "soft", s) ? 0 : (cJSON_Delete(s), -1);
}

gpuopt_status gpo_cache_begin(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft,
                              const gpo_cache_search *search, gpo_cache_tune **out)
{
    gpo_detail_clear();
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!c || !key || !search)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL",
                        !c     ? "cache"
                        : !key ? "key"
                               : "search");
    if (!search->strategy || !*search->strategy)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the search has no strategy name");
    if (search->max_evaluations < 0 || search->max_failures < 0 || !isfinite(search->max_seconds) ||
        search->max_seconds < 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "the search budget has a negative or infinite "
                        "bound (evaluations %d, seconds %g, failures %d)",
                        (int)search->max_evaluations, search->max_seconds,
                        (int)search->max_failures);
    char *canon = NULL;
    uint64_t hash;
    gpo_cache_tune *t = calloc(1, sizeof *t);
    if (!t)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a tune");
    gpuopt_status st = check_key(key, &canon, &hash, t->key);
    free(canon);
    if (st) {
        free(t);
        return st;
    }
    t->cache = c;
    t->started_ns = (int64_t)gpo_now_ns();
    pthread_mutex_lock(&c->lock);
    /* Unique across processes and tunes: two processes tuning the same key
     * at once keep their candidates apart. */
    char seed[96];
    int n = snprintf(seed, sizeof seed, "%ld/%llu/%llu/%p", (long)getpid(),
                     (unsigned long long)gpo_now_ns(), (unsigned long long)++c->serial, (void *)t);
    gpo_cache_hex16(gpo_hash64(seed, (size_t)n), t->id);
    char seedtext[24];
    gpo_snprintf(seedtext, sizeof seedtext, "%llu", (unsigned long long)search->seed);
    cJSON *o = line_start("begin", t->key);
    cJSON *b = NULL;
    if (!o || !cJSON_AddStringToObject(o, "tune", t->id) ||
        !cJSON_AddNumberToObject(o, "time", (double)gpo_cache_now(c)) ||
        add_key_soft(o, key, soft) || !cJSON_AddStringToObject(o, "strategy", search->strategy) ||
        !cJSON_AddStringToObject(o, "seed", seedtext) ||
        !(b = cJSON_AddObjectToObject(o, "budget")) ||
        !cJSON_AddNumberToObject(b, "max_evaluations", search->max_evaluations) ||
        !cJSON_AddNumberToObject(b, "max_seconds", search->max_seconds) ||
        !cJSON_AddNumberToObject(b, "max_failures", search->max_failures) ||
        !(t->begin = cJSON_Duplicate(o, 1))) {
        cJSON_Delete(o);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a tune record");
    } else {
        st = emit(c, o);
    }
    pthread_mutex_unlock(&c->lock);
    if (st) {
        cJSON_Delete(t->begin);
        free(t);
        return st;
    }
    *out = t;
    return GPUOPT_OK;
}

/* {"params": {...}, "status": ..., stats} */
static cJSON *candidate_json(const cJSON *params, const gpo_cache_stats *s)
{
    cJSON *o = cJSON_CreateObject(), *p = cJSON_Duplicate(params, 1);
    if (!o || !p || !cJSON_AddItemToObject(o, "params", p)) {
        cJSON_Delete(o);
        cJSON_Delete(p);
        return NULL;
    }
    gpo_cache_stats_to_json(o, s);
    return o;
}

static gpuopt_status check_candidate(const cJSON *params, const gpo_cache_stats *s,
                                     const char *what)
{
    char why[200];
    if (!params || !s)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what,
                        params ? "stats" : "params");
    if (gpo_cache_params_valid(params, why, sizeof why) ||
        gpo_cache_stats_valid(s, why, sizeof why))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: %s", what, why);
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_add_candidate(gpo_cache_tune *t, const cJSON *params,
                                      const gpo_cache_stats *stats)
{
    gpo_detail_clear();
    if (!t)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tune is NULL");
    gpuopt_status st = check_candidate(params, stats, "candidate");
    if (st)
        return st;
    cJSON *o = line_start("cand", t->key), *body = candidate_json(params, stats);
    if (!o || !body || !cJSON_AddStringToObject(o, "tune", t->id)) {
        cJSON_Delete(o);
        cJSON_Delete(body);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a candidate record");
    }
    /* Flattened after "tune", so every candidate line starts the same way. */
    while (body->child) {
        cJSON *f = cJSON_DetachItemViaPointer(body, body->child);
        cJSON_AddItemToObject(o, f->string, f);
    }
    cJSON_Delete(body);
    pthread_mutex_lock(&t->cache->lock);
    st = emit(t->cache, o);
    pthread_mutex_unlock(&t->cache->lock);
    if (st == GPUOPT_OK)
        t->evaluated++;
    return st;
}

void gpo_cache_abandon(gpo_cache_tune *t)
{
    if (!t)
        return;
    cJSON_Delete(t->begin);
    free(t);
}

/* A finished record: the begin line's key, soft fields and search, then
 * what was found. */
static cJSON *record_from(const cJSON *begin, const char *key, int64_t now)
{
    cJSON *o = line_start("entry", key);
    static const char *const copy[] = {"tune", "hard", "soft", "strategy", "seed", "budget"};
    if (!o || !cJSON_AddNumberToObject(o, "time", (double)now)) {
        cJSON_Delete(o);
        return NULL;
    }
    for (size_t i = 0; begin && i < sizeof copy / sizeof copy[0]; i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(begin, copy[i]);
        cJSON *d = f ? cJSON_Duplicate(f, 1) : NULL;
        if (f && (!d || !cJSON_AddItemToObject(o, copy[i], d))) {
            cJSON_Delete(d);
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

static int add_optional(cJSON *o, const char *name, cJSON *v, int had)
{
    if (!had)
        return cJSON_AddNullToObject(o, name) ? 0 : -1;
    if (!v || !cJSON_AddItemToObject(o, name, v)) {
        cJSON_Delete(v);
        return -1;
    }
    return 0;
}

gpuopt_status gpo_cache_finish(gpo_cache_tune *t, const cJSON *best_params,
                               const gpo_cache_stats *best, const cJSON *runner_params,
                               const gpo_cache_stats *runner, int complete, double wall_s,
                               const cJSON *payload)
{
    gpo_detail_clear();
    if (!t)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tune is NULL");
    gpuopt_status st = GPUOPT_OK;
    if ((best_params || best) && (st = check_candidate(best_params, best, "best")))
        goto out;
    if ((runner_params || runner) && (st = check_candidate(runner_params, runner, "runner-up")))
        goto out;
    if (runner_params && !best_params) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "a runner-up without a best");
        goto out;
    }
    if (!isfinite(wall_s) || (wall_s < 0 && wall_s != -1)) {
        st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "wall time %g: accepted >= 0 or -1", wall_s);
        goto out;
    }
    if (payload && !cJSON_IsObject(payload)) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the payload must be a JSON object");
        goto out;
    }
    gpo_cache *c = t->cache;
    pthread_mutex_lock(&c->lock);
    cJSON *o = record_from(t->begin, t->key, gpo_cache_now(c));
    if (!o || add_optional(o, "best", best ? candidate_json(best_params, best) : NULL, !!best) ||
        add_optional(o, "runner_up", runner ? candidate_json(runner_params, runner) : NULL,
                     !!runner) ||
        !cJSON_AddBoolToObject(o, "complete", complete != 0) ||
        !cJSON_AddNumberToObject(o, "evaluated", t->evaluated) ||
        !cJSON_AddNumberToObject(o, "wall_s", wall_s) ||
        add_optional(o, "payload", payload ? cJSON_Duplicate(payload, 1) : NULL, !!payload)) {
        cJSON_Delete(o);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache record");
    } else {
        st = emit(c, o);
    }
    pthread_mutex_unlock(&c->lock);
out:
    gpo_cache_abandon(t);
    return st;
}

gpuopt_status gpo_cache_put(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft,
                            const cJSON *payload)
{
    gpo_detail_clear();
    if (!c || !key || !payload)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL",
                        !c     ? "cache"
                        : !key ? "key"
                               : "payload");
    if (!cJSON_IsObject(payload))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the payload must be a JSON object");
    char *canon = NULL, hex[17];
    uint64_t hash;
    gpuopt_status st = check_key(key, &canon, &hash, hex);
    free(canon);
    if (st)
        return st;
    pthread_mutex_lock(&c->lock);
    cJSON *o = record_from(NULL, hex, gpo_cache_now(c));
    if (!o || add_key_soft(o, key, soft) || !cJSON_AddNullToObject(o, "best") ||
        !cJSON_AddNullToObject(o, "runner_up") || !cJSON_AddBoolToObject(o, "complete", 1) ||
        add_optional(o, "payload", cJSON_Duplicate(payload, 1), 1)) {
        cJSON_Delete(o);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache record");
    } else {
        st = emit(c, o);
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

gpuopt_status gpo_cache_record_verify(gpo_cache *c, const gpo_cache_key *key,
                                      const gpo_cache_soft *soft, int still_good, double best_ns,
                                      double runner_ns)
{
    gpo_detail_clear();
    if (!c || !key)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", c ? "key" : "cache");
    if (!isfinite(best_ns) || !isfinite(runner_ns))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "a re-timed value is not finite");
    char *canon = NULL, hex[17];
    uint64_t hash;
    gpuopt_status st = check_key(key, &canon, &hash, hex);
    if (st)
        return st;
    pthread_mutex_lock(&c->lock);
    gpo_cache_refresh(c);
    cJSON *o = NULL, *s = NULL;
    gpo_cidx_item *it = find(c, canon, hash);
    if (!it || !it->record) {
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no cached result for key %s to verify", hex);
    } else if (!(o = line_start("verify", hex)) || !(s = gpo_cache_soft_to_json(soft)) ||
               !cJSON_AddNumberToObject(o, "time", (double)gpo_cache_now(c)) ||
               !cJSON_AddItemToObject(o, "soft", s) ||
               !cJSON_AddBoolToObject(o, "ok", still_good != 0) ||
               !cJSON_AddNumberToObject(o, "best_ns", best_ns < 0 ? -1 : best_ns) ||
               !cJSON_AddNumberToObject(o, "runner_up_ns", runner_ns < 0 ? -1 : runner_ns)) {
        if (!cJSON_GetObjectItemCaseSensitive(o, "soft"))
            cJSON_Delete(s);
        cJSON_Delete(o);
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a verification record");
    } else {
        st = emit(c, o);
    }
    pthread_mutex_unlock(&c->lock);
    free(canon);
    return st;
}

gpuopt_status gpo_cache_touch(gpo_cache *c, const gpo_cache_key *key)
{
    gpo_detail_clear();
    if (!c || !key)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", c ? "key" : "cache");
    char *canon = NULL, hex[17];
    uint64_t hash;
    gpuopt_status st = check_key(key, &canon, &hash, hex);
    if (st)
        return st;
    pthread_mutex_lock(&c->lock);
    gpo_cache_refresh(c);
    gpo_cidx_item *it = find(c, canon, hash);
    if (!it || (!it->record && !it->open_begin))
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no cached result for key %s to touch", hex);
    else
        st = touch_line(c, it);
    pthread_mutex_unlock(&c->lock);
    free(canon);
    return st;
}
