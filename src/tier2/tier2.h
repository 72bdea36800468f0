/* Tier 2: settings measured on the device, by tier 2's built-in benchmarks
 * (bench.h). Each benchmark is a tuning run (src/tune/run.h) of a built-in
 * subject, so tier 2 and the tuner share one engine: one set of search,
 * journal, re-time and trust-but-verify rules, one kind of record in the
 * device's tuning cache (kind "bench.<name>", the knobs in its payload):
 *   - a plain hit sets the stored knobs with source "cache" and runs
 *     nothing: no session is opened, no kernel is built, no thread starts;
 *   - a hit whose soft fields changed (driver, compiler, library, device
 *     name) re-times a sweep's stored winner and runner-up once and keeps
 *     the winner unless the runner-up now beats it beyond noise; a plain
 *     value (a bandwidth) is measured again;
 *   - a miss is measured and stored; a sweep the budget cut short is
 *     resumed: what it measured is kept, the rest is measured now.
 * The benchmarks that need measuring share a time budget by weight
 * (docs/knobs.md "Measured (tier 2)"); each always gets its minimum runs,
 * so a slow compiler stretches the tier instead of leaving it empty.
 *
 * What a benchmark runs comes from the route: the backend's runtime ops
 * (src/backend.h, gpo_runtime_ops) for a device that runs kernels, or host
 * measurements the backend brings (gpo_t2_host) for the CPU, whose
 * backend has no runtime ops. One list of benchmarks serves both; each
 * says which it needs. */
#ifndef GPO_TIER2_H
#define GPO_TIER2_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

struct gpuopt_plan;

/* Host measurements of a backend without runtime ops (the CPU's,
 * backends/cpu/cpu_tier2.c). The functions run on the backend's own
 * threads; tier 2 decides what to measure, how often, and what it means. */
typedef struct gpo_t2_host {
    void *user;
    /* What the functions do, hashed into every key: edit it with them. */
    const char *kernels;
    int threads; /* the team the functions run on (the plan's `threads`) */
    /* The knob the blocked kernel's tile sets ("cpu.tile_bytes"): its
     * earlier value is the sweep's incumbent. */
    const char *tile_knob;
    int passes; /* passes over each tile, for the reason */
    /* Two buffers of `bytes` each, faulted in (earlier ones freed). */
    gpuopt_status (*copy_buffers)(void *user, size_t bytes);
    /* One copy of the buffers by `threads` (1 or the team): *ns its time. */
    gpuopt_status (*copy)(void *user, int threads, double *ns);
    /* Per-thread arrays for tiles of up to `max_tile` bytes. */
    gpuopt_status (*tile_arrays)(void *user, uint64_t max_tile);
    /* One round of the cache-blocked kernel with tiles of `tile` bytes. */
    gpuopt_status (*blocked)(void *user, uint64_t tile, double *ns);
    /* Frees the buffers and arrays. */
    void (*release)(void *user);
} gpo_t2_host;

/* Tier 2 for a route whose backend has runtime ops (OpenCL; CUDA through
 * NVRTC; HIP through hiprtc): the backend's ops table entry when it has
 * no tier 2 of its own (src/tiers.c). Budget 1.5 s. */
gpuopt_status gpo_tier2_generic(void *state, const gpo_route *route, const gpuopt_device *dev,
                                struct gpuopt_plan *plan);

/* Tier 2 for a route whose backend measures on the host, with `host`.
 * Budget 0.5 s. */
gpuopt_status gpo_tier2_host(const gpo_route *route, const gpuopt_device *dev,
                             struct gpuopt_plan *plan, const gpo_t2_host *host);

/* ---- tests ------------------------------------------------------------------ */

/* Multiplies every budget; 1 by default. INFINITY: no time budget at
 * all, so every sweep runs to its end however slow the machine (tests
 * that expect the next plan to answer from the cache: a sweep a budget cut
 * short is resumed, not a hit). */
extern double gpo_tier2_budget_scale;

/* Called with a benchmark's kind when it answers from the cache ("hit"),
 * re-verifies ("verify"), or measures ("measure"), when not NULL: tests
 * count what ran. */
extern void (*gpo_tier2_hook)(const char *event, const char *kind);

#endif
