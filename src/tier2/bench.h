/* What a tier-2 benchmark is (bench_*.c), for the engine that runs them
 * (engine.c) and the helpers beneath both (job.c: a job's knobs and
 * figures; subject.c: a job as the tuning run's subject; session.c: the
 * runtime-ops session the device benchmarks share).
 *
 * A benchmark describes one tuning run: its space (one parameter swept,
 * or one point for a plain value), its incumbent, its timing and its key
 * (workload text), and supplies the subject's callbacks over a job. After
 * a measurement it turns the run's result into knobs with reasons, which
 * the engine stores in the record's payload, so a later plan answers from
 * the cache with the same words. */
#ifndef GPO_TIER2_BENCH_H
#define GPO_TIER2_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "tier2/tier2.h"
#include "tune/run.h"
#include "util/fs.h"

/* ---- what the benchmarks share (engine.c fills it) ----------------------------- */

/* The route's runtime session (session.c), opened and built on first need:
 * a plan answered from the cache opens none. */
typedef struct gpo_t2_rt {
    const gpo_runtime_ops *ops; /* NULL: the route has none */
    void *state;
    const gpo_route *route;
    const char *source; /* the kernels (kernels.c) in the runtime's language */
    gpo_rt *rt;
    gpo_rt_prog *prog;
    gpo_rt_kernel *copy, *empty, *reduce;
    double open_ms, build_ms;
} gpo_t2_rt;

/* The noise tier 2 runs in (noise.c): the machine's load when it began. */
typedef struct gpo_t2_noise {
    double load; /* the 1-minute load average (/proc/loadavg); -1 unknown */
    int cpus;    /* online CPUs; 0 unknown */
} gpo_t2_noise;

typedef struct gpo_t2 {
    struct gpuopt_plan *plan;
    const gpuopt_device *dev;
    const gpo_route *route;
    const gpo_logger *log;
    const char *backend;     /* the route's backend name */
    gpo_t2_rt rt;            /* rt.ops NULL: no runtime ops */
    const gpo_t2_host *host; /* NULL: no host measurements */
    /* What the earlier tiers decided: the sweeps' starting point. */
    int64_t block;    /* launch.block_size */
    int64_t multiple; /* launch.block_multiple */
    gpo_t2_noise noise;
} gpo_t2;

/* ---- one benchmark's run ------------------------------------------------------------ */

#define GPO_T2_MAX_VALUES 16

typedef struct gpo_t2_bench gpo_t2_bench;

typedef struct gpo_t2_job {
    const gpo_t2_bench *bench;
    gpo_t2 *t2;
    char kind[48];       /* "bench.<name>" */
    char workload[512];  /* describe: the key's workload text, from static facts only */
    gpuopt_space *space; /* describe: what is measured */
    uint32_t incumbent;  /* describe, with has_incumbent: its value's index */
    int has_incumbent;
    gpo_timing_settings timing; /* describe: each point's */
    double repeat_share;        /* describe: > 0 splits the budget over the points */
    int32_t finalists;          /* describe: 1 for plain values */
    double floor;               /* describe: the re-timing's floor */
    int remeasure_changed;      /* describe: plain values */
    int measure_all;            /* describe: plain values, every point whatever the budget */
    void *state;                /* the benchmark's, from setup to teardown */
    int set_up;
    const gpuopt_point *current; /* the point prepared last */
    cJSON *knobs; /* [{"name", "type", "value", "reason"}], set on the plan afterwards */
    cJSON *extra; /* more payload fields ({"bytes": ...}), or NULL */
} gpo_t2_job;

struct gpo_t2_bench {
    const char *name; /* "memory_bandwidth": the cache kind is "bench.memory_bandwidth" */
    double weight;    /* share of the tier's budget */
    /* Fills the job's key and run; GPUOPT_ERR_UNSUPPORTED skips the
     * benchmark (it sets no knob), with the reason in the detail. */
    gpuopt_status (*describe)(gpo_t2 *t2, gpo_t2_job *job);
    /* The subject, set up only to measure: session, buffers (teardown may
     * be NULL). */
    gpuopt_status (*setup)(gpo_t2_job *job);
    void (*teardown)(gpo_t2_job *job);
    /* A point: GPUOPT_ERR_UNSUPPORTED makes it invalid (beyond a kernel's
     * limit; the detail says why); any other failure of prepare, run or
     * check ends the tier with its words. prepare and check may be NULL;
     * run reads job->current, the point to run. */
    gpuopt_status (*prepare)(gpo_t2_job *job, const gpuopt_point *c);
    gpuopt_status (*run)(gpo_t2_job *job, double *ns);
    gpuopt_status (*check)(gpo_t2_job *job);
    /* The knobs of a result measured now. */
    gpuopt_status (*knobs)(gpo_t2_job *job, const gpuopt_result *res);
};

extern const gpo_t2_bench gpo_t2_bench_latency, gpo_t2_bench_bandwidth, gpo_t2_bench_transfer,
    gpo_t2_bench_copy, gpo_t2_bench_stream, gpo_t2_bench_reduce, gpo_t2_bench_tile;

/* ---- job.c ------------------------------------------------------------------------ */

/* Adds a knob of `type` ("int", "bool", "bytes") to the job's result (its
 * reason is the printf text). */
gpuopt_status gpo_t2_knob(gpo_t2_job *job, const char *type, const char *name, double value,
                          const char *fmt, ...) GPO_PRINTF(5, 6);
