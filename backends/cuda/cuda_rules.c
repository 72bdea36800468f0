/* The CUDA knob catalogue, tier 0 (safe on every CUDA GPU, reads no fact),
 * and tier 1's entry point: it gathers the facts (device record,
 * details.cuda, driver version, workload, memory), sets the launch knobs,
 * and runs the math and memory rules. docs/knobs.md ("CUDA backend")
 * documents each knob, its rule and the rule's source. */
#include <string.h>

#include "cuda_rules.h"
#include "plan.h"
#include "util/strutil.h"

const gpo_knob_def gpo_cuda_knobs[GPO_CUDA_N_KNOBS] = {
    {"cuda.module_loading", GPUOPT_KNOB_STRING, "CUDA_MODULE_LOADING",
     "when CUDA loads a program's kernels: LAZY (on first use) or EAGER (all at start)"},
    {"cuda.cudnn_benchmark", GPUOPT_KNOB_BOOL, NULL,
     "let cuDNN time its algorithms once per input shape and keep the fastest"},
    {"cuda.tf32", GPUOPT_KNOB_BOOL, NULL,
     "allow TF32 tensor-core math for fp32 matrix multiplications and convolutions"},
    {"cuda.tf32_override", GPUOPT_KNOB_STRING, "NVIDIA_TF32_OVERRIDE",
     "0 keeps cuBLAS and cuDNN from using TF32 whatever the program asks"},
    {"cuda.bf16", GPUOPT_KNOB_BOOL, NULL, "bfloat16 tensor-core math may be used"},
    {"cuda.fp8", GPUOPT_KNOB_BOOL, NULL, "FP8 (E4M3/E5M2) tensor-core math may be used"},
    {"cuda.autocast_dtype", GPUOPT_KNOB_STRING, NULL,
     "the reduced precision for mixed-precision math: bfloat16, float16, or float32 (none)"},
    {"cuda.dim_multiple", GPUOPT_KNOB_INT, NULL,
     "make matrix dimensions multiples of this many elements (the plan's precision)"},
    {"cuda.dim_multiples", GPUOPT_KNOB_STRING, NULL,
     "dimension multiple in elements for each tensor-core type of the GPU (type:elements,...)"},
    {"cuda.cublas_workspace_bytes", GPUOPT_KNOB_BYTES, NULL,
     "cuBLAS/cuBLASLt workspace per handle (cublasSetWorkspace)"},
    {"cuda.cublaslt_workspace_kib", GPUOPT_KNOB_INT, "CUBLASLT_WORKSPACE_SIZE",
     "the same workspace in KiB, as PyTorch reads it"},
    {"cuda.cublas_workspace_config", GPUOPT_KNOB_STRING, "CUBLAS_WORKSPACE_CONFIG",
     "cuBLAS workspace buffers (:KiB:count) for reproducible results across streams"},
    {"cuda.l2_persisting_bytes", GPUOPT_KNOB_BYTES, NULL,
     "L2 set aside for persisting accesses (cudaLimitPersistingL2CacheSize)"},
    {"cuda.alloc.expandable_segments", GPUOPT_KNOB_BOOL, NULL,
     "PyTorch's caching allocator grows segments in place (virtual memory) instead of "
     "allocating new ones"},
    {"cuda.alloc.max_split_mb", GPUOPT_KNOB_INT, NULL,
     "PyTorch's caching allocator never splits cached blocks larger than this (MiB)"},
    {"cuda.alloc.gc_threshold_percent", GPUOPT_KNOB_INT, NULL,
     "PyTorch's caching allocator reclaims unused cached blocks above this share of memory"},
    {"cuda.alloc_conf", GPUOPT_KNOB_STRING, "PYTORCH_CUDA_ALLOC_CONF",
     "the three allocator settings above as PyTorch reads them"},
};

/* ---- tier 0: no fact read ------------------------------------------------------ */

