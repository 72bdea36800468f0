/* The OpenCL runtime ops for tier 2 and the tuner (backend.h,
 * gpo_runtime_ops): one context and one in-order, profiling queue per
 * session; buffers, pinned host memory, programs, kernels, launches timed
 * by events. A session is for one thread at a time, except that
 * program_build may run beside its launches (builds_alongside_launches).
 *
 * A session owns every object made through it: each is registered in the
 * session's registry (src/rt/objects.h), so close() releases whatever the
 * caller left behind, and a handle that is not a live object of this
 * session and kind (freed, another session's, another kind) is refused by
 * its address, without being read.
 *
 * The core's contract (a session, output pointers, host memory) is
 * asserted; the caller's handles and sizes are checked with words. The
 * launch path checks only the kernel (an uncontended lock and a walk of
 * the session's few kernels) and the sizes; everything else goes straight
 * to the driver, so timings through these ops stay within noise of raw
 * OpenCL (bench/opencl). */
#include "cl_runtime.h"

#include <assert.h>
#include <stdlib.h>

#include "cl_device.h"
#include "rt/launch.h"
#include "rt/objects.h"
#include "util/strutil.h"

struct gpo_rt_buf {
    gpo_rt_obj obj; /* first: the registry's handle */
    cl_mem mem;
    size_t size;
};

struct gpo_rt_prog {
    gpo_rt_obj obj;
    cl_program prog;
};

struct gpo_rt_kernel {
    gpo_rt_obj obj;
    cl_kernel kernel;
};

/* Pinned host memory: the caller holds pin.ptr, the mapping of `mem`. */
typedef struct ocl_pinned {
    gpo_rt_pinned pin;
    cl_mem mem;
} ocl_pinned;

struct gpo_rt {
    const ocl_api *api;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;
    gpo_rt_objects objects;
    char compiler[640];
};

/* The failed call `what` in words, with the error's name and code. */
static gpuopt_status rt_fail(cl_int err, gpuopt_status fallback, const char *what)
{
    return gpo_fail(gpo_ocl_status(err, fallback), "opencl: %s failed (%s, %d)", what,
                    gpo_ocl_error_name(err), (int)err);
}

/* GPUOPT_OK when `handle` is a live object of `kind` of this session. */
static gpuopt_status mine(gpo_rt *rt, const void *handle, gpo_rt_kind kind, const char *op)
{
    assert(rt);
    return gpo_rt_objects_check(&rt->objects, handle, kind, "opencl", op);
}

/* ---- destroying objects (already out of the registry) -------------------- */

static void buf_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    rt->api->ReleaseMemObject(((gpo_rt_buf *)o)->mem);
}

static void prog_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    rt->api->ReleaseProgram(((gpo_rt_prog *)o)->prog);
}

static void kernel_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    rt->api->ReleaseKernel(((gpo_rt_kernel *)o)->kernel);
}

static void pin_destroy(gpo_rt *rt, gpo_rt_obj *o)
{
    ocl_pinned *p = (ocl_pinned *)o;
    cl_event ev = NULL;
    if (rt->api->EnqueueUnmapMemObject(rt->queue, p->mem, p->pin.ptr, 0, NULL, &ev) == CL_SUCCESS &&
        ev) {
        rt->api->WaitForEvents(1, &ev);
        rt->api->ReleaseEvent(ev);
    }
    rt->api->ReleaseMemObject(p->mem);
}

static const gpo_rt_destroy_fn destroyers[GPO_RT_KINDS] = {
    [GPO_RT_BUFFER] = buf_destroy,
    [GPO_RT_PROGRAM] = prog_destroy,
    [GPO_RT_KERNEL] = kernel_destroy,
    [GPO_RT_PINNED] = pin_destroy,
};

/* ---- session ------------------------------------------------------------- */

static void rt_close(gpo_rt *rt)
{
    if (!rt)
        return;
    /* Wait for queued work before freeing what it may still use. */
    if (rt->queue)
        rt->api->Finish(rt->queue);
    gpo_rt_objects_clear(&rt->objects, rt, destroyers);
    gpo_rt_objects_destroy(&rt->objects);
    if (rt->queue)
        rt->api->ReleaseCommandQueue(rt->queue);
    if (rt->ctx)
        rt->api->ReleaseContext(rt->ctx);
    free(rt);
}

