/* The CPU backend's ops table: load reads the host's facts once
 * (cpu_state.c), enumerate turns them into the one device "cpu:0"
 * (cpu_device.c), the rules set the knobs (cpu_rules.c, cpu_tier2.c), and
 * memory_free answers from the load's reading while it is fresh. */
#include <assert.h>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_device.h"
#include "cpu/cpu_rules.h"

static gpuopt_status cpu_enumerate(void *state, const gpo_backend_env *env, gpo_device_list *out)
{
    (void)env;
    assert(state && out);
    gpuopt_device *dev = gpo_device_new();
    if (!dev)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory listing the CPU");
    gpuopt_status st = gpo_cpu_fill_device(gpo_cpu_state_facts(state), dev);
    if (st) {
        gpo_device_free(dev);
        return st;
    }
    return gpo_device_list_push(out, dev);
}

const gpo_backend gpo_backend_cpu = {
    .abi = GPO_BACKEND_ABI,
    .name = "cpu",
    .description = "host CPU",
    .native_gpu = 0,
    .fork_sensitive = 0,
    .load = gpo_cpu_state_load,
    .unload = gpo_cpu_state_unload,
    .enumerate = cpu_enumerate,
    .tier0 = gpo_cpu_tier0,
    .tier1 = gpo_cpu_tier1,
    .tier2 = gpo_cpu_tier2,
    .memory_free = gpo_cpu_state_memory_free,
    .runtime = NULL,
    .knobs = gpo_cpu_knobs,
    .n_knobs = GPO_CPU_N_KNOBS,
};
