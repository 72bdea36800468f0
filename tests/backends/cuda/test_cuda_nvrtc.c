/* The real NVRTC through the backend's NVRTC path (cuda_nvrtc.c), where it
 * is installed (the CUDA toolkit's libnvrtc.so.*; CMake passes the one it
 * found, else the default sonames are tried). Without it the test exits 77
 * and CTest reports it skipped, with the reason printed.
 *   - CUDA C compiles for sm_70, sm_80 and sm_90 where this NVRTC supports
 *     them (a CUBIN, and PTX when asked for compute_XY); where it does not
 *     (NVRTC 13 dropped sm_70), the refusal names the range it supports;
 *   - a device newer than NVRTC gets PTX of the newest architecture it knows;
 *   - a compile error comes back with NVRTC's log;
 *   - the real CUBIN and PTX go through the runtime ops into the libcuda
 *     test double: modules load, kernels are found, parameters are checked,
 *     and the launch says a real GPU is needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_backend.h"
#include "cuda/cuda_load.h"
#include "cuda_test_util.h"
#include "util/strutil.h"

#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"

static const char scale_src[] = "extern \"C\" __global__ void scale(float *x, float a, int n)\n"
                                "{\n"
                                "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "    if (i < n)\n"
                                "        x[i] *= a;\n"
                                "}\n";

static gpo_config cfg;
static gpo_nvrtc *nv;
static fake_cuda full;

static int has_arch(int arch)
{
    for (int i = 0; i < nv->n_archs; i++)
        if (nv->archs[i] == arch)
            return 1;
    return 0;
}

static void real_nvrtc_compiles_cuda_c_for_each_architecture(void **state)
{
    (void)state;
    static const int archs[] = {70, 80, 90};
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        int a = archs[i];
        gpo_nvrtc_image img;
        char *log = NULL, opt[64], target[16];
        gpuopt_status st = gpo_nvrtc_compile(nv, scale_src, NULL, a / 10, a % 10, &img, &log);
        if (!has_arch(a)) {
            char says[64];
            assert_int_equal(st, GPUOPT_ERR_UNSUPPORTED);
            snprintf(says, sizeof says, "this device is sm_%d, older than all of them", a);
            assert_non_null(strstr(gpo_detail_get(), says));
            print_message("sm_%d: NVRTC %d.%d does not compile for it; its refusal: %s\n", a,
                          nv->major, nv->minor, gpo_detail_get());
            assert_null(log);
            continue;
        }
        if (st)
            fail_msg("sm_%d: %s", a, gpo_detail_get());
        snprintf(target, sizeof target, "sm_%d", a);
        assert_string_equal(img.target, target);
        assert_int_equal(img.cubin, 1);
        assert_true(img.size > 64);
        assert_memory_equal(img.data, "\177ELF", 4);
        gpo_nvrtc_image_free(&img);
        free(log);

        /* PTX when the options ask for the virtual architecture. */
        snprintf(opt, sizeof opt, "--gpu-architecture=compute_%d", a);
        assert_int_equal(gpo_nvrtc_compile(nv, scale_src, opt, a / 10, a % 10, &img, &log),
                         GPUOPT_OK);
        assert_int_equal(img.cubin, 0);
        snprintf(target, sizeof target, ".target sm_%d", a);
        assert_non_null(strstr(img.data, target));
        assert_non_null(strstr(img.data, ".entry scale"));
        assert_int_equal(strlen(img.data) + 1, img.size);
        print_message("sm_%d: CUBIN and PTX (%zu bytes) from NVRTC %d.%d\n", a, img.size, nv->major,
                      nv->minor);
        gpo_nvrtc_image_free(&img);
        free(log);
    }
}

static void device_newer_than_nvrtc_gets_ptx_of_the_newest_it_knows(void **state)
{
    (void)state;
    gpo_nvrtc_image img;
    char *log = NULL, target[32];
    int newest = nv->archs[nv->n_archs - 1];
    assert_int_equal(gpo_nvrtc_compile(nv, scale_src, "", 99, 0, &img, &log), GPUOPT_OK);
    snprintf(target, sizeof target, "compute_%d", newest);
    assert_string_equal(img.target, target);
    assert_int_equal(img.cubin, 0);
    snprintf(target, sizeof target, ".target sm_%d", newest);
    assert_non_null(strstr(img.data, target));
    gpo_nvrtc_image_free(&img);
    free(log);
}

static void compile_error_comes_back_with_nvrtc_s_log(void **state)
{
    (void)state;
    gpo_nvrtc_image img;
    char *log = NULL;
    const char *bad = "extern \"C\" __global__ void broken(float *x) { x[0] = undeclared_thing; }";
    assert_int_equal(gpo_nvrtc_compile(nv, bad, "-DUNUSED=1", 8, 0, &img, &log), GPUOPT_ERR_BUILD);
    assert_non_null(log);
    assert_non_null(strstr(log, "undeclared_thing"));
    assert_non_null(strstr(log, "error"));
    assert_non_null(
        strstr(gpo_detail_get(), "nvrtcCompileProgram failed with NVRTC_ERROR_COMPILATION"));
    assert_non_null(strstr(gpo_detail_get(), "with options -DUNUSED=1"));
    assert_null(img.data);
    free(log);
    /* Quoted options reach NVRTC as one word each. */
    const char *named = "extern \"C\" __global__ void NAME(float *x) { x[0] = SCALE; }";
    assert_int_equal(
        gpo_nvrtc_compile(nv, named, "'-DNAME=my_kernel' \"-DSCALE=2.0f\"", 8, 0, &img, &log),
        GPUOPT_OK);
    free(log);
    gpo_nvrtc_image_free(&img);
    assert_int_equal(gpo_nvrtc_compile(nv, named,
                                       "-DNAME=k -DSCALE=1 --gpu-architecture=compute_80", 8, 0,
                                       &img, &log),
                     GPUOPT_OK);
    assert_non_null(strstr(img.data, ".entry k("));
    free(log);
    gpo_nvrtc_image_free(&img);
}

