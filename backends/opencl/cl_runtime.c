/* The OpenCL runtime ops for tier 2 (backend.h, gpo_runtime_ops): one
 * context and one in-order, profiling queue per session; buffers, pinned
 * host memory, programs, kernels, launches timed by events.
 * Buffers and pinned memory are in cl_memory.c. A session is for one thread
 * at a time.
 *
 * The launch path does only checks that cost a few compares; everything
 * else goes straight to the driver, so timings through these ops stay
 * within noise of raw OpenCL (bench/opencl). */
#include <stdlib.h>
#include <string.h>

#include "cl_rt.h"
#include "util/strutil.h"

gpuopt_status gpo_ocl_rt_fail(cl_int err, gpuopt_status fallback, const char *what)
{
    return gpo_fail(gpo_ocl_status(err, fallback), "opencl: %s failed (%s, %d)", what,
                    gpo_ocl_error_name(err), (int)err);
}

/* ---- session ---------------------------------------------------------- */

static void rt_close(gpo_rt *rt);

static gpuopt_status rt_open(void *backend_state, const gpo_route *route, gpo_rt **out)
{
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl open: NULL output");
    *out = NULL;
    const ocl_state *st = backend_state;
    if (!st || !route || !route->priv)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl open: NULL backend state or route (not an OpenCL device)");
    const ocl_dev_priv *dp = route->priv;
    const ocl_facts *f = &dp->facts;
    if (!f->device || !f->platform)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl open: the route has no device");

    gpo_rt *rt = calloc(1, sizeof *rt);
    if (!rt)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl open: out of memory");
    for (int i = 0; i < LIST_COUNT; i++)
        rt->lists[i].prev = rt->lists[i].next = &rt->lists[i];
    rt->api = &st->api;
    rt->device = f->device;
    gpo_snprintf(rt->compiler, sizeof rt->compiler, "%s; %s; driver %s", dp->platform_version,
                 f->version, f->driver);

    gpuopt_status status = GPUOPT_OK;
    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)f->platform, 0};
    rt->ctx = st->api.CreateContext(props, 1, &f->device, NULL, NULL, &err);
    if (!rt->ctx || err != CL_SUCCESS) {
        status =
            gpo_ocl_rt_fail(err ? err : CL_INVALID_VALUE, GPUOPT_ERR_DRIVER, "clCreateContext");
        goto out;
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
        status = gpo_ocl_rt_fail(err ? err : CL_INVALID_VALUE, GPUOPT_ERR_DRIVER,
                                 "creating the command queue");
        goto out;
    }
out:
    if (status != GPUOPT_OK) {
        rt_close(rt);
        return status;
    }
    *out = rt;
    return GPUOPT_OK;
}

static void prog_release(gpo_rt *rt, gpo_rt_prog *p);
static void kernel_release(gpo_rt *rt, gpo_rt_kernel *k);

static void rt_close(gpo_rt *rt)
{
    if (!rt)
        return;
    /* Wait for queued work before freeing what it may still use. */
    if (rt->queue)
        rt->api->Finish(rt->queue);
    while (rt->lists[LIST_KERNEL].next != &rt->lists[LIST_KERNEL])
        kernel_release(rt, (gpo_rt_kernel *)rt->lists[LIST_KERNEL].next);
    while (rt->lists[LIST_PROG].next != &rt->lists[LIST_PROG])
        prog_release(rt, (gpo_rt_prog *)rt->lists[LIST_PROG].next);
    while (rt->lists[LIST_PIN].next != &rt->lists[LIST_PIN])
        gpo_ocl_pin_release(rt, (ocl_pinned *)rt->lists[LIST_PIN].next);
    while (rt->lists[LIST_BUF].next != &rt->lists[LIST_BUF])
        gpo_ocl_buf_release(rt, (gpo_rt_buf *)rt->lists[LIST_BUF].next);
    if (rt->queue)
        rt->api->ReleaseCommandQueue(rt->queue);
    if (rt->ctx)
        rt->api->ReleaseContext(rt->ctx);
    free(rt);
}

static const char *rt_compiler_version(gpo_rt *rt)
{
    return rt ? rt->compiler : "";
}

