/* The AMD architecture table (src/arch/amd.c): families, wavefronts, matrix units and
 * features by gfx target; unknown targets extrapolated; KFD versions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"
#include "arch/amd.h"

typedef struct expect {
    const char *gfx;
    const char *family;
    int wavefront;
    int matrix;
    uint32_t has;   /* features that must be present */
    uint32_t lacks; /* features that must be absent */
    int lanes;
    int fp64_full;
} expect;

#define FP64 GPUOPT_FEATURE_FP64
#define FP16 GPUOPT_FEATURE_FP16
#define BF16 GPUOPT_FEATURE_BF16
#define TF32 GPUOPT_FEATURE_TF32
#define FP8 GPUOPT_FEATURE_FP8
#define INT8 GPUOPT_FEATURE_INT8
#define MX GPUOPT_FEATURE_MATRIX_UNITS

static const expect known[] = {
    {"gfx803", "gcn4", 64, GPO_ARCH_AMD_MATRIX_NONE, FP64 | FP16, BF16 | FP8 | INT8 | MX, 64, 0},
    {"gfx900", "gcn5", 64, GPO_ARCH_AMD_MATRIX_NONE, FP64 | FP16, BF16 | INT8 | MX, 64, 0},
    {"gfx906", "gcn5", 64, GPO_ARCH_AMD_MATRIX_NONE, FP64 | FP16 | INT8, BF16 | MX, 64, 1},
    {"gfx908", "cdna1", 64, GPO_ARCH_AMD_MATRIX_MFMA, FP16 | BF16 | INT8 | MX, FP8 | TF32, 64, 1},
    {"gfx90a", "cdna2", 64, GPO_ARCH_AMD_MATRIX_MFMA, FP64 | BF16 | INT8 | MX, FP8 | TF32, 64, 1},
    {"gfx940", "cdna3", 64, GPO_ARCH_AMD_MATRIX_MFMA, BF16 | FP8 | TF32 | MX, 0, 128, 1},
    {"gfx942", "cdna3", 64, GPO_ARCH_AMD_MATRIX_MFMA, BF16 | FP8 | TF32 | MX, 0, 128, 1},
    {"gfx950", "cdna4", 64, GPO_ARCH_AMD_MATRIX_MFMA, BF16 | FP8 | MX, TF32, 128, 1},
    {"gfx1010", "rdna1", 32, GPO_ARCH_AMD_MATRIX_NONE, FP16, INT8 | MX | BF16, 64, 0},
    {"gfx1012", "rdna1", 32, GPO_ARCH_AMD_MATRIX_NONE, FP16 | INT8, MX, 64, 0},
    {"gfx1030", "rdna2", 32, GPO_ARCH_AMD_MATRIX_NONE, FP16 | INT8, MX | BF16 | FP8, 64, 0},
    {"gfx1036", "rdna2", 32, GPO_ARCH_AMD_MATRIX_NONE, FP16 | INT8, MX, 64, 0},
    {"gfx1100", "rdna3", 32, GPO_ARCH_AMD_MATRIX_WMMA, BF16 | INT8 | MX, FP8 | TF32, 128, 0},
    {"gfx1103", "rdna3", 32, GPO_ARCH_AMD_MATRIX_WMMA, BF16 | MX, FP8, 128, 0},
    {"gfx1151", "rdna3.5", 32, GPO_ARCH_AMD_MATRIX_WMMA, BF16 | MX, FP8, 128, 0},
    {"gfx1201", "rdna4", 32, GPO_ARCH_AMD_MATRIX_WMMA, BF16 | FP8 | MX, TF32, 128, 0},
};

static void known_targets_give_family_wavefront_matrix_and_features(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const expect *e = &known[i];
        gpo_arch_amd_info a;
        assert_int_equal(gpo_arch_amd_lookup(e->gfx, &a), 0);
        assert_string_equal(a.gfx, e->gfx);
        assert_string_equal(a.family, e->family);
        assert_int_equal(a.wavefront, e->wavefront);
        assert_int_equal(a.matrix, e->matrix);
        assert_int_equal(a.features & e->has, e->has);
        assert_int_equal(a.features & e->lacks, 0);
        assert_int_equal(a.features_known, FP64 | FP16 | BF16 | TF32 | FP8 | INT8 | MX);
        assert_int_equal(a.fp32_lanes_per_cu, e->lanes);
        assert_int_equal(a.fp64_full_rate, e->fp64_full);
        assert_int_equal(a.extrapolated, 0);
        /* Matrix units and the feature bit agree. */
        assert_int_equal(!!(a.features & MX), a.matrix != GPO_ARCH_AMD_MATRIX_NONE);
    }
}