/* Adds a number to the stored payload (for the record; not a knob). */
gpuopt_status gpo_t2_note(gpo_t2_job *job, const char *field, double value);

/* A space of one integer parameter over `values`, in the order to try
 * them; *incumbent (may be NULL) the index of `incumbent` among them, -1
 * when it is not one. */
gpuopt_status gpo_t2_space_int(const char *param, const int64_t *values, int32_t n,
                               int64_t incumbent, gpuopt_space **out, int32_t *at);
/* The result's point i's value of `param`. */
int64_t gpo_t2_value(const gpuopt_result *res, int32_t i, const char *param);
/* The result index of the point whose `param` is v, -1 when none. */
int32_t gpo_t2_find(const gpuopt_result *res, const char *param, int64_t v);

/* "256, 128, 512 (pruned), 2048 (<invalid>), 64 (not measured: budget)": every
 * value of the job's one-parameter space in the order tried, with what
 * became of it. */
void gpo_t2_tried(const gpo_t2_job *job, const gpuopt_result *res, const char *param,
                  const char *invalid, char *out, size_t cap);

/* Powers-of-two multiples of `multiple` up to `limit` (powers of two only
 * with pow2_only), plus `incumbent` when it is not one, ordered by distance
 * from the incumbent (ratio), so a budget cut leaves out the far ends.
 * Returns the count (<= cap). (bench_groups.c) */
int32_t gpo_t2_ladder(int64_t multiple, int64_t limit, int64_t incumbent, int pow2_only,
                      int64_t *out, int32_t cap);

/* Writes the whole of a device buffer (bytes, a multiple of 4) from a small
 * host chunk, before a benchmark times reads of it: memory never written
 * may be unbacked (Linux maps untouched anonymous pages to one shared zero
 * page, mmap(2); a CPU device's buffers are such memory), and reading it
 * reads the cache, not the memory. */
gpuopt_status gpo_t2_fill(const gpo_t2_rt *g, gpo_rt_buf *buf, size_t bytes);

/* 1 when the runtime has page-locked host memory (both ops). */
int gpo_t2_has_pinned(const gpo_runtime_ops *ops);

/* A setting an earlier tier chose changes only for a gain above this share
 * (and above the noise): the kernel tier 2 times stands in for the
 * program's own kernels, so a smaller gain on it says nothing about them.
 * The tuner's floor (GPO_NOISE_FLOOR, 2%) judges the very kernel it runs. */
#define GPO_T2_SWITCH_FLOOR 0.05

/* ---- noise.c ------------------------------------------------------------------------ */

/* Reads the load (fs: the plan's sysfs root) and counts the online CPUs. */
void gpo_t2_noise_read(const gpo_fs *fs, gpo_t2_noise *out);

/* Runs of one value whose p20-p80 spread passes this share of their median
 * disagree by more than any gain tier 2 looks for: the machine was busy. */
#define GPO_T2_BUSY_SPREAD 0.20
/* On a busy machine a sweep keeps tier 1's value unless another beats it
 * by more than this share (and the spread): a gain smaller than the noise
 * is no reason to change a setting. */
#define GPO_T2_BUSY_FLOOR 0.25

/* What a sweep's result says of tier 1's value. */
enum { GPO_T2_MEASURED = 0, GPO_T2_WITHIN_NOISE = 1, GPO_T2_NOT_MEASURED = 2 };

typedef struct gpo_t2_verdict {
    int what;          /* GPO_T2_*: "measured", "within noise of tier 1", "not measured (budget)" */
    int32_t pick;      /* the result index whose value to set */
    int32_t incumbent; /* tier 1's value's result index; -1 when it was not measured */
    int32_t others;    /* values other than tier 1's that were measured */
    int busy;          /* the load or the spread of the runs said the machine was busy */
    int kept;          /* tier 1's value kept against a faster one within the noise */
    double spread;     /* the widest p20-p80 spread over its median, of the pick and tier 1's */
    char noise[224];   /* "load 0.4 on 2 CPUs, runs spread 3% (p20-p80)" [+ "; busy: ..."] */
    char gain[192];    /* kept: "p20s A against B, medians C against D: a gain within
                          the noise[ of a busy machine]" (the pick's figures first) */
} gpo_t2_verdict;

/* Judges a one-parameter sweep's result (a best is set) against tier 1's
 * value `incumbent` of `param`: which value to set, and how sure. A busy
 * machine logs a warning. */
void gpo_t2_judge(const gpo_t2_job *job, const gpuopt_result *res, const char *param,
                  int64_t incumbent, gpo_t2_verdict *v);
/* "measured", "within noise of tier 1", "not measured (budget)". */
const char *gpo_t2_verdict_word(int what);

/* ---- subject.c ---------------------------------------------------------------------- */

/* A job as a tuning run's subject (sc->def is the job). */
extern const gpo_subject_ops gpo_t2_subject;

/* ---- session.c ---------------------------------------------------------------------- */

/* Opens the route's session and builds the kernels, once. */
gpuopt_status gpo_t2_session(gpo_t2_rt *g);
/* Closes what gpo_t2_session opened. */
void gpo_t2_session_close(gpo_t2_rt *g);
/* The kernels in a runtime language ("opencl-c", "cuda", "hip"), or NULL
 * (kernels.c). */
const char *gpo_t2_kernel_source(const char *language);

#endif
