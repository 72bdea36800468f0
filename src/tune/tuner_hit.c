/* What the tuner does with what the cache holds: answers from a hit
 * without running anything, the trust-but-verify re-timing after a soft
 * change, and resuming a killed run from its journal. Parameters travel
 * by name and value, never by position. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tune/result_impl.h"
#include "tune/tuner.h"

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
        (gpo_space_params_idx(t->space, cJSON_GetObjectItemCaseSensitive(hit->best, "params"), idx) !=
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
            gpo_space_params_idx(t->space, cJSON_GetObjectItemCaseSensitive(hit->runner_up, "params"),
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
        gpo_space_params_idx(r->space, cJSON_GetObjectItemCaseSensitive(o, "params"), idx) != 0 ||
        !gpo_space_is_legal(r->space, idx))
        return NULL;
    if ((r->fatal = gpo_point_create(r->space, idx, &c)) != GPUOPT_OK)
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
        if (gpo_result_add(res, gpo_point_indices(cfg[i]), &ev[i], 0) < 0 ||
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
        gpo_point_destroy(cfg[i]);
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
        if (gpo_space_params_idx(r->space, cJSON_GetObjectItemCaseSensitive(c, "params"), idx) != 0 ||
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
