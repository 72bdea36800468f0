/*
 * libgpuopt — the tuner: parameter spaces, tuners over kernels or host
 * callbacks, and their results.
 *
 * Stability: EXPERIMENTAL until libgpuopt 1.0. The functions below are
 * exported and documented, the `gpuopt tune` command is built on them and
 * the library's own tier 2 on the same engine, but their shape may still
 * change in a 0.x release (0.2 reshaped them; CHANGELOG.md lists each
 * change). The rest of the API
 * (gpuopt/gpuopt.h) follows the stability rules stated there. This is the
 * fence zstd keeps around its ZSTD_STATIC_LINKING_ONLY section: use it,
 * and expect to follow it when it moves.
 *
 * Include <gpuopt/gpuopt.h> (which includes this header) or this header on
 * its own; the conventions of gpuopt.h (status, failure means no output,
 * NULL, ownership, struct_size, thread safety) hold here too, without
 * exception.
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

/* A tuner searches a space for the fastest point of one subject on one
 * device, validating every candidate before its time may count:
 *
 *   gpuopt_tuner *t;
 *   gpuopt_tuner_create(ctx, dev, space, &t);
 *   gpuopt_kernel_desc k = {.struct_size = sizeof k, .source = source, .entry = "sgemm",
 *                           .language = GPUOPT_LANG_OPENCL_C,
 *                           .global = {"M", "N"}, .local = {"TS", "TS"}};
 *   gpuopt_tuner_set_kernel(t, &k);
 *   gpuopt_buffer_desc a = {.struct_size = sizeof a, .type = GPUOPT_ELEM_F32,
 *                           .init = GPUOPT_INIT_RANDOM, .count = "M * K"};
 *   gpuopt_tuner_set_buffer(t, 0, &a);
 *   ... more arguments, a reference kernel ...
 *   gpuopt_tuner_settings s = {.struct_size = sizeof s};
 *   gpuopt_tuner_get_settings(t, &s);   // the defaults
 *   s.max_evaluations = 100;
 *   gpuopt_tuner_set_settings(t, &s);
 *   gpuopt_result *r;
 *   gpuopt_tuner_run(t, &r);            // or answered from the cache
 *   gpuopt_candidate best = {.struct_size = sizeof best};
 *   if (gpuopt_result_best(r, &best) == GPUOPT_OK)
 *       ...                             // best.point, best.median_ns
 *   gpuopt_result_destroy(r);
 *   gpuopt_tuner_destroy(t);
 *
 * docs/tuning.md describes the subjects, validation, timing, statuses,
 * results, online tuning and the cache in full.
 *
 * Descriptors and settings. A tuner grows one way: through structs that
 * begin with struct_size, as gpuopt_options does (gpuopt.h, Conventions).
 * What is tuned is described by the kernel (gpuopt_kernel_desc) or the host
 * callback (gpuopt_callback_desc), each kernel argument
 * (gpuopt_buffer_desc, gpuopt_scalar_desc) and the reference kernel
 * (gpuopt_reference_desc). Zeroed, with struct_size set, a descriptor gives
 * nothing, and each field says what 0 or NULL means, so a field a later
 * release adds means at 0 what the release before did. How the tuner
 * searches, times, compares and caches is one gpuopt_tuner_settings,
 * read with gpuopt_tuner_get_settings and written back whole with
 * gpuopt_tuner_set_settings: the defaults come from the tuner, not from
 * special values of the fields (0 is a meaningful tolerance or warm-up).
 * A setter checks the whole struct and changes nothing when it refuses a
 * field; the library copies what it keeps (strings, data) during the call.
 * A NULL struct is GPUOPT_ERR_INVALID_ARGUMENT and a struct_size smaller
 * than the first released layout GPUOPT_ERR_STRUCT_SIZE. Enum-typed
 * fields and arguments are int32_t (the C type of an enum varies), each
 * naming its enum. Bindings get the sizes from the gpuopt_*_size()
 * functions.
 *
 * Thread safety: a tuner is used by one thread at a time (it may build
 * programs on a worker thread of its own). Results are immutable: any
 * number of threads may read one. Callbacks run on the thread that called
 * gpuopt_tuner_run or gpuopt_tuner_step. */
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
    GPUOPT_STRATEGY_EXHAUSTIVE = 1, /* every legal point */
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

