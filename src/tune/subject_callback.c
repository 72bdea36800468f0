/* The host-callback subject (subject_callback.h). */
#include <math.h>
#include <stdlib.h>

#include "util/strutil.h"
#include "tune/subject_callback.h"

typedef struct cprep {
    const gpuopt_point *config;
} cprep;

static gpuopt_status cb_setup(gpo_subject_ctx *sc)
{
    const gpo_callback_def *cb = sc->def;
    sc->validated = cb->validate != NULL;
    return GPUOPT_OK;
}

static void cb_teardown(gpo_subject_ctx *sc)
{
    (void)sc;
}

static int32_t cb_prepare(gpo_subject_ctx *sc, const gpuopt_point *c, gpo_prep **out, gpo_eval *ev)
{
    (void)ev;
    cprep *p = calloc(1, sizeof *p);
    if (!p) {
        sc->fatal = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory preparing a candidate");
        return GPO_FATAL;
    }
    p->config = c;
    *out = (gpo_prep *)p;
    return GPO_CAND_OK;
}

static int32_t cb_run(gpo_subject_ctx *sc, gpo_prep *prep, double *ns, gpo_eval *ev)
{
    const gpo_callback_def *cb = sc->def;
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

static int32_t cb_check(gpo_subject_ctx *sc, gpo_prep *prep, gpo_eval *ev)
{
    const gpo_callback_def *cb = sc->def;
    if (!cb->validate || cb->validate(((const cprep *)prep)->config, cb->user))
        return GPO_CAND_OK;
    gpo_snprintf(ev->msg, sizeof ev->msg, "the validate callback rejected the output");
    return GPO_CAND_WRONG_RESULT;
}

static void cb_release(gpo_subject_ctx *sc, gpo_prep *prep)
{
    (void)sc;
    free(prep);
}

const gpo_subject_ops gpo_subject_callback = {
    .kind = "callback",
    .setup = cb_setup,
    .teardown = cb_teardown,
    .prepare = cb_prepare,
    .run = cb_run,
    .check = cb_check,
    .release = cb_release,
};
