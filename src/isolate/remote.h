/* The library's side of the measurement worker (remote.c): a device
 * session whose runtime calls run in a worker process (serve.h) that
 * owns its own driver context, so that a kernel that faults (a sticky
 * CUDA or HIP error, ROCr's abort on a memory fault, a crash inside an
 * OpenCL driver) ends the worker and never the program that tunes.
 *
 * The worker is spawned (posix_spawn), never forked: a fork()ed copy of a
 * process that holds a driver context has a stale one (docs/cuda.md).
 * Its executable is found without trusting the environment in a
 * privileged process (remote.c, worker_path). */
#ifndef GPO_ISOLATE_REMOTE_H
#define GPO_ISOLATE_REMOTE_H

#include <stddef.h>

#include "backend.h"
#include "device.h"

/* The runtime ops of a worker session: every call is one request (wire.h).
 * open is not used (gpo_worker_open opens); launch always waits and
 * reports a time; builds do not run beside launches. A call that meets a
 * sticky fault, or finds the worker gone, returns GPUOPT_ERR_FAULT with
 * the driver's words or how the worker ended; the session is dead from
 * then on (every later call returns the same) and the caller opens a new
 * one. */
extern const gpo_runtime_ops gpo_worker_runtime;

/* Spawns a worker and opens `route`'s device session in it (the same
 * backend, native index and device name, in a context of its own).
 * GPUOPT_ERR_UNAVAILABLE when there is no worker to spawn or it cannot
 * start; the worker's own status when it cannot open the device. */
gpuopt_status gpo_worker_open(const gpo_route *route, gpo_rt **rt);

/* Calls that wait for the device (a launch, FINISH, a copy) that take
 * longer than `seconds` (0: no limit, the default) stop the worker: the
 * call returns GPUOPT_ERR_TIMEOUT and the session is dead. In the
 * program's own process a running kernel cannot be interrupted; here it
 * can, by ending its process. */
void gpo_worker_set_timeout(gpo_rt *rt, double seconds);

/* 1 when the session's worker has died or faulted. */
int gpo_worker_dead(const gpo_rt *rt);

#endif
