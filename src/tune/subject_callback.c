/* The host-callback subject (subject_callback.h). */
#include <math.h>

#include "util/strutil.h"
#include "tune/subject_callback.h"

static gpuopt_status cb_setup(gpo_subject_ctx *sc)
{
    const gpo_callback_def *cb = sc->def;
    sc->validated = cb->validate != NULL;
    return GPUOPT_OK;
}

/* The point is its own handle: the callbacks are given the point. */
static int32_t cb_prepare(gpo_subject_ctx *sc, const gpuopt_point *c, gpo_prep **out, gpo_eval *ev)
{
    (void)sc;
    (void)ev;
    *out = (gpo_prep *)c;
    return GPO_CAND_OK;
}

static int32_t cb_run(gpo_subject_ctx *sc, gpo_prep *prep, double *ns, gpo_eval *ev)
{
    const gpo_callback_def *cb = sc->def;
    const gpuopt_point *c = (const gpuopt_point *)prep;
    if (cb->pre_run)
        cb->pre_run(c, cb->user);
    double measured = -1;
    gpo_detail_clear();
    uint64_t t0 = gpo_now_ns();
    gpuopt_status st = cb->run(c, cb->user, &measured);
    uint64_t t1 = gpo_now_ns();
    if (st != GPUOPT_OK)
        return gpo_say(GPO_CAND_LAUNCH_FAILED, ev->msg, sizeof ev->msg,
                       "the run callback returned %s%s%s", gpuopt_status_name(st),
                       *gpo_detail_get() ? ": " : "", gpo_detail_get());
    if (isnan(measured) || isinf(measured))
        return gpo_say(GPO_CAND_LAUNCH_FAILED, ev->msg, sizeof ev->msg,
                       "the run callback measured %g ns", measured);
    *ns = measured >= 0 ? measured : (double)(t1 - t0);
    return GPO_CAND_OK;
}

static int32_t cb_check(gpo_subject_ctx *sc, gpo_prep *prep, gpo_eval *ev)
{
    const gpo_callback_def *cb = sc->def;
    if (!cb->validate || cb->validate((const gpuopt_point *)prep, cb->user))
        return GPO_CAND_OK;
    return gpo_say(GPO_CAND_WRONG_RESULT, ev->msg, sizeof ev->msg,
                   "the validate callback rejected the output");
}

const gpo_subject_ops gpo_subject_callback = {
    .kind = "callback",
    .setup = cb_setup,
    .prepare = cb_prepare,
    .run = cb_run,
    .check = cb_check,
};
