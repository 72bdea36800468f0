/* The CUDA runtime ops inside a host program that uses CUDA itself
 * (cuda_runtime.c), on the test doubles whose launches "run"
 * (GPUOPT_FAKE_CUDA_LAUNCH_NS) or fault (GPUOPT_FAKE_CUDA_FAULT) and which
 * trace every call with its stream: all work goes to the session's own
 * non-blocking stream, the host thread's current context is the same after
 * every op, blocking copies and timers wait for the device before they
 * return or stop, a reading of 0 or not a number is refused, dynamic shared
 * memory above 48 KiB is opted into up to the device's limit, and a sticky
 * fault is named and classified as one by every later op. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_rt_fixture.h"

#define H100 RT_H100
#define FUTURE RT_FUTURE
#define K80 RT_K80

/* A session on the H100 with a built `scale` kernel whose arguments are
 * set, over a 4 KiB buffer; launches run and take `launch_ns`, and
 * `fault` (NULL: none) faults one of them. */
typedef struct host_run {
    rt_fixture x;
    gpo_rt_prog *prog;
    gpo_rt_kernel *k;
    gpo_rt_buf *a, *b;
} host_run;

static const size_t global[3] = {1024, 1, 1}, local[3] = {256, 1, 1};

static void start(host_run *h, int device, const char *launch_ns, const char *fault)
{
    float scale = 2.0f;
    int n = 1024;
    memset(h, 0, sizeof *h);
    fake_cuda_launches(launch_ns, fault);
    rt_start(&h->x, FAKE_CUDA_FULL, &rtd.full, FAKE_NVRTC, device);
    if (device == K80) /* an NVRTC that still builds for sm_37 */
        fake_nvrtc_configure(&rtd.nvrtc, NULL, "35,37,50,60,70,75,80,90", NULL);
    h->k = rt_scale_kernel(&h->x, &h->prog);
    assert_int_equal(rtd.ops->buffer_alloc(h->x.rt, 4096, &h->a), GPUOPT_OK);
    assert_int_equal(rtd.ops->buffer_alloc(h->x.rt, 4096, &h->b), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_buffer(h->x.rt, h->k, 0, h->a), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_scalar(h->x.rt, h->k, 1, &scale, sizeof scale), GPUOPT_OK);
    assert_int_equal(rtd.ops->kernel_set_scalar(h->x.rt, h->k, 2, &n, sizeof n), GPUOPT_OK);
}

/* The index in the trace, from `from` on, of the first call of `sym`, or
 * -1. */
static long find_call(long from, const char *sym)
{
    for (long i = from; i < rtd.full.trace_length(); i++) {
        int has_stream = 0;
        const void *stream = NULL;
        if (strcmp(rtd.full.trace_call(i, &has_stream, &stream), sym) == 0)
            return i;
    }
    return -1;
}

static const void *stream_of(long i)
{
    int has_stream = 0;
    const void *stream = NULL;
    assert_non_null(rtd.full.trace_call(i, &has_stream, &stream));
    assert_true(has_stream);
    return stream;
}

