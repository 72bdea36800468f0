/* Stale and foreign handles handed to the OpenCL runtime ops: a handle
 * that was freed, one left behind by a closed session, and one of another
 * session are refused (or, for the frees, ignored) without the runtime
 * reading them. Built with ASan (the asan preset), a read of a freed
 * object here is a heap-use-after-free report. Nothing is allocated between
 * freeing an object and handing its address back, so malloc cannot have
 * given the address to a new object (which no check by address could tell
 * from the old one); under ASan the quarantine guarantees it too.
 *
 * Runs through the test-double loader, so every OpenCL object the backend
 * made is counted: on synthetic devices (GPO_OCL_HANDLES_DEVICES names the
 * fixture), and passed through to PoCL's CPU device when it is unset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ocl_test.h"

static ocl_fx fx;
static gpuopt_device *dev;
static const gpo_runtime_ops *ops;

static const char *src = "__kernel void inc(__global uint *x, uint k)"
                         "{ x[get_global_id(0)] += k; }";

static int group_setup(void **state)
{
    (void)state;
    const char *devices = getenv("GPO_OCL_HANDLES_DEVICES");
    int synthetic = devices && devices[0];
    ocl_fake_set_devices(GPO_FAKE_OPENCL, synthetic ? devices : NULL);
    ocl_fx_init(&fx, GPO_FAKE_OPENCL);
    dev = ocl_fx_open_runtime_device(&fx, synthetic);
    ops = gpo_backend_opencl.runtime;
    return dev ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    ocl_fx_free(&fx);
    return ocl_fake_live(GPO_FAKE_OPENCL) == 0 ? 0 : -1;
}

/* One object of each kind in session `rt`. */
typedef struct objs {
    gpo_rt_buf *buf, *buf2;
    gpo_rt_prog *prog;
    gpo_rt_kernel *kernel;
    void *pinned;
} objs;

static void make_objs(gpo_rt *rt, objs *o)
{
    memset(o, 0, sizeof *o);
    assert_int_equal(ops->buffer_alloc(rt, 256, &o->buf), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(rt, 256, &o->buf2), GPUOPT_OK);
    assert_int_equal(ops->program_build(rt, src, "", &o->prog, NULL), GPUOPT_OK);
    assert_int_equal(ops->kernel_create(rt, o->prog, "inc", &o->kernel), GPUOPT_OK);
    assert_int_equal(ops->host_alloc_pinned(rt, 256, &o->pinned), GPUOPT_OK);
}

static void free_objs(gpo_rt *rt, const objs *o)
{
    ops->kernel_free(rt, o->kernel);
    ops->program_free(rt, o->prog);
    ops->buffer_free(rt, o->buf);
    ops->buffer_free(rt, o->buf2);
    ops->host_free_pinned(rt, o->pinned);
}

/* Every op that takes a handle, given the handles of `bad` (not objects of
 * `rt`) next to the live objects of `good` (objects of `rt`): each op
 * refuses, and each free leaves the driver's objects alone. */
static void bad_handles_are_refused(gpo_rt *rt, const objs *bad, const objs *good)
{
    uint32_t host[8] = {0}, k = 1;
    size_t global[3] = {64, 1, 1}, max = 0;
    double ns = 0;
    long live = ocl_fake_live(GPO_FAKE_OPENCL);

    assert_int_equal(ops->buffer_write(rt, bad->buf, 0, host, sizeof host),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->buffer_read(rt, bad->buf, 0, host, sizeof host),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->buffer_copy(rt, good->buf, bad->buf, 8, NULL),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->buffer_copy(rt, bad->buf, good->buf, 8, &ns),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_buffer(rt, good->kernel, 0, bad->buf),
                     GPUOPT_ERR_INVALID_ARGUMENT);

    gpo_rt_kernel *kern = (gpo_rt_kernel *)1;
    assert_int_equal(ops->kernel_create(rt, bad->prog, "inc", &kern), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(kern);

    assert_int_equal(ops->kernel_set_buffer(rt, bad->kernel, 0, good->buf),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_scalar(rt, bad->kernel, 1, &k, sizeof k),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_set_local(rt, bad->kernel, 1, 16), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->kernel_max_group(rt, bad->kernel, &max), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->launch(rt, bad->kernel, 1, global, NULL, NULL),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(ops->launch(rt, bad->kernel, 1, global, NULL, &ns),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "not a kernel of this session"));

    /* Frees of handles that are not this session's change nothing. */
    ops->buffer_free(rt, bad->buf);
    ops->program_free(rt, bad->prog);
    ops->kernel_free(rt, bad->kernel);
    ops->host_free_pinned(rt, bad->pinned);
    assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), live);

    /* The session's own objects still work. */
    assert_int_equal(ops->buffer_write(rt, good->buf, 0, host, sizeof host), GPUOPT_OK);
    assert_int_equal(ops->kernel_max_group(rt, good->kernel, &max), GPUOPT_OK);
}

