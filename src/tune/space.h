/* Parameter spaces and their points, the tuner's internal side (space.c).
 *
 * A point (an assignment of one value to every parameter; the public type
 * is gpuopt_point) is identified by its value indices: idx[p] is the
 * position of parameter p's value in the list it was added with. Index
 * vectors are what the search keeps and compares; names and values are
 * what users, caches and kernels see (gpuopt_point reads by name).
 *
 * The legal space is never materialised: gpo_space_iter walks the mixed
 * radix product depth first, in parameter order, and tests each constraint
 * as soon as the last parameter it reads is assigned, so one failed test
 * skips the whole subtree below it. Parameters after the last constrained
 * one are "free": counting multiplies by their product instead of walking.
 *
 * Thread safety: a space is not locked. Build it from one thread; once
 * built, any number of threads may read it, walk it, sample it and read
 * its configurations (callback constraints must then be thread-safe). */
#ifndef GPO_TUNE_SPACE_H
#define GPO_TUNE_SPACE_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "gpuopt/gpuopt.h"
#include "tune/expr.h"
#include "util/rng.h"

#define GPO_SPACE_MAX_PARAMS 64
#define GPO_SPACE_MAX_VALUES (1 << 20)
#define GPO_SPACE_MAX_SIZES 64
#define GPO_SPACE_MAX_CONSTRAINTS 1024

enum { GPO_PARAM_INT = 1, GPO_PARAM_ENUM = 2 };

/* ---- the space ---------------------------------------------------------- */

/* A copy sharing nothing mutable (callback user pointers are copied as
 * pointers). What a tuner takes, so that the caller may go on editing the
 * original (a new problem size) without disturbing a run. */
gpuopt_status gpo_space_clone(const gpuopt_space *space, gpuopt_space **out);

/* Reference counting: points created by gpo_point_create keep
 * their space alive. gpuopt_space_destroy drops the caller's reference. */
void gpo_space_ref(const gpuopt_space *space);
void gpo_space_unref(const gpuopt_space *space);

int32_t gpo_space_param_count(const gpuopt_space *space);
const char *gpo_space_param_name(const gpuopt_space *space, int32_t p);
int32_t gpo_space_value_count(const gpuopt_space *space, int32_t p);
/* The value an expression sees: the integer, or an enum's position. */
int64_t gpo_space_value(const gpuopt_space *space, int32_t p, uint32_t k);
/* The value as text: "16", or the enum string (what -DNAME= receives). */
const char *gpo_space_value_text(const gpuopt_space *space, int32_t p, uint32_t k);
int32_t gpo_space_find_param(const gpuopt_space *space, const char *name); /* -1: none */

int32_t gpo_space_size_count(const gpuopt_space *space);
const char *gpo_space_size_name(const gpuopt_space *space, int32_t i);
const int64_t *gpo_space_size_values(const gpuopt_space *space);

/* Binds every variable of `e` to a parameter or size of the space:
 * GPUOPT_ERR_NOT_FOUND naming the first unknown one, in `what` ("geometry
 * global[0]"). This is how the engine compiles its own size expressions. */
gpuopt_status gpo_space_bind(const gpuopt_space *space, gpo_expr *e, const char *what);

/* Evaluates a bound expression for configuration `idx` (GPO_EXPR_OK or
 * GPO_EXPR_UNDEFINED). */
int gpo_space_eval(const gpuopt_space *space, const uint32_t *idx, const gpo_expr *e, int64_t *out);

/* 1 when every index is in range and every constraint holds. */
int gpo_space_is_legal(const gpuopt_space *space, const uint32_t *idx);

/* The raw product of the value counts; -1 (and UINT64_MAX) when it does
 * not fit in 64 bits. */
int gpo_space_raw_size(const gpuopt_space *space, uint64_t *raw);

/* Counts legal configurations, stopping once the count passes `limit` or
 * the walk has taken `max_steps` steps (0: no bound); *exact is 0 when it
 * stopped early (then *count is a lower bound). */
gpuopt_status gpo_space_count_legal(const gpuopt_space *space, uint64_t limit, uint64_t max_steps,
                                    uint64_t *count, int *exact);

/* Canonical description (what the cache keys hash): one line per parameter and
 * constraint, lines sorted, so the order parameters and constraints were
 * added in does not matter; integer values sorted (expressions see their
 * values, and adjacency only steers the search); enum values in their
 * order (expressions see positions); constraints in canonical text;
 * callbacks by id. Sizes' values are left out: they belong to the
 * workload key. */
gpuopt_status gpo_space_canonical(const gpuopt_space *space, char **text);

