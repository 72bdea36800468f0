/* A 1-D stencil of radius 3 (7 points, fixed weights), one output per
 * work-item, the edges clamped: a streaming kernel whose group size is the
 * plan's launch.block_size. */
__constant float w[7] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};

__kernel void stencil(const int n, __global const float *restrict in, __global float *restrict out)
{
    const int i = (int)get_global_id(0);
    if (i >= n)
        return;
    float acc = 0.0f;
    for (int k = -3; k <= 3; k++) {
        int j = clamp(i + k, 0, n - 1);
        acc += w[k + 3] * in[j];
    }
    out[i] = acc;
}
