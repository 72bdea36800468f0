/* The tuner with host-callback subjects (on the CPU backend's device):
 * their own measurements and the library's clock, pre_run and validate
 * hooks, failures and timeouts, budgets and progress, reproducibility by
 * seed, and online tuning with gpuopt_tuner_step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "test_cache_util.h"
#include "test_tuner_util.h"

static gpuopt_context *ctx;
static gpuopt_device *dev;

static int group_setup(void **state)
{
    (void)state;
    return tt_context("cpu", tc_dir("callback"), &ctx, &dev);
}

static int group_teardown(void **state)
{
    gpuopt_context_destroy(ctx);
    return tc_cleanup(state);
}

/* What the callbacks saw. */
typedef struct probe {
    int runs, pre_runs, validates;
    int64_t last_x;
    int64_t fail_x;  /* run returns an error for this X (0: none) */
    int64_t wrong_x; /* validate rejects this X */
    int64_t sleep_x; /* this X sleeps sleep_ms */
    double sleep_ms;
    int measure;    /* report own times: 1000 * X ns */
    int flat;       /* with measure: every X reports 1000 ns but fast_x, 500 ns, */
    int64_t fast_x; /* and wide_x, 5000 and 100000 ns in turn (a busy machine's spread) */
    int64_t wide_x;
    int slow_first;     /* with measure: the very first run reports 100x */
    int pre_before_run; /* 0 when a run came without a pre_run before it */
    int pending_pre;
    int64_t order[64];
    int norder;
} probe;

static int64_t x_of(const gpuopt_point *c)
{
    int64_t x = -1;
    gpuopt_point_get_int(c, "X", &x);
    return x;
}

static void pre_run(const gpuopt_point *c, void *user)
{
    probe *p = user;
    (void)c;
    p->pre_runs++;
    p->pending_pre = 1;
}

static gpuopt_status run(const gpuopt_point *c, void *user, double *measured_ns)
{
    probe *p = user;
    int64_t x = x_of(c);
    assert_true(*measured_ns < 0);
    if (!p->pending_pre)
        p->pre_before_run = 0;
    p->pending_pre = 0;
    p->runs++;
    if (p->last_x != x && p->norder < 64)
        p->order[p->norder++] = x;
    p->last_x = x;
    if (x == p->fail_x)
        return GPUOPT_ERR_LAUNCH;
    if (x == p->sleep_x) {
        struct timespec ts = {0, (long)(p->sleep_ms * 1e6)};
        nanosleep(&ts, NULL);
    }
    if (p->measure && p->flat)
        *measured_ns = x == p->fast_x   ? 500.0
                       : x == p->wide_x ? (p->runs % 2 ? 5000.0 : 100000.0)
                                        : 1000.0;
    else if (p->measure)
        *measured_ns = 1000.0 * (double)x * (p->slow_first && p->runs == 1 ? 100 : 1);
    return GPUOPT_OK;
}

static int32_t validate(const gpuopt_point *c, void *user)
{
    probe *p = user;
    p->validates++;
    return x_of(c) != p->wrong_x;
}

static gpuopt_space *x_space(int n)
{
    gpuopt_space *s = NULL;
    int64_t v[64];
    for (int i = 0; i < n; i++)
        v[i] = i + 1;
    assert_int_equal(gpuopt_space_create(&s), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "X", v, n), GPUOPT_OK);
    return s;
}

static gpuopt_tuner *x_tuner(int n, probe *p, int with_validate)
{
    gpuopt_space *s = x_space(n);
    gpuopt_tuner *t = NULL;
    assert_int_equal(gpuopt_tuner_create(ctx, dev, s, &t), GPUOPT_OK);
    gpuopt_space_destroy(s);
    p->pre_before_run = 1;
    p->last_x = -1;
    gpuopt_callback_desc cb = {.struct_size = sizeof cb};
    cb.run = run;
    cb.pre_run = pre_run;
    cb.validate = with_validate ? validate : NULL;
    cb.user = p;
    assert_int_equal(gpuopt_tuner_set_callback(t, &cb), GPUOPT_OK);
    gpuopt_tuner_settings set = tt_settings(t);
    set.warmup_ms = 0.05;
    set.repeat_ms = 0.2;
    set.min_runs = 3;
    set.max_runs = 6;
    set.cache_mode = GPUOPT_CACHE_OFF;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    return t;
}

/* Makes `reject` the validate callback of an x_tuner. */
static void reject_with(gpuopt_tuner *t, gpuopt_validate_fn reject, probe *p)
{
    gpuopt_callback_desc cb = {.struct_size = sizeof cb};
    cb.run = run;
    cb.validate = reject;
    cb.user = p;
    assert_int_equal(gpuopt_tuner_set_callback(t, &cb), GPUOPT_OK);
}

