/* The vendor-neutral mechanics of a kernel launch that every runtime with
 * runtime ops (src/backend.h) shares: the copies of a kernel's arguments
 * that CUDA and HIP launches take as one pointer per parameter, the checks
 * of launch sizes in backend.h's OpenCL convention (global counts work
 * items, a multiple of local), and the one rule for a device time (never 0
 * or not a number). Vendor words stay in the backends: the reasons here
 * name the session (`what`: "cuda:0", "opencl") and the op only. */
#ifndef GPO_RT_LAUNCH_H
#define GPO_RT_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "gpuopt/gpuopt.h"

/* The most parameters a kernel may take through these copies. */
#define GPO_RT_MAX_ARGS 64

/* Kernel arguments as cuLaunchKernel and hipModuleLaunchKernel take them:
 * one pointer per parameter, each to a copy of the value. */
typedef struct gpo_rt_args {
    unsigned char *data[GPO_RT_MAX_ARGS]; /* NULL: not set yet */
    size_t size[GPO_RT_MAX_ARGS];
} gpo_rt_args;

/* Copies `size` bytes of `value` as argument `index` (< GPO_RT_MAX_ARGS),
 * replacing an earlier one; GPUOPT_ERR_NO_MEMORY in words naming `what`
 * and `op`, the arguments unchanged. */
gpuopt_status gpo_rt_args_set(gpo_rt_args *a, uint32_t index, const void *value, size_t size,
                              const char *what, const char *op);
void gpo_rt_args_free(gpo_rt_args *a);

/* Points params[i] at argument i for i < n, where n is `count`, or the
 * highest argument set plus one when count < 0 (the kernel does not say
 * how many it takes). Returns the first argument below n that was never
 * set, or -1 with *n_out = n when all are. */
int gpo_rt_args_pack(const gpo_rt_args *a, int count, void **params, int *n_out);

/* Checks a launch's sizes: 1 to 3 dimensions, each global size a positive
 * multiple of its local size, each local size and group count within the
 * device's `max_block` and `max_grid` per dimension (NULL: no such limit),
 * at most `max_threads` work items in a group.
 * Dimensions past `dims` are 1. Without `local` the group is `auto_local0`
 * work items in dimension 0 (the backend's choice) and 1 in the others; an
 * `auto_local0` of 0 means 1. Fills g[] and l[] and returns GPUOPT_OK, or
 * GPUOPT_ERR_OUT_OF_RANGE in words naming `what` and `kernel` (NULL: none). */
gpuopt_status gpo_rt_geometry(const char *what, const char *kernel, uint32_t dims,
                              const size_t *global, const size_t *local, size_t auto_local0,
                              const int *max_block, const int *max_grid, size_t max_threads,
                              size_t g[3], size_t l[3]);

/* The largest divisor of `n` that is at most `cap` (1 when n is 0). */
size_t gpo_rt_largest_divisor(size_t n, size_t cap);

/* A device timer's reading of `ms` between two events around some work, as
 * ns. Work takes time: a reading of 0 (below the timer's resolution), a
 * negative one or one that is not a number is no measurement, and passed
 * on it could win a search with 0 ns, so it is GPUOPT_ERR_DRIVER in words
 * naming `what`, `op` and the vendor's `call` (backend.h: "A device time is
 * never 0 or not a number"). */
gpuopt_status gpo_rt_event_ns(double ms, const char *what, const char *op, const char *call,
                              double *ns);

#endif
