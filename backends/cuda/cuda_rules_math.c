/* Tier 1, math: which reduced precisions may be used (TF32, BF16, FP8, the
 * autocast type), the matrix dimension multiples that keep tensor cores
 * busy, and cuDNN's benchmark mode. Capabilities come from the architecture
 * table (src/arch/nvidia.c: TF32/BF16 from 8.0, FP8 from 8.9, tensor cores from
 * 7.0); whether precision may be traded comes from the workload, else the
 * configuration (gpo_plan_reduced_precision). */
#include <string.h>

#include "cuda_rules.h"
#include "util/strutil.h"

static gpuopt_status set_tf32(const cuda_facts *f, struct gpuopt_plan *plan, const char *cc)
{
    gpuopt_status st;
    if (!CUDA_HAS(f, GPUOPT_FEATURE_TF32))
        return gpo_knob_set_bool(plan, "cuda.tf32", 0,
                                 "compute capability %s has no TF32 tensor cores (8.0 and later)",
                                 cc);
    if (f->reduced)
        st = gpo_knob_set_bool(plan, "cuda.tf32", 1,
                               "compute capability %s >= 8.0 has TF32 tensor cores and %s: fp32 "
                               "matrix multiplications and convolutions run on tensor cores with "
                               "a 10-bit mantissa",
                               cc, f->reduced_why);
    else
        st = gpo_knob_set_bool(plan, "cuda.tf32", 0,
                               "compute capability %s has TF32 tensor cores, but %s: full fp32", cc,
                               f->reduced_why);
    if (st)
        return st;
    /* An explicitly precision-sensitive workload also gets the one switch
     * every framework obeys: PyTorch enables TF32 for cuDNN convolutions by
     * default (torch.backends.cudnn.allow_tf32), TensorFlow for both. */
    if (f->workload && f->workload->reduced_precision == 0)
        return gpo_knob_set_string(plan, "cuda.tf32_override", "0",
                                   "the workload is precision-sensitive and frameworks enable "
                                   "TF32 by default (PyTorch for cuDNN convolutions, TensorFlow "
                                   "for all fp32 math): NVIDIA_TF32_OVERRIDE=0 keeps cuBLAS and "
                                   "cuDNN from using it");
    gpo_knob_unset(plan, "cuda.tf32_override");
    return GPUOPT_OK;
}

static gpuopt_status set_bf16(const cuda_facts *f, struct gpuopt_plan *plan, const char *cc)
{
    if (!CUDA_HAS(f, GPUOPT_FEATURE_BF16))
        return gpo_knob_set_bool(plan, "cuda.bf16", 0,
                                 "compute capability %s has no bfloat16 tensor cores (8.0 and "
                                 "later)",
                                 cc);
    if (!f->reduced)
        return gpo_knob_set_bool(plan, "cuda.bf16", 0,
                                 "compute capability %s has bfloat16 tensor cores, but %s", cc,
                                 f->reduced_why);
    return gpo_knob_set_bool(plan, "cuda.bf16", 1,
                             "compute capability %s >= 8.0 has bfloat16 tensor cores and %s", cc,
                             f->reduced_why);
}

/* FP8 needs three things; the reason names the first that is missing. */
static gpuopt_status set_fp8(const cuda_facts *f, struct gpuopt_plan *plan, const char *cc)
{
    if (!CUDA_HAS(f, GPUOPT_FEATURE_FP8))
        return gpo_knob_set_bool(plan, "cuda.fp8", 0,
                                 "compute capability %s has no FP8 tensor cores (8.9 and later)",
                                 cc);
    if (!f->reduced)
        return gpo_knob_set_bool(plan, "cuda.fp8", 0,
                                 "compute capability %s has FP8 tensor cores, but %s", cc,
                                 f->reduced_why);
    if (!f->workload)
        return gpo_knob_set_bool(plan, "cuda.fp8", 0,
                                 "compute capability %s has FP8 tensor cores and %s, but no "
                                 "workload was described: FP8 needs a model quantised for it",
                                 cc, f->reduced_why);
    if (!f->workload->quantized)
        return gpo_knob_set_bool(plan, "cuda.fp8", 0,
                                 "compute capability %s has FP8 tensor cores and %s, but the "
                                 "workload does not say it is quantised",
                                 cc, f->reduced_why);
    return gpo_knob_set_bool(plan, "cuda.fp8", 1,
                             "compute capability %s >= 8.9 has FP8 tensor cores, %s and the "
                             "workload is quantised",
                             cc, f->reduced_why);
}

static gpuopt_status set_autocast(const cuda_facts *f, struct gpuopt_plan *plan, const char *cc)
{
    if (!f->reduced)
        return gpo_knob_set_string(plan, "cuda.autocast_dtype", "float32", "%s: no mixed precision",
                                   f->reduced_why);
    if (CUDA_HAS(f, GPUOPT_FEATURE_BF16))
        return gpo_knob_set_string(plan, "cuda.autocast_dtype", "bfloat16",
                                   "compute capability %s >= 8.0 has bfloat16 tensor cores and "
                                   "%s; bfloat16 keeps fp32's exponent range, so training needs "
                                   "no loss scaling",
                                   cc, f->reduced_why);
    if (CUDA_HAS(f, GPUOPT_FEATURE_FP16))
        return gpo_knob_set_string(
            plan, "cuda.autocast_dtype", "float16",
            "compute capability %s runs fp16 at least at the fp32 rate%s "
            "but has no bfloat16 (8.0 and later) and %s; train with a "
            "loss scaler (torch.amp.GradScaler)",
            cc, CUDA_HAS(f, GPUOPT_FEATURE_MATRIX_UNITS) ? " on tensor cores" : "", f->reduced_why);
    return gpo_knob_set_string(plan, "cuda.autocast_dtype", "float32",
                               "compute capability %s has neither tensor cores nor fast fp16: "
                               "mixed precision would gain nothing",
                               cc);
}

