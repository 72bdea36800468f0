/* Results (result.c): every evaluated point with its status, statistics,
 * compile time and message, the winner, the final re-timing, how the
 * search ran, and where the answer came from. Built by a run (run.c),
 * immutable once handed to its caller; read through gpuopt_result_* and,
 * inside the library, the readers below; JSON and CSV for users. */
#ifndef GPO_TUNE_RESULT_H
#define GPO_TUNE_RESULT_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "cache/key.h"
#include "measure/timing.h"
#include "tune/search.h"
#include "tune/subject.h"

/* How a run was asked to search, for the result's description. */
typedef struct gpo_result_info {
    const char *device, *device_name, *backend, *subject;
    int32_t strategy; /* as requested */
    uint64_t seed;
    int32_t max_evaluations, max_failures;
    double max_seconds;
    gpo_timing_settings timing;
    double timeout_s;
    const char *workload; /* may be NULL */
} gpo_result_info;

/* NULL on allocation failure. */
gpuopt_result *gpo_result_new(const gpo_result_info *info, const gpuopt_space *space);

/* ---- building ----------------------------------------------------------------- */

/* Appends a point (copying idx); its index, or -1 on allocation failure. */
int32_t gpo_result_add(gpuopt_result *res, const uint32_t *idx, const gpo_eval *ev, int resumed);
/* The search's description (strategy resolved, stop reason, counts). */
void gpo_result_set_search(gpuopt_result *res, const gpo_search *s, double wall_s);
/* The same as a cached record tells it: {"strategy", "seed", "wall_s",
 * "evaluated"}, with `stop` as the stop reason. */
void gpo_result_set_record(gpuopt_result *res, const cJSON *record, const char *stop);
void gpo_result_set_best(gpuopt_result *res, int32_t index);
/* The runner-up the decision found (-1: none); the record stores it. */
void gpo_result_set_runner(gpuopt_result *res, int32_t index);
void gpo_result_set_validated(gpuopt_result *res, int validated);
/* An answer from the cache: its gpuopt_result_origin, when it was measured (seconds
 * since the epoch), the soft fields that changed since (GPO_SOFT_*), and
 * the record's payload (taken; may be NULL). */
void gpo_result_set_origin(gpuopt_result *res, int32_t from, int64_t time, uint32_t changed,
                           cJSON *payload);
/* One entry of the final re-timing (point index and its statistics); -1
 * on allocation failure. */
int gpo_result_add_final(gpuopt_result *res, int32_t index, const gpo_stats *stats);

/* ---- reading -------------------------------------------------------------------- */

int32_t gpo_result_count_of(const gpuopt_result *res);
/* The index of the point with c's values; -1 when none. */
int32_t gpo_result_index_of(const gpuopt_result *res, const gpuopt_point *c);
int32_t gpo_result_best_index(const gpuopt_result *res);
int32_t gpo_result_runner_index(const gpuopt_result *res);
const gpuopt_point *gpo_result_point(const gpuopt_result *res, int32_t i);
int32_t gpo_result_status(const gpuopt_result *res, int32_t i);
const char *gpo_result_message(const gpuopt_result *res, int32_t i);
/* Point i's statistics: from the final re-timing when it took part (the
 * side-by-side figures), else from the search; NULL when never timed. */
const gpo_stats *gpo_result_stats(const gpuopt_result *res, int32_t i);
/* Point i as the cache stores it (the search's figures). */
void gpo_result_cache_stats(const gpuopt_result *res, int32_t i, gpo_cache_stats *out);
int64_t gpo_result_time(const gpuopt_result *res);
uint32_t gpo_result_changed(const gpuopt_result *res);
const cJSON *gpo_result_payload(const gpuopt_result *res);

#endif
