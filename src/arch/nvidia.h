/* NVIDIA architecture facts by compute capability, as data (nvidia.c, one
 * row per capability with its source in the CUDA C++ Programming Guide and
 * NVIDIA's whitepapers). Shared data below every backend that meets an
 * NVIDIA GPU: the CUDA backend, and OpenCL for NVIDIA devices
 * (cl_nv_device_attribute_query gives the capability). */
#ifndef GPO_ARCH_NVIDIA_H
#define GPO_ARCH_NVIDIA_H

#include <stdint.h>

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
} gpo_arch_nvidia_info;

/* Fills *out for compute capability major.minor. A capability newer than the
 * table gets its own numbers, the newest known family's features and
 * extrapolated = 1. Returns 0, or -1 when major < 1 (not a capability). */
int gpo_arch_nvidia_lookup(int major, int minor, gpo_arch_nvidia_info *out);

#endif
