/* Device time on the caller's stream: CUDA events on the libcuda test
 * double, HIP events on the libamdhip64 test double, OpenCL markers on
 * PoCL's CPU device (through the test-double loader, which counts
 * objects). The test makes its own context, stream and buffers with the
 * same library the backend opened, as a program would, and profiles
 * copies it queues: the doubles' virtual clocks make each copy's device
 * time known (CUDA: 2 x bytes at the datasheet bandwidth; HIP: 1 byte per
 * ns each way), and the test's own events around the same copy must read
 * what the profiler read. Also: a stream of another device, a thread with
 * no current context, a queue without profiling are host-timed with the
 * reason; reports from another thread; nothing is left behind; the
 * calling thread's current context or device is never changed. */
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include "cuda/cuda_api.h"
#include "gpuopt/gpuopt.h"
#include "prof_test.h"
#include "rocm/hip_rt_api.h"

#define COPY_BYTES (32u << 20)

/* A symbol of the library at $variable (the one the backend opened). */
static void *sym(const char *variable, const char *name)
{
    const char *path = getenv(variable);
    assert_non_null(path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    void *f = dlsym(h, name);
    if (!f)
        fail_msg("%s lacks %s", path, name);
    return f; /* the handle stays open, as the backend's */
}
#define FN(var, type, name) ((type)(uintptr_t)sym(var, name))

#define context_for prof_test_context
#define summary prof_test_summary
#define num prof_test_num
#define str prof_test_str

static gpuopt_profiler *profiler_on(gpuopt_context *ctx, const char *id, void *stream)
{
    gpuopt_device *dev = NULL;
    assert_int_equal(gpuopt_device_select(ctx, id, &dev), GPUOPT_OK);
    return prof_test_profiler(ctx, dev, GPUOPT_PROFILER_NO_VENDOR_RANGES, stream);
}

static const cJSON *row(const cJSON *j, const char *name)
{
    const cJSON *r = prof_test_row(j, name);
    if (!r)
        fail_msg("no section %s", name);
    return r;
}

static void assert_close(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("%.6g is not within %g of %.6g", got, rel, want);
}

/* ---- CUDA ------------------------------------------------------------------- */

#define CU "GPUOPT_CUDA_LIBRARY"
typedef struct cu {
    gpo_pfn_cuInit init;
    gpo_pfn_cuDevicePrimaryCtxRetain retain;
    gpo_pfn_cuDevicePrimaryCtxRelease release;
    gpo_pfn_cuCtxPushCurrent push;
    gpo_pfn_cuCtxPopCurrent pop;
    gpo_pfn_cuCtxGetCurrent current;
    gpo_pfn_cuStreamCreate stream_create;
    gpo_pfn_cuStreamDestroy stream_destroy;
    gpo_pfn_cuMemAlloc alloc;
    gpo_pfn_cuMemFree free;
    gpo_pfn_cuMemcpyDtoDAsync copy;
    gpo_pfn_cuEventCreate event_create;
    gpo_pfn_cuEventRecord event_record;
    gpo_pfn_cuEventElapsedTime elapsed;
    gpo_pfn_cuEventDestroy event_destroy;
    long (*live)(const char *kind);
} cu;

static cu cu_api(void)
{
    cu a;
    a.init = FN(CU, gpo_pfn_cuInit, "cuInit");
    a.retain = FN(CU, gpo_pfn_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    a.release = FN(CU, gpo_pfn_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    a.push = FN(CU, gpo_pfn_cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    a.pop = FN(CU, gpo_pfn_cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    a.current = FN(CU, gpo_pfn_cuCtxGetCurrent, "cuCtxGetCurrent");
    a.stream_create = FN(CU, gpo_pfn_cuStreamCreate, "cuStreamCreate");
    a.stream_destroy = FN(CU, gpo_pfn_cuStreamDestroy, "cuStreamDestroy_v2");
    a.alloc = FN(CU, gpo_pfn_cuMemAlloc, "cuMemAlloc_v2");
    a.free = FN(CU, gpo_pfn_cuMemFree, "cuMemFree_v2");
    a.copy = FN(CU, gpo_pfn_cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    a.event_create = FN(CU, gpo_pfn_cuEventCreate, "cuEventCreate");
    a.event_record = FN(CU, gpo_pfn_cuEventRecord, "cuEventRecord");
    a.elapsed = FN(CU, gpo_pfn_cuEventElapsedTime, "cuEventElapsedTime_v2");
    a.event_destroy = FN(CU, gpo_pfn_cuEventDestroy, "cuEventDestroy_v2");
    a.live = FN(CU, long (*)(const char *), "gpo_fake_cuda_live_objects");
    return a;
}

typedef struct cu_fx {
    cu a;
    gpo_cu_context ctx0, ctx1;
    gpo_cu_stream stream;
    gpo_cu_deviceptr src, dst;
} cu_fx;

static void cu_setup(cu_fx *f)
{
    f->a = cu_api();
    assert_int_equal(f->a.init(0), 0);
    assert_int_equal(f->a.retain(&f->ctx0, 0), 0);
    assert_int_equal(f->a.retain(&f->ctx1, 1), 0);
    assert_int_equal(f->a.push(f->ctx0), 0);
    assert_int_equal(f->a.stream_create(&f->stream, 0), 0);
    assert_int_equal(f->a.alloc(&f->src, COPY_BYTES), 0);
    assert_int_equal(f->a.alloc(&f->dst, COPY_BYTES), 0);
}

static void cu_teardown(cu_fx *f)
{
    gpo_cu_context popped;
    f->a.free(f->src);
    f->a.free(f->dst);
    f->a.stream_destroy(f->stream);
    f->a.pop(&popped);
    f->a.release(0);
    f->a.release(1);
}

static void cu_copy(cu_fx *f)
{
    assert_int_equal(f->a.copy(f->dst, f->src, COPY_BYTES, f->stream), 0);
}

static void *report_elsewhere(void *arg)
{
    char *text = NULL;
    gpuopt_status st = gpuopt_profiler_report(arg, GPUOPT_PROFILE_JSON, &text);
    return st == GPUOPT_OK ? text : NULL;
}

static void cuda_events_on_the_callers_stream_time_its_work(void **state)
{
    (void)state;
    cu_fx f;
    cu_setup(&f);
    long events_before = f.a.live("events");
    gpuopt_context *ctx = context_for("cuda");
    gpuopt_profiler *p = profiler_on(ctx, "cuda:0", f.stream);

    /* A section around one copy, and the test's own events around it. */
    gpo_cu_event e0, e1;
    assert_int_equal(f.a.event_create(&e0, 0), 0);
    assert_int_equal(f.a.event_create(&e1, 0), 0);
    assert_int_equal(gpuopt_profiler_begin(p, "copy"), GPUOPT_OK);
    assert_int_equal(f.a.event_record(e0, f.stream), 0);
    cu_copy(&f);
    assert_int_equal(f.a.event_record(e1, f.stream), 0);
    assert_int_equal(gpuopt_profiler_end(p, "copy"), GPUOPT_OK);
    float own_ms = 0;
    assert_int_equal(f.a.elapsed(&own_ms, e0, e1), 0);
    f.a.event_destroy(e0);
    f.a.event_destroy(e1);
    /* Two copies in an outer section, one in the inner. */
    assert_int_equal(gpuopt_profiler_begin(p, "outer"), GPUOPT_OK);
    cu_copy(&f);
    assert_int_equal(gpuopt_profiler_begin(p, "inner"), GPUOPT_OK);
    cu_copy(&f);
    assert_int_equal(gpuopt_profiler_end(p, "inner"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "outer"), GPUOPT_OK);

    /* The profiler never leaves the thread's context changed. */
    gpo_cu_context cur = NULL;
    assert_int_equal(f.a.current(&cur), 0);
    assert_ptr_equal(cur, f.ctx0);

    /* Read from a thread with no CUDA context current. */
    pthread_t t;
    char *text = NULL;
    assert_int_equal(pthread_create(&t, NULL, report_elsewhere, p), 0);
    assert_int_equal(pthread_join(t, (void **)&text), 0);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    gpuopt_free(text);
    assert_non_null(j);
    /* Tesla T4: 2 x 5001 MHz x 256 bit / 8 = 320.064 GB/s; a copy reads
     * and writes every byte. */
    double one = 2.0 * COPY_BYTES / 320.064;
    assert_string_equal(str(row(j, "copy"), "clock"), "device");
    assert_close(num(row(j, "copy"), "total_ns"), one, 1e-5);
    assert_close(num(row(j, "copy"), "total_ns"), own_ms * 1e6, 1e-6);
    assert_close(num(row(j, "outer"), "total_ns"), 2 * one, 1e-5);
    assert_close(num(row(j, "outer/inner"), "total_ns"), one, 1e-5);
    assert_close(num(row(j, "outer/inner"), "share_of_parent"), 0.5, 1e-5);
    assert_non_null(strstr(str(cJSON_GetObjectItem(j, "clock"), "device"),
                           "cuda events on the caller's stream, on cuda:0 (Tesla T4)"));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    /* Every event the profiler made is destroyed with it. */
    assert_int_equal(f.a.live("events"), events_before);
    gpuopt_context_destroy(ctx);
    cu_teardown(&f);
}

static void a_stream_of_another_device_or_no_context_is_host_timed_with_the_reason(void **state)
{
    (void)state;
    cu_fx f;
    cu_setup(&f);
    gpuopt_context *ctx = context_for("cuda");
    /* cuda:1's context is current, the profiler is for cuda:0. */
    gpo_cu_context popped;
    assert_int_equal(f.a.push(f.ctx1), 0);
    gpuopt_profiler *p = profiler_on(ctx, "cuda:0", f.stream);
    assert_int_equal(f.a.pop(&popped), 0);
    assert_int_equal(gpuopt_profiler_begin(p, "x"), GPUOPT_OK);
    assert_int_equal(gpuopt_profiler_end(p, "x"), GPUOPT_OK);
    cJSON *j = summary(p);
    assert_string_equal(str(row(j, "x"), "clock"), "host");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "clock"), "device")));
    assert_non_null(strstr(str(cJSON_GetObjectItem(j, "clock"), "device_note"),
                           "current CUDA context is on cuda:1"));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);

    /* No context current at all. */
    assert_int_equal(f.a.pop(&popped), 0);
    p = profiler_on(ctx, "cuda:0", f.stream);
    j = summary(p);
    assert_non_null(
        strstr(str(cJSON_GetObjectItem(j, "clock"), "device_note"), "no current CUDA context"));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    assert_int_equal(f.a.push(f.ctx0), 0);
    gpuopt_context_destroy(ctx);
    cu_teardown(&f);
}

/* ---- HIP -------------------------------------------------------------------- */

#define HIP "GPUOPT_HIP_LIBRARY"

static void hip_events_on_the_callers_stream_time_its_work(void **state)
{
    (void)state;
    gpo_hip_set_device_fn set_device = FN(HIP, gpo_hip_set_device_fn, "hipSetDevice");
    gpo_hip_int_out_fn get_device = FN(HIP, gpo_hip_int_out_fn, "hipGetDevice");
    gpo_hip_stream_create_fn stream_create =
        FN(HIP, gpo_hip_stream_create_fn, "hipStreamCreateWithFlags");
    gpo_hip_stream_fn stream_destroy = FN(HIP, gpo_hip_stream_fn, "hipStreamDestroy");
    gpo_hip_malloc_fn hmalloc = FN(HIP, gpo_hip_malloc_fn, "hipMalloc");
    gpo_hip_free_fn hfree = FN(HIP, gpo_hip_free_fn, "hipFree");
    gpo_hip_memcpy_dtod_async_fn copy = FN(HIP, gpo_hip_memcpy_dtod_async_fn, "hipMemcpyDtoDAsync");
    int (*live)(void) = FN(HIP, int (*)(void), "gpuoptFakeHipLive");

    gpuopt_context *ctx = context_for("rocm");
    assert_int_equal(set_device(0), 0);
    int live_before = live();
    gpo_hip_stream s = NULL;
    void *a = NULL, *b = NULL;
    assert_int_equal(stream_create(&s, 0), 0);
    assert_int_equal(hmalloc(&a, 1 << 20), 0);
    assert_int_equal(hmalloc(&b, 1 << 20), 0);
    gpuopt_profiler *p = profiler_on(ctx, "rocm:0", s);
    assert_int_equal(gpuopt_profiler_begin(p, "copy"), GPUOPT_OK);
    assert_int_equal(copy(b, a, 1 << 20, s), 0);
    assert_int_equal(gpuopt_profiler_end(p, "copy"), GPUOPT_OK);
    int dev = -1;
    assert_int_equal(get_device(&dev), 0);
    assert_int_equal(dev, 0);
    cJSON *j = summary(p);
    assert_string_equal(str(row(j, "copy"), "clock"), "device");
    /* The double's clock: 1 byte per ns each way. */
    assert_close(num(row(j, "copy"), "total_ns"), 2.0 * (1 << 20), 1e-6);
    assert_non_null(strstr(str(cJSON_GetObjectItem(j, "clock"), "device"),
                           "rocm events on the caller's stream, on rocm:0"));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    hfree(a);
    hfree(b);
    stream_destroy(s);
    assert_int_equal(live(), live_before);
    gpuopt_context_destroy(ctx);
}

/* ---- OpenCL on PoCL ----------------------------------------------------------- */

#define CL "GPUOPT_OPENCL_LIBRARY"
typedef cl_int (*get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);
typedef cl_int (*get_devices_fn)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *,
                                 cl_uint *);
