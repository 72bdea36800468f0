/* NVIDIA architecture facts by compute capability (see nvidia.h).
 *
 * Sources, cited per row below:
 *   [PG]   CUDA C++ Programming Guide (13.0), "Compute Capabilities": the
 *          feature-support and technical-specification tables, and
 *          "Arithmetic Instructions" (results per clock per SM: the fp32
 *          lanes below and the fp64 rate class).
 *   [PG8]  CUDA C Programming Guide 8.0, the last to tabulate 2.x; [PG6]
 *          6.5, the last to tabulate 1.x.
 *   [WP-*] NVIDIA architecture whitepapers: Kepler GK110/GK210, Maxwell
 *          GM204, Pascal GP100, Volta GV100, Turing TU102, Ampere GA100 and
 *          GA102, Ada AD102, Hopper H100, Blackwell.
 *   [RN]   CUDA Toolkit release notes: 12.8 (sm_100, sm_101, sm_120),
 *          12.9 (sm_103, sm_121), 13.0 (sm_101 renamed sm_110).
 *
 * Feature meanings (what a plan may rely on, not what merely compiles):
 *   FP64   double precision exists (every CUDA GPU since 1.3); its speed is
 *          the separate fp64_full_rate class
 *   FP16   native half arithmetic at least at the fp32 rate ([PG] throughput
 *          table: 5.3, 6.0, 6.2 and 7.0+; 6.1 runs it at 1/64)
 *   BF16, TF32  tensor-core formats introduced with Ampere GA100 [WP-GA100]
 *   FP8    tensor-core E4M3/E5M2, Ada and Hopper onwards [WP-AD102, WP-H100]
 *   INT8   dp4a (6.1+ [PG] "__dp4a") or int8 tensor cores (7.2, 7.5+)
 *   MATRIX_UNITS  tensor cores, Volta onwards [WP-GV100] */
#include "nvidia.h"

#include <assert.h>
#include <string.h>

#include "gpuopt/gpuopt.h"
#include "util/strutil.h"

#define F_FP64 GPUOPT_FEATURE_FP64
#define F_FP16 GPUOPT_FEATURE_FP16
#define F_BF16 GPUOPT_FEATURE_BF16
#define F_TF32 GPUOPT_FEATURE_TF32
#define F_FP8 GPUOPT_FEATURE_FP8
#define F_INT8 GPUOPT_FEATURE_INT8
#define F_MMA GPUOPT_FEATURE_MATRIX_UNITS
#define F_ALL (F_FP64 | F_FP16 | F_BF16 | F_TF32 | F_FP8 | F_INT8 | F_MMA)

/* Feature sets shared by several rows. */
#define F_VOLTA (F_FP64 | F_FP16 | F_INT8 | F_MMA)
#define F_AMPERE (F_VOLTA | F_BF16 | F_TF32)
#define F_ADA (F_AMPERE | F_FP8)

