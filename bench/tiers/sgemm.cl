/* SGEMM, C = alpha * A * B + beta * C, row-major N x N, one work-item per
 * element of C on a 2-D NDRange. The work-group's shape (from the plan's
 * launch.block_size, split into rows x columns by bench/tiers/levels.c)
 * decides which rows of A and columns of B a group shares in cache. */
__kernel void sgemm(const int n, const float alpha, __global const float *restrict a,
                    __global const float *restrict b, const float beta, __global float *restrict c)
{
    const int col = (int)get_global_id(0);
    const int row = (int)get_global_id(1);
    if (row >= n || col >= n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < n; k++)
        acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = alpha * acc + beta * c[row * n + col];
}