static gpuopt_candidate cand(const gpuopt_result *r, int i)
{
    gpuopt_candidate c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    assert_int_equal(gpuopt_result_at(r, i, &c), GPUOPT_OK);
    return c;
}

static void own_measurements_are_taken_as_given(void **state)
{
    (void)state;
    probe p = {.measure = 1};
    gpuopt_tuner *t = x_tuner(5, &p, 1);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    assert_string_equal(tt_best(r), "X=1");
    gpuopt_candidate c = cand(r, tt_find(r, "X=1"));
    assert_true(c.median_ns == 1000.0 && c.min_ns == 1000.0 && c.p80_ns == 1000.0);
    assert_true(c.compile_ms < 0);
    assert_int_equal(c.message[0], '\0');
    /* 2x the best and more: pruned after the probe. */
    assert_int_equal(cand(r, tt_find(r, "X=3")).status, GPUOPT_CANDIDATE_PRUNED);
    assert_int_equal(cand(r, tt_find(r, "X=2")).status, GPUOPT_CANDIDATE_OK);
    /* pre_run before every run, validate once per candidate. */
    assert_int_equal(p.pre_runs, p.runs);
    assert_true(p.pre_before_run);
    assert_true(p.validates >= 5);
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
}

/* Five timed runs asked: a point runs five times, the checked run among
 * them, when it was not slower than the rest; a slower first run was the
 * warm-up, and five more are timed. */
static void the_checked_run_is_the_first_timed_one_unless_it_was_slower(void **state)
{
    (void)state;
    for (int slow = 0; slow < 2; slow++) {
        probe p = {.measure = 1, .slow_first = slow};
        gpuopt_tuner *t = x_tuner(1, &p, 1);
        gpuopt_tuner_settings set = tt_settings(t);
        set.warmup_ms = 5; /* the probe decides: no warm-up runs for it */
        set.repeat_ms = 0;
        set.min_runs = set.max_runs = 5;
        assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
        gpuopt_result *r = NULL;
        assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
        assert_int_equal(p.runs, slow ? 6 : 5);
        assert_int_equal(p.validates, 1);
        gpuopt_candidate c = cand(r, 0);
        assert_int_equal(c.runs, 5);
        assert_true(c.p80_ns == 1000.0); /* the slow first run is not among them */
        gpuopt_result_destroy(r);
        gpuopt_tuner_destroy(t);
    }
}

static void the_library_times_a_callback_that_does_not_measure_itself(void **state)
{
    (void)state;
    probe p = {.sleep_x = 2, .sleep_ms = 20};
    gpuopt_tuner *t = x_tuner(3, &p, 0);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    gpuopt_candidate c = cand(r, tt_find(r, "X=2"));
    assert_true(c.median_ns > 0 || c.status == GPUOPT_CANDIDATE_PRUNED);
    assert_true(c.min_ns >= 20e6); /* a sleep lasts at least its time */
    assert_string_not_equal(tt_best(r), "X=2");
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
}

static void failures_are_recorded_and_never_win(void **state)
{
    (void)state;
    probe p = {.measure = 1, .fail_x = 1, .wrong_x = 2, .sleep_x = 3, .sleep_ms = 30};
    gpuopt_tuner *t = x_tuner(4, &p, 1);
    gpuopt_tuner_settings set = tt_settings(t);
    set.timeout_s = 0.01;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    gpuopt_candidate c = cand(r, tt_find(r, "X=1"));
    assert_int_equal(c.status, GPUOPT_CANDIDATE_LAUNCH_FAILED);
    assert_non_null(strstr(c.message, "GPUOPT_ERR_LAUNCH"));
    c = cand(r, tt_find(r, "X=2"));
    assert_int_equal(c.status, GPUOPT_CANDIDATE_WRONG_RESULT);
    assert_non_null(strstr(c.message, "validate"));
    /* Its own measurement says 3000 ns, but the call took 30 ms: the
     * timeout is on the wall time of the run. */
    c = cand(r, tt_find(r, "X=3"));
    assert_int_equal(c.status, GPUOPT_CANDIDATE_TIMEOUT);
    assert_non_null(strstr(c.message, "timeout"));
    assert_string_equal(tt_best(r), "X=4");
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
}

