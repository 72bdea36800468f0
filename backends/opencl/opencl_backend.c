/* The OpenCL backend as the core sees it: one ops table. */
#include "opencl.h"

const gpo_backend gpo_backend_opencl = {
    .abi = GPO_BACKEND_ABI,
    .name = "opencl",
    .description = "OpenCL (ICD loader)",
    .native_gpu = 0,
    /* ICD drivers hold threads and device handles that a fork()ed child
     * does not inherit in a usable state. */
    .fork_sensitive = 1,
    .load = ocl_load,
    .unload = ocl_unload,
    .enumerate = ocl_enumerate,
    .tier0 = ocl_tier0,
    .tier1 = ocl_tier1,
    .tier2 = NULL,
    .memory_free = ocl_memory_free,
    .runtime = &ocl_runtime_ops,
    .knobs = ocl_knobs,
    .n_knobs = OCL_N_KNOBS,
};