/* Hash of an index vector, for the search's tables. */
uint64_t gpo_space_idx_hash(const gpuopt_space *space, const uint32_t *idx);

/* ---- lazy walk ---------------------------------------------------------- */

typedef struct gpo_space_iter {
    const gpuopt_space *space;
    uint32_t *idx; /* the current legal configuration after a 1 from next */
    int64_t *vals; /* its values as expressions see them */
    /* private */
    int32_t depth; /* deepest parameter walked (counting stops early) */
    int32_t level; /* parameter being decided */
    int state;     /* the walk's step (space.c) */
    int seeking;   /* keep deeper positions given to seek */
    /* Work bound: walk steps so far, and the most allowed (0: none). A
     * walk past it stops as if done with gave_up set. Constraints are
     * tested when their last parameter is set, so one that reads every
     * parameter prunes nothing and a sparse space can take up to the raw
     * product in steps; bounded callers say "unknown" instead of hanging. */
    uint64_t steps, max_steps;
    int gave_up;
    int32_t *order; /* constraint numbers sorted by depth */
    int32_t *first; /* first[d + 1] .. first[d + 2]: those checked at depth d */
} gpo_space_iter;

/* O(parameters) memory, whatever the size of the space. */
gpuopt_status gpo_space_iter_init(gpo_space_iter *it, const gpuopt_space *space);
/* Positions the walk so the next call returns the first legal
 * configuration at or after `idx` in walk (lexicographic) order. */
void gpo_space_iter_seek(gpo_space_iter *it, const uint32_t *idx);
/* 1: it->idx holds the next legal configuration; 0: the walk is over. */
int gpo_space_iter_next(gpo_space_iter *it);
void gpo_space_iter_free(gpo_space_iter *it);

/* ---- neighbours --------------------------------------------------------- */

enum {
    /* For each parameter and direction, the nearest value whose
     * configuration is legal (skipping illegal ones), not only the
     * adjacent one: divisibility constraints often make the adjacent value
     * illegal, and local search would stall there. */
    GPO_NB_NEAREST_LEGAL = 1,
    /* Also move two parameters one step each (legal results only). */
    GPO_NB_PAIRS = 2
};

/* Upper bound on the neighbours gpo_space_neighbours can return. */
int32_t gpo_space_neighbour_max(const gpuopt_space *space, int flags);
/* Writes up to `max` legal neighbours of `idx`, each a full index vector,
 * into out (max * param_count entries); *n receives the count. */
gpuopt_status gpo_space_neighbours(const gpuopt_space *space, const uint32_t *idx, int flags,
                                   uint32_t *out, int32_t max, int32_t *n);

/* ---- uniform sampling of legal configurations -------------------------- */

typedef struct gpo_sampler gpo_sampler;

gpuopt_status gpo_sampler_create(const gpuopt_space *space, gpo_sampler **out);
void gpo_sampler_destroy(gpo_sampler *sm);
/* Draws a legal configuration into idx: 1, or 0 when none exists. Uniform
 * while rejection or the index serve (space.c, the sampler); the last-resort
 * walk mode is not. */
int gpo_sampler_draw(gpo_sampler *sm, gpo_rng *rng, uint32_t *idx);
/* How draws are served now: "rejection", "index", "walk" (for docs/tests). */
const char *gpo_sampler_mode(const gpo_sampler *sm);
/* Bytes the sampler holds (its index, when built). */
uint64_t gpo_sampler_bytes(const gpo_sampler *sm);

/* ---- points ------------------------------------------------------------- */

/* A point owning a copy of idx and a reference on its space. */
gpuopt_status gpo_point_create(const gpuopt_space *space, const uint32_t *idx, gpuopt_point **out);
void gpo_point_destroy(gpuopt_point *config);

/* A point on the caller's storage that borrows space and idx (for
 * callbacks during a walk): no allocation, nothing to free. */
struct gpuopt_point {
    const gpuopt_space *space;
    const uint32_t *idx;
    int owned;
};
void gpo_point_borrow(gpuopt_point *c, const gpuopt_space *space, const uint32_t *idx);

const gpuopt_space *gpo_point_space(const gpuopt_point *config);
const uint32_t *gpo_point_indices(const gpuopt_point *config);

/* {NAME: value} of a point, as the cache stores it; NULL on allocation
 * failure. */
cJSON *gpo_point_params_json(const gpuopt_point *config);
/* The index vector of stored params in `space`: 0, or -1 when a name or
 * value is unknown or a parameter is missing. Parameters travel by name and
 * value, never by position. */
int gpo_space_params_idx(const gpuopt_space *space, const cJSON *params, uint32_t *idx);

#endif