/* A kernel subject. Each point is built with `build_options` followed by
 * "-DNAME=value" for every parameter. The launch geometry and the local
 * memory are expressions (the constraint language) of parameters and
 * problem sizes; the names they read must be parameters or sizes of the
 * space when the kernel is set. */
typedef struct gpuopt_kernel_desc {
    size_t struct_size;        /* sizeof(gpuopt_kernel_desc) */
    const char *source;        /* the source text; required, not empty */
    const char *entry;         /* the kernel's name: a C identifier of 1 to 255 characters */
    int32_t language;          /* gpuopt_language */
    const char *build_options; /* NULL: none */
    /* Global work items per dimension ("N", "N / WPT"): global[0] is
     * required, then [1] and [2]; the first NULL ends them. */
    const char *global[3];
    /* The work-group size of each used dimension ("TILE"), or local[0]
     * NULL to let the runtime choose. Global sizes are rounded up to a
     * multiple of it. */
    const char *local[3];
    /* Local/shared memory a point needs, in bytes; NULL: none. */
    const char *local_memory;
} gpuopt_kernel_desc;

GPUOPT_API size_t gpuopt_kernel_desc_size(void);

/* Makes `kernel` the tuner's subject, replacing an earlier kernel. The
 * device must have a route whose runtime compiles the language (OpenCL C on
 * OpenCL devices, CUDA through NVRTC, HIP through hiprtc); gpuopt_tuner_run
 * says so when it has none. A point whose work-group or local memory passes
 * the device's limit is made illegal in the tuner's space (never built); a
 * geometry that is undefined or not positive for a point makes it INVALID.
 * GPUOPT_ERR_INVALID_ARGUMENT: a tuner with a callback subject (a tuner has
 * one subject), no source or entry, no global[0], a dimension given after an
 * unused one, a local size missing for a used dimension, an expression that
 * does not parse (the column in the detail). GPUOPT_ERR_NOT_FOUND: a name
 * that is not in the space. GPUOPT_ERR_OUT_OF_RANGE: an unknown language. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_kernel(gpuopt_tuner *tuner,
                                                 const gpuopt_kernel_desc *kernel);

/* A buffer argument of a kernel subject. */
typedef struct gpuopt_buffer_desc {
    size_t struct_size; /* sizeof(gpuopt_buffer_desc) */
    int32_t type;       /* gpuopt_elem_type */
    int32_t init;       /* gpuopt_buffer_init */
    /* Elements: an expression of parameters and sizes ("M * K"). */
    const char *count;
    /* GPUOPT_INIT_CONSTANT: every element's value (finite). */
    double constant;
    /* GPUOPT_INIT_DATA: the elements, copied during the call. `count` must
     * not read parameters then: it is evaluated with the problem sizes of
     * the moment (1 to 2^40), and that many elements are copied. */
    const void *data;
    /* Nonzero: an output, reset to its initial content before every run
     * and compared with the reference. */
    int32_t is_output;
} gpuopt_buffer_desc;

GPUOPT_API size_t gpuopt_buffer_desc_size(void);

/* Kernel argument `index` (0 to 255) is the buffer `buffer` describes.
 * Setting an index again replaces that argument, buffer or scalar. A
 * buffer whose count reads no parameter is made once per run, others per
 * candidate. Kernel arguments must end up numbered 0 .. n-1 without gaps
 * (checked by gpuopt_tuner_run). GPUOPT_ERR_OUT_OF_RANGE: an index, type
 * or init outside the lists, a data count outside 1 .. 2^40;
 * GPUOPT_ERR_INVALID_ARGUMENT: no count, a constant that is not finite, no
 * data for GPUOPT_INIT_DATA or a data count that reads a parameter, an
 * expression that does not parse; GPUOPT_ERR_NOT_FOUND: a name not in the
 * space. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_buffer(gpuopt_tuner *tuner, uint32_t index,
                                                 const gpuopt_buffer_desc *buffer);

/* A scalar argument of a kernel subject: the value of an integer
 * expression of parameters and sizes ("N", "TILE * 2") converted to `type`
 * (a value outside the type's range makes the point INVALID); or, with
 * `expression` NULL, the fixed `value` converted to `type` (an integer type
 * needs an integral value in its range). */
