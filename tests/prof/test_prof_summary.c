/* The summary's arithmetic, the trace's structure and device time, on a
 * clock the test drives (gpo_prof_set_clock) and a device timer that is a
 * test double of the runtime ops' marks, so every number is known: count,
 * total, mean, p50, p95, max, share of the parent, throughput, the clock
 * each section was timed with, and where the trace puts each slice. */
#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"
#include "prof_test.h"
#include "prof/record.h"
#include "prof/summary.h"

#define MS 1000000ull

static uint64_t now_ns = 1000 * MS;

static uint64_t test_clock(void *user)
{
    (void)user;
    return now_ns;
}

/* ---- a device timer test double ---------------------------------------------
 * A mark is the device clock's reading when it is recorded; the device
 * clock runs `device_ratio` times as fast as the host's from the moment
 * the anchor is recorded, so device times differ from host times by a known
 * factor. `fail_after` marks, recording fails. */
struct gpo_rt_mark {
    double at;
};

static double device_ratio = 0.5;
static int marks_left = 1 << 30;
static int live_marks;

static gpuopt_status mark_record(void *state, const gpo_route *route, void *stream,
                                 gpo_rt_mark **out)
{
    (void)state, (void)route;
    assert_ptr_equal(stream, &live_marks);
    if (marks_left-- <= 0)
        return gpo_fail(GPUOPT_ERR_DRIVER, "the test double's device went away");
    *out = malloc(sizeof **out);
    assert_non_null(*out);
    (*out)->at = (double)now_ns * device_ratio;
    live_marks++;
    return GPUOPT_OK;
}

static gpuopt_status mark_elapsed(void *state, const gpo_rt_mark *a, const gpo_rt_mark *b,
                                  double *ns)
{
    (void)state;
    *ns = b->at - a->at;
    return GPUOPT_OK;
}

static void mark_free(void *state, gpo_rt_mark *m)
{
    (void)state;
    live_marks--;
    free(m);
}

static const gpo_runtime_ops double_ops = {
    .mark_record = mark_record, .mark_elapsed = mark_elapsed, .mark_free = mark_free};

#define ctx prof_test_ctx

static gpuopt_profiler *driven_profiler(int device)
{
    gpuopt_profiler *p = prof_test_profiler(ctx, NULL, GPUOPT_PROFILER_NO_VENDOR_RANGES, NULL);
    now_ns = 1000 * MS;
    gpo_prof_set_clock(p, test_clock, NULL);
    if (device) {
        /* What create does for a backend with marks, with the double. */
        p->device_asked = 1;
        p->timer.ops = &double_ops;
        p->timer.stream = &live_marks;
        assert_int_equal(mark_record(NULL, NULL, &live_marks, &p->anchor), GPUOPT_OK);
        p->anchor_ns = now_ns;
        snprintf(p->device_clock, sizeof p->device_clock, "test-double events");
    }
    return p;
}

static void section(gpuopt_profiler *p, const char *name, uint64_t ms, uint64_t items,
                    uint64_t bytes)
{
    assert_int_equal(gpuopt_profiler_begin(p, name), GPUOPT_OK);
    if (items)
        assert_int_equal(gpuopt_profiler_count(p, GPUOPT_COUNT_ITEMS, items), GPUOPT_OK);
    if (bytes)
        assert_int_equal(gpuopt_profiler_count(p, GPUOPT_COUNT_BYTES, bytes), GPUOPT_OK);
    now_ns += ms * MS;
    assert_int_equal(gpuopt_profiler_end(p, name), GPUOPT_OK);
}

/* load_model 100 ms; four inferences of 10, 20, 30, 40 ms with 8 items
 * each, a matmul of 5, 15, 25, 35 ms inside each, 1 ms idle between; a
 * postprocess of 2 ms moving 1 MiB. */
