/* The ROCm backend's one reading of the visibility variables
 * (rocm_visible.c): what ROCr and HIP make of ROCR_VISIBLE_DEVICES,
 * HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES. Enumerate uses it for GPUs
 * listed from the KFD topology and the doctor block uses it to explain each
 * variable, so the two never disagree. */
#ifndef GPO_ROCM_VISIBLE_H
#define GPO_ROCM_VISIBLE_H

#include <stddef.h>

/* More GPU nodes than any machine has (8 MI300X in CPX mode are 64); the
 * rest are not looked at. */
#define GPO_ROCM_VISIBLE_MAX 256

/* What one variable did to the GPUs it was applied to. */
typedef struct gpo_rocm_filter {
    const char *variable; /* "ROCR_VISIBLE_DEVICES", ...; NULL: not applied */
    const char *value;
    size_t in;      /* GPUs it was applied to */
    size_t out;     /* GPUs it leaves */
    size_t entries; /* comma-separated entries of the value */
    char stop[64];  /* the entry where reading stopped, "" when none did */
    char why[96];   /* what that entry is, in words ("a negative index") */
} gpo_rocm_filter;

typedef struct gpo_rocm_visibility {
    gpo_rocm_filter rocr; /* ROCR_VISIBLE_DEVICES, applied when set (even empty) */
    gpo_rocm_filter hip;  /* HIP_VISIBLE_DEVICES, or CUDA_VISIBLE_DEVICES when HIP's is unset
                           * or empty; applied when that value is not empty */
    size_t n;             /* GPUs visible */
} gpo_rocm_visibility;

/* Applies the variables' values (`rocr`, `hip`, `cuda`; NULL when unset) to
 * `n` GPUs in KFD order, `uuids[i]` being GPU i's "GPU-<16 hex>" or "" when
 * it has none. Writes the visible GPUs' indexes, in HIP's order, to order[]
 * (room for n) and returns how many; `out` (may be NULL) says what each
 * variable did. */
size_t gpo_rocm_visible(const char *rocr, const char *hip, const char *cuda,
                        const char *const *uuids, size_t n, size_t *order,
                        gpo_rocm_visibility *out);

/* The entry of HIP's list `list` (the HIP_VISIBLE_DEVICES or
 * CUDA_VISIBLE_DEVICES value HIP read) that HIP device `ordinal` came from,
 * into out[cap]: the ordinal-th entry that repeats no earlier one, among
 * the entries HIP reads (up to the first that is neither a canonical index
 * nor text with "GPU-"). A child given that entry sees the same GPU.
 * Returns 0, or -1 when there is no such entry or it does not fit. Without
 * the GPUs at hand, a UUID and an index naming the same GPU are two
 * entries here. */
int gpo_rocm_hip_list_entry(const char *list, size_t ordinal, char *out, size_t cap);

/* In words, for a reason: "ROCR_VISIBLE_DEVICES="3,1,2" leaves 3 of 4 GPUs;
 * HIP_VISIBLE_DEVICES="2,x" leaves 1 of 3 (reading stopped at 'x': ...)";
 * "" when no variable applied. */
void gpo_rocm_visibility_describe(const gpo_rocm_visibility *v, char *out, size_t cap);

#endif
