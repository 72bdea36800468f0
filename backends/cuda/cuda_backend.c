/* The CUDA backend's ops table and what it declares: the vendor libraries
 * whose paths the user may choose, and the knob catalogue its rules
 * (cuda_rules.c and below) set. docs/knobs.md ("CUDA backend") documents
 * each knob, its rule and the rule's source. */
#include "cuda_backend.h"

#include "cuda_load.h"

static const gpo_knob_def cuda_knobs[] = {
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
    .enumerate = gpo_cuda_enumerate,
    .tier0 = gpo_cuda_tier0,
    .tier1 = gpo_cuda_tier1,
    /* Measured settings come from the core's tier 2 through the runtime. */
    .tier2 = NULL,
    .memory_free = gpo_cuda_memory_free,
    .runtime = &gpo_cuda_runtime_ops,
    .apply_device = gpo_cuda_apply_device,
    .knobs = cuda_knobs,
    .n_knobs = sizeof cuda_knobs / sizeof cuda_knobs[0],
    .libraries = cuda_libraries,
    .n_libraries = sizeof cuda_libraries / sizeof cuda_libraries[0],
    .diagnose = gpo_cuda_diagnose,
};
