/* gpuopt tune's spec files: the two examples load with every key as
 * written, and every malformed spec is refused with the file, the JSON
 * path, the value and what is accepted. No device is needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tune_spec.h"

#ifndef GPO_EXAMPLES_DIR
#error "GPO_EXAMPLES_DIR must name examples/tuning"
#endif

static const ts_param *param(const tune_spec *s, const char *name)
{
    for (int32_t i = 0; i < s->n_params; i++)
        if (strcmp(s->params[i].name, name) == 0)
            return &s->params[i];
    return NULL;
}

static void sgemm_example_loads_every_key(void **state)
{
    (void)state;
    char err[512];
    tune_spec *s = tune_spec_load(GPO_EXAMPLES_DIR "/sgemm.json", err, sizeof err);
    assert_non_null(s);
    assert_string_equal(s->name, "sgemm");
    assert_non_null(strstr(s->source, "__kernel"));
    assert_string_equal(s->source_file, "sgemm.cl");
    assert_string_equal(s->entry, "sgemm");
    assert_int_equal(s->language, GPUOPT_LANG_OPENCL_C);
    assert_int_equal(s->n_params, 8);
    /* Declaration order is kept: the lazy walk tests constraints in it. */
    assert_string_equal(s->params[0].name, "MWG");
    assert_string_equal(s->params[7].name, "SB");
    const ts_param *mwg = param(s, "MWG");
    assert_non_null(mwg);
    assert_false(mwg->is_enum);
    assert_int_equal(mwg->count, 4);
    assert_int_equal(mwg->ints[3], 64);
    assert_int_equal(s->n_constraints, 9);
    assert_string_equal(s->constraints[0], "M % MWG == 0");
    assert_int_equal(s->n_sizes, 3);
    assert_string_equal(s->sizes[2].name, "K");
    assert_int_equal(s->sizes[2].value, 512);
    assert_string_equal(s->global[0], "N / NWI");
    assert_string_equal(s->local[1], "MWG / MWI");
    assert_null(s->global[2]);
    assert_non_null(s->local_memory);
    assert_int_equal(s->n_args, 8);
    assert_int_equal(s->args[0].kind, TS_ARG_SCALAR);
    assert_int_equal(s->args[0].type, GPUOPT_ELEM_I32);
    assert_string_equal(s->args[0].expr, "M");
    assert_int_equal(s->args[3].type, GPUOPT_ELEM_F32);
    assert_null(s->args[3].expr);
    assert_true(s->args[3].number == 1.0);
    assert_int_equal(s->args[4].kind, TS_ARG_BUFFER);
    assert_int_equal(s->args[4].init, GPUOPT_INIT_RANDOM);
    assert_string_equal(s->args[4].count, "M * K");
    assert_false(s->args[4].output);
    assert_true(s->args[7].output);
    assert_int_equal(s->args[7].init, GPUOPT_INIT_ZEROS);
    assert_non_null(strstr(s->ref_source, "sgemm_ref"));
    assert_string_equal(s->ref_entry, "sgemm_ref");
    assert_string_equal(s->ref_global[1], "M");
    assert_null(s->ref_local[0]);
    assert_true(s->has_tolerance);
    assert_true(s->abs_tol == 1e-3 && s->rel_tol == 1e-3);
    assert_string_equal(s->workload_key, "row-major;alpha=1;beta=0");
    assert_true(s->has_timing);
    assert_int_equal(s->max_runs, 100);
    assert_int_equal(s->strategy, GPUOPT_STRATEGY_AUTO);
    assert_int_equal(s->seed, 1);
    assert_int_equal(s->n_defaults, 8);
    assert_string_equal(s->defaults[0].name, "MWG");
    assert_string_equal(s->defaults[0].text, "16");
    char sizes[64];
    tune_spec_sizes_text(s, sizes, sizeof sizes);
    assert_string_equal(sizes, "M=512 N=512 K=512");
    tune_spec_free(s);
}

