/* The SGEMM reference: one work-item per element of C, a plain dot product.
 * Obviously correct, not fast; the tuner runs it once and compares every
 * candidate's C with its output element by element. Same arguments as
 * sgemm.cl; launched on global = {N, M}. */
__kernel void sgemm_ref(int M, int N, int K, float alpha, __global const float *A,
                        __global const float *B, float beta, __global float *C)
{
    const int n = get_global_id(0), m = get_global_id(1);
    if (m >= M || n >= N)
        return;
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
        sum += A[m * K + k] * B[k * N + n];
    C[m * N + n] = alpha * sum + (beta != 0.0f ? beta * C[m * N + n] : 0.0f);
}
