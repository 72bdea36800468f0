/* The ROCm block of gpuopt_context_diagnose (rocm_doctor.c), the ops table's
 * `diagnose`. */
#ifndef GPO_ROCM_DOCTOR_H
#define GPO_ROCM_DOCTOR_H

struct gpo_dr_run;
void gpo_dr_check_rocm(struct gpo_dr_run *run);

#endif
