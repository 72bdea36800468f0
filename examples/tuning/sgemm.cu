/* A tiled SGEMM in CUDA C for the tuner: C = alpha * A * B + beta * C.
 *
 * All matrices are row-major floats: A is M x K, B is K x N, C is M x N,
 * with leading dimensions K, N and N. Compiled with NVRTC (the CUDA
 * backend's program_build); the kernel is extern "C" so its name is not
 * mangled.
 *
 * Tunable parameters, passed as -D defines (the same names as the OpenCL
 * example; docs/cuda.md, "The SGEMM example"):
 *   MWG, NWG  the block's tile of C: MWG rows by NWG columns
 *   KWG       the K-slice of A and B a block works on per step
 *   MWI, NWI  the rows and columns of C one thread computes
 *   VW        vector width of the loads and stores along N: 1, 2 or 4
 *   SA, SB    1: stage the A (or B) tile in shared memory; 0: read it
 *             from global memory in the inner loop
 *
 * Launch geometry: a block of (NWG/NWI) x (MWG/MWI) threads per MWG x NWG
 * tile of C, a grid of (N/NWG) x (M/MWG) blocks. In the runtime ops'
 * OpenCL convention: global = {N/NWI, M/MWI}, local = {NWG/NWI, MWG/MWI}.
 *
 * A configuration is legal when
 *   M % MWG == 0, N % NWG == 0, K % KWG == 0,
 *   MWG % MWI == 0, NWG % NWI == 0, NWI % VW == 0,
 *   (MWG/MWI) * (NWG/NWI) <= 1024 (and the device's limit),
 *   4 * (SA*MWG*KWG + SB*KWG*NWG) <= 48 KiB (static shared memory).
 *
 * The same source compiles as C11 on the host (tests/backends/cuda's
 * host emulation runs it to check the arithmetic of every staging and
 * vector variant), so it keeps to the common subset of C and CUDA C++. */

#ifndef MWG
#define MWG 64
#endif
#ifndef NWG
#define NWG 64
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MWI
#define MWI 4
#endif
#ifndef NWI
#define NWI 4
#endif
#ifndef VW
#define VW 4
#endif
#ifndef SA
#define SA 1
#endif
#ifndef SB
#define SB 1
#endif

/* Threads per block in each direction. */
#define MDIM (MWG / MWI)
#define NDIM (NWG / NWI)
#define NTHREADS (MDIM * NDIM)
/* Vectors of VW floats per thread along N. */
#define NVEC (NWI / VW)

#if VW == 1
typedef float vecw;
#define VGET(v, i) (v)
#elif VW == 2
typedef float2 vecw;
#define VGET(v, i) ((i) == 0 ? (v).x : (v).y)
#elif VW == 4
typedef float4 vecw;
#define VGET(v, i) ((i) == 0 ? (v).x : (i) == 1 ? (v).y : (i) == 2 ? (v).z : (v).w)
#else
#error "VW must be 1, 2 or 4"
#endif

#if MWG % MWI != 0 || NWG % NWI != 0 || NWI % VW != 0
#error "MWG % MWI, NWG % NWI and NWI % VW must all be 0"
#endif
#if NTHREADS > 1024
#error "(MWG/MWI) * (NWG/NWI) threads exceed a block"
#endif
#if 4 * (SA * MWG * KWG + SB * KWG * NWG) > 49152
#error "the staged tiles exceed 48 KiB of static shared memory"
#endif

#ifdef __cplusplus
extern "C"
#endif
    __global__ void __launch_bounds__(NTHREADS)
        sgemm(int M, int N, int K, float alpha, const float *__restrict__ A,
              const float *__restrict__ B, float beta, float *__restrict__ C)
{
    const int tx = threadIdx.x; /* along N */
    const int ty = threadIdx.y; /* along M */
#if SA || SB
    const int tid = ty * NDIM + tx; /* for the cooperative tile loads */
#endif
    const int m0 = blockIdx.y * MWG; /* the block's first row of C */
    const int n0 = blockIdx.x * NWG; /* the block's first column of C */
    const vecw *Bv = (const vecw *)B;
    float acc[MWI][NWI];

#if SA
    __shared__ float As[MWG][KWG];
#endif
#if SB
    __shared__ vecw Bs[KWG][NWG / VW];
#endif
    (void)M;

    for (int i = 0; i < MWI; i++)
        for (int j = 0; j < NWI; j++)
            acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += KWG) {
#if SA
        /* Consecutive threads read consecutive elements of an A row. */
        for (int idx = tid; idx < MWG * KWG; idx += NTHREADS)
            As[idx / KWG][idx % KWG] = A[(m0 + idx / KWG) * K + k0 + idx % KWG];
#endif
#if SB
        /* ...and consecutive vectors of a B row. */
        for (int idx = tid; idx < KWG * (NWG / VW); idx += NTHREADS)
            Bs[idx / (NWG / VW)][idx % (NWG / VW)] =
                Bv[((k0 + idx / (NWG / VW)) * N + n0) / VW + idx % (NWG / VW)];
#endif
#if SA || SB
        __syncthreads();
#endif
#pragma unroll
        for (int k = 0; k < KWG; k++) {
            float a[MWI];
            vecw b[NVEC];
#pragma unroll
            for (int i = 0; i < MWI; i++) {
                /* Rows are interleaved: thread ty takes ty, ty + MDIM, ... */
#if SA
                a[i] = As[ty + i * MDIM][k];
#else
                a[i] = A[(m0 + ty + i * MDIM) * K + k0 + k];
#endif
            }
#pragma unroll
            for (int g = 0; g < NVEC; g++) {
                /* Vector g of the thread: the tx-th of the g-th row of
                 * vectors across the block, so neighbours read neighbours. */
#if SB
                b[g] = Bs[k][g * NDIM + tx];
#else
                b[g] = Bv[((k0 + k) * N + n0) / VW + g * NDIM + tx];
#endif
            }
#pragma unroll
            for (int i = 0; i < MWI; i++)
#pragma unroll
                for (int g = 0; g < NVEC; g++)
#pragma unroll
                    for (int v = 0; v < VW; v++)
                        acc[i][g * VW + v] += a[i] * VGET(b[g], v);
        }
#if SA || SB
        __syncthreads();
#endif
    }

#pragma unroll
    for (int i = 0; i < MWI; i++) {
        const int m = m0 + ty + i * MDIM;
#pragma unroll
        for (int g = 0; g < NVEC; g++) {
            const int n = n0 + (g * NDIM + tx) * VW;
#pragma unroll
            for (int v = 0; v < VW; v++) {
                float *c = &C[m * N + n + v];
                *c = alpha * acc[i][g * VW + v] + (beta != 0.0f ? beta * *c : 0.0f);
            }
        }
    }
}
