/* The OpenCL runtime ops for tier 2 and the tuner (cl_runtime.c). */
#ifndef GPO_CL_RUNTIME_H
#define GPO_CL_RUNTIME_H

#include "backend.h"

extern const gpo_runtime_ops gpo_ocl_runtime_ops;

#endif
