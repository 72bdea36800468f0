/* Sweeps over one integer parameter (tier2.h, gpo_t2_sweep): every
 * candidate timed with probe-and-prune, the incumbent and the best
 * challengers re-timed side by side, the incumbent kept unless beaten
 * beyond noise, and every candidate written to the cache as it is
 * measured (a crash loses nothing finished). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tier2/tier2.h"
#include "tune/status.h"

/* Finalists re-timed side by side with the incumbent. */
#define CHALLENGERS 2
/* Rounds of the final re-timing (the first is dropped as a warm-up), and
 * of a trust-but-verify re-timing. */
#define FINAL_ROUNDS 21
#define VERIFY_ROUNDS 11
/* A candidate's timing: its warm-up run absorbs a JIT's compile for a new
 * launch shape (PoCL compiles a work-group function per local size), then
 * 3 probe runs; then runs until its share of the budget, at most 20. */
#define CAND_MIN_RUNS 3
#define CAND_MAX_RUNS 20
#define PRUNE_RATIO 2.0

void gpo_t2_fmt_ns(double ns, char *out, size_t cap)
{
    if (ns >= 1e6)
        gpo_snprintf(out, cap, "%.3g ms", ns / 1e6);
    else if (ns >= 1e3)
        gpo_snprintf(out, cap, "%.3g us", ns / 1e3);
    else
        gpo_snprintf(out, cap, "%.0f ns", ns);
}

void gpo_t2_fmt_rate(double bps, char *out, size_t cap)
{
    if (bps >= 1e9)
        gpo_snprintf(out, cap, "%.3g GB/s", bps / 1e9);
    else
        gpo_snprintf(out, cap, "%.3g MB/s", bps / 1e6);
}

static void to_cache_stats(const gpo_stats *s, int32_t status, gpo_cache_stats *out)
{
    out->status = status;
    out->runs = s ? s->count : 0;
    out->median_ns = s ? s->median : -1;
    out->min_ns = s ? s->min : -1;
    out->p20_ns = s ? s->p20 : -1;
    out->p80_ns = s ? s->p80 : -1;
    out->compile_ms = -1;
}

static cJSON *params_of(const char *param, int64_t v)
{
    cJSON *o = cJSON_CreateObject();
    if (o && !cJSON_AddNumberToObject(o, param, (double)v)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static gpuopt_status record(gpo_t2_job *job, const gpo_t2_sweep *s, int64_t v, const gpo_stats *st,
                            int32_t status)
{
    if (!job->tune)
        return GPUOPT_OK;
    cJSON *p = params_of(s->param, v);
    if (!p)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 sweep: out of memory");
    gpo_cache_stats cs;
    to_cache_stats(st, status, &cs);
    gpuopt_status r = gpo_cache_add_candidate(job->tune, p, &cs);
    cJSON_Delete(p);
    return r;
}

static void tried_add(gpo_t2_sweep_result *res, int64_t v, const char *note)
{
    size_t n = strlen(res->tried);
    gpo_snprintf(res->tried + n, sizeof res->tried - n, "%s%lld%s", n ? ", " : "", (long long)v,
                 note);
}

/* A candidate an earlier, cut-short sweep stored: 1 with its statistics
 * and status when `resume` has `v`. */
static int stored(const cJSON *resume, const char *param, int64_t v, gpo_stats *st, int32_t *status)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, resume)
    {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(c, "params");
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(p, param);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "status");
        if (!cJSON_IsNumber(x) || (int64_t)x->valuedouble != v || !cJSON_IsString(s))
            continue;
        *status = gpo_cache_status_parse(s->valuestring);
        if (*status != GPO_CAND_OK && *status != GPO_CAND_PRUNED && *status != GPO_CAND_INVALID)
            return 0;
        static const char *const f[4] = {"median_ns", "p20_ns", "p80_ns", "min_ns"};
        double *to[4] = {&st->median, &st->p20, &st->p80, &st->min};
        memset(st, 0, sizeof *st);
        for (int i = 0; i < 4; i++) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, f[i]);
            *to[i] = cJSON_IsNumber(n) ? n->valuedouble : -1;
        }
        const cJSON *runs = cJSON_GetObjectItemCaseSensitive(c, "runs");
        st->count = cJSON_IsNumber(runs) ? (int32_t)runs->valueint : 0;
        st->max = st->mean = st->median;
        return *status == GPO_CAND_INVALID || (st->median > 0 && st->count > 0);
    }
    return 0;
}

