/* Knob catalogue entries and the plan builder used by tier rules.
 *
 * Every knob a rule may set is declared once in a catalogue (core's in
 * src/knobs_core.c, each backend's beside its rules): name, type, the
 * environment variable it exports to, a one-line meaning. Setting a knob
 * that no catalogue declares, or with the wrong type, is an internal error
 * that the tests catch; docs/knobs.md documents every catalogue entry. */
#ifndef GPO_KNOB_H
#define GPO_KNOB_H

#include <stddef.h>
#include <stdint.h>

#include "util/detail.h"
#include "util/log.h"

typedef struct gpo_knob_def {
    const char *name;    /* "launch.block_size" */
    int32_t type;        /* gpuopt_knob_type */
    const char *env;     /* "OMP_NUM_THREADS", or NULL when not an environment knob */
    const char *summary; /* one line: what it means for the user */
} gpo_knob_def;

struct gpuopt_plan;

/* Setters for rules. The tier and source come from the tier being run
 * (the orchestrator sets them); a later tier replaces an earlier value of
 * the same knob. The reason is printf-formatted and must name the fact
 * behind the value. Return GPUOPT_OK, GPUOPT_ERR_NO_MEMORY, or
 * GPUOPT_ERR_INVALID_ARGUMENT for a knob no catalogue declares with that type. */
gpuopt_status gpo_knob_set_bool(struct gpuopt_plan *p, const char *name, int value,
                                const char *reason_fmt, ...) GPO_PRINTF(4, 5);
gpuopt_status gpo_knob_set_int(struct gpuopt_plan *p, const char *name, int64_t value,
                               const char *reason_fmt, ...) GPO_PRINTF(4, 5);
gpuopt_status gpo_knob_set_bytes(struct gpuopt_plan *p, const char *name, uint64_t value,
                                 const char *reason_fmt, ...) GPO_PRINTF(4, 5);
gpuopt_status gpo_knob_set_string(struct gpuopt_plan *p, const char *name, const char *value,
                                  const char *reason_fmt, ...) GPO_PRINTF(4, 5);

/* Removes a knob an earlier tier set (a later tier found it does not apply). */
void gpo_knob_unset(struct gpuopt_plan *p, const char *name);

/* Reads a knob set so far (by an earlier tier, or earlier in this one).
 * Return 1 and fill *value / *text when present, 0 otherwise. */
int gpo_knob_get_int(const struct gpuopt_plan *p, const char *name, int64_t *value);
const char *gpo_knob_get_text(const struct gpuopt_plan *p, const char *name);

/* Adds a warning to the plan (printf-formatted). */
gpuopt_status gpo_plan_warn(struct gpuopt_plan *p, const char *fmt, ...) GPO_PRINTF(2, 3);

/* What a rule may read of the plan it fills, without the plan's insides
 * (plan.h is the core's). */

/* The described workload, or NULL. */
const gpuopt_workload *gpo_plan_workload(const struct gpuopt_plan *p);

/* Whether rules may trade precision for speed: the workload's say when it
 * gave one, else the configuration's reduced_precision. Writes the reason
 * in words ("the workload is precision-sensitive") to why. */
int gpo_plan_reduced_precision(const struct gpuopt_plan *p, char *why, size_t cap);

/* The context's log, for a rule's debug lines. */
const gpo_logger *gpo_plan_log(const struct gpuopt_plan *p);

#endif