/* A handle as a caller would keep it after freeing it: an address (an
 * integer, so the compiler does not flag the deliberate use of a stale
 * pointer). The runtime gets it back as the handle type. */
typedef struct stale {
    volatile uintptr_t buf, buf2, prog, kernel, pinned;
} stale;

static void remember(stale *s, const objs *o)
{
    s->buf = (uintptr_t)o->buf;
    s->buf2 = (uintptr_t)o->buf2;
    s->prog = (uintptr_t)o->prog;
    s->kernel = (uintptr_t)o->kernel;
    s->pinned = (uintptr_t)o->pinned;
}

static void recall(const stale *s, objs *o)
{
    o->buf = (gpo_rt_buf *)s->buf;
    o->buf2 = (gpo_rt_buf *)s->buf2;
    o->prog = (gpo_rt_prog *)s->prog;
    o->kernel = (gpo_rt_kernel *)s->kernel;
    o->pinned = (void *)s->pinned;
}

static void freed_handles_of_every_kind_are_refused_without_being_read(void **state)
{
    (void)state;
    long before = ocl_fake_live(GPO_FAKE_OPENCL);
    gpo_rt *rt = NULL;
    assert_int_equal(ops->open(fx.state, &dev->routes[0], &rt), GPUOPT_OK);
    objs good, gone;
    make_objs(rt, &good);
    make_objs(rt, &gone);
    stale s;
    remember(&s, &gone);
    free_objs(rt, &gone);

    recall(&s, &gone);
    bad_handles_are_refused(rt, &gone, &good);
    /* A second free of each is as harmless as the first was final. */
    free_objs(rt, &gone);

    free_objs(rt, &good);
    ops->close(rt);
    assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), before);
}

static void handles_left_to_a_closed_session_are_refused_by_the_next(void **state)
{
    (void)state;
    long before = ocl_fake_live(GPO_FAKE_OPENCL);
    gpo_rt *old = NULL, *rt = NULL;
    assert_int_equal(ops->open(fx.state, &dev->routes[0], &old), GPUOPT_OK);
    objs gone, good;
    make_objs(old, &gone);
    /* The new session's objects exist before the old ones are freed: a
     * stale address that malloc handed out again would be a live object,
     * which no check by address can tell from the old one. */
    assert_int_equal(ops->open(fx.state, &dev->routes[0], &rt), GPUOPT_OK);
    make_objs(rt, &good);
    long with_good = ocl_fake_live(GPO_FAKE_OPENCL);
    stale s;
    remember(&s, &gone);
    ops->close(old); /* releases every object the caller left */
    assert_true(ocl_fake_live(GPO_FAKE_OPENCL) < with_good);

    recall(&s, &gone);
    bad_handles_are_refused(rt, &gone, &good);
    free_objs(rt, &good);
    ops->close(rt);
    assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), before);
}

static void another_sessions_handles_are_refused_and_stay_usable(void **state)
{
    (void)state;
    long before = ocl_fake_live(GPO_FAKE_OPENCL);
    gpo_rt *rt = NULL, *other = NULL;
    assert_int_equal(ops->open(fx.state, &dev->routes[0], &rt), GPUOPT_OK);
    assert_int_equal(ops->open(fx.state, &dev->routes[0], &other), GPUOPT_OK);
    objs mine, theirs;
    make_objs(rt, &mine);
    make_objs(other, &theirs);

    bad_handles_are_refused(rt, &theirs, &mine);

    /* Their owner still has every one of them. */
    uint32_t host[8] = {0}, k = 2;
    size_t global[3] = {64, 1, 1}, max = 0;
    assert_int_equal(ops->buffer_write(other, theirs.buf, 0, host, sizeof host), GPUOPT_OK);
    assert_int_equal(ops->buffer_copy(other, theirs.buf2, theirs.buf, 8, NULL), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_buffer(other, theirs.kernel, 0, theirs.buf), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_scalar(other, theirs.kernel, 1, &k, sizeof k), GPUOPT_OK);
    assert_int_equal(ops->kernel_max_group(other, theirs.kernel, &max), GPUOPT_OK);
    assert_int_equal(ops->launch(other, theirs.kernel, 1, global, NULL, NULL), GPUOPT_OK);
    assert_int_equal(ops->finish(other), GPUOPT_OK);
    assert_int_equal(ops->buffer_read(other, theirs.buf, 0, theirs.pinned, sizeof host), GPUOPT_OK);

    free_objs(other, &theirs);
    ops->close(other);
    free_objs(rt, &mine);
    ops->close(rt);
    assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(freed_handles_of_every_kind_are_refused_without_being_read),
        cmocka_unit_test(handles_left_to_a_closed_session_are_refused_by_the_next),
        cmocka_unit_test(another_sessions_handles_are_refused_and_stay_usable),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
