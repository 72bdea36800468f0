/* Timing statistics, the per-candidate timing controller (driven with
 * synthetic durations: no clock is read), the loop that drives it over a
 * function, the "within noise" rule and the side-by-side re-timing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "measure/timing.h"
#include "util/detail.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void statistics_use_linear_quantiles_and_sample_deviation(void **state)
{
    (void)state;
    const double x[] = {5, 1, 4, 2, 3};
    gpo_stats st;
    assert_int_equal(gpo_stats_compute(x, 5, &st), GPUOPT_OK);
    assert_int_equal(st.count, 5);
    NEAR(st.median, 3);
    NEAR(st.p20, 1.8); /* position 0.2 * 4 = 0.8 between 1 and 2 */
    NEAR(st.p80, 4.2);
    NEAR(st.min, 1);
    NEAR(st.max, 5);
    NEAR(st.mean, 3);
    NEAR(st.cv, sqrt(2.5) / 3);
    const double even[] = {10, 20, 30, 40};
    assert_int_equal(gpo_stats_compute(even, 4, &st), GPUOPT_OK);
    NEAR(st.median, 25);
    /* The input is left alone. */
    assert_true(x[0] == 5 && x[4] == 3);
    const double one[] = {7};
    assert_int_equal(gpo_stats_compute(one, 1, &st), GPUOPT_OK);
    NEAR(st.median, 7);
    NEAR(st.p20, 7);
    NEAR(st.cv, 0);
    /* A slow outlier moves the mean, not the median. */
    const double outlier[] = {10, 10, 10, 10, 1000};
    assert_int_equal(gpo_stats_compute(outlier, 5, &st), GPUOPT_OK);
    NEAR(st.median, 10);
    assert_true(st.mean > 200);

    const double bad[] = {1, NAN};
    const double neg[] = {1, -1};
    const double inf[] = {INFINITY};
    assert_int_equal(gpo_stats_compute(bad, 2, &st), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_stats_compute(neg, 2, &st), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_stats_compute(inf, 1, &st), GPUOPT_ERR_INVALID_ARGUMENT);
    NEAR(gpo_quantile_sorted(even, 4, 1.0), 40);
    NEAR(gpo_quantile_sorted(even, 4, 0.0), 10);
}

/* Drives the controller after a checked first run of `first` ns (< 0: no
 * first run); the timed runs take durations[i] (the last one repeating),
 * warm-ups the first. Counts the steps asked for. */
static int32_t drive_first(const gpo_timing_settings *set, double best, double first,
                           const double *durations, int nd, int *warm, int *timed, gpo_stats *st,
                           int *first_was)
{
    gpo_timing t;
    assert_int_equal(gpo_timing_begin(&t, set, best), GPUOPT_OK);
    if (first >= 0)
        gpo_timing_first(&t, first);
    *warm = *timed = 0;
    int step;
    while ((step = gpo_timing_next(&t)) != GPO_TIMING_DONE) {
        *warm += step == GPO_TIMING_WARMUP;
        gpo_timing_record(&t, durations[*timed < nd ? *timed : nd - 1]);
        *timed += step == GPO_TIMING_TIMED;
        assert_true(*warm + *timed < 100000);
    }
    int32_t status = gpo_timing_finish(&t, st);
    *first_was = t.first;
    gpo_timing_free(&t);
    return status;
}

/* Runs the controller with every run taking `ns`; returns the status and
 * fills counts of warm-up and timed runs. */
static int32_t drive(const gpo_timing_settings *set, double best, double ns, int *warm, int *timed,
                     gpo_stats *st)
{
    int first;
    return drive_first(set, best, -1, &ns, 1, warm, timed, st, &first);
}

