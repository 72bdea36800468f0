/* The NVIDIA architecture table (src/arch/nvidia.c), shared by the CUDA and
 * OpenCL backends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arch/nvidia.h"
#include "gpuopt/gpuopt.h"

#define FP64 GPUOPT_FEATURE_FP64
#define FP16 GPUOPT_FEATURE_FP16
#define BF16 GPUOPT_FEATURE_BF16
#define TF32 GPUOPT_FEATURE_TF32
#define FP8 GPUOPT_FEATURE_FP8
#define INT8 GPUOPT_FEATURE_INT8
#define MMA GPUOPT_FEATURE_MATRIX_UNITS

/* Every capability the issue names, with the family, sm name and features
 * the CUDA Programming Guide and whitepapers give it. */
static const struct expect {
    int major, minor;
    const char *family, *sm;
    uint32_t features;
    int lanes, fp64_full;
} expected[] = {
    {3, 0, "kepler", "sm_30", FP64, 192, 0},
    {3, 5, "kepler", "sm_35", FP64, 192, 1},
    {3, 7, "kepler", "sm_37", FP64, 192, 1},
    {5, 0, "maxwell", "sm_50", FP64, 128, 0},
    {5, 2, "maxwell", "sm_52", FP64, 128, 0},
    {5, 3, "maxwell", "sm_53", FP64 | FP16, 128, 0},
    {6, 0, "pascal", "sm_60", FP64 | FP16, 64, 1},
    {6, 1, "pascal", "sm_61", FP64 | INT8, 128, 0},
    {6, 2, "pascal", "sm_62", FP64 | FP16 | INT8, 128, 0},
    {7, 0, "volta", "sm_70", FP64 | FP16 | INT8 | MMA, 64, 1},
    {7, 2, "volta", "sm_72", FP64 | FP16 | INT8 | MMA, 64, 0},
    {7, 5, "turing", "sm_75", FP64 | FP16 | INT8 | MMA, 64, 0},
    {8, 0, "ampere", "sm_80", FP64 | FP16 | INT8 | MMA | BF16 | TF32, 64, 1},
    {8, 6, "ampere", "sm_86", FP64 | FP16 | INT8 | MMA | BF16 | TF32, 128, 0},
    {8, 7, "ampere", "sm_87", FP64 | FP16 | INT8 | MMA | BF16 | TF32, 128, 0},
    {8, 9, "ada", "sm_89", FP64 | FP16 | INT8 | MMA | BF16 | TF32 | FP8, 128, 0},
    {9, 0, "hopper", "sm_90", FP64 | FP16 | INT8 | MMA | BF16 | TF32 | FP8, 128, 1},
    {10, 0, "blackwell", "sm_100", FP64 | FP16 | INT8 | MMA | BF16 | TF32 | FP8, 128, 1},
    {10, 3, "blackwell", "sm_103", FP64 | FP16 | INT8 | MMA | BF16 | TF32 | FP8, 128, 0},
    {11, 0, "blackwell", "sm_110", FP64 | FP16 | INT8 | MMA | BF16 | TF32 | FP8, 128, 0},
    {12, 0, "blackwell", "sm_120", FP64 | FP16 | INT8 | MMA | BF16 | TF32 | FP8, 128, 0},
    {12, 1, "blackwell", "sm_121", FP64 | FP16 | INT8 | MMA | BF16 | TF32 | FP8, 128, 0},
};

static void every_known_capability_has_its_family_sm_name_and_features(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const struct expect *e = &expected[i];
        gpo_arch_nvidia_info a;
        assert_int_equal(gpo_arch_nvidia_lookup(e->major, e->minor, &a), 0);
        assert_string_equal(a.family, e->family);
        assert_string_equal(a.sm_name, e->sm);
        assert_int_equal(a.cc_major, e->major);
        assert_int_equal(a.cc_minor, e->minor);
        assert_int_equal(a.features, e->features);
        assert_int_equal(a.features_known, FP64 | FP16 | BF16 | TF32 | FP8 | INT8 | MMA);
        assert_int_equal(a.fp32_lanes_per_sm, e->lanes);
        assert_int_equal(a.fp64_full_rate, e->fp64_full);
        assert_int_equal(a.extrapolated, 0);
    }
}

