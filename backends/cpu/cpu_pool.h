/* A fixed team of host threads for the CPU's tier-2 measurements: the
 * calling thread plus n-1 pthreads that run one job per round between two
 * barriers, so a round's host time covers only the work (thread start-up
 * is paid once, not per run). */
#ifndef GPO_CPU_POOL_H
#define GPO_CPU_POOL_H

#include <pthread.h>

#include "gpuopt/gpuopt.h"

typedef struct gpo_cpu_pool gpo_cpu_pool;

/* The job each thread runs in a round: `index` in [0, n). */
typedef void (*gpo_cpu_job)(void *user, int index, int n);

/* Starts n-1 threads (n in 1..256). GPUOPT_ERR_DRIVER when the system
 * refuses a thread (the ones started are stopped again). */
gpuopt_status gpo_cpu_pool_start(int n, gpo_cpu_pool **out);

/* Runs `job` on every thread of the team once and returns the round's
 * duration on the monotonic clock, in ns. */
double gpo_cpu_pool_round(gpo_cpu_pool *pool, gpo_cpu_job job, void *user);

int gpo_cpu_pool_size(const gpo_cpu_pool *pool);

/* Stops and joins the threads; NULL does nothing. */
void gpo_cpu_pool_stop(gpo_cpu_pool *pool);

#endif
