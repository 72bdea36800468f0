/*
 * libgpuopt — the tuner: parameter spaces, tuners over kernels or host
 * callbacks, and their results.
 *
 * Stability: EXPERIMENTAL until libgpuopt 1.0. The functions below are
 * exported and documented, and the library's own tier 2 and the `gpuopt
 * tune` command are built on them, but their shape may still change in a
 * 0.x release (each change is listed in CHANGELOG.md). The rest of the API
 * (gpuopt/gpuopt.h) follows the stability rules stated there. This is the
 * fence zstd keeps around its ZSTD_STATIC_LINKING_ONLY section: use it,
 * and expect to follow it when it moves.
 *
 * Include <gpuopt/gpuopt.h> (which includes this header) or this header on
 * its own; the conventions of gpuopt.h (status, NULL, ownership,
 * struct_size, thread safety) hold here too.
 */
#ifndef GPUOPT_TUNE_H
#define GPUOPT_TUNE_H

#include "gpuopt/gpuopt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Tuning (level 2): parameter spaces and their points                        */
/* ------------------------------------------------------------------------- */

/* A space is a set of named parameters, each with a list of values, cut
 * down by constraints; a point of it is one value for every parameter (a
 * configuration of the kernel or routine being tuned).
 * The legal space is enumerated lazily (a depth-first walk that tests each
 * constraint as soon as the parameters it reads are set), never
 * materialised as the raw product. docs/tuning.md describes the expression
 * language and the search strategies in full.
 *
 * Thread safety: a space has no lock. Build it from one thread; once built,
 * any number of threads may count it or read points of it
 * (constraint callbacks must then be thread-safe themselves). */
typedef struct gpuopt_space gpuopt_space;   /* named parameters and constraints */
typedef struct gpuopt_point gpuopt_point; /* one assignment of every parameter */

/* Creates an empty space. */
GPUOPT_API gpuopt_status gpuopt_space_create(gpuopt_space **out);

/* Releases the caller's reference. Configurations that came from the space
 * (tuning results) keep it alive until they go. NULL does nothing. */
GPUOPT_API void gpuopt_space_destroy(gpuopt_space *space);

/* Adds an integer parameter taking `values` (1 <= count <= 2^20, no
 * duplicates) in the given order; the order defines "neighbouring" values
 * for local search, so list them ascending unless another order is more
 * meaningful. Names are C identifiers of at most 63 characters (they
 * become -D defines), unique among the space's parameters and sizes. At
 * most 64 parameters. A bad name, a duplicate or NULL values is
 * GPUOPT_ERR_INVALID_ARGUMENT; a count or parameter number past the limits
 * GPUOPT_ERR_OUT_OF_RANGE. */
GPUOPT_API gpuopt_status gpuopt_space_add_int(gpuopt_space *space, const char *name,
                                              const int64_t *values, int32_t count);

/* Adds a parameter taking one of `values`: strings of 1 to 255 printable
 * ASCII characters without spaces (passed to kernels as -DNAME=value),
 * unique. Expressions see an enum parameter as the position of its value
 * (0-based). Same name rules and limits as gpuopt_space_add_int. */
GPUOPT_API gpuopt_status gpuopt_space_add_enum(gpuopt_space *space, const char *name,
                                               const char *const *values, int32_t count);

/* Adds a constraint as an expression over parameters and problem sizes,
 * evaluated in int64: + - * / % (C semantics), unary - + !, comparisons,
 * && || (short-circuit), c ? a : b, parentheses, min(a, b, ...),
 * max(a, b, ...), ceildiv(a, b), pow2(x) (1 if x is a positive power of
 * two); decimal or 0x literals. A configuration is legal when every
 * constraint is nonzero; a division by zero or an overflow makes it
 * illegal. Enum parameters compare by position (0-based). Sizes must be
 * set (gpuopt_space_set_size) before a constraint names them. A malformed
 * expression is GPUOPT_ERR_INVALID_ARGUMENT with the column, what was
 * found and what was expected in the detail; an unknown name is
 * GPUOPT_ERR_NOT_FOUND. The space hash (cache keys) uses a canonical form
 * of the text, so spacing and redundant parentheses do not matter. */
