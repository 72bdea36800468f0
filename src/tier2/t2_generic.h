/* The generic engine's session, shared by its benchmarks
 * (t2_bandwidth.c, t2_transfer.c, t2_latency.c, t2_groups.c): the route's
 * runtime ops, opened and built only when a benchmark misses the cache. */
#ifndef GPO_T2_GENERIC_H
#define GPO_T2_GENERIC_H

#include "tier2/tier2.h"

typedef struct gpo_t2_rt {
    const gpo_runtime_ops *ops;
    void *state;
    const gpo_route *route;
    const char *source;
    /* Opened by gpo_t2_rt_session on first need. */
    gpo_rt *rt;
    gpo_rt_prog *prog;
    gpo_rt_kernel *copy, *empty, *reduce;
    double open_ms, build_ms;
    /* What the earlier tiers decided, the candidates' starting point. */
    int64_t block;    /* launch.block_size */
    int64_t multiple; /* launch.block_multiple */
} gpo_t2_rt;

/* Opens the session and builds the kernels, once. */
gpuopt_status gpo_t2_rt_session(gpo_t2_rt *g);

/* The device limit on a group: max_threads_per_block, else 256. */
int64_t gpo_t2_rt_max_group(const gpo_t2 *t2);

/* Powers-of-two multiples of `multiple` up to `limit`, plus `incumbent`
 * when it is not one, ordered by distance from the incumbent (ratio), so
 * a budget cut leaves out the far ends. Returns the count (<= cap). */
int32_t gpo_t2_ladder(int64_t multiple, int64_t limit, int64_t incumbent, int pow2_only,
                      int64_t *out, int32_t cap);

/* "8,16,32,..." */
void gpo_t2_ladder_text(const int64_t *v, int32_t n, char *out, size_t cap);

extern const gpo_t2_bench gpo_t2_bench_bandwidth;
extern const gpo_t2_bench gpo_t2_bench_transfer;
extern const gpo_t2_bench gpo_t2_bench_latency;
extern const gpo_t2_bench gpo_t2_bench_stream;
extern const gpo_t2_bench gpo_t2_bench_reduce;

#endif
