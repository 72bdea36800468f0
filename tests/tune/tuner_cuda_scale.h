/* The tuner the CUDA double's tuner tests share (test_tuner_cuda.c,
 * test_tuner_cuda_fault.c): on cuda:0 of a context of the CUDA backend
 * alone, the kernel scale(x, n) over N = 2^20 floats, one block size per
 * value of `blocks`. Through gpuopt.h alone. */
#ifndef GPO_TESTS_TUNER_CUDA_SCALE_H
#define GPO_TESTS_TUNER_CUDA_SCALE_H

#include "api/api_check.h"

static inline gpuopt_tuner *tuner_cuda_scale(const char *cache_dir, const int64_t *blocks,
                                             int32_t n_blocks, gpuopt_context **ctx,
                                             gpuopt_space **space)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = "cuda";
    o.config_path = "";
    o.cache_dir = cache_dir;
    EXPECT_OK(gpuopt_context_create(&o, ctx));
    gpuopt_device *dev = NULL;
    EXPECT_OK(gpuopt_device_select(*ctx, "cuda:0", &dev));
    EXPECT_OK(gpuopt_space_create(space));
    EXPECT_OK(gpuopt_space_add_int(*space, "BLOCK", blocks, n_blocks));
    EXPECT_OK(gpuopt_space_set_size(*space, "N", 1 << 20));
    gpuopt_tuner *t = NULL;
    EXPECT_OK(gpuopt_tuner_create(*ctx, dev, *space, &t));
    gpuopt_kernel_desc k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.source = "extern \"C\" __global__ void scale(float *x, int n) {\n"
               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (i < n) x[i] *= 2.0f;\n}\n";
    k.entry = "scale";
    k.language = GPUOPT_LANG_CUDA;
    k.global[0] = "N";
    k.local[0] = "BLOCK";
    EXPECT_OK(gpuopt_tuner_set_kernel(t, &k));
    gpuopt_buffer_desc x;
    memset(&x, 0, sizeof x);
    x.struct_size = sizeof x;
    x.type = GPUOPT_ELEM_F32;
    x.count = "N";
    x.init = GPUOPT_INIT_RANDOM;
    x.is_output = 1;
    EXPECT_OK(gpuopt_tuner_set_buffer(t, 0, &x));
    gpuopt_scalar_desc n;
    memset(&n, 0, sizeof n);
    n.struct_size = sizeof n;
    n.type = GPUOPT_ELEM_I32;
    n.expression = "N";
    EXPECT_OK(gpuopt_tuner_set_scalar(t, 1, &n));
    return t;
}

#endif
