/* The tuner and its cache, on PoCL for real: a hit builds and runs
 * nothing; every hard-key part misses when it changes; a soft change
 * re-times the stored winner and runner-up (kept, or tuned again when the
 * winner no longer holds); REFRESH and OFF; damaged and newer-schema
 * files are survived. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device.h"
#include "util/strutil.h"
#include "test_cache_util.h"
#include "test_tuner_util.h"
#include "tune/tuner.h"

static gpuopt_context *ctx;
static gpuopt_device *dev;

static int group_setup(void **state)
{
    (void)state;
    return tt_context("opencl", tc_dir("tuner-cache"), &ctx, &dev);
}

static int group_teardown(void **state)
{
    gpuopt_context_destroy(ctx);
    return tc_cleanup(state);
}

/* A small planted space: A in {2, 3}, B = 2 (two candidates). */
static gpuopt_space *small_space(void)
{
    gpuopt_space *s = NULL;
    static const int64_t a[] = {2, 3}, b[] = {2};
    assert_int_equal(gpuopt_space_create(&s), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "A", a, 2), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "B", b, 1), GPUOPT_OK);
    assert_int_equal(gpuopt_space_set_size(s, "N", 1024), GPUOPT_OK);
    return s;
}

/* Runs t: returns its gpuopt_result_origin (-1 on failure), the best in
 * best_text. */
static int run_once(gpuopt_tuner *t, char *best_text)
{
    gpuopt_result *r = NULL;
    gpuopt_status st = gpuopt_tuner_run(t, &r);
    if (st != GPUOPT_OK) {
        fprintf(stderr, "run: %s: %s\n", gpuopt_status_name(st), gpuopt_last_error());
        gpuopt_result_destroy(r);
        return -1;
    }
    int32_t origin = -1;
    gpuopt_result_get_origin(r, &origin);
    if (best_text)
        strcpy(best_text, tt_best(r));
    gpuopt_result_destroy(r);
    return origin;
}

static int count_in(const char *path, const char *needle)
{
    size_t len = 0;
    char *text = tc_read(path, &len);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, needle)); p++)
        n++;
    free(text);
    return n;
}

static void a_hit_builds_and_runs_nothing(void **state)
{
    (void)state;
    gpuopt_space *s = tt_planted_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_USE);
    char best[64];
    assert_int_equal(run_once(t, best), GPUOPT_ORIGIN_TUNED);
    assert_string_equal(best, "A=3 B=2");
    /* The first record of the group's directory, with every candidate. */
    char dir[1024];
    gpo_strlcpy(dir, gpo_tuner_test_cache_file(t), sizeof dir);
    *strrchr(dir, '/') = '\0';
    int entries = 0, cands = 0;
    assert_int_equal(tc_verify(dir, &entries, &cands, NULL), 1);
    assert_int_equal(entries, 1);
    assert_int_equal(cands, 12);
    gpuopt_tuner_destroy(t);

    /* A new tuner: no session, no program; the hit must not make any. */
    t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_USE);
    tt_count_install(t);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    assert_int_equal(tt_count.open + tt_count.build + tt_count.launch + tt_count.buffer_alloc, 0);
    assert_null(gpo_tuner_test_progcache(t));
    int32_t origin = 0, n = 0;
    gpuopt_result_get_origin(r, &origin);
    gpuopt_result_count(r, &n);
    assert_int_equal(origin, GPUOPT_ORIGIN_CACHE_HIT);
    assert_int_equal(n, 2); /* the stored winner and runner-up */
    assert_string_equal(tt_best(r), "A=3 B=2");
    gpuopt_candidate b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    assert_int_equal(gpuopt_result_best(r, &b), GPUOPT_OK);
    assert_true(b.median_ns > 0 && b.runs >= 3);
    gpuopt_result_destroy(r);
    /* Online tuning answers from the same hit at once. */
    const gpuopt_point *c = NULL;
    int32_t done = 0;
    assert_int_equal(gpuopt_tuner_step(t, &c, &done), GPUOPT_OK);
    assert_int_equal(done, 1);
    char *text = NULL;
    gpuopt_point_to_string(c, &text);
    assert_string_equal(text, "A=3 B=2");
    gpuopt_free(text);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

