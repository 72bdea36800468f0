/* What a tier rule may do to the plan it fills, and read of it: the whole
 * of the plan a backend's rules see (backend.h includes this header; the
 * plan's insides are src/plan.h, the core's own). Implemented by plan.c.
 *
 * Setting a knob that no catalogue declares (src/knob.h), or with another
 * type, is a bug in a rule: the setters refuse it, and the backends' tests
 * catch it. */
#ifndef GPO_RULES_H
#define GPO_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "knob.h"
#include "util/detail.h"
#include "util/log.h"

struct gpuopt_plan;

/* Setters. The tier and source come from the tier being run (the
 * orchestrator sets them); a later tier replaces an earlier value of the
 * same knob. The reason is printf-formatted and must name the fact behind
 * the value. Return GPUOPT_OK, GPUOPT_ERR_NO_MEMORY, or
 * GPUOPT_ERR_INVALID_ARGUMENT for a knob no catalogue declares with that
 * type. */
gpuopt_status gpo_knob_set_bool(struct gpuopt_plan *p, const char *name, int value,
                                const char *reason_fmt, ...) GPO_PRINTF(4, 5);
gpuopt_status gpo_knob_set_int(struct gpuopt_plan *p, const char *name, int64_t value,
                               const char *reason_fmt, ...) GPO_PRINTF(4, 5);
gpuopt_status gpo_knob_set_bytes(struct gpuopt_plan *p, const char *name, uint64_t value,
                                 const char *reason_fmt, ...) GPO_PRINTF(4, 5);
/* `value` must not be NULL. */
gpuopt_status gpo_knob_set_string(struct gpuopt_plan *p, const char *name, const char *value,
                                  const char *reason_fmt, ...) GPO_PRINTF(4, 5);

/* Removes a knob an earlier tier set (a later tier found it does not apply). */
void gpo_knob_unset(struct gpuopt_plan *p, const char *name);

/* Reads a knob set so far (by an earlier tier, or earlier in this one).
 * Return 1 and fill *value / the text when present, 0 / NULL otherwise. */
int gpo_knob_get_int(const struct gpuopt_plan *p, const char *name, int64_t *value);
const char *gpo_knob_get_text(const struct gpuopt_plan *p, const char *name);

/* Adds a warning to the plan (printf-formatted). */
gpuopt_status gpo_plan_warn(struct gpuopt_plan *p, const char *fmt, ...) GPO_PRINTF(2, 3);

/* The described workload, or NULL. */
const gpuopt_workload *gpo_plan_workload(const struct gpuopt_plan *p);

/* Whether rules may trade precision for speed: the workload's say when it
 * gave one, else the configuration's reduced_precision. Writes the reason
 * in words ("the workload is precision-sensitive") to why. */
int gpo_plan_reduced_precision(const struct gpuopt_plan *p, char *why, size_t cap);

/* Device memory a rule should size against: free memory when it was read
 * (level >= 1), else the total. *what says which ("free" / "total"). */
uint64_t gpo_plan_device_memory(const struct gpuopt_plan *p, const char **what);

/* The level the plan reached so far (-1 before tier 0 succeeded): a device
 * setting applied from a plan says which tier it trusts. */
int32_t gpo_plan_level_applied(const struct gpuopt_plan *p);

/* The device the plan is for. */
const gpuopt_device *gpo_plan_device(const struct gpuopt_plan *p);

/* The context's log. */
const gpo_logger *gpo_plan_log(const struct gpuopt_plan *p);

#endif
