/* ISA tables: feature names, x86-64 levels, microarchitecture naming by
 * family/model with its feature fallback, arm64 hwcaps and core names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cpu/cpu_facts.h"
#include "cpu/cpu_peak.h"
#include "cpu/cpuid_x86.h"
#include "cpu/cpuinfo_arm.h"
#include "cpu/x86_isa.h"
#include "cpu/x86_uarch.h"
#include "util/strutil.h"

#define X(f) GPO_BIT(GPO_X86_##f)
#define A(f) GPO_BIT(GPO_ARM_##f)

static const uint64_t V1 = X(CMOV) | X(CX8) | X(FXSR) | X(MMX) | X(SSE) | X(SSE2) | X(LM);
static const uint64_t V2 =
    X(CX16) | X(LAHF) | X(POPCNT) | X(SSE3) | X(SSE4_1) | X(SSE4_2) | X(SSSE3);
static const uint64_t V3 =
    X(AVX) | X(AVX2) | X(BMI1) | X(BMI2) | X(F16C) | X(FMA) | X(LZCNT) | X(MOVBE) | X(XSAVE);
static const uint64_t V4 = X(AVX512F) | X(AVX512BW) | X(AVX512CD) | X(AVX512DQ) | X(AVX512VL);

static gpo_cpu_facts f;

static void x86(const char *vendor, int family, int model, uint64_t isa)
{
    gpo_cpu_facts_init(&f);
    f.arch = GPO_CPU_ARCH_X86_64;
    gpo_strlcpy(f.vendor_id, vendor, sizeof f.vendor_id);
    f.family = family;
    f.model = model;
    f.isa = isa;
    gpo_x86_name_microarch(&f);
}

static void x86_flags_map_known_names_and_skip_the_rest(void **state)
{
    (void)state;
    uint64_t isa = gpo_x86_features_from_flags("fpu pni  sse4_2\tavx512_vnni bogus amx_tile sse4");
    assert_int_equal(isa, X(SSE3) | X(SSE4_2) | X(AVX512VNNI) | X(AMX_TILE));
    assert_int_equal(gpo_x86_features_from_flags(""), 0);
    assert_int_equal(gpo_x86_features_from_flags("   "), 0);
    assert_int_equal(gpo_x86_features_from_flags(NULL), 0);
    /* Every table entry round-trips through its own flag. */
    for (size_t i = 0; i < gpo_n_x86_isa_names; i++)
        assert_int_equal(gpo_x86_features_from_flags(gpo_x86_isa_names[i].flag),
                         GPO_BIT(gpo_x86_isa_names[i].bit));
}

static void x86_levels_need_every_feature_up_to_the_level(void **state)
{
    (void)state;
    assert_int_equal(gpo_x86_level(0), 0);
    assert_int_equal(gpo_x86_level(V1), 1);
    assert_int_equal(gpo_x86_level(V1 | V2), 2);
    assert_int_equal(gpo_x86_level(V1 | V2 | V3), 3);
    assert_int_equal(gpo_x86_level(V1 | V2 | V3 | V4), 4);
    /* AVX-512 without MOVBE is still level 2: levels are cumulative. */
    assert_int_equal(gpo_x86_level((V1 | V2 | V3 | V4) & ~X(MOVBE)), 2);
    assert_int_equal(gpo_x86_level(V1 | V3 | V4), 1);
}

static void x86_level_features_and_vendors_are_tabled(void **state)
{
    (void)state;
    assert_int_equal(gpo_x86_level_features(0), 0);
    assert_int_equal(gpo_x86_level_features(-5), 0);
    assert_int_equal(gpo_x86_level_features(1), V1);
    assert_int_equal(gpo_x86_level_features(3), V1 | V2 | V3);
    assert_int_equal(gpo_x86_level_features(99), V1 | V2 | V3 | V4);
    const char *name = "x";
    assert_int_equal(gpo_x86_vendor("AuthenticAMD", &name), GPO_X86_VENDOR_AMD);
    assert_string_equal(name, "AMD");
    assert_int_equal(gpo_x86_vendor("GenuineIntel", NULL), GPO_X86_VENDOR_INTEL);
    assert_int_equal(gpo_x86_vendor("  Shanghai  ", &name), GPO_X86_VENDOR_OTHER);
    assert_string_equal(name, "Zhaoxin");
    assert_int_equal(gpo_x86_vendor("Nobody", &name), GPO_X86_VENDOR_OTHER);
    assert_null(name);
    assert_int_equal(gpo_x86_vendor(NULL, &name), GPO_X86_VENDOR_OTHER);
    assert_null(name);
}