gpuopt_status gpo_cuda_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan)
{
    (void)state;
    (void)route;
    if (!dev || !plan)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda tier 0: NULL %s",
                        dev ? "plan" : "device");
    gpuopt_status st = gpo_knob_set_int(
        plan, "launch.block_multiple", 32,
        "every NVIDIA GPU schedules threads in warps of 32 (CUDA C++ Programming Guide, technical "
        "specifications per compute capability)");
    if (!st)
        st = gpo_knob_set_int(plan, "launch.block_size", 256,
                              "8 warps: in the 128-256 range the CUDA C++ Best Practices Guide "
                              "suggests to start from (\"Thread and Block Heuristics\"), and "
                              "within every GPU's 1024-thread block limit");
    if (!st)
        st = gpo_knob_set_string(plan, "cuda.module_loading", "LAZY",
                                 "load each kernel when first used: faster start and less device "
                                 "memory; drivers since CUDA 11.7 honour it and 12.2 made it the "
                                 "default, older ones ignore it (CUDA C++ Programming Guide, "
                                 "\"Lazy Loading\")");
    if (!st)
        st = gpo_knob_set_bool(plan, "cuda.cudnn_benchmark", 0,
                               "tier 0 knows no workload: cuDNN's heuristics choose algorithms "
                               "without timing them (PyTorch's default)");
    if (!st)
        st = gpo_knob_set_bool(plan, "cuda.tf32", 0,
                               "tier 0 reads neither the GPU's capability nor the precision "
                               "policy: full fp32");
    if (!st)
        st = gpo_knob_set_bool(plan, "cuda.bf16", 0,
                               "tier 0 reads neither the GPU's capability nor the precision "
                               "policy: no bfloat16");
    if (!st)
        st = gpo_knob_set_bool(plan, "cuda.fp8", 0,
                               "tier 0 reads neither the GPU's capability nor the workload: no "
                               "FP8");
    if (!st)
        st = gpo_knob_set_string(plan, "cuda.autocast_dtype", "float32",
                                 "tier 0 reads no precision policy: no mixed precision");
    if (!st)
        st = gpo_knob_set_int(plan, "cuda.dim_multiple", 8,
                              "multiples of 8 elements suit fp16 tensor cores on every GPU that "
                              "has them (NVIDIA Deep Learning Performance Guide, \"Tensor Core "
                              "Requirements\") and keep fp32 rows 32-byte aligned");
    return st;
}

/* ---- tier 1 ------------------------------------------------------------------------ */

void gpo_cuda_cc_text(const cuda_facts *f, char *out, size_t cap)
{
    gpo_snprintf(out, cap, "%d.%d", f->cc_major, f->cc_minor);
}

void gpo_cuda_memory_text(const cuda_facts *f, char *out, size_t cap)
{
    char bytes[32];
    gpo_format_bytes(f->memory, bytes, sizeof bytes);
    gpo_snprintf(out, cap, "%s %s", bytes, f->memory_what);
}

static int64_t detail_int(const gpuopt_device *dev, const char *key)
{
    const cJSON *d = dev->details ? cJSON_GetObjectItem(dev->details, "cuda") : NULL;
    const cJSON *v = d ? cJSON_GetObjectItem(d, key) : NULL;
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? 1 : 0;
    return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

static gpuopt_status gather(const gpo_cuda_state *s, const gpuopt_device *dev,
                            struct gpuopt_plan *plan, cuda_facts *f)
{
    memset(f, 0, sizeof *f);
    const gpuopt_device_info *in = &dev->info;
    if (in->cc_major < 1 || !(in->features_known & GPUOPT_FEATURE_TF32))
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the driver did not give its compute capability%s%s: rules on "
                        "detected hardware need it",
                        in->id, s && s->kernel_only ? " (" : "",
                        s && s->kernel_only ? "the CUDA driver library is not usable)" : "");
    f->dev = dev;
    f->cc_major = in->cc_major;
    f->cc_minor = in->cc_minor;
    f->arch = in->cc_major * 10 + in->cc_minor;
    f->features = in->features;
    f->warp = in->simd_width > 0 ? in->simd_width : -1;
    f->max_threads_block = in->max_threads_per_block;
    f->max_threads_sm = (int)detail_int(dev, "max_threads_per_multiprocessor");
    f->max_blocks_sm = (int)detail_int(dev, "max_blocks_per_multiprocessor");
    f->l2_bytes = in->l2_bytes ? (int64_t)in->l2_bytes : -1;
    f->persisting_l2_max = detail_int(dev, "max_persisting_l2_bytes");
    f->vmm = (int)detail_int(dev, "virtual_memory_management");
    f->mps = (int)detail_int(dev, "mps_enabled");
    f->driver_version = s ? s->driver_version : -1;
    f->memory = gpo_plan_device_memory(plan, &f->memory_what);
    f->workload = gpo_plan_workload(plan);
    f->reduced = gpo_plan_reduced_precision(plan, f->reduced_why, sizeof f->reduced_why);
    return GPUOPT_OK;
}

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
    if (!dev || !plan)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda tier 1: NULL %s",
                        dev ? "plan" : "device");
    gpuopt_status st = gather(state, dev, plan, &f);
    if (!st)
        st = set_launch(&f, plan);
    if (!st)
        st = gpo_cuda_rules_math(&f, plan);
    if (!st)
        st = gpo_cuda_rules_memory(&f, plan);
    return st;
}
