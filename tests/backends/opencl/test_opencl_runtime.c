/* The OpenCL runtime ops on PoCL's CPU device, for real: kernels built,
 * launched and checked element by element; every op fed out-of-range sizes
 * and NULL, foreign and wrong-kind handles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ocl_test.h"
#include "cl_device.h"
#include "util/strutil.h"

static ocl_fx fx;
static gpuopt_device *dev;
static const gpo_runtime_ops *ops;

static const char *mix_src =
    "__kernel void mixer(__global const uint *a, __global const uint *b, __global uint *out,\n"
    "                  uint k)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = a[i] * k + (b[i] ^ (uint)i);\n"
    "}\n"
    "__kernel void scratch(__global uint *out, __local uint *tmp)\n"
    "{\n"
    "    size_t l = get_local_id(0);\n"
    "    tmp[l] = (uint)get_global_id(0);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - l];\n"
    "}\n"
    "__kernel void empty(void) {}\n";

static int group_setup(void **state)
{
    (void)state;
    ocl_fx_init(&fx, NULL);
    dev = ocl_fx_open_runtime_device(&fx, 0);
    ops = gpo_backend_opencl.runtime;
    return dev ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    ocl_fx_free(&fx);
    return 0;
}

static int open_rt(void **state)
{
    gpo_rt *rt = NULL;
    if (ops->open(fx.state, &dev->routes[0], &rt) != GPUOPT_OK)
        return -1;
    *state = rt;
    return 0;
}

static int close_rt(void **state)
{
    ops->close(*state);
    return 0;
}

static gpo_rt_kernel *build_kernel(gpo_rt *rt, const char *name, gpo_rt_prog **prog)
{
    char *log = NULL;
    assert_int_equal(ops->program_build(rt, mix_src, "", prog, &log), GPUOPT_OK);
    free(log);
    gpo_rt_kernel *k = NULL;
    assert_int_equal(ops->kernel_create(rt, *prog, name, &k), GPUOPT_OK);
    return k;
}

static void kernel_output_matches_host_on_random_input(void **state)
{
    gpo_rt *rt = *state;
    ocl_test_seed();
    const size_t n = 16384;
    uint32_t *a = malloc(n * 4), *b = malloc(n * 4), *out = malloc(n * 4);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++) {
        a[i] = (uint32_t)rand() ^ ((uint32_t)rand() << 16);
        b[i] = (uint32_t)rand() ^ ((uint32_t)rand() << 16);
    }
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = build_kernel(rt, "mixer", &prog);
    gpo_rt_buf *ba, *bb, *bo;
    assert_int_equal(ops->buffer_alloc(rt, n * 4, &ba), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(rt, n * 4, &bb), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(rt, n * 4, &bo), GPUOPT_OK);
    assert_int_equal(ops->buffer_write(rt, ba, 0, a, n * 4), GPUOPT_OK);
    assert_int_equal(ops->buffer_write(rt, bb, 0, b, n * 4), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 0, ba), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 1, bb), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 2, bo), GPUOPT_OK);

    for (int pass = 0; pass < 2; pass++) {
        uint32_t mul = (uint32_t)rand() | 1u;
        assert_int_equal(ops->kernel_set_scalar(rt, k, 3, &mul, sizeof mul), GPUOPT_OK);
        size_t global[3] = {n, 1, 1}, local[3] = {64, 1, 1};
        double ns = -1;
        if (pass == 0) {
            assert_int_equal(ops->launch(rt, k, 1, global, local, &ns), GPUOPT_OK);
            assert_true(ns > 0);
        } else {
            /* Not timed: returns once enqueued; finish waits. */
            assert_int_equal(ops->launch(rt, k, 1, global, NULL, NULL), GPUOPT_OK);
            assert_int_equal(ops->finish(rt), GPUOPT_OK);
        }
        memset(out, 0, n * 4);
        assert_int_equal(ops->buffer_read(rt, bo, 0, out, n * 4), GPUOPT_OK);
        for (size_t i = 0; i < n; i++) {
            uint32_t want = a[i] * mul + (b[i] ^ (uint32_t)i);
            if (out[i] != want)
                fail_msg("pass %d element %zu: got %u, want %u", pass, i, out[i], want);
        }
    }
    /* A partial read at an offset sees the same data. */
    uint32_t tail[4];
    assert_int_equal(ops->buffer_read(rt, bo, (n - 4) * 4, tail, sizeof tail), GPUOPT_OK);
    assert_memory_equal(tail, out + n - 4, sizeof tail);
    ops->kernel_free(rt, k);
    ops->program_free(rt, prog);
    ops->buffer_free(rt, ba);
    ops->buffer_free(rt, bb);
    ops->buffer_free(rt, bo);
    free(a);
    free(b);
    free(out);
}