static void every_hard_key_part_misses_when_it_changes(void **state)
{
    (void)state;
    gpuopt_space *s = small_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_USE);
    const int32_t tuned = GPUOPT_ORIGIN_TUNED, hit = GPUOPT_ORIGIN_CACHE_HIT;
    assert_int_equal(run_once(t, NULL), tuned);
    assert_int_equal(run_once(t, NULL), hit);
    /* Build options. */
    gpuopt_kernel_desc k = tt_planted_kernel();
    k.build_options = "-DUNUSED=1";
    assert_int_equal(gpuopt_tuner_set_kernel(t, &k), GPUOPT_OK);
    assert_int_equal(run_once(t, NULL), tuned);
    assert_int_equal(run_once(t, NULL), hit);
    /* Source (a comment is a change). */
    char *src = gpo_asprintf("/* v2 */\n%s", tt_planted_source);
    k.source = src;
    assert_int_equal(gpuopt_tuner_set_kernel(t, &k), GPUOPT_OK);
    free(src);
    assert_int_equal(run_once(t, NULL), tuned);
    /* Problem size. */
    assert_int_equal(gpuopt_tuner_set_size(t, "N", 512), GPUOPT_OK);
    assert_int_equal(run_once(t, NULL), tuned);
    assert_int_equal(run_once(t, NULL), hit);
    /* The user's workload key. */
    gpuopt_tuner_settings set = tt_settings(t);
    set.workload_key = "layout=row-major";
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    assert_int_equal(run_once(t, NULL), tuned);
    /* An argument's type is part of the workload; its init of the subject. */
    gpuopt_buffer_desc b = {.struct_size = sizeof b};
    b.type = GPUOPT_ELEM_F32;
    b.count = "N";
    b.init = GPUOPT_INIT_CONSTANT;
    b.constant = 1;
    assert_int_equal(gpuopt_tuner_set_buffer(t, 0, &b), GPUOPT_OK);
    assert_int_equal(run_once(t, NULL), tuned);
    assert_int_equal(run_once(t, NULL), hit);
    gpuopt_tuner_destroy(t);
    /* The space: one more value. */
    static const int64_t a3[] = {2, 3, 5};
    gpuopt_space *s2 = NULL;
    assert_int_equal(gpuopt_space_create(&s2), GPUOPT_OK);
    gpuopt_space_add_int(s2, "A", a3, 3);
    gpuopt_space_add_int(s2, "B", (const int64_t[]){2}, 1);
    gpuopt_space_set_size(s2, "N", 1024);
    t = tt_planted_tuner(ctx, dev, s2, GPUOPT_CACHE_USE);
    assert_int_equal(run_once(t, NULL), tuned);
    gpuopt_tuner_destroy(t);
    /* The same space declared in another order keeps the key. */
    gpuopt_space *s3 = NULL;
    assert_int_equal(gpuopt_space_create(&s3), GPUOPT_OK);
    gpuopt_space_set_size(s3, "N", 1024);
    gpuopt_space_add_int(s3, "B", (const int64_t[]){2}, 1);
    gpuopt_space_add_int(s3, "A", (const int64_t[]){3, 2}, 2);
    t = tt_planted_tuner(ctx, dev, s3, GPUOPT_CACHE_USE);
    assert_int_equal(run_once(t, NULL), hit);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s3);
    gpuopt_space_destroy(s2);
    gpuopt_space_destroy(s);
}

static void a_soft_change_re_verifies_the_winner_and_runner_up(void **state)
{
    (void)state;
    gpuopt_space *s = small_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_USE);
    gpuopt_tuner_settings set = tt_settings(t);
    set.workload_key = "soft";
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_TUNED);
    char path[1024];
    gpo_strlcpy(path, gpo_tuner_test_cache_file(t), sizeof path);
    gpuopt_tuner_destroy(t);
    t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_USE);
    set = tt_settings(t);
    set.workload_key = "soft";
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    /* "A driver update": the route's driver version changes. */
    char saved[64];
    gpo_route *route = &dev->routes[0];
    gpo_strlcpy(saved, route->info.driver_version, sizeof saved);
    gpo_strlcpy(route->info.driver_version, "99.9-test", sizeof route->info.driver_version);
    tt_count_install(t);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    int32_t origin = 0, n = 0;
    gpuopt_result_get_origin(r, &origin);
    gpuopt_result_count(r, &n);
    assert_int_equal(origin, GPUOPT_ORIGIN_CACHE_VERIFIED);
    assert_int_equal(n, 2);
    assert_string_equal(tt_best(r), "A=3 B=2");
    gpuopt_candidate c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    gpuopt_result_at(r, 1, &c);
    assert_non_null(strstr(c.message, "driver"));
    assert_true(c.runs >= 5); /* re-timed side by side */
    assert_true(tt_count.launch > 0);
    gpuopt_result_destroy(r);
    assert_int_equal(count_in(path, "\"verified\":"), 1);
    assert_int_equal(count_in(path, "99.9-test"), 1); /* adopted by the record */
    /* Adopted: a plain hit now. */
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_CACHE_HIT);
    gpo_strlcpy(route->info.driver_version, saved, sizeof route->info.driver_version);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