/* Real CUBIN (H100 double) and real PTX (a device newer than NVRTC) through
 * the runtime ops into the libcuda double. */
static void real_modules_load_into_the_double_and_the_launch_needs_a_gpu(void **state)
{
    (void)state;
    cuda_env e;
    gpo_backend_report rep;
    void *st = NULL;
    const gpo_runtime_ops *ops = gpo_backend_cuda.runtime;
    cuda_env_init(&e, FAKE_CUDA_FULL, NO_KERNEL_DRIVER);
    gpo_config_set_library(&e.cfg, "nvrtc", gpo_config_library(&cfg, "nvrtc"));
    fake_cuda_configure(&full, fake_devices("h100-sxm5.json", "future-cc13.json", NULL), NULL,
                        NULL);
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_OK);

    for (int index = 0; index < 2; index++) {
        gpo_route route;
        gpo_rt *rt = NULL;
        gpo_rt_buf *buf = NULL;
        gpo_rt_prog *prog = NULL;
        gpo_rt_kernel *k = NULL;
        char *log = NULL;
        float a = 2.0f;
        int n = 1024;
        double ns = -1.0;
        size_t global[3] = {1024, 1, 1}, local[3] = {128, 1, 1}, max = 0;
        memset(&route, 0, sizeof route);
        route.index = index;
        assert_int_equal(ops->open(st, &route, &rt), GPUOPT_OK);
        assert_int_equal(ops->buffer_alloc(rt, n * sizeof(float), &buf), GPUOPT_OK);
        if (ops->program_build(rt, scale_src, NULL, &prog, &log))
            fail_msg("cuda:%d: %s", index, gpo_detail_get());
        free(log);
        assert_int_equal(ops->kernel_create(rt, prog, "scale", &k), GPUOPT_OK);
        assert_int_equal(ops->kernel_create(rt, prog, "missing", &(gpo_rt_kernel *){NULL}),
                         GPUOPT_ERR_NOT_FOUND);
        assert_non_null(strstr(gpo_detail_get(), "extern \"C\""));
        assert_int_equal(ops->kernel_max_group(rt, k, &max), GPUOPT_OK);
        assert_int_equal(max, 1024);
        assert_int_equal(ops->kernel_set_buffer(rt, k, 0, buf), GPUOPT_OK);
        if (index == 1) {
            /* PTX tells the double the parameters: a double is not a float. */
            double wrong = 2.0;
            assert_int_equal(ops->kernel_set_scalar(rt, k, 1, &wrong, sizeof wrong),
                             GPUOPT_ERR_INVALID_ARGUMENT);
            assert_non_null(
                strstr(gpo_detail_get(), "parameter 1 of kernel scale is 4 bytes, not 8"));
            assert_int_equal(ops->kernel_set_scalar(rt, k, 3, &n, sizeof n),
                             GPUOPT_ERR_OUT_OF_RANGE);
        }
        assert_int_equal(ops->kernel_set_scalar(rt, k, 1, &a, sizeof a), GPUOPT_OK);
        assert_int_equal(ops->kernel_set_scalar(rt, k, 2, &n, sizeof n), GPUOPT_OK);
        assert_int_equal(ops->launch(rt, k, 1, global, local, &ns), GPUOPT_ERR_UNSUPPORTED);
        assert_non_null(strstr(gpo_detail_get(), "needs a real NVIDIA GPU"));
        print_message("cuda:%d (%s): built with %s; launch: %s\n", index,
                      index ? "a device newer than NVRTC: PTX" : "H100: CUBIN",
                      ops->compiler_version(rt), gpo_detail_get());
        ops->close(rt);
        assert_int_equal(full.live_contexts(), 0);
        assert_int_equal(full.live_objects(NULL), 0);
    }
    gpo_backend_cuda.unload(st);
}

int main(void)
{
    const char *lib = GPO_NVRTC_TEST_LIBRARY;
    memset(&cfg, 0, sizeof cfg);
    if (lib[0])
        gpo_config_set_library(&cfg, "nvrtc", lib);
    if (gpo_nvrtc_open(gpo_config_library(&cfg, "nvrtc"), 0, &nv) != GPUOPT_OK) {
        printf("skipped: no NVRTC to compile with here: %s\n", gpo_detail_get());
        return 77; /* CTest: SKIP_RETURN_CODE */
    }
    printf("NVRTC %d.%d from %s, %d architectures (sm_%d to sm_%d)\n", nv->major, nv->minor,
           nv->library, nv->n_archs, nv->n_archs > 0 ? nv->archs[0] : 0,
           nv->n_archs > 0 ? nv->archs[nv->n_archs - 1] : 0);
    unsetenv("CUDA_VISIBLE_DEVICES");
    if (fake_cuda_open(&full, FAKE_CUDA_FULL))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_nvrtc_compiles_cuda_c_for_each_architecture),
        cmocka_unit_test(device_newer_than_nvrtc_gets_ptx_of_the_newest_it_knows),
        cmocka_unit_test(compile_error_comes_back_with_nvrtc_s_log),
        cmocka_unit_test(real_modules_load_into_the_double_and_the_launch_needs_a_gpu),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    gpo_nvrtc_close(nv);
    return rc;
}
