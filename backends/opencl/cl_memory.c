/* Buffers and pinned host memory of the OpenCL runtime ops (see cl_rt.h). */
#include <stdlib.h>
#include <string.h>

#include "cl_rt.h"
#include "util/strutil.h"

/* ---- buffers ----------------------------------------------------------- */

gpuopt_status gpo_ocl_rt_buffer_alloc(gpo_rt *rt, size_t bytes, gpo_rt_buf **out)
{
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl buffer_alloc: NULL output");
    *out = NULL;
    if (!rt)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl buffer_alloc: NULL session");
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
        return gpo_ocl_rt_fail(err ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE, GPUOPT_ERR_DRIVER,
                               what);
    }
    b->size = bytes;
    ocl_obj_link(rt, LIST_BUF, &b->h, OBJ_BUF);
    *out = b;
    return GPUOPT_OK;
}

void gpo_ocl_buf_release(gpo_rt *rt, gpo_rt_buf *b)
{
    ocl_obj_unlink(&b->h);
    rt->api->ReleaseMemObject(b->mem);
    free(b);
}

void gpo_ocl_rt_buffer_free(gpo_rt *rt, gpo_rt_buf *b)
{
    if (ocl_obj_ok(rt, b, OBJ_BUF))
        gpo_ocl_buf_release(rt, b);
}

static gpuopt_status check_range(gpo_rt *rt, const gpo_rt_buf *b, size_t offset, size_t bytes,
                                 const void *host, const char *op)
{
    if (!ocl_obj_ok(rt, b, OBJ_BUF) || !host)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl %s: NULL session, host pointer, or not a buffer of this session",
                        op);
    if (bytes == 0 || offset > b->size || bytes > b->size - offset)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "opencl %s: %zu bytes at offset %zu do not fit a buffer of %zu bytes "
                        "(1 byte at least)",
                        op, bytes, offset, b->size);
    return GPUOPT_OK;
}

gpuopt_status gpo_ocl_rt_buffer_write(gpo_rt *rt, gpo_rt_buf *b, size_t offset, const void *src,
                                      size_t bytes)
{
    gpuopt_status s = check_range(rt, b, offset, bytes, src, "buffer_write");
    if (s != GPUOPT_OK)
        return s;
    cl_int err =
        rt->api->EnqueueWriteBuffer(rt->queue, b->mem, CL_TRUE, offset, bytes, src, 0, NULL, NULL);
    return err == CL_SUCCESS ? GPUOPT_OK
                             : gpo_ocl_rt_fail(err, GPUOPT_ERR_DRIVER, "clEnqueueWriteBuffer");
}

gpuopt_status gpo_ocl_rt_buffer_read(gpo_rt *rt, gpo_rt_buf *b, size_t offset, void *dst,
                                     size_t bytes)
{
    gpuopt_status s = check_range(rt, b, offset, bytes, dst, "buffer_read");
    if (s != GPUOPT_OK)
        return s;
    cl_int err =
        rt->api->EnqueueReadBuffer(rt->queue, b->mem, CL_TRUE, offset, bytes, dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? GPUOPT_OK
                             : gpo_ocl_rt_fail(err, GPUOPT_ERR_DRIVER, "clEnqueueReadBuffer");
}

gpuopt_status gpo_ocl_rt_buffer_copy(gpo_rt *rt, gpo_rt_buf *dst, gpo_rt_buf *src, size_t bytes,
                                     double *device_ns)
{
    if (!ocl_obj_ok(rt, dst, OBJ_BUF) || !ocl_obj_ok(rt, src, OBJ_BUF))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "opencl buffer_copy: NULL session, or a buffer not of this session");
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
        return gpo_ocl_rt_fail(err, GPUOPT_ERR_DRIVER, "clEnqueueCopyBuffer");
    if (!device_ns)
        return GPUOPT_OK;
    return gpo_ocl_event_time(rt, ev, device_ns, "timing clEnqueueCopyBuffer");
}

/* ---- pinned host memory ------------------------------------------------
 * A buffer allocated by the driver in host memory (CL_MEM_ALLOC_HOST_PTR)
 * and kept mapped: the pinned staging memory NVIDIA's OpenCL Best Practices
 * Guide (§3.1.1) and AMD's OpenCL Optimization Guide recommend for fast
 * transfers. */

gpuopt_status gpo_ocl_rt_host_alloc_pinned(gpo_rt *rt, size_t bytes, void **ptr)
{
    if (!ptr)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl host_alloc_pinned: NULL output");
    *ptr = NULL;
    if (!rt)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "opencl host_alloc_pinned: NULL session");
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
        return gpo_ocl_rt_fail(err ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE, GPUOPT_ERR_DRIVER,
                               "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)");
    }
    p->ptr = rt->api->EnqueueMapBuffer(rt->queue, p->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                       bytes, 0, NULL, NULL, &err);
    if (!p->ptr || err != CL_SUCCESS) {
        rt->api->ReleaseMemObject(p->mem);
        free(p);
        return gpo_ocl_rt_fail(err ? err : CL_MAP_FAILURE, GPUOPT_ERR_DRIVER, "clEnqueueMapBuffer");
    }
    ocl_obj_link(rt, LIST_PIN, &p->h, OBJ_PIN);
    *ptr = p->ptr;
    return GPUOPT_OK;
}

void gpo_ocl_pin_release(gpo_rt *rt, ocl_pinned *p)
{
    ocl_obj_unlink(&p->h);
    cl_event ev = NULL;
    if (rt->api->EnqueueUnmapMemObject(rt->queue, p->mem, p->ptr, 0, NULL, &ev) == CL_SUCCESS &&
        ev) {
        rt->api->WaitForEvents(1, &ev);
        rt->api->ReleaseEvent(ev);
    }
    rt->api->ReleaseMemObject(p->mem);
    free(p);
}

void gpo_ocl_rt_host_free_pinned(gpo_rt *rt, void *ptr)
{
    if (!rt || !ptr)
        return;
    for (ocl_obj *o = rt->lists[LIST_PIN].next; o != &rt->lists[LIST_PIN]; o = o->next) {
        if (((ocl_pinned *)o)->ptr == ptr) {
            gpo_ocl_pin_release(rt, (ocl_pinned *)o);
            return;
        }
    }
}
