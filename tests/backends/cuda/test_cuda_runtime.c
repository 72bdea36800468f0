/* The CUDA runtime ops' sessions, memory and handles (cuda_runtime.c)
 * on the test doubles: libcuda (full, r12, legacy flavours) and NVRTC.
 * Each op leaves the thread's context stack as it found it; close leaves no
 * context and no object. Programs, kernels and launches:
 * test_cuda_kernels.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_rt_fixture.h"
#include "util/strutil.h"

#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"
#define H100 RT_H100
#define FUTURE RT_FUTURE
#define K80 RT_K80

static void session_holds_one_primary_context_and_leaves_the_stack_alone(void **state)
{
    (void)state;
    rt_fixture x;
    gpo_rt_buf *b = NULL;
    char data[64] = "pattern";
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, H100);
    assert_int_equal(rtd.full.live_contexts(), 1);
    assert_int_equal(rtd.full.stack_depth(), 0);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, sizeof data, &b), GPUOPT_OK);
    assert_int_equal(rtd.full.stack_depth(), 0);
    assert_int_equal(rtd.ops->buffer_write(x.rt, b, 0, data, sizeof data), GPUOPT_OK);
    assert_int_equal(rtd.ops->finish(x.rt), GPUOPT_OK);
    assert_int_equal(rtd.full.stack_depth(), 0);
    assert_int_equal(rtd.full.calls("cuDevicePrimaryCtxRetain"), 1);
    assert_int_equal(rtd.full.calls("cuCtxPushCurrent_v2"), rtd.full.calls("cuCtxPopCurrent_v2"));
    assert_string_equal(rtd.ops->compiler_version(x.rt), "NVRTC 13.0; CUDA driver 13.0; sm_90");
    rt_stop(&x); /* b is released by close */
    assert_int_equal(rtd.full.calls("cuDevicePrimaryCtxRelease_v2"), 1);
}

static void buffers_round_trip_and_device_copies_are_timed(void **state)
{
    (void)state;
    rt_fixture x;
    gpo_rt_buf *a = NULL, *b = NULL;
    unsigned char in[4096], out[4096];
    double ns1 = 0.0, ns2 = 0.0;
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 7);
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, H100);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, sizeof in, &a), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, sizeof in, &b), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_write(x.rt, a, 0, in, sizeof in), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_copy(x.rt, b, a, sizeof in / 2, &ns1), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_copy(x.rt, b, a, sizeof in, &ns2), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_copy(x.rt, b, a, sizeof in, NULL), GPUOPT_OK);
    memset(out, 0, sizeof out);
    assert_int_equal(rtd.ops->buffer_read(x.rt, b, 0, out, sizeof out), GPUOPT_OK);
    assert_memory_equal(in, out, sizeof in);
    /* Partial reads and writes land where they should. */
    assert_int_equal(rtd.ops->buffer_write(x.rt, b, 100, "xyz", 3), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_read(x.rt, b, 99, out, 5), GPUOPT_OK);
    unsigned char want[5] = {in[99], 'x', 'y', 'z', in[103]};
    assert_memory_equal(out, want, 5);
    /* The double's clock runs at the H100's datasheet bandwidth, so twice
     * the bytes take twice the (virtual) time. */
    assert_true(ns1 > 0.0);
    assert_true(ns2 > 1.99 * ns1 && ns2 < 2.01 * ns1);
    assert_int_equal(rtd.full.calls("cuEventElapsedTime_v2"), 2);
    rt_stop(&x);
}

static void running_out_of_device_memory_is_the_driver_s_answer(void **state)
{
    (void)state;
    rt_fixture x;
    gpo_rt_buf *b = (gpo_rt_buf *)&x;
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, H100);
    /* More than the H100's 79.5 GiB free: a driver error (a tier falls back),
     * never GPUOPT_ERR_NO_MEMORY (which would fail the whole plan). */
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 100ull << 30, &b), GPUOPT_ERR_DRIVER);
    assert_null(b);
    assert_non_null(strstr(gpo_detail_get(), "cuMemAlloc_v2(107374182400 bytes) failed: "
                                             "CUDA_ERROR_OUT_OF_MEMORY"));
    rt_stop(&x);
}