/* The number of configurations of `s`'s space its constraints allow at its
 * sizes (counted by the library's own space), or with `defaults_only` of
 * its default configuration alone (1 when it is legal). */
static uint64_t legal_count(const tune_spec *s, int defaults_only)
{
    gpuopt_space *sp = NULL;
    uint64_t raw = 0, legal = 0;
    assert_int_equal(gpuopt_space_create(&sp), GPUOPT_OK);
    for (int32_t i = 0; i < s->n_params; i++) {
        const ts_param *p = &s->params[i];
        int64_t one = 0;
        if (defaults_only) {
            for (int32_t d = 0; d < s->n_defaults; d++)
                if (strcmp(s->defaults[d].name, p->name) == 0)
                    one = strtoll(s->defaults[d].text, NULL, 10);
            assert_int_equal(gpuopt_space_add_int(sp, p->name, &one, 1), GPUOPT_OK);
        } else {
            assert_int_equal(gpuopt_space_add_int(sp, p->name, p->ints, p->count), GPUOPT_OK);
        }
    }
    for (int32_t i = 0; i < s->n_sizes; i++)
        assert_int_equal(gpuopt_space_set_size(sp, s->sizes[i].name, s->sizes[i].value), GPUOPT_OK);
    for (int32_t i = 0; i < s->n_constraints; i++)
        assert_int_equal(gpuopt_space_add_constraint(sp, s->constraints[i]), GPUOPT_OK);
    assert_int_equal(gpuopt_space_count(sp, &raw, &legal), GPUOPT_OK);
    gpuopt_space_destroy(sp);
    return legal;
}

/* The CUDA spec of sgemm.cu (tools/gpu-check.sh runs it on a GPU): a CUDA
 * kernel with a CUDA reference, a GPU-sized space whose default is legal. */
static void sgemm_cuda_example_loads_with_a_cuda_reference_and_a_legal_default(void **state)
{
    (void)state;
    char err[512];
    tune_spec *s = tune_spec_load(GPO_EXAMPLES_DIR "/sgemm_cuda.json", err, sizeof err);
    if (!s)
        fail_msg("%s", err);
    assert_int_equal(s->language, GPUOPT_LANG_CUDA);
    assert_string_equal(s->source_file, "sgemm.cu");
    assert_string_equal(s->entry, "sgemm");
    assert_non_null(strstr(s->source, "__global__"));
    assert_string_equal(s->ref_file, "sgemm_ref.cu");
    assert_string_equal(s->ref_entry, "sgemm_ref");
    assert_non_null(strstr(s->ref_source, "extern \"C\" __global__ void sgemm_ref"));
    assert_int_equal(s->n_args, 8);
    assert_int_equal(s->n_defaults, 8);
    char sizes[64];
    tune_spec_sizes_text(s, sizes, sizeof sizes);
    assert_string_equal(sizes, "M=2048 N=2048 K=2048");
    /* 2,916 raw configurations, 1,476 legal (the count examples/tuning/
     * README.md gives), the default among them. */
    assert_int_equal(legal_count(s, 0), 1476);
    assert_int_equal(legal_count(s, 1), 1);
    tune_spec_free(s);
}

static void stencil_example_loads_with_defaults_filled_in(void **state)
{
    (void)state;
    char err[512];
    tune_spec *s = tune_spec_load(GPO_EXAMPLES_DIR "/stencil.json", err, sizeof err);
    assert_non_null(s);
    assert_string_equal(s->entry, "conv2d");
    assert_int_equal(s->language, GPUOPT_LANG_OPENCL_C); /* the default */
    assert_string_equal(s->build_options, "");
    const ts_param *fs = param(s, "FS");
    assert_non_null(fs);
    assert_int_equal(fs->count, 1);
    assert_string_equal(s->ref_options, "-DFS=5");
    assert_string_equal(s->args[3].count, "25"); /* an integer becomes an expression */
    assert_false(s->has_timing);                 /* the library's defaults */
    assert_true(s->warmup_ms == 5 && s->repeat_ms == 50);
    assert_int_equal(s->max_evaluations, 0);
    tune_spec_free(s);
}