typedef struct gpuopt_scalar_desc {
    size_t struct_size;     /* sizeof(gpuopt_scalar_desc) */
    int32_t type;           /* gpuopt_elem_type */
    const char *expression; /* NULL: `value` */
    double value;
} gpuopt_scalar_desc;

GPUOPT_API size_t gpuopt_scalar_desc_size(void);

/* Kernel argument `index` (0 to 255) is the scalar `scalar` describes;
 * setting an index again replaces that argument. GPUOPT_ERR_OUT_OF_RANGE:
 * an index or type outside the lists, a value its integer type cannot
 * hold; GPUOPT_ERR_INVALID_ARGUMENT: an expression that does not parse. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_scalar(gpuopt_tuner *tuner, uint32_t index,
                                                 const gpuopt_scalar_desc *scalar);

/* Validation. Every output is compared element by element with expected
 * values: |out - ref| <= abs_tol + rel_tol * |ref| for EVERY element (the
 * tolerances are settings; NaN matches only NaN), and the first mismatch
 * (index, value, expected) is the candidate's message. The expected values
 * come from a reference kernel, which runs once per gpuopt_tuner_run, or
 * from expected data for one output, which wins over the reference kernel
 * for that output. The arguments of a tuner with a reference must not
 * depend on parameters (what would the reference be compared with?).
 * Without any reference, and for callbacks without `validate`, nothing is
 * checked. */

/* A reference kernel: the subject's language and arguments, its own
 * geometry, of problem sizes only. */
typedef struct gpuopt_reference_desc {
    size_t struct_size;        /* sizeof(gpuopt_reference_desc) */
    const char *source;        /* required, not empty */
    const char *entry;         /* a C identifier of 1 to 255 characters */
    const char *build_options; /* NULL: none */
    const char *global[3];     /* as gpuopt_kernel_desc.global, reading sizes only */
    const char *local[3];      /* as gpuopt_kernel_desc.local, reading sizes only */
} gpuopt_reference_desc;

GPUOPT_API size_t gpuopt_reference_desc_size(void);

/* Sets the reference kernel; `reference` NULL removes it.
 * GPUOPT_ERR_INVALID_ARGUMENT: a tuner with a callback subject (its
 * validate callback checks), a geometry that reads a parameter, and the
 * source, entry and geometry errors of gpuopt_tuner_set_kernel;
 * GPUOPT_ERR_NOT_FOUND: a name that is not in the space. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_reference_kernel(gpuopt_tuner *tuner,
                                                           const gpuopt_reference_desc *reference);

/* Expected data for output argument `index`, a buffer set before with
 * is_output: `bytes` (count * element size) copied from `data`; `data` NULL
 * removes it. GPUOPT_ERR_NOT_FOUND: no buffer at `index`;
 * GPUOPT_ERR_INVALID_ARGUMENT: not an output, 0 bytes;
 * GPUOPT_ERR_OUT_OF_RANGE: a size that differs from the buffer's. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_reference_data(gpuopt_tuner *tuner, uint32_t index,
                                                         const void *data, size_t bytes);

/* Host-callback subject, for anything that is not one kernel (a CPU
 * routine, a library call, a sequence of launches). The library calls
 * `run` with a point and times the call with a monotonic clock; a
 * callback that measures itself (device events of its own) stores
 * nanoseconds in *measured_ns, which starts negative (leave it so to let
 * the library time the call). A return other than GPUOPT_OK marks the
 * candidate LAUNCH_FAILED. `pre_run` is called before every run, untimed
 * (reset in-place outputs); `validate` after a candidate's first run:
 * nonzero when the output is correct. The point is valid during the call
 * only. */
typedef gpuopt_status (*gpuopt_run_fn)(const gpuopt_point *point, void *user,
                                       double *measured_ns);
typedef void (*gpuopt_pre_run_fn)(const gpuopt_point *point, void *user);
typedef int32_t (*gpuopt_validate_fn)(const gpuopt_point *point, void *user);

typedef struct gpuopt_callback_desc {
    size_t struct_size;          /* sizeof(gpuopt_callback_desc) */
    gpuopt_run_fn run;           /* required */
    gpuopt_pre_run_fn pre_run;   /* NULL: none */
    gpuopt_validate_fn validate; /* NULL: nothing is checked */
    void *user;                  /* passed to each */
} gpuopt_callback_desc;