static void timing_warms_up_and_repeats_on_time_budgets_within_bounds(void **state)
{
    (void)state;
    gpo_timing_settings set;
    gpo_timing_defaults(&set);
    assert_true(set.warmup_ms == 5 && set.repeat_ms == 50 && set.min_runs == 3 &&
                set.max_runs == 100 && set.probe_runs == 3 && set.prune_ratio == 2);
    int warm, timed;
    gpo_stats st;
    /* 1 ms runs: 5 warm-up, 50 timed. */
    assert_int_equal(drive(&set, -1, 1e6, &warm, &timed, &st), GPO_TIMED_OK);
    assert_int_equal(warm, 5);
    assert_int_equal(timed, 50);
    assert_int_equal(st.count, 50);
    NEAR(st.median, 1e6);
    /* 100 ms runs: at least one warm-up, at least min_runs timed. */
    assert_int_equal(drive(&set, -1, 1e8, &warm, &timed, &st), GPO_TIMED_OK);
    assert_int_equal(warm, 1);
    assert_int_equal(timed, 3);
    /* 10 us runs: capped at max_runs. */
    assert_int_equal(drive(&set, -1, 1e4, &warm, &timed, &st), GPO_TIMED_OK);
    assert_int_equal(warm, 500);
    assert_int_equal(timed, 100);
    /* A timer that reads 0 cannot make it spin. */
    assert_int_equal(drive(&set, -1, 0, &warm, &timed, &st), GPO_TIMED_OK);
    assert_int_equal(warm, 10000);
    assert_int_equal(timed, 100);
    /* No warm-up budget still warms up once. */
    set.warmup_ms = 0;
    assert_int_equal(drive(&set, -1, 1e6, &warm, &timed, &st), GPO_TIMED_OK);
    assert_int_equal(warm, 1);
}

static void probe_prunes_candidates_twice_as_slow_as_the_best(void **state)
{
    (void)state;
    gpo_timing_settings set;
    gpo_timing_defaults(&set);
    int warm, timed;
    gpo_stats st;
    assert_int_equal(drive(&set, 1e6, 2.5e6, &warm, &timed, &st), GPO_TIMED_PRUNED);
    assert_int_equal(timed, 6); /* only the probe and the probe again */
    NEAR(st.median, 2.5e6);
    assert_int_equal(drive(&set, 1e6, 1.9e6, &warm, &timed, &st), GPO_TIMED_OK);
    assert_int_equal(timed, 27); /* ceil(50 ms / 1.9 ms) */
    /* No best yet, or the rule off: fully timed. */
    assert_int_equal(drive(&set, -1, 5e6, &warm, &timed, &st), GPO_TIMED_OK);
    assert_int_equal(drive(&set, NAN, 5e6, &warm, &timed, &st), GPO_TIMED_OK);
    set.prune_ratio = 0;
    assert_int_equal(drive(&set, 1e6, 5e6, &warm, &timed, &st), GPO_TIMED_OK);
    assert_int_equal(timed, 10);
}