static void no_valid_candidate_is_a_result_whose_best_is_not_found(void **state)
{
    (void)state;
    probe p = {.measure = 1, .wrong_x = 1, .fail_x = 2};
    gpuopt_tuner *t = x_tuner(2, &p, 1);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    assert_non_null(r);
    int32_t n = 0;
    assert_int_equal(gpuopt_result_count(r, &n), GPUOPT_OK);
    assert_int_equal(n, 2);
    gpuopt_candidate b;
    memset(&b, 0x5a, sizeof b);
    b.struct_size = sizeof b;
    assert_int_equal(gpuopt_result_best(r, &b), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(gpuopt_last_error(), "no valid candidate among the 2 evaluated"));
    assert_null(b.point); /* failure means no output */
    char *json = NULL;
    assert_int_equal(gpuopt_result_to_json(r, &json), GPUOPT_OK);
    assert_non_null(strstr(json, "\"best\":\t-1"));
    gpuopt_free(json);
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
}

static void budgets_stop_the_search(void **state)
{
    (void)state;
    probe p = {.measure = 1};
    gpuopt_tuner *t = x_tuner(20, &p, 0);
    gpuopt_tuner_settings set = tt_settings(t);
    set.strategy = GPUOPT_STRATEGY_RANDOM;
    set.max_evaluations = 7;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    int32_t n = 0;
    gpuopt_result_count(r, &n);
    assert_int_equal(n, 7);
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
}

static int32_t reject_all(const gpuopt_point *c, void *user)
{
    (void)c;
    (void)user;
    return 0;
}

static void the_failure_budget_stops_the_search(void **state)
{
    (void)state;
    probe p = {.measure = 1};
    gpuopt_tuner *t = x_tuner(20, &p, 0);
    reject_with(t, reject_all, &p);
    gpuopt_tuner_settings set = tt_settings(t);
    set.max_failures = 3;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    int32_t n = 0;
    gpuopt_result_count(r, &n);
    assert_int_equal(n, 3);
    char *json = NULL;
    gpuopt_result_to_json(r, &json);
    assert_non_null(strstr(json, "failure budget"));
    gpuopt_free(json);
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
}

/* The candidate order of a run, as "X=a X=b ...". */
static void order_of(const gpuopt_result *r, char *out, size_t cap)
{
    int32_t n = 0;
    gpuopt_result_count(r, &n);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        char *s = NULL;
        gpuopt_point_to_string(cand(r, i).point, &s);
        snprintf(out + strlen(out), cap - strlen(out), "%s ", s);
        gpuopt_free(s);
    }
}

static void the_same_seed_gives_the_same_sequence(void **state)
{
    (void)state;
    char first[1024], again[1024], other[1024];
    uint64_t seeds[3] = {42, 42, 43};
    char *orders[3] = {first, again, other};
    for (int k = 0; k < 3; k++) {
        probe p = {.measure = 1};
        gpuopt_tuner *t = x_tuner(40, &p, 0);
        gpuopt_tuner_settings set = tt_settings(t);
        set.strategy = GPUOPT_STRATEGY_RANDOM;
        set.max_evaluations = 12;
        set.seed = seeds[k];
        assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
        gpuopt_result *r = NULL;
        assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
        order_of(r, orders[k], 1024);
        gpuopt_result_destroy(r);
        gpuopt_tuner_destroy(t);
    }
    assert_string_equal(first, again);
    assert_string_not_equal(first, other);
}

/* Points that time alike tie whatever order a search meets them in: the
 * first in the space's order wins, so repeated searches agree (issue 11:
 * five exhaustive searches on an idle machine crowned five configurations
 * the timings could not tell apart). A point clearly faster still wins,
 * and so does a steady one against an earlier point whose runs spread. */
static void ties_go_to_the_first_point_in_the_space_order(void **state)
{
    (void)state;
    char orders[3][1024];
    for (int k = 0; k < 3; k++) {
        probe p = {.measure = 1, .flat = 1};
        gpuopt_tuner *t = x_tuner(4, &p, 0);
        gpuopt_tuner_settings set = tt_settings(t);
        set.strategy = GPUOPT_STRATEGY_RANDOM;
        set.max_evaluations = 4;
        set.seed = 7 + (uint64_t)k;
        assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
        gpuopt_result *r = NULL;
        assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
        assert_string_equal(tt_best(r), "X=1");
        order_of(r, orders[k], sizeof orders[k]);
        gpuopt_result_destroy(r);
        gpuopt_tuner_destroy(t);
    }
    /* The searches met the points in different orders. */
    assert_true(strcmp(orders[0], orders[1]) != 0 || strcmp(orders[0], orders[2]) != 0);
    probe p = {.measure = 1, .flat = 1, .fast_x = 3};
    gpuopt_tuner *t = x_tuner(4, &p, 0);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    assert_string_equal(tt_best(r), "X=3");
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
    /* A slower point whose runs spread wide (X=1: 5 to 100 us) does not tie
     * with the steady winner (X=2..4: 1 us): the band is the winner's own
     * spread, not the pair's. */
    probe q = {.measure = 1, .flat = 1, .wide_x = 1};
    t = x_tuner(4, &q, 0);
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    assert_string_equal(tt_best(r), "X=2");
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
}

