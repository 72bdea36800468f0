/* CUDA_VISIBLE_DEVICES as the CUDA driver reads it (cuda_visible.c), the
 * rule the doctor's visible_devices check applies for CUDA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_visible.h"

static void empty_or_negative_visibility_list_shows_nothing(void **state)
{
    (void)state;
    gpo_dr_visible v;
    gpo_cuda_visible_parse("", 2, NULL, 0, &v);
    assert_int_equal(v.valid, 0);
    assert_int_equal(v.total, 0);
    gpo_cuda_visible_parse("  ", 2, NULL, 0, &v);
    assert_int_equal(v.total, 0);
    gpo_cuda_visible_parse("-1", 2, NULL, 0, &v);
    assert_int_equal(v.valid, 0);
    assert_string_equal(v.bad, "-1");
    assert_non_null(strstr(v.why_bad, "negative"));
    gpo_cuda_visible_parse(NULL, 2, NULL, 0, &v);
    assert_int_equal(v.valid, 0);
    assert_int_equal(v.total, 0);
}

static void visibility_list_stops_at_the_first_entry_that_is_not_a_device(void **state)
{
    (void)state;
    gpo_dr_visible v;
    gpo_cuda_visible_parse(" 0 , 1 ", 2, NULL, 0, &v);
    assert_int_equal(v.valid, 2);
    assert_string_equal(v.bad, "");
    gpo_cuda_visible_parse("0,abc,1", 2, NULL, 0, &v);
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.total, 3);
    assert_string_equal(v.bad, "abc");
    gpo_cuda_visible_parse("2,0", 2, NULL, 0, &v);
    assert_int_equal(v.valid, 0);
    assert_non_null(strstr(v.why_bad, "index 2, but the kernel lists 2 GPUs"));
    gpo_cuda_visible_parse("0,,1", 2, NULL, 0, &v);
    assert_int_equal(v.valid, 1);
    assert_non_null(strstr(v.why_bad, "empty"));
    gpo_cuda_visible_parse("99999999999999999999", -1, NULL, 0, &v);
    assert_int_equal(v.valid, 0);
    /* Unknown device count: indices are not range-checked. */
    gpo_cuda_visible_parse("7", -1, NULL, 0, &v);
    assert_int_equal(v.valid, 1);
}

static void visibility_uuids_match_by_prefix_and_mig_uuids_are_trusted(void **state)
{
    (void)state;
    const char *uuids[] = {"GPU-6f8b0d2e-4a5c-4e7a-9c1d-1e3f5a7b9c1d"};
    gpo_dr_visible v;
    gpo_cuda_visible_parse("GPU-6f8b0d2e", 1, uuids, 1, &v);
    assert_int_equal(v.valid, 1);
    gpo_cuda_visible_parse("gpu-6F8B", 1, uuids, 1, &v); /* not "GPU-": not a UUID entry */
    assert_int_equal(v.valid, 0);
    gpo_cuda_visible_parse("GPU-deadbeef", 1, uuids, 1, &v);
    assert_int_equal(v.valid, 0);
    assert_non_null(strstr(v.why_bad, "UUID"));
    gpo_cuda_visible_parse("MIG-1234", 1, uuids, 1, &v);
    assert_int_equal(v.valid, 1);
    /* Without known UUIDs, a GPU- entry cannot be checked and counts. */
    gpo_cuda_visible_parse("GPU-deadbeef", 1, NULL, 0, &v);
    assert_int_equal(v.valid, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_or_negative_visibility_list_shows_nothing),
        cmocka_unit_test(visibility_list_stops_at_the_first_entry_that_is_not_a_device),
        cmocka_unit_test(visibility_uuids_match_by_prefix_and_mig_uuids_are_trusted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
