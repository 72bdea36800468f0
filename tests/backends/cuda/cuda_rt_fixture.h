/* A runtime session on the CUDA test doubles, shared by the runtime
 * tests: the doubles' controls, and a session on an H100, a GPU newer
 * than NVRTC 13.0 knows (capability 13.0) or a K80 that opens, builds the
 * `scale` kernel and closes, checking that nothing is left behind. */
#ifndef GPO_CUDA_RT_FIXTURE_H
#define GPO_CUDA_RT_FIXTURE_H

#include "cuda/cuda_backend.h"
#include "cuda/cuda_load.h"
#include "cuda_test_util.h"

#define RT_H100 0
#define RT_FUTURE 1 /* compute capability 13.0: newer than NVRTC 13.0 knows */
#define RT_K80 2

typedef struct rt_doubles {
    fake_cuda full, r12, legacy;
    fake_nvrtc nvrtc, nvrtc11;
    const gpo_runtime_ops *ops;
} rt_doubles;
extern rt_doubles rtd;

/* extern "C" __global__ void scale(float *x, float a, int n) */
extern const char rt_scale_src[];

typedef struct rt_fixture {
    cuda_env e;
    void *state;
    const fake_cuda *f;
    gpo_rt *rt;
} rt_fixture;

/* cmocka group setup: opens every double. */
int rt_doubles_setup(void **state);

/* Loads `library` (describing the H100, the 13.0 GPU and the K80) with
 * NVRTC `nvrtc_lib` and the double's fault rules `fail` (NULL: none), and
 * opens a session on device `index`. */
void rt_start_failing(rt_fixture *x, const char *library, const fake_cuda *f, const char *nvrtc_lib,
                      int index, const char *fail);
void rt_start(rt_fixture *x, const char *library, const fake_cuda *f, const char *nvrtc_lib,
              int index);
/* Closes and unloads; no context, pushed context or object may be left. */
void rt_stop(rt_fixture *x);
/* Builds rt_scale_src and returns its kernel. */
gpo_rt_kernel *rt_scale_kernel(rt_fixture *x, gpo_rt_prog **prog);

#endif