static gpuopt_status rt_finish(gpo_rt *rt)
{
    if (!rt)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl finish: NULL session");
    cl_int err = rt->api->Finish(rt->queue);
    return err == CL_SUCCESS ? GPUOPT_OK : gpo_ocl_rt_fail(err, GPUOPT_ERR_LAUNCH, "clFinish");
}

/* ---- events ------------------------------------------------------------ */

gpuopt_status gpo_ocl_event_time(gpo_rt *rt, cl_event ev, double *device_ns, const char *what)
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
        return gpo_ocl_rt_fail(err, GPUOPT_ERR_LAUNCH, what);
    *device_ns = end >= start ? (double)(end - start) : 0.0;
    return GPUOPT_OK;
}

/* ---- programs and kernels ---------------------------------------------- */

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
    if (log_out)
        *log_out = NULL;
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl program_build: NULL output");
    *out = NULL;
    if (!rt || !source)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl program_build: NULL session or source");
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
        status = gpo_ocl_rt_fail(err ? err : CL_INVALID_VALUE, GPUOPT_ERR_DRIVER,
                                 "clCreateProgramWithSource");
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
        status = gpo_ocl_rt_fail(err, GPUOPT_ERR_DRIVER, "clBuildProgram");
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
        ocl_obj_link(rt, LIST_PROG, &p->h, OBJ_PROG);
        *out = p;
    }
    if (log_out)
        *log_out = log;
    else
        free(log);
    return status;
}

static void prog_release(gpo_rt *rt, gpo_rt_prog *p)
{
    ocl_obj_unlink(&p->h);
    rt->api->ReleaseProgram(p->prog);
    free(p);
}

static void rt_program_free(gpo_rt *rt, gpo_rt_prog *p)
{
    if (ocl_obj_ok(rt, p, OBJ_PROG))
        prog_release(rt, p);
}

static gpuopt_status rt_kernel_create(gpo_rt *rt, gpo_rt_prog *p, const char *name,
                                      gpo_rt_kernel **out)
{
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl kernel_create: NULL output");
    *out = NULL;
    if (!ocl_obj_ok(rt, p, OBJ_PROG) || !name || !name[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl kernel_create: NULL session or name, or not a program of this "
                        "session");
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
        return gpo_ocl_rt_fail(err ? err : CL_INVALID_KERNEL, GPUOPT_ERR_DRIVER, "clCreateKernel");
    }
    ocl_obj_link(rt, LIST_KERNEL, &k->h, OBJ_KERNEL);
    *out = k;
    return GPUOPT_OK;
}

static void kernel_release(gpo_rt *rt, gpo_rt_kernel *k)
{
    ocl_obj_unlink(&k->h);
    rt->api->ReleaseKernel(k->kernel);
    free(k);
}

static void rt_kernel_free(gpo_rt *rt, gpo_rt_kernel *k)
{
    if (ocl_obj_ok(rt, k, OBJ_KERNEL))
        kernel_release(rt, k);
}

static gpuopt_status arg_fail(cl_int err, uint32_t index)
{
    if (err == CL_INVALID_ARG_INDEX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "opencl: the kernel has no argument %u", index);
    char what[64];
    gpo_snprintf(what, sizeof what, "clSetKernelArg(%u)", index);
    return gpo_ocl_rt_fail(err, GPUOPT_ERR_INVALID_ARGUMENT, what);
}

static gpuopt_status rt_kernel_set_buffer(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                          gpo_rt_buf *b)
{
    if (!ocl_obj_ok(rt, k, OBJ_KERNEL) || !ocl_obj_ok(rt, b, OBJ_BUF))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl kernel_set_buffer: NULL session, or a kernel or buffer not of "
                        "this session");
    cl_int err = rt->api->SetKernelArg(k->kernel, index, sizeof(cl_mem), &b->mem);
    return err == CL_SUCCESS ? GPUOPT_OK : arg_fail(err, index);
}

