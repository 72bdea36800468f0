/* The OpenCL backend as the core sees it: one ops table, with what the
 * backend declares (its library variable and its knob catalogue) beside
 * it. The layers below point one way: load (the ICD loader) < probe (one
 * device's facts) < device (records) < rules, runtime, doctor. */
#include <assert.h>
#include <string.h>

#include "cl_device.h"
#include "cl_doctor.h"
#include "cl_rules.h"
#include "cl_runtime.h"

static const gpo_library_var ocl_libraries[] = {
    {"opencl", "GPUOPT_OPENCL_LIBRARY"},
};

/* The knobs the rules (cl_rules.c) set; documented in docs/knobs.md. */
static const gpo_knob_def ocl_knobs[] = {
    {.name = "opencl.platform",
     .type = GPUOPT_KNOB_STRING,
     .summary = "the OpenCL platform (CL_PLATFORM_NAME) to create the context on for this device",
     .maps_to = "clGetPlatformIDs: the platform whose CL_PLATFORM_NAME this is"},
    {.name = "opencl.build_options",
     .type = GPUOPT_KNOB_STRING,
     .summary = "options to pass to clBuildProgram for this device",
     .maps_to = "clBuildProgram options; gpuopt_plan_to_build_options"},
    /* Local memory per work-group: OpenCL 3.0 guarantees 32 KiB on a full
     * profile device (CL_DEVICE_LOCAL_MEM_SIZE); CPU devices emulate it in
     * global memory, so 1 GiB bounds typos, not devices. */
    {.name = "opencl.local_mem_tile_bytes",
     .type = GPUOPT_KNOB_BYTES,
     .summary = "local memory one work-group's tile should use",
     .min = 1,
     .max = INT64_C(1) << 30,
     .maps_to = "__local tile size of your kernels"},
};

/* Free memory through the runtime, where the device reports it (AMD's
 * cl_amd_device_attribute_query); no context is created for it. */
static gpuopt_status ocl_memory_live(void *state, const gpo_route *route, uint32_t flags,
                                     gpo_memory_reading *out)
{
    const ocl_state *st = state;
    (void)flags;
    assert(st && route && route->priv && out);
    const ocl_dev_priv *p = route->priv;
    memset(out, 0, sizeof *out);
    uint64_t free_bytes = 0;
    gpuopt_status s = gpo_ocl_facts_free_memory(&st->api, &p->facts, &free_bytes);
    if (s)
        return s;
    out->total = route->info.memory_bytes;
    out->free = free_bytes;
    out->used = out->total > free_bytes ? out->total - free_bytes : 0;
    out->source = GPUOPT_MEMORY_SOURCE_RUNTIME;
    out->read_ns = gpo_now_ns();
    gpo_strlcpy(out->source_text, "OpenCL CL_DEVICE_GLOBAL_FREE_MEMORY_AMD",
                sizeof out->source_text);
    return GPUOPT_OK;
}

const gpo_backend gpo_backend_opencl = {
    .abi = GPO_BACKEND_ABI,
    .name = "opencl",
    .description = "OpenCL (ICD loader)",
    /* ICD drivers hold threads and device handles that a fork()ed child
     * does not inherit in a usable state. */
    .fork_sensitive = 1,
    .load = gpo_ocl_load,
    .unload = gpo_ocl_unload,
    .enumerate = gpo_ocl_enumerate,
    .tier0 = gpo_ocl_tier0,
    .tier1 = gpo_ocl_tier1,
    .memory_live = ocl_memory_live,
    .runtime = &gpo_ocl_runtime_ops,
    GPO_BACKEND_TABLE(knobs, ocl_knobs),
    GPO_BACKEND_TABLE(libraries, ocl_libraries),
    .diagnose = gpo_ocl_diagnose,
};