GPUOPT_API gpuopt_status gpuopt_space_add_constraint(gpuopt_space *space, const char *expression);

/* A constraint callback: return nonzero when `point` is legal. It is
 * called during enumeration with a point valid only for the call,
 * after every expression constraint held. `id` (1 to 255 printable ASCII
 * characters, unique in the space) names the callback in the space's hash
 * (cache keys), so change it when the callback's logic changes. */
typedef int32_t (*gpuopt_constraint_fn)(const gpuopt_point *point, void *user);
GPUOPT_API gpuopt_status gpuopt_space_add_constraint_fn(gpuopt_space *space,
                                                        gpuopt_constraint_fn fn, void *user,
                                                        const char *id);

/* Sets a problem size constraints and size expressions may use (N, M, K,
 * ...); setting it again changes its value (tuning the same space for a
 * new problem). At most 64 sizes. Sizes are not part of the space hash:
 * they belong to the workload key. */
GPUOPT_API gpuopt_status gpuopt_space_set_size(gpuopt_space *space, const char *name,
                                               int64_t value);

/* The raw product of the value counts (UINT64_MAX when it does not fit),
 * and the number of legal configurations, counted by the lazy walk (its
 * cost grows with the legal prefixes, not the raw product; parameters no
 * constraint reads are multiplied in, not walked). `legal` may be NULL
 * when only the raw size is wanted. */
GPUOPT_API gpuopt_status gpuopt_space_count(const gpuopt_space *space, uint64_t *raw,
                                            uint64_t *legal);

/* Reading a point by parameter name (GPUOPT_ERR_NOT_FOUND for an
 * unknown name). gpuopt_point_get_int gives an integer parameter's value
 * and an enum parameter's position; gpuopt_point_get_text gives the value
 * as kernels receive it ("16", "on"); the text lives as long as the
 * space. */
GPUOPT_API gpuopt_status gpuopt_point_get_int(const gpuopt_point *point, const char *name,
                                               int64_t *value);
GPUOPT_API gpuopt_status gpuopt_point_get_text(const gpuopt_point *point, const char *name,
                                                const char **value);

/* "TILE=16 VEC=4 STAGE=on", parameters in the order they were added. Free
 * with gpuopt_free. */
GPUOPT_API gpuopt_status gpuopt_point_to_string(const gpuopt_point *point, char **text);

/* ------------------------------------------------------------------------- */
/* Tuning (level 2): tuners, subjects, results                               */
/* ------------------------------------------------------------------------- */

/* A tuner searches a space for the fastest configuration of one subject on
 * one device, validating every candidate before its time may count:
 *
 *   gpuopt_tuner *t;
 *   gpuopt_tuner_create(ctx, dev, space, &t);
 *   gpuopt_tuner_set_kernel(t, source, "sgemm", GPUOPT_LANG_OPENCL_C, "");
 *   gpuopt_tuner_set_geometry(t, global, local);
 *   gpuopt_tuner_add_buffer(t, 0, GPUOPT_ELEM_F32, "M*K", GPUOPT_INIT_RANDOM, 0, NULL, 0);
 *   ... more arguments, a reference, a tolerance ...
 *   gpuopt_result *r;
 *   gpuopt_tuner_run(t, &r);          // or answered from the cache
 *   gpuopt_candidate best = {sizeof best};
 *   gpuopt_result_best(r, &best);     // best.point, best.median_ns
 *   gpuopt_result_destroy(r);
 *   gpuopt_tuner_destroy(t);
 *
 * docs/tuning.md describes the subjects, validation, timing, statuses,
 * results, online tuning and the cache in full.
 *
 * Thread safety: a tuner is used by one thread at a time (it may build
 * programs on a worker thread of its own). Results are immutable: any
 * number of threads may read one. Callbacks run on the thread that called
 * gpuopt_tuner_run or gpuopt_tune_step. */
typedef struct gpuopt_tuner gpuopt_tuner;   /* a subject to tune on one device */
typedef struct gpuopt_result gpuopt_result; /* what a tuning run found */

