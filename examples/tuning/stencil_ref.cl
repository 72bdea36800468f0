/* The stencil reference: one work-item per output, the two filter loops
 * written out. Same arguments as stencil.cl; launched on global = {W, H}.
 * FS comes from the build options (stencil.json: "-DFS=5"). */
__kernel void conv2d_ref(int W, int H, __global const float *in, __constant float *w,
                         __global float *out)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= W || y >= H)
        return;
    const int pitch = W + FS - 1;
    float sum = 0.0f;
    for (int i = 0; i < FS; i++)
        for (int j = 0; j < FS; j++)
            sum += in[(y + i) * pitch + x + j] * w[i * FS + j];
    out[y * W + x] = sum;
}