static gpuopt_status rt_open(void *backend_state, const gpo_route *route, gpo_rt **out)
{
    const ocl_state *st = backend_state;
    assert(st && route && route->priv && out);
    *out = NULL;
    const ocl_dev_priv *dp = route->priv;
    const ocl_facts *f = &dp->facts;
    assert(f->device && f->platform);

    gpo_rt *rt = calloc(1, sizeof *rt);
    if (!rt)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl open: out of memory");
    gpo_rt_objects_init(&rt->objects);
    rt->api = &st->api;
    rt->device = f->device;
    gpo_snprintf(rt->compiler, sizeof rt->compiler, "%s; %s; driver %s", dp->platform_version,
                 f->version, f->driver);

    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)f->platform, 0};
    rt->ctx = st->api.CreateContext(props, 1, &f->device, NULL, NULL, &err);
    if (!rt->ctx || err != CL_SUCCESS) {
        rt_close(rt);
        return rt_fail(err ? err : CL_INVALID_VALUE, GPUOPT_ERR_DRIVER, "clCreateContext");
    }
    /* Profiling on, in order (the default). The 2.0 entry point where both
     * the platform and the device are 2.0+; the 1.x one otherwise. */
    const ocl_platform *plat = NULL;
    if (f->platform_index >= 0 && (cl_uint)f->platform_index < st->n_platforms)
        plat = &st->platforms[f->platform_index];
    if (st->api.CreateCommandQueueWithProperties && f->ver_major >= 2 && plat &&
        plat->ver_major >= 2) {
        cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        rt->queue = st->api.CreateCommandQueueWithProperties(rt->ctx, f->device, qp, &err);
    } else {
        rt->queue = st->api.CreateCommandQueue(rt->ctx, f->device, CL_QUEUE_PROFILING_ENABLE, &err);
    }
    if (!rt->queue || err != CL_SUCCESS) {
        rt_close(rt);
        return rt_fail(err ? err : CL_INVALID_VALUE, GPUOPT_ERR_DRIVER,
                       "creating the command queue");
    }
    *out = rt;
    return GPUOPT_OK;
}

static const char *rt_compiler_version(gpo_rt *rt)
{
    assert(rt);
    return rt->compiler;
}

static gpuopt_status rt_finish(gpo_rt *rt)
{
    assert(rt);
    cl_int err = rt->api->Finish(rt->queue);
    return err == CL_SUCCESS ? GPUOPT_OK : rt_fail(err, GPUOPT_ERR_LAUNCH, "clFinish");
}

/* Waits for `ev`, stores its device-side duration, releases it. */
static gpuopt_status event_time(gpo_rt *rt, cl_event ev, double *device_ns, const char *what)
{
    const ocl_api *api = rt->api;
    cl_ulong start = 0, end = 0;
    cl_int err = api->WaitForEvents(1, &ev);
    if (err == CL_SUCCESS)
        err =
            api->GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    if (err == CL_SUCCESS)
        err = api->GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    api->ReleaseEvent(ev);
    if (err != CL_SUCCESS)
        return rt_fail(err, GPUOPT_ERR_LAUNCH, what);
    *device_ns = end >= start ? (double)(end - start) : 0.0;
    return GPUOPT_OK;
}

/* ---- buffers ------------------------------------------------------------- */

static gpuopt_status rt_buffer_alloc(gpo_rt *rt, size_t bytes, gpo_rt_buf **out)
{
    assert(rt && out);
    *out = NULL;
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "opencl buffer_alloc: size 0 (at least 1 byte)");
    gpo_rt_buf *b = calloc(1, sizeof *b);
    if (!b)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl buffer_alloc: out of memory");
    cl_int err = CL_SUCCESS;
    b->mem = rt->api->CreateBuffer(rt->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (!b->mem || err != CL_SUCCESS) {
        free(b);
        char what[96];
        gpo_snprintf(what, sizeof what, "clCreateBuffer of %zu bytes", bytes);
        return rt_fail(err ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE, GPUOPT_ERR_DRIVER, what);
    }
    b->size = bytes;
    gpo_rt_objects_add(&rt->objects, &b->obj, GPO_RT_BUFFER);
    *out = b;
    return GPUOPT_OK;
}

static void rt_buffer_free(gpo_rt *rt, gpo_rt_buf *b)
{
    assert(rt);
    if (gpo_rt_objects_owns(&rt->objects, b, GPO_RT_BUFFER))
        gpo_rt_objects_release(&rt->objects, rt, &b->obj, destroyers);
}

static gpuopt_status check_range(gpo_rt *rt, const gpo_rt_buf *b, size_t offset, size_t bytes,
                                 const char *op)
{
    gpuopt_status st = mine(rt, b, GPO_RT_BUFFER, op);
    if (st)
        return st;
    if (bytes == 0 || offset > b->size || bytes > b->size - offset)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "opencl %s: %zu bytes at offset %zu do not fit a buffer of %zu bytes "
                        "(1 byte at least)",
                        op, bytes, offset, b->size);
    return GPUOPT_OK;
}