typedef enum gpuopt_language {
    GPUOPT_LANG_OPENCL_C = 1, /* OpenCL C, built by the OpenCL driver */
    GPUOPT_LANG_CUDA = 2,     /* CUDA C++, compiled with NVRTC */
    GPUOPT_LANG_HIP = 3       /* HIP C++, compiled with hiprtc */
} gpuopt_language;

/* docs/tuning.md describes each strategy. */
typedef enum gpuopt_strategy {
    GPUOPT_STRATEGY_AUTO = 0,       /* EXHAUSTIVE when the legal space fits the budget */
    GPUOPT_STRATEGY_EXHAUSTIVE = 1, /* every legal configuration */
    GPUOPT_STRATEGY_RANDOM = 2,     /* random sampling, then local refinement around the best */
    GPUOPT_STRATEGY_ANNEALING = 3,  /* simulated annealing */
    GPUOPT_STRATEGY_MODEL = 4       /* random-forest surrogate */
} gpuopt_strategy;

/* What became of a candidate. Only OK candidates can win. */
typedef enum gpuopt_candidate_status {
    GPUOPT_CANDIDATE_OK = 0,
    GPUOPT_CANDIDATE_INVALID = 1,        /* illegal by a device limit found after building */
    GPUOPT_CANDIDATE_COMPILE_FAILED = 2, /* message: the start of the build log */
    GPUOPT_CANDIDATE_LAUNCH_FAILED = 3,  /* the launch, a run or the callback failed */
    GPUOPT_CANDIDATE_WRONG_RESULT = 4,   /* message: the first mismatching element */
    GPUOPT_CANDIDATE_TIMEOUT = 5,        /* one run took longer than the timeout */
    GPUOPT_CANDIDATE_PRUNED = 6          /* already 2x slower than the best: not fully timed */
} gpuopt_candidate_status;

typedef enum gpuopt_elem_type {
    GPUOPT_ELEM_F32 = 1,
    GPUOPT_ELEM_F64 = 2,
    GPUOPT_ELEM_I32 = 3,
    GPUOPT_ELEM_U32 = 4,
    GPUOPT_ELEM_I64 = 5
} gpuopt_elem_type;

typedef enum gpuopt_buffer_init {
    GPUOPT_INIT_RANDOM = 1,   /* uniform in [-1, 1) (integers: [0, 100)), from the tuner's seed */
    GPUOPT_INIT_ZEROS = 2,
    GPUOPT_INIT_CONSTANT = 3, /* every element = `constant` */
    GPUOPT_INIT_DATA = 4      /* copied from `data` */
} gpuopt_buffer_init;

typedef enum gpuopt_cache_mode {
    GPUOPT_CACHE_USE = 0,     /* answer from the cache when the hard key matches (default) */
    GPUOPT_CACHE_REFRESH = 1, /* tune again and store the new result */
    GPUOPT_CACHE_OFF = 2      /* neither read nor write */
} gpuopt_cache_mode;

/* Creates a tuner for `device` (NULL: the context's selected device) over
 * a copy of `space` (later changes to `space` do not reach the tuner; use
 * gpuopt_tuner_set_size for a new problem size). The tuner belongs to the
 * context: destroy it before the context. Nothing is built or opened
 * here. A device of another context is GPUOPT_ERR_INVALID_ARGUMENT; a
 * context used after fork() GPUOPT_ERR_FORKED. On failure *out is NULL. */
GPUOPT_API gpuopt_status gpuopt_tuner_create(gpuopt_context *ctx, gpuopt_device *device,
                                             const gpuopt_space *space, gpuopt_tuner **out);

/* Releases the tuner, its device session and compiled programs. Results
 * it returned stay valid. NULL does nothing. */
GPUOPT_API void gpuopt_tuner_destroy(gpuopt_tuner *tuner);

