/* The ROCm runtime ops (backend.h, gpo_runtime_ops) on the HIP test double,
 * ROCm 5, 6 and 7 flavours: every op works on the session's device and
 * gives the thread its own device back, on whichever thread it runs; all
 * work goes to the session's non-blocking stream; blocking copies and
 * timers wait for it; memory round-trips through emulated device memory;
 * hiprtc builds (and fails to build, with its log); kernels are found; a
 * launch fails where a real GPU is needed, with a reason that says so, or,
 * where the double runs launches, a reading of 0 or not a number is
 * refused and a sticky fault is named by every later op. Every object is
 * released on every path (the double counts what is alive). Called
 * directly: the core's tier-2 engine drives these ops. */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/detail.h"
#include "rocm/rocm_hiprtc.h"
#include "rocm/rocm_runtime.h"
#include "rocm_test.h"

static const char *const two[] = {"mi300x", "mi210", NULL};
static const gpo_runtime_ops *ops = &gpo_rocm_runtime;

static const char kernel_src[] = "extern \"C\" __global__ void scale(float *x, float a, int n)\n"
                                 "{\n"
                                 "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                 "    if (i < n)\n"
                                 "        x[i] *= a;\n"
                                 "}\n";

typedef struct fixture {
    int major;
    rocm_env env;
    rocm_run run;
    gpo_route route;
} fixture;

static void setup(fixture *f, int major, const char *const *devices)
{
    memset(f, 0, sizeof *f);
    f->major = major;
    assert_true(fake_reset(major, fake_devices(devices), NULL) > 0);
    fake_hiprtc_reset(fake_hiprtc_for(major));
    rocm_env_init(&f->env, NULL, fake_hip_path(major));
    rocm_env_set_hiprtc(&f->env, fake_hiprtc_for(major));
    rocm_run_do(&f->run, &f->env);
    assert_int_equal(f->run.load, GPUOPT_OK);
    assert_int_equal(f->run.enumerate, GPUOPT_OK);
    rocm_route_of(&f->run, 0, &f->route);
}

static void teardown(fixture *f)
{
    rocm_run_free(&f->run);
    /* Everything the session created was released. */
    assert_int_equal(fake_live(f->major), 0);
    assert_int_equal(fake_programs_live(fake_hiprtc_for(f->major)), 0);
}

static void session_round_trips_memory_and_times_a_copy(void **state)
{
    (void)state;
    for (int major = 5; major <= 7; major++) {
        fixture f;
        gpo_rt *rt = NULL;
        gpo_rt_buf *a = NULL, *b = NULL;
        float in[256], out[256];
        double ns = -1.0;
        setup(&f, major, two);
        assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
        assert_string_equal(ops->language, "hip");
        for (int i = 0; i < 256; i++)
            in[i] = (float)i * 0.5f;
        assert_int_equal(ops->buffer_alloc(rt, sizeof in, &a), GPUOPT_OK);
        assert_int_equal(ops->buffer_alloc(rt, sizeof in, &b), GPUOPT_OK);
        assert_int_equal(ops->buffer_write(rt, a, 0, in, sizeof in), GPUOPT_OK);
        assert_int_equal(ops->buffer_copy(rt, b, a, sizeof in, &ns), GPUOPT_OK);
        assert_true(ns >= 0.0);
        assert_int_equal(ops->buffer_copy(rt, b, a, sizeof in, NULL), GPUOPT_OK);
        memset(out, 0, sizeof out);
        assert_int_equal(ops->buffer_read(rt, b, 0, out, sizeof out), GPUOPT_OK);
        assert_memory_equal(in, out, sizeof in);
        /* Part of a buffer, at an offset. */
        assert_int_equal(ops->buffer_read(rt, b, 16, out, 16), GPUOPT_OK);
        assert_memory_equal(out, (const char *)in + 16, 16);
        assert_int_equal(ops->finish(rt), GPUOPT_OK);
        void *pinned = NULL;
        assert_int_equal(ops->host_alloc_pinned(rt, 1 << 16, &pinned), GPUOPT_OK);
        assert_non_null(pinned);
        ops->host_free_pinned(rt, pinned);
        ops->buffer_free(rt, a);
        ops->close(rt); /* b is released by close */
        teardown(&f);
    }
}

/* The thread's current device after each op of a session on device 0. */
static void device_is(int major, const char *op, int expect)
{
    int now = fake_get_device(major);
    if (now != expect)
        fail_msg("HIP %d: after %s the thread's device is %d, not %d", major, op, now, expect);
}

/* Every op of the table once (the launch fails: the double runs no code),
 * checking the thread's device after each. */
