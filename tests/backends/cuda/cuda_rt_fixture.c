/* The shared runtime-session fixture (cuda_rt_fixture.h). */
#include "cuda_rt_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"

rt_doubles rtd;

const char rt_scale_src[] = "extern \"C\" __global__ void scale(float *x, float a, int n)\n"
                            "{\n"
                            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                            "    if (i < n)\n"
                            "        x[i] *= a;\n"
                            "}\n";

int rt_doubles_setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    rtd.ops = gpo_backend_cuda.runtime;
    return fake_cuda_open(&rtd.full, FAKE_CUDA_FULL) || fake_cuda_open(&rtd.r12, FAKE_CUDA_R12) ||
           fake_cuda_open(&rtd.legacy, FAKE_CUDA_LEGACY) ||
           fake_nvrtc_open(&rtd.nvrtc, FAKE_NVRTC) || fake_nvrtc_open(&rtd.nvrtc11, FAKE_NVRTC11);
}

/* Loads `library` describing an H100, a capability-13.0 GPU and a K80, with
 * NVRTC `nvrtc_lib` and the double's fault rules `fail` (NULL: none), and
 * opens a session on device `index`. */
void rt_start_failing(rt_fixture *x, const char *library, const fake_cuda *f, const char *nvrtc_lib,
                      int index, const char *fail)
{
    gpo_backend_report rep;
    gpo_route route;
    memset(x, 0, sizeof *x);
    x->f = f;
    cuda_env_init(&x->e, library, NO_KERNEL_DRIVER);
    cuda_env_set_nvrtc(&x->e, nvrtc_lib);
    fake_cuda_configure(f, fake_devices("h100-sxm5.json", "future-cc13.json", "k80.json", NULL),
                        NULL, fail);
    fake_nvrtc_configure(&rtd.nvrtc, NULL, NULL, NULL);
    assert_int_equal(gpo_backend_cuda.load(&x->e.env, &x->state, &rep), GPUOPT_OK);
    memset(&route, 0, sizeof route);
    route.index = index;
    if (rtd.ops->open(x->state, &route, &x->rt) != GPUOPT_OK)
        fail_msg("open: %s", gpo_detail_get());
}

void rt_start(rt_fixture *x, const char *library, const fake_cuda *f, const char *nvrtc_lib,
              int index)
{
    rt_start_failing(x, library, f, nvrtc_lib, index, NULL);
}

void rt_stop(rt_fixture *x)
{
    rtd.ops->close(x->rt);
    assert_int_equal(x->f->live_contexts(), 0);
    assert_int_equal(x->f->stack_depth(), 0);
    assert_int_equal(x->f->live_objects(NULL), 0);
    gpo_backend_cuda.unload(x->state);
}

gpo_rt_kernel *rt_scale_kernel(rt_fixture *x, gpo_rt_prog **prog)
{
    gpo_rt_kernel *k = NULL;
    char *log = NULL;
    if (rtd.ops->program_build(x->rt, rt_scale_src, NULL, prog, &log))
        fail_msg("build: %s", gpo_detail_get());
    assert_null(log);
    assert_int_equal(rtd.ops->kernel_create(x->rt, *prog, "scale", &k), GPUOPT_OK);
    return k;
}