/* Dimension multiples: 16 bytes per dimension for tensor cores (cuBLAS
 * before 11.0 and cuDNN before 7.6.3 required it), and 128 bytes for best
 * efficiency on A100 (NVIDIA Deep Learning Performance Guide, "Matrix
 * Multiplication Background", Tensor Core Requirements table), applied
 * here to every GPU of capability 8.0 and later, whose tensor-core tiles
 * are at least as large. Without tensor cores only 16-byte aligned rows
 * matter (vectorised loads). */
static const struct {
    const char *name;
    uint32_t feature; /* 0: every GPU with tensor cores */
    int bytes;        /* per element */
} tensor_types[] = {
    {"fp16", 0, 2},
    {"bf16", GPUOPT_FEATURE_BF16, 2},
    {"tf32", GPUOPT_FEATURE_TF32, 4},
    {"fp8", GPUOPT_FEATURE_FP8, 1},
    {"int8", GPUOPT_FEATURE_INT8, 1},
};

static int tensor_bytes(const cuda_facts *f)
{
    return f->arch >= 80 ? 128 : 16;
}

static gpuopt_status set_dims(const cuda_facts *f, struct gpuopt_plan *plan, const char *cc)
{
    int64_t fp8 = 0, tf32 = 0;
    const char *dtype = gpo_knob_get_text(plan, "cuda.autocast_dtype");
    gpo_knob_get_int(plan, "cuda.fp8", &fp8);
    gpo_knob_get_int(plan, "cuda.tf32", &tf32);
    int mma = CUDA_HAS(f, GPUOPT_FEATURE_MATRIX_UNITS);

    const char *type = "fp32";
    int elem = 4, tc = 0;
    if (fp8) {
        type = "fp8";
        elem = 1;
        tc = 1;
    } else if (dtype && strcmp(dtype, "float32") != 0) {
        type = strcmp(dtype, "bfloat16") == 0 ? "bfloat16" : "float16";
        elem = 2;
        tc = mma;
    } else if (tf32) {
        type = "tf32";
        tc = 1;
    }
    int bytes = tc ? tensor_bytes(f) : 16;
    gpuopt_status st;
    if (tc)
        st = gpo_knob_set_int(plan, "cuda.dim_multiple", bytes / elem,
                              "%s on the tensor cores of compute capability %s: dimensions in "
                              "multiples of %d bytes = %d elements (NVIDIA Deep Learning "
                              "Performance Guide, Tensor Core Requirements)",
                              type, cc, bytes, bytes / elem);
    else
        st = gpo_knob_set_int(plan, "cuda.dim_multiple", bytes / elem,
                              "%s math does not use tensor cores on compute capability %s%s: "
                              "%d-byte aligned rows = %d elements keep loads vectorised",
                              type, cc, mma ? "" : " (it has none)", bytes, bytes / elem);
    if (st || !mma)
        return st;

    /* Every tensor-core type of the architecture, for programs that choose
     * their own precision per layer. */
    char list[128] = "";
    for (size_t i = 0; i < sizeof tensor_types / sizeof tensor_types[0]; i++) {
        if (tensor_types[i].feature && !CUDA_HAS(f, tensor_types[i].feature))
            continue;
        size_t n = strlen(list);
        gpo_snprintf(list + n, sizeof list - n, "%s%s:%d", n ? "," : "", tensor_types[i].name,
                     tensor_bytes(f) / tensor_types[i].bytes);
    }
    return gpo_knob_set_string(plan, "cuda.dim_multiples", list,
                               "tensor-core types of compute capability %s, each in multiples of "
                               "%d bytes per dimension (NVIDIA Deep Learning Performance Guide, "
                               "Tensor Core Requirements%s)",
                               cc, tensor_bytes(f),
                               f->arch >= 80 ? ": 128 bytes for best efficiency from A100 on" : "");
}

static gpuopt_status set_cudnn(const cuda_facts *f, struct gpuopt_plan *plan)
{
    if (!f->workload)
        return gpo_knob_set_bool(plan, "cuda.cudnn_benchmark", 0,
                                 "no workload was described: timing algorithms pays off only for "
                                 "shapes that repeat");
    if (f->workload->fixed_shapes)
        return gpo_knob_set_bool(plan, "cuda.cudnn_benchmark", 1,
                                 "the workload's shapes repeat: cuDNN times its algorithms once "
                                 "per shape and reuses the fastest from then on");
    return gpo_knob_set_bool(plan, "cuda.cudnn_benchmark", 0,
                             "the workload does not say its shapes repeat: timing algorithms "
                             "for every new shape would cost more than it saves");
}

gpuopt_status gpo_cuda_rules_math(const cuda_facts *f, struct gpuopt_plan *plan)
{
    char cc[16];
    gpo_cuda_cc_text(f, cc, sizeof cc);
    gpuopt_status st = set_tf32(f, plan, cc);
    if (!st)
        st = set_bf16(f, plan, cc);
    if (!st)
        st = set_fp8(f, plan, cc);
    if (!st)
        st = set_autocast(f, plan, cc);
    if (!st)
        st = set_dims(f, plan, cc);
    if (!st)
        st = set_cudnn(f, plan);
    return st;
}
