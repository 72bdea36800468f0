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
    const char *path = gpo_tuner_test_cache_file(t);
    assert_int_equal(count_in(path, "\"t\":\"cand\""), 12);
    assert_int_equal(count_in(path, "\"t\":\"entry\""), 1);
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
    assert_int_equal(count_in(path, "\"t\":\"verify\""), 1);
    assert_int_equal(count_in(path, "\"ok\":true"), 1);
    assert_int_equal(count_in(path, "99.9-test"), 1);
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
    int entries = count_in(path, "\"t\":\"entry\"");
    set.cache_mode = GPUOPT_CACHE_REFRESH;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    assert_int_equal(run_once(t, NULL), GPUOPT_ORIGIN_TUNED);
    assert_int_equal(count_in(path, "\"t\":\"entry\""), entries + 1);
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
    assert_int_equal(count_in(path, "\"ok\":false"), 1);
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

    /* Truncated mid-line (power loss): the tail is torn, the rest serves. */
    size_t len = 0;
    char *text = tc_read(path, &len);
    FILE *f = fopen(path, "w");
    fwrite(text, 1, len - 20, f);
    fclose(f);
    free(text);
    t = cb_tuner(cctx, cdev, "damaged");
    assert_true(run_once(t, NULL) >= 0);
    gpuopt_tuner_destroy(t);

    /* Garbage in the middle: set aside, rebuilt, tuned again. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_hit_builds_and_runs_nothing),
        cmocka_unit_test(every_hard_key_part_misses_when_it_changes),
        cmocka_unit_test(a_soft_change_re_verifies_the_winner_and_runner_up),
        cmocka_unit_test(refresh_tunes_again_and_off_touches_nothing),
        cmocka_unit_test(a_winner_that_no_longer_holds_is_tuned_again),
        cmocka_unit_test(damaged_and_newer_schema_files_are_survived),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
