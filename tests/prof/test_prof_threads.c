/* Threads hammering profilers: gpuopt.h says begin, count and end may be
 * called by any number of threads at once on one profiler, and report
 * while they record. Run under the sanitizer builds (ASan/UBSan here; the
 * same file under ThreadSanitizer where that build exists), these show no
 * race, no lost or doubled section and no leak; the counts are exact.
 * Public API only. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
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

#define THREADS 8
#define ROUNDS 2000
#define PROFILERS 6 /* more than a thread's cache of profilers holds */

#define ctx prof_test_ctx

static gpuopt_profiler *new_profiler(void)
{
    return prof_test_profiler(ctx, NULL, 0, NULL);
}

#define summary prof_test_summary
#define number prof_test_num

/* The row of `name` at `depth` (rows are looked up by path). */
static const cJSON *row(const cJSON *j, const char *name, int depth)
{
    char path[64];
    snprintf(path, sizeof path, "%s%s", depth ? "frame/" : "", name);
    return prof_test_row(j, path);
}

typedef struct work {
    gpuopt_profiler *p;
    int index;
    int failures; /* calls that returned other than expected */
} work;

/* Each round: a frame with a count, a phase inside named by the thread's
 * parity (so threads share some names and not others), and every 100th
 * round a stray end, which must be refused and counted. */
static void *hammer(void *arg)
{
    work *w = arg;
    static const char *const phase[] = {"even-phase", "odd-phase"};
    for (int i = 0; i < ROUNDS; i++) {
        w->failures += gpuopt_profiler_begin(w->p, "frame") != GPUOPT_OK;
        w->failures += gpuopt_profiler_count(w->p, GPUOPT_COUNT_ITEMS, 2) != GPUOPT_OK;
        w->failures += gpuopt_profiler_begin(w->p, phase[w->index % 2]) != GPUOPT_OK;
        w->failures += gpuopt_profiler_count(w->p, GPUOPT_COUNT_BYTES, 64) != GPUOPT_OK;
        w->failures += gpuopt_profiler_end(w->p, phase[w->index % 2]) != GPUOPT_OK;
        w->failures += gpuopt_profiler_end(w->p, "frame") != GPUOPT_OK;
        if (i % 100 == 0)
            w->failures += gpuopt_profiler_end(w->p, "frame") != GPUOPT_ERR_NESTING;
    }
    return NULL;
}

static atomic_int stop_reading;

/* Reports in every format while the others record. */
static void *reader(void *arg)
{
    gpuopt_profiler *p = arg;
    int rounds = 0;
    while (!atomic_load(&stop_reading) || rounds < 3) {
        for (int32_t f = GPUOPT_PROFILE_TABLE; f <= GPUOPT_PROFILE_SVG; f++) {
            char *text = NULL;
            if (gpuopt_profiler_report(p, f, &text) != GPUOPT_OK)
                return (void *)1;
            gpuopt_free(text);
        }
        rounds++;
    }
    return NULL;
}

static void threads_hammering_one_profiler_lose_and_double_nothing(void **state)
{
    (void)state;
    gpuopt_profiler *p = new_profiler();
    pthread_t t[THREADS], r;
    work w[THREADS];
    atomic_store(&stop_reading, 0);
    assert_int_equal(pthread_create(&r, NULL, reader, p), 0);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (work){p, i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, hammer, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(w[i].failures, 0);
    }
    atomic_store(&stop_reading, 1);
    void *read_failed = NULL;
    assert_int_equal(pthread_join(r, &read_failed), 0);
    assert_null(read_failed);

    cJSON *j = summary(p);
    assert_int_equal(number(j, "threads"), THREADS);
    assert_int_equal(number(j, "sections_kept"), THREADS * ROUNDS * 2);
    assert_int_equal(number(j, "nesting_errors"), THREADS * (ROUNDS / 100));
    assert_int_equal(number(j, "open_sections"), 0);
    const cJSON *frame = row(j, "frame", 0);
    assert_non_null(frame);
    assert_int_equal(number(frame, "count"), THREADS * ROUNDS);
    assert_int_equal(number(frame, "items"), THREADS * ROUNDS * 2);
    const cJSON *even = row(j, "even-phase", 1), *odd = row(j, "odd-phase", 1);
    assert_non_null(even);
    assert_non_null(odd);
    assert_int_equal(number(even, "count") + number(odd, "count"), THREADS * ROUNDS);
    assert_int_equal(number(even, "bytes"), THREADS / 2 * ROUNDS * 64);
    cJSON_Delete(j);
    gpuopt_profiler_destroy(p);
}

/* Threads alternating between more profilers than their cache holds, and
 * short-lived threads, one after the other. */
typedef struct many {
    gpuopt_profiler **p;
    int failures;
} many;

static void *alternate(void *arg)
{
    many *m = arg;
    for (int i = 0; i < 300; i++) {
        gpuopt_profiler *p = m->p[i % PROFILERS];
        m->failures += gpuopt_profiler_begin(p, "step") != GPUOPT_OK;
        m->failures += gpuopt_profiler_end(p, "step") != GPUOPT_OK;
    }
    return NULL;
}

static void threads_switching_between_many_profilers_keep_each_ones_sections(void **state)
{
    (void)state;
    gpuopt_profiler *p[PROFILERS];
    for (int i = 0; i < PROFILERS; i++)
        p[i] = new_profiler();
    enum { WAVES = 5, PER_WAVE = 4 };
    for (int wave = 0; wave < WAVES; wave++) {
        pthread_t t[PER_WAVE];
        many m[PER_WAVE];
        for (int i = 0; i < PER_WAVE; i++) {
            m[i] = (many){p, 0};
            assert_int_equal(pthread_create(&t[i], NULL, alternate, &m[i]), 0);
        }
        for (int i = 0; i < PER_WAVE; i++) {
            assert_int_equal(pthread_join(t[i], NULL), 0);
            assert_int_equal(m[i].failures, 0);
        }
    }
    for (int i = 0; i < PROFILERS; i++) {
        cJSON *j = summary(p[i]);
        assert_int_equal(number(j, "threads"), WAVES * PER_WAVE);
        assert_int_equal(number(row(j, "step", 0), "count"), WAVES * PER_WAVE * 300 / PROFILERS);
        cJSON_Delete(j);
        gpuopt_profiler_destroy(p[i]);
    }
}

/* A profiler destroyed and another made at once: a thread's cached state
 * of the old one is never taken for the new one's. */
static void a_new_profiler_never_inherits_a_destroyed_ones_thread_state(void **state)
{
    (void)state;
    for (int i = 0; i < 50; i++) {
        gpuopt_profiler *p = new_profiler();
        assert_int_equal(gpuopt_profiler_begin(p, "left-open"), GPUOPT_OK);
        gpuopt_profiler_destroy(p);
        p = new_profiler();
        /* The new one has nothing open on this thread. */
        assert_int_equal(gpuopt_profiler_end(p, NULL), GPUOPT_ERR_NESTING);
        gpuopt_profiler_destroy(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_hammering_one_profiler_lose_and_double_nothing),
        cmocka_unit_test(threads_switching_between_many_profilers_keep_each_ones_sections),
        cmocka_unit_test(a_new_profiler_never_inherits_a_destroyed_ones_thread_state),
    };
    return cmocka_run_group_tests(tests, prof_test_group_setup, prof_test_group_teardown);
}
