/* The doctor's answer as the JSON document of docs/doctor.md
 * (doctor_json.c). */
#ifndef GPO_DOCTOR_JSON_H
#define GPO_DOCTOR_JSON_H

#include "context.h"
#include "doctor/doctor.h"

/* The run's findings and facts, and the context's usable accelerators.
 * *json is malloc'd; GPUOPT_ERR_NO_MEMORY leaves it untouched. */
gpuopt_status gpo_dr_to_json(const gpo_dr_run *run, const struct gpuopt_context *ctx, char **json);

#endif
