/* The test-double ICD loader's exported OpenCL functions: fault injection,
 * object counting, and either the synthetic platform or the real loader
 * behind them (see fake_cl.h). Built twice: complete, and with
 * FAKE_OMIT_CREATE_KERNEL (a loader that lacks a required entry point). */
#include "fake_cl.h"

#include <CL/cl_icd.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- mode, faults, counting -------------------------------------------- */

static int mode; /* 0 not started, 1 synthetic, 2 passthrough */
static void *real_handle;
static long live;

#define MAX_FAULTS 16
static struct {
    char fn[64];
    long nth; /* 0: every call */
    long seen;
    cl_int code;
} faults[MAX_FAULTS];
static int n_faults;

static void parse_faults(const char *spec)
{
    n_faults = 0;
    while (spec && *spec && n_faults < MAX_FAULTS) {
        size_t len = strcspn(spec, ",");
        char item[64];
        snprintf(item, sizeof item, "%.*s", (int)len, spec);
        spec += len + (spec[len] == ',');
        char *eq = strchr(item, '=');
        char *at = strchr(item, '@');
        faults[n_faults].code = eq ? (cl_int)strtol(eq + 1, NULL, 10) : CL_OUT_OF_RESOURCES;
        if (eq)
            *eq = '\0';
        faults[n_faults].nth = at ? strtol(at + 1, NULL, 10) : 0;
        if (at)
            *at = '\0';
        snprintf(faults[n_faults].fn, sizeof faults[n_faults].fn, "%s", item);
        faults[n_faults].seen = 0;
        if (item[0])
            n_faults++;
    }
}

