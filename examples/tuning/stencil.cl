/* A 2-D convolution (an FS x FS stencil with weights) in OpenCL C for the
 * tuner:
 *
 *     out[y][x] = sum over i, j < FS of in[y + i][x + j] * w[i][j]
 *
 * `in` is the W x H image with its halo, (H + FS - 1) rows of pitch
 * W + FS - 1; `out` is W x H; `w` holds FS x FS weights, row-major.
 *
 * Tunable parameters, passed as -D defines (stencil.json):
 *   TBX, TBY    the work-group's tile of outputs: TBX columns by TBY rows
 *   WPTX, WPTY  the outputs one work-item computes: WPTX columns (WPTX/VW
 *               vectors) by WPTY rows
 *   VW          vector width along x: 4, 8, 16
 *   LM          1: stage the group's input tile and halo in local memory;
 *               0: read the input from global memory
 *   FS          the filter size: a parameter with a single value, so the
 *               loops over the filter unroll at compile time
 *
 * Launch geometry: global = {W / WPTX, H / WPTY}, local = {TBX / WPTX,
 * TBY / WPTY}.
 *
 * A work-item keeps WPTY x WPTX/VW accumulators in registers and walks the
 * WPTY + FS - 1 input rows its outputs need once: each input vector is
 * loaded once and added, with the right weight, into every output row that
 * reads it. Everything is unrolled, so the compiler sees the loads as
 * registers. For PoCL (see sgemm.cl) the local-memory variant copies whole
 * rows per work-item, a loop LLVM vectorises, and sets the accumulators to
 * zero after the barrier so that they never live across it. */

#ifndef FS
#define FS 5
#endif
#ifndef TBX
#define TBX 64
#endif
#ifndef TBY
#define TBY 8
#endif
#ifndef WPTX
#define WPTX 32
#endif
#ifndef WPTY
#define WPTY 4
#endif
#ifndef VW
#define VW 16
#endif
#ifndef LM
#define LM 0
#endif

#if TBX % WPTX != 0 || TBY % WPTY != 0 || WPTX % VW != 0
#error "TBX % WPTX, TBY % WPTY and WPTX % VW must all be 0"
#endif

#define NVX (WPTX / VW)  /* vectors per output row of a work-item */
#define LX (TBX / WPTX)  /* work-items per group along x */
#define LY (TBY / WPTY)  /* ... along y */
#define NT (LX * LY)
#define TW (TBX + FS - 1) /* the staged tile with its halo */
#define TH (TBY + FS - 1)
#define CAT(a, b) a##b
#define XCAT(a, b) CAT(a, b)

#if VW == 2 || VW == 4 || VW == 8 || VW == 16
typedef XCAT(float, VW) vec;
#define VLOAD(p) XCAT(vload, VW)(0, p)
#define VSTORE(v, p) XCAT(vstore, VW)(v, 0, p)
#else
#error "VW must be 2, 4, 8 or 16"
#endif

__kernel __attribute__((reqd_work_group_size(LX, LY, 1))) void
conv2d(int W, int H, __global const float *restrict in, __constant float *restrict w,
       __global float *restrict out)
{
    const int pitch = W + FS - 1;
    const int x0 = get_group_id(0) * TBX, y0 = get_group_id(1) * TBY;
    const int xi = get_local_id(0) * WPTX, yi = get_local_id(1) * WPTY;
    (void)H;
#if LM
    __local float tile[TH * TW];
    const int tid = get_local_id(1) * LX + get_local_id(0);
    for (int r = tid; r < TH; r += NT) {
        const __global float *src = &in[(y0 + r) * pitch + x0];
        for (int c = 0; c < TW; c++)
            tile[r * TW + c] = src[c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#define SRC(t, j) (&tile[(yi + (t)) * TW + xi + (j)])
#else
#define SRC(t, j) (&in[(y0 + yi + (t)) * pitch + x0 + xi + (j)])
#endif
    vec acc[WPTY][NVX];
    _Pragma("unroll") for (int r = 0; r < WPTY; r++)
        _Pragma("unroll") for (int v = 0; v < NVX; v++) acc[r][v] = (vec)(0.0f);

    /* Input row t feeds output row r through filter row i = t - r. */
    _Pragma("unroll") for (int t = 0; t < WPTY + FS - 1; t++)
        _Pragma("unroll") for (int j = 0; j < FS; j++)
        {
            vec x[NVX];
            _Pragma("unroll") for (int v = 0; v < NVX; v++) x[v] = VLOAD(SRC(t, j + v * VW));
            _Pragma("unroll") for (int r = 0; r < WPTY; r++)
            {
                const int i = t - r;
                if (i >= 0 && i < FS) {
                    const vec c = (vec)(w[i * FS + j]);
                    _Pragma("unroll") for (int v = 0; v < NVX; v++) acc[r][v] =
                        fma(c, x[v], acc[r][v]);
                }
            }
        }

    _Pragma("unroll") for (int r = 0; r < WPTY; r++)
        _Pragma("unroll") for (int v = 0; v < NVX; v++)
            VSTORE(acc[r][v], &out[(y0 + yi + r) * W + x0 + xi + v * VW]);
}
