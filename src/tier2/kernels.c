/* The kernels of the generic tier-2 engine, once in OpenCL C and once in
 * CUDA C (which hiprtc also compiles for HIP). Both texts define the same
 * three kernels with the same argument order:
 *   gpo_t2_copy(const uint *a, uint *b, uint n)         b[i] = a[i], i < n
 *   gpo_t2_empty()                                      nothing: launch latency
 *   gpo_t2_reduce(const uint *in, uint *out, uint n [, local uint *tmp])
 *       each group sums a grid-stride share of in[] into out[group]
 * The reduction's scratch is the last argument in OpenCL and the dynamic
 * shared memory in CUDA/HIP, whose kernel_set_local takes no parameter
 * slot (backend.h), so argument indices 0..2 are the same everywhere.
 * The reduction's tree needs a power-of-two group size; the engine only
 * sweeps such sizes. Integers keep the check exact (a float sum of 2^22
 * ones would round).
 *
 * The texts are hashed into every cache key, so editing a kernel makes
 * earlier measurements miss instead of answering for different code. */
#include <string.h>

#include "tier2/bench.h"

static const char opencl_source[] =
    "__kernel void gpo_t2_copy(__global const uint *restrict a, __global uint *restrict b,\n"
    "                          uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        b[i] = a[i];\n"
    "}\n"
    "\n"
    "__kernel void gpo_t2_empty(void)\n"
    "{\n"
    "}\n"
    "\n"
    "__kernel void gpo_t2_reduce(__global const uint *restrict in, __global uint *restrict out,\n"
    "                            uint n, __local uint *tmp)\n"
    "{\n"
    "    size_t l = get_local_id(0), size = get_local_size(0);\n"
    "    size_t step = get_global_size(0);\n"
    "    uint s = 0;\n"
    "    for (size_t i = get_global_id(0); i < n; i += step)\n"
    "        s += in[i];\n"
    "    tmp[l] = s;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (size_t o = size / 2; o > 0; o >>= 1) {\n"
    "        if (l < o)\n"
    "            tmp[l] += tmp[l + o];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (l == 0)\n"
    "        out[get_group_id(0)] = tmp[0];\n"
    "}\n";

/* extern "C": NVRTC and hiprtc would otherwise mangle the names that
 * kernel_create looks up. */
static const char cuda_source[] =
    "extern \"C\" __global__ void gpo_t2_copy(const unsigned int *__restrict__ a,\n"
    "                                       unsigned int *__restrict__ b, unsigned int n)\n"
    "{\n"
    "    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        b[i] = a[i];\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void gpo_t2_empty(void)\n"
    "{\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void gpo_t2_reduce(const unsigned int *__restrict__ in,\n"
    "                                         unsigned int *__restrict__ out, unsigned int n)\n"
    "{\n"
    "    extern __shared__ unsigned int tmp[];\n"
    "    unsigned int l = threadIdx.x, size = blockDim.x;\n"
    "    unsigned int step = gridDim.x * size;\n"
    "    unsigned int s = 0;\n"
    "    for (unsigned int i = blockIdx.x * size + l; i < n; i += step)\n"
    "        s += in[i];\n"
    "    tmp[l] = s;\n"
    "    __syncthreads();\n"
    "    for (unsigned int o = size / 2; o > 0; o >>= 1) {\n"
    "        if (l < o)\n"
    "            tmp[l] += tmp[l + o];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (l == 0)\n"
    "        out[blockIdx.x] = tmp[0];\n"
    "}\n";

static const struct {
    const char *language;
    const char *source;
} sources[] = {
    {"opencl-c", opencl_source},
    {"cuda", cuda_source},
    {"hip", cuda_source},
};

const char *gpo_t2_kernel_source(const char *language)
{
    if (!language)
        return NULL;
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
        if (strcmp(sources[i].language, language) == 0)
            return sources[i].source;
    return NULL;
}