static gpuopt_status rt_buffer_write(gpo_rt *rt, gpo_rt_buf *b, size_t offset, const void *src,
                                     size_t bytes)
{
    assert(src);
    gpuopt_status s = check_range(rt, b, offset, bytes, "buffer_write");
    if (s != GPUOPT_OK)
        return s;
    cl_int err =
        rt->api->EnqueueWriteBuffer(rt->queue, b->mem, CL_TRUE, offset, bytes, src, 0, NULL, NULL);
    return err == CL_SUCCESS ? GPUOPT_OK : rt_fail(err, GPUOPT_ERR_DRIVER, "clEnqueueWriteBuffer");
}

static gpuopt_status rt_buffer_read(gpo_rt *rt, gpo_rt_buf *b, size_t offset, void *dst,
                                    size_t bytes)
{
    assert(dst);
    gpuopt_status s = check_range(rt, b, offset, bytes, "buffer_read");
    if (s != GPUOPT_OK)
        return s;
    cl_int err =
        rt->api->EnqueueReadBuffer(rt->queue, b->mem, CL_TRUE, offset, bytes, dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? GPUOPT_OK : rt_fail(err, GPUOPT_ERR_DRIVER, "clEnqueueReadBuffer");
}

static gpuopt_status rt_buffer_copy(gpo_rt *rt, gpo_rt_buf *dst, gpo_rt_buf *src, size_t bytes,
                                    double *device_ns)
{
    gpuopt_status st = mine(rt, dst, GPO_RT_BUFFER, "buffer_copy");
    if (!st)
        st = mine(rt, src, GPO_RT_BUFFER, "buffer_copy");
    if (st)
        return st;
    if (bytes == 0 || bytes > dst->size || bytes > src->size)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "opencl buffer_copy: %zu bytes between buffers of %zu and %zu bytes", bytes,
                        src->size, dst->size);
    if (dst == src)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl buffer_copy: source and destination are the same buffer");
    cl_event ev = NULL;
    cl_int err = rt->api->EnqueueCopyBuffer(rt->queue, src->mem, dst->mem, 0, 0, bytes, 0, NULL,
                                            device_ns ? &ev : NULL);
    if (err != CL_SUCCESS)
        return rt_fail(err, GPUOPT_ERR_DRIVER, "clEnqueueCopyBuffer");
    if (!device_ns)
        return GPUOPT_OK;
    return event_time(rt, ev, device_ns, "timing clEnqueueCopyBuffer");
}

/* ---- pinned host memory ----------------------------------------------------
 * A buffer allocated by the driver in host memory (CL_MEM_ALLOC_HOST_PTR)
 * and kept mapped: the pinned staging memory NVIDIA's OpenCL Best Practices
 * Guide (§3.1.1) and AMD's OpenCL Optimization Guide recommend for fast
 * transfers. */

static gpuopt_status rt_host_alloc_pinned(gpo_rt *rt, size_t bytes, void **ptr)
{
    assert(rt && ptr);
    *ptr = NULL;
    if (bytes == 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "opencl host_alloc_pinned: size 0");
    ocl_pinned *p = calloc(1, sizeof *p);
    if (!p)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl host_alloc_pinned: out of memory");
    cl_int err = CL_SUCCESS;
    p->mem = rt->api->CreateBuffer(rt->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL,
                                   &err);
    if (!p->mem || err != CL_SUCCESS) {
        free(p);
        return rt_fail(err ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE, GPUOPT_ERR_DRIVER,
                       "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)");
    }
    p->pin.ptr = rt->api->EnqueueMapBuffer(rt->queue, p->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                           0, bytes, 0, NULL, NULL, &err);
    if (!p->pin.ptr || err != CL_SUCCESS) {
        rt->api->ReleaseMemObject(p->mem);
        free(p);
        return rt_fail(err ? err : CL_MAP_FAILURE, GPUOPT_ERR_DRIVER, "clEnqueueMapBuffer");
    }
    gpo_rt_objects_add(&rt->objects, &p->pin.obj, GPO_RT_PINNED);
    *ptr = p->pin.ptr;
    return GPUOPT_OK;
}

static void rt_host_free_pinned(gpo_rt *rt, void *ptr)
{
    assert(rt);
    gpo_rt_pinned *p = gpo_rt_objects_pinned(&rt->objects, ptr);
    if (p)
        gpo_rt_objects_release(&rt->objects, rt, &p->obj, destroyers);
}

/* ---- programs and kernels ------------------------------------------------ */