static void x86_family_model_table_names_the_part(void **state)
{
    (void)state;
    uint64_t spr = V1 | V2 | V3 | V4 | X(AVX512VNNI) | X(AVX512BF16) | X(AVX512FP16) | X(AMX_TILE) |
                   X(AVXVNNI);
    x86("GenuineIntel", 6, 0x8f, spr);
    assert_string_equal(f.microarch, "sapphirerapids");
    assert_string_equal(f.isa_level, "x86-64-v4");
    assert_string_equal(f.vendor_id, "GenuineIntel");
    assert_non_null(strstr(f.src_microarch, "in the family/model table"));
    x86("GenuineIntel", 6, 0x55, V1 | V2 | V3 | V4);
    assert_string_equal(f.microarch, "skylake-avx512");
    x86("AuthenticAMD", 0x17, 0x31, V1 | V2 | V3);
    assert_string_equal(f.microarch, "znver2");
    x86("AuthenticAMD", 0x19, 0x11, V1 | V2 | V3 | V4 | X(AVX512VNNI) | X(AVX512BF16));
    assert_string_equal(f.microarch, "znver4");
    x86("AuthenticAMD", 0x1a, 0x02, V1 | V2 | V3 | V4 | X(AVX512VNNI) | X(AVX512BF16) | X(AVXVNNI));
    assert_string_equal(f.microarch, "znver5");
    x86("HygonGenuine", 0x18, 0x01, V1 | V2 | V3);
    assert_string_equal(f.microarch, "znver1");
    /* A hypervisor hiding AVX from a Haswell: the silicon keeps its name,
     * the level says what may be used. */
    x86("GenuineIntel", 6, 0x3f, V1 | V2);
    assert_string_equal(f.microarch, "haswell");
    assert_string_equal(f.isa_level, "x86-64-v2");
}

static void x86_features_beyond_the_model_row_rename_by_features(void **state)
{
    (void)state;
    x86("GenuineIntel", 6, 0x55, V1 | V2 | V3 | V4 | X(AVX512VNNI));
    assert_string_equal(f.microarch, "cascadelake");
    x86("GenuineIntel", 6, 0x55, V1 | V2 | V3 | V4 | X(AVX512VNNI) | X(AVX512BF16));
    assert_string_equal(f.microarch, "cooperlake");
    x86("GenuineIntel", 6, 0xa7,
        V1 | V2 | V3 | V4 | X(AVX512VNNI) | X(AVX512FP16) | X(AMX_TILE) | X(AVX512BF16));
    assert_string_equal(f.microarch, "sapphirerapids");
    assert_non_null(strstr(f.src_microarch, "rocketlake"));
    assert_non_null(strstr(f.src_microarch, "amx_tile"));
}

static void x86_unknown_models_and_vendors_fall_back_to_features_or_level(void **state)
{
    (void)state;
    x86("GenuineIntel", 6, 0xfe, V1 | V2 | V3 | X(ADX) | X(CLFLUSHOPT));
    assert_string_equal(f.microarch, "skylake");
    assert_non_null(strstr(f.src_microarch, "not in the table"));
    x86("AuthenticAMD", 0x30, 0x00, V1 | V2 | V3 | V4 | X(AVXVNNI));
    assert_string_equal(f.microarch, "znver5");
    x86("CentaurHauls", 6, 0x0f, V1 | V2 | V3);
    assert_string_equal(f.microarch, "x86-64-v3");
    x86("", -1, -1, 0);
    assert_string_equal(f.microarch, "x86-64");
    assert_string_equal(f.isa_level, "x86-64");
    assert_int_equal(f.x86_level, 0);
}

