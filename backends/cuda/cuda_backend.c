/* The CUDA backend's ops table and what it declares: the vendor libraries
 * whose paths the user may choose, and the knob catalogue its rules
 * (cuda_rules.c and below) set. docs/knobs.md ("CUDA backend") documents
 * each knob, its rule and the rule's source. */
#include "cuda_backend.h"

#include "cuda_load.h"
#include "cuda_rules.h"

/* Domains: the allocator's limits are PyTorch's (c10/cuda/
 * CUDACachingAllocator.cpp: max_split_size_mb must exceed 20,
 * garbage_collection_threshold lies strictly between 0 and 1); the two
 * reproducible cuBLAS configurations are the ones cuBLAS documents
 * ("Results reproducibility") and PyTorch accepts; the override variables
 * take the one value that has an effect (NVIDIA_TF32_OVERRIDE=0, cuDNN
 * cudnnMathType_t; TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, PyTorch
 * aten/src/ATen/Context.cpp reads only "1"). Workspaces and the L2
 * set-aside stop at 1 GiB, far above any recommendation (cuBLAS: 32 MiB
 * on Hopper) or L2 (126 MiB on B200). */
static const gpo_knob_def cuda_knobs[] = {
    {.name = "cuda.module_loading",
     .type = GPUOPT_KNOB_STRING,
     .env = "CUDA_MODULE_LOADING",
     .summary = "when CUDA loads a program's kernels: LAZY (on first use) or EAGER (all at start)",
     .words = GPO_WORDS("LAZY", "EAGER"),
     .maps_to = "CUDA_MODULE_LOADING (read by the CUDA driver)"},
    {.name = "cuda.cudnn_benchmark",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "let cuDNN time its algorithms once per input shape and keep the fastest",
     .maps_to = "torch.backends.cudnn.benchmark"},
    {.name = "cuda.tf32",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "allow TF32 tensor-core math for fp32 matrix multiplications and convolutions",
     .maps_to = "torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32 "
                "(PyTorch), tf.config.experimental.enable_tensor_float_32_execution "
                "(TensorFlow)"},
    {.name = "cuda.tf32_override",
     .type = GPUOPT_KNOB_STRING,
     .env = "NVIDIA_TF32_OVERRIDE",
     .summary = "0 keeps cuBLAS and cuDNN from using TF32 whatever the program asks",
     .words = GPO_WORDS("0"),
     .maps_to = "NVIDIA_TF32_OVERRIDE (read by cuBLAS and cuDNN)",
     .inputs = GPO_WORDS("cuda.tf32"),
     .derive = gpo_cuda_derive_tf32_override},
    {.name = "cuda.torch_tf32_override",
     .type = GPUOPT_KNOB_STRING,
     .env = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
     .summary = "1 makes PyTorch allow TF32 for fp32 matrix multiplications",
     .words = GPO_WORDS("1"),
     .maps_to = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE (read by PyTorch at start)",
     .inputs = GPO_WORDS("cuda.tf32"),
     .derive = gpo_cuda_derive_torch_tf32_override},
    {.name = "cuda.bf16",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "bfloat16 tensor-core math may be used",
     .maps_to = "torch.autocast(dtype=torch.bfloat16), model.to(torch.bfloat16)"},
    {.name = "cuda.fp8",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "FP8 (E4M3/E5M2) tensor-core math may be used",
     .maps_to = "Transformer Engine fp8_autocast, torch._scaled_mm"},
    {.name = "cuda.autocast_dtype",
     .type = GPUOPT_KNOB_STRING,
     .summary = "the reduced precision for mixed-precision math: bfloat16, float16, or float32 "
                "(none)",
     .words = GPO_WORDS("bfloat16", "float16", "float32"),
     .maps_to = "torch.autocast(\"cuda\", dtype=...)",
     .inputs = GPO_WORDS("cuda.bf16"),
     .derive = gpo_cuda_derive_autocast_dtype},
    {.name = "cuda.dim_multiple",
     .type = GPUOPT_KNOB_INT,
     .summary = "make matrix dimensions multiples of this many elements (the plan's precision)",
     .min = 1,
     .max = 256,
     .units = "elements",
     .maps_to = "pad GEMM M, N, K and channels (pad_to_multiple_of, vocabulary padding)",
     .inputs = GPO_WORDS("cuda.fp8", "cuda.autocast_dtype", "cuda.tf32"),
     .derive = gpo_cuda_derive_dim_multiple},
    {.name = "cuda.dim_multiples",
     .type = GPUOPT_KNOB_STRING,
     .summary = "dimension multiple in elements for each tensor-core type of the GPU "
                "(type:elements,...)",
     .form = gpo_cuda_dim_list_ok,
     .form_text = "a list of type:elements, such as fp16:64,bf16:64,tf32:32",
     .maps_to = "per-layer padding for programs that choose their precision per layer"},
    {.name = "cuda.cublas_workspace_bytes",
     .type = GPUOPT_KNOB_BYTES,
     .summary = "cuBLAS/cuBLASLt workspace per handle (cublasSetWorkspace)",
     .min = 1024,
     .max = INT64_C(1) << 30,
     .step = 1024,
     .maps_to = "cublasSetWorkspace, cublasLtMatmul workspaceSizeInBytes"},
    {.name = "cuda.cublaslt_workspace_kib",
     .type = GPUOPT_KNOB_INT,
     .env = "CUBLASLT_WORKSPACE_SIZE",
     .summary = "the same workspace in KiB, as PyTorch reads it",
     .min = 1,
     .max = 1048576,
     .units = "KiB",
     .maps_to = "CUBLASLT_WORKSPACE_SIZE (read by PyTorch)",
     .inputs = GPO_WORDS("cuda.cublas_workspace_bytes"),
     .derive = gpo_cuda_derive_cublaslt_kib},
    {.name = "cuda.cublas_workspace_config",
     .type = GPUOPT_KNOB_STRING,
     .env = "CUBLAS_WORKSPACE_CONFIG",
     .summary = "cuBLAS workspace buffers (:KiB:count) for reproducible results across streams",
     .words = GPO_WORDS(":4096:8", ":16:8"),
     .maps_to = "CUBLAS_WORKSPACE_CONFIG; torch.use_deterministic_algorithms(True) needs it"},
    {.name = "cuda.l2_persisting_bytes",
     .type = GPUOPT_KNOB_BYTES,
     .summary = "L2 set aside for persisting accesses (cudaLimitPersistingL2CacheSize)",
     .min = 1,
     .max = INT64_C(1) << 30,
     .maps_to = "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize); applied by "
                "gpuopt_plan_apply(GPUOPT_APPLY_DEVICE)"},
    {.name = "cuda.alloc.expandable_segments",
     .type = GPUOPT_KNOB_BOOL,
     .summary = "PyTorch's caching allocator grows segments in place (virtual memory) instead of "
                "allocating new ones",
     .maps_to = "PYTORCH_CUDA_ALLOC_CONF expandable_segments"},
    {.name = "cuda.alloc.max_split_mb",
     .type = GPUOPT_KNOB_INT,
     .summary = "PyTorch's caching allocator never splits cached blocks larger than this (MiB)",
     .min = 21,
     .max = 1048576,
     .units = "MiB",
     .maps_to = "PYTORCH_CUDA_ALLOC_CONF max_split_size_mb"},
    {.name = "cuda.alloc.gc_threshold_percent",
     .type = GPUOPT_KNOB_INT,
     .summary = "PyTorch's caching allocator reclaims unused cached blocks above this share of "
                "memory",
     .min = 1,
     .max = 99,
     .units = "percent",
     .maps_to = "PYTORCH_CUDA_ALLOC_CONF garbage_collection_threshold"},
    {.name = "cuda.alloc_conf",
     .type = GPUOPT_KNOB_STRING,
     .env = "PYTORCH_CUDA_ALLOC_CONF",
     .summary = "the three allocator settings above as PyTorch reads them",
     .maps_to = "PYTORCH_CUDA_ALLOC_CONF (read by PyTorch at its first CUDA allocation)",
     .inputs = GPO_WORDS("cuda.alloc.expandable_segments", "cuda.alloc.max_split_mb",
                         "cuda.alloc.gc_threshold_percent", "prealloc.bytes"),
     .derive = gpo_cuda_derive_alloc_conf},
};

static const gpo_library_var cuda_libraries[] = {
    {"cuda", "GPUOPT_CUDA_LIBRARY"},
    {"nvrtc", "GPUOPT_NVRTC_LIBRARY"},
    {"nvml", "GPUOPT_NVML_LIBRARY"},
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
    .memory_live = gpo_cuda_memory_live,
    .runtime = &gpo_cuda_runtime_ops,
    .apply_device = gpo_cuda_apply_device,
    GPO_BACKEND_TABLE(knobs, cuda_knobs),
    GPO_BACKEND_TABLE(libraries, cuda_libraries),
    .diagnose = gpo_cuda_diagnose,
    .toolchain_dropped = gpo_cuda_toolchain_dropped,
    .ranges = &gpo_cuda_nvtx_ranges,
};
