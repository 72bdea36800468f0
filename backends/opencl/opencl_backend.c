/* The OpenCL backend as the core sees it: one ops table, with what the
 * backend declares (its library variable and its knob catalogue) beside
 * it. The layers below point one way: load (the ICD loader) < probe (one
 * device's facts) < device (records) < rules, runtime, doctor. */
#include <assert.h>

#include "cl_device.h"
#include "cl_doctor.h"
#include "cl_rules.h"
#include "cl_runtime.h"

static const gpo_library_var ocl_libraries[] = {
    {"opencl", "GPUOPT_OPENCL_LIBRARY"},
};

/* The knobs the rules (cl_rules.c) set; documented in docs/knobs.md. */
static const gpo_knob_def ocl_knobs[] = {
    {"opencl.platform", GPUOPT_KNOB_STRING, NULL,
     "the OpenCL platform (CL_PLATFORM_NAME) to create the context on for this device"},
    {"opencl.build_options", GPUOPT_KNOB_STRING, NULL,
     "options to pass to clBuildProgram for this device"},
    {"opencl.local_mem_tile_bytes", GPUOPT_KNOB_BYTES, NULL,
     "local memory one work-group's tile should use"},
};

static gpuopt_status ocl_memory_free(void *state, const gpo_route *route, uint64_t *free_bytes)
{
    const ocl_state *st = state;
    assert(st && route && route->priv);
    const ocl_dev_priv *p = route->priv;
    return gpo_ocl_facts_free_memory(&st->api, &p->facts, free_bytes);
}

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
    .memory_free = ocl_memory_free,
    .runtime = &gpo_ocl_runtime_ops,
    .knobs = ocl_knobs,
    .n_knobs = sizeof ocl_knobs / sizeof ocl_knobs[0],
    .libraries = ocl_libraries,
    .n_libraries = sizeof ocl_libraries / sizeof ocl_libraries[0],
    .diagnose = gpo_ocl_diagnose,
};