static void arm_hwcaps_map_to_features(void **state)
{
    (void)state;
    /* AT_HWCAP: FP 0, ASIMD 1, ASIMDHP 10, ASIMDDP 20, SVE 22; AT_HWCAP2:
     * SVE2 1, I8MM 13, BF16 14, SME 23 (uapi asm/hwcap.h). */
    uint64_t isa =
        gpo_arm_features_from_hwcap((1u << 0) | (1u << 1) | (1u << 10) | (1u << 20) | (1u << 22),
                                    (1u << 1) | (1u << 13) | (1u << 14) | (1u << 23));
    assert_int_equal(isa, A(FP) | A(ASIMD) | A(ASIMDHP) | A(ASIMDDP) | A(SVE) | A(SVE2) | A(I8MM) |
                              A(BF16) | A(SME));
    assert_int_equal(gpo_arm_features_from_hwcap(0, 0), 0);
    assert_int_equal(gpo_arm_features_from_names("fp asimd bogus sve2"),
                     A(FP) | A(ASIMD) | A(SVE2));
    assert_int_equal(gpo_arm_features_from_names(NULL), 0);
    for (size_t i = 0; i < gpo_n_arm_isa_names; i++)
        assert_int_equal(gpo_arm_features_from_names(gpo_arm_isa_names[i].flag),
                         GPO_BIT(gpo_arm_isa_names[i].bit));
}

static void arm_cpuinfo_gives_midr_and_features(void **state)
{
    (void)state;
    gpo_cpu_facts_init(&f);
    const char *text = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd asimdhp asimddp "
                       "dcpop atomics crc32 asimdrdm\nCPU implementer\t: 0x41\n"
                       "CPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\n"
                       "CPU revision\t: 1\n\nprocessor\t: 1\nCPU implementer\t: 0x41\n";
    assert_int_equal(gpo_arm_parse_cpuinfo(text, &f), 0);
    assert_int_equal(f.implementer, 0x41);
    assert_int_equal(f.part, 0xd0c);
    assert_int_equal(f.variant, 3);
    assert_int_equal(f.revision, 1);
    assert_string_equal(f.vendor_id, "0x41");
    gpo_arm_name_core(&f);
    assert_string_equal(f.microarch, "neoverse-n1");
    assert_string_equal(f.isa_level, "armv8.2-a");
    assert_string_equal(f.vendor, "Arm");
    assert_string_equal(f.model_name, "Arm neoverse-n1");
    assert_int_equal(gpo_arm_parse_cpuinfo("processor : 0\n", &f), -1);
    assert_int_equal(gpo_arm_parse_cpuinfo("CPU implementer : 0x1000\n", &f), -1);
    assert_int_equal(gpo_arm_parse_cpuinfo(NULL, &f), -1);
}

