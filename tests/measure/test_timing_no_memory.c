/* The timing controller when memory runs out after gpo_timing_begin: the
 * probe's prune decision and the final statistics are the same as with
 * memory to spare. Before, the probe median of over 64 runs read the first
 * sample when its sorting buffer could not be allocated (a different prune
 * decision), and finishing over 128 runs failed (-1, which the tuner took
 * for a measured candidate with zeroed statistics). Every malloc of this
 * program goes through the wrapper below (ld --wrap=malloc). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "measure/timing.h"

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);

static int out_of_memory;

void *__wrap_malloc(size_t n)
{
    return out_of_memory ? NULL : __real_malloc(n);
}

/* Up to 200 timed runs, 150 of them the probe; every run is over twice the
 * best (100 ns), so the probe's p20 is too and the candidate is
 * pruned (after its second probe). */
static int32_t time_slow_candidate(int starve, gpo_stats *st)
{
    gpo_timing_settings set = {0, 3.6e6, 200, 200, 150, 2.0};
    gpo_timing t;
    assert_int_equal(gpo_timing_begin(&t, &set, 100), GPUOPT_OK);
    out_of_memory = starve;
    int runs = 0;
    while (gpo_timing_next(&t) != GPO_TIMING_DONE)
        gpo_timing_record(&t, 1000 + runs++);
    int32_t status = gpo_timing_finish(&t, st);
    out_of_memory = 0;
    gpo_timing_free(&t);
    return status;
}

static void timing_allocates_nothing_after_it_begins(void **state)
{
    (void)state;
    gpo_stats fed, starved;
    assert_int_equal(time_slow_candidate(0, &fed), GPO_TIMED_PRUNED);
    assert_int_equal(time_slow_candidate(1, &starved), GPO_TIMED_PRUNED);
    assert_int_equal(starved.count, fed.count);
    assert_true(starved.median == fed.median);
    assert_true(starved.mean == fed.mean);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(timing_allocates_nothing_after_it_begins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
