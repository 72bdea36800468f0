/* AMD GPU architecture facts by gfx target, as data (amd.c, one row per
 * target with its source in the LLVM AMDGPU processor table). Shared data
 * below every backend that meets an AMD GPU: ROCm (HIP and KFD paths) and
 * OpenCL (AMD devices). */
#ifndef GPO_ARCH_AMD_H
#define GPO_ARCH_AMD_H

#include <stddef.h>
#include <stdint.h>

#include "arch/peaks.h"

typedef enum gpo_arch_amd_matrix {
    GPO_ARCH_AMD_MATRIX_NONE = 0,
    GPO_ARCH_AMD_MATRIX_MFMA = 1, /* CDNA */
    GPO_ARCH_AMD_MATRIX_WMMA = 2  /* RDNA3 and later */
} gpo_arch_amd_matrix;

typedef struct gpo_arch_amd_info {
    char gfx[16];      /* "gfx942" */
    char family[16];   /* "gcn4" .. "rdna4" */
    int32_t wavefront; /* 64 on GCN/CDNA, 32 native on RDNA */
    int32_t matrix;    /* gpo_arch_amd_matrix */
    uint32_t features; /* GPUOPT_FEATURE_* present */
    uint32_t features_known;
    int32_t fp32_lanes_per_cu; /* for throughput estimates */
    int32_t fp64_full_rate;    /* 1: data-centre part with full- or half-rate FP64 */
    int32_t extrapolated;      /* 1: unknown target; nearest family's facts used */
    /* Dense matrix-unit (MFMA, WMMA) FLOP per clock per CU with FP32
     * accumulation, by gpo_precision ([GPO_PREC_FP32] stays 0 here); 0 where
     * the family has no matrix path for that precision. */
    int32_t matrix_per_clock[GPO_PREC_COUNT];
} gpo_arch_amd_info;

/* Fills *out (not NULL) for a gfx target ("gfx90a", "gfx1100", also with
 * feature suffixes such as "gfx90a:sramecc+:xnack-"). Returns 0, or -1 when
 * the text is NULL or not a gfx target at all. */
int gpo_arch_amd_lookup(const char *gfx, gpo_arch_amd_info *out);

/* KFD's gfx_target_version (major*10000 + minor*100 + stepping, e.g. 90402,
 * 90010, 110000) to the target name ("gfx942", "gfx90a", "gfx1100") in
 * out[cap] (cap > 0). Returns 0, or -1 for 0, nonsense or a name that does
 * not fit (out is then ""). */
int gpo_arch_amd_gfx_from_version(uint32_t version, char *out, size_t cap);

/* Peak GFLOP/s of a GPU with `cus` compute units at `clock_mhz`, by
 * precision: [GPO_PREC_FP32] the vector units (CUs x lanes x 2 x clock),
 * the others the matrix units. 0 where unknown or absent. */
void gpo_arch_amd_peaks(const gpo_arch_amd_info *a, int32_t cus, int32_t clock_mhz,
                        double gflops[GPO_PREC_COUNT]);

/* 0 when the ROCm release `major`.`minor` still supports the gfx target
 * (or the release is unknown: major <= 0). 1 when AMD dropped the target
 * in that release or an earlier one: `why` (cap > 0) then names the
 * release and the last one that supported it. */
int gpo_arch_amd_rocm_dropped(const gpo_arch_amd_info *a, int major, int minor, char *why,
                              size_t cap);

#endif