static void every_op(gpo_rt *rt, int major, int expect)
{
    gpo_rt_buf *a = NULL, *b = NULL;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = NULL;
    void *pinned = NULL;
    char *log = NULL;
    float data[256] = {1.0f}, scale = 2.0f;
    int n = 256;
    double ns = 0.0;
    size_t max = 0, global[3] = {256, 1, 1}, local[3] = {64, 1, 1};
#define OP_(name, expr, want)                                                                      \
    do {                                                                                           \
        if ((expr) != (want))                                                                      \
            fail_msg("HIP %d: %s: %s", major, name, gpo_detail_get());                             \
        device_is(major, name, expect);                                                            \
    } while (0)
    OP_("buffer_alloc", ops->buffer_alloc(rt, sizeof data, &a), GPUOPT_OK);
    OP_("buffer_alloc", ops->buffer_alloc(rt, sizeof data, &b), GPUOPT_OK);
    OP_("buffer_write", ops->buffer_write(rt, a, 0, data, sizeof data), GPUOPT_OK);
    OP_("buffer_copy", ops->buffer_copy(rt, b, a, sizeof data, &ns), GPUOPT_OK);
    OP_("buffer_read", ops->buffer_read(rt, b, 0, data, sizeof data), GPUOPT_OK);
    OP_("host_alloc_pinned", ops->host_alloc_pinned(rt, 4096, &pinned), GPUOPT_OK);
    OP_("program_build", ops->program_build(rt, kernel_src, NULL, &prog, &log), GPUOPT_OK);
    OP_("kernel_create", ops->kernel_create(rt, prog, "scale", &k), GPUOPT_OK);
    OP_("kernel_max_group", ops->kernel_max_group(rt, k, &max), GPUOPT_OK);
    OP_("kernel_set_buffer", ops->kernel_set_buffer(rt, k, 0, a), GPUOPT_OK);
    OP_("kernel_set_scalar", ops->kernel_set_scalar(rt, k, 1, &scale, sizeof scale), GPUOPT_OK);
    OP_("kernel_set_scalar", ops->kernel_set_scalar(rt, k, 2, &n, sizeof n), GPUOPT_OK);
    OP_("launch", ops->launch(rt, k, 1, global, local, &ns), GPUOPT_ERR_LAUNCH);
    OP_("finish", ops->finish(rt), GPUOPT_OK);
#undef OP_
    ops->host_free_pinned(rt, pinned);
    device_is(major, "host_free_pinned", expect);
    ops->kernel_free(rt, k);
    ops->program_free(rt, prog);
    device_is(major, "program_free", expect);
    ops->buffer_free(rt, a);
    device_is(major, "buffer_free", expect);
    free(log);
}

/* The thread had device 1 current; the session works on device 0: every
 * op, open and close included, leaves device 1 current, and the work the
 * double saw ran with device 0 current. */
static void every_op_gives_the_thread_its_current_device_back(void **state)
{
    (void)state;
    for (int major = 5; major <= 7; major++) {
        fixture f;
        gpo_rt *rt = NULL;
        setup(&f, major, two);
        assert_int_equal(fake_set_device(major, 1), 0);
        assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
        device_is(major, "open", 1);
        every_op(rt, major, 1);
        ops->close(rt);
        device_is(major, "close", 1);
        for (long i = 0; i < fake_trace_length(major); i++) {
            int has_stream = 0, device = -1;
            const void *stream = NULL;
            const char *call = fake_trace(major, i, &has_stream, &stream, &device);
            if (device != 0)
                fail_msg("HIP %d: %s ran with device %d current", major, call, device);
        }
        fake_set_device(major, 0);
        teardown(&f);
    }
}

static void build_find_and_launch_stop_where_a_real_gpu_is_needed(void **state)
{
    (void)state;
    for (int major = 5; major <= 7; major++) {
        fixture f;
        gpo_rt *rt = NULL;
        gpo_rt_prog *prog = NULL;
        gpo_rt_kernel *k = NULL;
        gpo_rt_buf *x = NULL;
        char *log = NULL;
        size_t max = 0;
        setup(&f, major, two);
        assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
        const char *version = ops->compiler_version(rt);
        assert_non_null(strstr(version, "hiprtc"));
        assert_non_null(strstr(version, "gfx942:sramecc+:xnack-"));
        assert_int_equal(ops->program_build(rt, kernel_src, "-O3 -DN=4", &prog, &log), GPUOPT_OK);
        assert_null(log);
        assert_int_equal(ops->kernel_create(rt, prog, "scale", &k), GPUOPT_OK);
        assert_int_equal(ops->kernel_max_group(rt, k, &max), GPUOPT_OK);
        assert_int_equal(max, 1024);
        assert_int_equal(ops->buffer_alloc(rt, 4096, &x), GPUOPT_OK);
        float a = 2.0f;
        int n = 1024;
        assert_int_equal(ops->kernel_set_buffer(rt, k, 0, x), GPUOPT_OK);
        assert_int_equal(ops->kernel_set_scalar(rt, k, 1, &a, sizeof a), GPUOPT_OK);
        assert_int_equal(ops->kernel_set_scalar(rt, k, 2, &n, sizeof n), GPUOPT_OK);
        assert_int_equal(ops->kernel_set_local(rt, k, 3, 1024), GPUOPT_OK);
        size_t global[3] = {1024, 1, 1}, local[3] = {256, 1, 1};
        double ns = 0;
        gpo_detail_clear();
        assert_int_equal(ops->launch(rt, k, 1, global, local, &ns), GPUOPT_ERR_LAUNCH);
        const char *why = gpo_detail_get();
        assert_non_null(strstr(why, "rocm:0 launch: hipModuleLaunchKernel returned "
                                    "hipErrorNoDevice (100)"));
        assert_non_null(strstr(why, "needs a real AMD GPU"));
        /* The runtime picks no work-group for HIP: the ops do. */
        assert_int_equal(ops->launch(rt, k, 1, global, NULL, NULL), GPUOPT_ERR_LAUNCH);
        ops->kernel_free(rt, k);
        ops->program_free(rt, prog);
        ops->close(rt); /* x is released by close */
        teardown(&f);
    }
}

