/* The space's private layout, shared by space*.c only. */
#ifndef GPO_TUNE_SPACE_IMPL_H
#define GPO_TUNE_SPACE_IMPL_H

#include <stdatomic.h>

#include "tune/space.h"

typedef struct gpo_param {
    char *name;
    int32_t kind;
    int32_t count;
    int64_t *values; /* integers, or positions 0..count-1 for enums */
    char **text;     /* each value as text */
} gpo_param;

typedef struct gpo_constraint {
    gpo_expr *expr; /* NULL for a callback */
    gpuopt_constraint_fn fn;
    void *user;
    char *id;
    int32_t depth; /* last parameter the expression reads; -1: sizes only */
} gpo_constraint;

struct gpuopt_space {
    atomic_int refs;
    gpo_param *params;
    int32_t nparams;
    char **size_names;
    int64_t *size_values;
    int32_t nsizes;
    gpo_constraint *cons;
    int32_t ncons;
};

/* The depth at which constraint c can be checked in a space of its current
 * parameter count: callbacks may read anything, so they wait for the last. */
static inline int32_t gpo_constraint_depth(const gpuopt_space *s, const gpo_constraint *c)
{
    return c->expr ? c->depth : s->nparams - 1;
}

/* Checks constraint c against values `vals` (and the index vector, for
 * callbacks): 1 legal, 0 not (undefined counts as not). */
int gpo_constraint_holds(const gpuopt_space *s, const gpo_constraint *c, const uint32_t *idx,
                         const int64_t *vals);

/* The deepest level any constraint needs; -1 when only sizes are tested. */
int32_t gpo_space_last_constrained(const gpuopt_space *s);

/* Sizes-only constraints hold. */
int gpo_space_sizes_hold(const gpuopt_space *s);

gpuopt_status gpo_space_iter_init_depth(gpo_space_iter *it, const gpuopt_space *space,
                                        int32_t depth);

#endif
