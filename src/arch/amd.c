/* AMD GPU architecture facts by gfx target (see amd.h).
 *
 * One row per gfx target. The target list, the APU/dGPU split and the
 * wave32/wave64 facts come from the LLVM AMDGPU backend's processor table
 * (llvm/docs/AMDGPUUsage.rst, "AMDGPU Processors"); the per-family features
 * from the AMD ISA reference guides named beside each block; the FP32 lanes
 * per CU are checked against the peak FP32 figures of AMD's product pages
 * (peak = CUs x lanes x 2 (FMA) x clock).
 *
 * Unknown targets are never an error: the nearest older row (by major,
 * minor, stepping) lends its facts and the answer is flagged extrapolated. */
#include "amd.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gpuopt/gpuopt.h"
#include "util/strutil.h"

#define F_FP64 GPUOPT_FEATURE_FP64
#define F_FP16 GPUOPT_FEATURE_FP16
#define F_BF16 GPUOPT_FEATURE_BF16
#define F_TF32 GPUOPT_FEATURE_TF32
#define F_FP8 GPUOPT_FEATURE_FP8
#define F_INT8 GPUOPT_FEATURE_INT8
#define F_MX GPUOPT_FEATURE_MATRIX_UNITS
#define F_ALL (F_FP64 | F_FP16 | F_BF16 | F_TF32 | F_FP8 | F_INT8 | F_MX)

#define NONE GPO_ARCH_AMD_MATRIX_NONE
#define MFMA GPO_ARCH_AMD_MATRIX_MFMA
#define WMMA GPO_ARCH_AMD_MATRIX_WMMA

typedef struct arch_row {
    uint32_t key; /* major*10000 + minor*100 + stepping, as KFD's gfx_target_version */
    const char *gfx;
    const char *family;
    int32_t wavefront;
    int32_t matrix;
    uint32_t features;
    int32_t fp32_lanes_per_cu;
    int32_t fp64_full_rate;
} arch_row;