static void local_memory_argument_and_group_limit(void **state)
{
    gpo_rt *rt = *state;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = build_kernel(rt, "scratch", &prog);
    size_t max = 0;
    assert_int_equal(ops->kernel_max_group(rt, k, &max), GPUOPT_OK);
    assert_true(max >= 1 && (int64_t)max <= (int64_t)dev->info.max_threads_per_block);
    size_t group = max < 32 ? max : 32, n = group * 8;
    gpo_rt_buf *bo;
    assert_int_equal(ops->buffer_alloc(rt, n * 4, &bo), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 0, bo), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_local(rt, k, 1, group * 4), GPUOPT_OK);
    size_t global[3] = {n, 1, 1}, local[3] = {group, 1, 1};
    double ns = 0;
    assert_int_equal(ops->launch(rt, k, 1, global, local, &ns), GPUOPT_OK);
    uint32_t *out = malloc(n * 4);
    assert_int_equal(ops->buffer_read(rt, bo, 0, out, n * 4), GPUOPT_OK);
    for (size_t i = 0; i < n; i++) {
        size_t g = i / group, l = i % group;
        assert_int_equal(out[i], g * group + (group - 1 - l));
    }
    free(out);
    /* Leave the kernel, program and buffer to close(): nothing may leak. */
}

static void build_error_returns_compiler_log(void **state)
{
    gpo_rt *rt = *state;
    gpo_rt_prog *prog = (gpo_rt_prog *)1;
    char *log = NULL;
    const char *bad = "__kernel void broken(__global int *x) { x[0] = no_such_symbol_here; }";
    assert_int_equal(ops->program_build(rt, bad, NULL, &prog, &log), GPUOPT_ERR_BUILD);
    assert_null(prog);
    assert_non_null(log);
    assert_non_null(strstr(log, "no_such_symbol_here"));
    assert_non_null(strstr(gpo_detail_get(), "no_such_symbol_here"));
    free(log);

    /* Without a log pointer the build still fails cleanly. */
    assert_int_equal(ops->program_build(rt, bad, "", &prog, NULL), GPUOPT_ERR_BUILD);
    /* Options the compiler refuses are a build error with words too. */
    log = NULL;
    assert_int_equal(ops->program_build(rt, mix_src, "-cl-no-such-option", &prog, &log),
                     GPUOPT_ERR_BUILD);
    assert_non_null(log);
    assert_true(strlen(log) > 0);
    free(log);
}

static void unknown_kernel_name_is_not_found(void **state)
{
    gpo_rt *rt = *state;
    gpo_rt_prog *prog = NULL;
    assert_int_equal(ops->program_build(rt, mix_src, "-cl-std=CL1.2", &prog, NULL), GPUOPT_OK);
    gpo_rt_kernel *k = (gpo_rt_kernel *)1;
    assert_int_equal(ops->kernel_create(rt, prog, "nope", &k), GPUOPT_ERR_NOT_FOUND);
    assert_null(k);
    assert_non_null(strstr(gpo_detail_get(), "nope"));
    ops->program_free(rt, prog);
}

static void copies_and_pinned_memory_move_bytes(void **state)
{
    gpo_rt *rt = *state;
    const size_t n = 1 << 20;
    void *pin = NULL;
    assert_int_equal(ops->host_alloc_pinned(rt, n, &pin), GPUOPT_OK);
    assert_non_null(pin);
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)pin)[i] = (unsigned char)(i * 7 + 3);
    gpo_rt_buf *x, *y;
    assert_int_equal(ops->buffer_alloc(rt, n, &x), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(rt, n, &y), GPUOPT_OK);
    assert_int_equal(ops->buffer_write(rt, x, 0, pin, n), GPUOPT_OK);
    double ns = -1;
    assert_int_equal(ops->buffer_copy(rt, y, x, n, &ns), GPUOPT_OK);
    assert_true(ns >= 0);
    assert_int_equal(ops->buffer_copy(rt, y, x, n, NULL), GPUOPT_OK);
    unsigned char *back = malloc(n);
    assert_int_equal(ops->buffer_read(rt, y, 0, back, n), GPUOPT_OK);
    assert_memory_equal(back, pin, n);
    free(back);
    ops->host_free_pinned(rt, pin);
    ops->host_free_pinned(rt, NULL);
    ops->host_free_pinned(rt, (void *)&n); /* not ours: ignored */
    void *left = NULL;
    assert_int_equal(ops->host_alloc_pinned(rt, 4096, &left), GPUOPT_OK); /* for close() */
    ops->buffer_free(rt, x);
    ops->buffer_free(rt, y);
}