/* Changes a problem size of the tuner's copy of the space (as
 * gpuopt_space_set_size), so the same tuner, with its compiled programs,
 * can be run again for a new problem. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_size(gpuopt_tuner *tuner, const char *name,
                                               int64_t value);

/* Kernel subject: source text, entry name and language (gpuopt_language);
 * each configuration is built with `build_options` (NULL: none) followed by
 * "-DNAME=value" for every parameter. The device must have a route whose
 * runtime compiles that language (OpenCL C on OpenCL devices, CUDA through
 * NVRTC, HIP through hiprtc); gpuopt_tuner_run says so when it has none. A
 * tuner has one subject: a second set_kernel replaces the kernel, after
 * set_callback it is GPUOPT_ERR_INVALID_ARGUMENT. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_kernel(gpuopt_tuner *tuner, const char *source,
                                                 const char *entry, int32_t language,
                                                 const char *build_options);

/* Launch geometry, as expressions (the constraint language) of parameters
 * and problem sizes: global work items and work-group size per dimension
 * ("N", "N / WPT", "TILE"). Dimensions used are global[0], then [1], [2];
 * NULL ends them. `local` NULL lets the runtime choose the work-group;
 * otherwise each used dimension needs one. Global sizes are rounded up to
 * a multiple of the local size. A configuration whose work-group passes
 * the device's limit is made illegal in the tuner's space (never built); a
 * value that is undefined or not positive makes it INVALID. Names must be
 * parameters or sizes of the space when the call is made. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_geometry(gpuopt_tuner *tuner,
                                                   const char *const global[3],
                                                   const char *const local[3]);

/* Local/shared memory a configuration needs, in bytes (expression). A
 * configuration over the device's limit is illegal in the tuner's space,
 * never built. NULL removes it. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_local_memory(gpuopt_tuner *tuner,
                                                       const char *bytes_expression);

/* Kernel argument `index` is a buffer of `count_expression` elements of
 * `type` (gpuopt_elem_type), initialised by `init` (gpuopt_buffer_init):
 * `constant` for GPUOPT_INIT_CONSTANT; for GPUOPT_INIT_DATA `data` holds
 * the elements, and the count must not read parameters: it is evaluated
 * with the problem sizes at this call, and that many elements are copied.
 * `is_output` nonzero: the buffer is reset to its initial content before
 * every run and compared against the reference. A buffer whose count
 * reads no parameter is made once per run; others per candidate. Setting
 * an index again replaces that argument. Kernel arguments must end up
 * numbered 0 .. n-1 without gaps (checked by gpuopt_tuner_run). */
GPUOPT_API gpuopt_status gpuopt_tuner_add_buffer(gpuopt_tuner *tuner, uint32_t index,
                                                 int32_t type, const char *count_expression,
                                                 int32_t init, double constant, const void *data,
                                                 int32_t is_output);

/* Kernel argument `index` is a scalar of `type`: the value of an integer
 * expression of parameters and sizes ("N", "TILE * 2"), converted to the
 * type; or (gpuopt_tuner_add_scalar_f64) a fixed value, converted to the
 * type (an integer type needs an integral value in its range). */
GPUOPT_API gpuopt_status gpuopt_tuner_add_scalar(gpuopt_tuner *tuner, uint32_t index,
                                                 int32_t type, const char *expression);
GPUOPT_API gpuopt_status gpuopt_tuner_add_scalar_f64(gpuopt_tuner *tuner, uint32_t index,
                                                     int32_t type, double value);

/* Validation. A reference kernel (same language, same arguments, its own
 * geometry of problem sizes only; `local` may be NULL) runs once per
 * gpuopt_tuner_run and its outputs are the expected values; or expected
 * data (`bytes` = count * element size, copied) for output argument
 * `index`, added before, which wins over the reference kernel for that
 * output. `source` NULL removes the reference kernel, `data` NULL an
 * output's data. Outputs are compared
 * element by element: |out - ref| <= abs_tol + rel_tol * |ref| for EVERY
 * element (defaults 1e-4 and 1e-4; NaN matches only NaN). The first
 * mismatch (index, value, expected) is the candidate's message. The
 * arguments of a tuner with a reference must not depend on parameters
 * (what would the reference be compared with?). Without any reference,
 * and for callbacks without `validate`, nothing is checked. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_reference_kernel(gpuopt_tuner *tuner,
                                                           const char *source, const char *entry,
                                                           const char *build_options,
                                                           const char *const global[3],
                                                           const char *const local[3]);
GPUOPT_API gpuopt_status gpuopt_tuner_set_reference_data(gpuopt_tuner *tuner, uint32_t index,
                                                         const void *data, size_t bytes);
GPUOPT_API gpuopt_status gpuopt_tuner_set_tolerance(gpuopt_tuner *tuner, double abs_tol,
                                                    double rel_tol);

/* Host-callback subject, for anything that is not one kernel (a CPU
 * routine, a library call, a sequence of launches). The library calls
 * `run` with a configuration and times the call with a monotonic clock; a
 * callback that measures itself (device events of its own) stores
 * nanoseconds in *measured_ns, which starts negative (leave it so to let
 * the library time the call). A return other than GPUOPT_OK marks the
 * candidate LAUNCH_FAILED. `pre_run` (may be NULL) is called before every
 * run, untimed (reset in-place outputs); `validate` (may be NULL) after a
 * candidate's first run: nonzero when the output is correct. The
 * configuration is valid during the call only. */
