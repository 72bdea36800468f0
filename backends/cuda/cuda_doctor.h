/* The CUDA backend's checks for gpuopt_context_diagnose (src/doctor/doctor.h). */
#ifndef GPO_CUDA_DOCTOR_H
#define GPO_CUDA_DOCTOR_H

#include "doctor/doctor.h"

/* The CUDA block: gpo_backend_cuda.diagnose. */
void gpo_dr_check_cuda(gpo_dr_run *run);

/* cuda_doctor_lib.c: libcuda found, not the stub, cuInit's answer.
 * `nodes_blocked`: a device node is missing or denied (the likely cause of
 * CUDA_ERROR_NO_DEVICE). */
void gpo_dr_cuda_library(gpo_dr_run *run, const char *kernel_version, int hardware,
                         int nodes_blocked);

/* cuda_doctor_versions.c: the driver against the CUDA runtime it must serve. */
void gpo_dr_check_cuda_versions(gpo_dr_run *run, const char *kernel_version, int hardware);

#endif
