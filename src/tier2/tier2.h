/* Tier 2: settings measured on the device, and the engine every measured
 * tier shares.
 *
 * A tier-2 run is a list of benchmarks (gpo_t2_bench). For each one the
 * engine (t2_engine.c) builds a hard cache key from static facts only (the
 * device, the kernel source, the build options, the benchmark's workload
 * text) and looks it up in the device's tuning cache (src/cache/cache.h):
 *   - a plain hit sets the stored knobs with source "cache" and runs
 *     nothing: no session is opened, no kernel is built;
 *   - a hit whose soft fields changed (driver, compiler, library, device
 *     name) re-times a sweep's stored winner and runner-up once and keeps
 *     the winner unless the runner-up now beats it beyond noise (MIOpen's
 *     trust-but-verify); a plain value (a bandwidth) is measured again;
 *   - a miss is measured and stored; a sweep the budget cut short is
 *     resumed: what it measured is kept, the rest is measured now.
 * The benchmarks that need measuring share a time budget (weights below,
 * docs/knobs.md "Measured (tier 2)"); each always gets its minimum runs,
 * so a slow compiler stretches the tier instead of leaving it empty.
 *
 * The generic engine (t2_generic.c) measures through a route's runtime ops
 * (backend.h, gpo_runtime_ops); the CPU backend, which has no runtime
 * ops, measures with host threads through the same engine
 * (backends/cpu/cpu_tier2.c). */
#ifndef GPO_TIER2_H
#define GPO_TIER2_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "cache/cache.h"
#include "measure/timing.h"
#include "tune/status.h"

struct gpuopt_plan;

/* ---- timing (t2_measure.c) ------------------------------------------------ */

/* Re-times k subjects side by side with the tuner's gpo_retime: `rounds`
 * rounds (the first a dropped warm-up), each running every subject once in
 * an order rotated by one per round. run(user, i, &ns) runs subject i.
 * stats[k] receives each subject's; *pick (may be NULL) the winner by
 * gpo_stats_beats against slot 0 (the incumbent) with `floor` as its
 * relative floor. */
gpuopt_status gpo_t2_retime(gpuopt_status (*run)(void *user, int32_t i, double *ns), void *user,
                            int32_t k, int32_t rounds, double floor, gpo_stats *stats,
                            int32_t *pick);

/* A setting an earlier tier chose changes only for a gain above this share
 * (and above the noise): the kernel tier 2 times stands in for the
 * program's own kernels, so a smaller gain on it says nothing about them.
 * The tuner's floor (GPO_NOISE_FLOOR, 2%) judges the very kernel it runs. */
#define GPO_T2_SWITCH_FLOOR 0.05

/* ---- a tier-2 run ------------------------------------------------------------ */

typedef struct gpo_t2 gpo_t2;
typedef struct gpo_t2_job gpo_t2_job;

/* One benchmark. `measure` fills the job's knobs (gpo_t2_job_knob_*),
 * through gpo_t2_sweep_run when it searches. `verify` (sweeps only; NULL
 * for plain values, which are measured again) re-times the winner and
 * runner-up of job->hit after a soft-field change and says whether the
 * winner holds. */
typedef struct gpo_t2_bench {
    const char *name; /* "bandwidth": the cache kind is "bench.bandwidth" */
    double weight;    /* share of the tier's budget */
    /* The workload text of the hard key from static facts only, and for a
     * sweep the parameter space text. GPUOPT_ERR_UNSUPPORTED skips the
     * benchmark (it sets no knob), with the reason in the detail. */
    gpuopt_status (*describe)(gpo_t2 *t2, void *user, char *workload, size_t wcap, char *space,
                              size_t scap);
    gpuopt_status (*measure)(gpo_t2 *t2, gpo_t2_job *job, void *user);
    gpuopt_status (*verify)(gpo_t2 *t2, gpo_t2_job *job, void *user, int *keep);
} gpo_t2_bench;

/* What the engine knows of the run; benchmarks read it. */
struct gpo_t2 {
    struct gpuopt_plan *plan;
    const gpuopt_device *dev;
    const gpo_route *route;
    const gpo_logger *log;
    const char *backend;     /* the route's backend name: part of every key */
    const char *source_hash; /* of the kernel sources the benchmarks run */
    const char *options;     /* build options ("" when none) */
    gpo_cache *cache;        /* NULL: nothing is cached (see cache_why) */
    char cache_why[256];
    gpo_cache_soft soft;
    uint64_t start_ns;
    uint64_t deadline_ns; /* the tier's budget ends here */
    int measured;         /* benchmarks measured (not answered from the cache) */
};

/* One benchmark's run: its key, its budget, the knobs it produced. */
struct gpo_t2_job {
    const gpo_t2_bench *bench;
    char kind[48];
    char workload[512];
    char space[512];
    char space_hash[32];
    gpo_cache_key key;
    uint64_t deadline_ns; /* this benchmark's share of the budget ends here */
    cJSON *knobs;         /* [{"name", "type", "value", "reason"}], set on the plan afterwards */
    cJSON *extra;         /* more payload fields ({"bytes": ...}), or NULL */
    int complete;         /* 0: a sweep ran out of budget before its last candidate */
    /* Sweeps: the record being written (NULL without a cache) and its outcome. */
    gpo_cache_tune *tune;
    cJSON *best_params, *runner_params;
    gpo_cache_stats best, runner;
    /* An earlier sweep the budget cut short: its candidates (as stored),
     * which this run does not measure again. */
    cJSON *resume;
    /* Trust-but-verify: the hit being checked, what the re-timing found. */
    const gpo_cache_hit *hit;
    double verify_best_ns, verify_runner_ns;
    char verify_note[256];
};