/* Sorted by key: the extrapolation below relies on it. */
static const arch_row rows[] = {
    /* GCN4 (Polaris; LLVM lists Fiji under the same target). "AMD GCN3 ISA"
     * / "Polaris ISA": 16-bit arithmetic (no packed math), no dot products,
     * FP64 at 1/16 on consumer parts. 4 SIMD16 per CU = 64 lanes
     * (RX 580: 36 CU x 64 x 2 x 1.34 GHz = 6.2 TFLOPS, AMD product page). */
    {80003, "gfx803", "gcn4", 64, NONE, F_FP64 | F_FP16, 64, 0},

    /* GCN5 (Vega). "Vega Instruction Set Architecture": packed FP16; the
     * 7 nm Vega 20 (gfx906, "Vega 7nm ISA") adds v_dot* integer dot
     * products and half-rate FP64 on MI50/MI60 (Radeon VII: 1/4). gfx902,
     * gfx909, gfx90c are APUs (LLVM processor table). */
    {90000, "gfx900", "gcn5", 64, NONE, F_FP64 | F_FP16, 64, 0},
    {90002, "gfx902", "gcn5", 64, NONE, F_FP64 | F_FP16, 64, 0},
    {90004, "gfx904", "gcn5", 64, NONE, F_FP64 | F_FP16, 64, 0},
    {90006, "gfx906", "gcn5", 64, NONE, F_FP64 | F_FP16 | F_INT8, 64, 1},

    /* CDNA1 (MI100). "AMD Instinct MI100 ISA": MFMA for FP32/FP16/BF16/INT8;
     * FP64 vector at half the FP32 rate (11.5 vs 23.1 TFLOPS, MI100 product
     * page: 120 CU x 64 x 2 x 1.502 GHz = 23.1). */
    {90008, "gfx908", "cdna1", 64, MFMA, F_FP64 | F_FP16 | F_BF16 | F_INT8 | F_MX, 64, 1},

    {90009, "gfx909", "gcn5", 64, NONE, F_FP64 | F_FP16, 64, 0},

    /* CDNA2 (MI200). "AMD Instinct MI200 ISA": MFMA adds FP64; FP64 vector
     * at the full FP32 rate (MI250X: 47.9 TFLOPS both, 220 CU x 64 x 2 x
     * 1.7 GHz). */
    {90010, "gfx90a", "cdna2", 64, MFMA, F_FP64 | F_FP16 | F_BF16 | F_INT8 | F_MX, 64, 1},

    {90012, "gfx90c", "gcn5", 64, NONE, F_FP64 | F_FP16, 64, 0},

    /* CDNA3 (MI300). "AMD Instinct MI300 ISA": MFMA with FP8/BF8 and XF32
     * (TF32); FP32 vector doubled to 128 lanes per CU (MI300X: 304 CU x 128
     * x 2 x 2.1 GHz = 163.4 TFLOPS, product page), FP64 vector at half that
     * (81.7). gfx942 is both MI300X (dGPU) and MI300A (APU). */
    {90400, "gfx940", "cdna3", 64, MFMA, F_FP64 | F_FP16 | F_BF16 | F_TF32 | F_FP8 | F_INT8 | F_MX,
     128, 1},
    {90401, "gfx941", "cdna3", 64, MFMA, F_FP64 | F_FP16 | F_BF16 | F_TF32 | F_FP8 | F_INT8 | F_MX,
     128, 1},
    {90402, "gfx942", "cdna3", 64, MFMA, F_FP64 | F_FP16 | F_BF16 | F_TF32 | F_FP8 | F_INT8 | F_MX,
     128, 1},

    /* CDNA4 (MI350). "AMD Instinct CDNA4 ISA": MFMA with FP8, FP6, FP4;
     * the XF32 (TF32) MFMA instructions of CDNA3 were removed; FP64 vector
     * at half the FP32 rate (MI355X: 78.6 vs 157.3 TFLOPS, 256 CU x 128 x 2
     * x 2.4 GHz). */
    {90500, "gfx950", "cdna4", 64, MFMA, F_FP64 | F_FP16 | F_BF16 | F_FP8 | F_INT8 | F_MX, 128, 1},

    /* RDNA1. "RDNA 1.0 ISA": wave32 native (wave64 supported), 2 SIMD32
     * per CU = 64 lanes; FP64 at 1/16. Dot products on gfx1011/gfx1012 only
     * (LLVM gfx10-1-generic restrictions). gfx1013 is an APU. */
    {100100, "gfx1010", "rdna1", 32, NONE, F_FP64 | F_FP16, 64, 0},
    {100101, "gfx1011", "rdna1", 32, NONE, F_FP64 | F_FP16 | F_INT8, 64, 0},
    {100102, "gfx1012", "rdna1", 32, NONE, F_FP64 | F_FP16 | F_INT8, 64, 0},
    {100103, "gfx1013", "rdna1", 32, NONE, F_FP64 | F_FP16, 64, 0},

    /* RDNA2. "RDNA 2 ISA": integer dot products on every target; no matrix
     * units (RX 6900 XT: 80 CU x 64 x 2 x 2.25 GHz = 23.0 TFLOPS).
     * gfx1033, gfx1035, gfx1036 are APUs. */
    {100300, "gfx1030", "rdna2", 32, NONE, F_FP64 | F_FP16 | F_INT8, 64, 0},
    {100301, "gfx1031", "rdna2", 32, NONE, F_FP64 | F_FP16 | F_INT8, 64, 0},
    {100302, "gfx1032", "rdna2", 32, NONE, F_FP64 | F_FP16 | F_INT8, 64, 0},
    {100303, "gfx1033", "rdna2", 32, NONE, F_FP64 | F_FP16 | F_INT8, 64, 0},
    {100304, "gfx1034", "rdna2", 32, NONE, F_FP64 | F_FP16 | F_INT8, 64, 0},
    {100305, "gfx1035", "rdna2", 32, NONE, F_FP64 | F_FP16 | F_INT8, 64, 0},
    {100306, "gfx1036", "rdna2", 32, NONE, F_FP64 | F_FP16 | F_INT8, 64, 0},

    /* RDNA3. "RDNA3 ISA": WMMA for FP16/BF16/IU8; dual-issue VALU doubles
     * FP32 to 128 lanes per CU (RX 7900 XTX: 96 CU x 128 x 2 x 2.5 GHz =
     * 61.4 TFLOPS, product page). gfx1103 is an APU. */
    {110000, "gfx1100", "rdna3", 32, WMMA, F_FP64 | F_FP16 | F_BF16 | F_INT8 | F_MX, 128, 0},
    {110001, "gfx1101", "rdna3", 32, WMMA, F_FP64 | F_FP16 | F_BF16 | F_INT8 | F_MX, 128, 0},
    {110002, "gfx1102", "rdna3", 32, WMMA, F_FP64 | F_FP16 | F_BF16 | F_INT8 | F_MX, 128, 0},
    {110003, "gfx1103", "rdna3", 32, WMMA, F_FP64 | F_FP16 | F_BF16 | F_INT8 | F_MX, 128, 0},

    /* RDNA3.5 (Strix). "RDNA3.5 ISA": the RDNA3 compute model; APUs only. */
    {110500, "gfx1150", "rdna3.5", 32, WMMA, F_FP64 | F_FP16 | F_BF16 | F_INT8 | F_MX, 128, 0},
    {110501, "gfx1151", "rdna3.5", 32, WMMA, F_FP64 | F_FP16 | F_BF16 | F_INT8 | F_MX, 128, 0},
    {110502, "gfx1152", "rdna3.5", 32, WMMA, F_FP64 | F_FP16 | F_BF16 | F_INT8 | F_MX, 128, 0},
    {110503, "gfx1153", "rdna3.5", 32, WMMA, F_FP64 | F_FP16 | F_BF16 | F_INT8 | F_MX, 128, 0},

    /* RDNA4. "RDNA4 ISA": WMMA gains FP8/BF8 (RX 9070 XT: 64 CU x 128 x 2
     * x 2.97 GHz = 48.7 TFLOPS, product page). */
    {120000, "gfx1200", "rdna4", 32, WMMA, F_FP64 | F_FP16 | F_BF16 | F_FP8 | F_INT8 | F_MX, 128,
     0},
    {120001, "gfx1201", "rdna4", 32, WMMA, F_FP64 | F_FP16 | F_BF16 | F_FP8 | F_INT8 | F_MX, 128,
     0},
};