/* Tensor-core rates, dense FLOP per clock per SM with FP32 accumulation
 * (tf32, fp16, bf16, fp8), checked against the peak figures of each
 * generation's reference part (peak = SMs x rate x boost clock):
 *   [WP-GV100] 8 tensor cores per SM, 64 fp16 FMA per clock each: 1024
 *              (V100 SXM2: 80 SMs x 1024 x 1.53 GHz = 125 TFLOPS).
 *   [WP-TU102] the same per SM (T4: 40 x 1024 x 1.59 GHz = 65 TFLOPS);
 *              GeForce Turing, Ampere GA10x and Ada run FP32 accumulation
 *              at half rate (the whitepapers' appendix tables: RTX 2080 Ti
 *              56.9 vs 113.8 TFLOPS with FP16 accumulation, RTX 3090 71 vs
 *              RTX A6000 154.8, RTX 4090 165.2 vs RTX 6000 Ada 364.2).
 *   [WP-GA100] A100: 312 TFLOPS fp16/bf16, 156 tf32 = 108 x 2048/1024 x
 *              1.41 GHz.
 *   [WP-GA102] RTX A6000: 154.8 TFLOPS fp16, 77.4 tf32 = 84 x 1024/512 x
 *              1.8 GHz.
 *   [TB-ORIN]  Jetson AGX Orin technical brief: 170 sparse INT8 TOPS from
 *              16 SMs at 1.3 GHz = 4096 dense int8 per SM, fp16 half.
 *   [WP-AD102] RTX 6000 Ada: 364.2 fp16, 182.1 tf32, 728.5 fp8 = 142 x
 *              1024/512/2048 x 2.505 GHz.
 *   [WP-H100]  H100 SXM5: 989.4 fp16/bf16, 494.7 tf32, 1978.9 fp8 = 132 x
 *              4096/2048/8192 x 1.83 GHz.
 *   [DS-B200]  HGX B200 specifications (sparse figures halved): 2.25
 *              PFLOPS fp16/bf16, 1.1 tf32, 4.5 fp8 = 148 x 8192/4096/16384
 *              x 1.86 GHz.
 * Rows marked "assumed" have no reference figure here: they take the
 * nearest verified generation's rate, never a higher one.
 *
 * Last toolkit (what a compiler of a newer CUDA release can no longer
 * target; [LLVM] clang/lib/Basic/Cuda.cpp, MaxVersionForOffloadArch):
 *   1.x  6.5   (CUDA 7.0 removed sm_1x; [PG6] is the last guide to cover it)
 *   2.x  8.0   [LLVM] sm_20, sm_21
 *   3.0, 3.2  10.2  [LLVM] "sm_30 and sm_32 were removed in cuda-11.0"
 *   3.5, 3.7  11.8  [LLVM] "removed in cuda-12.0"
 *   5.x, 6.x, 7.0, 7.2  12.9  [RN] 13.0 dropped Maxwell, Pascal and Volta:
 *              nvcc 13.0 --list-gpu-arch starts at compute_75 and NVRTC
 *              13.0's nvrtcGetSupportedArchs at 75 (checked on this
 *              project's build machine). */
typedef struct arch_row {
    int major, minor;
    const char *family;
    uint32_t features;
    int fp32_lanes;            /* [PG] 32-bit fp add/mul/fma results per clock per SM */
    int fp64_full;             /* fp64 at 1/2 or 1/3 of fp32 (data-centre parts) */
    int tf32, fp16, bf16, fp8; /* dense tensor FLOP/clock/SM, FP32 accumulation */
    int geforce_half;          /* GeForce boards accumulate in FP32 at half that */
    int last_toolkit;          /* 11080: CUDA 11.8; 0: still targeted */
} arch_row;

#define NO_TC 0, 0, 0, 0, 0

