/* The CUDA backend's ops table: the only thing the core sees of it. */
#include "cuda_doctor.h"
#include "cuda_internal.h"

static gpuopt_status cuda_enumerate(void *state, const gpo_backend_env *env, gpo_device_list *out)
{
    gpo_cuda_state *s = state;
    if (!s || !env || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "cuda: enumerate needs the loaded state, the environment and a list");
    if (s->kernel_only)
        return gpo_cuda_enumerate_kernel(s, env, out);
    return gpo_cuda_enumerate_driver(s, env, out);
}

static const gpo_library_var cuda_libraries[] = {
    {"cuda", "GPUOPT_CUDA_LIBRARY"},
    {"nvrtc", "GPUOPT_NVRTC_LIBRARY"},
};

const gpo_backend gpo_backend_cuda = {
    .abi = GPO_BACKEND_ABI,
    .name = "cuda",
    .description = "NVIDIA CUDA driver API (libcuda.so.1)",
    .native_gpu = 1,
    .fork_sensitive = 1,
    .load = gpo_cuda_load,
    .unload = gpo_cuda_unload,
    .enumerate = cuda_enumerate,
    .tier0 = gpo_cuda_tier0,
    .tier1 = gpo_cuda_tier1,
    /* Measured settings come from the core's tier 2 through the runtime. */
    .tier2 = NULL,
    .memory_free = gpo_cuda_memory_free,
    .runtime = &gpo_cuda_runtime_ops,
    .apply_device = gpo_cuda_apply_device,
    .knobs = gpo_cuda_knobs,
    .n_knobs = GPO_CUDA_N_KNOBS,
    .libraries = cuda_libraries,
    .n_libraries = sizeof cuda_libraries / sizeof cuda_libraries[0],
    .diagnose = gpo_dr_check_cuda,
};