static void three_phases(gpuopt_profiler *p)
{
    section(p, "load_model", 100, 0, 0);
    for (uint64_t i = 1; i <= 4; i++) {
        now_ns += MS;
        assert_int_equal(gpuopt_profiler_begin(p, "inference"), GPUOPT_OK);
        assert_int_equal(gpuopt_profiler_count(p, GPUOPT_COUNT_ITEMS, 8), GPUOPT_OK);
        section(p, "matmul", 10 * i - 5, 0, 0);
        now_ns += 5 * MS;
        assert_int_equal(gpuopt_profiler_end(p, "inference"), GPUOPT_OK);
    }
    section(p, "postprocess", 2, 0, 1 << 20);
}

#define summary prof_test_summary
#define num prof_test_num

/* The row of a section by name (every name here is used once). */
static const cJSON *row(const cJSON *j, const char *name)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(j, "sections"))
    {
        if (strcmp(prof_test_str(r, "name"), name) == 0)
            return r;
    }
    fail_msg("no row %s", name);
    return NULL;
}

#define assert_near(a, b)                                                                          \
    assert_true(fabs((double)(a) - (double)(b)) < 1e-6 * (1 + fabs((double)(b))))

static void the_summary_gives_count_total_mean_percentiles_max_share_and_throughput(void **state)
{
    (void)state;
    gpuopt_profiler *p = driven_profiler(0);
    three_phases(p);
    cJSON *j = summary(p);
    /* Wall: the first begin to the last end. */
    double wall = (100 + 4 * 1 + (10 + 20 + 30 + 40) + 2) * 1e6;
    assert_near(num(j, "wall_ns"), wall);

    const cJSON *inf = row(j, "inference");
    assert_int_equal(num(inf, "count"), 4);
    assert_near(num(inf, "total_ns"), 100e6);
    assert_near(num(inf, "mean_ns"), 25e6);
    /* Linear interpolation between order statistics: p50 between 20 and
     * 30 ms; p95 at 0.95 * 3 = 2.85, between 30 and 40 ms. */
    assert_near(num(inf, "p50_ns"), 25e6);
    assert_near(num(inf, "p95_ns"), 38.5e6);
    assert_near(num(inf, "max_ns"), 40e6);
    assert_near(num(inf, "share_of_parent"), 100e6 / wall);
    assert_near(num(inf, "items"), 32);
    assert_near(num(inf, "items_per_s"), 320); /* 32 items in 0.1 s */
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(inf, "bytes_per_s")));
    assert_string_equal(cJSON_GetObjectItem(inf, "clock")->valuestring, "host");

    const cJSON *mm = row(j, "matmul");
    assert_int_equal(num(mm, "depth"), 1);
    assert_near(num(mm, "total_ns"), 80e6);
    assert_near(num(mm, "share_of_parent"), 0.8);
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(mm, "path"), 0)->valuestring,
                        "inference");

    const cJSON *post = row(j, "postprocess");
    assert_near(num(post, "bytes_per_s"), (1 << 20) / 0.002);
    /* Rows in tree order: a parent, then its children, in the order begun. */
    const char *order[] = {"load_model", "inference", "matmul", "postprocess"};
    for (int i = 0; i < 4; i++)
        assert_string_equal(
            cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "sections"), i), "name")
                ->valuestring,
            order[i]);
    cJSON_Delete(j);

    char *table = NULL;
    assert_int_equal(gpuopt_profiler_report(p, GPUOPT_PROFILE_TABLE, &table), GPUOPT_OK);
    print_message("%s", table);
    assert_non_null(strstr(table,
                           "section      clock  count    total     mean      p50      p95      "
                           "max  share  throughput\n"));
    assert_non_null(strstr(table, "inference    host       4   100 ms  25.0 ms  25.0 ms  38.5 ms  "
                                  "40.0 ms  48.5%  320 items/s\n"));
    assert_non_null(strstr(table, "  matmul     host       4  80.0 ms  20.0 ms  20.0 ms  33.5 ms  "
                                  "35.0 ms  80.0%\n"));
    assert_non_null(strstr(table, "postprocess  host       1  2.00 ms  2.00 ms  2.00 ms  2.00 ms  "
                                  "2.00 ms   1.0%  524 MB/s\n"));
    assert_non_null(strstr(table, "wall time 206 ms (first begin to last end, 1 thread)"));
    gpuopt_free(table);
    gpuopt_profiler_destroy(p);
}