/* Every op of the table once, with `check` after each. */
static void every_op(host_run *h, void (*check)(const char *op, int expect), int expect)
{
    const gpo_runtime_ops *o = rtd.ops;
    gpo_rt *rt = h->x.rt;
    unsigned char data[4096];
    double ns = 0.0;
    size_t max = 0;
    void *pinned = NULL;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = NULL;
    gpo_rt_buf *c = NULL;
    memset(data, 7, sizeof data);
#define OP_(name, expr)                                                                            \
    do {                                                                                           \
        if ((expr) != GPUOPT_OK)                                                                   \
            fail_msg("%s: %s", name, gpo_detail_get());                                            \
        check(name, expect);                                                                       \
    } while (0)
    OP_("buffer_alloc", o->buffer_alloc(rt, 64, &c));
    OP_("buffer_write", o->buffer_write(rt, h->a, 0, data, sizeof data));
    OP_("buffer_copy", o->buffer_copy(rt, h->b, h->a, sizeof data, &ns));
    OP_("buffer_copy", o->buffer_copy(rt, h->b, h->a, sizeof data, NULL));
    OP_("buffer_read", o->buffer_read(rt, h->b, 0, data, sizeof data));
    OP_("host_alloc_pinned", o->host_alloc_pinned(rt, 64, &pinned));
    OP_("program_build", o->program_build(rt, rt_scale_src, NULL, &prog, NULL));
    OP_("kernel_create", o->kernel_create(rt, prog, "scale", &k));
    OP_("kernel_max_group", o->kernel_max_group(rt, h->k, &max));
    OP_("kernel_set_local", o->kernel_set_local(rt, h->k, 0, 64 << 10));
    OP_("launch", o->launch(rt, h->k, 1, global, local, &ns));
    OP_("launch", o->launch(rt, h->k, 1, global, local, NULL));
    OP_("finish", o->finish(rt));
    o->host_free_pinned(rt, pinned);
    check("host_free_pinned", expect);
    o->kernel_free(rt, k);
    check("kernel_free", expect);
    o->program_free(rt, prog);
    check("program_free", expect);
    o->buffer_free(rt, c);
    check("buffer_free", expect);
#undef OP_
}

/* Checks nothing: every_op's check for tests that look at the trace. */
static void no_check(const char *op, int expect)
{
    (void)op;
    (void)expect;
}

static void all_work_goes_to_one_non_blocking_stream_of_the_session(void **state)
{
    (void)state;
    host_run h;
    start(&h, H100, "1000", NULL);
    every_op(&h, no_check, 0);
    /* Every call that takes a stream named the same one: a stream of the
     * session's, created non-blocking, never the legacy default (NULL). */
    const void *mine = NULL;
    int on_streams = 0;
    for (long i = 0; i < rtd.full.trace_length(); i++) {
        int has_stream = 0;
        const void *stream = NULL;
        const char *sym = rtd.full.trace_call(i, &has_stream, &stream);
        if (!has_stream)
            continue;
        if (!stream)
            fail_msg("call %ld, %s, used the legacy default stream", i, sym);
        if (!mine)
            mine = stream;
        assert_ptr_equal(stream, mine);
        on_streams++;
    }
    assert_true(on_streams >= 12);
    assert_int_equal(rtd.full.stream_flags(mine), 1); /* CU_STREAM_NON_BLOCKING */
    /* The synchronous copies and context-wide waits of the legacy stream are
     * never used: they would wait for, and be timed with, the host's work. */
    assert_int_equal(rtd.full.calls("cuMemcpyHtoD_v2") + rtd.full.calls("cuMemcpyDtoH_v2") +
                         rtd.full.calls("cuMemcpyDtoD_v2") + rtd.full.calls("cuCtxSynchronize"),
                     0);
    rt_stop(&h.x); /* the stream went with close */
    assert_int_equal(rtd.full.stream_flags(mine), -1);
}

static void current_is(const char *op, int expect)
{
    if (rtd.full.current_device() != expect || rtd.full.stack_depth() != (expect >= 0))
        fail_msg("after %s the thread's current device is %d (depth %d), not %d", op,
                 rtd.full.current_device(), rtd.full.stack_depth(), expect);
}

/* The host's thread may have no context, another device's, or the
 * session's own device's primary context current: after every op it has
 * exactly that again. */
static void the_host_thread_s_current_context_is_the_same_after_every_op(void **state)
{
    (void)state;
    static const int host_current[] = {-1, FUTURE, H100};
    for (size_t i = 0; i < sizeof host_current / sizeof host_current[0]; i++) {
        host_run h;
        start(&h, H100, "1000", NULL);
        if (host_current[i] >= 0)
            assert_int_equal(rtd.full.make_current(host_current[i]), 0);
        every_op(&h, current_is, host_current[i]);
        rtd.ops->close(h.x.rt);
        current_is("close", host_current[i]);
        if (host_current[i] >= 0)
            assert_int_equal(rtd.full.clear_current(), 0);
        assert_int_equal(rtd.full.live_contexts(), 0);
        assert_int_equal(rtd.full.live_objects(NULL), 0);
        gpo_backend_cuda.unload(h.x.state);
    }
}

