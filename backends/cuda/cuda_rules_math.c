/* Tier 1, math: which reduced precisions may be used (TF32, BF16, FP8),
 * the tensor-core dimension list, and cuDNN's benchmark mode; and the
 * knobs derived from them after the user's overrides (the TF32 variables,
 * the autocast type, the dimension multiple of the plan's precision).
 * Capabilities come from the architecture table (src/arch/nvidia.c:
 * TF32/BF16 from 8.0, FP8 from 8.9, tensor cores from 7.0).
 *
 * TF32 is level 1's default where the GPU has it, unless the workload is
 * precision-sensitive (docs/knobs.md, "TF32"): it keeps fp32's range with
 * a 10-bit mantissa, TensorFlow and JAX default to it and PyTorch does
 * for cuDNN convolutions. BF16, FP16 and FP8 stay opt-in: the workload's
 * say, else the configuration's reduced_precision
 * (gpo_plan_reduced_precision). */
#include <string.h>

#include "cuda_rules.h"
#include "util/strutil.h"

static int precision_sensitive(const gpuopt_workload *w)
{
    return w && w->reduced_precision == 0;
}

#define TF32_API                                                                                   \
    "what only an API call sets: torch.backends.cuda.matmul.allow_tf32 = True (or "                \
    "torch.set_float32_matmul_precision(\"high\")) and torch.backends.cudnn.allow_tf32 = True in " \
    "PyTorch, tf.config.experimental.enable_tensor_float_32_execution(True) in TensorFlow"

static gpuopt_status set_tf32(const cuda_facts *f, struct gpuopt_plan *plan, const char *cc)
{
    if (!CUDA_HAS(f, GPUOPT_FEATURE_TF32))
        return gpo_knob_set_bool(plan, "cuda.tf32", 0,
                                 "compute capability %s has no TF32 tensor cores (8.0 and "
                                 "later): fp32 math stays fp32 whatever a framework asks",
                                 cc);
    if (precision_sensitive(f->workload))
        return gpo_knob_set_bool(plan, "cuda.tf32", 0,
                                 "compute capability %s has TF32 tensor cores, but the workload "
                                 "is precision-sensitive: full fp32, enforced for cuBLAS and "
                                 "cuDNN (cuda.tf32_override)",
                                 cc);
    return gpo_knob_set_bool(plan, "cuda.tf32", 1,
                             "compute capability %s >= 8.0 has TF32 tensor cores: level 1 lets "
                             "fp32 matrix multiplications and convolutions run on them (fp32's "
                             "exponent range, a 10-bit mantissa; the default of TensorFlow, JAX "
                             "and PyTorch's cuDNN convolutions) unless the workload is "
                             "precision-sensitive; " TF32_API,
                             cc);
}

