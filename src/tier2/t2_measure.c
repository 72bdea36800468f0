/* The timing loop of tier 2 (tier2.h): the tuner's controllers
 * (src/tune/stats.h) driven over a subject that runs once per call, so
 * every measurement of the tier follows the same rules as the tuner's
 * (research/anchors-autotuning.md §(b)3: warm-up and repeats on time
 * budgets bounded by run counts, the median with p20/p80, probe-and-prune,
 * a side-by-side re-timing of the finalists). */
#include "tier2/tier2.h"

gpuopt_status gpo_t2_retime(gpuopt_status (*run)(void *user, int32_t i, double *ns), void *user,
                            int32_t k, int32_t rounds, double floor, gpo_stats *stats,
                            int32_t *pick)
{
    if (!run || !stats)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2 re-timing: NULL %s",
                        !run ? "subject" : "output");
    gpo_retime r;
    gpuopt_status st = gpo_retime_begin(&r, k, rounds);
    if (st)
        return st;
    int32_t which;
    while (gpo_retime_next(&r, &which)) {
        double ns = 0;
        st = run(user, which, &ns);
        if (st)
            goto out;
        gpo_retime_record(&r, which, ns);
    }
    int32_t w = gpo_retime_pick(&r, floor, stats);
    if (w < 0)
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "tier 2 re-timing: nothing was timed");
    else if (pick)
        *pick = w;
out:
    gpo_retime_free(&r);
    return st;
}