static void refresh_tunes_again_and_off_touches_nothing(void **state)
{
    (void)state;
    gpuopt_space *s = small_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_USE);
    gpuopt_tuner_settings set = tt_settings(t);
    set.workload_key = "modes";
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_TUNED);
    const char *path = gpo_tuner_test_cache_file(t);
    int entries = count_in(path, "\"complete\":");
    char *first = tc_read(path, NULL);
    set.cache_mode = GPUOPT_CACHE_REFRESH;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_TUNED);
    /* The new record replaced the old one. */
    char *second = tc_read(path, NULL);
    assert_string_not_equal(first, second);
    free(first);
    free(second);
    assert_int_equal(count_in(path, "\"complete\":"), entries);
    size_t before = 0, after = 0;
    free(tc_read(path, &before));
    set.cache_mode = GPUOPT_CACHE_OFF;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_TUNED);
    free(tc_read(path, &after));
    assert_int_equal(before, after);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

/* ---- callbacks: a winner that fails after a change; damaged files ------- */

static int broken_x = -1;

static gpuopt_status cb_run(const gpuopt_point *c, void *user, double *ns)
{
    (void)user;
    int64_t x = 0;
    gpuopt_point_get_int(c, "X", &x);
    *ns = 1000.0 * (double)x;
    return GPUOPT_OK;
}

static int32_t cb_validate(const gpuopt_point *c, void *user)
{
    (void)user;
    int64_t x = 0;
    gpuopt_point_get_int(c, "X", &x);
    return x != broken_x;
}

static gpuopt_tuner *cb_tuner(gpuopt_context *cctx, gpuopt_device *cdev, const char *key)
{
    gpuopt_space *s = NULL;
    static const int64_t x[] = {1, 2, 3, 4};
    gpuopt_space_create(&s);
    gpuopt_space_add_int(s, "X", x, 4);
    gpuopt_tuner *t = NULL;
    assert_int_equal(gpuopt_tuner_create(cctx, cdev, s, &t), GPUOPT_OK);
    gpuopt_space_destroy(s);
    gpuopt_callback_desc cb = {.struct_size = sizeof cb};
    cb.run = cb_run;
    cb.validate = cb_validate;
    assert_int_equal(gpuopt_tuner_set_callback(t, &cb), GPUOPT_OK);
    gpuopt_tuner_settings set = tt_settings(t);
    set.warmup_ms = 0.01;
    set.repeat_ms = 0.05;
    set.min_runs = 3;
    set.max_runs = 5;
    set.workload_key = key;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    return t;
}

static void a_winner_that_no_longer_holds_is_tuned_again(void **state)
{
    (void)state;
    gpuopt_context *cctx = NULL;
    gpuopt_device *cdev = NULL;
    assert_int_equal(tt_context("cpu", tc_dir("tuner-cache-cpu"), &cctx, &cdev), 0);
    gpuopt_tuner *t = cb_tuner(cctx, cdev, "verify-fails");
    char best[64];
    broken_x = -1;
    assert_int_equal(run_once(t, best), GPUOPT_ORIGIN_TUNED);
    assert_string_equal(best, "X=1");
    char path[1024];
    gpo_strlcpy(path, gpo_tuner_test_cache_file(t), sizeof path);
    /* The compiler changed, and with it the winner's answer. */
    gpo_strlcpy(cdev->info.runtime_version, "new-compiler", sizeof cdev->info.runtime_version);
    broken_x = 1;
    assert_int_equal(run_once(t, best), GPUOPT_ORIGIN_TUNED);
    assert_string_equal(best, "X=2");
    assert_int_equal(count_in(path, "new-compiler"), 1); /* the record tuned again */
    assert_int_equal(run_once(t, best), GPUOPT_ORIGIN_CACHE_HIT);
    assert_string_equal(best, "X=2");
    broken_x = -1;
    gpuopt_tuner_destroy(t);
    /* Without a workload key, a callback is never cached. */
    t = cb_tuner(cctx, cdev, NULL);
    size_t before = 0, after = 0;
    free(tc_read(path, &before));
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_TUNED);
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_TUNED);
    free(tc_read(path, &after));
    assert_int_equal(before, after);
    gpuopt_tuner_destroy(t);
    gpuopt_context_destroy(cctx);
}

