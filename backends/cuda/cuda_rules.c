/* Tier 0 (safe on every CUDA GPU, reads no fact), and tier 1's entry
 * point: it reads the facts (device record, details.cuda, driver version,
 * workload, memory), sets the launch knobs, and runs the math and memory
 * rules. The derived knobs (the autocast type, the dimension multiple, the
 * environment strings) follow after the user's overrides. The knobs are
 * declared in cuda_backend.c's catalogue; docs/knobs.md ("CUDA backend")
 * documents each, its rule and the rule's source. */
#include <assert.h>

#include "cuda_backend.h"
#include "cuda_rules.h"

/* ---- tier 0: no fact read ------------------------------------------------------ */

gpuopt_status gpo_cuda_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan)
{
    (void)state;
    (void)route;
    (void)dev; /* tier 0 reads no fact */
    assert(plan);
    gpuopt_status st = gpo_knob_set_int(
        plan, "launch.block_multiple", 32,
        "every NVIDIA GPU schedules threads in warps of 32 (CUDA C++ Programming Guide, technical "
        "specifications per compute capability)");
    if (!st)
        st = gpo_knob_set_int(plan, "launch.block_size", 256,
                              "8 warps: in the 128-256 range the CUDA C++ Best Practices Guide "
                              "suggests to start from (\"Thread and Block Heuristics\"), and "
                              "within every GPU's 1024-thread block limit");
    const gpuopt_workload *w = gpo_plan_workload(plan);
    if (!st && w && w->objective == GPUOPT_OBJECTIVE_LATENCY)
        st = gpo_cuda_latency_loading(plan, -1); /* tier 0 reads no driver version */
    else if (!st)
        st = gpo_knob_set_string(plan, "cuda.module_loading", "LAZY",
                                 "load each kernel when first used: faster start and less device "
                                 "memory%s; drivers since CUDA 11.7 honour it and 12.2 made it the "
                                 "default, older ones ignore it (CUDA C++ Programming Guide, "
                                 "\"Lazy Loading\")",
                                 w ? ", and a throughput workload amortises each kernel's first "
                                     "use over many calls"
                                   : "");
    if (!st)
        st = gpo_knob_set_bool(plan, "cuda.cudnn_benchmark", 0,
                               "tier 0 knows no workload: cuDNN's heuristics choose algorithms "
                               "without timing them (PyTorch's default)");
    if (!st)
        st = gpo_cuda_tier0_tf32(plan);
    if (!st)
        st = gpo_knob_set_bool(plan, "cuda.bf16", 0,
                               "tier 0 reads neither the GPU's capability nor the precision "
                               "policy: no bfloat16");
    if (!st)
        st = gpo_knob_set_bool(plan, "cuda.fp8", 0,
                               "tier 0 reads neither the GPU's capability nor the workload: no "
                               "FP8");
    return st;
}

/* ---- tier 1 ------------------------------------------------------------------------ */

/* The largest-occupancy block near 256 threads: a multiple of the warp that
 * divides the threads an SM holds into at most its resident-block limit, so
 * whole blocks fill the SM (CUDA C++ Best Practices Guide, "Occupancy" and
 * "Thread and Block Heuristics"). Candidates nearest 256 first. */
static gpuopt_status set_launch(const cuda_facts *f, struct gpuopt_plan *plan)
{
    static const int candidates[] = {256, 192, 320, 128, 384, 512};
    gpuopt_status st;
    if (f->warp > 0) {
        st = gpo_knob_set_int(plan, "launch.block_multiple", f->warp,
                              "warp size %d (CU_DEVICE_ATTRIBUTE_WARP_SIZE)", f->warp);
        if (st)
            return st;
    }
    int warp = f->warp > 0 ? f->warp : 32;
    if (f->max_threads_sm <= 0 || f->max_blocks_sm <= 0 || f->max_threads_block <= 0)
        return GPUOPT_OK; /* tier 0's 256 stands */
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        int b = candidates[i];
        if (b % warp || b > f->max_threads_block || f->max_threads_sm % b ||
            f->max_threads_sm / b > f->max_blocks_sm)
            continue;
        return gpo_knob_set_int(plan, "launch.block_size", b,
                                "%d threads = %d warps of %d; %d threads per SM / %d = %d "
                                "resident blocks, within the SM's %d: whole blocks can fill the "
                                "SM (registers and shared memory permitting)",
                                b, b / warp, warp, f->max_threads_sm, b, f->max_threads_sm / b,
                                f->max_blocks_sm);
    }
    return GPUOPT_OK;
}

gpuopt_status gpo_cuda_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan)
{
    cuda_facts f;
    (void)route;
    assert(dev && plan);
    gpuopt_status st = gpo_cuda_facts_read(state, dev, plan, &f);
    if (!st)
        st = set_launch(&f, plan);
    if (!st)
        st = gpo_cuda_rules_math(&f, plan);
    if (!st)
        st = gpo_cuda_rules_memory(&f, plan);
    return st;
}
