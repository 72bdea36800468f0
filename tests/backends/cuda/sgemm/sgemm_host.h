/* Just enough CUDA to run examples/tuning/sgemm.cu on the host, as C11:
 * one pthread per CUDA thread of a block, __syncthreads() a barrier among
 * them, __shared__ arrays function-level statics (one block runs at a
 * time), threadIdx/blockIdx thread-local. It checks the kernel's
 * arithmetic and indexing (every staging and vector variant), not its
 * speed. */
#ifndef GPO_SGEMM_HOST_H
#define GPO_SGEMM_HOST_H

typedef struct {
    float x, y;
} float2;
typedef struct {
    float x, y, z, w;
} float4;
typedef struct {
    unsigned x, y, z;
} sgemm_dim3;

extern _Thread_local sgemm_dim3 threadIdx, blockIdx;
void sgemm_host_syncthreads(void);

#define __global__
#define __launch_bounds__(n)
#define __shared__ static
#define __restrict__ restrict
#define __syncthreads() sgemm_host_syncthreads()

/* One compiled configuration: its parameters and its kernel. */
typedef void (*sgemm_fn)(int M, int N, int K, float alpha, const float *restrict A,
                         const float *restrict B, float beta, float *restrict C);

#endif