static void pinned_memory_comes_from_the_driver_and_goes_back(void **state)
{
    (void)state;
    rt_fixture x;
    void *p = NULL, *q = NULL;
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, H100);
    assert_int_equal(rtd.ops->host_alloc_pinned(x.rt, 8192, &p), GPUOPT_OK);
    assert_int_equal(rtd.ops->host_alloc_pinned(x.rt, 100, &q), GPUOPT_OK);
    memset(p, 0xab, 8192); /* it is host memory */
    assert_int_equal(rtd.full.live_objects("host_memory"), 2);
    rtd.ops->host_free_pinned(x.rt, p);
    rtd.ops->host_free_pinned(x.rt, p);    /* already freed: ignored */
    rtd.ops->host_free_pinned(x.rt, &x);   /* never ours: ignored */
    rtd.ops->host_free_pinned(x.rt, NULL); /* ignored */
    assert_int_equal(rtd.full.live_objects("host_memory"), 1);
    rt_stop(&x); /* q goes with close */
}

/* A handle the caller freed, or one of another session, of every kind,
 * handed to every op that takes it: each is refused (or, for the free ops,
 * ignored) by looking its address up among the session's live objects,
 * without reading it and without a driver call. Under ASan (the asan
 * preset) a read of a freed handle would abort the test. */
typedef struct unheld {
    const char *whose;
    gpo_rt_buf *buf;
    gpo_rt_prog *prog;
    gpo_rt_kernel *kernel;
    void *pinned;
} unheld;

