/* The search: which configuration to evaluate next, under a budget, never
 * the same one twice. The engine drives it with any subject that can turn
 * a configuration into a status and a time:
 *
 *   gpo_search_create(space, &settings, &search);
 *   while (gpo_search_next(search, &config) == GPUOPT_OK) {
 *       evaluate config (build, validate, time with gpo_timing and
 *                        gpo_search_best_value for the probe rule);
 *       gpo_search_report(search, config, status, median_ns);
 *   }
 *   gpo_search_top(search, k, ...)  -> re-time side by side (gpo_retime)
 *
 * Several candidates may be outstanding at once (next, next, report,
 * report), so the engine can build upcoming candidates while timing the
 * current one; each is reported by the config pointer next gave.
 *
 * Strategies (values of the planned public gpuopt_strategy):
 *   AUTO        EXHAUSTIVE when the legal space fits the evaluation budget
 *               (or there is none), else RANDOM
 *   EXHAUSTIVE  the lazy walk, in walk order
 *   RANDOM      uniform sampling, then best-first local refinement around
 *               the best few (strategy_random.c)
 *   ANNEALING   simulated annealing over neighbourhoods (strategy_anneal.c)
 *   MODEL       a random-forest surrogate choosing by a lower confidence
 *               bound (strategy_model.c)
 * A non-exhaustive strategy without an evaluation budget gets one:
 * GPO_DEFAULT_FRACTION of the legal space (at least 1).
 *
 * Budget: evaluations count every candidate handed out (outstanding ones
 * included); failures count COMPILE_FAILED, LAUNCH_FAILED, WRONG_RESULT and
 * TIMEOUT; seconds run from gpo_search_create on the settings' clock.
 * INVALID (a device limit the space did not express) and PRUNED count as
 * evaluations only. Only OK candidates can be best.
 *
 * Reproducibility: the sequence of candidates is a function of the space,
 * the settings (seed included) and the reported results, nothing else. */
#ifndef GPO_TUNE_SEARCH_H
#define GPO_TUNE_SEARCH_H

#include <stdint.h>

#include "gpuopt/gpuopt.h"
#include "tune/space.h"
#include "tune/status.h"

enum {
    GPO_STRATEGY_AUTO = 0,
    GPO_STRATEGY_EXHAUSTIVE = 1,
    GPO_STRATEGY_RANDOM = 2,
    GPO_STRATEGY_ANNEALING = 3,
    GPO_STRATEGY_MODEL = 4
};

#define GPO_DEFAULT_FRACTION 0.25

typedef struct gpo_search gpo_search;

typedef struct gpo_search_settings {
    int32_t strategy; /* GPO_STRATEGY_* */
    uint64_t seed;
    int32_t max_evaluations; /* 0: none */
    double max_seconds;      /* 0: none */
    int32_t max_failures;    /* 0: none */
    /* Clock for max_seconds; NULL: the monotonic clock. Tests inject one. */
    uint64_t (*clock_ns)(void *user);
    void *clock_user;
} gpo_search_settings;

void gpo_search_defaults(gpo_search_settings *s); /* AUTO, seed 0, no budget */

/* Strategy names "auto", "exhaustive", "random", "annealing", "model";
 * NULL for unknown. */
const char *gpo_strategy_name(int32_t strategy);

/* Takes a reference on `space` (it must not change while the search
 * lives: the engine gives it its own clone). */
gpuopt_status gpo_search_create(const gpuopt_space *space, const gpo_search_settings *settings,
                                gpo_search **out);
void gpo_search_destroy(gpo_search *s);

/* A result known before the search starts (a resumed journal, a cached
 * winner to verify): marks the configuration seen, so it is never
 * proposed, and lets it be best, without spending budget. Call before the
 * first gpo_search_next. */
gpuopt_status gpo_search_preload(gpo_search *s, const uint32_t *idx, int32_t status,
                                 double value_ns);

/* The next candidate: GPUOPT_OK with *config (owned by the search, valid
 * until it is destroyed), or GPUOPT_ERR_NOT_FOUND when the search is over
 * (gpo_search_stop_reason says why). */
gpuopt_status gpo_search_next(gpo_search *s, const gpuopt_point **config);

/* The outcome of a candidate from gpo_search_next: a GPO_CAND_* status and,
 * for OK and PRUNED, its median in ns (finite, >= 0). Reporting twice, or
 * a configuration the search did not hand out, is
 * GPUOPT_ERR_INVALID_ARGUMENT. */
gpuopt_status gpo_search_report(gpo_search *s, const gpuopt_point *config, int32_t status,
                                double value_ns);

/* "" (not finished), "space exhausted", "evaluation budget", "time budget", "failure budget" */
const char *gpo_search_stop_reason(const gpo_search *s);
int32_t gpo_search_strategy(const gpo_search *s); /* AUTO resolved */
/* Candidates the search plans to hand out (for progress); 0 when unknown. */
int32_t gpo_search_planned(const gpo_search *s);
/* The legal count when the search had to compute it (AUTO, default
 * budgets, exhaustive progress); 0 when not known exactly. */
uint64_t gpo_search_legal(const gpo_search *s);

/* The best OK median so far (the probe rule's reference); -1 when none. */
double gpo_search_best_value(const gpo_search *s);
const gpuopt_point *gpo_search_best(const gpo_search *s); /* NULL: none */
/* Up to k best OK candidates, fastest first: configs and medians (values
 * may be NULL). Returns how many. */
int32_t gpo_search_top(const gpo_search *s, int32_t k, const gpuopt_point **configs,
                       double *values);

int32_t gpo_search_evaluations(const gpo_search *s); /* handed out, preloads excluded */
int32_t gpo_search_failures(const gpo_search *s);

#endif
