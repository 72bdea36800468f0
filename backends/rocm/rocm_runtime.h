/* Shared by the ROCm runtime ops' two files: the session, memory and timing
 * (rocm_runtime.c) and programs, kernels and launches (rocm_runtime_kernel.c).
 *
 * A session makes its device current on the thread that opens it
 * (hipSetDevice; HIP's current device is per thread) and gives the thread's
 * previous device back on close. Every op runs on that thread, so each op
 * checks it is on it and refuses otherwise, in words, rather than working on
 * whatever device another thread has current. All work goes to the null
 * stream, in order; the blocking copies wait for earlier launches
 * (HIP programming guide, "Synchronous and asynchronous operations").
 *
 * Every object an op creates is linked into its session, so close()
 * releases what the caller left behind (kernels, then the modules they come
 * from, then pinned and device memory), and a handle of another session or
 * a freed one is refused instead of reaching the runtime. */
#ifndef GPO_ROCM_RUNTIME_H
#define GPO_ROCM_RUNTIME_H

#include <pthread.h>

#include "rocm_internal.h"

enum { RT_BUF = 0x52425546, RT_PIN = 0x5250494e, RT_PROG = 0x5250524f, RT_KERNEL = 0x524b524e };
/* Released in this order on close. */
enum { RT_LIST_KERNEL, RT_LIST_PROG, RT_LIST_PIN, RT_LIST_BUF, RT_LIST_COUNT };

typedef struct rt_obj {
    struct rt_obj *prev, *next;
    uint32_t kind;
    gpo_rt *rt;
} rt_obj;

struct gpo_rt_buf {
    rt_obj h;
    gpo_hip_deviceptr ptr;
    size_t size;
};

typedef struct rt_pinned {
    rt_obj h;
    void *ptr;
} rt_pinned;

struct gpo_rt_prog {
    rt_obj h;
    gpo_hip_module module;
};

/* Kernel arguments as hipModuleLaunchKernel takes them: one pointer per
 * parameter, each to a copy of the value. */
#define GPO_ROCM_MAX_ARGS 32
#define GPO_ROCM_MAX_ARG_BYTES 256

struct gpo_rt_kernel {
    rt_obj h;
    gpo_rt_prog *prog;
    gpo_hip_function func;
    char name[128];
    unsigned char *arg[GPO_ROCM_MAX_ARGS]; /* NULL: not set */
    size_t arg_size[GPO_ROCM_MAX_ARGS];
    unsigned int shared_bytes; /* dynamic LDS of each launch (extern __shared__) */
};

struct gpo_rt {
    gpo_rocm_state *st;
    const gpo_hip *hip;
    gpo_hip_rt_fns fn;
    int ordinal;
    int previous; /* the thread's current device before open, -1 unknown */
    pthread_t thread;
    gpo_hip_event ev_start, ev_stop;
    int max_threads;        /* per block */
    uint64_t lds_per_block; /* bytes, 0 unknown */
    char target[64];        /* compile target ID: "gfx942:sramecc+:xnack-" */
    char what[32];          /* "rocm:0", for reasons */
    char compiler[384];     /* compiler_version's answer */
    rt_obj lists[RT_LIST_COUNT];
};

void gpo_rocm_rt_link(gpo_rt *rt, int list, rt_obj *o, uint32_t kind);
void gpo_rocm_rt_unlink(rt_obj *o);
int gpo_rocm_rt_owns(const gpo_rt *rt, const void *obj, uint32_t kind);

/* Checks an op may run: rt not NULL, same process, same thread. */
gpuopt_status gpo_rocm_rt_enter(const gpo_rt *rt, const char *op);

/* A failed HIP call of op `op` in words ("rocm:0 launch: hipModuleLaunchKernel
 * returned hipErrorNoDevice (100): ...; running kernels needs ..."); sets
 * the detail and returns `status`. */
gpuopt_status gpo_rocm_rt_fail(const gpo_rt *rt, gpuopt_status status, const char *op,
                               const char *call, gpo_hip_error e);

/* Events around what the caller enqueues between the two calls; the
 * second waits and stores the time between them in ns. */
gpuopt_status gpo_rocm_rt_time_begin(gpo_rt *rt, const char *op);
gpuopt_status gpo_rocm_rt_time_end(gpo_rt *rt, const char *op, double *device_ns);

/* rocm_runtime_kernel.c: releases (close, program_free). */
void gpo_rocm_rt_prog_release(gpo_rt *rt, gpo_rt_prog *p);
void gpo_rocm_rt_kernel_release(gpo_rt *rt, gpo_rt_kernel *k);

gpuopt_status gpo_rocm_rt_program_build(gpo_rt *rt, const char *source, const char *options,
                                        gpo_rt_prog **prog, char **log);
void gpo_rocm_rt_program_free(gpo_rt *rt, gpo_rt_prog *prog);
gpuopt_status gpo_rocm_rt_kernel_create(gpo_rt *rt, gpo_rt_prog *prog, const char *name,
                                        gpo_rt_kernel **kernel);
void gpo_rocm_rt_kernel_free(gpo_rt *rt, gpo_rt_kernel *kernel);
gpuopt_status gpo_rocm_rt_kernel_set_buffer(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                            gpo_rt_buf *buf);
gpuopt_status gpo_rocm_rt_kernel_set_scalar(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                            const void *value, size_t size);
gpuopt_status gpo_rocm_rt_kernel_set_local(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                           size_t bytes);
gpuopt_status gpo_rocm_rt_kernel_max_group(gpo_rt *rt, gpo_rt_kernel *kernel, size_t *max_items);
gpuopt_status gpo_rocm_rt_launch(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t dims,
                                 const size_t global[3], const size_t *local, double *device_ns);
const char *gpo_rocm_rt_compiler_version(gpo_rt *rt);

#endif
