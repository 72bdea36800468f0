/* Loading failures and injected driver errors: the backend says why in
 * words, never crashes, and releases every OpenCL object it made (counted
 * by the test-double loader, which passes calls through to PoCL). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend_env.h"
#include "ocl_test.h"
#include "cl_device.h"

static void nonexistent_library_is_unavailable_with_its_path(void **state)
{
    (void)state;
    ocl_fx fx;
    ocl_fx_init(&fx, "/nonexistent/libOpenCL.so.1");
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_ERR_UNAVAILABLE);
    assert_null(fx.state);
    assert_non_null(strstr(fx.report.reason, "/nonexistent/libOpenCL.so.1"));
    assert_non_null(strstr(fx.report.reason, "No such file"));
    assert_non_null(strstr(gpo_detail_get(), "/nonexistent/libOpenCL.so.1"));
    assert_string_equal(fx.report.library, "");
    ocl_fx_free(&fx);
}

static void missing_entry_point_is_an_error_naming_it(void **state)
{
    (void)state;
    ocl_fx fx;
    ocl_fx_init(&fx, GPO_FAKE_OPENCL_MISSING);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_ERR_DRIVER);
    assert_null(fx.state);
    assert_non_null(strstr(fx.report.reason, "clCreateKernel"));
    assert_non_null(strstr(fx.report.reason, "missing/libOpenCL.so.1"));
    /* Only the missing one is named. */
    assert_null(strstr(fx.report.reason, "clCreateBuffer"));
    ocl_fx_free(&fx);
}

/* NULL arguments are the core's contract, asserted inside the backend; the
 * frees accept NULL as free() does, and the lookups answer for any code. */
static void frees_take_null_and_lookups_answer_for_any_code(void **state)
{
    (void)state;
    gpo_backend_opencl.unload(NULL);
    gpo_ocl_priv_free(NULL);
    gpo_ocl_facts_free(NULL);
    gpo_backend_opencl.runtime->close(NULL);
    assert_string_equal(gpo_ocl_error_name(-5), "CL_OUT_OF_RESOURCES");
    assert_string_equal(gpo_ocl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
    assert_string_equal(gpo_ocl_error_name(12345), "CL_UNKNOWN_ERROR");
    assert_null(gpo_ocl_vendor_short(0));
    assert_string_equal(gpo_ocl_vendor_short(0x10de), "NVIDIA");
}

static void platform_query_failure_is_reported_in_words(void **state)
{
    (void)state;
    ocl_fx fx;
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "clGetPlatformIDs@1=-5");
    ocl_fx_init(&fx, GPO_FAKE_OPENCL);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(fx.report.reason, "clGetPlatformIDs"));
    assert_non_null(strstr(fx.report.reason, "CL_OUT_OF_RESOURCES"));
    assert_non_null(strstr(fx.report.library, "full/libOpenCL.so.1"));
    ocl_fx_free(&fx);

    /* The loader's "no ICD installed" is unavailable, said plainly. */
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "clGetPlatformIDs@1=-1001");
    ocl_fx_init(&fx, GPO_FAKE_OPENCL);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(strstr(fx.report.reason, "no OpenCL platform is installed"));
    ocl_fx_free(&fx);

    /* The second call (the list itself) failing is handled too. */
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "clGetPlatformIDs@2=-6");
    ocl_fx_init(&fx, GPO_FAKE_OPENCL);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(fx.report.reason, "CL_OUT_OF_HOST_MEMORY"));
    ocl_fx_free(&fx);
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
}

static void device_list_failure_skips_the_platform(void **state)
{
    (void)state;
    ocl_fx fx;
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "clGetDeviceIDs@1=-33");
    ocl_fx_init(&fx, GPO_FAKE_OPENCL);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_OK);
    assert_int_equal(fx.list.n, 0);
    assert_non_null(strstr(fx.report.reason, "skipped"));
    assert_non_null(strstr(fx.report.reason, "CL_INVALID_DEVICE"));
    ocl_fx_free(&fx);
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
}

