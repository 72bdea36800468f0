/* Internals of the OpenCL runtime ops shared by cl_runtime.c (sessions,
 * programs, kernels, launches) and cl_memory.c (buffers, pinned memory).
 *
 * A session owns every object made through it: each object is linked into
 * its session's list, so close() releases whatever the caller left behind,
 * and an object handed to the wrong session or op is refused instead of
 * reaching the driver. */
#ifndef GPO_OCL_RT_H
#define GPO_OCL_RT_H

#include "opencl.h"

enum { OBJ_BUF = 0x4f424246, OBJ_PROG = 0x4f50524f, OBJ_KERNEL = 0x4f4b524e, OBJ_PIN = 0x4f50494e };

typedef struct ocl_obj {
    struct ocl_obj *prev, *next;
    uint32_t kind;
    gpo_rt *rt;
} ocl_obj;

struct gpo_rt_buf {
    ocl_obj h;
    cl_mem mem;
    size_t size;
};

struct gpo_rt_prog {
    ocl_obj h;
    cl_program prog;
};

struct gpo_rt_kernel {
    ocl_obj h;
    cl_kernel kernel;
};

typedef struct ocl_pinned {
    ocl_obj h;
    cl_mem mem;
    void *ptr;
} ocl_pinned;

/* One list per kind, so close() can release kernels before programs
 * before memory objects. */
enum { LIST_KERNEL, LIST_PROG, LIST_PIN, LIST_BUF, LIST_COUNT };

struct gpo_rt {
    const ocl_api *api;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;
    ocl_obj lists[LIST_COUNT]; /* sentinels */
    char compiler[640];
};

static inline void ocl_obj_link(gpo_rt *rt, int list, ocl_obj *o, uint32_t kind)
{
    ocl_obj *head = &rt->lists[list];
    o->kind = kind;
    o->rt = rt;
    o->prev = head;
    o->next = head->next;
    head->next->prev = o;
    head->next = o;
}

static inline void ocl_obj_unlink(ocl_obj *o)
{
    o->prev->next = o->next;
    o->next->prev = o->prev;
    o->prev = o->next = NULL;
    o->kind = 0; /* a stale handle is refused, not reused */
    o->rt = NULL;
}

static inline int ocl_obj_ok(const gpo_rt *rt, const void *obj, uint32_t kind)
{
    const ocl_obj *o = obj;
    return rt && o && o->kind == kind && o->rt == rt;
}

/* The failed call `what` in words, with the error's name and code. */
gpuopt_status gpo_ocl_rt_fail(cl_int err, gpuopt_status fallback, const char *what);

/* Waits for `ev`, stores its device-side duration, releases it. */
gpuopt_status gpo_ocl_event_time(gpo_rt *rt, cl_event ev, double *device_ns, const char *what);

/* cl_memory.c: releases used by close(), and the memory ops. */
void gpo_ocl_buf_release(gpo_rt *rt, gpo_rt_buf *b);
void gpo_ocl_pin_release(gpo_rt *rt, ocl_pinned *p);
gpuopt_status gpo_ocl_rt_buffer_alloc(gpo_rt *rt, size_t bytes, gpo_rt_buf **out);
void gpo_ocl_rt_buffer_free(gpo_rt *rt, gpo_rt_buf *b);
gpuopt_status gpo_ocl_rt_buffer_write(gpo_rt *rt, gpo_rt_buf *b, size_t offset, const void *src,
                                      size_t bytes);
gpuopt_status gpo_ocl_rt_buffer_read(gpo_rt *rt, gpo_rt_buf *b, size_t offset, void *dst,
                                     size_t bytes);
gpuopt_status gpo_ocl_rt_buffer_copy(gpo_rt *rt, gpo_rt_buf *dst, gpo_rt_buf *src, size_t bytes,
                                     double *device_ns);
gpuopt_status gpo_ocl_rt_host_alloc_pinned(gpo_rt *rt, size_t bytes, void **ptr);
void gpo_ocl_rt_host_free_pinned(gpo_rt *rt, void *ptr);

#endif