static void build_failures_carry_the_compilers_log(void **state)
{
    fixture f;
    gpo_rt *rt = NULL;
    gpo_rt_prog *prog = NULL;
    char *log = NULL;
    (void)state;
    setup(&f, 6, two);
    assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);

    static const char broken[] = "extern \"C\" __global__ void k(int *x)\n{\n#error no such "
                                 "thing\n}\n";
    gpo_detail_clear();
    assert_int_equal(ops->program_build(rt, broken, NULL, &prog, &log), GPUOPT_ERR_BUILD);
    assert_null(prog);
    assert_non_null(log);
    assert_non_null(strstr(log, "gpuopt.hip:3:2: error: no such thing"));
    assert_non_null(strstr(gpo_detail_get(), "HIPRTC_ERROR_COMPILATION (6)"));
    free(log);
    log = NULL;

    /* Warnings come back with a program. */
    static const char warns[] = "#warning careful\nextern \"C\" __global__ void k(int *x) {}\n";
    assert_int_equal(ops->program_build(rt, warns, NULL, &prog, &log), GPUOPT_OK);
    assert_non_null(log);
    assert_non_null(strstr(log, "warning: careful"));
    free(log);
    log = NULL;

    /* A kernel that is not extern "C" is mangled: the reason says how to
     * find it. */
    static const char mangled[] = "__global__ void plain(int *x) {}\n";
    gpo_rt_prog *p2 = NULL;
    gpo_rt_kernel *k = NULL;
    assert_int_equal(ops->program_build(rt, mangled, NULL, &p2, &log), GPUOPT_OK);
    gpo_detail_clear();
    assert_int_equal(ops->kernel_create(rt, p2, "plain", &k), GPUOPT_ERR_NOT_FOUND);
    assert_null(k);
    assert_non_null(strstr(gpo_detail_get(), "extern \"C\""));

    /* The target is the device's own: options may not name another. */
    gpo_rt_prog *p3 = NULL;
    assert_int_equal(ops->program_build(rt, kernel_src, "--offload-arch=gfx90a", &p3, &log),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(p3);
    assert_null(log);
    /* hiprtc refuses an unknown option, with its log. */
    assert_int_equal(ops->program_build(rt, kernel_src, "-O3 bogus", &p3, &log), GPUOPT_ERR_BUILD);
    assert_non_null(log);
    assert_non_null(strstr(log, "unknown argument: 'bogus'"));
    free(log);
    ops->close(rt); /* prog and p2 are released by close */
    teardown(&f);
}

