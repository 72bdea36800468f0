/* What is tuned: the interface between a run (run.c) and the thing whose
 * points it measures. A subject turns a point into a status and a time;
 * the run decides which points, how often, and what to keep.
 *
 * Subjects: a kernel on a runtime route of the device (subject_kernel.c)
 * and a host callback (subject_callback.c) for the public tuner; tier 2's
 * built-in benchmarks bring their own (src/tier2/bench.c), over the
 * runtime ops or a backend's host measurements.
 *
 * Protocol of one point: prepare (build, bind), then runs (each one run,
 * its time in *ns), check after the first run (compare with the
 * reference), release. Each returns a GPO_CAND_* status with ev->msg set
 * on failure, or GPO_FATAL when the run cannot go on at all (no memory, a
 * broken session, a device that computes wrong results): sc->fatal then
 * holds the status and the detail says why. */
#ifndef GPO_TUNE_SUBJECT_H
#define GPO_TUNE_SUBJECT_H

#include <stdint.h>

#include "gpuopt/gpuopt.h"
#include "measure/stats.h"
#include "tune/status.h"
#include "util/log.h"

#define GPO_EVAL_MSG 640 /* a candidate's message, bytes */

/* What evaluating a point found. */
typedef struct gpo_eval {
    int32_t status;    /* GPO_CAND_* */
    gpo_stats stats;   /* count 0 when not timed */
    double compile_ms; /* -1 when nothing was built for it */
    char msg[GPO_EVAL_MSG];
} gpo_eval;

/* Returned instead of a candidate status when the run cannot go on. */
#define GPO_FATAL (-1)

typedef struct gpo_prep gpo_prep; /* a point made ready to run (the subject's own) */

/* What a subject sees of the run that drives it. */
typedef struct gpo_subject_ctx {
    void *def;                 /* the subject's definition, as the run was given it */
    const gpuopt_space *space; /* this run's space (device limits added by constrain) */
    const gpo_logger *log;
    void *state;         /* what setup made, for this run */
    int validated;       /* setup: 1 when a reference or a check judges outputs */
    int ahead;           /* setup: points to hand out ahead for prefetch (0: none) */
    gpuopt_status fatal; /* with GPO_FATAL: why */
} gpo_subject_ctx;

typedef struct gpo_subject_ops {
    const char *kind; /* "kernel", "callback", "bench": a tuner cache key's kind */
    /* Adds what the device limits to `space`, the run's own copy (may be
     * NULL). Runs before any lookup, so it opens nothing. */
    gpuopt_status (*constrain)(gpo_subject_ctx *sc, gpuopt_space *space);
    /* Once per run before the first point: session, arguments, reference;
     * sets sc->state, sc->validated, sc->ahead. Runs only when something
     * is measured: a cache hit never sets a subject up. */
    gpuopt_status (*setup)(gpo_subject_ctx *sc);
    /* Frees what setup made (may be NULL). */
    void (*teardown)(gpo_subject_ctx *sc);
    /* Starts preparing c ahead of need (may be NULL). */
    void (*prefetch)(gpo_subject_ctx *sc, const gpuopt_point *c);
    /* ev->compile_ms is set by prepare; *p on OK. */
    int32_t (*prepare)(gpo_subject_ctx *sc, const gpuopt_point *c, gpo_prep **p, gpo_eval *ev);
    int32_t (*run)(gpo_subject_ctx *sc, gpo_prep *p, double *ns, gpo_eval *ev);
    int32_t (*check)(gpo_subject_ctx *sc, gpo_prep *p, gpo_eval *ev);
    /* Lets go of what prepare made (may be NULL). */
    void (*release)(gpo_subject_ctx *sc, gpo_prep *p);
} gpo_subject_ops;

#endif
