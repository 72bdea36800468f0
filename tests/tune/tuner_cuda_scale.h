/* The tuner the CUDA and HIP doubles' tuner tests share (test_tuner_cuda.c,
 * test_tuner_cuda_fault.c, test_tuner_isolation.c): on cuda:0 of a context of the CUDA backend
 * alone, the kernel scale(x, n) over N = 2^20 floats, one block size per
 * value of `blocks`. Through gpuopt.h alone. */
#ifndef GPO_TESTS_TUNER_CUDA_SCALE_H
#define GPO_TESTS_TUNER_CUDA_SCALE_H

#include "api/api_check.h"

/* tuner_cuda_scale's tuner on `backend`'s device 0 ("cuda" or "rocm"; the kernel's text is
 * CUDA C++ and HIP alike) over n floats; cache_dir NULL: the default. */
static inline gpuopt_tuner *tuner_gpu_scale(const char *backend, int32_t language,
                                            const char *cache_dir, const int64_t *blocks,
                                            int32_t n_blocks, int64_t n, gpuopt_context **ctx,
                                            gpuopt_space **space)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = backend;
    o.config_path = "";
    o.cache_dir = cache_dir;
    EXPECT_OK(gpuopt_context_create(&o, ctx));
    gpuopt_device *dev = NULL;
    char id[32];
    snprintf(id, sizeof id, "%s:0", backend);
    EXPECT_OK(gpuopt_device_select(*ctx, id, &dev));
    EXPECT_OK(gpuopt_space_create(space));
    EXPECT_OK(gpuopt_space_add_int(*space, "BLOCK", blocks, n_blocks));
    EXPECT_OK(gpuopt_space_set_size(*space, "N", n));
    gpuopt_tuner *t = NULL;
    EXPECT_OK(gpuopt_tuner_create(*ctx, dev, *space, &t));
    gpuopt_kernel_desc k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.source = "extern \"C\" __global__ void scale(float *x, int n) {\n"
               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (i < n) x[i] *= 2.0f;\n}\n";
    k.entry = "scale";
    k.language = language;
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
    gpuopt_scalar_desc sn;
    memset(&sn, 0, sizeof sn);
    sn.struct_size = sizeof sn;
    sn.type = GPUOPT_ELEM_I32;
    sn.expression = "N";
    EXPECT_OK(gpuopt_tuner_set_scalar(t, 1, &sn));
    return t;
}

static inline gpuopt_tuner *tuner_cuda_scale(const char *cache_dir, const int64_t *blocks,
                                             int32_t n_blocks, gpuopt_context **ctx,
                                             gpuopt_space **space)
{
    return tuner_gpu_scale("cuda", GPUOPT_LANG_CUDA, cache_dir, blocks, n_blocks, 1 << 20, ctx,
                           space);
}

#endif