static void arm_unknown_core_gets_level_from_features(void **state)
{
    (void)state;
    static const struct {
        uint64_t isa;
        const char *level;
    } cases[] = {
        {A(FP) | A(ASIMD), "armv8-a"},
        {A(ATOMICS) | A(ASIMDRDM) | A(CRC32), "armv8.1-a"},
        {A(DCPOP) | A(ATOMICS), "armv8.2-a"},
        {A(JSCVT) | A(FCMA) | A(LRCPC) | A(DCPOP), "armv8.3-a"},
        {A(DIT) | A(USCAT) | A(ILRCPC) | A(FLAGM), "armv8.4-a"},
        {A(I8MM) | A(BF16), "armv8.6-a"},
        {A(SVE2) | A(SVE), "armv9-a"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpo_cpu_facts_init(&f);
        f.arch = GPO_CPU_ARCH_ARM64;
        f.implementer = 0x99;
        f.part = 0x123;
        f.isa = cases[i].isa;
        gpo_arm_name_core(&f);
        assert_string_equal(f.microarch, "generic");
        assert_string_equal(f.isa_level, cases[i].level);
        assert_string_equal(f.vendor, "implementer 0x99");
        assert_non_null(strstr(f.src_microarch, "not in the core table"));
    }
}

static void collect(const char *name, void *user)
{
    char *out = user;
    size_t n = strlen(out);
    snprintf(out + n, 512 - n, "%s%s", n ? " " : "", name);
}

static void feature_names_hide_the_baseline_and_use_display_names(void **state)
{
    (void)state;
    char out[512] = "";
    x86("GenuineIntel", 6, 0x8f, V1 | X(SSE3) | X(SSE4_2) | X(AMX_TILE) | X(LZCNT));
    gpo_cpu_feature_names(&f, collect, out);
    assert_string_equal(out, "sse2 sse3 sse4.2 lzcnt amx");
    out[0] = '\0';
    gpo_cpu_facts_init(&f);
    f.arch = GPO_CPU_ARCH_ARM64;
    f.isa = A(FP) | A(ASIMD) | A(SVE) | A(ASIMDDP);
    gpo_cpu_feature_names(&f, collect, out);
    assert_string_equal(out, "neon dotprod sve");
    out[0] = '\0';
    f.arch = GPO_CPU_ARCH_UNKNOWN;
    gpo_cpu_feature_names(&f, collect, out);
    assert_string_equal(out, "");
}

static void lanes_and_flops_follow_the_widest_usable_vector(void **state)
{
    (void)state;
    x86("GenuineIntel", 6, 0x2a, V1 | V2);
    assert_int_equal(gpo_cpu_simd_lanes(&f), 4);
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 8); /* SSE: add + mul pipes */
    x86("GenuineIntel", 6, 0x2a, V1 | V2 | X(AVX));
    assert_int_equal(gpo_cpu_simd_lanes(&f), 8);
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 16); /* Sandy Bridge: no FMA */
    x86("GenuineIntel", 6, 0x3f, V1 | V2 | V3);
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 32); /* Haswell: 2 x 8-lane FMA */
    x86("GenuineIntel", 6, 0x55, V1 | V2 | V3 | V4);
    gpo_strlcpy(f.model_name, "Intel(R) Xeon(R) Platinum 8180 CPU @ 2.50GHz", sizeof f.model_name);
    assert_int_equal(gpo_cpu_simd_lanes(&f), 16);
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 64);
    f.clock_mhz = 2000;
    f.usable_cpus = 8;
    f.physical_cores = 4; /* SMT: only 4 cores' pipes */
    assert_true(gpo_cpu_est_gflops(&f) == 4 * 2.0 * 64);
    gpo_cpu_facts_init(&f);
    f.arch = GPO_CPU_ARCH_ARM64;
    f.isa = A(ASIMD) | A(SVE);
    f.sve_bits = 512;
    assert_int_equal(gpo_cpu_simd_lanes(&f), 16);
    f.sve_bits = 0; /* length unknown: NEON */
    assert_int_equal(gpo_cpu_simd_lanes(&f), 4);
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 16);
    f.arch = GPO_CPU_ARCH_UNKNOWN;
    assert_int_equal(gpo_cpu_simd_lanes(&f), 1);
}

static void zen4_runs_avx512_on_256_bit_pipes_so_32_flops_per_cycle(void **state)
{
    (void)state;
    char why[GPO_CPU_SRC_CAP];
    x86("AuthenticAMD", 0x19, 0x61, V1 | V2 | V3 | V4 | X(AVX512VNNI) | X(AVX512BF16));
    assert_string_equal(f.microarch, "znver4");
    assert_int_equal(gpo_cpu_simd_lanes(&f), 16); /* the ISA's widest vector */
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 32);
    gpo_cpu_flops_source(&f, why, sizeof why);
    assert_non_null(strstr(why, "double-pumped"));
    /* Issue 10's machine: 2 Zen 4 cores at 2594 MHz were counted at 64
     * FLOP/cycle, 332 GFLOP/s, twice their peak. */
    f.clock_mhz = 2594;
    f.usable_cpus = 2;
    f.physical_cores = 2;
    assert_true(gpo_cpu_est_gflops(&f) == 2 * 2.594 * 32);
}