static void damaged_and_newer_schema_files_are_survived(void **state)
{
    (void)state;
    gpuopt_context *cctx = NULL;
    gpuopt_device *cdev = NULL;
    assert_int_equal(tt_context("cpu", tc_dir("tuner-cache-damaged"), &cctx, &cdev), 0);
    gpuopt_tuner *t = cb_tuner(cctx, cdev, "damaged");
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_TUNED);
    char path[1024];
    gpo_strlcpy(path, gpo_tuner_test_cache_file(t), sizeof path);
    gpuopt_tuner_destroy(t);

    /* Cut short (not what a write leaves: a copy gone wrong): a miss. */
    size_t len = 0;
    char *text = tc_read(path, &len);
    FILE *f = fopen(path, "w");
    fwrite(text, 1, len - 20, f);
    fclose(f);
    free(text);
    t = cb_tuner(cctx, cdev, "damaged");
    assert_true(run_once(t, NULL) >= 0);
    gpuopt_tuner_destroy(t);

    /* Garbage: set aside by the next write, tuned again. */
    tc_append_raw(path, "this is not JSON\n{\"t\":\"touch\"}\n");
    t = cb_tuner(cctx, cdev, "damaged");
    assert_true(run_once(t, NULL) >= 0);
    assert_true(run_once(t, NULL) == GPUOPT_ORIGIN_CACHE_HIT);
    gpuopt_tuner_destroy(t);

    /* A newer schema: never read, never written. */
    f = fopen(path, "w");
    fputs("{\"t\":\"header\",\"format\":\"gpuopt-tuning-cache\",\"schema\":99}\n", f);
    fclose(f);
    t = cb_tuner(cctx, cdev, "damaged");
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_TUNED);
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_TUNED);
    gpuopt_tuner_destroy(t);
    text = tc_read(path, &len);
    assert_string_equal(text,
                        "{\"t\":\"header\",\"format\":\"gpuopt-tuning-cache\",\"schema\":99}\n");
    free(text);
    gpuopt_context_destroy(cctx);
}

/* ---- honest answers (issue 11, item 5) ------------------------------------ */

/* The result of one run of t as parsed JSON (the caller deletes it). */
static cJSON *run_json(gpuopt_tuner *t)
{
    gpuopt_result *r = NULL;
    char *text = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    assert_int_equal(gpuopt_result_to_json(r, &text), GPUOPT_OK);
    gpuopt_result_destroy(r);
    cJSON *o = cJSON_Parse(text);
    gpuopt_free(text);
    assert_non_null(o);
    return o;
}

static double budget_of(const cJSON *o, const char *which, const char *name)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(o, which), name)->valuedouble;
}

/* The stored record whose workload contains `part` (the caller deletes
 * it), or NULL. */
static cJSON *record_of(gpuopt_tuner *t, const char *part)
{
    char *text = tc_read(gpo_tuner_test_cache_file(t), NULL), *line, *save = NULL;
    cJSON *found = NULL;
    for (line = strtok_r(text, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
        cJSON *rec = cJSON_Parse(line);
        const char *w =
            cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "hard"), "workload"));
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "t"));
        if (w && strstr(w, part) && kind && !strcmp(kind, "record"))
            found = rec;
        else
            cJSON_Delete(rec);
    }
    free(text);
    return found;
}

static void a_hit_reports_the_stored_strategy_seed_budget_and_date(void **state)
{
    (void)state;
    gpuopt_space *s = small_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_USE);
    gpuopt_tuner_settings set = tt_settings(t);
    set.workload_key = "honest-search";
    set.strategy = GPUOPT_STRATEGY_RANDOM;
    set.seed = 7;
    set.max_evaluations = 1; /* an evaluation budget reached: a complete record */
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    cJSON *o = run_json(t);
    assert_string_equal(cJSON_GetObjectItem(o, "origin")->valuestring, "tuned");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "measured_at")));
    cJSON_Delete(o);

    /* Asked for an exhaustive search: the random one answers, and says so. */
    set.strategy = GPUOPT_STRATEGY_EXHAUSTIVE;
    set.seed = 99;
    set.max_evaluations = 0;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    o = run_json(t);
    assert_string_equal(cJSON_GetObjectItem(o, "origin")->valuestring, "cache_hit");
    assert_string_equal(cJSON_GetObjectItem(o, "strategy")->valuestring, "random");
    assert_string_equal(cJSON_GetObjectItem(o, "strategy_requested")->valuestring, "exhaustive");
    assert_string_equal(cJSON_GetObjectItem(o, "seed")->valuestring, "7");
    assert_true(budget_of(o, "budget", "max_evaluations") == 1);
    assert_true(budget_of(o, "budget_requested", "max_evaluations") == 0);
    const char *when = cJSON_GetObjectItem(o, "measured_at")->valuestring;
    assert_non_null(when);
    assert_int_equal(strlen(when), strlen("2026-11-26T12:00:00Z"));
    assert_true(when[4] == '-' && when[10] == 'T' && when[19] == 'Z');
    cJSON_Delete(o);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

