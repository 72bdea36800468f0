/* The tuner with a kernel subject on PoCL's CPU device, for real: a
 * planted landscape (one configuration far faster than the rest, one
 * faster still but wrong, one that does not build), constraints and device
 * limits, argument kinds, resets, launch failures, program reuse, builds
 * overlapped on the worker thread, and the JSON and CSV exports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "test_cache_util.h"
#include "test_tuner_util.h"
#include "tune/progcache.h"
#include "tune/subject_kernel.h"
#include "tune/tuner.h"

static gpuopt_context *ctx;
static gpuopt_device *dev;
static gpuopt_result *planted; /* one exhaustive run of the planted kernel, shared */

static int group_setup(void **state)
{
    (void)state;
    if (tt_context("opencl", tc_dir("tuner"), &ctx, &dev) != 0)
        return -1;
    gpuopt_space *s = tt_planted_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_OFF);
    gpuopt_status st = t ? gpuopt_tuner_run(t, &planted) : GPUOPT_ERR_INVALID_ARGUMENT;
    if (st != GPUOPT_OK)
        fprintf(stderr, "planted run: %s: %s\n", gpuopt_status_name(st), gpuopt_last_error());
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    return st == GPUOPT_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
    gpuopt_result_destroy(planted);
    gpuopt_context_destroy(ctx);
    return tc_cleanup(state);
}

static gpuopt_candidate cand_at(const gpuopt_result *r, int i)
{
    gpuopt_candidate c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    assert_int_equal(gpuopt_result_at(r, i, &c), GPUOPT_OK);
    return c;
}

static void exhaustive_search_finds_the_planted_fast_configuration(void **state)
{
    (void)state;
    int32_t n = 0;
    assert_int_equal(gpuopt_result_count(planted, &n), GPUOPT_OK);
    assert_int_equal(n, 12); /* every legal configuration, once */
    assert_string_equal(tt_best(planted), "A=3 B=2");
    gpuopt_candidate best = cand_at(planted, tt_find(planted, "A=3 B=2"));
    assert_int_equal(best.status, GPUOPT_CANDIDATE_OK);
    assert_true(best.runs >= 3);
    assert_true(best.median_ns > 0 && best.p20_ns <= best.median_ns &&
                best.median_ns <= best.p80_ns && best.min_ns <= best.p20_ns);
    assert_true(best.compile_ms > 0);
    for (int i = 0; i < n; i++) {
        gpuopt_candidate c = cand_at(planted, i);
        if (i != tt_find(planted, "A=3 B=2") && c.status == GPUOPT_CANDIDATE_OK)
            assert_true(c.median_ns > best.median_ns);
    }
    int32_t origin = -1;
    assert_int_equal(gpuopt_result_get_origin(planted, &origin), GPUOPT_OK);
    assert_int_equal(origin, GPUOPT_ORIGIN_TUNED);
}

static void planted_wrong_answer_never_wins_and_names_the_first_mismatch(void **state)
{
    (void)state;
    int i = tt_find(planted, "A=4 B=4");
    assert_true(i >= 0);
    gpuopt_candidate c = cand_at(planted, i);
    assert_int_equal(c.status, GPUOPT_CANDIDATE_WRONG_RESULT);
    assert_int_equal(c.runs, 0);
    assert_true(c.median_ns < 0);
    assert_non_null(strstr(c.message, "output argument 1: element 0 is 0, expected"));
    assert_non_null(strstr(c.message, "1024 of 1024 elements differ"));
}

static void build_failure_is_recorded_with_its_log_and_the_run_goes_on(void **state)
{
    (void)state;
    int i = tt_find(planted, "A=1 B=4");
    assert_int_equal(i, 2); /* walk order: A outermost */
    gpuopt_candidate c = cand_at(planted, i);
    assert_int_equal(c.status, GPUOPT_CANDIDATE_COMPILE_FAILED);
    assert_non_null(strstr(c.message, "planted_build_failure"));
    assert_true(c.compile_ms >= 0);
    assert_true(tt_status_of(planted, "A=2 B=1") >= 0); /* later ones still ran */
}