static void start(void)
{
    if (mode)
        return;
    const char *devices = getenv("GPUOPT_FAKE_OPENCL_DEVICES");
    if (devices && devices[0]) {
        mode = 1;
        if (synth_load(devices) != 0)
            fprintf(stderr, "fake OpenCL: cannot use %s\n", devices);
    } else {
        mode = 2;
        const char *real = getenv("GPUOPT_FAKE_OPENCL_REAL");
        real_handle = dlopen(real && real[0] ? real : "libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    }
    parse_faults(getenv("GPUOPT_FAKE_OPENCL_FAIL"));
}

void gpo_fake_cl_set_devices(const char *path)
{
    start();
    synth_load(NULL);
    if (path && path[0]) {
        mode = 1;
        if (synth_load(path) != 0)
            fprintf(stderr, "fake OpenCL: cannot use %s\n", path);
    } else {
        mode = 2;
        if (!real_handle) {
            const char *real = getenv("GPUOPT_FAKE_OPENCL_REAL");
            real_handle = dlopen(real && real[0] ? real : "libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
        }
    }
}

void gpo_fake_cl_set_faults(const char *spec)
{
    start();
    parse_faults(spec);
}

long gpo_fake_cl_live(void)
{
    return live;
}

int gpo_fake_cl_mode(void)
{
    return mode;
}

int fake_synthetic(void)
{
    start();
    return mode == 1;
}

void fake_count(long delta)
{
    live += delta;
}

cl_int fake_fault(const char *fn)
{
    start();
    for (int i = 0; i < n_faults; i++) {
        if (strcmp(faults[i].fn, fn) != 0)
            continue;
        faults[i].seen++;
        if (faults[i].nth == 0 || faults[i].seen == faults[i].nth)
            return faults[i].code;
    }
    return CL_SUCCESS;
}

void *fake_real(const char *fn)
{
    start();
    return real_handle ? dlsym(real_handle, fn) : NULL;
}

/* The real function `name` into a local `real_` of Khronos' cl_icd.h type
 * (copied, since ISO C has no object-to-function pointer cast). */
#define REAL(name)                                                                                 \
    cl_api_##name real_ = NULL;                                                                    \
    do {                                                                                           \
        void *p_ = fake_real(#name);                                                               \
        memcpy(&real_, &p_, sizeof p_);                                                            \
    } while (0)

#define FAIL_STATUS(name)                                                                          \
    do {                                                                                           \
        cl_int f_ = fake_fault(#name);                                                             \
        if (f_ != CL_SUCCESS)                                                                      \
            return f_;                                                                             \
    } while (0)

#define FAIL_OBJECT(name)                                                                          \
    do {                                                                                           \
        cl_int f_ = fake_fault(#name);                                                             \
        if (f_ != CL_SUCCESS) {                                                                    \
            if (errcode_ret)                                                                       \
                *errcode_ret = f_;                                                                 \
            return NULL;                                                                           \
        }                                                                                          \
    } while (0)

/* ---- synthetic objects -------------------------------------------------- */

#define FOBJ_MAGIC 0x46414b45u
typedef struct fobj {
    uint32_t magic;
    cl_device_id dev;
    size_t size;
    unsigned char *data;
} fobj;

static void *fobj_new(cl_device_id dev, size_t size)
{
    fobj *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->magic = FOBJ_MAGIC;
    o->dev = dev;
    if (size) {
        o->data = calloc(1, size);
        if (!o->data) {
            free(o);
            return NULL;
        }
        o->size = size;
    }
    live++;
    return o;
}

static cl_int fobj_release(void *p)
{
    fobj *o = p;
    if (!o || o->magic != FOBJ_MAGIC)
        return CL_INVALID_VALUE;
    o->magic = 0;
    free(o->data);
    free(o);
    live--;
    return CL_SUCCESS;
}

static cl_device_id fobj_dev(const void *p)
{
    return p ? ((const fobj *)p)->dev : NULL;
}

/* An event for a synthetic command: 1 µs of "device time". */
static void synth_event(cl_event *ev)
{
    if (ev)
        *ev = fobj_new(NULL, 0);
}

/* Passthrough bookkeeping: a created object or event counts as live. */
static void *counted(void *obj)
{
    if (obj)
        live++;
    return obj;
}

static cl_int released(cl_int err)
{
    if (err == CL_SUCCESS)
        live--;
    return err;
}

static cl_int enqueued(cl_int err, cl_event *ev)
{
    if (err == CL_SUCCESS && ev && *ev)
        live++;
    return err;
}

/* ---- discovery ---------------------------------------------------------- */

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformIDs(cl_uint n, cl_platform_id *p, cl_uint *count)
{
    FAIL_STATUS(clGetPlatformIDs);
    if (fake_synthetic())
        return synth_platform_ids(n, p, count);
    REAL(clGetPlatformIDs);
    return real_ ? real_(n, p, count) : CL_PLATFORM_NOT_FOUND_KHR;
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id p, cl_platform_info what,
                                                  size_t size, void *value, size_t *ret)
{
    FAIL_STATUS(clGetPlatformInfo);
    if (fake_synthetic())
        return synth_platform_info(p, what, size, value, ret);
    REAL(clGetPlatformInfo);
    return real_(p, what, size, value, ret);
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id p, cl_device_type type, cl_uint n,
                                               cl_device_id *d, cl_uint *count)
{
    FAIL_STATUS(clGetDeviceIDs);
    if (fake_synthetic())
        return synth_device_ids(p, type, n, d, count);
    REAL(clGetDeviceIDs);
    return real_(p, type, n, d, count);
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id d, cl_device_info what, size_t size,
                                                void *value, size_t *ret)
{
    FAIL_STATUS(clGetDeviceInfo);
    if (fake_synthetic())
        return synth_device_info(d, what, size, value, ret);
    REAL(clGetDeviceInfo);
    return real_(d, what, size, value, ret);
}

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id p,
                                                                        const char *name)
{
    if (fake_synthetic() || fake_fault("clGetExtensionFunctionAddressForPlatform"))
        return NULL;
    REAL(clGetExtensionFunctionAddressForPlatform);
    return real_ ? real_(p, name) : NULL;
}

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddress(const char *name)
{
    if (fake_synthetic() || fake_fault("clGetExtensionFunctionAddress"))
        return NULL;
    REAL(clGetExtensionFunctionAddress);
    return real_ ? real_(name) : NULL;
}

/* ---- contexts and queues ------------------------------------------------ */

CL_API_ENTRY cl_context CL_API_CALL
clCreateContext(const cl_context_properties *props, cl_uint n, const cl_device_id *devices,
                void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *), void *user,
                cl_int *errcode_ret)
{
    FAIL_OBJECT(clCreateContext);
    if (fake_synthetic()) {
        if (errcode_ret)
            *errcode_ret = CL_SUCCESS;
        return fobj_new(n ? devices[0] : NULL, 0);
    }
    REAL(clCreateContext);
    return counted(real_(props, n, devices, notify, user, errcode_ret));
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseContext(cl_context c)
{
    FAIL_STATUS(clReleaseContext);
    if (fake_synthetic())
        return fobj_release(c);
    REAL(clReleaseContext);
    return released(real_(c));
}

CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context c, cl_device_id d,
                                                               cl_command_queue_properties props,
                                                               cl_int *errcode_ret)
{
    FAIL_OBJECT(clCreateCommandQueue);
    if (fake_synthetic()) {
        if (errcode_ret)
            *errcode_ret = CL_SUCCESS;
        return fobj_new(d, 0);
    }
    REAL(clCreateCommandQueue);
    return counted(real_(c, d, props, errcode_ret));
}

CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties(
    cl_context c, cl_device_id d, const cl_queue_properties *props, cl_int *errcode_ret)
{
    FAIL_OBJECT(clCreateCommandQueueWithProperties);
    if (fake_synthetic()) {
        if (errcode_ret)
            *errcode_ret = CL_SUCCESS;
        return fobj_new(d, 0);
    }
    REAL(clCreateCommandQueueWithProperties);
    return counted(real_(c, d, props, errcode_ret));
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue q)
{
    FAIL_STATUS(clReleaseCommandQueue);
    if (fake_synthetic())
        return fobj_release(q);
    REAL(clReleaseCommandQueue);
    return released(real_(q));
}

CL_API_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue q)
{
    FAIL_STATUS(clFinish);
    if (fake_synthetic())
        return CL_SUCCESS;
    REAL(clFinish);
    return real_(q);
}

/* ---- memory --------------------------------------------------------------- */

CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context c, cl_mem_flags flags, size_t size,
                                               void *host, cl_int *errcode_ret)
{
    FAIL_OBJECT(clCreateBuffer);
    if (fake_synthetic()) {
        void *o = fobj_new(fobj_dev(c), size);
        if (errcode_ret)
            *errcode_ret = o ? CL_SUCCESS : CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return o;
    }
    REAL(clCreateBuffer);
    return counted(real_(c, flags, size, host, errcode_ret));
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseMemObject(cl_mem m)
{
    FAIL_STATUS(clReleaseMemObject);
    if (fake_synthetic())
        return fobj_release(m);
    REAL(clReleaseMemObject);
    return released(real_(m));
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool block,
                                                     size_t off, size_t size, const void *src,
                                                     cl_uint nw, const cl_event *w, cl_event *ev)
{
    FAIL_STATUS(clEnqueueWriteBuffer);
    if (fake_synthetic()) {
        fobj *o = (fobj *)m;
        if (off + size > o->size)
            return CL_INVALID_VALUE;
        memcpy(o->data + off, src, size);
        synth_event(ev);
        return CL_SUCCESS;
    }
    REAL(clEnqueueWriteBuffer);
    return enqueued(real_(q, m, block, off, size, src, nw, w, ev), ev);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool block,
                                                    size_t off, size_t size, void *dst, cl_uint nw,
                                                    const cl_event *w, cl_event *ev)
{
    FAIL_STATUS(clEnqueueReadBuffer);
    if (fake_synthetic()) {
        fobj *o = (fobj *)m;
        if (off + size > o->size)
            return CL_INVALID_VALUE;
        memcpy(dst, o->data + off, size);
        synth_event(ev);
        return CL_SUCCESS;
    }
    REAL(clEnqueueReadBuffer);
    return enqueued(real_(q, m, block, off, size, dst, nw, w, ev), ev);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                                    size_t so, size_t doff, size_t size, cl_uint nw,
                                                    const cl_event *w, cl_event *ev)
{
    FAIL_STATUS(clEnqueueCopyBuffer);
    if (fake_synthetic()) {
        memcpy(((fobj *)dst)->data + doff, ((fobj *)src)->data + so, size);
        synth_event(ev);
        return CL_SUCCESS;
    }
    REAL(clEnqueueCopyBuffer);
    return enqueued(real_(q, src, dst, so, doff, size, nw, w, ev), ev);
}

CL_API_ENTRY void *CL_API_CALL clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool block,
                                                  cl_map_flags flags, size_t off, size_t size,
                                                  cl_uint nw, const cl_event *w, cl_event *ev,
                                                  cl_int *errcode_ret)
{
    FAIL_OBJECT(clEnqueueMapBuffer);
    if (fake_synthetic()) {
        synth_event(ev);
        if (errcode_ret)
            *errcode_ret = CL_SUCCESS;
        return ((fobj *)m)->data + off;
    }
    REAL(clEnqueueMapBuffer);
    void *p = real_(q, m, block, flags, off, size, nw, w, ev, errcode_ret);
    if (p && ev && *ev)
        live++;
    return p;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *ptr,
                                                        cl_uint nw, const cl_event *w, cl_event *ev)
{
    FAIL_STATUS(clEnqueueUnmapMemObject);
    if (fake_synthetic()) {
        synth_event(ev);
        return CL_SUCCESS;
    }
    REAL(clEnqueueUnmapMemObject);
    return enqueued(real_(q, m, ptr, nw, w, ev), ev);
}

/* ---- programs and kernels ------------------------------------------------ */

CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithSource(cl_context c, cl_uint n,
                                                              const char **src,
                                                              const size_t *lengths,
                                                              cl_int *errcode_ret)
{
    FAIL_OBJECT(clCreateProgramWithSource);
    if (fake_synthetic()) {
        if (errcode_ret)
            *errcode_ret = CL_SUCCESS;
        return fobj_new(fobj_dev(c), 0);
    }
    REAL(clCreateProgramWithSource);
    return counted(real_(c, n, src, lengths, errcode_ret));
}

CL_API_ENTRY cl_int CL_API_CALL clBuildProgram(cl_program p, cl_uint n, const cl_device_id *d,
                                               const char *opts,
                                               void(CL_CALLBACK *notify)(cl_program, void *),
                                               void *user)
{
    FAIL_STATUS(clBuildProgram);
    if (fake_synthetic())
        return CL_SUCCESS;
    REAL(clBuildProgram);
    return real_(p, n, d, opts, notify, user);
}

CL_API_ENTRY cl_int CL_API_CALL clGetProgramBuildInfo(cl_program p, cl_device_id d,
                                                      cl_program_build_info what, size_t size,
                                                      void *value, size_t *ret)
{
    FAIL_STATUS(clGetProgramBuildInfo);
    if (fake_synthetic()) {
        if (ret)
            *ret = 1;
        if (value && size)
            *(char *)value = '\0';
        return CL_SUCCESS;
    }
    REAL(clGetProgramBuildInfo);
    return real_(p, d, what, size, value, ret);
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseProgram(cl_program p)
{
    FAIL_STATUS(clReleaseProgram);
    if (fake_synthetic())
        return fobj_release(p);
    REAL(clReleaseProgram);
    return released(real_(p));
}

#ifndef FAKE_OMIT_CREATE_KERNEL
CL_API_ENTRY cl_kernel CL_API_CALL clCreateKernel(cl_program p, const char *name,
                                                  cl_int *errcode_ret)
{
    FAIL_OBJECT(clCreateKernel);
    if (fake_synthetic()) {
        if (errcode_ret)
            *errcode_ret = CL_SUCCESS;
        return fobj_new(fobj_dev(p), 0);
    }
    REAL(clCreateKernel);
    return counted(real_(p, name, errcode_ret));
}
#endif

CL_API_ENTRY cl_int CL_API_CALL clReleaseKernel(cl_kernel k)
{
    FAIL_STATUS(clReleaseKernel);
    if (fake_synthetic())
        return fobj_release(k);
    REAL(clReleaseKernel);
    return released(real_(k));
}

CL_API_ENTRY cl_int CL_API_CALL clSetKernelArg(cl_kernel k, cl_uint i, size_t size,
                                               const void *value)
{
    FAIL_STATUS(clSetKernelArg);
    if (fake_synthetic())
        return CL_SUCCESS;
    REAL(clSetKernelArg);
    return real_(k, i, size, value);
}

CL_API_ENTRY cl_int CL_API_CALL clGetKernelWorkGroupInfo(cl_kernel k, cl_device_id d,
                                                         cl_kernel_work_group_info what,
                                                         size_t size, void *value, size_t *ret)
{
    FAIL_STATUS(clGetKernelWorkGroupInfo);
    if (fake_synthetic()) {
        size_t v = 0;
        if (what == CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)
            v = synth_kernel_multiple(d);
        else if (what == CL_KERNEL_WORK_GROUP_SIZE)
            synth_device_info(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof v, &v, NULL);
        else
            return CL_INVALID_VALUE;
        if (!v)
            return CL_INVALID_VALUE;
        if (ret)
            *ret = sizeof v;
        if (value) {
            if (size < sizeof v)
                return CL_INVALID_VALUE;
            memcpy(value, &v, sizeof v);
        }
        return CL_SUCCESS;
    }
    REAL(clGetKernelWorkGroupInfo);
    return real_(k, d, what, size, value, ret);
}

/* ---- launches and events -------------------------------------------------- */

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k,
                                                       cl_uint dims, const size_t *offset,
                                                       const size_t *global, const size_t *local,
                                                       cl_uint nw, const cl_event *w, cl_event *ev)
{
    FAIL_STATUS(clEnqueueNDRangeKernel);
    if (fake_synthetic()) {
        synth_event(ev);
        return CL_SUCCESS;
    }
    REAL(clEnqueueNDRangeKernel);
    return enqueued(real_(q, k, dims, offset, global, local, nw, w, ev), ev);
}

/* Markers and queue facts, for the profiler's device time on a caller's
 * queue. A synthetic queue reports its device and profiling on. */
CL_API_ENTRY cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint nw,
                                                            const cl_event *w, cl_event *ev)
{
    FAIL_STATUS(clEnqueueMarkerWithWaitList);
    if (fake_synthetic()) {
        synth_event(ev);
        return CL_SUCCESS;
    }
    REAL(clEnqueueMarkerWithWaitList);
    return enqueued(real_(q, nw, w, ev), ev);
}

CL_API_ENTRY cl_int CL_API_CALL clGetCommandQueueInfo(cl_command_queue q,
                                                      cl_command_queue_info what, size_t size,
                                                      void *value, size_t *ret)
{
    FAIL_STATUS(clGetCommandQueueInfo);
    if (fake_synthetic()) {
        if (what == CL_QUEUE_DEVICE) {
            cl_device_id d = fobj_dev(q);
            if (ret)
                *ret = sizeof d;
            if (value && size >= sizeof d)
                memcpy(value, &d, sizeof d);
            return CL_SUCCESS;
        }
        if (what == CL_QUEUE_PROPERTIES) {
            cl_command_queue_properties props = CL_QUEUE_PROFILING_ENABLE;
            if (ret)
                *ret = sizeof props;
            if (value && size >= sizeof props)
                memcpy(value, &props, sizeof props);
            return CL_SUCCESS;
        }
        return CL_INVALID_VALUE;
    }
    REAL(clGetCommandQueueInfo);
    return real_(q, what, size, value, ret);
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint n, const cl_event *ev)
{
    FAIL_STATUS(clWaitForEvents);
    if (fake_synthetic())
        return CL_SUCCESS;
    REAL(clWaitForEvents);
    return real_(n, ev);
}

CL_API_ENTRY cl_int CL_API_CALL clGetEventProfilingInfo(cl_event ev, cl_profiling_info what,
                                                        size_t size, void *value, size_t *ret)
{
    FAIL_STATUS(clGetEventProfilingInfo);
    if (fake_synthetic()) {
        cl_ulong v = what == CL_PROFILING_COMMAND_END ? 2000 : 1000;
        if (ret)
            *ret = sizeof v;
        if (value && size >= sizeof v)
            memcpy(value, &v, sizeof v);
        return CL_SUCCESS;
    }
    REAL(clGetEventProfilingInfo);
    return real_(ev, what, size, value, ret);
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseEvent(cl_event ev)
{
    FAIL_STATUS(clReleaseEvent);
    if (fake_synthetic())
        return fobj_release(ev);
    REAL(clReleaseEvent);
    return released(real_(ev));
}
