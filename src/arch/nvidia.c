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

typedef struct arch_row {
    int major, minor;
    const char *family;
    uint32_t features;
    int fp32_lanes; /* [PG] 32-bit fp add/mul/fma results per clock per SM */
    int fp64_full;  /* fp64 at 1/2 or 1/3 of fp32 (data-centre parts) */
} arch_row;

/* Sorted by capability; lookups rely on the order. */
static const arch_row arch_table[] = {
    /* [PG6] 1.x: 8 lanes; fp64 first appears in 1.3 (GT200) at 1/8. */
    {1, 0, "tesla", 0, 8, 0},
    {1, 1, "tesla", 0, 8, 0},
    {1, 2, "tesla", 0, 8, 0},
    {1, 3, "tesla", F_FP64, 8, 0},
    /* [PG8] 2.0 GF100: 32 lanes, fp64 1/2 on Tesla boards; 2.1 GF104: 48. */
    {2, 0, "fermi", F_FP64, 32, 1},
    {2, 1, "fermi", F_FP64, 48, 0},
    /* [PG] 3.0 GK104 / 3.2 GK20A: 192 lanes, fp64 8/clk (1/24).
     * [WP-GK110] 3.5 GK110, 3.7 GK210 (K80): fp64 64/clk (1/3). */
    {3, 0, "kepler", F_FP64, 192, 0},
    {3, 2, "kepler", F_FP64, 192, 0},
    {3, 5, "kepler", F_FP64, 192, 1},
    {3, 7, "kepler", F_FP64, 192, 1},
    /* [PG] 5.x: 128 lanes, fp64 4/clk (1/32); 5.3 (Tegra X1) adds fp16 at 2x. */
    {5, 0, "maxwell", F_FP64, 128, 0},
    {5, 2, "maxwell", F_FP64, 128, 0},
    {5, 3, "maxwell", F_FP64 | F_FP16, 128, 0},
    /* [WP-GP100] 6.0 P100: 64 lanes, fp64 1/2, fp16 2x, no dp4a.
     * [PG] 6.1 GP10x: 128 lanes, fp64 1/32, fp16 1/64, dp4a.
     * [PG] 6.2 Tegra X2: 128 lanes, fp16 2x, dp4a. */
    {6, 0, "pascal", F_FP64 | F_FP16, 64, 1},
    {6, 1, "pascal", F_FP64 | F_INT8, 128, 0},
    {6, 2, "pascal", F_FP64 | F_FP16 | F_INT8, 128, 0},
    /* [WP-GV100] 7.0 V100: 64 lanes, fp64 1/2, fp16 tensor cores.
     * [PG] 7.2 Xavier: tensor cores with int8, fp64 1/32. */
    {7, 0, "volta", F_VOLTA, 64, 1},
    {7, 2, "volta", F_VOLTA, 64, 0},
    /* [WP-TU102] 7.5: 64 lanes, fp64 1/32, int8/int4 tensor cores. */
    {7, 5, "turing", F_VOLTA, 64, 0},
    /* [WP-GA100] 8.0 A100: 64 lanes, fp64 1/2 (and fp64 tensor cores),
     * bf16/tf32 tensor cores. [WP-GA102] 8.6: 128 lanes, fp64 1/64.
     * [PG] 8.7 Orin: 128 lanes. */
    {8, 0, "ampere", F_AMPERE, 64, 1},
    {8, 6, "ampere", F_AMPERE, 128, 0},
    {8, 7, "ampere", F_AMPERE, 128, 0},
    /* [WP-AD102] 8.9: 128 lanes, fp64 1/64, fp8 tensor cores. */
    {8, 9, "ada", F_ADA, 128, 0},
    /* [WP-H100] 9.0: 128 lanes, fp64 1/2, fp8 tensor cores. */
    {9, 0, "hopper", F_ADA, 128, 1},
    /* [WP-Blackwell][RN] 10.0 B200/GB200: 128 lanes, fp64 1/2. 10.1: Thor
     * before CUDA 13.0 renamed it 11.0. 10.3 B300/GB300 (Blackwell Ultra):
     * fp64 cut far below B200's (GB300 NVL72 vs GB200 NVL72 specifications).
     * 11.0 Thor, 12.0 RTX 50 / RTX PRO Blackwell, 12.1 GB10: consumer fp64. */
    {10, 0, "blackwell", F_ADA, 128, 1},
    {10, 1, "blackwell", F_ADA, 128, 0},
    {10, 3, "blackwell", F_ADA, 128, 0},
    {11, 0, "blackwell", F_ADA, 128, 0},
    {12, 0, "blackwell", F_ADA, 128, 0},
    {12, 1, "blackwell", F_ADA, 128, 0},
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
    return 0;
}