static void every_op_refuses_foreign_handles_and_out_of_range_values(void **state)
{
    fixture f;
    gpo_rt *rt = NULL, *other = NULL;
    gpo_rt_buf *buf = NULL, *theirs = NULL;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = NULL;
    char *log = NULL;
    char data[64] = {0};
    size_t global[3] = {1000, 1, 1}, local[3] = {256, 1, 1}, max = 0;
    void *pin = NULL;
    (void)state;
    setup(&f, 6, two);
    gpo_route bad = f.route;
    bad.index = 7;
    assert_int_equal(ops->open(f.run.state, &bad, &rt), GPUOPT_ERR_OUT_OF_RANGE);
    assert_null(rt);
    bad.index = -1;
    assert_int_equal(ops->open(f.run.state, &bad, &rt), GPUOPT_ERR_OUT_OF_RANGE);
    ops->close(NULL);

    assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
    assert_int_equal(ops->open(f.run.state, &f.route, &other), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(rt, 0, &buf), GPUOPT_ERR_OUT_OF_RANGE);
    /* More than the device has free: the runtime's out-of-memory. */
    assert_int_equal(ops->buffer_alloc(rt, (size_t)1 << 60, &buf), GPUOPT_ERR_NO_MEMORY);
    assert_null(buf);
    assert_int_equal(ops->buffer_alloc(rt, 64, &buf), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(other, 64, &theirs), GPUOPT_OK);
    assert_int_equal(ops->buffer_write(rt, buf, 60, data, 8), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_write(rt, buf, SIZE_MAX, data, 2), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_write(rt, buf, 0, data, 0), GPUOPT_OK);
    assert_int_equal(ops->buffer_read(rt, buf, 0, data, 65), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_read(rt, theirs, 0, data, 8), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->buffer_read(rt, NULL, 0, data, 8), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->buffer_copy(rt, buf, theirs, 8, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->buffer_copy(rt, buf, buf, 0, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->buffer_copy(rt, buf, buf, 128, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    ops->buffer_free(rt, theirs); /* not ours: ignored */
    ops->buffer_free(rt, NULL);
    assert_int_equal(ops->host_alloc_pinned(rt, 0, &pin), GPUOPT_ERR_OUT_OF_RANGE);
    ops->host_free_pinned(rt, NULL);
    ops->host_free_pinned(rt, data); /* not pinned by us: ignored */

    assert_int_equal(ops->program_build(rt, kernel_src, NULL, &prog, &log), GPUOPT_OK);
    assert_int_equal(ops->kernel_create(rt, NULL, "scale", &k), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_create(other, prog, "scale", &k), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_create(rt, prog, "", &k), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_create(rt, prog, "missing", &k), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(ops->kernel_create(rt, prog, "scale", &k), GPUOPT_OK);
    int one = 1;
    assert_int_equal(ops->kernel_set_buffer(rt, k, 32, buf), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 0, theirs), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_buffer(rt, NULL, 0, buf), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_scalar(rt, k, 1, &one, 0), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->kernel_set_scalar(rt, k, 1, &one, 257), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->kernel_set_local(rt, k, 3, (size_t)1 << 20), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->kernel_max_group(rt, NULL, &max), GPUOPT_ERR_INVALID_ARGUMENT);
    /* Argument 1 unset while 0 and 2 are: named. */
    assert_int_equal(ops->kernel_set_buffer(rt, k, 0, buf), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_scalar(rt, k, 2, &one, sizeof one), GPUOPT_OK);
    gpo_detail_clear();
    size_t g1024[3] = {1024, 1, 1};
    assert_int_equal(ops->launch(rt, k, 1, g1024, local, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "argument 1 was not set"));
    assert_int_equal(ops->kernel_set_scalar(rt, k, 1, &one, sizeof one), GPUOPT_OK);
    assert_int_equal(ops->launch(rt, k, 0, g1024, local, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(ops->launch(rt, k, 4, g1024, local, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    /* global not a multiple of local */
    assert_int_equal(ops->launch(rt, k, 1, global, local, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    size_t big_local[3] = {2048, 1, 1}, g4096[3] = {4096, 1, 1};
    assert_int_equal(ops->launch(rt, k, 1, g4096, big_local, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    size_t huge[3] = {(size_t)1 << 33, 1, 1};
    assert_int_equal(ops->launch(rt, k, 1, huge, local, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    size_t zero[3] = {0, 1, 1};
    assert_int_equal(ops->launch(rt, k, 1, zero, local, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    ops->kernel_free(rt, NULL);
    ops->program_free(rt, NULL);
    ops->program_free(other, prog); /* not theirs: ignored */
    ops->close(other);
    ops->close(rt);
    teardown(&f);
}

/* A freed handle of each kind, and another session's, handed back to
 * every op that takes one: each is refused by its address, without being
 * read. Under the asan preset a read of any freed object here is a
 * heap-use-after-free and fails the test (the lists this replaced read
 * o->kind and o->rt of exactly these handles). Nothing registered is
 * allocated between the frees and the calls, so no live object can take a
 * freed one's address. */
static void freed_and_foreign_handles_of_each_kind_are_refused_unread(void **state)
{
    fixture f;
    gpo_rt *rt = NULL, *other = NULL;
    gpo_rt_buf *buf = NULL, *stale_buf = NULL, *theirs_buf = NULL;
    gpo_rt_prog *prog = NULL, *stale_prog = NULL, *theirs_prog = NULL;
    gpo_rt_kernel *k = NULL, *stale_k = NULL, *orphan_k = NULL, *theirs_k = NULL;
    void *stale_pin = NULL, *theirs_pin = NULL;
    char *log = NULL;
    char data[64] = {0};
    size_t global[3] = {256, 1, 1}, local[3] = {64, 1, 1}, max = 0;
    int one = 1;
    (void)state;
    setup(&f, 6, two);
    assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
    assert_int_equal(ops->open(f.run.state, &f.route, &other), GPUOPT_OK);

    /* Another session's objects, alive throughout. */
    assert_int_equal(ops->buffer_alloc(other, 64, &theirs_buf), GPUOPT_OK);
    assert_int_equal(ops->program_build(other, kernel_src, NULL, &theirs_prog, &log), GPUOPT_OK);
    assert_int_equal(ops->kernel_create(other, theirs_prog, "scale", &theirs_k), GPUOPT_OK);
    assert_int_equal(ops->host_alloc_pinned(other, 64, &theirs_pin), GPUOPT_OK);

    /* Ours: live ones to pass beside the bad ones, and ones to free. */
    assert_int_equal(ops->buffer_alloc(rt, 64, &buf), GPUOPT_OK);
    assert_int_equal(ops->program_build(rt, kernel_src, NULL, &prog, &log), GPUOPT_OK);
    assert_int_equal(ops->kernel_create(rt, prog, "scale", &k), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(rt, 64, &stale_buf), GPUOPT_OK);
    assert_int_equal(ops->host_alloc_pinned(rt, 64, &stale_pin), GPUOPT_OK);
    assert_int_equal(ops->kernel_create(rt, prog, "scale", &stale_k), GPUOPT_OK);
    assert_int_equal(ops->program_build(rt, kernel_src, NULL, &stale_prog, &log), GPUOPT_OK);
    assert_int_equal(ops->kernel_create(rt, stale_prog, "scale", &orphan_k), GPUOPT_OK);
    ops->buffer_free(rt, stale_buf);
    ops->host_free_pinned(rt, stale_pin);
    ops->kernel_free(rt, stale_k);
    ops->program_free(rt, stale_prog); /* takes orphan_k with it */
    int live = fake_live(6);

    gpo_rt_buf *bad_bufs[] = {stale_buf, theirs_buf};
    for (size_t i = 0; i < 2; i++) {
        gpo_rt_buf *b = bad_bufs[i];
        gpo_detail_clear();
        assert_int_equal(ops->buffer_write(rt, b, 0, data, 8), GPUOPT_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(gpo_detail_get(), "not a buffer of this session"));
        assert_int_equal(ops->buffer_read(rt, b, 0, data, 8), GPUOPT_ERR_INVALID_ARGUMENT);
        assert_int_equal(ops->buffer_copy(rt, buf, b, 8, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
        assert_int_equal(ops->buffer_copy(rt, b, buf, 8, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
        assert_int_equal(ops->kernel_set_buffer(rt, k, 0, b), GPUOPT_ERR_INVALID_ARGUMENT);
        ops->buffer_free(rt, b); /* ignored: no second hipFree */
    }
    gpo_rt_prog *bad_progs[] = {stale_prog, theirs_prog};
    for (size_t i = 0; i < 2; i++) {
        gpo_rt_kernel *none = NULL;
        gpo_detail_clear();
        assert_int_equal(ops->kernel_create(rt, bad_progs[i], "scale", &none),
                         GPUOPT_ERR_INVALID_ARGUMENT);
        assert_null(none);
        assert_non_null(strstr(gpo_detail_get(), "not a program of this session"));
        ops->program_free(rt, bad_progs[i]); /* ignored: no second module unload */
    }
    gpo_rt_kernel *bad_kernels[] = {stale_k, orphan_k, theirs_k};
    for (size_t i = 0; i < 3; i++) {
        gpo_rt_kernel *bk = bad_kernels[i];
        gpo_detail_clear();
        assert_int_equal(ops->kernel_set_buffer(rt, bk, 0, buf), GPUOPT_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(gpo_detail_get(), "not a kernel of this session"));
        assert_int_equal(ops->kernel_set_scalar(rt, bk, 1, &one, sizeof one),
                         GPUOPT_ERR_INVALID_ARGUMENT);
        assert_int_equal(ops->kernel_set_local(rt, bk, 3, 64), GPUOPT_ERR_INVALID_ARGUMENT);
        assert_int_equal(ops->kernel_max_group(rt, bk, &max), GPUOPT_ERR_INVALID_ARGUMENT);
        assert_int_equal(ops->launch(rt, bk, 1, global, local, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
        ops->kernel_free(rt, bk); /* ignored */
    }
    ops->host_free_pinned(rt, stale_pin);  /* ignored: no second hipHostFree */
    ops->host_free_pinned(rt, theirs_pin); /* not ours: ignored */
    assert_int_equal(fake_live(6), live);

    /* The other session's objects were never touched. */
    memset(theirs_pin, 7, 64);
    assert_int_equal(ops->buffer_write(other, theirs_buf, 0, theirs_pin, 64), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_buffer(other, theirs_k, 0, theirs_buf), GPUOPT_OK);
    ops->close(other); /* releases theirs_* */
    ops->close(rt);    /* releases buf, prog, k */
    teardown(&f);
}

/* A session used from another thread (one at a time, as backend.h says):
 * its ops work on the session's device there too and leave that thread's
 * own device current. */
typedef struct thread_args {
    gpo_rt *rt;
    gpuopt_status st;
    int device_after;
    char why[512];
} thread_args;

static void *other_thread(void *p)
{
    thread_args *a = p;
    gpo_rt_buf *buf = NULL;
    fake_set_device(6, 1); /* this thread's own choice */
    gpo_detail_clear();
    a->st = ops->buffer_alloc(a->rt, 64, &buf);
    gpo_strlcpy(a->why, gpo_detail_get(), sizeof a->why);
    a->device_after = fake_get_device(6);
    ops->buffer_free(a->rt, buf);
    return NULL;
}

static void a_session_works_from_another_thread_on_its_own_device(void **state)
{
    fixture f;
    gpo_rt *rt = NULL;
    pthread_t t;
    thread_args a;
    (void)state;
    setup(&f, 6, two);
    assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
    memset(&a, 0, sizeof a);
    a.rt = rt;
    long from = fake_trace_length(6);
    assert_int_equal(pthread_create(&t, NULL, other_thread, &a), 0);
    pthread_join(t, NULL);
    if (a.st != GPUOPT_OK)
        fail_msg("%s", a.why);
    assert_int_equal(a.device_after, 1);
    int has_stream = 0, device = -1;
    const void *stream = NULL;
    assert_string_equal(fake_trace(6, from, &has_stream, &stream, &device), "hipMalloc");
    assert_int_equal(device, 0);
    ops->close(rt);
    teardown(&f);
}

/* Every call that takes a stream names the session's own, created
 * hipStreamNonBlocking: never the null stream the host program's work may
 * be queued on. */
static void all_work_goes_to_one_non_blocking_stream_of_the_session(void **state)
{
    (void)state;
    for (int major = 5; major <= 7; major++) {
        fixture f;
        gpo_rt *rt = NULL;
        setup(&f, major, two);
        assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
        every_op(rt, major, 0);
        const void *mine = NULL;
        int on_streams = 0;
        for (long i = 0; i < fake_trace_length(major); i++) {
            int has_stream = 0, device = -1;
            const void *stream = NULL;
            const char *call = fake_trace(major, i, &has_stream, &stream, &device);
            if (!has_stream)
                continue;
            if (!stream)
                fail_msg("HIP %d: %s used the null stream", major, call);
            if (!mine)
                mine = stream;
            assert_ptr_equal(stream, mine);
            on_streams++;
        }
        assert_true(on_streams >= 9);
        assert_int_equal(fake_stream_flags(major, mine), 1); /* hipStreamNonBlocking */
        ops->close(rt);
        assert_int_equal(fake_stream_flags(major, mine), -1);
        teardown(&f);
    }
}

/* A blocking copy returns only after its stream has drained, so a host
 * clock around it times the whole transfer. */
static void blocking_copies_wait_for_their_stream_before_returning(void **state)
{
    (void)state;
    fixture f;
    gpo_rt *rt = NULL;
    gpo_rt_buf *b = NULL;
    char data[64] = "x";
    setup(&f, 6, two);
    assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(rt, sizeof data, &b), GPUOPT_OK);
    static const char *const copies[2] = {"hipMemcpyHtoDAsync", "hipMemcpyDtoHAsync"};
    for (int dir = 0; dir < 2; dir++) {
        long from = fake_trace_length(6);
        assert_int_equal(dir == 0 ? ops->buffer_write(rt, b, 0, data, sizeof data)
                                  : ops->buffer_read(rt, b, 0, data, sizeof data),
                         GPUOPT_OK);
        long to = fake_trace_length(6);
        int has_stream = 0, device = -1;
        const void *s1 = NULL, *s2 = NULL;
        assert_int_equal(to - from, 2);
        assert_string_equal(fake_trace(6, from, &has_stream, &s1, &device), copies[dir]);
        assert_string_equal(fake_trace(6, from + 1, &has_stream, &s2, &device),
                            "hipStreamSynchronize");
        assert_ptr_equal(s1, s2);
    }
    ops->close(rt);
    teardown(&f);
}

/* Where the double runs launches: a reading of 0 or not a number is
 * refused; a sticky fault (each of HIP's) is GPUOPT_ERR_FAULT named in the
 * runtime's words, for the launch that meets it and every op after it,
 * a build included. */
static void zero_readings_are_refused_and_faults_stick_with_their_name(void **state)
{
    (void)state;
    static const char *const readings[] = {"0", "nan"};
    static const char *const faults[] = {"hipErrorIllegalAddress", "hipErrorLaunchTimeOut",
                                         "hipErrorAssert", "hipErrorLaunchFailure"};
    size_t global[3] = {256, 1, 1}, local[3] = {64, 1, 1};
    for (size_t i = 0; i < 2 + sizeof faults / sizeof faults[0]; i++) {
        fixture f;
        gpo_rt *rt = NULL;
        gpo_rt_prog *prog = NULL, *again = NULL;
        gpo_rt_kernel *k = NULL;
        gpo_rt_buf *x = NULL;
        char *log = NULL, fault[64];
        float a = 2.0f, data[64] = {0};
        double ns = 0.0;
        if (i < 2) {
            setenv("GPUOPT_FAKE_HIP_LAUNCH_NS", readings[i], 1);
        } else {
            gpo_snprintf(fault, sizeof fault, "1:%s", faults[i - 2]);
            setenv("GPUOPT_FAKE_HIP_FAULT", fault, 1);
        }
        setup(&f, 6, two);
        unsetenv("GPUOPT_FAKE_HIP_LAUNCH_NS");
        unsetenv("GPUOPT_FAKE_HIP_FAULT");
        assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
        assert_int_equal(ops->program_build(rt, kernel_src, NULL, &prog, &log), GPUOPT_OK);
        assert_int_equal(ops->kernel_create(rt, prog, "scale", &k), GPUOPT_OK);
        assert_int_equal(ops->buffer_alloc(rt, sizeof data, &x), GPUOPT_OK);
        assert_int_equal(ops->kernel_set_buffer(rt, k, 0, x), GPUOPT_OK);
        assert_int_equal(ops->kernel_set_scalar(rt, k, 1, &a, sizeof a), GPUOPT_OK);
        gpuopt_status st = ops->launch(rt, k, 1, global, local, &ns);
        const char *why = gpo_detail_get();
        if (i < 2) {
            if (st != GPUOPT_ERR_DRIVER || !strstr(why, "which is no measurement"))
                fail_msg("a launch of %s ns: %d '%s'", readings[i], (int)st, why);
        } else {
            if (st != GPUOPT_ERR_FAULT || !strstr(why, faults[i - 2]) ||
                !strstr(why, "the process must be restarted"))
                fail_msg("%s: %d '%s'", faults[i - 2], (int)st, why);
            assert_int_equal(ops->buffer_write(rt, x, 0, data, sizeof data), GPUOPT_ERR_FAULT);
            assert_int_equal(ops->finish(rt), GPUOPT_ERR_FAULT);
            assert_int_equal(ops->program_build(rt, kernel_src, NULL, &again, &log),
                             GPUOPT_ERR_FAULT);
            assert_null(again);
            assert_non_null(strstr(gpo_detail_get(), "hipModuleLoadData"));
        }
        free(log);
        ops->close(rt);
        rocm_run_free(&f.run); /* objects the faulted runtime would not free stay with it */
        fake_reset(6, NULL, NULL);
    }
}

static void a_gpu_seen_only_by_kfd_cannot_open_a_session(void **state)
{
    rocm_env e;
    rocm_run r;
    gpo_route route;
    gpo_rt *rt = NULL;
    (void)state;
    rocm_env_init(&e, kfd_root(0, "rx7900xtx"), "/nonexistent/libamdhip64.so.6");
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(r.state);
    assert_int_equal(r.list.n, 1);
    rocm_route_of(&r, 0, &route);
    gpo_detail_clear();
    assert_int_equal(ops->open(r.state, &route, &rt), GPUOPT_ERR_UNAVAILABLE);
    assert_null(rt);
    assert_non_null(strstr(gpo_detail_get(), "seen only in the kernel's KFD topology"));
    assert_non_null(strstr(gpo_detail_get(), "could not be opened"));
    rocm_run_free(&r);
}

static void hiprtc_is_found_where_each_rocm_keeps_it(void **state)
{
    (void)state;
    /* ROCm 6: a separate libhiprtc.so.6 named by the user wins. */
    {
        fixture f;
        gpo_rt *rt = NULL;
        setup(&f, 6, two);
        rocm_run_free(&f.run);
        fake_hiprtc_reset(fake_hiprtc_lib(6));
        rocm_env_set_hiprtc(&f.env, fake_hiprtc_lib(6));
        rocm_run_do(&f.run, &f.env);
        rocm_route_of(&f.run, 0, &f.route);
        assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
        assert_non_null(strstr(ops->compiler_version(rt), "hiprtc 6.2 (libhiprtc.so.6"));
        ops->close(rt);
        teardown(&f);
    }
    /* ROCm 6 without a separate hiprtc: the runtime's own (when this
     * machine has no libhiprtc of its own to find first). */
    void *system = dlopen("libhiprtc.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!system)
        system = dlopen("libhiprtc.so.7", RTLD_NOW | RTLD_LOCAL);
    if (!system)
        system = dlopen("libhiprtc.so.5", RTLD_NOW | RTLD_LOCAL);
    if (system) {
        dlclose(system);
        return;
    }
    {
        fixture f;
        gpo_rt *rt = NULL;
        gpo_rt_prog *prog = NULL;
        char *log = NULL;
        setup(&f, 6, two);
        rocm_run_free(&f.run);
        rocm_env_set_hiprtc(&f.env, NULL);
        rocm_run_do(&f.run, &f.env);
        rocm_route_of(&f.run, 0, &f.route);
        assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
        assert_non_null(strstr(ops->compiler_version(rt), "inside the HIP runtime"));
        ops->close(rt);
        teardown(&f);
        /* ROCm 7's runtime has none: the build says what to install. */
        setup(&f, 7, two);
        rocm_run_free(&f.run);
        rocm_env_set_hiprtc(&f.env, NULL);
        rocm_run_do(&f.run, &f.env);
        rocm_route_of(&f.run, 0, &f.route);
        assert_int_equal(ops->open(f.run.state, &f.route, &rt), GPUOPT_OK);
        gpo_detail_clear();
        assert_int_equal(ops->program_build(rt, kernel_src, NULL, &prog, &log),
                         GPUOPT_ERR_UNAVAILABLE);
        assert_non_null(strstr(gpo_detail_get(), "no hiprtc to compile kernels with"));
        assert_non_null(strstr(gpo_detail_get(), "libhiprtc7"));
        /* The failure is kept: asked again, the same words. */
        assert_int_equal(ops->program_build(rt, kernel_src, NULL, &prog, &log),
                         GPUOPT_ERR_UNAVAILABLE);
        assert_non_null(strstr(gpo_detail_get(), "no hiprtc to compile kernels with"));
        assert_non_null(strstr(ops->compiler_version(rt), "no hiprtc"));
        ops->close(rt);
        teardown(&f);
    }
}

static void a_target_the_compiler_does_not_know_is_refused_before_compiling(void **state)
{
    gpo_hiprtc rtc;
    void *code = NULL;
    size_t size = 0;
    char *log = NULL, known[512];
    (void)state;
    fake_hiprtc_reset(fake_hiprtc_lib(7));
    assert_int_equal(gpo_hiprtc_open(&rtc, fake_hiprtc_lib(7), NULL, 7), GPUOPT_OK);
    assert_int_equal(gpo_hiprtc_target_known(&rtc, "gfx942:sramecc+:xnack-", known, sizeof known),
                     1);
    assert_int_equal(gpo_hiprtc_target_known(&rtc, "gfx1201", known, sizeof known), 0);
    assert_non_null(strstr(known, "gfx90a"));
    gpo_detail_clear();
    assert_int_equal(gpo_hiprtc_compile(&rtc, kernel_src, "gfx1201", NULL, &code, &size, &log),
                     GPUOPT_ERR_UNSUPPORTED);
    assert_null(code);
    assert_null(log);
    assert_non_null(strstr(gpo_detail_get(), "does not know gfx1201"));
    assert_int_equal(gpo_hiprtc_compile(&rtc, kernel_src, "sm_90", NULL, &code, &size, &log),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_hiprtc_target_known(NULL, "gfx90a", known, sizeof known), -1);
    assert_int_equal(gpo_hiprtc_target_known(&rtc, NULL, known, sizeof known), -1);
    /* The stand-in code object names the target and the kernel. */
    assert_int_equal(gpo_hiprtc_compile(&rtc, kernel_src, "gfx90a", "-O2", &code, &size, &log),
                     GPUOPT_OK);
    assert_non_null(strstr(code, "target=gfx90a"));
    assert_non_null(strstr(code, "scale"));
    free(code);
    assert_int_equal(gpo_hiprtc_open(&rtc, "/nonexistent/libhiprtc.so.7", NULL, 7),
                     GPUOPT_ERR_UNAVAILABLE);
    /* A library that is not hiprtc: the missing functions are named. */
    assert_int_equal(gpo_hiprtc_open(&rtc, fake_hip_path(7), NULL, 7), GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(strstr(gpo_detail_get(), "hiprtcCreateProgram"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(session_round_trips_memory_and_times_a_copy),
        cmocka_unit_test(every_op_gives_the_thread_its_current_device_back),
        cmocka_unit_test(build_find_and_launch_stop_where_a_real_gpu_is_needed),
        cmocka_unit_test(build_failures_carry_the_compilers_log),
        cmocka_unit_test(every_op_refuses_foreign_handles_and_out_of_range_values),
        cmocka_unit_test(freed_and_foreign_handles_of_each_kind_are_refused_unread),
        cmocka_unit_test(a_session_works_from_another_thread_on_its_own_device),
        cmocka_unit_test(all_work_goes_to_one_non_blocking_stream_of_the_session),
        cmocka_unit_test(blocking_copies_wait_for_their_stream_before_returning),
        cmocka_unit_test(zero_readings_are_refused_and_faults_stick_with_their_name),
        cmocka_unit_test(a_gpu_seen_only_by_kfd_cannot_open_a_session),
        cmocka_unit_test(hiprtc_is_found_where_each_rocm_keeps_it),
        cmocka_unit_test(a_target_the_compiler_does_not_know_is_refused_before_compiling),
    };
    return cmocka_run_group_tests(tests, rocm_test_clean_env, NULL);
}
