/* The plan's insides, shared by the plan object (plan.c), the tier
 * orchestrator (tiers.c) and the exports (plan_api.c, apply.c). Rules see
 * only src/rules.h. */
#ifndef GPO_PLAN_H
#define GPO_PLAN_H

#include "config.h"
#include "device.h"
#include "knob.h"
#include "rules.h"
#include "util/log.h"

typedef struct gpo_knob {
    char *name;
    int32_t type;            /* gpuopt_knob_type */
    int64_t ival;            /* bool/int/bytes */
    char *text;              /* value as text */
    int32_t tier;            /* -1: set only by the user */
    int32_t source;          /* gpuopt_knob_source */
    const char *env;         /* from the catalogue, static */
    const gpo_knob_def *def; /* its catalogue entry, static */
    char *reason;
} gpo_knob;

struct gpuopt_plan {
    struct gpuopt_context *ctx;
    gpuopt_device *device;
    const gpo_config *cfg;
    const gpo_logger *log;
    int32_t level_requested;
    int32_t level_applied;
    gpo_knob *knobs;
    size_t n_knobs, cap_knobs;
    char **warnings;
    size_t n_warnings, cap_warnings;
    /* Set by the orchestrator while a tier runs. */
    int32_t cur_tier;
    int32_t cur_source;
    /* Set while src/plan_derive.c computes the derived knobs: the only
     * time anything but a user's override may set one. */
    int deriving;
    /* Free device memory read for this plan (level >= 1), 0 when unknown. */
    uint64_t memory_free;
    /* The workload, when the caller described one. */
    int has_workload;
    gpuopt_workload workload;
    /* Why this device (src/select.h): the selector and the reason. */
    char selection_policy[256];
    char selection_reason[1024];
};

/* The configuration the plan is built under. */
const gpo_config *gpo_plan_config(const struct gpuopt_plan *p);

/* The catalogue entry of `name` for this plan's device (core catalogue and
 * the catalogues of every backend routing to the device), or NULL. */
const gpo_knob_def *gpo_plan_knob_def(const struct gpuopt_plan *p, const char *name);

/* Plan object lifecycle (plan.c). NULL on allocation failure. */
struct gpuopt_plan *gpo_plan_new(struct gpuopt_context *ctx, gpuopt_device *dev, int32_t level);
void gpo_plan_free(struct gpuopt_plan *p);
/* Deep copies of the knob list, to roll a failed tier back. */
gpuopt_status gpo_plan_snapshot(const struct gpuopt_plan *p, gpo_knob **knobs, size_t *n);
void gpo_plan_restore(struct gpuopt_plan *p, gpo_knob *knobs, size_t n);
void gpo_knobs_free(gpo_knob *knobs, size_t n);
gpo_knob *gpo_plan_find(const struct gpuopt_plan *p, const char *name);

/* The derivation phase (plan_derive.c): computes every derived knob of the
 * plan's catalogues from the final values of its inputs, in dependency
 * order, after the user's overrides; a derived knob the user overrode keeps
 * the user's value and its reason says what the derivation gives. */
gpuopt_status gpo_plan_derive(struct gpuopt_plan *p);

#endif
