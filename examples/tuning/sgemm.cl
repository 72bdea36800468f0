/* A tiled SGEMM in OpenCL C for the tuner: C = alpha * A * B + beta * C.
 *
 * All matrices are row-major floats: A is M x K, B is K x N, C is M x N,
 * with leading dimensions K, N and N (the arguments and layout of the CUDA
 * example, sgemm.cu, so one spec idea serves both).
 *
 * Tunable parameters, passed as -D defines (sgemm.json lists their values
 * and constraints):
 *   MWG, NWG  the work-group's tile of C: MWG rows by NWG columns
 *   KWG       the K-slice a work-group works on per step: the depth of the
 *             staged tiles, or (nothing staged) how far the k loop unrolls
 *   MWI, NWI  the rows and columns of C one work-item computes
 *   VW        vector width of the loads, FMAs and stores along N: 4, 8, 16
 *   SA, SB    1: stage the A (or B) tile in local memory; 0: read it from
 *             global memory in the inner loop
 *
 * Launch geometry: global = {N / NWI, M / MWI}, local = {NWG / NWI,
 * MWG / MWI}. Unlike the GPU-shaped CUDA kernel (rows and vectors
 * interleaved across threads so that neighbours read neighbours), a
 * work-item here owns a contiguous MWI x NWI block of C: on a CPU one
 * work-item is one core's register block, and contiguous rows of B are what
 * its vector loads and the hardware prefetcher want.
 *
 * How it is shaped for PoCL's CPU device (pthread), which runs a work-group
 * as one function on one thread, looping over its work-items between
 * barriers, and leaves vectorisation to LLVM:
 *   - The register block is explicit: MWI x NWI/VW accumulators of a floatVW
 *     type, every loop over them fully unrolled, fma() rather than mad()
 *     (which PoCL lowers to a separate multiply and add). Without the
 *     unrolling the accumulators live on the stack and the kernel runs at a
 *     sixth of the speed.
 *   - Nothing depends on LLVM vectorising across work-items: PoCL only does
 *     that for a loop-free region, and the k loop is never loop-free.
 *   - With a barrier in the kernel (SA or SB), PoCL adds an implicit barrier
 *     to every innermost loop whose trip count is the same for all
 *     work-items, and then runs that loop's body for all work-items per
 *     iteration: the accumulators would go through memory at every k. The
 *     compute loop's bound is therefore written so that it looks
 *     work-item dependent (kend below) and it stays one loop per work-item.
 *   - The staging copies whole rows per work-item (a plain copy loop LLVM
 *     vectorises), not one element per work-item with divisions: that made
 *     staged configurations 2x slower. Staging then acts as packing: the B
 *     tile becomes a contiguous KWG x NWG block that stays in L1 while all
 *     the group's rows use it.
 *
 * A configuration is legal when M % MWG == 0, N % NWG == 0, K % KWG == 0,
 * MWG % MWI == 0, NWG % NWI == 0 and NWI % VW == 0; sgemm.json adds the
 * constraints that keep the space to configurations worth timing. */

#ifndef MWG
#define MWG 32
#endif
#ifndef NWG
#define NWG 64
#endif
#ifndef KWG
#define KWG 1
#endif
#ifndef MWI
#define MWI 8
#endif
#ifndef NWI
#define NWI 32
#endif
#ifndef VW
#define VW 16
#endif
#ifndef SA
#define SA 0
#endif
#ifndef SB
#define SB 0
#endif

#if MWG % MWI != 0 || NWG % NWI != 0 || NWI % VW != 0
#error "MWG % MWI, NWG % NWI and NWI % VW must all be 0"
#endif

#define MDIM (MWG / MWI) /* work-items per group along M */
#define NDIM (NWG / NWI) /* ... along N */
#define NTHREADS (MDIM * NDIM)
#define NV (NWI / VW) /* vectors per work-item row */
#define CAT(a, b) a##b
#define XCAT(a, b) CAT(a, b)

#if VW == 1
typedef float vec;
#elif VW == 2 || VW == 4 || VW == 8 || VW == 16
typedef XCAT(float, VW) vec;
#else
#error "VW must be 1, 2, 4, 8 or 16"
#endif

__kernel __attribute__((reqd_work_group_size(NDIM, MDIM, 1))) void
sgemm(int M, int N, int K, float alpha, __global const float *restrict A,
      __global const float *restrict B, float beta, __global float *restrict C)
{
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int mg = get_group_id(1) * MWG, ng = get_group_id(0) * NWG; /* the group's tile */
    const int mi = ty * MWI, ni = tx * NWI; /* the work-item's block within it */
    const __global vec *Bv = (const __global vec *)B;
#if SA || SB
    const int tid = ty * NDIM + tx;
    /* KWG plus a term that is always 0 but that PoCL cannot prove uniform:
     * keeps the compute loop free of implicit barriers (see above). */
    const int kend = KWG + (tid >> 30);
#else
    const int kend = KWG;
#endif
#if SA
    __local float As[MWG * KWG];
#endif
#if SB
    __local vec Bs[KWG * (NWG / VW)];
#endif
    vec acc[MWI][NV];
    (void)M;

    _Pragma("unroll") for (int i = 0; i < MWI; i++)
        _Pragma("unroll") for (int j = 0; j < NV; j++) acc[i][j] = (vec)(0.0f);

    for (int k0 = 0; k0 < K; k0 += KWG) {
#if SA
        for (int r = tid; r < MWG; r += NTHREADS) {
            const __global float *src = &A[(mg + r) * K + k0];
            for (int c = 0; c < KWG; c++)
                As[r * KWG + c] = src[c];
        }
#endif
#if SB
        for (int r = tid; r < KWG; r += NTHREADS) {
            const __global vec *src = &Bv[((k0 + r) * N + ng) / VW];
            for (int c = 0; c < NWG / VW; c++)
                Bs[r * (NWG / VW) + c] = src[c];
        }
#endif
#if SA || SB
        barrier(CLK_LOCAL_MEM_FENCE);
        _Pragma("unroll 1")
#else
        _Pragma("unroll")
#endif
        for (int k = 0; k < kend; k++) {
            vec b[NV];
            _Pragma("unroll") for (int j = 0; j < NV; j++)
#if SB
                b[j] = Bs[k * (NWG / VW) + ni / VW + j];
#else
                b[j] = Bv[((k0 + k) * N + ng + ni) / VW + j];
#endif
            _Pragma("unroll") for (int i = 0; i < MWI; i++) {
#if SA
                const vec a = (vec)(As[(mi + i) * KWG + k]);
#else
                const vec a = (vec)(A[(mg + mi + i) * K + k0 + k]);
#endif
                _Pragma("unroll") for (int j = 0; j < NV; j++) acc[i][j] = fma(a, b[j], acc[i][j]);
            }
        }
#if SA || SB
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }

    _Pragma("unroll") for (int i = 0; i < MWI; i++)
        _Pragma("unroll") for (int j = 0; j < NV; j++)
        {
            __global vec *c = (__global vec *)&C[(mg + mi + i) * N + ng + ni + j * VW];
            *c = alpha * acc[i][j] + (beta != 0.0f ? beta * *c : (vec)(0.0f));
        }
}