static void target_id_suffixes_and_case_are_ignored(void **state)
{
    gpo_arch_amd_info a;
    (void)state;
    assert_int_equal(gpo_arch_amd_lookup("gfx90a:sramecc+:xnack-", &a), 0);
    assert_string_equal(a.gfx, "gfx90a");
    assert_string_equal(a.family, "cdna2");
    assert_int_equal(gpo_arch_amd_lookup("gfx90A", &a), 0);
    assert_string_equal(a.gfx, "gfx90a");
    assert_int_equal(a.extrapolated, 0);
}

static void unknown_targets_borrow_the_nearest_older_family_flagged(void **state)
{
    static const struct {
        const char *gfx, *family;
        int wavefront;
    } cases[] = {
        {"gfx1250", "rdna4", 32},                            /* newer than every row */
        {"gfx1300", "rdna4", 32},   {"gfx943", "cdna3", 64}, /* between gfx942 and gfx950 */
        {"gfx960", "cdna4", 64},    {"gfx90b", "cdna2", 64},
        {"gfx1037", "rdna2", 32},   {"gfx1104", "rdna3", 32},
        {"gfx1160", "rdna3.5", 32}, {"gfx701", "gcn4", 64}, /* older than every row: the oldest */
        {"gfx810", "gcn4", 64},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpo_arch_amd_info a;
        assert_int_equal(gpo_arch_amd_lookup(cases[i].gfx, &a), 0);
        assert_string_equal(a.gfx, cases[i].gfx);
        assert_string_equal(a.family, cases[i].family);
        assert_int_equal(a.wavefront, cases[i].wavefront);
        assert_int_equal(a.extrapolated, 1);
        assert_true(a.features != 0); /* never "unknown" for everything */
    }
}

static void malformed_targets_and_null_are_refused(void **state)
{
    static const char *const bad[] = {"",       "gfx",       "gfx9",         "gfx90",
                                      "gfxzz1", "sm_90",     "gfx9-generic", "gfx10-3-generic",
                                      "gfx012", "gfx123456", "GFX90a",       "x86-64"};
    gpo_arch_amd_info a;
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&a, 0x5a, sizeof a);
        assert_int_equal(gpo_arch_amd_lookup(bad[i], &a), -1);
        assert_string_equal(a.gfx, ""); /* cleared, never stale */
    }
    assert_int_equal(gpo_arch_amd_lookup(NULL, &a), -1);
}

static void kfd_versions_become_target_names(void **state)
{
    static const struct {
        uint32_t v;
        const char *gfx;
    } cases[] = {{90402, "gfx942"},   {90010, "gfx90a"},   {110000, "gfx1100"},
                 {80003, "gfx803"},   {90012, "gfx90c"},   {100300, "gfx1030"},
                 {110003, "gfx1103"}, {120001, "gfx1201"}, {90500, "gfx950"}};
    char out[16];
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(gpo_arch_amd_gfx_from_version(cases[i].v, out, sizeof out), 0);
        assert_string_equal(out, cases[i].gfx);
    }
}

static void kfd_version_nonsense_and_small_buffers_are_refused(void **state)
{
    char out[16];
    char tiny[4];
    (void)state;
    assert_int_equal(gpo_arch_amd_gfx_from_version(0, out, sizeof out), -1);
    assert_string_equal(out, "");
    assert_int_equal(gpo_arch_amd_gfx_from_version(91600, out, sizeof out), -1);   /* minor 16 */
    assert_int_equal(gpo_arch_amd_gfx_from_version(90016, out, sizeof out), -1);   /* stepping 16 */
    assert_int_equal(gpo_arch_amd_gfx_from_version(1000000, out, sizeof out), -1); /* major 100 */
    assert_int_equal(gpo_arch_amd_gfx_from_version(90402, tiny, sizeof tiny), -1);
    assert_string_equal(tiny, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_targets_give_family_wavefront_matrix_and_features),
        cmocka_unit_test(target_id_suffixes_and_case_are_ignored),
        cmocka_unit_test(unknown_targets_borrow_the_nearest_older_family_flagged),
        cmocka_unit_test(malformed_targets_and_null_are_refused),
        cmocka_unit_test(kfd_versions_become_target_names),
        cmocka_unit_test(kfd_version_nonsense_and_small_buffers_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
