/* The CPU tier 2's thread team (cpu_pool.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_pool.h"
#include "util/strutil.h"

#define MAX_THREADS 256

struct gpo_cpu_pool {
    int n, started;
    pthread_t threads[MAX_THREADS];
    pthread_barrier_t start, end;
    gpo_cpu_job job;
    void *user;
    int quit;
    struct member {
        gpo_cpu_pool *pool;
        int index;
    } members[MAX_THREADS];
};

static void *member_main(void *arg)
{
    struct member *m = arg;
    gpo_cpu_pool *p = m->pool;
    for (;;) {
        pthread_barrier_wait(&p->start);
        if (p->quit)
            return NULL;
        p->job(p->user, m->index, p->n);
        pthread_barrier_wait(&p->end);
    }
}

/* The members wait at the start barrier (which counts them and the
 * calling thread): release them with the quit flag up. */
static void stop_started(gpo_cpu_pool *p)
{
    p->quit = 1;
    pthread_barrier_wait(&p->start);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
}

gpuopt_status gpo_cpu_pool_start(int n, gpo_cpu_pool **out)
{
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cpu pool: NULL output");
    *out = NULL;
    if (n < 1 || n > MAX_THREADS)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "cpu pool: %d threads (1 to %d)", n, MAX_THREADS);
    gpo_cpu_pool *p = calloc(1, sizeof *p);
    if (!p)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cpu pool: out of memory");
    p->n = n;
    if (pthread_barrier_init(&p->start, NULL, (unsigned)n) != 0) {
        free(p);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cpu pool: no barrier");
    }
    if (pthread_barrier_init(&p->end, NULL, (unsigned)n) != 0) {
        pthread_barrier_destroy(&p->start);
        free(p);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cpu pool: no barrier");
    }
    for (int i = 1; i < n; i++) {
        p->members[i].pool = p;
        p->members[i].index = i;
        int err = pthread_create(&p->threads[i - 1], NULL, member_main, &p->members[i]);
        if (err) {
            /* Fewer threads than the barrier counts: rebuild it for those
             * that started, then stop them. */
            pthread_barrier_destroy(&p->start);
            pthread_barrier_init(&p->start, NULL, (unsigned)i);
            p->started = i - 1;
            gpo_cpu_pool_stop(p);
            return gpo_fail(GPUOPT_ERR_DRIVER, "cpu tier 2: could not start thread %d of %d (%s)",
                            i + 1, n, strerror(err));
        }
    }
    p->started = n - 1;
    *out = p;
    return GPUOPT_OK;
}

double gpo_cpu_pool_round(gpo_cpu_pool *p, gpo_cpu_job job, void *user)
{
    p->job = job;
    p->user = user;
    uint64_t t0 = gpo_now_ns();
    pthread_barrier_wait(&p->start);
    job(user, 0, p->n);
    pthread_barrier_wait(&p->end);
    return (double)(gpo_now_ns() - t0);
}

int gpo_cpu_pool_size(const gpo_cpu_pool *p)
{
    return p ? p->n : 0;
}

void gpo_cpu_pool_stop(gpo_cpu_pool *p)
{
    if (!p)
        return;
    stop_started(p);
    pthread_barrier_destroy(&p->start);
    pthread_barrier_destroy(&p->end);
    free(p);
}