static void assert_unheld_refused(rt_fixture *x, const unheld *u, gpo_rt_buf *live_buf,
                                  gpo_rt_kernel *live_kernel)
{
    char data[16] = "data";
    float a = 1.0f;
    size_t g[3] = {64, 1, 1}, max = 7;
    gpo_rt_kernel *k = (gpo_rt_kernel *)x;
    const long calls = rtd.full.calls(NULL);
    const gpo_runtime_ops *o = rtd.ops;

    assert_int_equal(o->buffer_write(x->rt, u->buf, 0, data, 4), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "not a buffer of this session"));
    assert_int_equal(o->buffer_read(x->rt, u->buf, 0, data, 4), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(o->buffer_copy(x->rt, live_buf, u->buf, 4, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(o->buffer_copy(x->rt, u->buf, live_buf, 4, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(o->kernel_set_buffer(x->rt, live_kernel, 0, u->buf),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(o->kernel_create(x->rt, u->prog, "scale", &k), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(k);
    assert_non_null(strstr(gpo_detail_get(), "not a program of this session"));
    assert_int_equal(o->kernel_set_buffer(x->rt, u->kernel, 0, live_buf),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "not a kernel of this session"));
    assert_int_equal(o->kernel_set_scalar(x->rt, u->kernel, 1, &a, sizeof a),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(o->kernel_set_local(x->rt, u->kernel, 0, 64), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(o->kernel_max_group(x->rt, u->kernel, &max), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(max, 0);
    assert_int_equal(o->launch(x->rt, u->kernel, 1, g, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    /* The free ops ignore what the session does not hold. */
    o->buffer_free(x->rt, u->buf);
    o->kernel_free(x->rt, u->kernel);
    o->program_free(x->rt, u->prog);
    o->host_free_pinned(x->rt, u->pinned);
    if (rtd.full.calls(NULL) != calls)
        fail_msg("%s handles reached the driver", u->whose);
}

static void freed_and_foreign_handles_of_every_kind_are_refused_unread(void **state)
{
    (void)state;
    rt_fixture x, y;
    gpo_rt_prog *prog = NULL, *live_prog = NULL, *their_prog = NULL;
    gpo_rt_buf *buf = NULL, *live_buf = NULL, *their_buf = NULL;
    void *pinned = NULL, *their_pinned = NULL;
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, H100);
    /* A second session on the same double (another device). */
    gpo_route route;
    memset(&route, 0, sizeof route);
    route.index = FUTURE;
    y = x;
    assert_int_equal(rtd.ops->open(x.state, &route, &y.rt), GPUOPT_OK);
    assert_int_equal(rtd.full.live_contexts(), 2);

    gpo_rt_kernel *their_kernel = rt_scale_kernel(&y, &their_prog);
    assert_int_equal(rtd.ops->buffer_alloc(y.rt, 64, &their_buf), GPUOPT_OK);
    assert_int_equal(rtd.ops->host_alloc_pinned(y.rt, 64, &their_pinned), GPUOPT_OK);

    gpo_rt_kernel *live_kernel = rt_scale_kernel(&x, &live_prog);
    gpo_rt_kernel *kernel = rt_scale_kernel(&x, &prog);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 64, &live_buf), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 64, &buf), GPUOPT_OK);
    assert_int_equal(rtd.ops->host_alloc_pinned(x.rt, 64, &pinned), GPUOPT_OK);
    /* The same buffer on both sides of a copy is refused too. */
    assert_int_equal(rtd.ops->buffer_copy(x.rt, live_buf, live_buf, 64, NULL),
                     GPUOPT_ERR_INVALID_ARGUMENT);

    /* Freed: the kernel goes with its program's module, whose second free
     * is then ignored like any other. */
    rtd.ops->program_free(x.rt, prog);
    rtd.ops->buffer_free(x.rt, buf);
    rtd.ops->host_free_pinned(x.rt, pinned);
    const unheld freed = {"freed", buf, prog, kernel, pinned};
    assert_unheld_refused(&x, &freed, live_buf, live_kernel);

    long their_memory = rtd.full.live_objects(NULL);
    const unheld theirs = {"another session's", their_buf, their_prog, their_kernel, their_pinned};
    assert_unheld_refused(&x, &theirs, live_buf, live_kernel);
    /* Nothing of theirs was touched: it still works in its own session. */
    assert_int_equal(rtd.full.live_objects(NULL), their_memory);
    assert_int_equal(rtd.ops->buffer_write(y.rt, their_buf, 0, "ok", 2), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_buffer(y.rt, their_kernel, 0, their_buf), GPUOPT_OK);
    rtd.ops->host_free_pinned(y.rt, their_pinned);
    rtd.ops->close(y.rt);
    /* What x still holds goes with its close. */
    rt_stop(&x);
}

/* The session and every output are the core's contract (asserted); sizes,
 * indices and handles are refused in words. */
static void out_of_range_and_unheld_inputs_are_refused_in_words(void **state)
{
    (void)state;
    rt_fixture x;
    gpo_rt_buf *b = NULL;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = NULL;
    void *p = NULL;
    char buf[16], *log = NULL;
    size_t g[3] = {1, 1, 1}, max = 0;
    gpo_route route;
    memset(&route, 0, sizeof route);
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, H100);
    gpo_rt *other = NULL;
    route.index = 7;
    assert_int_equal(rtd.ops->open(x.state, &route, &other), GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(gpo_detail_get(), "cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE"));
    assert_null(other);
    assert_int_equal(rtd.full.live_contexts(), 1);

    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 0, &b), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 16, &b), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_write(x.rt, b, 10, buf, 7), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(rtd.ops->buffer_write(x.rt, b, 17, buf, 1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(rtd.ops->buffer_write(x.rt, b, 0, buf, 0), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(rtd.ops->buffer_read(x.rt, b, SIZE_MAX, buf, 2), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(rtd.ops->buffer_read(x.rt, NULL, 0, buf, 1), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "cuda:0 buffer_read: not a buffer of this session"));
    assert_int_equal(rtd.ops->buffer_copy(x.rt, b, NULL, 1, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    rtd.ops->buffer_free(x.rt, NULL);
    assert_int_equal(rtd.ops->host_alloc_pinned(x.rt, 0, &p), GPUOPT_ERR_OUT_OF_RANGE);

    assert_int_equal(rtd.ops->program_build(x.rt, "", NULL, &prog, &log),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(log);
    assert_int_equal(rtd.ops->program_build(x.rt, rt_scale_src, NULL, &prog, NULL), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_create(x.rt, NULL, "scale", &k), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(rtd.ops->kernel_create(x.rt, prog, "", &k), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(rtd.ops->kernel_create(x.rt, prog, "scale", &k), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_scalar(x.rt, k, 1, buf, 0), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(rtd.ops->kernel_set_buffer(x.rt, k, 0, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(rtd.ops->kernel_set_local(x.rt, k, 0, 0), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(rtd.ops->kernel_set_local(x.rt, k, 0, (size_t)UINT32_MAX + 1),
                     GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(rtd.ops->kernel_set_local(x.rt, k, 0, 1024), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_max_group(x.rt, NULL, &max), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(rtd.ops->launch(x.rt, NULL, 1, g, g, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(rtd.ops->launch(x.rt, k, 0, g, g, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(rtd.ops->launch(x.rt, k, 4, g, g, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    rtd.ops->kernel_free(x.rt, NULL);
    rtd.ops->program_free(x.rt, NULL);
    rtd.ops->close(NULL);
    assert_int_equal(rtd.full.stack_depth(), 0);
    rt_stop(&x);
}

static void sessions_that_cannot_run_code_say_why(void **state)
{
    (void)state;
    cuda_env e;
    gpo_backend_report rep;
    gpo_route route;
    gpo_rt *rt = (gpo_rt *)&e;
    void *st = NULL;
    memset(&route, 0, sizeof route);

    /* A driver before CUDA 11.0: no _v2 primary-context release. */
    cuda_env_init(&e, FAKE_CUDA_LEGACY, NO_KERNEL_DRIVER);
    fake_cuda_configure(&rtd.legacy, fake_devices("t4.json", NULL), NULL, NULL);
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_OK);
    assert_int_equal(rtd.ops->open(st, &route, &rt), GPUOPT_ERR_UNSUPPORTED);
    assert_null(rt);
    assert_non_null(strstr(gpo_detail_get(), "lacks cuDevicePrimaryCtxRelease_v2, which running "
                                             "code needs"));
    gpo_backend_cuda.unload(st);

    /* Only the kernel module sees the GPUs: no driver library at all. */
    cuda_env_init(&e, "/nonexistent/libcuda.so.1", GPO_FIXTURES_DIR "/nvidia/t4-proprietary-535");
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(st);
    rt = (gpo_rt *)&e;
    assert_int_equal(rtd.ops->open(st, &route, &rt), GPUOPT_ERR_UNSUPPORTED);
    assert_null(rt);
    assert_non_null(strstr(gpo_detail_get(), "running code needs the CUDA driver library"));
    gpo_backend_cuda.unload(st);
}

static void a_missing_nvrtc_is_said_once_and_remembered(void **state)
{
    (void)state;
    rt_fixture x;
    gpo_rt_prog *prog = NULL;
    gpo_rt_buf *b = NULL;
    char *log = NULL, first[1024];
    rt_start(&x, FAKE_CUDA_FULL, &rtd.full, "/nonexistent/libnvrtc.so.13", H100);
    assert_int_equal(rtd.ops->program_build(x.rt, rt_scale_src, NULL, &prog, &log),
                     GPUOPT_ERR_UNAVAILABLE);
    assert_null(log);
    gpo_strlcpy(first, gpo_detail_get(), sizeof first);
    assert_non_null(
        strstr(first, "cannot open /nonexistent/libnvrtc.so.13 (GPUOPT_NVRTC_LIBRARY)"));
    assert_int_equal(rtd.ops->program_build(x.rt, rt_scale_src, NULL, &prog, &log),
                     GPUOPT_ERR_UNAVAILABLE);
    assert_string_equal(gpo_detail_get(), first);
    assert_string_equal(rtd.ops->compiler_version(x.rt),
                        "NVRTC unavailable; CUDA driver 13.0; sm_90");
    /* Memory still works: bandwidth needs no compiler. */
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 64, &b), GPUOPT_OK);
    rt_stop(&x);
}

static void an_older_driver_times_with_the_unversioned_event_call(void **state)
{
    (void)state;
    rt_fixture x;
    gpo_rt_buf *a = NULL, *b = NULL;
    double ns = 0.0;
    rt_start(&x, FAKE_CUDA_R12, &rtd.r12, FAKE_NVRTC, H100);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 4096, &a), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_alloc(x.rt, 4096, &b), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_copy(x.rt, b, a, 4096, &ns), GPUOPT_OK);
    assert_true(ns > 0.0);
    assert_int_equal(rtd.r12.calls("cuEventElapsedTime"), 1);
    assert_int_equal(rtd.r12.calls("cuEventElapsedTime_v2"), 0);
    rt_stop(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(session_holds_one_primary_context_and_leaves_the_stack_alone),
        cmocka_unit_test(buffers_round_trip_and_device_copies_are_timed),
        cmocka_unit_test(running_out_of_device_memory_is_the_driver_s_answer),
        cmocka_unit_test(pinned_memory_comes_from_the_driver_and_goes_back),
        cmocka_unit_test(freed_and_foreign_handles_of_every_kind_are_refused_unread),
        cmocka_unit_test(out_of_range_and_unheld_inputs_are_refused_in_words),
        cmocka_unit_test(sessions_that_cannot_run_code_say_why),
        cmocka_unit_test(a_missing_nvrtc_is_said_once_and_remembered),
        cmocka_unit_test(an_older_driver_times_with_the_unversioned_event_call),
    };
    return cmocka_run_group_tests(tests, rt_doubles_setup, NULL);
}