/* A minimal valid spec; the error cases below replace one piece of it. */
#define KERNEL                                                                                     \
    "\"kernel\": {\"source\": \"__kernel void k(__global float *x) {}\", \"entry\": \"k\"}"
#define PARAMS "\"parameters\": {\"T\": [1, 2]}"
#define GEOM "\"geometry\": {\"global\": [\"N\"], \"local\": [\"T\"]}"
#define SIZES "\"sizes\": {\"N\": 64}"
#define ARGS "\"arguments\": [{\"buffer\": \"float\", \"size\": \"N\", \"output\": true}]"

static tune_spec *parse(const char *text, char *err, size_t cap)
{
    return tune_spec_parse(text, "t.json", GPO_EXAMPLES_DIR, err, cap);
}

static void minimal_spec_loads(void **state)
{
    (void)state;
    char err[512];
    tune_spec *s = parse("{" KERNEL "," PARAMS "," GEOM "," SIZES "," ARGS "}", err, sizeof err);
    if (!s)
        fail_msg("%s", err);
    assert_string_equal(s->name, "t");
    assert_int_equal(s->strategy, GPUOPT_STRATEGY_AUTO);
    assert_false(s->has_tolerance);
    assert_true(s->timeout_s < 0); /* the library's default */
    assert_null(s->ref_source);
    assert_int_equal(s->n_ref_data, 0);
    tune_spec_free(s);
}