typedef gpuopt_status (*gpuopt_run_fn)(const gpuopt_point *point, void *user,
                                       double *measured_ns);
typedef void (*gpuopt_pre_run_fn)(const gpuopt_point *point, void *user);
typedef int32_t (*gpuopt_validate_fn)(const gpuopt_point *point, void *user);

/* `run` is required. After set_kernel it is GPUOPT_ERR_INVALID_ARGUMENT. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_callback(gpuopt_tuner *tuner, gpuopt_run_fn run,
                                                   gpuopt_pre_run_fn pre_run,
                                                   gpuopt_validate_fn validate, void *user);

/* Search settings: a strategy (gpuopt_strategy; default AUTO); a budget of
 * at most max_evaluations candidates, max_seconds of search time and
 * max_failures failed candidates (each 0: no limit; a non-exhaustive
 * strategy without an evaluation budget gets 25% of the legal space); a
 * seed (default 0) that makes the run reproducible. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_strategy(gpuopt_tuner *tuner, int32_t strategy);
GPUOPT_API gpuopt_status gpuopt_tuner_set_budget(gpuopt_tuner *tuner, int32_t max_evaluations,
                                                 double max_seconds, int32_t max_failures);
GPUOPT_API gpuopt_status gpuopt_tuner_set_seed(gpuopt_tuner *tuner, uint64_t seed);

/* Timing per candidate: warm up until warmup_ms of run time (at least one
 * run), then time runs until repeat_ms of run time, between min_runs and
 * max_runs; the first min(3, max_runs) timed runs are the probe of the
 * pruning rule. Defaults 5 ms, 50 ms, 3, 100. GPUOPT_ERR_OUT_OF_RANGE for
 * negative times, min_runs < 1, max_runs < min_runs or over 100000. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_timing(gpuopt_tuner *tuner, double warmup_ms,
                                                 double repeat_ms, int32_t min_runs,
                                                 int32_t max_runs);

/* A candidate one of whose runs takes longer than `seconds` of wall time
 * (the whole call, its reset included, whatever a callback reports as its
 * own measurement) stops as TIMEOUT. Checked after each run: a running
 * kernel cannot be interrupted. Default 10 s; 0 disables. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_timeout(gpuopt_tuner *tuner, double seconds);

/* The user's part of the cache's workload key (problem sizes and argument
 * types are added by the library): anything else that changes the best
 * answer, such as a data layout or the name of a callback's routine. NULL
 * or "" clears it. A callback subject is cached only with a workload key
 * (a function cannot be hashed). */
GPUOPT_API gpuopt_status gpuopt_tuner_set_workload_key(gpuopt_tuner *tuner, const char *key);
GPUOPT_API gpuopt_status gpuopt_tuner_set_cache_mode(gpuopt_tuner *tuner, int32_t mode);

/* Progress: called after every candidate with the count done, the planned
 * total (0 when unknown), the best median so far (ns, < 0 when none) and
 * the estimated seconds left (< 0 when unknown). NULL removes it. */
typedef void (*gpuopt_progress_fn)(int32_t done, int32_t total, double best_ns,
                                   double seconds_left, void *user);
GPUOPT_API gpuopt_status gpuopt_tuner_set_progress(gpuopt_tuner *tuner, gpuopt_progress_fn fn,
                                                   void *user);