static void every_other_candidate_is_valid_and_slow_ones_are_pruned(void **state)
{
    (void)state;
    int32_t n = 0;
    gpuopt_result_count(planted, &n);
    int pruned = 0;
    for (int i = 0; i < n; i++) {
        gpuopt_candidate c = cand_at(planted, i);
        if (i == tt_find(planted, "A=4 B=4") || i == tt_find(planted, "A=1 B=4"))
            continue;
        assert_true(c.status == GPUOPT_CANDIDATE_OK || c.status == GPUOPT_CANDIDATE_PRUNED);
        pruned += c.status == GPUOPT_CANDIDATE_PRUNED;
        if (c.status == GPUOPT_CANDIDATE_PRUNED)
            assert_non_null(strstr(c.message, "the best"));
    }
    /* Found in 8th place, the planted one is ~1000x ahead of the four after it. */
    assert_true(pruned >= 3);
}

static void json_holds_the_settings_and_every_candidate(void **state)
{
    (void)state;
    char *json = NULL;
    assert_int_equal(gpuopt_result_to_json(planted, &json), GPUOPT_OK);
    cJSON *o = cJSON_Parse(json);
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "subject")->valuestring, "kernel");
    assert_string_equal(cJSON_GetObjectItem(o, "backend")->valuestring, "opencl");
    assert_string_equal(cJSON_GetObjectItem(o, "strategy")->valuestring, "exhaustive");
    assert_string_equal(cJSON_GetObjectItem(o, "strategy_requested")->valuestring, "auto");
    assert_string_equal(cJSON_GetObjectItem(o, "seed")->valuestring, "0");
    assert_string_equal(cJSON_GetObjectItem(o, "stop_reason")->valuestring, "space exhausted");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(o, "validated")));
    assert_int_equal(cJSON_GetObjectItem(o, "legal")->valueint, 12);
    assert_true(cJSON_GetObjectItem(o, "wall_s")->valuedouble > 0);
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "timing"), "timeout_s"));
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "budget"), "max_evaluations"));
    const cJSON *cands = cJSON_GetObjectItem(o, "candidates");
    assert_int_equal(cJSON_GetArraySize(cands), 12);
    const cJSON *best = cJSON_GetArrayItem(cands, cJSON_GetObjectItem(o, "best")->valueint);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(best, "params"), "A")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(best, "params"), "B")->valueint, 2);
    assert_string_equal(cJSON_GetObjectItem(best, "status")->valuestring, "ok");
    const cJSON *c2 = cJSON_GetArrayItem(cands, 2);
    assert_string_equal(cJSON_GetObjectItem(c2, "status")->valuestring, "compile_failed");
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(o, "final")) >= 2);
    assert_string_equal(cJSON_GetObjectItem(o, "workload")->valuestring,
                        "N=1024;types=f32,f32,i32");
    cJSON_Delete(o);
    gpuopt_free(json);
}

static void csv_has_a_row_per_candidate_and_a_column_per_parameter(void **state)
{
    (void)state;
    char *csv = NULL;
    assert_int_equal(gpuopt_result_to_csv(planted, &csv), GPUOPT_OK);
    assert_memory_equal(csv, "index,A,B,status,runs,median_ns,", 31);
    int rows = 0, quoted_rows = 0;
    for (const char *p = csv; *p; p++)
        rows += *p == '\n';
    /* The build log (quoted, with newlines inside) adds lines. */
    assert_true(rows >= 13);
    assert_non_null(strstr(csv, "\n2,1,4,compile_failed,0,"));
    assert_non_null(strstr(csv, ",wrong_result,0,"));
    assert_non_null(strstr(csv, "\"build failed:"));
    (void)quoted_rows;
    gpuopt_free(csv);
}