static void out_of_range_sizes_are_refused(void **state)
{
    gpo_rt *rt = *state;
    gpo_rt_buf *b = (gpo_rt_buf *)1;
    assert_int_equal(ops->buffer_alloc(rt, 0, &b), GPUOPT_ERR_OUT_OF_RANGE);
    assert_null(b);
    assert_int_equal(ops->buffer_alloc(rt, 64, &b), GPUOPT_OK);
    char host[128] = {0};
    assert_int_equal(ops->buffer_write(rt, b, 0, host, 65), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_write(rt, b, 60, host, 8), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_write(rt, b, 65, host, 1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_write(rt, b, SIZE_MAX, host, 2), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_read(rt, b, 0, host, 0), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_read(rt, b, 8, host, SIZE_MAX), GPUOPT_ERR_OUT_OF_RANGE);
    gpo_rt_buf *c;
    assert_int_equal(ops->buffer_alloc(rt, 32, &c), GPUOPT_OK);
    assert_int_equal(ops->buffer_copy(rt, c, b, 64, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_copy(rt, c, b, 0, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_copy(rt, b, b, 8, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    void *pin = (void *)1;
    assert_int_equal(ops->host_alloc_pinned(rt, 0, &pin), GPUOPT_ERR_OUT_OF_RANGE);
    assert_null(pin);

    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = build_kernel(rt, "mixer", &prog);
    uint32_t v = 1;
    assert_int_equal(ops->kernel_set_scalar(rt, k, 9, &v, sizeof v), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 9, b), GPUOPT_ERR_OUT_OF_RANGE);
    size_t g[3] = {64, 1, 1}, l[3] = {64, 1, 1}, l_bad[3] = {48, 1, 1}, g0[3] = {0, 1, 1};
    size_t l0[3] = {0, 1, 1};
    assert_int_equal(ops->launch(rt, k, 0, g, l, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->launch(rt, k, 4, g, l, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->launch(rt, k, 1, g0, NULL, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->launch(rt, k, 1, g, l_bad, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->launch(rt, k, 1, g, l0, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    /* Arguments never set: the driver refuses the launch, in words. */
    double ns;
    assert_int_not_equal(ops->launch(rt, k, 1, g, l, &ns), GPUOPT_OK);
    assert_non_null(strstr(gpo_detail_get(), "CL_INVALID_KERNEL_ARGS"));
    ops->buffer_free(rt, b);
    ops->buffer_free(rt, c);
}

/* Handles that are NULL, of another session or of another kind are
 * refused in words (test_opencl_handles.c adds freed ones); the session,
 * output and host pointers are the core's contract, asserted. */
static void null_and_foreign_handles_are_refused(void **state)
{
    gpo_rt *rt = *state;
    gpo_rt *other = NULL;
    assert_int_equal(ops->open(fx.state, &dev->routes[0], &other), GPUOPT_OK);
    ops->close(NULL);

    gpo_rt_buf *b = NULL, *ob = NULL;
    assert_int_equal(ops->buffer_alloc(rt, 64, &b), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(other, 64, &ob), GPUOPT_OK);
    gpo_rt_prog *prog = NULL, *oprog = NULL;
    gpo_rt_kernel *k = build_kernel(rt, "mixer", &prog);
    gpo_rt_kernel *ok = build_kernel(other, "mixer", &oprog);
    char host[64];
    uint32_t v = 0;
    size_t g[3] = {64, 1, 1}, max;

    /* buffers */
    assert_int_equal(ops->buffer_write(rt, NULL, 0, host, 8), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->buffer_write(rt, ob, 0, host, 8), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->buffer_write(rt, (gpo_rt_buf *)k, 0, host, 8),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "not a buffer of this session"));
    assert_int_equal(ops->buffer_read(rt, ob, 0, host, 8), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->buffer_copy(rt, b, ob, 8, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->buffer_copy(rt, NULL, b, 8, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    ops->buffer_free(rt, ob); /* foreign: ignored, still usable by its owner */
    ops->buffer_free(rt, NULL);
    assert_int_equal(ops->buffer_write(other, ob, 0, host, 8), GPUOPT_OK);
    ops->host_free_pinned(rt, NULL);

    /* programs and kernels */
    gpo_rt_prog *p2 = NULL;
    char *log = NULL;
    assert_int_equal(ops->program_build(rt, "", "", &p2, &log), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(log);
    gpo_rt_kernel *k2 = NULL;
    assert_int_equal(ops->kernel_create(rt, NULL, "mixer", &k2), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_create(rt, prog, "", &k2), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_create(rt, oprog, "mixer", &k2), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_create(rt, (gpo_rt_prog *)b, "mixer", &k2),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(k2);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 0, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 0, ob), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_buffer(rt, ok, 0, b), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_scalar(rt, k, 3, &v, 0), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_scalar(rt, ok, 3, &v, 4), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_scalar(rt, k, 3, &v, 2), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_local(rt, k, 0, 0), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_local(rt, ok, 0, 16), GPUOPT_ERR_INVALID_ARGUMENT);
    /* Argument 0 is a __global pointer: local memory there is refused. */
    assert_int_not_equal(ops->kernel_set_local(rt, k, 0, 16), GPUOPT_OK);
    assert_int_equal(ops->kernel_max_group(rt, ok, &max), GPUOPT_ERR_INVALID_ARGUMENT);

    /* launches */
    assert_int_equal(ops->launch(rt, NULL, 1, g, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->launch(rt, ok, 1, g, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->launch(rt, (gpo_rt_kernel *)prog, 1, g, NULL, NULL),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "not a kernel of this session"));

    /* frees of foreign or NULL objects change nothing */
    ops->kernel_free(rt, ok);
    ops->kernel_free(rt, NULL);
    ops->program_free(rt, oprog);
    ops->program_free(rt, NULL);
    assert_int_equal(ops->kernel_max_group(other, ok, &max), GPUOPT_OK);
    ops->kernel_free(rt, k);
    ops->program_free(rt, prog);
    ops->buffer_free(rt, b);
    ops->close(other);
}

static void compiler_version_names_the_runtime(void **state)
{
    gpo_rt *rt = *state;
    const char *v = ops->compiler_version(rt);
    assert_non_null(v);
    assert_non_null(strstr(v, "OpenCL"));
    assert_string_equal(ops->language, "opencl-c");
}

static void probe_kernel_agrees_with_device_property(void **state)
{
    (void)state;
    ocl_dev_priv *p = dev->routes[0].priv;
    ocl_facts copy = p->facts;
    copy.extensions = copy.c_features = NULL; /* borrowed, not freed here */
    copy.pref_multiple = -1;
    copy.pref_source = OCL_PREF_UNKNOWN;
    uint64_t t0 = gpo_now_ns();
    assert_int_equal(gpo_ocl_probe_preferred_multiple(&((ocl_state *)fx.state)->api, &copy),
                     GPUOPT_OK);
    fprintf(stderr, "preferred-multiple probe: %.2f ms\n", (double)(gpo_now_ns() - t0) / 1e6);
    assert_int_equal(copy.pref_source, OCL_PREF_KERNEL);
    if (p->facts.pref_source == OCL_PREF_DEVICE)
        assert_int_equal(copy.pref_multiple, p->facts.pref_multiple);
    assert_true(copy.pref_multiple >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(kernel_output_matches_host_on_random_input, open_rt,
                                        close_rt),
        cmocka_unit_test_setup_teardown(local_memory_argument_and_group_limit, open_rt, close_rt),
        cmocka_unit_test_setup_teardown(build_error_returns_compiler_log, open_rt, close_rt),
        cmocka_unit_test_setup_teardown(unknown_kernel_name_is_not_found, open_rt, close_rt),
        cmocka_unit_test_setup_teardown(copies_and_pinned_memory_move_bytes, open_rt, close_rt),
        cmocka_unit_test_setup_teardown(out_of_range_sizes_are_refused, open_rt, close_rt),
        cmocka_unit_test_setup_teardown(null_and_foreign_handles_are_refused, open_rt, close_rt),
        cmocka_unit_test_setup_teardown(compiler_version_names_the_runtime, open_rt, close_rt),
        cmocka_unit_test(probe_kernel_agrees_with_device_property),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