static void timing_settings_and_inputs_are_checked(void **state)
{
    (void)state;
    gpo_timing_settings set, bad;
    gpo_timing_defaults(&set);
    assert_int_equal(gpo_timing_check(&set), GPUOPT_OK);
    bad = set, bad.warmup_ms = -1;
    assert_int_equal(gpo_timing_check(&bad), GPUOPT_ERR_OUT_OF_RANGE);
    bad = set, bad.repeat_ms = NAN;
    assert_int_equal(gpo_timing_check(&bad), GPUOPT_ERR_OUT_OF_RANGE);
    bad = set, bad.min_runs = 0;
    assert_int_equal(gpo_timing_check(&bad), GPUOPT_ERR_OUT_OF_RANGE);
    bad = set, bad.max_runs = 2;
    assert_int_equal(gpo_timing_check(&bad), GPUOPT_ERR_OUT_OF_RANGE);
    bad = set, bad.max_runs = 1000000;
    assert_int_equal(gpo_timing_check(&bad), GPUOPT_ERR_OUT_OF_RANGE);
    bad = set, bad.probe_runs = 0;
    assert_int_equal(gpo_timing_check(&bad), GPUOPT_ERR_OUT_OF_RANGE);
    bad = set, bad.prune_ratio = 0.5;
    assert_int_equal(gpo_timing_check(&bad), GPUOPT_ERR_OUT_OF_RANGE);
    gpo_timing t;
    assert_int_equal(gpo_timing_begin(&t, &bad, -1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpo_timing_next(&t), GPO_TIMING_DONE);
    gpo_timing_free(&t);
    /* Finishing before any timed run says so. */
    assert_int_equal(gpo_timing_begin(&t, &set, -1), GPUOPT_OK);
    gpo_stats st;
    assert_int_equal(gpo_timing_finish(&t, &st), -1);
    /* Bad durations: negative and NaN count as 0, infinity as very slow. */
    gpo_timing_record(&t, NAN); /* warm-up */
    set.warmup_ms = 0;
    while (gpo_timing_next(&t) == GPO_TIMING_WARMUP)
        gpo_timing_record(&t, 1e9);
    gpo_timing_record(&t, -5);
    gpo_timing_record(&t, NAN);
    gpo_timing_record(&t, INFINITY);
    assert_int_equal(gpo_timing_finish(&t, &st), GPO_TIMED_OK);
    NEAR(st.min, 0);
    assert_true(st.max >= 1e18);
    gpo_timing_free(&t);
}

typedef struct subject {
    double ns;
    int runs;
    int fail_at; /* 0: never */
} subject;

static gpuopt_status run_one(void *user, double *ns)
{
    subject *s = user;
    s->runs++;
    if (s->fail_at && s->runs == s->fail_at)
        return gpo_fail(GPUOPT_ERR_LAUNCH, "subject failed on run %d", s->runs);
    *ns = s->ns * (s->runs % 2 ? 1.01 : 0.99);
    return GPUOPT_OK;
}

static void the_loop_measures_within_its_run_bounds_prunes_and_stops_at_a_failure(void **state)
{
    (void)state;
    subject s = {1000, 0, 0};
    gpo_timing_settings t = {0, 1.0, 3, 50, 3, 2.0};
    gpo_stats st;
    int pruned = -1;
    assert_int_equal(gpo_measure_time(run_one, &s, &t, 0, &st, &pruned), GPUOPT_OK);
    assert_int_equal(pruned, 0);
    /* 1 ms of 1 us runs: the 50-run cap ends it, after one warm-up. */
    assert_int_equal(st.count, 50);
    assert_int_equal(s.runs, 51);
    assert_true(st.median > 980 && st.median < 1020);

    s.runs = 0;
    assert_int_equal(gpo_measure_time(run_one, &s, &t, 400, &st, &pruned), GPUOPT_OK);
    assert_int_equal(pruned, 1); /* over 2 x the best after its 3-run probe, twice */
    assert_int_equal(st.count, 6);

    s.runs = 0;
    s.fail_at = 2;
    assert_int_equal(gpo_measure_time(run_one, &s, &t, 0, &st, NULL), GPUOPT_ERR_LAUNCH);
    assert_non_null(strstr(gpuopt_last_error(), "failed on run 2"));

    /* Settings out of range run nothing. */
    s.runs = s.fail_at = 0;
    gpo_timing_settings bad = t;
    bad.min_runs = 0;
    assert_int_equal(gpo_measure_time(run_one, &s, &bad, 0, &st, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    bad = t;
    bad.repeat_ms = -1;
    assert_int_equal(gpo_measure_time(run_one, &s, &bad, 0, &st, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    bad = t;
    bad.probe_runs = 0;
    assert_int_equal(gpo_measure_time(run_one, &s, &bad, 0, &st, NULL), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(s.runs, 0);
}

static void a_checked_first_run_counts_as_timed_when_the_probe_shows_it_was_not_slower(void **state)
{
    (void)state;
    /* Five timed runs per point, as a peer tuner is asked for. */
    gpo_timing_settings set = {5, 0, 5, 5, 3, 2.0};
    const double steady[] = {1.0e6, 1.02e6, 0.99e6};
    int warm, timed, first;
    gpo_stats st;
    assert_int_equal(drive_first(&set, -1, 1.01e6, steady, 3, &warm, &timed, &st, &first),
                     GPO_TIMED_OK);
    /* No warm-up at all, and the checked run is one of the five. */
    assert_int_equal(warm, 0);
    assert_int_equal(timed, 4);
    assert_int_equal(st.count, 5);
    assert_int_equal(first, GPO_FIRST_TIMED);
    NEAR(st.max, 1.02e6);
}

static void a_slower_first_run_was_the_warm_up_and_is_dropped(void **state)
{
    (void)state;
    gpo_timing_settings set = {5, 0, 5, 5, 3, 2.0};
    const double steady[] = {1.0e6};
    int warm, timed, first;
    gpo_stats st;
    /* A JIT's first launch: 40 ms against 1 ms runs. */
    assert_int_equal(drive_first(&set, -1, 40e6, steady, 1, &warm, &timed, &st, &first),
                     GPO_TIMED_OK);
    assert_int_equal(warm, 0); /* the first run was the warm-up: none more */
    assert_int_equal(timed, 5);
    assert_int_equal(st.count, 5);
    assert_int_equal(first, GPO_FIRST_WARMUP);
    NEAR(st.max, 1.0e6);
}

static void one_slow_probe_prunes_nothing_the_point_is_probed_again(void **state)
{
    (void)state;
    gpo_timing_settings set = {0, 0, 3, 20, 3, 2.0};
    int warm, timed, first;
    gpo_stats st;
    /* Quiet, the point takes 1.5 ms against the best's 1 ms; a competing job
     * makes its first probe take 3x that. */
    const double busy_then_quiet[] = {4.5e6, 4.6e6, 4.4e6, 1.5e6, 1.5e6, 1.5e6};
    assert_int_equal(drive_first(&set, 1e6, 4.5e6, busy_then_quiet, 6, &warm, &timed, &st, &first),
                     GPO_TIMED_OK);
    NEAR(gpo_stats_rank(&st), 1.5e6);
    /* Slow in both probes: pruned after the second, not after the first. */
    const double slow[] = {4.5e6};
    assert_int_equal(drive_first(&set, 1e6, 4.5e6, slow, 1, &warm, &timed, &st, &first),
                     GPO_TIMED_PRUNED);
    assert_int_equal(timed, 6); /* two probes of 3, and the kept first run */
    assert_int_equal(st.count, 7);
    /* With no room for a second probe the point is measured in full. */
    gpo_timing_settings tight = {0, 0, 3, 3, 3, 2.0};
    assert_int_equal(drive_first(&tight, 1e6, 9e6, slow, 1, &warm, &timed, &st, &first),
                     GPO_TIMED_OK);
}

static void the_p20_ranks_and_the_median_reports(void **state)
{
    (void)state;
    /* Interference slows some runs of a point. */
    const double quiet[] = {100, 101, 102, 101, 100};
    const double busy[] = {100, 180, 101, 210, 190};
    gpo_stats q, b;
    double scratch[6];
    assert_int_equal(gpo_stats_compute(quiet, 5, &q), GPUOPT_OK);
    assert_int_equal(gpo_stats_compute(busy, 5, &b), GPUOPT_OK);
    NEAR(gpo_stats_rank(&q), 100);
    NEAR(gpo_stats_rank(&b), 100.8); /* 0.8 of the way from 100 to 101 */
    NEAR(gpo_rank_of(busy, 5, scratch), 100.8);
    NEAR(b.median, 180); /* reported as measured */
    /* One lucky run (PoCL runs kernels in two modes) carries the minimum
     * but not the p20 of 6 runs, and a fifth as far of 5. */
    const double lucky6[] = {100, 101, 50, 100, 102, 101};
    NEAR(gpo_rank_of(lucky6, 6, scratch), 100);
    NEAR(gpo_rank_of(lucky6, 5, scratch), 90);
    /* The busy point's median is 1.8x the quiet one's; by rank they tie,
     * so neither displaces the other. */
    assert_false(gpo_stats_beats(&q, &b, GPO_NOISE_FLOOR));
    assert_false(gpo_stats_beats(&b, &q, GPO_NOISE_FLOOR));
}

/* Statistics whose ranking statistic (the p20) is `rank`, with a p20-p80
 * spread of `spread`. */
static gpo_stats make(double rank, double spread)
{
    gpo_stats s;
    memset(&s, 0, sizeof s);
    s.count = 10;
    s.min = s.p20 = rank;
    s.median = rank + spread / 2;
    s.p80 = rank + spread;
    return s;
}

static void challengers_within_noise_do_not_displace_the_incumbent(void **state)
{
    (void)state;
    gpo_stats inc = make(100, 4);
    gpo_stats close = make(99, 4), clear = make(90, 2), wide = make(90, 30);
    assert_false(gpo_stats_beats(&inc, &close, GPO_NOISE_FLOOR));
    assert_true(gpo_stats_beats(&inc, &clear, GPO_NOISE_FLOOR));
    assert_false(gpo_stats_beats(&inc, &wide, GPO_NOISE_FLOOR)); /* (4 + 30) / 2 = 17 > 10 */
    /* Perfectly steady timings still need the 2% floor. */
    gpo_stats steady = make(100, 0), a = make(99, 0), b = make(97, 0);
    assert_false(gpo_stats_beats(&steady, &a, GPO_NOISE_FLOOR));
    assert_true(gpo_stats_beats(&steady, &b, GPO_NOISE_FLOOR));
    assert_true(gpo_stats_beats(&steady, &a, 0));
    /* Slower never beats. */
    assert_false(gpo_stats_beats(&clear, &inc, GPO_NOISE_FLOOR));
    gpo_stats empty;
    memset(&empty, 0, sizeof empty);
    assert_false(gpo_stats_beats(&inc, &empty, 0));
}

/* Re-times three slots side by side; durations[slot] per run. */
static int32_t retime(const double *durations, double noise_floor, int32_t *order, int norder)
{
    gpo_retime r;
    assert_int_equal(gpo_retime_begin(&r, 3, 6), GPUOPT_OK);
    int32_t which, n = 0;
    while (gpo_retime_next(&r, &which)) {
        if (order && n < norder)
            order[n] = which;
        n++;
        /* The warm-up round is dropped: make it wildly off. */
        gpo_retime_record(&r, which, n <= 3 ? 1e12 : durations[which] * (1 + 0.001 * (n % 3)));
    }
    assert_int_equal(n, 18);
    gpo_stats st[3];
    int32_t win = gpo_retime_pick(&r, noise_floor, st);
    assert_int_equal(st[0].count, 5);
    assert_true(st[0].median < 1e12);
    gpo_retime_free(&r);
    return win;
}

static void final_retiming_interleaves_rotates_and_keeps_the_incumbent_within_noise(void **state)
{
    (void)state;
    int32_t order[9];
    const double within[] = {100, 99, 101};
    assert_int_equal(retime(within, GPO_NOISE_FLOOR, order, 9), 0);
    /* Round 0: 0 1 2; round 1: 1 2 0; round 2: 2 0 1. */
    const int32_t want[9] = {0, 1, 2, 1, 2, 0, 2, 0, 1};
    assert_memory_equal(order, want, sizeof want);
    const double faster[] = {100, 95, 90};
    assert_int_equal(retime(faster, GPO_NOISE_FLOOR, NULL, 0), 2);
    const double one[] = {100, 80, 101};
    assert_int_equal(retime(one, GPO_NOISE_FLOOR, NULL, 0), 1);

    gpo_retime r;
    assert_int_equal(gpo_retime_begin(&r, 0, 3), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpo_retime_begin(&r, 65, 3), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpo_retime_begin(&r, 2, 1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpo_retime_begin(&r, 2, 3), GPUOPT_OK);
    /* Nothing recorded yet. */
    assert_int_equal(gpo_retime_pick(&r, 0, NULL), -1);
    /* Out of turn is ignored. */
    gpo_retime_record(&r, 1, 5);
    int32_t which;
    assert_int_equal(gpo_retime_next(&r, &which), 1);
    assert_int_equal(which, 0);
    gpo_retime_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(statistics_use_linear_quantiles_and_sample_deviation),
        cmocka_unit_test(timing_warms_up_and_repeats_on_time_budgets_within_bounds),
        cmocka_unit_test(probe_prunes_candidates_twice_as_slow_as_the_best),
        cmocka_unit_test(timing_settings_and_inputs_are_checked),
        cmocka_unit_test(the_loop_measures_within_its_run_bounds_prunes_and_stops_at_a_failure),
        cmocka_unit_test(
            a_checked_first_run_counts_as_timed_when_the_probe_shows_it_was_not_slower),
        cmocka_unit_test(a_slower_first_run_was_the_warm_up_and_is_dropped),
        cmocka_unit_test(one_slow_probe_prunes_nothing_the_point_is_probed_again),
        cmocka_unit_test(the_p20_ranks_and_the_median_reports),
        cmocka_unit_test(challengers_within_noise_do_not_displace_the_incumbent),
        cmocka_unit_test(final_retiming_interleaves_rotates_and_keeps_the_incumbent_within_noise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
