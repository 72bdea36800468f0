/* Peak-throughput estimates by precision, as the architecture tables
 * (nvidia.c, amd.c) give them and the device record keeps them
 * (src/device.h): the one vocabulary the backends fill and selection ranks
 * by (src/select.c). Estimates, not measurements: dense (no structured
 * sparsity), FP32 accumulation, the boost clock the driver reports. */
#ifndef GPO_ARCH_PEAKS_H
#define GPO_ARCH_PEAKS_H

#include <stdint.h>

/* The precisions a plan may run matrix work in. FP32 is the vector units'
 * rate (est_gflops); the others are the matrix units' (tensor cores, MFMA,
 * WMMA). */
typedef enum gpo_precision {
    GPO_PREC_FP32 = 0,
    GPO_PREC_TF32 = 1,
    GPO_PREC_FP16 = 2,
    GPO_PREC_BF16 = 3,
    GPO_PREC_FP8 = 4,
    GPO_PREC_COUNT = 5
} gpo_precision;

/* "fp32", "tf32", "fp16", "bf16", "fp8". */
static inline const char *gpo_precision_name(int p)
{
    static const char *const names[GPO_PREC_COUNT] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
    return p >= 0 && p < GPO_PREC_COUNT ? names[p] : "?";
}

/* GFLOP/s of `units` (SMs, CUs) at `clock_mhz`, each doing `per_clock`
 * floating-point operations per clock (an FMA counts two); 0 when any is
 * unknown (<= 0). */
static inline double gpo_peak_gflops(int32_t units, int32_t clock_mhz, double per_clock)
{
    if (units <= 0 || clock_mhz <= 0 || per_clock <= 0)
        return 0.0;
    return (double)units * per_clock * clock_mhz / 1000.0;
}

#endif