GPUOPT_API size_t gpuopt_callback_desc_size(void);

/* Makes `callback` the tuner's subject, replacing an earlier callback. A
 * tuner with a kernel subject refuses it (GPUOPT_ERR_INVALID_ARGUMENT), as
 * it refuses a NULL `run`. */
GPUOPT_API gpuopt_status gpuopt_tuner_set_callback(gpuopt_tuner *tuner,
                                                   const gpuopt_callback_desc *callback);

/* How a tuner searches, times, compares and caches: read the tuner's
 * settings (the defaults below, for a new tuner), change fields, write them
 * back. gpuopt_tuner_set_settings checks every field (each refusal is
 * GPUOPT_ERR_OUT_OF_RANGE, naming the field) and changes nothing when it
 * refuses one. A struct of an older header (a smaller struct_size) leaves
 * the settings it lacks as they are. */
typedef struct gpuopt_tuner_settings {
    size_t struct_size; /* sizeof(gpuopt_tuner_settings) */
    /* The search: a strategy (gpuopt_strategy; default AUTO); a budget of
     * at most max_evaluations candidates, max_seconds of search time and
     * max_failures failed candidates (each >= 0, finite; 0, the default:
     * no limit; a non-exhaustive strategy without an evaluation budget
     * gets 25% of the legal space); a seed (default 0) that makes the run
     * reproducible. */
    int32_t strategy;
    int32_t max_evaluations;
    double max_seconds;
    int32_t max_failures;
    int32_t cache_mode; /* gpuopt_cache_mode; default USE */
    uint64_t seed;
    /* Timing per candidate: warm up until warmup_ms of run time (at least
     * one run), then time runs until repeat_ms of run time, between
     * min_runs and max_runs (1 <= min_runs <= max_runs <= 100000; times 0
     * to 3600000 ms); the first min(3, max_runs) timed runs are the probe
     * of the pruning rule. Defaults 5 ms, 50 ms, 3, 100. */
    double warmup_ms;
    double repeat_ms;
    int32_t min_runs;
    int32_t max_runs;
    /* A candidate one of whose runs takes longer than timeout_s of wall
     * time (the whole call, its reset included, whatever a callback reports
     * as its own measurement) stops as TIMEOUT. Checked after each run: a
     * running kernel cannot be interrupted. Default 10 s; 0 disables. */
    double timeout_s;
    /* The tolerances of validation (above), finite and >= 0; defaults 1e-4
     * and 1e-4. */
    double abs_tol;
    double rel_tol;
    /* The user's part of the cache's workload key (problem sizes and
     * argument types are added by the library): anything else that changes
     * the best answer, such as a data layout or the name of a callback's
     * routine; at most 1024 characters; NULL or "": none (the default). A
     * callback subject is cached only with one (a function cannot be
     * hashed). gpuopt_tuner_get_settings points it into the tuner, valid
     * until the next gpuopt_tuner_set_settings. */
    const char *workload_key;
} gpuopt_tuner_settings;

GPUOPT_API size_t gpuopt_tuner_settings_size(void);
GPUOPT_API gpuopt_status gpuopt_tuner_get_settings(const gpuopt_tuner *tuner,
                                                   gpuopt_tuner_settings *settings);
GPUOPT_API gpuopt_status gpuopt_tuner_set_settings(gpuopt_tuner *tuner,
                                                   const gpuopt_tuner_settings *settings);

/* Progress: called after every candidate with the count done, the planned
 * total (0 when unknown), the best median so far (ns, < 0 when none) and
 * the estimated seconds left (< 0 when unknown). NULL removes it. */
typedef void (*gpuopt_progress_fn)(int32_t done, int32_t total, double best_ns,
                                   double seconds_left, void *user);
GPUOPT_API gpuopt_status gpuopt_tuner_set_progress(gpuopt_tuner *tuner, gpuopt_progress_fn fn,
                                                   void *user);

