/* The host-callback subject: anything that is not one kernel (a CPU
 * routine, a library call, a sequence of launches). The library calls
 * pre_run (untimed), then run, timed by the monotonic clock unless the
 * callback reports its own measurement (device events it recorded); the
 * validate callback checks a candidate's first run. */
#include <math.h>
#include <stdlib.h>

#include "util/strutil.h"
#include "tune/tuner.h"

typedef struct cprep {
    const gpuopt_config *config;
} cprep;

static gpuopt_status cb_setup(gpo_trun *r)
{
    if (!r->t->cb.run)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the callback subject has no run callback");
    r->validated = r->t->cb.validate != NULL;
    return GPUOPT_OK;
}

static void cb_teardown(gpo_trun *r)
{
    (void)r;
}

static int32_t cb_prepare(gpo_trun *r, const gpuopt_config *c, gpo_prep **out, gpo_eval *ev)
{
    (void)ev;
    cprep *p = calloc(1, sizeof *p);
    if (!p) {
        r->fatal = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory preparing a candidate");
        return GPO_FATAL;
    }
    p->config = c;
    *out = (gpo_prep *)p;
    return GPO_CAND_OK;
}

static int32_t cb_run(gpo_trun *r, gpo_prep *prep, double *ns, gpo_eval *ev)
{
    const gpo_callback_def *cb = &r->t->cb;
    const cprep *p = (const cprep *)prep;
    if (cb->pre_run)
        cb->pre_run(p->config, cb->user);
    double measured = -1;
    gpo_detail_clear();
    uint64_t t0 = gpo_now_ns();
    gpuopt_status st = cb->run(p->config, cb->user, &measured);
    uint64_t t1 = gpo_now_ns();
    if (st != GPUOPT_OK) {
        gpo_snprintf(ev->msg, sizeof ev->msg, "the run callback returned %s%s%s",
                     gpuopt_status_name(st), *gpo_detail_get() ? ": " : "", gpo_detail_get());
        return GPO_CAND_LAUNCH_FAILED;
    }
    if (isnan(measured) || isinf(measured)) {
        gpo_snprintf(ev->msg, sizeof ev->msg, "the run callback measured %g ns", measured);
        return GPO_CAND_LAUNCH_FAILED;
    }
    *ns = measured >= 0 ? measured : (double)(t1 - t0);
    return GPO_CAND_OK;
}

static int32_t cb_check(gpo_trun *r, gpo_prep *prep, gpo_eval *ev)
{
    const gpo_callback_def *cb = &r->t->cb;
    if (!cb->validate || cb->validate(((const cprep *)prep)->config, cb->user))
        return GPO_CAND_OK;
    gpo_snprintf(ev->msg, sizeof ev->msg, "the validate callback rejected the output");
    return GPO_CAND_WRONG_RESULT;
}

static void cb_release(gpo_trun *r, gpo_prep *prep)
{
    (void)r;
    free(prep);
}

const gpo_subject_ops gpo_subject_callback = {
    .kind = "callback",
    .constrain = NULL,
    .setup = cb_setup,
    .teardown = cb_teardown,
    .prefetch = NULL,
    .prepare = cb_prepare,
    .run = cb_run,
    .check = cb_check,
    .release = cb_release,
};