#define N_ROWS (sizeof rows / sizeof rows[0])

/* Matrix units by family: dense FLOP per clock per CU with FP32
 * accumulation (tf32, fp16, bf16, fp8), from the peak figures of AMD's data
 * sheets and product pages (peak = CUs x rate x peak engine clock). GCN and
 * RDNA1/2 have none. */
static const struct {
    const char *family;
    int32_t tf32, fp16, bf16, fp8;
} matrix_rows[] = {
    /* MI100 data sheet: 184.6 TFLOPS fp16, 92.3 bf16 = 120 x 1024/512 x
     * 1.502 GHz. */
    {"cdna1", 0, 1024, 512, 0},
    /* MI250X data sheet: 383 TFLOPS fp16 and bf16 = 220 x 1024 x 1.7 GHz. */
    {"cdna2", 0, 1024, 1024, 0},
    /* MI300X data sheet: 1307.4 TFLOPS fp16/bf16, 653.7 tf32 (XF32), 2614.9
     * fp8 = 304 x 2048/1024/4096 x 2.1 GHz. */
    {"cdna3", 1024, 2048, 2048, 4096},
    /* MI355X data sheet: 2.5 PFLOPS fp16/bf16, 5 fp8 (dense) = 256 x
     * 4096/8192 x 2.4 GHz; no XF32 (removed with CDNA4, see rows). */
    {"cdna4", 0, 4096, 4096, 8192},
    /* RX 7900 XTX product page: 122.8 TFLOPS peak fp16 = 96 x 512 x 2.5 GHz
     * (WMMA: 16x16x16 in 32 clocks on each of a CU's two SIMD32). */
    {"rdna3", 0, 512, 512, 0},
    {"rdna3.5", 0, 512, 512, 0},
    /* RX 9070 XT product page: 194.7 TFLOPS fp16 matrix, 389 fp8 (dense)
     * = 64 x 1024/2048 x 2.97 GHz. */
    {"rdna4", 0, 1024, 1024, 2048},
};