/* A blocking copy waits for its stream before it returns: a pageable
 * host-to-device copy otherwise returns once the data is staged, before the
 * DMA lands (CUDA Driver API, "API synchronization behavior"), and a host
 * timer around it stops early. */
static void blocking_copies_wait_for_their_stream_before_returning(void **state)
{
    (void)state;
    host_run h;
    unsigned char data[4096] = {1};
    start(&h, H100, "1000", NULL);
    static const char *const copies[2] = {"cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2"};
    for (int dir = 0; dir < 2; dir++) {
        long from = rtd.full.trace_length();
        gpuopt_status st = dir == 0 ? rtd.ops->buffer_write(h.x.rt, h.a, 0, data, sizeof data)
                                    : rtd.ops->buffer_read(h.x.rt, h.a, 0, data, sizeof data);
        assert_int_equal(st, GPUOPT_OK);
        long copy = find_call(from, copies[dir]), wait = find_call(from, "cuStreamSynchronize");
        assert_true(copy >= 0);
        assert_true(wait > copy);
        assert_ptr_equal(stream_of(wait), stream_of(copy));
        /* Nothing is queued after the wait: the op returned on it. */
        for (long i = wait + 1; i < rtd.full.trace_length(); i++) {
            int has_stream = 0;
            const void *stream = NULL;
            const char *sym = rtd.full.trace_call(i, &has_stream, &stream);
            if (has_stream)
                fail_msg("%s after the wait", sym);
        }
    }
    rt_stop(&h.x);
}

/* A timed launch or copy records its end event after the work, waits for
 * that event, and only then reads the time. */
static void timers_stop_only_after_the_work_is_waited_for(void **state)
{
    (void)state;
    host_run h;
    double ns = 0.0;
    start(&h, H100, "1000", NULL);
    static const char *const order[] = {"cuEventRecord", "cuLaunchKernel", "cuEventRecord",
                                        "cuEventSynchronize", "cuEventElapsedTime_v2"};
    long from = rtd.full.trace_length();
    assert_int_equal(rtd.ops->launch(h.x.rt, h.k, 1, global, local, &ns), GPUOPT_OK);
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        long at = find_call(from, order[i]);
        if (at < 0)
            fail_msg("%s is missing or out of order", order[i]);
        from = at + 1;
    }
    /* The double's launch took 1000 ns of its clock (read back through a
     * float of milliseconds). */
    assert_true(fabs(ns - 1000.0) < 0.5);

    from = rtd.full.trace_length();
    assert_int_equal(rtd.ops->buffer_copy(h.x.rt, h.b, h.a, 4096, &ns), GPUOPT_OK);
    long rec = find_call(from, "cuEventRecord"), copy = find_call(from, "cuMemcpyDtoDAsync_v2");
    long end = find_call(copy, "cuEventRecord"), wait = find_call(end, "cuEventSynchronize");
    assert_true(rec >= 0 && copy > rec && end > copy && wait > end);
    assert_true(find_call(wait, "cuEventElapsedTime_v2") > wait);
    assert_true(ns > 0.0);
    rt_stop(&h.x);
}

/* Work takes time: a reading of 0, below 0 or not a number is no
 * measurement and is refused, so no candidate can win with it. */
static void zero_and_non_finite_readings_are_refused(void **state)
{
    (void)state;
    static const char *const readings[] = {"0", "nan", "inf", "-500"};
    for (size_t i = 0; i < sizeof readings / sizeof readings[0]; i++) {
        host_run h;
        double ns = 123.0;
        start(&h, H100, readings[i], NULL);
        gpuopt_status st = rtd.ops->launch(h.x.rt, h.k, 1, global, local, &ns);
        if (st != GPUOPT_ERR_DRIVER || !strstr(gpo_detail_get(), "which is no measurement"))
            fail_msg("a launch of %s ns: %d '%s'", readings[i], (int)st, gpo_detail_get());
        assert_non_null(strstr(gpo_detail_get(), "cuEventElapsedTime_v2 read"));
        /* Untimed, the same launch is fine: only the reading is refused. */
        assert_int_equal(rtd.ops->launch(h.x.rt, h.k, 1, global, local, NULL), GPUOPT_OK);
        rt_stop(&h.x);
    }
}