static char *build_log(gpo_rt *rt, cl_program prog)
{
    size_t size = 0;
    if (rt->api->GetProgramBuildInfo(prog, rt->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) !=
        CL_SUCCESS)
        return NULL;
    char *log = malloc(size + 1);
    if (!log)
        return NULL;
    if (size && rt->api->GetProgramBuildInfo(prog, rt->device, CL_PROGRAM_BUILD_LOG, size, log,
                                             NULL) != CL_SUCCESS)
        size = 0;
    log[size] = '\0';
    gpo_trim(log);
    return log;
}

static gpuopt_status rt_program_build(gpo_rt *rt, const char *source, const char *options,
                                      gpo_rt_prog **out, char **log_out)
{
    assert(rt && source && out);
    if (log_out)
        *log_out = NULL;
    *out = NULL;
    if (!source[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl program_build: empty source");

    gpuopt_status status = GPUOPT_OK;
    char *log = NULL;
    cl_int err = CL_SUCCESS;
    gpo_rt_prog *p = calloc(1, sizeof *p);
    if (!p)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl program_build: out of memory");
    p->prog = rt->api->CreateProgramWithSource(rt->ctx, 1, &source, NULL, &err);
    if (!p->prog || err != CL_SUCCESS) {
        status =
            rt_fail(err ? err : CL_INVALID_VALUE, GPUOPT_ERR_DRIVER, "clCreateProgramWithSource");
        goto out;
    }
    err = rt->api->BuildProgram(p->prog, 1, &rt->device, options ? options : "", NULL, NULL);
    log = build_log(rt, p->prog);
    if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS ||
        err == CL_COMPILER_NOT_AVAILABLE) {
        if (!log || !log[0]) {
            free(log);
            log = gpo_asprintf("%s%s%s", gpo_ocl_error_name(err),
                               err == CL_INVALID_BUILD_OPTIONS ? ": options " : "",
                               err == CL_INVALID_BUILD_OPTIONS ? (options ? options : "") : "");
        }
        status = gpo_fail(GPUOPT_ERR_BUILD, "opencl: the kernel did not build (%s, %d)%s%s: %.700s",
                          gpo_ocl_error_name(err), (int)err,
                          options && options[0] ? " with options " : "", options ? options : "",
                          log ? log : "(no log)");
        goto out;
    }
    if (err != CL_SUCCESS) {
        status = rt_fail(err, GPUOPT_ERR_DRIVER, "clBuildProgram");
        goto out;
    }
    if (log && !log[0]) {
        free(log);
        log = NULL;
    }
out:
    if (status != GPUOPT_OK) {
        if (p->prog)
            rt->api->ReleaseProgram(p->prog);
        free(p);
    } else {
        gpo_rt_objects_add(&rt->objects, &p->obj, GPO_RT_PROGRAM);
        *out = p;
    }
    if (log_out)
        *log_out = log;
    else
        free(log);
    return status;
}

static void rt_program_free(gpo_rt *rt, gpo_rt_prog *p)
{
    assert(rt);
    if (gpo_rt_objects_owns(&rt->objects, p, GPO_RT_PROGRAM))
        gpo_rt_objects_release(&rt->objects, rt, &p->obj, destroyers);
}

static gpuopt_status rt_kernel_create(gpo_rt *rt, gpo_rt_prog *p, const char *name,
                                      gpo_rt_kernel **out)
{
    assert(rt && name && out);
    *out = NULL;
    gpuopt_status st = mine(rt, p, GPO_RT_PROGRAM, "kernel_create");
    if (st)
        return st;
    if (!name[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl kernel_create: empty kernel name");
    gpo_rt_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl kernel_create: out of memory");
    cl_int err = CL_SUCCESS;
    k->kernel = rt->api->CreateKernel(p->prog, name, &err);
    if (!k->kernel || err != CL_SUCCESS) {
        free(k);
        if (err == CL_INVALID_KERNEL_NAME)
            return gpo_fail(GPUOPT_ERR_NOT_FOUND, "opencl: the program has no kernel named \"%s\"",
                            name);
        return rt_fail(err ? err : CL_INVALID_KERNEL, GPUOPT_ERR_DRIVER, "clCreateKernel");
    }
    gpo_rt_objects_add(&rt->objects, &k->obj, GPO_RT_KERNEL);
    *out = k;
    return GPUOPT_OK;
}

static void rt_kernel_free(gpo_rt *rt, gpo_rt_kernel *k)
{
    assert(rt);
    if (gpo_rt_objects_owns(&rt->objects, k, GPO_RT_KERNEL))
        gpo_rt_objects_release(&rt->objects, rt, &k->obj, destroyers);
}

static gpuopt_status arg_fail(cl_int err, uint32_t index)
{
    if (err == CL_INVALID_ARG_INDEX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "opencl: the kernel has no argument %u", index);
    char what[64];
    gpo_snprintf(what, sizeof what, "clSetKernelArg(%u)", index);
    return rt_fail(err, GPUOPT_ERR_INVALID_ARGUMENT, what);
}

static gpuopt_status rt_kernel_set_buffer(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                          gpo_rt_buf *b)
{
    gpuopt_status st = mine(rt, k, GPO_RT_KERNEL, "kernel_set_buffer");
    if (!st)
        st = mine(rt, b, GPO_RT_BUFFER, "kernel_set_buffer");
    if (st)
        return st;
    cl_int err = rt->api->SetKernelArg(k->kernel, index, sizeof(cl_mem), &b->mem);
    return err == CL_SUCCESS ? GPUOPT_OK : arg_fail(err, index);
}

static gpuopt_status rt_kernel_set_scalar(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                          const void *value, size_t size)
{
    assert(value);
    gpuopt_status st = mine(rt, k, GPO_RT_KERNEL, "kernel_set_scalar");
    if (!st && size == 0)
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl kernel_set_scalar: size 0");
    if (st)
        return st;
    cl_int err = rt->api->SetKernelArg(k->kernel, index, size, value);
    return err == CL_SUCCESS ? GPUOPT_OK : arg_fail(err, index);
}

static gpuopt_status rt_kernel_set_local(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index, size_t bytes)
{
    gpuopt_status st = mine(rt, k, GPO_RT_KERNEL, "kernel_set_local");
    if (!st && bytes == 0)
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                      "opencl kernel_set_local: 0 bytes of local memory");
    if (st)
        return st;
    cl_int err = rt->api->SetKernelArg(k->kernel, index, bytes, NULL);
    return err == CL_SUCCESS ? GPUOPT_OK : arg_fail(err, index);
}

static gpuopt_status rt_kernel_max_group(gpo_rt *rt, gpo_rt_kernel *k, size_t *max_items)
{
    assert(max_items);
    gpuopt_status st = mine(rt, k, GPO_RT_KERNEL, "kernel_max_group");
    if (st)
        return st;
    size_t v = 0;
    cl_int err = rt->api->GetKernelWorkGroupInfo(k->kernel, rt->device, CL_KERNEL_WORK_GROUP_SIZE,
                                                 sizeof v, &v, NULL);
    if (err != CL_SUCCESS)
        return rt_fail(err, GPUOPT_ERR_DRIVER,
                       "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    *max_items = v;
    return GPUOPT_OK;
}

/* ---- launch ---------------------------------------------------------------- */

static gpuopt_status rt_launch(gpo_rt *rt, gpo_rt_kernel *k, uint32_t dims, const size_t global[3],
                               const size_t *local, double *device_ns)
{
    size_t g[3], l[3];
    assert(global);
    gpuopt_status st = mine(rt, k, GPO_RT_KERNEL, "launch");
    if (!st)
        st = gpo_rt_geometry("opencl", NULL, dims, global, local, 0, NULL, NULL, SIZE_MAX, g, l);
    if (st)
        return st;
    cl_event ev = NULL;
    cl_int err = rt->api->EnqueueNDRangeKernel(rt->queue, k->kernel, dims, NULL, global, local, 0,
                                               NULL, device_ns ? &ev : NULL);
    if (err != CL_SUCCESS)
        return rt_fail(err, GPUOPT_ERR_LAUNCH, "clEnqueueNDRangeKernel");
    if (!device_ns)
        return GPUOPT_OK;
    return event_time(rt, ev, device_ns, "waiting for the kernel");
}

const gpo_runtime_ops gpo_ocl_runtime_ops = {
    .language = "opencl-c",
    .builds_alongside_launches = 1, /* clBuildProgram is thread-safe (OpenCL 3.0 A.2) */
    GPO_RUNTIME_OPS_FUNCTIONS,
    /* Khronos, cl_khr_command_buffer (OpenCL extension specification):
     * record commands once, enqueue the recording many times. */
    .graph_api = "an OpenCL command buffer (cl_khr_command_buffer, where the platform lists it: "
                 "clCreateCommandBufferKHR, clFinalizeCommandBufferKHR, "
                 "clEnqueueCommandBufferKHR)",
    .mark_record = gpo_ocl_mark_record,
    .mark_elapsed = gpo_ocl_mark_elapsed,
    .mark_free = gpo_ocl_mark_free,
};
