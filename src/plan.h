/* Plan internals shared by the plan object (plan.c), the tier orchestrator
 * (tiers.c), exports and rules. Rules only use knob.h and the accessors. */
#ifndef GPO_PLAN_H
#define GPO_PLAN_H

#include "config.h"
#include "device.h"
#include "knob.h"
#include "util/log.h"

typedef struct gpo_knob {
    char *name;
    int32_t type;    /* gpuopt_knob_type */
    int64_t ival;    /* bool/int/bytes */
    char *text;      /* value as text */
    int32_t tier;    /* -1: set only by the user */
    int32_t source;  /* gpuopt_knob_source */
    const char *env; /* from the catalogue, static */
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
    /* Free device memory read for this plan (level >= 1), 0 when unknown. */
    uint64_t memory_free;
    /* The workload, when the caller described one. */
    int has_workload;
    gpuopt_workload workload;
};

/* Device memory a rule should size against: free memory when it was read
 * (level >= 1), else the total. *what says which ("free" / "total"). */
uint64_t gpo_plan_device_memory(const struct gpuopt_plan *p, const char **what);

/* What a rule may read of the plan it fills (see also knob.h). */
const gpo_config *gpo_plan_config(const struct gpuopt_plan *p);

/* The catalogue entry of `name` for this plan's device (core catalogue and
 * the catalogues of every backend routing to the device), or NULL. */
const gpo_knob_def *gpo_plan_knob_def(const struct gpuopt_plan *p, const char *name);

/* Catalogue lookup without a plan: core and every registered backend. */
const gpo_knob_def *gpo_knob_def_find(const char *name);

/* Core's own catalogue (src/knobs_core.c). */
extern const gpo_knob_def gpo_core_knobs[];
extern const size_t gpo_n_core_knobs;

/* Plan object lifecycle (plan.c). */
struct gpuopt_plan *gpo_plan_new(struct gpuopt_context *ctx, gpuopt_device *dev, int32_t level);
void gpo_plan_free(struct gpuopt_plan *p);
/* Deep copies of the knob list, to roll a failed tier back. */
gpuopt_status gpo_plan_snapshot(const struct gpuopt_plan *p, gpo_knob **knobs, size_t *n);
void gpo_plan_restore(struct gpuopt_plan *p, gpo_knob *knobs, size_t n);
void gpo_knobs_free(gpo_knob *knobs, size_t n);
gpo_knob *gpo_plan_find(const struct gpuopt_plan *p, const char *name);

/* Parses text as a knob value of `type` into ival/normalised text.
 * Returns 0 or -1 with what is accepted in `why`. */
int gpo_knob_parse(int32_t type, const char *text, int64_t *ival, char **norm, char *why,
                   size_t cap);

#endif
