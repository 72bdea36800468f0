/* The expected level-1 knobs of test_cuda_rules.c, for every test-double
 * GPU (tests/fakes/cuda/devices) and workload. Computed apart from the C
 * rules: by a model of the rules as docs/knobs.md ("CUDA backend") states
 * them, reading the same device descriptions (free memory, attributes,
 * compute capability). TF32 is level 1's default from 8.0 unless the
 * workload is precision-sensitive (docs/knobs.md, "TF32"). Included once,
 * by test_cuda_rules.c, after its workload enum. */
#ifndef GPO_CUDA_RULES_TABLE_H
#define GPO_CUDA_RULES_TABLE_H

/* Level 1, what depends on the device alone. */
static const struct device_row {
    const char *device;
    const char *knobs;
} device_rows[] = {
    {"jetson-nano", "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
                    "cuda.cublas_workspace_bytes=2097152 cuda.cublaslt_workspace_kib=2048 "
                    "cuda.alloc.expandable_segments=false cuda.alloc.max_split_mb=32 "
                    "cuda.alloc.gc_threshold_percent=50 "
                    "cuda.alloc_conf=max_split_size_mb:32,garbage_collection_threshold:0.50"},
    {"k80", "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
            "cuda.cublas_workspace_bytes=4194304 cuda.cublaslt_workspace_kib=4096 "
            "cuda.alloc.expandable_segments=false cuda.alloc.max_split_mb=128 "
            "cuda.alloc.gc_threshold_percent=90 "
            "cuda.alloc_conf=max_split_size_mb:128,garbage_collection_threshold:0.90"},
    {"p100-sxm2", "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
                  "cuda.cublas_workspace_bytes=4194304 cuda.cublaslt_workspace_kib=4096 "
                  "cuda.alloc.expandable_segments=true cuda.alloc.max_split_mb=128 "
                  "cuda.alloc.gc_threshold_percent=90 "
                  "cuda.alloc_conf=expandable_segments:True,max_split_size_mb:128,garbage_"
                  "collection_threshold:0.90"},
    {"v100-sxm2", "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
                  "cuda.dim_multiples=fp16:8,int8:16 cuda.cublas_workspace_bytes=4194304 "
                  "cuda.cublaslt_workspace_kib=4096 cuda.alloc.expandable_segments=true "
                  "cuda.alloc.max_split_mb=128 cuda.alloc.gc_threshold_percent=90 "
                  "cuda.alloc_conf=expandable_segments:True,max_split_size_mb:128,garbage_"
                  "collection_threshold:0.90"},
    {"t4", "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
           "cuda.dim_multiples=fp16:8,int8:16 cuda.cublas_workspace_bytes=4194304 "
           "cuda.cublaslt_workspace_kib=4096 cuda.alloc.expandable_segments=true "
           "cuda.alloc.max_split_mb=128 cuda.alloc.gc_threshold_percent=90 "
           "cuda.alloc_conf=expandable_segments:True,max_split_size_mb:128,garbage_collection_"
           "threshold:0.90"},
    {"a100-sxm4-40gb",
     "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
     "cuda.dim_multiples=fp16:64,bf16:64,tf32:32,int8:128 cuda.cublas_workspace_bytes=4194304 "
     "cuda.cublaslt_workspace_kib=4096 cuda.alloc.expandable_segments=true "
     "cuda.alloc.max_split_mb=512 cuda.alloc.gc_threshold_percent=90 "
     "cuda.alloc_conf=expandable_segments:True,max_split_size_mb:512,garbage_collection_threshold:"
     "0.90 cuda.l2_persisting_bytes=31457280"},
    {"rtx3090",
     "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
     "cuda.dim_multiples=fp16:64,bf16:64,tf32:32,int8:128 cuda.cublas_workspace_bytes=4194304 "
     "cuda.cublaslt_workspace_kib=4096 cuda.alloc.expandable_segments=true "
     "cuda.alloc.max_split_mb=256 cuda.alloc.gc_threshold_percent=90 "
     "cuda.alloc_conf=expandable_segments:True,max_split_size_mb:256,garbage_collection_threshold:"
     "0.90 cuda.l2_persisting_bytes=4718592"},
    {"jetson-agx-orin",
     "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
     "cuda.dim_multiples=fp16:64,bf16:64,tf32:32,int8:128 cuda.cublas_workspace_bytes=4194304 "
     "cuda.cublaslt_workspace_kib=4096 cuda.alloc.expandable_segments=false "
     "cuda.alloc.max_split_mb=512 cuda.alloc.gc_threshold_percent=90 "
     "cuda.alloc_conf=max_split_size_mb:512,garbage_collection_threshold:0.90 "
     "cuda.l2_persisting_bytes=3145728"},
    {"rtx4090", "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
                "cuda.dim_multiples=fp16:64,bf16:64,tf32:32,fp8:128,int8:128 "
                "cuda.cublas_workspace_bytes=4194304 cuda.cublaslt_workspace_kib=4096 "
                "cuda.alloc.expandable_segments=true cuda.alloc.max_split_mb=256 "
                "cuda.alloc.gc_threshold_percent=90 "
                "cuda.alloc_conf=expandable_segments:True,max_split_size_mb:256,garbage_collection_"
                "threshold:0.90 cuda.l2_persisting_bytes=56623104"},
    {"h100-sxm5", "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
                  "cuda.dim_multiples=fp16:64,bf16:64,tf32:32,fp8:128,int8:128 "
                  "cuda.cublas_workspace_bytes=33554432 cuda.cublaslt_workspace_kib=32768 "
                  "cuda.alloc.expandable_segments=true cuda.alloc.max_split_mb=1024 "
                  "cuda.alloc.gc_threshold_percent=90 "
                  "cuda.alloc_conf=expandable_segments:True,max_split_size_mb:1024,garbage_"
                  "collection_threshold:0.90 cuda.l2_persisting_bytes=39321600"},
    {"b200", "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
             "cuda.dim_multiples=fp16:64,bf16:64,tf32:32,fp8:128,int8:128 "
             "cuda.cublas_workspace_bytes=33554432 cuda.cublaslt_workspace_kib=32768 "
             "cuda.alloc.expandable_segments=true cuda.alloc.max_split_mb=2048 "
             "cuda.alloc.gc_threshold_percent=90 "
             "cuda.alloc_conf=expandable_segments:True,max_split_size_mb:2048,garbage_collection_"
             "threshold:0.90"},
    {"rtx5090", "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
                "cuda.dim_multiples=fp16:64,bf16:64,tf32:32,fp8:128,int8:128 "
                "cuda.cublas_workspace_bytes=33554432 cuda.cublaslt_workspace_kib=32768 "
                "cuda.alloc.expandable_segments=true cuda.alloc.max_split_mb=256 "
                "cuda.alloc.gc_threshold_percent=90 "
                "cuda.alloc_conf=expandable_segments:True,max_split_size_mb:256,garbage_collection_"
                "threshold:0.90 cuda.l2_persisting_bytes=75497472"},
};