static void constraints_and_device_limits_prune_exactly_and_cost_nothing(void **state)
{
    (void)state;
    gpuopt_space *s = tt_planted_space();
    static const int64_t l[] = {64, 8192};
    assert_int_equal(gpuopt_space_add_int(s, "L", l, 2), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(s, "A * B <= 8"), GPUOPT_OK);
    uint64_t raw = 0, legal = 0;
    assert_int_equal(gpuopt_space_count(s, &raw, &legal), GPUOPT_OK);
    assert_int_equal(raw, 24);
    assert_int_equal(legal, 20);
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_OFF);
    assert_non_null(t);
    /* PoCL: at most 4096 work-items per group, 2 MiB of local memory. */
    gpuopt_kernel_desc k = tt_planted_kernel();
    k.local[0] = "L";
    k.local_memory = "L * 512";
    assert_int_equal(gpuopt_tuner_set_kernel(t, &k), GPUOPT_OK);
    tt_count_install(t);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    int32_t n = 0;
    gpuopt_result_count(r, &n);
    assert_int_equal(n, 10); /* L = 64 and A * B <= 8 */
    for (int i = 0; i < n; i++) {
        gpuopt_candidate c = cand_at(r, i);
        int64_t a = 0, b = 0, lv = 0;
        gpuopt_point_get_int(c.point, "A", &a);
        gpuopt_point_get_int(c.point, "B", &b);
        gpuopt_point_get_int(c.point, "L", &lv);
        assert_true(a * b <= 8);
        assert_int_equal(lv, 64);
    }
    /* 10 candidates and the reference, and nothing for the 14 pruned. */
    assert_true(tt_count.build <= 11);
    assert_string_equal(tt_best(r), "A=3 B=2 L=64");
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

/* The settings of these tests' own tuners: short timing, no cache. */
static gpuopt_tuner_settings quick(const gpuopt_tuner *t)
{
    gpuopt_tuner_settings s = tt_settings(t);
    s.warmup_ms = 0.2;
    s.repeat_ms = 1;
    s.min_runs = 3;
    s.max_runs = 8;
    s.cache_mode = GPUOPT_CACHE_OFF;
    return s;
}

/* Accumulates into its output, so a missing reset shows as a wrong answer
 * in the next candidate; X == 2 declares an argument nobody sets. */
static const char *const accumulate_source =
    "__kernel void acc(__global const float *a, __global float *out\n"
    "#if X == 2\n"
    "                  , int unset\n"
    "#endif\n"
    "                 )\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    out[i] += a[i] * (float)X / (float)X;\n"
    "}\n";

static void outputs_are_reset_before_every_run_and_reference_data_checks_them(void **state)
{
    (void)state;
    gpuopt_space *s = NULL;
    static const int64_t x[] = {1, 2, 3, 4};
    assert_int_equal(gpuopt_space_create(&s), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "X", x, 4), GPUOPT_OK);
    assert_int_equal(gpuopt_space_set_size(s, "N", 256), GPUOPT_OK);
    gpuopt_tuner *t = NULL;
    assert_int_equal(gpuopt_tuner_create(ctx, dev, s, &t), GPUOPT_OK);
    float a[256], want[256];
    for (int i = 0; i < 256; i++) {
        a[i] = (float)i / 8.0f;
        want[i] = 1.5f + a[i];
    }
    gpuopt_kernel_desc k = {.struct_size = sizeof k};
    k.source = accumulate_source;
    k.entry = "acc";
    k.language = GPUOPT_LANG_OPENCL_C;
    k.global[0] = "N";
    assert_int_equal(gpuopt_tuner_set_kernel(t, &k), GPUOPT_OK);
    gpuopt_buffer_desc in = {.struct_size = sizeof in}, out = {.struct_size = sizeof out};
    in.type = out.type = GPUOPT_ELEM_F32;
    in.count = out.count = "N";
    in.init = GPUOPT_INIT_DATA;
    in.data = a;
    out.init = GPUOPT_INIT_CONSTANT;
    out.constant = 1.5;
    out.is_output = 1;
    assert_int_equal(gpuopt_tuner_set_buffer(t, 0, &in), GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_set_buffer(t, 1, &out), GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_set_reference_data(t, 1, want, sizeof want), GPUOPT_OK);
    gpuopt_tuner_settings set = quick(t);
    set.abs_tol = set.rel_tol = 0;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    /* Checked, so correct: each timed in full or pruned as slower. */
    for (int x = 1; x <= 4; x += 1 + (x == 1)) {
        char name[16];
        snprintf(name, sizeof name, "X=%d", x);
        int s = tt_status_of(r, name);
        assert_true(s == GPUOPT_CANDIDATE_OK || s == GPUOPT_CANDIDATE_PRUNED);
    }
    gpuopt_candidate c = cand_at(r, tt_find(r, "X=2"));
    assert_int_equal(c.status, GPUOPT_CANDIDATE_LAUNCH_FAILED);
    assert_non_null(strstr(c.message, "launch failed"));
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