/* Sorted by capability; lookups rely on the order. */
static const arch_row arch_table[] = {
    /* [PG6] 1.x: 8 lanes; fp64 first appears in 1.3 (GT200) at 1/8. */
    {1, 0, "tesla", 0, 8, 0, NO_TC, 6050},
    {1, 1, "tesla", 0, 8, 0, NO_TC, 6050},
    {1, 2, "tesla", 0, 8, 0, NO_TC, 6050},
    {1, 3, "tesla", F_FP64, 8, 0, NO_TC, 6050},
    /* [PG8] 2.0 GF100: 32 lanes, fp64 1/2 on Tesla boards; 2.1 GF104: 48. */
    {2, 0, "fermi", F_FP64, 32, 1, NO_TC, 8000},
    {2, 1, "fermi", F_FP64, 48, 0, NO_TC, 8000},
    /* [PG] 3.0 GK104 / 3.2 GK20A: 192 lanes, fp64 8/clk (1/24).
     * [WP-GK110] 3.5 GK110, 3.7 GK210 (K80): fp64 64/clk (1/3). */
    {3, 0, "kepler", F_FP64, 192, 0, NO_TC, 10020},
    {3, 2, "kepler", F_FP64, 192, 0, NO_TC, 10020},
    {3, 5, "kepler", F_FP64, 192, 1, NO_TC, 11080},
    {3, 7, "kepler", F_FP64, 192, 1, NO_TC, 11080},
    /* [PG] 5.x: 128 lanes, fp64 4/clk (1/32); 5.3 (Tegra X1) adds fp16 at 2x. */
    {5, 0, "maxwell", F_FP64, 128, 0, NO_TC, 12090},
    {5, 2, "maxwell", F_FP64, 128, 0, NO_TC, 12090},
    {5, 3, "maxwell", F_FP64 | F_FP16, 128, 0, NO_TC, 12090},
    /* [WP-GP100] 6.0 P100: 64 lanes, fp64 1/2, fp16 2x, no dp4a.
     * [PG] 6.1 GP10x: 128 lanes, fp64 1/32, fp16 1/64, dp4a.
     * [PG] 6.2 Tegra X2: 128 lanes, fp16 2x, dp4a. */
    {6, 0, "pascal", F_FP64 | F_FP16, 64, 1, NO_TC, 12090},
    {6, 1, "pascal", F_FP64 | F_INT8, 128, 0, NO_TC, 12090},
    {6, 2, "pascal", F_FP64 | F_FP16 | F_INT8, 128, 0, NO_TC, 12090},
    /* [WP-GV100] 7.0 V100: 64 lanes, fp64 1/2, fp16 tensor cores.
     * [PG] 7.2 Xavier: tensor cores with int8, fp64 1/32 (the Volta SM:
     * 8 tensor cores, Jetson AGX Xavier datasheet "64 Tensor Cores" on 8
     * SMs). */
    {7, 0, "volta", F_VOLTA, 64, 1, 0, 1024, 0, 0, 0, 12090},
    {7, 2, "volta", F_VOLTA, 64, 0, 0, 1024, 0, 0, 0, 12090},
    /* [WP-TU102] 7.5: 64 lanes, fp64 1/32, int8/int4 tensor cores. */
    {7, 5, "turing", F_VOLTA, 64, 0, 0, 1024, 0, 0, 1, 0},
    /* [WP-GA100] 8.0 A100: 64 lanes, fp64 1/2 (and fp64 tensor cores),
     * bf16/tf32 tensor cores. [WP-GA102] 8.6: 128 lanes, fp64 1/64.
     * [PG] 8.7 Orin: 128 lanes; [TB-ORIN] GA100-rate tensor cores. */
    {8, 0, "ampere", F_AMPERE, 64, 1, 1024, 2048, 2048, 0, 0, 0},
    {8, 6, "ampere", F_AMPERE, 128, 0, 512, 1024, 1024, 0, 1, 0},
    {8, 7, "ampere", F_AMPERE, 128, 0, 1024, 2048, 2048, 0, 0, 0},
    /* [WP-AD102] 8.9: 128 lanes, fp64 1/64, fp8 tensor cores. */
    {8, 9, "ada", F_ADA, 128, 0, 512, 1024, 1024, 2048, 1, 0},
    /* [WP-H100] 9.0: 128 lanes, fp64 1/2, fp8 tensor cores. */
    {9, 0, "hopper", F_ADA, 128, 1, 2048, 4096, 4096, 8192, 0, 0},
    /* [WP-Blackwell][RN] 10.0 B200/GB200: 128 lanes, fp64 1/2 ([DS-B200]
     * tensor rates). 10.1: Thor before CUDA 13.0 renamed it 11.0. 10.3
     * B300/GB300 (Blackwell Ultra): fp64 cut far below B200's (GB300 NVL72
     * vs GB200 NVL72 specifications); tensor rates assumed B200's. 11.0
     * Thor, 12.0 RTX 50 / RTX PRO Blackwell, 12.1 GB10: consumer fp64;
     * tensor rates assumed Ada's (8.9) per SM. */
    {10, 0, "blackwell", F_ADA, 128, 1, 4096, 8192, 8192, 16384, 0, 0},
    {10, 1, "blackwell", F_ADA, 128, 0, 512, 1024, 1024, 2048, 0, 0},
    {10, 3, "blackwell", F_ADA, 128, 0, 4096, 8192, 8192, 16384, 0, 0},
    {11, 0, "blackwell", F_ADA, 128, 0, 512, 1024, 1024, 2048, 0, 0},
    {12, 0, "blackwell", F_ADA, 128, 0, 512, 1024, 1024, 2048, 1, 0},
    {12, 1, "blackwell", F_ADA, 128, 0, 512, 1024, 1024, 2048, 0, 0},
};

