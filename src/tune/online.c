/* Online tuning (online.h). */
#include <stdlib.h>

#include "tune/online.h"

struct gpo_online {
    gpo_run *r;
    int done;
    gpuopt_point *best; /* owned, once done */
    gpo_prep *best_prep;
};

void gpo_online_free(gpo_online *o)
{
    if (!o)
        return;
    if (o->best_prep)
        gpo_run_release(o->r, o->best_prep);
    gpo_point_destroy(o->best);
    gpo_run_end(o->r);
    free(o);
}

gpuopt_status gpo_online_start(const gpo_run_spec *spec, gpo_online **out)
{
    *out = NULL;
    gpo_online *o = calloc(1, sizeof *o);
    if (!o)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory starting online tuning");
    gpuopt_status st = gpo_run_begin(spec, &o->r);
    gpuopt_result *hit = NULL;
    int found = st == GPUOPT_OK ? gpo_run_lookup(o->r, &hit) : GPO_RUN_MISS;
    if (found < 0)
        st = (gpuopt_status)-found;
    const uint32_t *idx = found == GPO_RUN_HIT && gpo_result_best_index(hit) >= 0
                              ? gpo_point_indices(gpo_result_point(hit, gpo_result_best_index(hit)))
                              : NULL;
    const gpuopt_space *space = NULL;
    if (idx)
        st = gpo_run_space(o->r, &space);
    if (space && st == GPUOPT_OK && gpo_space_is_legal(space, idx)) {
        st = gpo_point_create(space, idx, &o->best);
        o->done = st == GPUOPT_OK;
    }
    gpuopt_result_destroy(hit);
    if (st == GPUOPT_OK && !o->done)
        st = gpo_run_start(o->r);
    if (st != GPUOPT_OK) {
        gpo_online_free(o);
        return st;
    }
    *out = o;
    return GPUOPT_OK;
}

/* The search is over: the best (by its single-run times; no re-timing,
 * which would run work nobody asked for) becomes the answer. */
static gpuopt_status conclude(gpo_online *o)
{
    gpo_search *s = gpo_run_search(o->r);
    const gpuopt_point *top[2];
    int32_t k = gpo_search_top(s, 2, top, NULL);
    gpuopt_status st = gpo_run_close(o->r, k > 0 ? top[0] : NULL, k > 1 ? top[1] : NULL);
    if (st != GPUOPT_OK)
        return st;
    if (k < 1)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "online tuning: no valid candidate among the %d evaluated",
                        (int)gpo_search_evaluations(s));
    st = gpo_point_create(gpo_point_space(top[0]), gpo_point_indices(top[0]), &o->best);
    if (st == GPUOPT_OK)
        o->done = 1;
    return st;
}

/* Runs the best once (prepared on first use). */
static gpuopt_status run_best(gpo_online *o)
{
    gpo_eval ev = {0};
    int32_t s = o->best_prep ? gpo_run_again(o->r, o->best_prep, &ev)
                             : gpo_run_ready(o->r, o->best, &o->best_prep, NULL, &ev);
    if (s == GPO_FATAL)
        return gpo_run_fatal(o->r);
    if (s != GPO_CAND_OK)
        return gpo_fail(GPUOPT_ERR_LAUNCH, "online tuning: the best point failed: %s", ev.msg);
    return GPUOPT_OK;
}

gpuopt_status gpo_online_step(gpo_online *o, const gpuopt_point **point, int32_t *done)
{
    gpo_run *r = o->r;
    gpuopt_status st = GPUOPT_OK;
    while (!o->done) {
        const gpuopt_point *c = NULL;
        st = gpo_search_next(gpo_run_search(r), &c);
        if (st == GPUOPT_ERR_NOT_FOUND) {
            if ((st = conclude(o)) != GPUOPT_OK)
                return st;
            break;
        }
        if (st != GPUOPT_OK)
            return st;
        gpo_eval ev = {0};
        ev.compile_ms = -1;
        gpo_prep *p = NULL;
        double ns = 0;
        int32_t s = gpo_run_ready(r, c, &p, &ns, &ev);
        gpo_run_release(r, p);
        if (s == GPO_FATAL)
            return gpo_run_fatal(r);
        ev.status = s;
        if (s == GPO_CAND_OK)
            gpo_stats_compute(&ns, 1, &ev.stats);
        if ((st = gpo_run_record(r, c, &ev)) != GPUOPT_OK)
            return st;
        if (s == GPO_CAND_OK) {
            if (point)
                *point = c;
            return GPUOPT_OK;
        }
        /* The work is not done yet: the best so far redoes it. */
        const gpuopt_point *best = gpo_search_best(gpo_run_search(r));
        if (best) {
            gpo_prep *bp = NULL;
            s = gpo_run_ready(r, best, &bp, NULL, &ev);
            gpo_run_release(r, bp);
            if (s == GPO_FATAL)
                return gpo_run_fatal(r);
            if (s == GPO_CAND_OK) {
                if (point)
                    *point = best;
                return GPUOPT_OK;
            }
        }
    }
    if ((st = run_best(o)) != GPUOPT_OK)
        return st;
    if (point)
        *point = o->best;
    if (done)
        *done = 1;
    return GPUOPT_OK;
}
