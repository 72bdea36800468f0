/* The tuner handle and how it tunes (strategy, budget, seed, timing,
 * cache, progress), and the callback subject. The kernel subject's setters
 * are in tuner_kernel.c. Every setter checks its input at once and says
 * what is accepted; nothing is built or opened here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "util/strutil.h"
#include "select.h"
#include "tune/online.h"
#include "tune/tuner.h"

#define MAX_WORKLOAD_KEY 1024

void gpo_tuner_changed(gpuopt_tuner *t)
{
    gpo_online_free(t->online);
    t->online = NULL;
    t->key_valid = 0;
}

GPUOPT_API gpuopt_status gpuopt_tuner_create(gpuopt_context *ctx, gpuopt_device *device,
                                             const gpuopt_space *space, gpuopt_tuner **out)
{
    gpo_detail_clear();
    if (out)
        *out = NULL;
    if (!ctx || !space || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tuner_create: %s is NULL",
                        !ctx     ? "ctx"
                        : !space ? "space"
                                 : "out");
    if (device && device->ctx != ctx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_tuner_create: the device belongs to another context");
    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_check_fork(ctx);
    if (st == GPUOPT_OK && !device)
        st = gpo_ctx_select(ctx, NULL, &device);
    gpo_ctx_unlock(ctx);
    if (st != GPUOPT_OK)
        return st;

    gpuopt_tuner *t = calloc(1, sizeof *t);
    char *canon = NULL;
    if (!t)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a tuner");
    t->ctx = ctx;
    t->dev = device;
    t->abs_tol = GPO_DEFAULT_ABS_TOL;
    t->rel_tol = GPO_DEFAULT_REL_TOL;
    t->timeout_s = GPO_DEFAULT_TIMEOUT_S;
    t->cache_mode = GPUOPT_CACHE_USE;
    t->overlap = -1;
    gpo_timing_defaults(&t->timing);
    if ((st = gpo_space_clone(space, &t->space)) != GPUOPT_OK)
        goto out;
    /* The hash of the space as the user made it: the device limits a run
     * adds are the device's, already in the key through its architecture. */
    if ((st = gpo_space_canonical(t->space, &canon)) != GPUOPT_OK ||
        (st = gpo_cache_hash_text(canon, strlen(canon), t->space_hash, sizeof t->space_hash)) !=
            GPUOPT_OK)
        goto out;
    *out = t;
    t = NULL;
out:
    free(canon);
    gpuopt_tuner_destroy(t);
    return st;
}

GPUOPT_API void gpuopt_tuner_destroy(gpuopt_tuner *t)
{
    if (!t)
        return;
    gpo_online_free(t->online);
    gpo_ksession_free(t->ks);
    gpo_tuner_cache_release(t);
    gpo_kernel_def_free(&t->k);
    free(t->workload_key);
    if (t->space)
        gpo_space_unref(t->space);
    free(t);
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_size(gpuopt_tuner *t, const char *name, int64_t value)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_size");
    gpo_tuner_changed(t);
    return gpuopt_space_set_size(t->space, name, value);
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_callback(gpuopt_tuner *t, gpuopt_run_fn run,
                                                   gpuopt_pre_run_fn pre_run,
                                                   gpuopt_validate_fn validate, void *user)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_callback");
    if (!run)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tuner_set_callback: run is NULL");
    if (t->subject == GPO_SUBJECT_KERNEL)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_tuner_set_callback: this tuner already has a kernel subject (a "
                        "tuner tunes one subject)");
    gpo_tuner_changed(t);
    t->cb.run = run;
    t->cb.pre_run = pre_run;
    t->cb.validate = validate;
    t->cb.user = user;
    t->subject = GPO_SUBJECT_CALLBACK;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_strategy(gpuopt_tuner *t, int32_t strategy)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_strategy");
    if (!gpo_strategy_name(strategy))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_strategy: %d unknown (accepted 0 auto, 1 exhaustive, 2 "
                        "random, 3 annealing, 4 model)",
                        (int)strategy);
    gpo_tuner_changed(t);
    t->strategy = strategy;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_budget(gpuopt_tuner *t, int32_t max_evaluations,
                                                 double max_seconds, int32_t max_failures)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_budget");
    if (max_evaluations < 0 || max_failures < 0 || !(isfinite(max_seconds) && max_seconds >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_budget: evaluations %d, seconds %g, failures %d (each "
                        ">= 0, finite; 0 means no limit)",
                        (int)max_evaluations, max_seconds, (int)max_failures);
    gpo_tuner_changed(t);
    t->max_evaluations = max_evaluations;
    t->max_seconds = max_seconds;
    t->max_failures = max_failures;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_seed(gpuopt_tuner *t, uint64_t seed)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_seed");
    gpo_tuner_changed(t);
    t->seed = seed;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_timing(gpuopt_tuner *t, double warmup_ms,
                                                 double repeat_ms, int32_t min_runs,
                                                 int32_t max_runs)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_timing");
    gpo_timing_settings s = t->timing;
    s.warmup_ms = warmup_ms;
    s.repeat_ms = repeat_ms;
    s.min_runs = min_runs;
    s.max_runs = max_runs;
    /* The probe is the first runs timed: no more than may be timed at all. */
    gpo_timing_settings d;
    gpo_timing_defaults(&d);
    s.probe_runs = max_runs >= 1 && max_runs < d.probe_runs ? max_runs : d.probe_runs;
    gpuopt_status st = gpo_timing_check(&s);
    if (st != GPUOPT_OK)
        return gpo_fail(st, "gpuopt_tuner_set_timing: %s", gpo_detail_get());
    gpo_tuner_changed(t);
    t->timing = s;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_timeout(gpuopt_tuner *t, double seconds)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_timeout");
    if (!(isfinite(seconds) && seconds >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_timeout: %g (finite seconds >= 0; 0 disables)", seconds);
    gpo_tuner_changed(t);
    t->timeout_s = seconds;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_workload_key(gpuopt_tuner *t, const char *key)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_workload_key");
    char *copy = NULL;
    if (key && *key) {
        if (strlen(key) > MAX_WORKLOAD_KEY)
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "gpuopt_tuner_set_workload_key: %zu characters (at most %d)",
                            strlen(key), MAX_WORKLOAD_KEY);
        if (!(copy = gpo_strdup(key)))
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a workload key");
    }
    gpo_tuner_changed(t);
    free(t->workload_key);
    t->workload_key = copy;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_cache_mode(gpuopt_tuner *t, int32_t mode)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_cache_mode");
    if (mode < GPUOPT_CACHE_USE || mode > GPUOPT_CACHE_OFF)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_cache_mode: %d unknown (accepted 0 use, 1 refresh, 2 "
                        "off)",
                        (int)mode);
    gpo_tuner_changed(t);
    t->cache_mode = mode;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_progress(gpuopt_tuner *t, gpuopt_progress_fn fn,
                                                   void *user)
{
    GPO_CHECK_TUNER(t, "gpuopt_tuner_set_progress");
    t->progress = fn;
    t->progress_user = user;
    return GPUOPT_OK;
}