#define N_ROWS (sizeof arch_table / sizeof arch_table[0])

static int row_le(const arch_row *r, int major, int minor)
{
    return r->major < major || (r->major == major && r->minor <= minor);
}

int gpo_arch_nvidia_lookup(int major, int minor, gpo_arch_nvidia_info *out)
{
    if (!out || major < 1 || minor < 0)
        return -1;
    /* The newest row at or below the capability: an unknown minor inherits
     * its major's latest facts, a capability past the table the newest
     * family's. */
    const arch_row *r = &arch_table[0];
    for (size_t i = 0; i < N_ROWS && row_le(&arch_table[i], major, minor); i++)
        r = &arch_table[i];
    int exact = r->major == major && r->minor == minor;
    const arch_row *newest = &arch_table[N_ROWS - 1];

    memset(out, 0, sizeof *out);
    out->cc_major = major;
    out->cc_minor = minor;
    if (major > newest->major)
        /* A family NVIDIA has not shipped when this table was written: say
         * so instead of claiming it is the newest one. */
        gpo_snprintf(out->family, sizeof out->family, "newer-than-%s", newest->family);
    else
        gpo_strlcpy(out->family, r->family, sizeof out->family);
    gpo_snprintf(out->sm_name, sizeof out->sm_name, "sm_%d%d", major, minor);
    out->features = r->features;
    out->features_known = F_ALL;
    out->fp32_lanes_per_sm = r->fp32_lanes;
    out->fp64_full_rate = r->fp64_full;
    out->extrapolated = !exact;
    out->matrix_per_clock[GPO_PREC_TF32] = r->tf32;
    out->matrix_per_clock[GPO_PREC_FP16] = r->fp16;
    out->matrix_per_clock[GPO_PREC_BF16] = r->bf16;
    out->matrix_per_clock[GPO_PREC_FP8] = r->fp8;
    out->geforce_half = r->geforce_half;
    /* A capability between rows (an unknown minor) is only as supported as
     * the row it borrows from. */
    out->last_toolkit = r->last_toolkit;
    return 0;
}

void gpo_arch_nvidia_peaks(const gpo_arch_nvidia_info *a, int32_t sms, int32_t clock_mhz,
                           const char *name, double gflops[GPO_PREC_COUNT])
{
    assert(a && gflops);
    int half = a->geforce_half && name && strstr(name, "GeForce");
    gflops[GPO_PREC_FP32] = gpo_peak_gflops(sms, clock_mhz, 2.0 * a->fp32_lanes_per_sm);
    for (int p = GPO_PREC_FP32 + 1; p < GPO_PREC_COUNT; p++)
        gflops[p] = gpo_peak_gflops(sms, clock_mhz, a->matrix_per_clock[p] / (half ? 2.0 : 1.0));
}

int gpo_arch_nvidia_toolkit_dropped(const gpo_arch_nvidia_info *a, int cuda_version, char *why,
                                    size_t cap)
{
    assert(a && why && cap > 0);
    why[0] = '\0';
    if (cuda_version <= 0 || !a->last_toolkit || cuda_version <= a->last_toolkit)
        return 0;
    gpo_snprintf(why, cap,
                 "CUDA %d.%d no longer compiles for compute capability %d.%d (%s); CUDA %d.%d is "
                 "the last toolkit that does",
                 cuda_version / 1000, (cuda_version % 1000) / 10, (int)a->cc_major,
                 (int)a->cc_minor, a->family, a->last_toolkit / 1000,
                 (a->last_toolkit % 1000) / 10);
    return 1;
}