typedef cl_context (*create_context_fn)(const cl_context_properties *, cl_uint,
                                        const cl_device_id *, void *, void *, cl_int *);
typedef cl_command_queue (*create_queue_fn)(cl_context, cl_device_id, cl_command_queue_properties,
                                            cl_int *);
typedef cl_mem (*create_buffer_fn)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
typedef cl_int (*copy_fn)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                          const cl_event *, cl_event *);
typedef cl_int (*release_fn)(void *);

static void opencl_markers_on_the_callers_queue_time_its_work(void **state)
{
    (void)state;
    get_platforms_fn platforms = FN(CL, get_platforms_fn, "clGetPlatformIDs");
    get_devices_fn devices = FN(CL, get_devices_fn, "clGetDeviceIDs");
    create_context_fn create_context = FN(CL, create_context_fn, "clCreateContext");
    create_queue_fn create_queue = FN(CL, create_queue_fn, "clCreateCommandQueue");
    create_buffer_fn create_buffer = FN(CL, create_buffer_fn, "clCreateBuffer");
    copy_fn copy = FN(CL, copy_fn, "clEnqueueCopyBuffer");
    release_fn release_queue = FN(CL, release_fn, "clReleaseCommandQueue");
    release_fn release_mem = FN(CL, release_fn, "clReleaseMemObject");
    release_fn release_context = FN(CL, release_fn, "clReleaseContext");
    long (*live)(void) = FN(CL, long (*)(void), "gpo_fake_cl_live");

    gpuopt_context *ctx = context_for("opencl");
    gpuopt_device *dev = NULL;
    if (gpuopt_device_select(ctx, "opencl", &dev) != GPUOPT_OK) {
        gpuopt_context_destroy(ctx);
        print_message("no OpenCL device (PoCL): skipped\n");
        skip();
    }
    cl_platform_id plat;
    cl_device_id d;
    cl_uint n = 0;
    cl_int err;
    assert_int_equal(platforms(1, &plat, &n), CL_SUCCESS);
    assert_int_equal(devices(plat, CL_DEVICE_TYPE_ALL, 1, &d, NULL), CL_SUCCESS);
    cl_context c = create_context(NULL, 1, &d, NULL, NULL, &err);
    assert_non_null(c);
    long live_before = live();
    cl_command_queue timed = create_queue(c, d, CL_QUEUE_PROFILING_ENABLE, &err);
    cl_command_queue untimed = create_queue(c, d, 0, &err);
    cl_mem a = create_buffer(c, CL_MEM_READ_WRITE, 64 << 20, NULL, &err);
    cl_mem b = create_buffer(c, CL_MEM_READ_WRITE, 64 << 20, NULL, &err);
    assert_non_null(timed);
    assert_non_null(untimed);

    gpuopt_profiler *p = profiler_on(ctx, "opencl:0", timed);
    assert_int_equal(gpuopt_profiler_begin(p, "copy"), GPUOPT_OK);
    assert_int_equal(copy(timed, a, b, 0, 0, 64 << 20, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(gpuopt_profiler_end(p, "copy"), GPUOPT_OK);
    cJSON *j = summary(p);
    /* A real device: the time is whatever the copy took, but it is the
     * device's, and positive. */
    assert_string_equal(str(row(j, "copy"), "clock"), "device");
    assert_true(num(row(j, "copy"), "total_ns") > 0);
    assert_non_null(strstr(str(cJSON_GetObjectItem(j, "clock"), "device"),
                           "opencl events on the caller's stream, on opencl:0"));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);

    p = profiler_on(ctx, "opencl:0", untimed);
    j = summary(p);
    assert_non_null(strstr(str(cJSON_GetObjectItem(j, "clock"), "device_note"),
                           "without CL_QUEUE_PROFILING_ENABLE"));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);

    release_mem(a);
    release_mem(b);
    release_queue(timed);
    release_queue(untimed);
    /* Every marker the profiler made is released. */
    assert_int_equal(live(), live_before);
    release_context(c);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_events_on_the_callers_stream_time_its_work),
        cmocka_unit_test(a_stream_of_another_device_or_no_context_is_host_timed_with_the_reason),
        cmocka_unit_test(hip_events_on_the_callers_stream_time_its_work),
        cmocka_unit_test(opencl_markers_on_the_callers_queue_time_its_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