/* The trace's complete events of one thread, in file order. */
static void the_trace_nests_each_threads_slices_and_counts_throughput(void **state)
{
    (void)state;
    gpuopt_profiler *p = driven_profiler(0);
    three_phases(p);
    char *text = NULL;
    assert_int_equal(gpuopt_profiler_report(p, GPUOPT_PROFILE_TRACE, &text), GPUOPT_OK);
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    gpuopt_free(text);
    assert_string_equal(cJSON_GetObjectItem(j, "displayTimeUnit")->valuestring, "ms");
    const cJSON *ev;
    int slices = 0, counters = 0, names = 0;
    double inf_ts = -1, inf_end = -1;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(j, "traceEvents"))
    {
        const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
        const char *name = cJSON_GetObjectItem(ev, "name")->valuestring;
        assert_non_null(cJSON_GetObjectItem(ev, "pid"));
        if (strcmp(ph, "M") == 0) {
            names += strcmp(name, "thread_name") == 0;
            continue;
        }
        if (strcmp(ph, "C") == 0) {
            counters++;
            assert_true(strstr(name, " throughput") != NULL);
            continue;
        }
        assert_string_equal(ph, "X");
        slices++;
        double ts = num(ev, "ts"), dur = num(ev, "dur");
        if (strcmp(name, "inference") == 0) {
            inf_ts = ts;
            inf_end = ts + dur;
        } else if (strcmp(name, "matmul") == 0) {
            /* Inside the inference before it, which comes first in the file. */
            assert_true(ts >= inf_ts && ts + dur <= inf_end);
        }
        if (strcmp(name, "load_model") == 0) {
            assert_near(ts, 0);
            assert_near(dur, 100e3); /* microseconds */
        }
    }
    assert_int_equal(slices, 1 + 4 + 4 + 1);
    assert_int_equal(counters, 4 + 1); /* each inference, the postprocess */
    assert_int_equal(names, 1);
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
}

static void device_time_is_used_said_and_placed_on_a_device_track(void **state)
{
    (void)state;
    device_ratio = 0.5;
    marks_left = 1 << 30;
    gpuopt_profiler *p = driven_profiler(1);
    now_ns += 10 * MS;
    section(p, "kernel", 40, 0, 0);
    cJSON *j = summary(p);
    const cJSON *k = row(j, "kernel");
    assert_string_equal(cJSON_GetObjectItem(k, "clock")->valuestring, "device");
    assert_near(num(k, "total_ns"), 20e6); /* the device's 40 * 0.5 */
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "clock"), "device")->valuestring,
                        "test-double events");
    cJSON_Delete(j);
    /* Read marks are freed; only the anchor lives on. */
    assert_int_equal(live_marks, 1);

    char *text = NULL;
    assert_int_equal(gpuopt_profiler_report(p, GPUOPT_PROFILE_TRACE, &text), GPUOPT_OK);
    j = cJSON_Parse(text);
    gpuopt_free(text);
    const cJSON *ev;
    int device_slices = 0;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(j, "traceEvents"))
    {
        const cJSON *cat = cJSON_GetObjectItem(ev, "cat");
        if (!cat || strcmp(cat->valuestring, "device") != 0)
            continue;
        device_slices++;
        /* The anchor at the profiler's creation is the device timeline's
         * zero: 10 ms of host time later is 5 ms of device time later. */
        assert_near(num(ev, "ts"), 5e3);
        assert_near(num(ev, "dur"), 20e3);
        assert_true(num(ev, "tid") >= 4194304);
    }
    assert_int_equal(device_slices, 1);
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    assert_int_equal(live_marks, 0);
}