/* The record's best and runner-up carry the medians of the side-by-side
 * re-timing that chose between them, not the search's own figures. */
static void the_record_keeps_the_finalists_re_timed_medians(void **state)
{
    (void)state;
    gpuopt_space *s = tt_planted_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_REFRESH);
    gpuopt_tuner_settings set = tt_settings(t);
    set.workload_key = "re-timed";
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    cJSON *o = run_json(t);
    int best = cJSON_GetObjectItem(o, "best")->valueint;
    double retimed = -1;
    cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(o, "final"))
    {
        if (cJSON_GetObjectItem(f, "index")->valueint == best)
            retimed = cJSON_GetObjectItem(f, "median_ns")->valuedouble;
    }
    assert_true(retimed > 0);
    double searched =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "candidates"), best),
                            "median_ns")
            ->valuedouble;
    cJSON_Delete(o);
    cJSON *rec = record_of(t, "re-timed");
    assert_non_null(rec);
    double stored = cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "best"), "median_ns")->valuedouble;
    cJSON_Delete(rec);
    if (stored != retimed)
        fail_msg("stored best median %g ns; re-timed %g ns, searched %g ns", stored, retimed,
                 searched);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

/* A planted space where every candidate fails: A=1,B=4 does not build and
 * A=4,B=4 computes the wrong answer. */
static gpuopt_space *failing_space(void)
{
    gpuopt_space *s = NULL;
    static const int64_t a[] = {1, 4}, b[] = {4};
    assert_int_equal(gpuopt_space_create(&s), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "A", a, 2), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "B", b, 1), GPUOPT_OK);
    assert_int_equal(gpuopt_space_set_size(s, "N", 1024), GPUOPT_OK);
    return s;
}

static void failed_results_are_stored_as_such_and_never_answer(void **state)
{
    (void)state;
    gpuopt_space *s = failing_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_USE);
    gpuopt_tuner_settings set = tt_settings(t);
    set.workload_key = "all-fail";
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    for (int round = 0; round < 2; round++) {
        tt_log[0] = '\0';
        gpuopt_result *r = NULL;
        assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
        int32_t origin = -1;
        gpuopt_result_get_origin(r, &origin);
        assert_int_equal(origin, GPUOPT_ORIGIN_TUNED); /* the second time too */
        assert_int_equal(tt_status_of(r, "A=1 B=4"), GPUOPT_CANDIDATE_COMPILE_FAILED);
        assert_int_equal(tt_status_of(r, "A=4 B=4"), GPUOPT_CANDIDATE_WRONG_RESULT);
        gpuopt_candidate c = {.struct_size = sizeof c};
        assert_int_equal(gpuopt_result_best(r, &c), GPUOPT_ERR_NOT_FOUND);
        gpuopt_result_destroy(r);
        if (round == 1)
            assert_non_null(strstr(tt_log, "found no valid candidate: tuning again"));
        /* Stored with each candidate's fate, and no winner. */
        cJSON *rec = record_of(t, "all-fail");
        assert_non_null(rec);
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(rec, "best")));
        char *cands = cJSON_PrintUnformatted(cJSON_GetObjectItem(rec, "candidates"));
        assert_non_null(strstr(cands, "\"compile_failed\""));
        assert_non_null(strstr(cands, "\"wrong_result\""));
        free(cands);
        cJSON_Delete(rec);
    }
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_hit_builds_and_runs_nothing),
        cmocka_unit_test(every_hard_key_part_misses_when_it_changes),
        cmocka_unit_test(a_soft_change_re_verifies_the_winner_and_runner_up),
        cmocka_unit_test(refresh_tunes_again_and_off_touches_nothing),
        cmocka_unit_test(a_winner_that_no_longer_holds_is_tuned_again),
        cmocka_unit_test(damaged_and_newer_schema_files_are_survived),
        cmocka_unit_test(a_hit_reports_the_stored_strategy_seed_budget_and_date),
        cmocka_unit_test(the_record_keeps_the_finalists_re_timed_medians),
        cmocka_unit_test(failed_results_are_stored_as_such_and_never_answer),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
