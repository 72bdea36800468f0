/* The OpenCL block of gpuopt_context_diagnose (cl_doctor.c), as gpo_backend.diagnose. */
#ifndef GPO_CL_DOCTOR_H
#define GPO_CL_DOCTOR_H

struct gpo_dr_run;
void gpo_ocl_diagnose(struct gpo_dr_run *run);

#endif