static void capability_past_the_table_is_extrapolated_from_the_newest_family(void **state)
{
    (void)state;
    gpo_arch_nvidia_info a, newest;
    assert_int_equal(gpo_arch_nvidia_lookup(13, 0, &a), 0);
    assert_int_equal(gpo_arch_nvidia_lookup(12, 1, &newest), 0);
    assert_int_equal(a.cc_major, 13);
    assert_int_equal(a.cc_minor, 0);
    assert_string_equal(a.sm_name, "sm_130");
    assert_string_equal(a.family, "newer-than-blackwell");
    assert_int_equal(a.features, newest.features);
    assert_int_equal(a.fp32_lanes_per_sm, newest.fp32_lanes_per_sm);
    assert_int_equal(a.extrapolated, 1);

    /* Far in the future: still numbers, never a crash. */
    assert_int_equal(gpo_arch_nvidia_lookup(99, 9, &a), 0);
    assert_string_equal(a.sm_name, "sm_999");
    assert_int_equal(a.extrapolated, 1);
}

static void unknown_minor_inherits_its_major_and_is_flagged(void **state)
{
    (void)state;
    gpo_arch_nvidia_info a;
    /* 12.2 does not exist yet: Blackwell facts of 12.1, flagged. */
    assert_int_equal(gpo_arch_nvidia_lookup(12, 2, &a), 0);
    assert_string_equal(a.family, "blackwell");
    assert_string_equal(a.sm_name, "sm_122");
    assert_int_equal(a.extrapolated, 1);
    /* 8.8 (listed by nvcc 13.0, undocumented): the newest 8.x at or below. */
    assert_int_equal(gpo_arch_nvidia_lookup(8, 8, &a), 0);
    assert_string_equal(a.family, "ampere");
    assert_int_equal(a.extrapolated, 1);
    /* 4.x never existed: Kepler's facts, flagged. */
    assert_int_equal(gpo_arch_nvidia_lookup(4, 0, &a), 0);
    assert_string_equal(a.family, "kepler");
    assert_int_equal(a.extrapolated, 1);
}

static void pre_kepler_capabilities_are_known_too(void **state)
{
    (void)state;
    gpo_arch_nvidia_info a;
    assert_int_equal(gpo_arch_nvidia_lookup(2, 0, &a), 0);
    assert_string_equal(a.family, "fermi");
    assert_int_equal(a.extrapolated, 0);
    assert_int_equal(gpo_arch_nvidia_lookup(1, 0, &a), 0);
    assert_string_equal(a.family, "tesla");
    assert_int_equal(a.features & FP64, 0);
    assert_int_equal(gpo_arch_nvidia_lookup(1, 3, &a), 0);
    assert_int_equal(a.features & FP64, FP64);
}

static void non_capabilities_and_null_output_are_refused(void **state)
{
    (void)state;
    gpo_arch_nvidia_info a;
    memset(&a, 0x5a, sizeof a);
    assert_int_equal(gpo_arch_nvidia_lookup(0, 0, &a), -1);
    assert_int_equal(gpo_arch_nvidia_lookup(-1, 5, &a), -1);
    assert_int_equal(gpo_arch_nvidia_lookup(8, -1, &a), -1);
    assert_int_equal(gpo_arch_nvidia_lookup(-2147483647 - 1, 0, &a), -1);
    assert_int_equal(gpo_arch_nvidia_lookup(9, 0, NULL), -1);
    /* Huge numbers are numbers: formatted, not overflowed. */
    assert_int_equal(gpo_arch_nvidia_lookup(2147483647, 2147483647, &a), 0);
    assert_int_equal(a.extrapolated, 1);
    assert_true(strlen(a.sm_name) < sizeof a.sm_name);
    assert_true(strlen(a.family) < sizeof a.family);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_known_capability_has_its_family_sm_name_and_features),
        cmocka_unit_test(capability_past_the_table_is_extrapolated_from_the_newest_family),
        cmocka_unit_test(unknown_minor_inherits_its_major_and_is_flagged),
        cmocka_unit_test(pre_kepler_capabilities_are_known_too),
        cmocka_unit_test(non_capabilities_and_null_output_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