static void device_time_that_fails_turns_host_and_says_why(void **state)
{
    (void)state;
    device_ratio = 0.5;
    marks_left = 1 << 30;
    gpuopt_profiler *p = driven_profiler(1);
    section(p, "early", 10, 0, 0);
    marks_left = 1; /* the next begin's mark works, its end's does not */
    section(p, "early", 10, 0, 0);
    section(p, "late", 10, 0, 0);
    cJSON *j = summary(p);
    /* early: one device-timed (5 ms), one host-timed (10 ms). */
    assert_string_equal(cJSON_GetObjectItem(row(j, "early"), "clock")->valuestring, "mixed");
    assert_near(num(row(j, "early"), "total_ns"), 15e6);
    assert_string_equal(cJSON_GetObjectItem(row(j, "late"), "clock")->valuestring, "host");
    const char *note =
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "clock"), "device_note")->valuestring;
    assert_non_null(strstr(note, "device time stopped"));
    assert_non_null(strstr(note, "the test double's device went away"));
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
    assert_int_equal(live_marks, 0);
}

static void unread_marks_and_open_sections_are_freed_with_the_profiler(void **state)
{
    (void)state;
    marks_left = 1 << 30;
    gpuopt_profiler *p = driven_profiler(1);
    section(p, "never-read", 1, 0, 0);
    assert_int_equal(gpuopt_profiler_begin(p, "left-open"), GPUOPT_OK);
    assert_int_equal(live_marks, 4);
    gpuopt_profiler_destroy(p);
    assert_int_equal(live_marks, 0);
}

/* Rows and formatting helpers on their own. */
/* On the driven clock, so which boxes are wide enough is known: every
 * section of three_phases gets a titled box, with its name written, and a
 * section of 1 ns in a 200 ms run (far under half a pixel) is left out
 * and counted, not drawn as a sliver. */
static void the_picture_draws_every_wide_section_with_its_name_and_counts_the_rest(void **state)
{
    (void)state;
    gpuopt_profiler *p = driven_profiler(0);
    three_phases(p);
    assert_int_equal(gpuopt_profiler_begin(p, "blink"), GPUOPT_OK);
    now_ns += 1;
    assert_int_equal(gpuopt_profiler_end(p, "blink"), GPUOPT_OK);
    char *svg = NULL;
    assert_int_equal(gpuopt_profiler_report(p, GPUOPT_PROFILE_SVG, &svg), GPUOPT_OK);
    assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_non_null(strstr(svg, "</svg>"));
    static const char *const drawn[] = {"load_model", "inference", "matmul", "postprocess"};
    for (size_t i = 0; i < sizeof drawn / sizeof drawn[0]; i++) {
        char title[64], text[64];
        snprintf(title, sizeof title, "<title>%s: ", drawn[i]);
        snprintf(text, sizeof text, ">%s</text>", drawn[i]);
        print_message("%s\n", drawn[i]);
        assert_non_null(strstr(svg, title));
        assert_non_null(strstr(svg, text));
    }
    assert_null(strstr(svg, "<title>blink: "));
    assert_non_null(strstr(svg, "; 1 section boxes too narrow or too deep to draw"));
    gpuopt_free(svg);
    gpuopt_profiler_destroy(p);
}

static void durations_print_with_three_digits_and_a_unit(void **state)
{
    (void)state;
    static const struct {
        double ns;
        const char *text;
    } cases[] = {{0, "0 ns"},        {812, "812 ns"},   {999.4, "999 ns"},
                 {999.6, "1.00 us"}, {3420, "3.42 us"}, {12345, "12.3 us"},
                 {120e6, "120 ms"},  {2.5e9, "2.50 s"}, {3600e9, "3600 s"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[32];
        gpo_prof_format_ns(cases[i].ns, out, sizeof out);
        assert_string_equal(out, cases[i].text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_summary_gives_count_total_mean_percentiles_max_share_and_throughput),
        cmocka_unit_test(the_trace_nests_each_threads_slices_and_counts_throughput),
        cmocka_unit_test(device_time_is_used_said_and_placed_on_a_device_track),
        cmocka_unit_test(device_time_that_fails_turns_host_and_says_why),
        cmocka_unit_test(unread_marks_and_open_sections_are_freed_with_the_profiler),
        cmocka_unit_test(the_picture_draws_every_wide_section_with_its_name_and_counts_the_rest),
        cmocka_unit_test(durations_print_with_three_digits_and_a_unit),
    };
    return cmocka_run_group_tests(tests, prof_test_group_setup, prof_test_group_teardown);
}
