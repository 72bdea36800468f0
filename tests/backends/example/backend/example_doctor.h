/* The example backend's block of gpuopt_context_diagnose (example_doctor.c). */
#ifndef GPO_EXAMPLE_DOCTOR_H
#define GPO_EXAMPLE_DOCTOR_H

#include "doctor/doctor.h"

/* gpo_backend_example.diagnose. */
void gpo_example_diagnose(gpo_dr_run *run);

#endif