static void skylake_sp_without_a_sku_counts_one_fma_unit_and_says_so(void **state)
{
    (void)state;
    char why[GPO_CPU_SRC_CAP];
    x86("GenuineIntel", 6, 0x55, V1 | V2 | V3 | V4);
    gpo_strlcpy(f.model_name, "Intel Xeon Processor (Skylake, IBRS)", sizeof f.model_name);
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 32);
    gpo_cpu_flops_source(&f, why, sizeof why);
    assert_non_null(strstr(why, "the lower figure"));
    gpo_strlcpy(f.model_name, "Intel(R) Xeon(R) Silver 4114 CPU @ 2.20GHz", sizeof f.model_name);
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 32);
    gpo_strlcpy(f.model_name, "Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz", sizeof f.model_name);
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 64);
    gpo_strlcpy(f.model_name, "Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz", sizeof f.model_name);
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 32);
    /* Zen 5 cannot be told apart from mobile Zen 5: the lower figure. */
    x86("AuthenticAMD", 0x1a, 0x44, V1 | V2 | V3 | V4 | X(AVX512VNNI) | X(AVX512BF16) | X(AVXVNNI));
    assert_string_equal(f.microarch, "znver5");
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 32);
    /* A core the table lacks: two pipes of at most 256 bits. */
    x86("GenuineIntel", 6, 0xaf, V1 | V2 | V3);
    assert_int_equal(gpo_cpu_flops_per_cycle(&f), 32);
    gpo_cpu_flops_source(&f, why, sizeof why);
    assert_non_null(strstr(why, "not in the throughput table"));
}

static void live_cpuid_fills_vendor_and_level_on_x86(void **state)
{
    (void)state;
    gpo_cpu_facts_init(&f);
#if defined(__x86_64__)
    assert_int_equal(gpo_x86_cpuid_live(&f), 0);
    assert_true(f.vendor_id[0] != '\0');
    assert_true(gpo_x86_level(f.isa) >= 1); /* every x86-64 CPU is at least v1 */
    assert_true(f.family > 0);
    assert_true(f.cpuid_max_mhz == -1 || f.cpuid_max_mhz > 0);
    if (f.isa & X(HYPERVISOR))
        assert_int_equal(f.cpuid_max_mhz, -1); /* left to /proc/cpuinfo in a guest */
    /* Asked once per process: a second facts record gets the same answers. */
    static gpo_cpu_facts again;
    gpo_cpu_facts_init(&again);
    assert_int_equal(gpo_x86_cpuid_live(&again), 0);
    assert_string_equal(again.vendor_id, f.vendor_id);
    assert_string_equal(again.model_name, f.model_name);
    assert_int_equal(again.family, f.family);
    assert_int_equal(again.model, f.model);
    assert_int_equal(again.stepping, f.stepping);
    assert_true(again.isa == f.isa);
    assert_int_equal(again.cpuid_max_leaf, f.cpuid_max_leaf);
    assert_int_equal(again.cpuid_max_mhz, f.cpuid_max_mhz);
#else
    assert_int_equal(gpo_x86_cpuid_live(&f), -1);
    assert_int_equal(f.cpuid_max_mhz, -1);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(x86_flags_map_known_names_and_skip_the_rest),
        cmocka_unit_test(x86_levels_need_every_feature_up_to_the_level),
        cmocka_unit_test(x86_level_features_and_vendors_are_tabled),
        cmocka_unit_test(x86_family_model_table_names_the_part),
        cmocka_unit_test(x86_features_beyond_the_model_row_rename_by_features),
        cmocka_unit_test(x86_unknown_models_and_vendors_fall_back_to_features_or_level),
        cmocka_unit_test(arm_hwcaps_map_to_features),
        cmocka_unit_test(arm_cpuinfo_gives_midr_and_features),
        cmocka_unit_test(arm_unknown_core_gets_level_from_features),
        cmocka_unit_test(feature_names_hide_the_baseline_and_use_display_names),
        cmocka_unit_test(lanes_and_flops_follow_the_widest_usable_vector),
        cmocka_unit_test(zen4_runs_avx512_on_256_bit_pipes_so_32_flops_per_cycle),
        cmocka_unit_test(skylake_sp_without_a_sku_counts_one_fma_unit_and_says_so),
        cmocka_unit_test(live_cpuid_fills_vendor_and_level_on_x86),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
