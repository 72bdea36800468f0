/* The CUDA SGEMM reference: one thread per element of C, a plain dot
 * product. Obviously correct, not fast; the tuner runs it once and compares
 * every candidate's C with its output element by element. Same arguments
 * as sgemm.cu; launched on global = {N, M} (threads). */
extern "C" __global__ void sgemm_ref(int M, int N, int K, float alpha, const float *A,
                                     const float *B, float beta, float *C)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    const int m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m >= M || n >= N)
        return;
    float sum = 0.0f;
    for (int k = 0; k < K; k++)
        sum += A[(size_t)m * K + k] * B[(size_t)k * N + n];
    C[(size_t)m * N + n] = alpha * sum + (beta != 0.0f ? beta * C[(size_t)m * N + n] : 0.0f);
}