static const char *const scaled_source = "__kernel void scaled(__global float *buf, int count)\n"
                                         "{\n"
                                         "    int i = get_global_id(0);\n"
                                         "    for (int k = i; k < count; k += get_global_size(0))\n"
                                         "        buf[k] = (float)k;\n"
                                         "}\n";

static void buffers_and_scalars_sized_by_parameters_are_made_per_candidate(void **state)
{
    (void)state;
    gpuopt_space *s = NULL;
    static const int64_t x[] = {1, 4, 3000000};
    assert_int_equal(gpuopt_space_create(&s), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "X", x, 3), GPUOPT_OK);
    assert_int_equal(gpuopt_space_set_size(s, "N", 512), GPUOPT_OK);
    gpuopt_tuner *t = NULL;
    assert_int_equal(gpuopt_tuner_create(ctx, dev, s, &t), GPUOPT_OK);
    gpuopt_kernel_desc k = {.struct_size = sizeof k};
    k.source = scaled_source;
    k.entry = "scaled";
    k.language = GPUOPT_LANG_OPENCL_C;
    k.build_options = "";
    k.global[0] = "N";
    assert_int_equal(gpuopt_tuner_set_kernel(t, &k), GPUOPT_OK);
    /* X = 3000000: its count scalar (3e9) does not fit an int. */
    gpuopt_buffer_desc buf = {.struct_size = sizeof buf};
    buf.type = GPUOPT_ELEM_F32;
    buf.count = "N * min(X, 4)";
    buf.init = GPUOPT_INIT_ZEROS;
    buf.is_output = 1;
    assert_int_equal(gpuopt_tuner_set_buffer(t, 0, &buf), GPUOPT_OK);
    gpuopt_scalar_desc count = {.struct_size = sizeof count};
    count.type = GPUOPT_ELEM_I32;
    count.expression = "X > 4 ? X * 1000 : N * X";
    assert_int_equal(gpuopt_tuner_set_scalar(t, 1, &count), GPUOPT_OK);
    gpuopt_tuner_settings set = quick(t);
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    tt_count_install(t);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    gpuopt_candidate c = cand_at(r, tt_find(r, "X=3000000"));
    assert_int_equal(c.status, GPUOPT_CANDIDATE_INVALID);
    assert_non_null(strstr(c.message, "outside i32"));
    char *json = NULL;
    assert_int_equal(gpuopt_result_to_json(r, &json), GPUOPT_OK);
    cJSON *o = cJSON_Parse(json);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(o, "validated")));
    cJSON_Delete(o);
    gpuopt_free(json);
    /* No fixed buffer: one per evaluated candidate (X = 3000000's is made
     * before its scalar is refused), one per finalist made ready again
     * (the OK ones, when there are two to compare). */
    int ok = (tt_status_of(r, "X=1") == GPUOPT_CANDIDATE_OK) +
             (tt_status_of(r, "X=4") == GPUOPT_CANDIDATE_OK);
    assert_int_equal(tt_count.buffer_alloc, 3 + (ok == 2 ? 2 : 0));
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