/* Tunes, or answers from the cache without building or running anything
 * (gpuopt_result_get_origin). Every candidate is validated before its
 * time counts; at the end the best few are re-timed side by side and the
 * incumbent is kept unless beaten beyond noise. Each measured candidate is
 * appended to the cache's journal at once, so a run that is killed
 * resumes where it stopped. GPUOPT_OK hands back a result, also when no
 * candidate was valid: gpuopt_result_best is then GPUOPT_ERR_NOT_FOUND and
 * gpuopt_result_at lists every candidate with its status and message. A
 * failure leaves *out NULL with the reason in the detail: no subject
 * (INVALID_ARGUMENT), a device without a runtime for the language or whose
 * driver runs no kernel (UNSUPPORTED), arguments that do not fit
 * (INVALID_ARGUMENT), a kernel or reference entry name its source does not
 * define (INVALID_ARGUMENT at the first build, naming those it defines), a
 * reference kernel that does not build (BUILD), a candidate that left the
 * device faulted (FAULT). A stored tune without a valid candidate never
 * answers: the run tunes again. */
GPUOPT_API gpuopt_status gpuopt_tuner_run(gpuopt_tuner *tuner, gpuopt_result **out);

/* Online tuning (KTT's dynamic tuning): each call runs the subject once
 * with the next candidate, doing the caller's real work, and once the
 * search is done (or the cache answered) with the best. A candidate that
 * fails is replaced within the same call by the best so far (or the next
 * candidate), so every call that returns GPUOPT_OK ran a valid point.
 * *point is the point used, valid until the next call or the tuner's
 * destruction (may be NULL when not wanted); *done becomes 1 once the best
 * is being used (may be NULL). Candidates are journaled as gpuopt_tuner_run
 * does; their time is that one run's. A later setter or gpuopt_tuner_run
 * starts the online search again. GPUOPT_ERR_NOT_FOUND when the search
 * ended without a valid candidate. */
GPUOPT_API gpuopt_status gpuopt_tuner_step(gpuopt_tuner *tuner, const gpuopt_point **point,
                                           int32_t *done);

/* Statistics of one evaluated candidate. Pointers live as long as the
 * result. */
typedef struct gpuopt_candidate {
    size_t struct_size;        /* sizeof(gpuopt_candidate) */
    const gpuopt_point *point; /* its point of the space */
    int32_t status;            /* gpuopt_candidate_status */
    int32_t runs;              /* timed runs */
    double median_ns;          /* -1 when not timed */
    double p20_ns;
    double p80_ns;
    double min_ns;
    double compile_ms;   /* -1 when nothing was built (already built, callbacks, cached) */
    const char *message; /* build log excerpt, first mismatch, ...; "" when none */
} gpuopt_candidate;

GPUOPT_API size_t gpuopt_candidate_size(void);

/* Where a result's answer came from (gpuopt_result_get_origin). */
typedef enum gpuopt_result_origin {
    GPUOPT_ORIGIN_TUNED = 0,         /* searched by this run */
    GPUOPT_ORIGIN_CACHE_HIT = 1,     /* answered from the cache: nothing built or run */
    GPUOPT_ORIGIN_CACHE_VERIFIED = 2 /* from the cache after a driver, compiler, library or
                                        device-name change: the stored winner and runner-up
                                        re-timed side by side, and the winner kept */
} gpuopt_result_origin;

/* The winner (after the final side-by-side re-timing);
 * GPUOPT_ERR_NOT_FOUND when no candidate was valid. */
GPUOPT_API gpuopt_status gpuopt_result_best(const gpuopt_result *result,
                                            gpuopt_candidate *best);
/* Candidates evaluated (and resumed from the journal), in evaluation
 * order; a result from the cache holds the stored winner and runner-up. */
GPUOPT_API gpuopt_status gpuopt_result_count(const gpuopt_result *result, int32_t *count);
GPUOPT_API gpuopt_status gpuopt_result_at(const gpuopt_result *result, int32_t index,
                                          gpuopt_candidate *candidate);
/* *origin: a gpuopt_result_origin. */
GPUOPT_API gpuopt_status gpuopt_result_get_origin(const gpuopt_result *result, int32_t *origin);
/* Exports. JSON: device, subject, origin, strategy, seed and budget (of
 * the search that found the answer: from the cache, the stored ones, with
 * this run's beside them), when a cached answer was measured, timing, stop
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