/* Fails each clGetDeviceInfo call in turn: load and enumerate always
 * succeed (a device that cannot say its name, type, version or extensions
 * is left out; any other fact becomes unknown), and nothing leaks. */
static void every_device_query_failure_is_survived(void **state)
{
    (void)state;
    ocl_fx fx;
    ocl_fx_init(&fx, GPO_FAKE_OPENCL);
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_OK);
    size_t full = fx.list.n;
    assert_true(full >= 1);
    ocl_fx_free(&fx);
    int left_out = 0;
    for (int n = 1; n <= 120; n++) {
        char spec[64];
        snprintf(spec, sizeof spec, "clGetDeviceInfo@%d=-5", n);
        ocl_fake_set_faults(GPO_FAKE_OPENCL, spec);
        ocl_fx_init(&fx, GPO_FAKE_OPENCL);
        assert_int_equal(ocl_fx_open(&fx), GPUOPT_OK);
        assert_true(fx.list.n == full || fx.list.n == full - 1);
        left_out += fx.list.n < full;
        for (size_t i = 0; i < fx.list.n; i++)
            assert_non_null(fx.list.items[i]->details);
        ocl_fx_free(&fx);
    }
    assert_true(left_out >= 4); /* the four facts a device cannot do without */
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
    assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), 0);
}

/* One use of every runtime op; stops at the first failure. */
static gpuopt_status scenario(ocl_fx *fx, gpuopt_device *dev)
{
    const gpo_runtime_ops *ops = gpo_backend_opencl.runtime;
    static const char *src = "__kernel void inc(__global uint *x, uint k)"
                             "{ x[get_global_id(0)] += k; }";
    gpo_rt *rt = NULL;
    gpuopt_status s = ops->open(fx->state, &dev->routes[0], &rt);
    if (s != GPUOPT_OK)
        return s;
    uint32_t host[256] = {0}, k = 3;
    size_t global[3] = {256, 1, 1}, local[3] = {32, 1, 1}, max = 0;
    double ns = 0;
    gpo_rt_buf *a = NULL, *b = NULL;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *kern = NULL;
    void *pin = NULL;
    char *log = NULL;
    if ((s = ops->buffer_alloc(rt, sizeof host, &a)) != GPUOPT_OK ||
        (s = ops->buffer_alloc(rt, sizeof host, &b)) != GPUOPT_OK ||
        (s = ops->buffer_write(rt, a, 0, host, sizeof host)) != GPUOPT_OK ||
        (s = ops->program_build(rt, src, "", &prog, &log)) != GPUOPT_OK ||
        (s = ops->kernel_create(rt, prog, "inc", &kern)) != GPUOPT_OK ||
        (s = ops->kernel_set_buffer(rt, kern, 0, a)) != GPUOPT_OK ||
        (s = ops->kernel_set_scalar(rt, kern, 1, &k, sizeof k)) != GPUOPT_OK ||
        (s = ops->kernel_max_group(rt, kern, &max)) != GPUOPT_OK ||
        (s = ops->launch(rt, kern, 1, global, local, &ns)) != GPUOPT_OK ||
        (s = ops->launch(rt, kern, 1, global, local, NULL)) != GPUOPT_OK ||
        (s = ops->buffer_copy(rt, b, a, sizeof host, &ns)) != GPUOPT_OK ||
        (s = ops->host_alloc_pinned(rt, sizeof host, &pin)) != GPUOPT_OK ||
        (s = ops->buffer_read(rt, b, 0, pin, sizeof host)) != GPUOPT_OK ||
        (s = ops->finish(rt)) != GPUOPT_OK)
        goto out;
    if (((uint32_t *)pin)[255] != 2 * k)
        s = GPUOPT_ERR_LAUNCH;
out:
    free(log);
    /* Half of the objects freed one by one, the rest left to close(). */
    ops->kernel_free(rt, kern);
    ops->buffer_free(rt, a);
    ops->close(rt);
    return s;
}