/* Bandwidth benchmarks (the generic copy kernel and the CPU's memcpy) size
 * their buffers by one rule: a 16 MiB probe, then the largest power of two
 * under min(512 MiB, what the probed rate moves in 4 ms, 4 x the last-level
 * cache, memory / 16), and never below the probe. */
#define GPO_T2_BW_PROBE_BYTES (16ull << 20)
#define GPO_T2_BW_MAX_BYTES (512ull << 20)
#define GPO_T2_BW_TARGET_MS 4.0

/* The buffer size for a device whose probe of `probe_bytes` each way took
 * `probe_median_ns`. */
uint64_t gpo_t2_bandwidth_bytes(const gpuopt_device_info *dev, double probe_median_ns);

/* The largest power of two <= v (0 for 0). */
uint64_t gpo_t2_pow2_floor(uint64_t v);

/* The budget left to the current benchmark, in ms (never below 0). */
double gpo_t2_job_left_ms(const gpo_t2_job *job);

/* Adds a knob to the job's result (its reason is the printf text). */
gpuopt_status gpo_t2_job_knob_int(gpo_t2_job *job, const char *name, int64_t value, const char *fmt,
                                  ...) GPO_PRINTF(4, 5);
gpuopt_status gpo_t2_job_knob_bool(gpo_t2_job *job, const char *name, int value, const char *fmt,
                                   ...) GPO_PRINTF(4, 5);
gpuopt_status gpo_t2_job_knob_bytes(gpo_t2_job *job, const char *name, uint64_t value,
                                    const char *fmt, ...) GPO_PRINTF(4, 5);
/* Adds a number to the stored payload (for the record; not a knob). */
gpuopt_status gpo_t2_job_note(gpo_t2_job *job, const char *field, double value);

/* Runs every benchmark of `list` (user passed to each) on the plan: opens
 * the device's cache, budgets `budget_ms` (times gpo_tier2_budget_scale)
 * over those that miss, sets the knobs. The first failing benchmark fails
 * the run (the orchestrator rolls the tier back). */
gpuopt_status gpo_t2_run(gpo_t2 *t2, const gpo_t2_bench *const *list, size_t n, void *user,
                         double budget_ms);

/* Fills t2 for a route of a plan (soft fields from the route's record). */
void gpo_t2_init(gpo_t2 *t2, struct gpuopt_plan *plan, const gpo_route *route,
                 const gpuopt_device *dev, const char *source_hash, const char *options);

/* ---- sweeps (t2_sweep.c) ---------------------------------------------------- */

/* A search over one integer parameter: every candidate timed (probe and
 * prune against the best so far), then the incumbent (the earlier tier's
 * value, always measured first) re-timed side by side with the best
 * challengers, and kept unless one beats it beyond noise. The record
 * (every candidate, winner, runner-up, complete flag) goes to the cache. */
typedef struct gpo_t2_sweep {
    const char *param;     /* "block" */
    const int64_t *values; /* candidates, in the order to try */
    int32_t n;
    int64_t incumbent; /* measured first when it is one of values; else the fastest leads */
    /* Sets up for a value (0 = OK); GPUOPT_ERR_UNSUPPORTED marks the
     * candidate invalid (beyond a kernel limit) instead of failing. */
    gpuopt_status (*prepare)(void *user, int64_t value);
    gpuopt_status (*run)(void *user, double *ns); /* runs the prepared value once */
    void *user;
} gpo_t2_sweep;

typedef struct gpo_t2_sweep_result {
    int64_t winner, runner; /* runner -1 when there is none */
    gpo_stats winner_st, runner_st, incumbent_st;
    int32_t measured, invalid, pruned;
    int incumbent_won;
    char tried[512]; /* "8, 16, 32 (pruned), ..." */
} gpo_t2_sweep_result;

/* Runs the sweep within the job's budget and writes its cache record. */
gpuopt_status gpo_t2_sweep_run(gpo_t2 *t2, gpo_t2_job *job, const gpo_t2_sweep *s,
                               gpo_t2_sweep_result *res);

/* Re-times the winner and runner-up of job->hit side by side
 * (trust-but-verify): *keep 1 when the runner-up does not beat the winner
 * beyond noise. Fills job->verify_* for the record. */
gpuopt_status gpo_t2_sweep_verify(gpo_t2_job *job, const gpo_t2_sweep *s, int *keep);

/* "1.25 ms", "48.2 us", "730 ns". */
void gpo_t2_fmt_ns(double ns, char *out, size_t cap);

/* "12.4 GB/s" (decimal units, as vendors quote bandwidth). */
void gpo_t2_fmt_rate(double bytes_per_s, char *out, size_t cap);

/* ---- entry points -------------------------------------------------------------- */

/* The generic engine for a route whose backend has runtime ops: device
 * bandwidth, transfers (pageable vs pinned), launch latency, block sizes of
 * a streaming and a reduction kernel. */
gpuopt_status gpo_tier2_generic(void *state, const gpo_route *route, const gpuopt_device *dev,
                                struct gpuopt_plan *plan);

/* Multiplies every budget (tests set it high so a slow sanitizer build
 * still sweeps to the end); 1 by default. */
extern double gpo_tier2_budget_scale;

/* Called with a benchmark's kind before it runs on the device ("measure"),
 * re-verifies ("verify"), or answers from the cache ("hit"), when not
 * NULL: tests count what ran. */
extern void (*gpo_tier2_hook)(const char *event, const char *kind);

/* The kernel sources of the generic engine (t2_kernels.c): the program for
 * a runtime language ("opencl-c", "cuda", "hip"), or NULL. */
const char *gpo_t2_kernel_source(const char *language);

#endif
