/* A tier-2 job as a tuning run's subject (bench.h): the benchmark's
 * callbacks under the run's protocol (src/tune/subject.h). Unlike a
 * user's kernel, a built-in benchmark that fails to run says the device or
 * its runtime is broken, not that one point is bad: every failure but a
 * point beyond a kernel's limit ends the run, and the tier, with its
 * words. */
#include "tier2/bench.h"
#include "util/strutil.h"

static gpuopt_status bench_setup(gpo_subject_ctx *sc)
{
    gpo_t2_job *job = sc->def;
    gpuopt_status st = GPUOPT_OK;
    if (!job->set_up && (st = job->bench->setup(job)) == GPUOPT_OK)
        job->set_up = 1;
    else if (st && job->bench->teardown)
        job->bench->teardown(job); /* what a failed setup made half-way */
    sc->validated = job->bench->check != NULL;
    return st;
}

static void bench_teardown(gpo_subject_ctx *sc)
{
    gpo_t2_job *job = sc->def;
    if (job->set_up && job->bench->teardown)
        job->bench->teardown(job);
    job->set_up = 0;
    job->current = NULL;
}

static int32_t fatal(gpo_subject_ctx *sc, gpuopt_status st)
{
    sc->fatal = st;
    return GPO_FATAL;
}

static int32_t bench_prepare(gpo_subject_ctx *sc, const gpuopt_point *c, gpo_prep **p, gpo_eval *ev)
{
    gpo_t2_job *job = sc->def;
    gpo_detail_clear();
    gpuopt_status st = job->bench->prepare ? job->bench->prepare(job, c) : GPUOPT_OK;
    if (st == GPUOPT_ERR_UNSUPPORTED)
        return gpo_say(GPO_CAND_INVALID, ev->msg, sizeof ev->msg, "%s", gpo_detail_get());
    if (st)
        return fatal(sc, st);
    /* The point is its own handle: the job holds what one point needs, and
     * is prepared again for a point run after another (a re-timing
     * alternates). */
    job->current = c;
    *p = (gpo_prep *)c;
    return GPO_CAND_OK;
}

static int32_t bench_run(gpo_subject_ctx *sc, gpo_prep *p, double *ns, gpo_eval *ev)
{
    (void)ev;
    gpo_t2_job *job = sc->def;
    const gpuopt_point *c = (const gpuopt_point *)p;
    gpuopt_status st = GPUOPT_OK;
    if (job->current != c && job->bench->prepare && (st = job->bench->prepare(job, c)))
        return fatal(sc, st);
    job->current = c;
    st = job->bench->run(job, ns);
    return st ? fatal(sc, st) : GPO_CAND_OK;
}

static int32_t bench_check(gpo_subject_ctx *sc, gpo_prep *p, gpo_eval *ev)
{
    (void)p;
    (void)ev;
    gpo_t2_job *job = sc->def;
    gpuopt_status st = job->bench->check ? job->bench->check(job) : GPUOPT_OK;
    return st ? fatal(sc, st) : GPO_CAND_OK;
}

static void bench_release(gpo_subject_ctx *sc, gpo_prep *p)
{
    (void)p;
    gpo_t2_job *job = sc->def;
    job->current = NULL; /* its storage may be reused by another point */
}

const gpo_subject_ops gpo_t2_subject = {
    .kind = "bench",
    .setup = bench_setup,
    .teardown = bench_teardown,
    .prepare = bench_prepare,
    .run = bench_run,
    .check = bench_check,
    .release = bench_release,
};
