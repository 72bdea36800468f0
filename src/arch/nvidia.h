/* NVIDIA architecture facts by compute capability, as data (nvidia.c, one
 * row per capability with its source in the CUDA C++ Programming Guide and
 * NVIDIA's whitepapers). Shared data below every backend that meets an
 * NVIDIA GPU: the CUDA backend, and OpenCL for NVIDIA devices
 * (cl_nv_device_attribute_query gives the capability). */
#ifndef GPO_ARCH_NVIDIA_H
#define GPO_ARCH_NVIDIA_H

#include <stddef.h>
#include <stdint.h>

#include "arch/peaks.h"

typedef struct gpo_arch_nvidia_info {
    int32_t cc_major;
    int32_t cc_minor;
    char family[32];           /* "kepler" .. "blackwell" */
    char sm_name[16];          /* "sm_90" */
    uint32_t features;         /* GPUOPT_FEATURE_* present */
    uint32_t features_known;   /* GPUOPT_FEATURE_* the table can vouch for */
    int32_t fp32_lanes_per_sm; /* FP32 lanes per SM, for throughput estimates */
    int32_t fp64_full_rate;    /* 1: data-centre part with full- or half-rate FP64 */
    int32_t extrapolated;      /* 1: newer than the table; newest family's facts used */
    /* Dense tensor-core FLOP per clock per SM with FP32 accumulation, by
     * gpo_precision ([GPO_PREC_FP32] stays 0: no fp32 tensor math); 0 where
     * the SM has no tensor path for that precision. The rate of the
     * data-centre and workstation parts: GeForce boards of the same
     * capability run FP32 accumulation at half of it (geforce_half). */
    int32_t matrix_per_clock[GPO_PREC_COUNT];
    int32_t geforce_half;
    /* The newest CUDA toolkit that compiles for this capability
     * (major * 1000 + minor * 10, as cuDriverGetVersion: 11080 is 11.8);
     * 0 while current toolkits still target it. */
    int32_t last_toolkit;
} gpo_arch_nvidia_info;

/* Fills *out for compute capability major.minor. A capability newer than the
 * table gets its own numbers, the newest known family's features and
 * extrapolated = 1. Returns 0, or -1 when major < 1 (not a capability). */
int gpo_arch_nvidia_lookup(int major, int minor, gpo_arch_nvidia_info *out);

/* Peak GFLOP/s of a GPU with `sms` multiprocessors at `clock_mhz`, by
 * precision: [GPO_PREC_FP32] the vector units (SMs x lanes x 2 x clock),
 * the others the tensor cores (halved for a `name` that says "GeForce"
 * where the table says so). 0 where unknown or absent. */
void gpo_arch_nvidia_peaks(const gpo_arch_nvidia_info *a, int32_t sms, int32_t clock_mhz,
                           const char *name, double gflops[GPO_PREC_COUNT]);

/* 0 when a CUDA toolkit (compiler) of `cuda_version` (13000) still
 * compiles for the capability, or the version is unknown (<= 0). 1 when it
 * does not: `why` (cap > 0) then says so and names the last toolkit that
 * does ("CUDA 11.8 is the last toolkit that compiles for compute
 * capability 3.7 (kepler)"). */
int gpo_arch_nvidia_toolkit_dropped(const gpo_arch_nvidia_info *a, int cuda_version, char *why,
                                    size_t cap);

#endif