/* Tunes, or answers from the cache without building or running anything
 * (gpuopt_result_from_cache). Every candidate is validated before its
 * time counts; at the end the best few are re-timed side by side and the
 * incumbent is kept unless beaten beyond noise. Each measured candidate is
 * appended to the cache's journal at once, so a run that is killed
 * resumes where it stopped. GPUOPT_ERR_NOT_FOUND when no candidate was
 * valid: *out still holds the result, which lists them. Other failures
 * leave *out NULL with the reason in the detail: no subject
 * (INVALID_ARGUMENT), a device without a runtime for the language or whose
 * driver runs no kernel (UNSUPPORTED), arguments that do not fit
 * (INVALID_ARGUMENT), a reference kernel that does not build (BUILD). */
GPUOPT_API gpuopt_status gpuopt_tuner_run(gpuopt_tuner *tuner, gpuopt_result **out);

/* Online tuning (KTT's dynamic tuning): each call runs the subject once
 * with the next candidate, doing the caller's real work, and once the
 * search is done (or the cache answered) with the best. A candidate that
 * fails is replaced within the same call by the best so far (or the next
 * candidate), so every call that returns GPUOPT_OK ran a valid
 * configuration. *config is the configuration used, valid until the next
 * call or the tuner's destruction (may be NULL when not wanted); *done
 * becomes 1 once the best is being used (may be NULL). Candidates are
 * journaled as gpuopt_tuner_run does; their time is that one run's. A
 * later setter or gpuopt_tuner_run starts the online search again.
 * GPUOPT_ERR_NOT_FOUND when the search ended without a valid candidate. */
GPUOPT_API gpuopt_status gpuopt_tune_step(gpuopt_tuner *tuner, const gpuopt_point **config,
                                          int32_t *done);

/* Statistics of one evaluated candidate. Pointers live as long as the
 * result. */
typedef struct gpuopt_candidate {
    size_t struct_size;          /* sizeof(gpuopt_candidate) */
    const gpuopt_point *point;  /* its point of the space */
    int32_t status;              /* gpuopt_candidate_status */
    int32_t runs;                /* timed runs */
    double median_ns;            /* -1 when not timed */
    double p20_ns;
    double p80_ns;
    double min_ns;
    double compile_ms;   /* -1 when nothing was built (already built, callbacks, cached) */
    const char *message; /* build log excerpt, first mismatch, ...; "" when none */
} gpuopt_candidate;

GPUOPT_API size_t gpuopt_candidate_size(void);

/* The winner (after the final side-by-side re-timing); GPUOPT_ERR_NOT_FOUND
 * when no candidate was valid. */
GPUOPT_API gpuopt_status gpuopt_result_best(const gpuopt_result *result,
                                            gpuopt_candidate *best);
/* Candidates evaluated (and resumed from the journal), in evaluation
 * order; a result from the cache holds the stored winner and runner-up. */
GPUOPT_API gpuopt_status gpuopt_result_count(const gpuopt_result *result, int32_t *count);
GPUOPT_API gpuopt_status gpuopt_result_at(const gpuopt_result *result, int32_t index,
                                          gpuopt_candidate *candidate);
/* 0: tuned now; 1: answered from the cache, nothing built or run; 2: from
 * the cache after a driver, compiler, library or device-name change, the
 * stored winner and runner-up re-timed and the winner kept. */
GPUOPT_API gpuopt_status gpuopt_result_from_cache(const gpuopt_result *result, int32_t *cached);
/* Exports. JSON: device, subject, strategy, seed, budget, timing, stop
 * reason, wall time, best, the final re-timing and every candidate
 * (docs/tuning.md). CSV: a header, then one row per candidate, one column
 * per parameter. Free with gpuopt_free. */
GPUOPT_API gpuopt_status gpuopt_result_to_json(const gpuopt_result *result, char **json);
GPUOPT_API gpuopt_status gpuopt_result_to_csv(const gpuopt_result *result, char **csv);
/* NULL does nothing. */
GPUOPT_API void gpuopt_result_destroy(gpuopt_result *result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUOPT_TUNE_H */