/* More than MAX_SHARED_MEMORY_PER_BLOCK (48 KiB) of dynamic shared memory
 * is opted into with cuFuncSetAttribute before the launch, once per size;
 * more than MAX_SHARED_MEMORY_PER_BLOCK_OPTIN (227 KiB on an H100) is
 * refused with the numbers. The double refuses a launch above the
 * function's limit, as the driver does. */
static void dynamic_shared_memory_above_48_kib_is_opted_into_up_to_the_device_limit(void **state)
{
    (void)state;
    host_run h;
    start(&h, H100, "1000", NULL);
    static const struct {
        size_t bytes;
        long set_calls; /* cuFuncSetAttribute calls so far */
    } steps[] = {
        {1024, 0}, {49152, 0}, {65536, 1}, {65536, 1}, {32768, 1}, {232448, 2},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        assert_int_equal(rtd.ops->kernel_set_local(h.x.rt, h.k, 0, steps[i].bytes), GPUOPT_OK);
        if (rtd.ops->launch(h.x.rt, h.k, 1, global, local, NULL) != GPUOPT_OK)
            fail_msg("%zu bytes: %s", steps[i].bytes, gpo_detail_get());
        assert_int_equal(rtd.full.calls("cuFuncSetAttribute"), steps[i].set_calls);
    }
    assert_int_equal(rtd.ops->kernel_set_local(h.x.rt, h.k, 0, 232449), GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpo_detail_get(), "232449 bytes of dynamic shared memory"));
    assert_non_null(strstr(gpo_detail_get(), "exceed the 232448 bytes a block may opt into"));
    assert_non_null(strstr(gpo_detail_get(), "49152 without opting in"));
    rt_stop(&h.x);

    /* A K80 has no opt-in beyond its 48 KiB. */
    start(&h, K80, "1000", NULL);
    assert_int_equal(rtd.ops->kernel_set_local(h.x.rt, h.k, 0, 49153), GPUOPT_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(gpo_detail_get(), "exceed the 49152 bytes a block may opt into"));
    assert_int_equal(rtd.ops->kernel_set_local(h.x.rt, h.k, 0, 49152), GPUOPT_OK);
    assert_int_equal(rtd.ops->launch(h.x.rt, h.k, 1, global, local, NULL), GPUOPT_OK);
    assert_int_equal(rtd.full.calls("cuFuncSetAttribute"), 0);
    rt_stop(&h.x);
}

/* Every result cuda.h calls sticky, met where a fault shows (waiting for
 * a timed launch), is GPUOPT_ERR_FAULT naming the result and saying, with
 * cuda.h, that the process must be relaunched; never "until a reset". */
static void each_sticky_error_is_a_fault_named_in_the_driver_s_words(void **state)
{
    (void)state;
    static const char *const sticky[] = {
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "CUDA_ERROR_LAUNCH_TIMEOUT",
        "CUDA_ERROR_ASSERT",
        "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "CUDA_ERROR_MISALIGNED_ADDRESS",
        "CUDA_ERROR_INVALID_ADDRESS_SPACE",
        "CUDA_ERROR_INVALID_PC",
        "CUDA_ERROR_LAUNCH_FAILED",
    };
    for (size_t i = 0; i < sizeof sticky / sizeof sticky[0]; i++) {
        host_run h;
        char fault[64];
        double ns = 0.0;
        snprintf(fault, sizeof fault, "1:%s", sticky[i]);
        start(&h, H100, "1000", fault);
        gpuopt_status st = rtd.ops->launch(h.x.rt, h.k, 1, global, local, &ns);
        const char *why = gpo_detail_get();
        if (st != GPUOPT_ERR_FAULT || !strstr(why, sticky[i]) ||
            !strstr(why, "the process must be terminated and relaunched") ||
            strstr(why, "cudaDeviceReset"))
            fail_msg("%s: %d '%s'", sticky[i], (int)st, why);
        assert_int_equal(rtd.full.stack_depth(), 0);
        rt_stop(&h.x);
    }
    /* Errors that leave the context usable are not sticky. */
    assert_false(gpo_cuda_result_sticky(GPO_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));
    assert_false(gpo_cuda_result_sticky(GPO_CUDA_ERROR_OUT_OF_MEMORY));
    assert_false(gpo_cuda_result_sticky(GPO_CUDA_ERROR_INVALID_VALUE));
}