/* Each malformed spec: the message must hold every fragment. */
static void malformed_specs_name_the_path_the_value_and_what_is_accepted(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *want[3];
    } cases[] = {
        {"[1, 2]", {"t.json: (top level): [1,2] is not accepted", "one JSON object"}},
        {"{\"kernel\": ", {"t.json: not valid JSON at line 1"}},
        {"{\n  \"x\": 1,\n  oops\n}", {"line 3"}},
        {"{" PARAMS "," GEOM "," ARGS "}", {"t.json: kernel: missing"}},
        {"{\"kernel\": {\"file\": \"missing.cl\", \"entry\": \"k\"}," PARAMS "," GEOM "," ARGS "}",
         {"kernel.file: \"missing.cl\" is not accepted", "cannot be opened", "missing.cl"}},
        {"{\"kernel\": {\"source\": \"x\", \"entry\": \"2k\"}," PARAMS "," GEOM "," ARGS "}",
         {"kernel.entry: \"2k\" is not accepted", "C identifier"}},
        {"{\"kernel\": {\"source\": \"x\", \"entry\": \"k\", \"language\": \"glsl\"}," PARAMS
         "," GEOM "," ARGS "}",
         {"kernel.language: \"glsl\" is not accepted", "accepted: \"opencl-c\""}},
        {"{\"kernel\": {\"source\": \"x\", \"entry\": \"k\", \"optimize\": 1}," PARAMS "," GEOM
         "," ARGS "}",
         {"kernel.optimize: unknown key", "accepted: file, source, entry"}},
        {"{" KERNEL ", \"parameters\": {}," GEOM "," ARGS "}",
         {"parameters: {} is not accepted", "non-empty object"}},
        {"{" KERNEL ", \"parameters\": {\"T\": [1, \"a\"]}," GEOM "," ARGS "}",
         {"parameters.T[1]: \"a\" is not accepted", "must be an integer"}},
        {"{" KERNEL ", \"parameters\": {\"T\": [1], \"U\": [2], \"T\": [2]}," GEOM "," ARGS "}",
         {"t.json: parameters.T: the key is given twice"}},
        {"{" KERNEL "," PARAMS "," GEOM "," ARGS ", \"tolerance\": {\"abs\": 1, \"abs\": 2}}",
         {"tolerance.abs: the key is given twice"}},
        {"{" KERNEL ", \"parameters\": {\"T\": [4, 4]}," GEOM "," ARGS "}",
         {"parameters.T[1]: 4 is not accepted", "duplicate"}},
        {"{" KERNEL ", \"parameters\": {\"T\": [1.5]}," GEOM "," ARGS "}",
         {"parameters.T[0]: 1.5 is not accepted"}},
        {"{" KERNEL ", \"parameters\": {\"my-tile\": [1]}," GEOM "," ARGS "}",
         {"parameters.my-tile", "C identifier"}},
        {"{" KERNEL ", \"parameters\": {\"S\": [\"on\", \"o n\"]}," GEOM "," ARGS "}",
         {"parameters.S[1]", "without spaces"}},
        {"{" KERNEL "," PARAMS ", \"constraints\": [\"T > 0\", 3]," GEOM "," ARGS "}",
         {"constraints[1]: 3 is not accepted", "expression string"}},
        {"{" KERNEL "," PARAMS ", \"sizes\": {\"N\": -1}," GEOM "," ARGS "}",
         {"sizes.N: -1 is not accepted", "non-negative integer"}},
        {"{" KERNEL "," PARAMS ", \"sizes\": {\"T\": 1}," GEOM "," ARGS "}",
         {"sizes.T", "same name"}},
        {"{" KERNEL "," PARAMS "," ARGS "}", {"geometry: missing"}},
        {"{" KERNEL "," PARAMS ", \"geometry\": {\"global\": []}," ARGS "}",
         {"geometry.global: [] is not accepted", "1 to 3 expressions"}},
        {"{" KERNEL "," PARAMS
         ", \"geometry\": {\"global\": [\"N\", \"N\"], \"local\": [\"T\"]}," ARGS "}",
         {"geometry.local: [\"T\"] is not accepted", "as many dimensions as \"global\" (2)"}},
        {"{" KERNEL "," PARAMS ", \"geometry\": {\"global\": [1.5]}," ARGS "}",
         {"geometry.global[0]: 1.5 is not accepted", "expression"}},
        {"{" KERNEL "," PARAMS "," GEOM "}", {"arguments: missing"}},
        {"{" KERNEL "," PARAMS "," GEOM ", \"arguments\": [{\"buffer\": \"float\", \"size\": "
         "\"N\"}]}",
         {"arguments: no buffer has \"output\": true"}},
        {"{" KERNEL "," PARAMS "," GEOM ", \"arguments\": [{\"buffer\": \"float\", \"size\": "
         "\"N\", \"output\": true}, {\"buffer\": \"half\", \"size\": \"N\"}]}",
         {"arguments[1].buffer: \"half\" is not accepted", "accepted: float, double, int"}},
        {"{" KERNEL "," PARAMS "," GEOM ", \"arguments\": [{\"buffer\": \"float\", \"size\": "
         "\"N\", \"output\": true}, {\"buffer\": \"float\", \"size\": 12.5}]}",
         {"arguments[1].size: 12.5 is not accepted", "such as \"M * K\""}},
        {"{" KERNEL "," PARAMS "," GEOM ", \"arguments\": [{\"buffer\": \"float\", \"size\": "
         "\"N\", \"output\": \"yes\"}]}",
         {"arguments[0].output: \"yes\" is not accepted", "true or false"}},
        {"{" KERNEL "," PARAMS "," GEOM ", \"arguments\": [{\"buffer\": \"float\", \"size\": "
         "\"N\", \"output\": true, \"init\": \"ones\"}]}",
         {"arguments[0].init: \"ones\" is not accepted", "\"random\", \"zeros\""}},
        {"{" KERNEL "," PARAMS "," GEOM ", \"arguments\": [{\"buffer\": \"int\", \"size\": "
         "\"N\", \"output\": true, \"init\": {\"data\": [1, 2.5]}}]}",
         {"arguments[0].init.data[1]: 2.5 is not accepted", "integer"}},
        {"{" KERNEL "," PARAMS "," GEOM ", \"arguments\": [{\"buffer\": \"float\", \"size\": "
         "\"N\", \"output\": true}, {\"scalar\": \"int\", \"value\": 1.5}]}",
         {"arguments[1].value: 1.5 is not accepted", "an integer or an expression"}},
        {"{" KERNEL "," PARAMS "," GEOM ", \"arguments\": [{\"buffer\": \"float\", \"size\": "
         "\"N\", \"output\": true}, {\"scalar\": \"int\", \"buffer\": \"int\"}]}",
         {"arguments[1]: give exactly one of"}},
        {"{" KERNEL "," PARAMS "," GEOM "," ARGS ", \"reference\": {\"data\": [{\"argument\": 3, "
         "\"data\": [1]}]}}",
         {"reference.data[0].argument: 3 is not accepted", "\"output\": true"}},
        {"{" KERNEL "," PARAMS "," GEOM "," ARGS ", \"reference\": {\"source\": \"x\", \"entry\": "
         "\"r\"}}",
         {"reference.global: missing"}},
        {"{" KERNEL "," PARAMS "," GEOM "," ARGS ", \"tolerance\": {\"abs\": -1}}",
         {"tolerance.abs: -1 is not accepted", ">= 0"}},
        {"{" KERNEL "," PARAMS "," GEOM "," ARGS ", \"timing\": {\"min_runs\": 5, \"max_runs\": "
         "2}}",
         {"timing.max_runs: 2 is not accepted", "timing.min_runs (5)"}},
        {"{" KERNEL "," PARAMS "," GEOM "," ARGS ", \"timing\": {\"timeout_s\": -2}}",
         {"timing.timeout_s: -2 is not accepted", ">= 0"}},
        {"{" KERNEL "," PARAMS "," GEOM "," ARGS ", \"search\": {\"strategy\": \"greedy\"}}",
         {"search.strategy: \"greedy\" is not accepted", "auto, exhaustive, random, annealing"}},
        {"{" KERNEL "," PARAMS "," GEOM "," ARGS ", \"search\": {\"seed\": -3}}",
         {"search.seed: -3 is not accepted"}},
        {"{" KERNEL "," PARAMS "," GEOM "," ARGS ", \"default\": {\"T\": 3}}",
         {"default.T: 3 is not accepted", "values of parameters.T"}},
        {"{" KERNEL ", \"parameters\": {\"T\": [1], \"U\": [2]}," GEOM "," ARGS
         ", \"default\": {\"T\": 1}}",
         {"default: parameter U has no value"}},
        {"{" KERNEL "," PARAMS "," GEOM "," ARGS ", \"tolerence\": {}}",
         {"t.json: tolerence: unknown key", "tolerance"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char err[1024] = "";
        tune_spec *s = parse(cases[i].text, err, sizeof err);
        if (s) {
            tune_spec_free(s);
            fail_msg("case %zu was accepted: %s", i, cases[i].text);
        }
        for (size_t k = 0; k < 3 && cases[i].want[k]; k++)
            if (!strstr(err, cases[i].want[k]))
                fail_msg("case %zu: '%s' not in the message: %s", i, cases[i].want[k], err);
    }
}

/* A "default" object that names a parameter twice (cJSON keeps both keys)
 * is refused; it once wrote past the end of the defaults array. */
static void default_naming_a_parameter_twice_is_refused(void **state)
{
    (void)state;
    char err[512] = "";
    tune_spec *s = parse("{" KERNEL "," PARAMS "," GEOM "," SIZES "," ARGS
                         ", \"default\": {\"T\": 1, \"T\": 2, \"T\": 1}}",
                         err, sizeof err);
    if (s) {
        tune_spec_free(s);
        fail_msg("a default with a duplicate key was accepted");
    }
    assert_non_null(strstr(err, "t.json: default.T"));
    assert_non_null(strstr(err, "given twice"));
}

static void comments_are_accepted_at_every_level(void **state)
{
    (void)state;
    char err[512];
    tune_spec *s = parse("{\"comment\": \"top\", \"kernel\": {\"comment\": [\"a\", \"b\"], "
                         "\"source\": \"x\", \"entry\": \"k\"}," PARAMS "," GEOM "," SIZES
                         ", \"arguments\": [{\"comment\": \"C\", \"buffer\": \"float\", "
                         "\"size\": \"N\", \"output\": true}]}",
                         err, sizeof err);
    if (!s)
        fail_msg("%s", err);
    tune_spec_free(s);
}

static void buffers_take_inline_and_file_data(void **state)
{
    (void)state;
    char err[512];
    tune_spec *s = parse("{" KERNEL "," PARAMS "," GEOM "," SIZES
                         ", \"arguments\": [{\"buffer\": \"int\", \"size\": 3, \"output\": true, "
                         "\"init\": {\"data\": [1, -2, 3]}}, {\"buffer\": \"double\", \"size\": "
                         "\"N\", \"init\": {\"constant\": 0.5}}, {\"scalar\": \"long\", "
                         "\"value\": -7}], \"reference\": {\"data\": [{\"argument\": 0, \"data\": "
                         "[1, 2, 3]}]}}",
                         err, sizeof err);
    if (!s)
        fail_msg("%s", err);
    assert_int_equal(s->args[0].init, GPUOPT_INIT_DATA);
    assert_int_equal(s->args[0].data_bytes, 12);
    int32_t v[3];
    memcpy(v, s->args[0].data, sizeof v);
    assert_int_equal(v[1], -2);
    assert_int_equal(s->args[1].init, GPUOPT_INIT_CONSTANT);
    assert_true(s->args[1].constant == 0.5);
    assert_string_equal(s->args[2].expr, "0 - 7");
    assert_int_equal(s->n_ref_data, 1);
    assert_int_equal(s->ref_data[0].bytes, 12);
    tune_spec_free(s);
    /* A data file whose length is not a whole number of elements. */
    s = parse("{" KERNEL "," PARAMS "," GEOM "," SIZES
              ", \"arguments\": [{\"buffer\": \"double\", \"size\": \"N\", \"output\": true, "
              "\"init\": {\"file\": \"sgemm_ref.cl\"}}]}",
              err, sizeof err);
    if (s) {
        tune_spec_free(s);
        fail_msg("a file of the wrong length was accepted");
    }
    assert_non_null(strstr(err, "arguments[0].init.file"));
    assert_non_null(strstr(err, "not a positive multiple of 8"));
}

/* Files a spec names are regular files of bounded size: "/dev/zero" as a
 * data file once grew without end, a FIFO blocked the open forever; both
 * are refused at once, and so is a spec file that is a FIFO. */
static void named_files_must_be_regular_and_within_their_limits(void **state)
{
    (void)state;
    char dir[512], fifo[600], big[600], err[512];
    snprintf(dir, sizeof dir, "%s/tests/spec-kinds", GPO_BUILD_DIR);
    mkdir(dir, 0755);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(big, sizeof big, "%s/big.cl", dir);
    FILE *f = fopen(big, "w");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (16 << 20) + 1), 0); /* sparse */
    fclose(f);
    char text[2048];
    static const struct {
        const char *file; /* NULL: the FIFO; "" the big file */
        int data;         /* 1: a buffer's data file, 0: the kernel's source */
        const char *why;
    } cases[] = {{"/dev/zero", 1, "not a regular file (a character device)"},
                 {NULL, 1, "not a regular file (a FIFO)"},
                 {NULL, 0, "not a regular file (a FIFO)"},
                 {"", 0, "larger than the limit of 16 MiB"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *name = !cases[i].file ? fifo : *cases[i].file ? cases[i].file : big;
        if (cases[i].data)
            snprintf(text, sizeof text,
                     "{" KERNEL "," PARAMS "," GEOM "," SIZES
                     ", \"arguments\": [{\"buffer\": \"float\", \"size\": \"N\", "
                     "\"output\": true, \"init\": {\"file\": \"%s\"}}]}",
                     name);
        else
            snprintf(text, sizeof text,
                     "{\"kernel\": {\"file\": \"%s\", \"entry\": \"k\"}," PARAMS "," GEOM "," SIZES
                     "," ARGS "}",
                     name);
        tune_spec *s = parse(text, err, sizeof err);
        if (s) {
            tune_spec_free(s);
            fail_msg("case %zu: %s was accepted", i, name);
        }
        if (!strstr(err, cases[i].why) ||
            !strstr(err, cases[i].data ? "arguments[0].init.file" : "kernel.file"))
            fail_msg("case %zu: want '%s' in: %s", i, cases[i].why, err);
    }
    assert_null(tune_spec_load(fifo, err, sizeof err));
    assert_non_null(strstr(err, "not a regular file (a FIFO)"));
    unlink(fifo);
    unlink(big);
}