/* Subjects of a side-by-side re-timing: values prepared before each run. */
typedef struct retime_ctx {
    const gpo_t2_sweep *s;
    const int64_t *values;
} retime_ctx;

static gpuopt_status retime_run(void *user, int32_t i, double *ns)
{
    retime_ctx *c = user;
    gpuopt_status st = c->s->prepare ? c->s->prepare(c->s->user, c->values[i]) : GPUOPT_OK;
    return st ? st : c->s->run(c->s->user, ns);
}

static int32_t rounds_for(double left_ms, double slowest_ns, int32_t k, int32_t most)
{
    /* As many rounds as the budget left pays for, at least 3 (a warm-up
     * and two timed), at most `most`. */
    double per_round_ms = slowest_ns * k / 1e6;
    int32_t r = per_round_ms > 0 ? (int32_t)(left_ms / per_round_ms) : most;
    return r < 3 ? 3 : r > most ? most : r;
}

gpuopt_status gpo_t2_sweep_run(gpo_t2 *t2, gpo_t2_job *job, const gpo_t2_sweep *s,
                               gpo_t2_sweep_result *res)
{
    if (!t2 || !job || !s || !res || !s->run || !s->param || !s->values || s->n < 1)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2 sweep: NULL or empty argument");
    memset(res, 0, sizeof *res);
    res->runner = -1;
    int64_t *vals = malloc((size_t)s->n * sizeof *vals);
    gpo_stats *sts = calloc((size_t)s->n, sizeof *sts);
    int32_t *ok = calloc((size_t)s->n, sizeof *ok);
    gpuopt_status st = GPUOPT_OK;
    if (!vals || !sts || !ok) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 sweep: out of memory");
        goto out;
    }
    /* The incumbent first: it is always measured, whatever the budget. */
    int32_t nv = 0, inc = -1;
    for (int32_t i = 0; i < s->n; i++)
        if (s->values[i] == s->incumbent)
            inc = 0;
    if (inc == 0)
        vals[nv++] = s->incumbent;
    for (int32_t i = 0; i < s->n; i++)
        if (s->values[i] != s->incumbent)
            vals[nv++] = s->values[i];

    if (t2->cache) {
        gpo_cache_search search = {"exhaustive", 0, 0, gpo_t2_job_left_ms(job) / 1e3, 0};
        st = gpo_cache_begin(t2->cache, &job->key, &t2->soft, &search, &job->tune);
        if (st)
            goto out;
    }
    int32_t best = -1;
    for (int32_t i = 0; i < nv; i++) {
        double left = gpo_t2_job_left_ms(job);
        /* Past the budget, stop once the incumbent is in: the next plan
         * resumes from here. */
        if (left <= 0 && res->measured >= 1) {
            job->complete = 0;
            for (int32_t j = i; j < nv; j++)
                tried_add(res, vals[j], " (not reached)");
            break;
        }
        int32_t was;
        if (stored(job->resume, s->param, vals[i], &sts[i], &was)) {
            /* Kept from the earlier run; the finalists are re-timed now. */
            st = record(job, s, vals[i], was == GPO_CAND_INVALID ? NULL : &sts[i], was);
            if (st)
                goto out;
            if (was == GPO_CAND_INVALID) {
                res->invalid++;
                tried_add(res, vals[i], " (beyond the kernel's limit)");
                if (i == 0 && inc == 0)
                    inc = -1;
                continue;
            }
            res->measured++;
            ok[i] = was == GPO_CAND_OK;
            res->pruned += was == GPO_CAND_PRUNED;
            tried_add(res, vals[i], was == GPO_CAND_PRUNED ? " (pruned)" : "");
            if (ok[i] && (best < 0 || sts[i].median < sts[best].median))
                best = i;
            continue;
        }
        if (s->prepare) {
            st = s->prepare(s->user, vals[i]);
            if (st == GPUOPT_ERR_UNSUPPORTED) {
                gpo_log_debug(t2->log, "tier 2 %s: %s %lld: %s", job->kind, s->param,
                              (long long)vals[i], gpo_detail_get());
                res->invalid++;
                tried_add(res, vals[i], " (beyond the kernel's limit)");
                st = record(job, s, vals[i], NULL, GPO_CAND_INVALID);
                if (st)
                    goto out;
                if (i == 0 && inc == 0)
                    inc = -1;
                continue;
            }
            if (st)
                goto out;
        }
        /* Half the budget left goes to the candidates left, the rest to
         * the final re-timing. */
        gpo_timing_settings t = {
            0, left * 0.5 / (nv - i), CAND_MIN_RUNS, CAND_MAX_RUNS, CAND_MIN_RUNS, PRUNE_RATIO};
        int pruned = 0;
        st = gpo_measure_time(s->run, s->user, &t, best >= 0 ? sts[best].median : 0, &sts[i], &pruned);
        if (st)
            goto out;
        res->measured++;
        ok[i] = !pruned;
        if (pruned)
            res->pruned++;
        tried_add(res, vals[i], pruned ? " (pruned)" : "");
        st = record(job, s, vals[i], &sts[i], pruned ? GPO_CAND_PRUNED : GPO_CAND_OK);
        if (st)
            goto out;
        if (!pruned && (best < 0 || sts[i].median < sts[best].median))
            best = i;
    }
    if (best < 0) {
        st = gpo_fail(GPUOPT_ERR_UNSUPPORTED, "tier 2 %s: no %s could be measured (%s)", job->kind,
                      s->param, res->tried);
        goto out;
    }

    /* Finalists: the incumbent (slot 0) and the fastest challengers. */
    int32_t fin[1 + CHALLENGERS], nf = 0;
    if (inc == 0 && ok[0])
        fin[nf++] = 0;
    for (int32_t c = 0; c < CHALLENGERS + (nf == 0); c++) {
        int32_t pick = -1;
        for (int32_t i = 0; i < nv; i++) {
            int taken = 0;
            for (int32_t f = 0; f < nf; f++)
                taken |= fin[f] == i;
            if (ok[i] && !taken && (pick < 0 || sts[i].median < sts[pick].median))
                pick = i;
        }
        if (pick >= 0)
            fin[nf++] = pick;
    }
    int64_t fv[1 + CHALLENGERS];
    double slowest = 0;
    for (int32_t f = 0; f < nf; f++) {
        fv[f] = vals[fin[f]];
        if (sts[fin[f]].median > slowest)
            slowest = sts[fin[f]].median;
    }
    gpo_stats fs[1 + CHALLENGERS];
    int32_t w = 0;
    if (nf > 1 && gpo_t2_job_left_ms(job) <= 0) {
        /* No budget left to re-time: the sweep's own times, same rule. */
        for (int32_t f = 0; f < nf; f++)
            fs[f] = sts[fin[f]];
        for (int32_t f = 1; f < nf; f++)
            if (gpo_stats_beats(&fs[0], &fs[f], GPO_T2_SWITCH_FLOOR) &&
                (w == 0 || fs[f].median < fs[w].median))
                w = f;
    } else if (nf > 1) {
        /* The incumbent holds unless beaten beyond noise; among those that
         * beat it, the lowest median. Without an incumbent, slot 0 (the
         * sweep's fastest) plays its part. */
        retime_ctx rc = {s, fv};
        int32_t rounds = rounds_for(gpo_t2_job_left_ms(job), slowest, nf, FINAL_ROUNDS);
        st = gpo_t2_retime(retime_run, &rc, nf, rounds, GPO_T2_SWITCH_FLOOR, fs, &w);
        if (st)
            goto out;
    } else {
        fs[0] = sts[fin[0]];
    }
    res->winner = fv[w];
    res->winner_st = fs[w];
    res->incumbent_won = inc == 0 && ok[0] && w == 0;
    if (inc == 0 && ok[0])
        res->incumbent_st = fs[0];
    int32_t r = -1;
    for (int32_t f = 0; f < nf; f++)
        if (f != w && (r < 0 || fs[f].median < fs[r].median))
            r = f;
    if (r >= 0) {
        res->runner = fv[r];
        res->runner_st = fs[r];
    }
    /* The record's best and runner-up, with the side-by-side times. */
    job->best_params = params_of(s->param, res->winner);
    to_cache_stats(&res->winner_st, GPO_CAND_OK, &job->best);
    if (res->runner >= 0) {
        job->runner_params = params_of(s->param, res->runner);
        to_cache_stats(&res->runner_st, GPO_CAND_OK, &job->runner);
    }
    if (!job->best_params || (res->runner >= 0 && !job->runner_params))
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "tier 2 sweep: out of memory");
out:
    free(vals);
    free(sts);
    free(ok);
    return st;
}