typedef struct progress_log {
    int calls, last_done, total, monotonic;
    double best;
} progress_log;

static void on_progress(int32_t done, int32_t total, double best_ns, double left, void *user)
{
    progress_log *l = user;
    if (done != l->last_done + 1)
        l->monotonic = 0;
    l->calls++;
    l->last_done = done;
    l->total = total;
    l->best = best_ns;
    (void)left;
}

static void progress_is_reported_after_every_candidate(void **state)
{
    (void)state;
    probe p = {.measure = 1};
    progress_log l = {.monotonic = 1};
    gpuopt_tuner *t = x_tuner(6, &p, 0);
    assert_int_equal(gpuopt_tuner_set_progress(t, on_progress, &l), GPUOPT_OK);
    gpuopt_result *r = NULL;
    assert_int_equal(gpuopt_tuner_run(t, &r), GPUOPT_OK);
    assert_int_equal(l.calls, 6);
    assert_true(l.monotonic);
    assert_int_equal(l.total, 6);
    assert_true(l.best == 1000.0);
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
}

static void tuner_step_runs_each_candidate_once_then_the_best(void **state)
{
    (void)state;
    probe p = {.measure = 1, .wrong_x = 3};
    gpuopt_tuner *t = x_tuner(4, &p, 1);
    const gpuopt_point *c = NULL;
    int32_t done = -1;
    /* X = 4 first: exhaustive walks in order 1, 2, 3, 4; make 2 best by
     * the run count: the callback measures 1000 * X, so 1 is best. */
    int64_t seen[8];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(gpuopt_tuner_step(t, &c, &done), GPUOPT_OK);
        assert_int_equal(done, 0);
        seen[i] = x_of(c);
    }
    assert_int_equal(seen[0], 1);
    assert_int_equal(seen[1], 2);
    /* X = 3 fails validation: the same call redoes the work with the best. */
    assert_int_equal(seen[2], 1);
    assert_int_equal(gpuopt_tuner_step(t, &c, &done), GPUOPT_OK);
    assert_int_equal(x_of(c), 4);
    assert_int_equal(done, 0);
    int runs_before = p.runs;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(gpuopt_tuner_step(t, &c, &done), GPUOPT_OK);
        assert_int_equal(done, 1);
        assert_int_equal(x_of(c), 1);
    }
    assert_int_equal(p.runs, runs_before + 3); /* one run per call */
    assert_int_equal(p.pre_runs, p.runs);
    /* A setter starts the online search again. */
    gpuopt_tuner_settings set = tt_settings(t);
    set.seed = 5;
    assert_int_equal(gpuopt_tuner_set_settings(t, &set), GPUOPT_OK);
    assert_int_equal(gpuopt_tuner_step(t, &c, &done), GPUOPT_OK);
    assert_int_equal(done, 0);
    gpuopt_tuner_destroy(t);
}

static void tuner_step_without_any_valid_candidate_is_not_found(void **state)
{
    (void)state;
    probe p = {.measure = 1};
    gpuopt_tuner *t = x_tuner(2, &p, 0);
    reject_with(t, reject_all, &p);
    const gpuopt_point *c = NULL;
    int32_t done = -1;
    assert_int_equal(gpuopt_tuner_step(t, &c, &done), GPUOPT_ERR_NOT_FOUND);
    assert_null(c);
    assert_int_equal(done, 0);
    gpuopt_tuner_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(own_measurements_are_taken_as_given),
        cmocka_unit_test(the_checked_run_is_the_first_timed_one_unless_it_was_slower),
        cmocka_unit_test(the_library_times_a_callback_that_does_not_measure_itself),
        cmocka_unit_test(failures_are_recorded_and_never_win),
        cmocka_unit_test(no_valid_candidate_is_a_result_whose_best_is_not_found),
        cmocka_unit_test(budgets_stop_the_search),
        cmocka_unit_test(the_failure_budget_stops_the_search),
        cmocka_unit_test(the_same_seed_gives_the_same_sequence),
        cmocka_unit_test(ties_go_to_the_first_point_in_the_space_order),
        cmocka_unit_test(progress_is_reported_after_every_candidate),
        cmocka_unit_test(tuner_step_runs_each_candidate_once_then_the_best),
        cmocka_unit_test(tuner_step_without_any_valid_candidate_is_not_found),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