/* Targets AMD stopped supporting, with the first ROCm release that no
 * longer lists them and the last one known to support them (ROCm/ROCm
 * repository, README.md and docs/release/gpu_os_support.md at each
 * release tag; release notes). Targets in maintenance mode (gfx906 from
 * ROCm 6.0: "ROCm 5.7 was the final release for gfx906 GPUs in a fully
 * supported state", CHANGELOG.md at rocm-6.0.0) still build and are not
 * listed. */
typedef struct dropped_row {
    const char *gfx;
    int major, minor; /* dropped in */
    const char *last; /* the last release known to support it */
    const char *source;
} dropped_row;

static const dropped_row dropped_rows[] = {
    /* README.md at rocm-3.10.0 lists Polaris 10 (RX 580, gfx803) as
     * supported; at rocm-4.0.0 it is "enabled, not guaranteed" only. */
    {"gfx803", 4, 0, "3.10", "ROCm 4.0 README: gfx8 moved out of official support"},
    /* Listed at rocm-4.0.0 .. 5.0; docs/release/gpu_os_support.md at
     * rocm-5.6.0 marks MI25 (gfx900) unsupported. */
    {"gfx900", 5, 6, "5.0", "ROCm 5.6 GPU support table: MI25 (gfx900) unsupported"},
    /* MI300 pre-production targets: LLVM removed gfx940/gfx941
     * (llvm-project PR 126887) and ROCm 7.0's libraries stopped building
     * them (hipFFT rocm-7.0.0 release notes). */
    {"gfx940", 7, 0, "6.4", "ROCm 7.0 release notes: gfx940 and gfx941 removed"},
    {"gfx941", 7, 0, "6.4", "ROCm 7.0 release notes: gfx940 and gfx941 removed"},
};

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* "gfx90a", "gfx1100", "gfx90a:sramecc+:xnack-" -> key and the bare name.
 * The last two characters are the minor and stepping (hex digits), the ones
 * before them the decimal major. */
static int parse_gfx(const char *text, uint32_t *key, char *bare, size_t cap)
{
    if (!text || strncmp(text, "gfx", 3) != 0)
        return -1;
    const char *p = text + 3;
    size_t n = strcspn(p, ":");
    if (n < 3 || n > 5 || n + 4 > cap)
        return -1;
    for (size_t i = 0; i < n - 2; i++)
        if (!isdigit((unsigned char)p[i]))
            return -1;
    int minor = hexval((unsigned char)p[n - 2]);
    int step = hexval((unsigned char)p[n - 1]);
    if (minor < 0 || step < 0)
        return -1;
    uint32_t major = 0;
    for (size_t i = 0; i < n - 2; i++)
        major = major * 10 + (uint32_t)(p[i] - '0');
    if (major == 0)
        return -1;
    *key = major * 10000u + (uint32_t)minor * 100u + (uint32_t)step;
    memcpy(bare, text, n + 3);
    bare[n + 3] = '\0';
    for (size_t i = 3; i < n + 3; i++)
        bare[i] = (char)tolower((unsigned char)bare[i]);
    return 0;
}