static gpuopt_status rt_kernel_set_scalar(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                          const void *value, size_t size)
{
    if (!ocl_obj_ok(rt, k, OBJ_KERNEL) || !value || size == 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl kernel_set_scalar: NULL session or value, size 0, or not a kernel "
                        "of this session");
    cl_int err = rt->api->SetKernelArg(k->kernel, index, size, value);
    return err == CL_SUCCESS ? GPUOPT_OK : arg_fail(err, index);
}

static gpuopt_status rt_kernel_set_local(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index, size_t bytes)
{
    if (!ocl_obj_ok(rt, k, OBJ_KERNEL) || bytes == 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl kernel_set_local: NULL session, 0 bytes, or not a kernel of this "
                        "session");
    cl_int err = rt->api->SetKernelArg(k->kernel, index, bytes, NULL);
    return err == CL_SUCCESS ? GPUOPT_OK : arg_fail(err, index);
}

static gpuopt_status rt_kernel_max_group(gpo_rt *rt, gpo_rt_kernel *k, size_t *max_items)
{
    if (!ocl_obj_ok(rt, k, OBJ_KERNEL) || !max_items)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl kernel_max_group: NULL session or output, or not a kernel of this "
                        "session");
    size_t v = 0;
    cl_int err = rt->api->GetKernelWorkGroupInfo(k->kernel, rt->device, CL_KERNEL_WORK_GROUP_SIZE,
                                                 sizeof v, &v, NULL);
    if (err != CL_SUCCESS)
        return gpo_ocl_rt_fail(err, GPUOPT_ERR_DRIVER,
                               "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    *max_items = v;
    return GPUOPT_OK;
}

/* ---- launch ------------------------------------------------------------ */

static gpuopt_status rt_launch(gpo_rt *rt, gpo_rt_kernel *k, uint32_t dims, const size_t global[3],
                               const size_t *local, double *device_ns)
{
    if (!ocl_obj_ok(rt, k, OBJ_KERNEL) || !global)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl launch: NULL session or global size, or not a kernel of this "
                        "session");
    if (dims < 1 || dims > 3)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "opencl launch: %u dimensions (1 to 3)", dims);
    for (uint32_t i = 0; i < dims; i++) {
        if (global[i] == 0 || (local && (local[i] == 0 || global[i] % local[i] != 0)))
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "opencl launch: dimension %u has global size %zu and local size %zu "
                            "(global must be a positive multiple of local)",
                            i, global[i], local ? local[i] : (size_t)0);
    }
    cl_event ev = NULL;
    cl_int err = rt->api->EnqueueNDRangeKernel(rt->queue, k->kernel, dims, NULL, global, local, 0,
                                               NULL, device_ns ? &ev : NULL);
    if (err != CL_SUCCESS)
        return gpo_ocl_rt_fail(err, GPUOPT_ERR_LAUNCH, "clEnqueueNDRangeKernel");
    if (!device_ns)
        return GPUOPT_OK;
    return gpo_ocl_event_time(rt, ev, device_ns, "waiting for the kernel");
}

const gpo_runtime_ops gpo_ocl_runtime_ops = {
    .language = "opencl-c",
    .builds_alongside_launches = 1, /* clBuildProgram is thread-safe (OpenCL 3.0 A.2) */
    .open = rt_open,
    .close = rt_close,
    .buffer_alloc = gpo_ocl_rt_buffer_alloc,
    .buffer_free = gpo_ocl_rt_buffer_free,
    .buffer_write = gpo_ocl_rt_buffer_write,
    .buffer_read = gpo_ocl_rt_buffer_read,
    .buffer_copy = gpo_ocl_rt_buffer_copy,
    .host_alloc_pinned = gpo_ocl_rt_host_alloc_pinned,
    .host_free_pinned = gpo_ocl_rt_host_free_pinned,
    .program_build = rt_program_build,
    .program_free = rt_program_free,
    .kernel_create = rt_kernel_create,
    .kernel_free = rt_kernel_free,
    .kernel_set_buffer = rt_kernel_set_buffer,
    .kernel_set_scalar = rt_kernel_set_scalar,
    .kernel_set_local = rt_kernel_set_local,
    .kernel_max_group = rt_kernel_max_group,
    .launch = rt_launch,
    .finish = rt_finish,
    .compiler_version = rt_compiler_version,
};
