/* The CUDA tier-1 rules, in layers: the facts they read and the texts
 * their reasons share (cuda_rules_facts.c) below the math and precision
 * rules (cuda_rules_math.c) and the memory and loading rules
 * (cuda_rules_memory.c), with tier 0 and tier 1's entry on top
 * (cuda_rules.c). Every rule and its source is documented in docs/knobs.md
 * ("CUDA backend"). */
#ifndef GPO_CUDA_RULES_H
#define GPO_CUDA_RULES_H

#include "cuda_load.h"

/* What tier 1 reads: the device record, its details.cuda, the backend
 * state and the plan's workload. -1 means unknown. */
typedef struct cuda_facts {
    const gpuopt_device *dev;
    int cc_major, cc_minor;
    int arch; /* cc_major * 10 + cc_minor */
    uint32_t features;
    int warp;
    int max_threads_block;
    int max_threads_sm;
    int max_blocks_sm;
    int64_t l2_bytes;
    int64_t persisting_l2_max;
    int vmm; /* virtual memory management (cuMemCreate/cuMemMap) */
    int mps;
    int driver_version; /* 13000 */
    uint64_t memory;    /* free (level >= 1) or total bytes */
    const char *memory_what;
    const gpuopt_workload *workload;
    int reduced;           /* reduced precision allowed */
    char reduced_why[160]; /* in words, from gpo_plan_reduced_precision */
} cuda_facts;

#define CUDA_HAS(f, feature) (((f)->features & (feature)) != 0)

/* cuda_rules_facts.c: reads the facts for `dev` (`s` may be NULL: no
 * driver facts); GPUOPT_ERR_UNSUPPORTED in words when the device lacks the
 * capability every rule needs. */
gpuopt_status gpo_cuda_facts_read(const gpo_cuda_state *s, const gpuopt_device *dev,
                                  const struct gpuopt_plan *plan, cuda_facts *f);
/* "9.0" */
void gpo_cuda_cc_text(const cuda_facts *f, char *out, size_t cap);
/* "79.5 GiB free" */
void gpo_cuda_memory_text(const cuda_facts *f, char *out, size_t cap);

/* cuda_rules_math.c: TF32, BF16, FP8, the tensor-core dimension list,
 * cuDNN benchmark mode; tier 0's precision-sensitive TF32. */
gpuopt_status gpo_cuda_rules_math(const cuda_facts *f, struct gpuopt_plan *plan);
gpuopt_status gpo_cuda_tier0_tf32(struct gpuopt_plan *plan);
/* Its derived knobs (src/knob.h): the TF32 variables from cuda.tf32, the
 * autocast dtype from cuda.bf16, the dimension multiple from the plan's
 * precision (cuda.fp8, cuda.autocast_dtype, cuda.tf32). */
gpuopt_status gpo_cuda_derive_tf32_override(const gpo_knob_input *in, const gpo_derive_env *env,
                                            gpo_derivation *out);
gpuopt_status gpo_cuda_derive_torch_tf32_override(const gpo_knob_input *in,
                                                  const gpo_derive_env *env, gpo_derivation *out);
gpuopt_status gpo_cuda_derive_autocast_dtype(const gpo_knob_input *in, const gpo_derive_env *env,
                                             gpo_derivation *out);
gpuopt_status gpo_cuda_derive_dim_multiple(const gpo_knob_input *in, const gpo_derive_env *env,
                                           gpo_derivation *out);
/* cuda.dim_multiples' form: "fp16:64,bf16:64". */
int gpo_cuda_dim_list_ok(const char *text);

/* cuda_rules_memory.c: module loading, cuBLAS workspace, L2 set-aside,
 * PyTorch's caching allocator. */
gpuopt_status gpo_cuda_rules_memory(const cuda_facts *f, struct gpuopt_plan *plan);
/* cuda.module_loading = EAGER for a latency-oriented workload, with the
 * driver's version (<= 0: unknown) in the reason; tier 0 and 1 alike. */
gpuopt_status gpo_cuda_latency_loading(struct gpuopt_plan *plan, int driver_version);
/* Its derived knobs: CUBLASLT_WORKSPACE_SIZE from the workspace,
 * PYTORCH_CUDA_ALLOC_CONF from the three allocator knobs. */
gpuopt_status gpo_cuda_derive_cublaslt_kib(const gpo_knob_input *in, const gpo_derive_env *env,
                                           gpo_derivation *out);
gpuopt_status gpo_cuda_derive_alloc_conf(const gpo_knob_input *in, const gpo_derive_env *env,
                                         gpo_derivation *out);

#endif