static void size_overrides_accept_known_names_only(void **state)
{
    (void)state;
    char err[512];
    tune_spec *s = tune_spec_load(GPO_EXAMPLES_DIR "/sgemm.json", err, sizeof err);
    assert_non_null(s);
    assert_int_equal(tune_spec_set_size(s, "N=1024", err, sizeof err), 0);
    assert_int_equal(s->sizes[1].value, 1024);
    assert_int_equal(tune_spec_set_size(s, "Q=1", err, sizeof err), -1);
    assert_non_null(strstr(err, "has no size 'Q'; its sizes: M, N, K"));
    assert_int_equal(tune_spec_set_size(s, "N=-4", err, sizeof err), -1);
    assert_non_null(strstr(err, "non-negative integer"));
    assert_int_equal(tune_spec_set_size(s, "N=", err, sizeof err), -1);
    assert_int_equal(tune_spec_set_size(s, "=4", err, sizeof err), -1);
    assert_non_null(strstr(err, "NAME=VALUE"));
    tune_spec_free(s);
}

/* NULL arguments are the callers' bugs (assert contracts); what a user
 * can give, a missing file or an unknown name, is refused in words. */
static void missing_inputs_and_unknown_names_are_refused(void **state)
{
    (void)state;
    char err[512];
    assert_null(tune_spec_load("/nonexistent/spec.json", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/spec.json: cannot be opened"));
    tune_spec_free(NULL);
    assert_int_equal(tune_spec_strategy_parse(NULL), -1);
    assert_int_equal(tune_spec_strategy_parse("model"), GPUOPT_STRATEGY_MODEL);
    assert_string_equal(tune_spec_strategy_name(GPUOPT_STRATEGY_RANDOM), "random");
    assert_string_equal(tune_spec_strategy_name(99), "?");
    assert_int_equal(tune_spec_type_parse("f64"), GPUOPT_ELEM_F64);
    assert_int_equal(tune_spec_type_parse("half"), -1);
    assert_string_equal(tune_spec_type_name(GPUOPT_ELEM_U32), "uint");
    assert_string_equal(tune_spec_type_name(0), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sgemm_example_loads_every_key),
        cmocka_unit_test(sgemm_cuda_example_loads_with_a_cuda_reference_and_a_legal_default),
        cmocka_unit_test(stencil_example_loads_with_defaults_filled_in),
        cmocka_unit_test(minimal_spec_loads),
        cmocka_unit_test(malformed_specs_name_the_path_the_value_and_what_is_accepted),
        cmocka_unit_test(default_naming_a_parameter_twice_is_refused),
        cmocka_unit_test(comments_are_accepted_at_every_level),
        cmocka_unit_test(buffers_take_inline_and_file_data),
        cmocka_unit_test(named_files_must_be_regular_and_within_their_limits),
        cmocka_unit_test(size_overrides_accept_known_names_only),
        cmocka_unit_test(missing_inputs_and_unknown_names_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