static void a_new_problem_size_reuses_the_compiled_programs(void **state)
{
    (void)state;
    gpuopt_space *s = tt_planted_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_OFF);
    assert_non_null(t);
    gpuopt_result *r = NULL;
    tt_count_install(t);
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    long first = tt_count.build;
    assert_int_equal(first, 13); /* 12 candidates and the reference */
    gpuopt_result_destroy(r);
    assert_int_equal(gpuopt_tuner_set_size(t, "N", 2048), GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    assert_int_equal(tt_count.build, first); /* nothing built again */
    assert_string_equal(tt_best(r), "A=3 B=2");
    int32_t n = 0;
    gpuopt_result_count(r, &n);
    for (int i = 0; i < n; i++)
        assert_true(cand_at(r, i).compile_ms < 0);
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

static void builds_overlapped_on_the_worker_give_the_same_answer(void **state)
{
    (void)state;
    gpuopt_space *s = tt_planted_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_OFF);
    assert_non_null(t);
    gpo_tuner_test_overlap(t, 1); /* PoCL is a CPU device: off by default */
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    assert_string_equal(tt_best(r), "A=3 B=2");
    assert_int_equal(tt_status_of(r, "A=1 B=4"), GPUOPT_CANDIDATE_COMPILE_FAILED);
    assert_int_equal(tt_status_of(r, "A=4 B=4"), GPUOPT_CANDIDATE_WRONG_RESULT);
    gpo_progcache_stats ps;
    gpo_progcache_get_stats(gpo_tuner_test_progcache(t), &ps);
    assert_true(gpo_progcache_overlaps(gpo_tuner_test_progcache(t)));
    assert_true(ps.prefetched >= 10);
    assert_int_equal(ps.builds, 13);
    /* Each candidate's build time is still its own. */
    int32_t n = 0;
    gpuopt_result_count(r, &n);
    for (int i = 0; i < n; i++)
        assert_true(cand_at(r, i).compile_ms > 0);
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

static void a_reference_that_does_not_build_stops_the_run_with_its_log(void **state)
{
    (void)state;
    gpuopt_space *s = tt_planted_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_OFF);
    gpuopt_reference_desc ref = {.struct_size = sizeof ref};
    ref.source = "__kernel void reference(void) { oops }";
    ref.entry = "reference";
    ref.global[0] = "N";
    assert_int_equal(gpuopt_tuner_set_reference_kernel(t, &ref), GPUOPT_OK);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_ERR_BUILD);
    assert_null(r);
    assert_non_null(strstr(gpuopt_last_error(), "the reference kernel did not build"));
    assert_non_null(strstr(gpuopt_last_error(), "oops"));
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exhaustive_search_finds_the_planted_fast_configuration),
        cmocka_unit_test(planted_wrong_answer_never_wins_and_names_the_first_mismatch),
        cmocka_unit_test(build_failure_is_recorded_with_its_log_and_the_run_goes_on),
        cmocka_unit_test(every_other_candidate_is_valid_and_slow_ones_are_pruned),
        cmocka_unit_test(json_holds_the_settings_and_every_candidate),
        cmocka_unit_test(csv_has_a_row_per_candidate_and_a_column_per_parameter),
        cmocka_unit_test(constraints_and_device_limits_prune_exactly_and_cost_nothing),
        cmocka_unit_test(outputs_are_reset_before_every_run_and_reference_data_checks_them),
        cmocka_unit_test(buffers_and_scalars_sized_by_parameters_are_made_per_candidate),
        cmocka_unit_test(a_new_problem_size_reuses_the_compiled_programs),
        cmocka_unit_test(builds_overlapped_on_the_worker_give_the_same_answer),
        cmocka_unit_test(a_reference_that_does_not_build_stops_the_run_with_its_log),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
