/* Shared by the CUDA runtime ops' two files: the session and its objects
 * (cuda_rt_session.c) and programs, kernels and launches (cuda_rt_kernel.c).
 *
 * A session retains the device's primary context (the one the CUDA runtime
 * and most frameworks share) for its whole life and releases it on close.
 * Each op pushes that context, works, and pops it again, so the calling
 * thread's current context is the same before and after every op, and a
 * session may be used from whichever thread holds it at the time (one at a
 * time, as backend.h says). Every object an op creates is linked into the
 * session, so close() releases whatever the caller left behind, and a
 * handle of another session, or a freed one, is refused (looked up, never
 * read) instead of reaching the driver. */
#ifndef GPO_CUDA_RT_H
#define GPO_CUDA_RT_H

#include "cuda_internal.h"

enum { RT_BUF = 0x43425546, RT_PIN = 0x4350494e, RT_PROG = 0x4350524f, RT_KERNEL = 0x434b524e };
/* One list per kind, released in this order: kernels before the modules
 * they come from, then memory. */
enum { RT_LIST_KERNEL, RT_LIST_PROG, RT_LIST_PIN, RT_LIST_BUF, RT_LIST_COUNT };

typedef struct rt_obj {
    struct rt_obj *prev, *next;
    uint32_t kind;
    gpo_rt *rt;
} rt_obj;

struct gpo_rt_buf {
    rt_obj h;
    gpo_cu_deviceptr ptr;
    size_t size;
};

typedef struct rt_pinned {
    rt_obj h;
    void *ptr;
} rt_pinned;

struct gpo_rt_prog {
    rt_obj h;
    gpo_cu_module module;
};

/* Kernel arguments as cuLaunchKernel takes them: one pointer per
 * parameter, each to a copy of the value. */
#define GPO_CUDA_MAX_ARGS 64
typedef struct rt_arg {
    unsigned char *data; /* NULL: not set yet */
    size_t size;
} rt_arg;

struct gpo_rt_kernel {
    rt_obj h;
    gpo_rt_prog *prog;
    gpo_cu_function func;
    char name[128];
    int n_params; /* from cuFuncGetParamInfo; -1 when the driver cannot say */
    size_t param_size[GPO_CUDA_MAX_ARGS];
    rt_arg args[GPO_CUDA_MAX_ARGS];
    unsigned int shared_bytes; /* dynamic shared memory per block */
};

struct gpo_rt {
    gpo_cuda_state *s;
    const gpo_cuda_api *api;
    int ordinal;
    gpo_cu_device dev;
    gpo_cu_context ctx; /* the retained primary context */
    int cc_major, cc_minor;
    int max_threads;  /* per block */
    int max_block[3]; /* per dimension */
    int max_grid[3];
    gpo_cu_event ev_start, ev_end;
    gpo_pfn_cuEventElapsedTime elapsed; /* _v2, or the unversioned symbol */
    rt_obj lists[RT_LIST_COUNT];
    char what[32];      /* "cuda:0", for reasons */
    char compiler[256]; /* compiler_version's answer */
};

void gpo_cuda_rt_link(gpo_rt *rt, int list, rt_obj *o, uint32_t kind);
void gpo_cuda_rt_unlink(rt_obj *o);
int gpo_cuda_rt_owns(const gpo_rt *rt, const void *obj, uint32_t kind);

/* Pushes the session's context; GPUOPT_ERR_DRIVER with the detail set. */
gpuopt_status gpo_cuda_rt_enter(gpo_rt *rt, const char *op);
/* Pops it again. Returns `st`, or a pop failure when `st` was GPUOPT_OK. */
gpuopt_status gpo_cuda_rt_leave(gpo_rt *rt, gpuopt_status st, const char *op);
/* A failed driver call of op `op`, in words ("cuda:0 launch: cuLaunchKernel
 * failed: ..."); sets the detail and returns `status`. */
gpuopt_status gpo_cuda_rt_fail(gpo_rt *rt, gpuopt_status status, const char *op, const char *call,
                               gpo_cu_result r);
/* Records the two session events around what the caller enqueues between
 * the calls, then waits and stores the time between them in ns. */
gpuopt_status gpo_cuda_rt_time_begin(gpo_rt *rt, const char *op);
gpuopt_status gpo_cuda_rt_time_end(gpo_rt *rt, const char *op, double *device_ns);

/* cuda_rt_kernel.c: a failure of running code (a launch, or waiting for
 * one) in words, with what the result means (a fault is sticky, a test
 * double cannot run code, ...); sets the detail and returns the status. */
gpuopt_status gpo_cuda_rt_launch_fail(gpo_rt *rt, const char *op, const char *call,
                                      gpo_cu_result r);
/* Releases a program or kernel (inside an entered op). */
void gpo_cuda_rt_prog_release(gpo_rt *rt, gpo_rt_prog *p);
void gpo_cuda_rt_kernel_release(gpo_rt *rt, gpo_rt_kernel *k);

/* The ops of cuda_rt_kernel.c, gathered into the table by cuda_rt_session.c. */
gpuopt_status gpo_cuda_rt_program_build(gpo_rt *rt, const char *source, const char *options,
                                        gpo_rt_prog **prog, char **log);
void gpo_cuda_rt_program_free(gpo_rt *rt, gpo_rt_prog *prog);
gpuopt_status gpo_cuda_rt_kernel_create(gpo_rt *rt, gpo_rt_prog *prog, const char *name,
                                        gpo_rt_kernel **kernel);
void gpo_cuda_rt_kernel_free(gpo_rt *rt, gpo_rt_kernel *kernel);
gpuopt_status gpo_cuda_rt_kernel_set_buffer(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                            gpo_rt_buf *buf);
gpuopt_status gpo_cuda_rt_kernel_set_scalar(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                            const void *value, size_t size);
gpuopt_status gpo_cuda_rt_kernel_set_local(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                           size_t bytes);
gpuopt_status gpo_cuda_rt_kernel_max_group(gpo_rt *rt, gpo_rt_kernel *kernel, size_t *max_items);
gpuopt_status gpo_cuda_rt_launch(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t dims,
                                 const size_t global[3], const size_t *local, double *device_ns);

#endif