static int param_of(const cJSON *cand, const char *param, int64_t *v)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(cand, "params");
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(p, param);
    if (!cJSON_IsNumber(x))
        return 0;
    *v = (int64_t)x->valuedouble;
    return 1;
}

gpuopt_status gpo_t2_sweep_verify(gpo_t2_job *job, const gpo_t2_sweep *s, int *keep)
{
    if (!job || !s || !keep || !s->run || !s->param || !job->hit)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2 verify: NULL argument or no hit");
    *keep = 0;
    int64_t v[2];
    if (!param_of(job->hit->best, s->param, &v[0])) {
        gpo_snprintf(job->verify_note, sizeof job->verify_note, "the stored winner has no %s",
                     s->param);
        return GPUOPT_OK;
    }
    int k = job->hit->runner_up && param_of(job->hit->runner_up, s->param, &v[1]) ? 2 : 1;
    retime_ctx rc = {s, v};
    gpo_stats fs[2];
    gpuopt_status st =
        gpo_t2_retime(retime_run, &rc, k, VERIFY_ROUNDS, GPO_T2_SWITCH_FLOOR, fs, NULL);
    if (st == GPUOPT_ERR_UNSUPPORTED) {
        gpo_snprintf(job->verify_note, sizeof job->verify_note, "a stored %s no longer runs (%s)",
                     s->param, gpo_detail_get());
        return GPUOPT_OK;
    }
    if (st)
        return st;
    char a[32], b[32];
    gpo_t2_fmt_ns(fs[0].median, a, sizeof a);
    job->verify_best_ns = fs[0].median;
    if (k == 1) {
        *keep = 1;
        gpo_snprintf(job->verify_note, sizeof job->verify_note,
                     "%s %lld still runs (%s; it had no runner-up)", s->param, (long long)v[0], a);
        return GPUOPT_OK;
    }
    gpo_t2_fmt_ns(fs[1].median, b, sizeof b);
    job->verify_runner_ns = fs[1].median;
    *keep = !gpo_stats_beats(&fs[0], &fs[1], GPO_T2_SWITCH_FLOOR);
    gpo_snprintf(job->verify_note, sizeof job->verify_note,
                 "%s %lld %s against the runner-up %lld (%s vs %s)", s->param, (long long)v[0],
                 *keep ? "holds" : "is now beaten", (long long)v[1], a, b);
    return GPUOPT_OK;
}