static void every_runtime_call_failure_releases_everything(void **state)
{
    (void)state;
    static const char *calls[] = {
        "clCreateContext",
        "clCreateCommandQueueWithProperties",
        "clCreateBuffer",
        "clEnqueueWriteBuffer",
        "clEnqueueReadBuffer",
        "clEnqueueCopyBuffer",
        "clEnqueueMapBuffer",
        "clEnqueueUnmapMemObject",
        "clCreateProgramWithSource",
        "clBuildProgram",
        "clGetProgramBuildInfo",
        "clCreateKernel",
        "clSetKernelArg",
        "clGetKernelWorkGroupInfo",
        "clEnqueueNDRangeKernel",
        "clWaitForEvents",
        "clGetEventProfilingInfo",
        "clFinish",
    };
    ocl_fx fx;
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
    ocl_fx_init(&fx, GPO_FAKE_OPENCL);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_OK);
    gpuopt_device *dev = ocl_fx_find_type(&fx, GPUOPT_DEVICE_TYPE_CPU);
    assert_non_null(dev);
    assert_int_equal(scenario(&fx, dev), GPUOPT_OK);
    assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), 0);
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        for (int n = 1; n <= 2; n++) {
            char spec[96];
            snprintf(spec, sizeof spec, "%s@%d=-5", calls[c], n);
            ocl_fake_set_faults(GPO_FAKE_OPENCL, spec);
            gpuopt_status s = scenario(&fx, dev);
            ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
            long live = ocl_fake_live(GPO_FAKE_OPENCL);
            if (live != 0)
                fail_msg("%s: %ld OpenCL objects left after close", spec, live);
            /* The unmap and the build-log query only lose information. */
            if (s == GPUOPT_OK && strcmp(calls[c], "clEnqueueUnmapMemObject") != 0 &&
                strcmp(calls[c], "clGetProgramBuildInfo") != 0 && n == 1)
                fail_msg("%s: the injected failure went unnoticed", spec);
            if (s != GPUOPT_OK && !strstr(gpo_detail_get(), "CL_OUT_OF_RESOURCES"))
                fail_msg("%s: the detail does not name the error: %s", spec, gpo_detail_get());
        }
    }
    ocl_fx_free(&fx);
}

static void probe_failures_release_everything(void **state)
{
    (void)state;
    static const char *calls[] = {"clCreateContext", "clCreateProgramWithSource", "clBuildProgram",
                                  "clCreateKernel", "clGetKernelWorkGroupInfo"};
    ocl_fx fx;
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
    ocl_fx_init(&fx, GPO_FAKE_OPENCL);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_OK);
    gpuopt_device *dev = ocl_fx_find_type(&fx, GPUOPT_DEVICE_TYPE_CPU);
    assert_non_null(dev);
    ocl_facts *f = &((ocl_dev_priv *)dev->routes[0].priv)->facts;
    const ocl_api *api = &((ocl_state *)fx.state)->api;
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        char spec[96];
        snprintf(spec, sizeof spec, "%s@1=-5", calls[c]);
        ocl_fake_set_faults(GPO_FAKE_OPENCL, spec);
        f->pref_source = OCL_PREF_UNKNOWN;
        assert_int_not_equal(gpo_ocl_probe_preferred_multiple(api, f), GPUOPT_OK);
        assert_int_equal(f->pref_source, OCL_PREF_FAILED);
        assert_non_null(strstr(gpo_detail_get(), calls[c]));
        assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), 0);
    }
    ocl_fake_set_faults(GPO_FAKE_OPENCL, "");
    ocl_fx_free(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nonexistent_library_is_unavailable_with_its_path),
        cmocka_unit_test(missing_entry_point_is_an_error_naming_it),
        cmocka_unit_test(frees_take_null_and_lookups_answer_for_any_code),
        cmocka_unit_test(platform_query_failure_is_reported_in_words),
        cmocka_unit_test(device_list_failure_skips_the_platform),
        cmocka_unit_test(every_device_query_failure_is_survived),
        cmocka_unit_test(every_runtime_call_failure_releases_everything),
        cmocka_unit_test(probe_failures_release_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