int gpo_arch_amd_lookup(const char *gfx, gpo_arch_amd_info *out)
{
    uint32_t key;
    char bare[16];
    assert(out);
    memset(out, 0, sizeof *out);
    if (parse_gfx(gfx, &key, bare, sizeof bare) != 0)
        return -1;

    /* Exact row, else the newest row not newer than the target (an unknown
     * gfx1250 borrows gfx1201's facts), else the oldest row. */
    const arch_row *r = &rows[0];
    int exact = 0;
    for (size_t i = 0; i < N_ROWS; i++) {
        if (rows[i].key == key) {
            r = &rows[i];
            exact = 1;
            break;
        }
        if (rows[i].key < key)
            r = &rows[i];
    }
    snprintf(out->gfx, sizeof out->gfx, "%s", bare);
    snprintf(out->family, sizeof out->family, "%s", r->family);
    out->wavefront = r->wavefront;
    out->matrix = r->matrix;
    out->features = r->features;
    /* Extrapolated facts are still reported (never "unknown" for
     * everything); arch_extrapolated tells the reader they are borrowed. */
    out->features_known = F_ALL;
    out->fp32_lanes_per_cu = r->fp32_lanes_per_cu;
    out->fp64_full_rate = r->fp64_full_rate;
    out->extrapolated = !exact;
    for (size_t i = 0; i < sizeof matrix_rows / sizeof matrix_rows[0]; i++) {
        if (strcmp(matrix_rows[i].family, r->family) != 0)
            continue;
        out->matrix_per_clock[GPO_PREC_TF32] = matrix_rows[i].tf32;
        out->matrix_per_clock[GPO_PREC_FP16] = matrix_rows[i].fp16;
        out->matrix_per_clock[GPO_PREC_BF16] = matrix_rows[i].bf16;
        out->matrix_per_clock[GPO_PREC_FP8] = matrix_rows[i].fp8;
    }
    return 0;
}

void gpo_arch_amd_peaks(const gpo_arch_amd_info *a, int32_t cus, int32_t clock_mhz,
                        double gflops[GPO_PREC_COUNT])
{
    assert(a && gflops);
    gflops[GPO_PREC_FP32] = gpo_peak_gflops(cus, clock_mhz, 2.0 * a->fp32_lanes_per_cu);
    for (int p = GPO_PREC_FP32 + 1; p < GPO_PREC_COUNT; p++)
        gflops[p] = gpo_peak_gflops(cus, clock_mhz, a->matrix_per_clock[p]);
}

int gpo_arch_amd_rocm_dropped(const gpo_arch_amd_info *a, int major, int minor, char *why,
                              size_t cap)
{
    assert(a && why && cap > 0);
    why[0] = '\0';
    if (major <= 0)
        return 0;
    for (size_t i = 0; i < sizeof dropped_rows / sizeof dropped_rows[0]; i++) {
        const dropped_row *d = &dropped_rows[i];
        if (strcmp(d->gfx, a->gfx) != 0)
            continue;
        if (major < d->major || (major == d->major && minor < d->minor))
            return 0;
        gpo_snprintf(why, cap,
                     "ROCm %d.%d no longer supports %s (dropped in ROCm %d.%d: %s); ROCm %s is "
                     "the last release that does",
                     major, minor, a->gfx, d->major, d->minor, d->source, d->last);
        return 1;
    }
    return 0;
}

int gpo_arch_amd_gfx_from_version(uint32_t version, char *out, size_t cap)
{
    uint32_t major = version / 10000u;
    uint32_t minor = (version / 100u) % 100u;
    uint32_t step = version % 100u;
    assert(out && cap > 0);
    out[0] = '\0';
    /* Minor and stepping are single hex digits in the target name. */
    if (major == 0 || major > 99 || minor > 15 || step > 15)
        return -1;
    int n = snprintf(out, cap, "gfx%u%x%x", major, minor, step);
    if (n < 0 || (size_t)n >= cap) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}
