/* The OpenCL backend as the core sees it: one ops table. */
#include "opencl.h"

static const gpo_library_var ocl_libraries[] = {
    {"opencl", "GPUOPT_OPENCL_LIBRARY"},
};

const gpo_backend gpo_backend_opencl = {
    .abi = GPO_BACKEND_ABI,
    .name = "opencl",
    .description = "OpenCL (ICD loader)",
    .native_gpu = 0,
    /* ICD drivers hold threads and device handles that a fork()ed child
     * does not inherit in a usable state. */
    .fork_sensitive = 1,
    .load = gpo_ocl_load,
    .unload = gpo_ocl_unload,
    .enumerate = gpo_ocl_enumerate,
    .tier0 = gpo_ocl_tier0,
    .tier1 = gpo_ocl_tier1,
    .tier2 = NULL,
    .memory_free = gpo_ocl_memory_free,
    .runtime = &gpo_ocl_runtime_ops,
    .knobs = gpo_ocl_knobs,
    .n_knobs = OCL_N_KNOBS,
    .libraries = ocl_libraries,
    .n_libraries = sizeof ocl_libraries / sizeof ocl_libraries[0],
    .diagnose = gpo_dr_check_opencl,
};
