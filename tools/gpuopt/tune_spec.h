/* Tuning spec files for `gpuopt tune`: a JSON document holding what the
 * tuning API takes (kernel, parameters, constraints, sizes, geometry,
 * arguments, reference, tolerance, timing, search settings). Loading reads
 * and checks the whole file, and the files it names, before anything is
 * built; applying turns it into a space and a tuner. docs/tuning.md
 * ("Spec files") describes every key.
 *
 * Every error names the spec file, the JSON path of the offending value
 * (`arguments[2].size`), the value, and what is accepted:
 *
 *   sgemm.json: arguments[2].size: 12.5 is not accepted; expected an
 *   expression such as "M * K" or a non-negative integer
 *
 * Specs, paths, texts, outputs and message buffers given to the functions
 * below are never NULL (asserted; tune_spec_parse's file and dir may be):
 * the callers are the command, its tests and the fuzzer, not users. */
#ifndef GPUOPT_TUNE_SPEC_H
#define GPUOPT_TUNE_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include <gpuopt/gpuopt.h>

enum { TS_MAX_DIMS = 3 };

typedef struct ts_param {
    const char *name;
    int is_enum;
    int64_t *ints;      /* is_enum 0 */
    const char **texts; /* is_enum 1 */
    int32_t count;
} ts_param;

typedef struct ts_size {
    const char *name;
    int64_t value;
} ts_size;

enum { TS_ARG_BUFFER = 1, TS_ARG_SCALAR = 2 };

typedef struct ts_arg {
    int kind;     /* TS_ARG_* */
    int32_t type; /* gpuopt_elem_type */
    /* buffers */
    const char *count; /* element count expression */
    int32_t init;      /* gpuopt_buffer_init */
    double constant;
    const void *data; /* GPUOPT_INIT_DATA: count_data elements of type */
    size_t data_bytes;
    int output;
    /* scalars: an expression, or a number for floating-point types */
    const char *expr; /* NULL when `number` holds the value */
    double number;
} ts_arg;

typedef struct ts_ref_data {
    uint32_t index; /* argument */
    const void *data;
    size_t bytes;
} ts_ref_data;

typedef struct ts_default {
    const char *name;
    const char *text; /* as the kernel receives it: "16", "on" */
} ts_default;

typedef struct tune_spec {
    const char *file; /* the spec file as given */
    const char *name; /* "name", else the file's base name without .json */

    const char *source; /* kernel source text */
    const char *source_file;
    const char *entry;
    int32_t language; /* gpuopt_language */
    const char *build_options;

    ts_param *params;
    int32_t n_params;
    const char **constraints;
    int32_t n_constraints;
    ts_size *sizes;
    int32_t n_sizes;

    const char *global[TS_MAX_DIMS]; /* NULL past the last dimension */
    const char *local[TS_MAX_DIMS];  /* all NULL: the runtime picks */
    const char *local_memory;        /* NULL: none */

    ts_arg *args;
    uint32_t n_args;

    /* reference: a kernel, expected data, or neither */
    const char *ref_source;
    const char *ref_file;
    const char *ref_entry;
    const char *ref_options;
    const char *ref_global[TS_MAX_DIMS];
    const char *ref_local[TS_MAX_DIMS];
    ts_ref_data *ref_data;
    int32_t n_ref_data;

    int has_tolerance;
    double abs_tol, rel_tol;
    const char *workload_key; /* NULL: none */

    int has_timing;
    double warmup_ms, repeat_ms;
    int32_t min_runs, max_runs;
    double timeout_s;  /* < 0: the library's default */
    int32_t isolation; /* gpuopt_isolation */

    int32_t strategy; /* gpuopt_strategy */
    int32_t max_evaluations;
    double max_seconds;
    int32_t max_failures;
    uint64_t seed;

    ts_default *defaults; /* the "default" configuration, or NULL */
    int32_t n_defaults;

    struct ts_arena *arena; /* owns everything above */
    void *json;             /* the parsed document (cJSON) */
} tune_spec;

/* Reads and checks `path` and every file it names (relative to the spec's
 * directory). On failure returns NULL and writes the message ("FILE: PATH:
 * ...", no trailing newline) into err. */
tune_spec *tune_spec_load(const char *path, char *err, size_t cap);

/* The same from text already in memory; `file` names it in messages and
 * `dir` is where relative file names are looked up ("." when NULL). */
tune_spec *tune_spec_parse(const char *text, const char *file, const char *dir, char *err,
                           size_t cap);

void tune_spec_free(tune_spec *spec);

/* Overrides a problem size ("--size N=1024"): NAME=VALUE with VALUE a
 * non-negative integer; the size must exist in the spec. Returns 0, or -1
 * with a message in err. */
int tune_spec_set_size(tune_spec *spec, const char *assignment, char *err, size_t cap);

/* "auto", "exhaustive", "random", "annealing", "model" -> gpuopt_strategy,
 * -1 when unknown; and back. */
int32_t tune_spec_strategy_parse(const char *name);
const char *tune_spec_strategy_name(int32_t strategy);
/* "auto", "in-process", "worker" -> gpuopt_isolation, -1 for anything else. */
int32_t tune_spec_isolation_parse(const char *name);

/* "float", "double", "int", "uint", "long" (and f32, f64, i32, u32, i64)
 * -> gpuopt_elem_type, -1 when unknown; and back (the first spelling). */
int32_t tune_spec_type_parse(const char *name);
const char *tune_spec_type_name(int32_t type);

/* Builds the space the spec describes (sizes, parameters, constraints).
 * On failure returns the status, with a message naming the spec's JSON path
 * and the library's detail in err; *space is NULL. */
gpuopt_status tune_spec_space(const tune_spec *spec, gpuopt_space **space, char *err, size_t cap);

/* Builds the space and the tuner the spec describes on `device`. On
 * failure returns the status, with a message naming the spec's JSON path
 * and the library's detail in err; *space and *tuner are NULL. */
gpuopt_status tune_spec_apply(const tune_spec *spec, gpuopt_context *ctx, gpuopt_device *device,
                              gpuopt_space **space, gpuopt_tuner **tuner, char *err, size_t cap);

/* The spec's problem sizes as "M=512 N=512 K=512" (for summaries). */
void tune_spec_sizes_text(const tune_spec *spec, char *out, size_t cap);

#endif