gpuopt_status gpo_cuda_tier0_tf32(struct gpuopt_plan *plan)
{
    /* Level 0 leaves TF32 to the framework, except for work that must not
     * have it: the override is safe on every GPU (a GPU without TF32
     * ignores it). */
    if (!precision_sensitive(gpo_plan_workload(plan)))
        return GPUOPT_OK;
    return gpo_knob_set_bool(plan, "cuda.tf32", 0,
                             "the workload is precision-sensitive: no TF32 on any GPU "
                             "(enforced for cuBLAS and cuDNN, cuda.tf32_override)");
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

/* Every tensor-core type of the architecture, for programs that choose
 * their own precision per layer. */
static gpuopt_status set_dim_list(const cuda_facts *f, struct gpuopt_plan *plan, const char *cc)
{
    if (!CUDA_HAS(f, GPUOPT_FEATURE_MATRIX_UNITS))
        return GPUOPT_OK;
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
        st = set_dim_list(f, plan, cc);
    if (!st)
        st = set_cudnn(f, plan);
    return st;
}

/* ---- derived knobs ------------------------------------------------------------------ */

/* The facts a derivation may read: none below level 1 (tier 0 reads no
 * fact). */
static int derive_facts(const gpo_derive_env *env, cuda_facts *f, char *cc, size_t cap)
{
    if (env->level < 1 || gpo_cuda_facts_read(env->state, env->dev, env->plan, f) != GPUOPT_OK)
        return 0;
    gpo_cuda_cc_text(f, cc, cap);
    return 1;
}

#define TF32_UNSET                                                                                 \
    "cuda.tf32 is not set: TF32 is left to the framework (PyTorch: off for matrix "                \
    "multiplications since 1.12, on for cuDNN convolutions; TensorFlow and JAX: on)"

/* NVIDIA_TF32_OVERRIDE=0 makes a plan's "no TF32" true for every program:
 * cuBLAS and cuDNN then use none whatever the program asks (cuDNN,
 * cudnnMathType_t). There is no value that forces TF32 on. */
gpuopt_status gpo_cuda_derive_tf32_override(const gpo_knob_input *in, const gpo_derive_env *env,
                                            gpo_derivation *out)
{
    cuda_facts f;
    char cc[16];
    out->present = 0;
    if (!in[0].present) {
        gpo_snprintf(out->how, sizeof out->how, "%s", TF32_UNSET);
    } else if (in[0].ival) {
        gpo_snprintf(out->how, sizeof out->how, "TF32 is allowed: nothing to turn off");
    } else if (derive_facts(env, &f, cc, sizeof cc) && !CUDA_HAS(&f, GPUOPT_FEATURE_TF32)) {
        gpo_snprintf(out->how, sizeof out->how,
                     "compute capability %s has no TF32 tensor cores: nothing to turn off", cc);
    } else {
        out->present = 1;
        gpo_snprintf(out->value, sizeof out->value, "0");
        gpo_snprintf(out->how, sizeof out->how,
                     "cuBLAS and cuDNN then use no TF32 whatever the program asks, so frameworks "
                     "that enable it by default (PyTorch for cuDNN convolutions, TensorFlow) "
                     "keep full fp32");
    }
    return GPUOPT_OK;
}

/* TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 makes a plan's "TF32 on" true for a
 * PyTorch program that only takes the environment: PyTorch 1.13 then
 * allows TF32 for fp32 matmuls whatever the program sets
 * (aten/src/ATen/Context.cpp, allowTF32CuBLAS), 2.x takes it as the
 * default float32 matmul precision ("high"), which the program may still
 * change. cuDNN convolutions use TF32 by PyTorch's default. "0" does
 * nothing in 1.13, so a plan without TF32 exports nothing here. */
gpuopt_status gpo_cuda_derive_torch_tf32_override(const gpo_knob_input *in,
                                                  const gpo_derive_env *env, gpo_derivation *out)
{
    cuda_facts f;
    char cc[16], none[96] = "";
    out->present = 0;
    if (!in[0].present) {
        gpo_snprintf(out->how, sizeof out->how, "%s", TF32_UNSET);
        return GPUOPT_OK;
    }
    if (!in[0].ival) {
        gpo_snprintf(out->how, sizeof out->how,
                     "TF32 is not allowed: PyTorch's own default (no TF32 for matrix "
                     "multiplications) stands");
        return GPUOPT_OK;
    }
    if (derive_facts(env, &f, cc, sizeof cc) && !CUDA_HAS(&f, GPUOPT_FEATURE_TF32))
        gpo_snprintf(none, sizeof none,
                     " (compute capability %s has no TF32 tensor cores: no effect here)", cc);
    out->present = 1;
    gpo_snprintf(out->value, sizeof out->value, "1");
    gpo_snprintf(out->how, sizeof out->how,
                 "PyTorch then allows TF32 for fp32 matrix multiplications (1.13: whatever the "
                 "program sets; 2.x: as the default the program may change), and its cuDNN "
                 "convolutions use TF32 by default%s; %s",
                 none, TF32_API);
    return GPUOPT_OK;
}

/* bfloat16 where the plan allows it (its exponent range needs no loss
 * scaling), else float16 where precision may be traded and the GPU runs
 * fp16 at least at the fp32 rate, else none. */
gpuopt_status gpo_cuda_derive_autocast_dtype(const gpo_knob_input *in, const gpo_derive_env *env,
                                             gpo_derivation *out)
{
    cuda_facts f;
    char cc[16];
    out->present = 1;
    if (in[0].present && in[0].ival) {
        gpo_snprintf(out->value, sizeof out->value, "bfloat16");
        gpo_snprintf(out->how, sizeof out->how,
                     "bfloat16 keeps fp32's exponent range, so training needs no loss scaling");
        return GPUOPT_OK;
    }
    gpo_snprintf(out->value, sizeof out->value, "float32");
    if (!derive_facts(env, &f, cc, sizeof cc))
        gpo_snprintf(out->how, sizeof out->how,
                     "level 0 reads no precision policy: no mixed precision");
    else if (!f.reduced)
        gpo_snprintf(out->how, sizeof out->how, "%s: no mixed precision", f.reduced_why);
    else if (CUDA_HAS(&f, GPUOPT_FEATURE_FP16)) {
        gpo_snprintf(out->value, sizeof out->value, "float16");
        gpo_snprintf(out->how, sizeof out->how,
                     "no bfloat16, but compute capability %s runs fp16 at least at the fp32 "
                     "rate%s and %s; train with a loss scaler (torch.amp.GradScaler)",
                     cc, CUDA_HAS(&f, GPUOPT_FEATURE_MATRIX_UNITS) ? " on tensor cores" : "",
                     f.reduced_why);
    } else
        gpo_snprintf(out->how, sizeof out->how,
                     "compute capability %s has neither tensor cores nor fast fp16: mixed "
                     "precision would gain nothing",
                     cc);
    return GPUOPT_OK;
}

/* The plan's precision decides the multiple: fp8, else the autocast type,
 * else tf32, else fp32; tensor-core tiles want the byte counts of
 * tensor_bytes(), other math 16-byte rows (vectorised loads). Level 0
 * knows no architecture: 16 bytes, which every tensor-core GPU needs. */
gpuopt_status gpo_cuda_derive_dim_multiple(const gpo_knob_input *in, const gpo_derive_env *env,
                                           gpo_derivation *out)
{
    cuda_facts f;
    char cc[16];
    int fp8 = in[0].present && in[0].ival;
    const char *dtype = in[1].present ? in[1].text : "float32";
    int tf32 = in[2].present && in[2].ival;
    out->present = 1;
    if (!derive_facts(env, &f, cc, sizeof cc)) {
        int n = fp8 ? 16 : 8;
        gpo_snprintf(out->value, sizeof out->value, "%d", n);
        gpo_snprintf(out->how, sizeof out->how,
                     fp8 ? "fp8: 16 bytes = 16 elements, what tensor cores need on every GPU "
                           "that has them"
                         : "multiples of 8 elements suit fp16 tensor cores on every GPU that "
                           "has them (NVIDIA Deep Learning Performance Guide, \"Tensor Core "
                           "Requirements\") and keep fp32 rows 32-byte aligned");
        return GPUOPT_OK;
    }
    int mma = CUDA_HAS(&f, GPUOPT_FEATURE_MATRIX_UNITS);
    const char *type = "fp32";
    int elem = 4, tc = 0;
    if (fp8) {
        type = "fp8";
        elem = 1;
        tc = 1;
    } else if (strcmp(dtype, "float32") != 0) {
        type = dtype;
        elem = 2;
        tc = mma;
    } else if (tf32 && CUDA_HAS(&f, GPUOPT_FEATURE_TF32)) {
        type = "tf32";
        tc = 1;
    }
    int bytes = tc ? tensor_bytes(&f) : 16;
    gpo_snprintf(out->value, sizeof out->value, "%d", bytes / elem);
    if (tc)
        gpo_snprintf(out->how, sizeof out->how,
                     "%s on the tensor cores of compute capability %s: dimensions in multiples "
                     "of %d bytes = %d elements (NVIDIA Deep Learning Performance Guide, Tensor "
                     "Core Requirements)",
                     type, cc, bytes, bytes / elem);
    else
        gpo_snprintf(out->how, sizeof out->how,
                     "%s math does not use tensor cores on compute capability %s%s: %d-byte "
                     "aligned rows = %d elements keep loads vectorised",
                     type, cc, mma ? "" : " (it has none)", bytes, bytes / elem);
    return GPUOPT_OK;
}

int gpo_cuda_dim_list_ok(const char *text)
{
    const char *p = text;
    do {
        size_t name = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789");
        if (!name || p[name] != ':')
            return 0;
        p += name + 1;
        size_t digits = strspn(p, "0123456789");
        if (!digits || digits > 4)
            return 0;
        p += digits;
    } while (*p == ',' && *++p);
    return *p == '\0';
}