/* Level 1, what depends on the device and the workload ("!knob": absent). */
static const struct workload_row {
    const char *device;
    int workload;
    const char *knobs;
} workload_rows[] = {
    {"jetson-nano", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "!cuda.cublas_workspace_config"},
    {"jetson-nano", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:16:8"},
    {"jetson-nano", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float16 cuda.dim_multiple=8 "
     "!cuda.cublas_workspace_config"},
    {"jetson-nano", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=4 !cuda.cublas_workspace_config"},
    {"jetson-nano", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float16 cuda.dim_multiple=8 "
     "!cuda.cublas_workspace_config"},
    {"k80", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "!cuda.cublas_workspace_config"},
    {"k80", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"k80", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "!cuda.cublas_workspace_config"},
    {"k80", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=4 !cuda.cublas_workspace_config"},
    {"k80", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "!cuda.cublas_workspace_config"},
    {"p100-sxm2", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "!cuda.cublas_workspace_config"},
    {"p100-sxm2", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"p100-sxm2", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float16 cuda.dim_multiple=8 "
     "!cuda.cublas_workspace_config"},
    {"p100-sxm2", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=4 !cuda.cublas_workspace_config"},
    {"p100-sxm2", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float16 cuda.dim_multiple=8 "
     "!cuda.cublas_workspace_config"},
    {"v100-sxm2", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "!cuda.cublas_workspace_config"},
    {"v100-sxm2", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"v100-sxm2", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float16 cuda.dim_multiple=8 "
     "!cuda.cublas_workspace_config"},
    {"v100-sxm2", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=4 !cuda.cublas_workspace_config"},
    {"v100-sxm2", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float16 cuda.dim_multiple=8 "
     "!cuda.cublas_workspace_config"},
    {"t4", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "!cuda.cublas_workspace_config"},
    {"t4", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"t4", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float16 cuda.dim_multiple=8 "
     "!cuda.cublas_workspace_config"},
    {"t4", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=4 !cuda.cublas_workspace_config"},
    {"t4", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float16 cuda.dim_multiple=8 "
     "!cuda.cublas_workspace_config"},
    {"a100-sxm4-40gb", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=32 "
     "!cuda.cublas_workspace_config"},
    {"a100-sxm4-40gb", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false cuda.tf32_override=0 !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"a100-sxm4-40gb", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=false "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 !cuda.cublas_workspace_config"},
    {"a100-sxm4-40gb", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=32 !cuda.cublas_workspace_config"},
    {"a100-sxm4-40gb", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=false "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 !cuda.cublas_workspace_config"},
    {"rtx3090", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=32 "
     "!cuda.cublas_workspace_config"},
    {"rtx3090", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false cuda.tf32_override=0 !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"rtx3090", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=false "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 !cuda.cublas_workspace_config"},
    {"rtx3090", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=32 !cuda.cublas_workspace_config"},
    {"rtx3090", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=false "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 !cuda.cublas_workspace_config"},
    {"jetson-agx-orin", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=32 "
     "!cuda.cublas_workspace_config"},
    {"jetson-agx-orin", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false cuda.tf32_override=0 !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"jetson-agx-orin", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=false "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 !cuda.cublas_workspace_config"},
    {"jetson-agx-orin", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=32 !cuda.cublas_workspace_config"},
    {"jetson-agx-orin", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=false "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 !cuda.cublas_workspace_config"},
    {"rtx4090", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=32 "
     "!cuda.cublas_workspace_config"},
    {"rtx4090", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false cuda.tf32_override=0 !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"rtx4090", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=true "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=128 !cuda.cublas_workspace_config"},
    {"rtx4090", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=32 !cuda.cublas_workspace_config"},
    {"rtx4090", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=false "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 !cuda.cublas_workspace_config"},
    {"h100-sxm5", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=32 "
     "!cuda.cublas_workspace_config"},
    {"h100-sxm5", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false cuda.tf32_override=0 !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"h100-sxm5", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=true "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=128 !cuda.cublas_workspace_config"},
    {"h100-sxm5", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=32 !cuda.cublas_workspace_config"},
    {"h100-sxm5", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=false "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 !cuda.cublas_workspace_config"},
    {"b200", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=32 "
     "!cuda.cublas_workspace_config"},
    {"b200", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false cuda.tf32_override=0 !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"b200", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=true "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=128 !cuda.cublas_workspace_config"},
    {"b200", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=32 !cuda.cublas_workspace_config"},
    {"b200", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=false "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 !cuda.cublas_workspace_config"},
    {"rtx5090", W_NONE,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=32 "
     "!cuda.cublas_workspace_config"},
    {"rtx5090", W_SENSITIVE,
     "cuda.cudnn_benchmark=false cuda.tf32=false cuda.tf32_override=0 !cuda.torch_tf32_override "
     "cuda.bf16=false "
     "cuda.fp8=false cuda.autocast_dtype=float32 cuda.dim_multiple=4 "
     "cuda.cublas_workspace_config=:4096:8"},
    {"rtx5090", W_REDUCED_QUANTISED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=true "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=128 !cuda.cublas_workspace_config"},
    {"rtx5090", W_FIXED_SHAPES,
     "cuda.cudnn_benchmark=true cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=false cuda.fp8=false "
     "cuda.autocast_dtype=float32 cuda.dim_multiple=32 !cuda.cublas_workspace_config"},
    {"rtx5090", W_REDUCED,
     "cuda.cudnn_benchmark=false cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1 "
     "cuda.bf16=true cuda.fp8=false "
     "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 !cuda.cublas_workspace_config"},
};

#endif
