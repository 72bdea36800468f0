/* AMD GPU architecture facts by gfx target, as data (amd_arch.c, one row per
 * target with its source in the LLVM AMDGPU processor table). Used by the
 * ROCm backend (HIP and KFD paths) and by OpenCL for AMD devices. */
#ifndef GPO_AMD_ARCH_H
#define GPO_AMD_ARCH_H

#include <stddef.h>
#include <stdint.h>

typedef enum gpo_amd_matrix {
    GPO_AMD_MATRIX_NONE = 0,
    GPO_AMD_MATRIX_MFMA = 1, /* CDNA */
    GPO_AMD_MATRIX_WMMA = 2  /* RDNA3 and later */
} gpo_amd_matrix;

typedef struct gpo_amd_arch_info {
    char gfx[16];      /* "gfx942" */
    char family[16];   /* "gcn4" .. "rdna4" */
    int32_t wavefront; /* 64 on GCN/CDNA, 32 native on RDNA */
    int32_t matrix;    /* gpo_amd_matrix */
    uint32_t features; /* GPUOPT_FEATURE_* present */
    uint32_t features_known;
    int32_t fp32_lanes_per_cu; /* for throughput estimates */
    int32_t fp64_full_rate;    /* 1: data-centre part with full- or half-rate FP64 */
    int32_t extrapolated;      /* 1: unknown target; nearest family's facts used */
} gpo_amd_arch_info;

/* Fills *out for a gfx target ("gfx90a", "gfx1100", also with feature
 * suffixes such as "gfx90a:sramecc+:xnack-"). Returns 0, or -1 when the text
 * is not a gfx target at all. */
int gpo_amd_arch_lookup(const char *gfx, gpo_amd_arch_info *out);

/* KFD's gfx_target_version (major*10000 + minor*100 + stepping, e.g. 90402,
 * 90010, 110000) to the target name ("gfx942", "gfx90a", "gfx1100").
 * Returns 0, or -1 for 0 or nonsense. */
int gpo_amd_gfx_from_version(uint32_t version, char *out, size_t cap);

#endif
