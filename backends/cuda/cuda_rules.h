/* Shared by the CUDA tier rules: the catalogue and tier 0
 * (cuda_knobs.c), the math and precision rules (cuda_rules_math.c) and the
 * memory and loading rules (cuda_rules_memory.c). Every rule and its source
 * is documented in docs/knobs.md ("CUDA backend"). */
#ifndef GPO_CUDA_RULES_H
#define GPO_CUDA_RULES_H

#include "cuda_internal.h"

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

/* "9.0" */
void gpo_cuda_cc_text(const cuda_facts *f, char *out, size_t cap);
/* "79.5 GiB free" */
void gpo_cuda_memory_text(const cuda_facts *f, char *out, size_t cap);

/* cuda_rules_math.c: TF32, BF16, FP8, autocast dtype, dimension
 * multiples, cuDNN benchmark mode. */
gpuopt_status gpo_cuda_rules_math(const cuda_facts *f, struct gpuopt_plan *plan);
/* cuda_rules_memory.c: module loading, cuBLAS workspace, L2 set-aside,
 * PyTorch's caching allocator. */
gpuopt_status gpo_cuda_rules_memory(const cuda_facts *f, struct gpuopt_plan *plan);

#endif
