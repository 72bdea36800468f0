/* The x86-64 ISA vocabulary, shared by the x86 reader (cpuid_x86.c), the
 * naming (x86_uarch.c), the device record and the rules: the feature bits
 * with their /proc/cpuinfo spellings, the psABI microarchitecture levels,
 * and the cpuid vendor strings. Tables only: nothing here reads the
 * machine. */
#ifndef GPO_X86_ISA_H
#define GPO_X86_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/cpu_procfs.h"

/* x86-64 ISA features, bit numbers of gpo_cpu_facts.isa on x86-64. The
 * names and meanings are those of Linux /proc/cpuinfo flags
 * (arch/x86/include/asm/cpufeatures.h); x86_isa.c names the flags and
 * cpuid_x86.c maps the cpuid bits onto them. */
typedef enum gpo_x86_feature {
    GPO_X86_CMOV,
    GPO_X86_CX8,
    GPO_X86_FXSR,
    GPO_X86_MMX,
    GPO_X86_SSE,
    GPO_X86_SSE2,
    GPO_X86_LM,
    GPO_X86_SSE3,
    GPO_X86_SSSE3,
    GPO_X86_SSE4_1,
    GPO_X86_SSE4_2,
    GPO_X86_POPCNT,
    GPO_X86_CX16,
    GPO_X86_LAHF,
    GPO_X86_PCLMUL,
    GPO_X86_AES,
    GPO_X86_AVX,
    GPO_X86_F16C,
    GPO_X86_FMA,
    GPO_X86_AVX2,
    GPO_X86_BMI1,
    GPO_X86_BMI2,
    GPO_X86_LZCNT,
    GPO_X86_MOVBE,
    GPO_X86_XSAVE,
    GPO_X86_ADX,
    GPO_X86_SHA,
    GPO_X86_CLFLUSHOPT,
    GPO_X86_CLWB,
    GPO_X86_CLZERO,
    GPO_X86_GFNI,
    GPO_X86_VAES,
    GPO_X86_SSE4A,
    GPO_X86_XOP,
    GPO_X86_FMA4,
    GPO_X86_AVX512F,
    GPO_X86_AVX512DQ,
    GPO_X86_AVX512CD,
    GPO_X86_AVX512BW,
    GPO_X86_AVX512VL,
    GPO_X86_AVX512IFMA,
    GPO_X86_AVX512VBMI,
    GPO_X86_AVX512VBMI2,
    GPO_X86_AVX512VNNI,
    GPO_X86_AVX512BITALG,
    GPO_X86_AVX512VPOPCNTDQ,
    GPO_X86_AVX512BF16,
    GPO_X86_AVX512FP16,
    GPO_X86_AVX512VP2INTERSECT,
    GPO_X86_AVX512ER,
    GPO_X86_AVXVNNI,
    GPO_X86_AMX_TILE,
    GPO_X86_AMX_INT8,
    GPO_X86_AMX_BF16,
    GPO_X86_AMX_FP16,
    GPO_X86_HYPERVISOR,
    GPO_X86_FEATURE_COUNT
} gpo_x86_feature;

/* Every feature with its /proc/cpuinfo flag and display name. */
extern const gpo_isa_name gpo_x86_isa_names[];
extern const size_t gpo_n_x86_isa_names;

/* Feature bits from a /proc/cpuinfo "flags" value (blank-separated);
 * NULL gives 0. */
uint64_t gpo_x86_features_from_flags(const char *flags);

/* 1..4: the highest x86-64 psABI level whose features are all present;
 * 0 when not even x86-64-v1. */
int32_t gpo_x86_level(uint64_t isa);

/* Every feature levels 1..level need (0 for level < 1). */
uint64_t gpo_x86_level_features(int32_t level);

/* "x86-64-v2".."x86-64-v4", "x86-64" for level 1 and below. */
const char *gpo_x86_level_name(int32_t level);

enum {
    GPO_X86_VENDOR_OTHER = 0,
    GPO_X86_VENDOR_INTEL = 1,
    GPO_X86_VENDOR_AMD = 2,
    GPO_X86_VENDOR_HYGON = 3
};

/* GPO_X86_VENDOR_* of a cpuid vendor string (NULL: OTHER); *name (may be
 * NULL) gets the normalised vendor name ("Intel") or NULL when unknown. */
int gpo_x86_vendor(const char *vendor_id, const char **name);

#endif