/* A kernel faults inside the context the host program shares: the fault
 * shows at the next wait, and from then on every op fails with it as
 * GPUOPT_ERR_FAULT (a build is not blamed), while the host thread keeps
 * its current context and the session still closes without leaks. */
static void after_a_fault_every_op_fails_with_it_and_none_is_a_build_error(void **state)
{
    (void)state;
    host_run h;
    unsigned char data[64] = {0};
    gpo_rt_prog *prog = NULL;
    gpo_rt_buf *c = NULL;
    char *log = NULL;
    double ns = 0.0;
    start(&h, H100, "1000", "2:CUDA_ERROR_ILLEGAL_ADDRESS");
    assert_int_equal(rtd.full.make_current(H100), 0);
    assert_int_equal(rtd.ops->launch(h.x.rt, h.k, 1, global, local, NULL), GPUOPT_OK);
    /* Launches are asynchronous: the faulting one is enqueued fine. */
    assert_int_equal(rtd.ops->launch(h.x.rt, h.k, 1, global, local, NULL), GPUOPT_OK);
    assert_int_equal(rtd.ops->finish(h.x.rt), GPUOPT_ERR_FAULT);
    assert_non_null(strstr(gpo_detail_get(), "cuStreamSynchronize failed: "
                                             "CUDA_ERROR_ILLEGAL_ADDRESS"));
    assert_int_equal(rtd.ops->buffer_write(h.x.rt, h.a, 0, data, sizeof data), GPUOPT_ERR_FAULT);
    assert_int_equal(rtd.ops->buffer_read(h.x.rt, h.a, 0, data, sizeof data), GPUOPT_ERR_FAULT);
    assert_int_equal(rtd.ops->buffer_alloc(h.x.rt, 64, &c), GPUOPT_ERR_FAULT);
    assert_null(c);
    assert_int_equal(rtd.ops->buffer_copy(h.x.rt, h.b, h.a, 64, &ns), GPUOPT_ERR_FAULT);
    assert_int_equal(rtd.ops->launch(h.x.rt, h.k, 1, global, local, &ns), GPUOPT_ERR_FAULT);
    assert_int_equal(rtd.ops->program_build(h.x.rt, rt_scale_src, NULL, &prog, &log),
                     GPUOPT_ERR_FAULT);
    assert_null(prog);
    free(log);
    assert_non_null(strstr(gpo_detail_get(), "cuModuleLoadData"));
    assert_non_null(strstr(gpo_detail_get(), "CUDA_ERROR_ILLEGAL_ADDRESS"));
    current_is("the fault", H100);
    rtd.ops->close(h.x.rt);
    current_is("close", H100);
    assert_int_equal(rtd.full.clear_current(), 0);
    assert_int_equal(rtd.full.live_contexts(), 0);
    assert_int_equal(rtd.full.live_objects(NULL), 0);
    gpo_backend_cuda.unload(h.x.state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_work_goes_to_one_non_blocking_stream_of_the_session),
        cmocka_unit_test(the_host_thread_s_current_context_is_the_same_after_every_op),
        cmocka_unit_test(blocking_copies_wait_for_their_stream_before_returning),
        cmocka_unit_test(timers_stop_only_after_the_work_is_waited_for),
        cmocka_unit_test(zero_and_non_finite_readings_are_refused),
        cmocka_unit_test(dynamic_shared_memory_above_48_kib_is_opted_into_up_to_the_device_limit),
        cmocka_unit_test(each_sticky_error_is_a_fault_named_in_the_driver_s_words),
        cmocka_unit_test(after_a_fault_every_op_fails_with_it_and_none_is_a_build_error),
    };
    return cmocka_run_group_tests(tests, rt_doubles_setup, NULL);
}
