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

/* x86-64 ISA features, bit numbers of gpo_cpu_facts.isa on x86-64, one
 * row each: (feature, /proc/cpuinfo flag, display name, cpuid leaf,
 * subleaf, register, bit). The flags are Linux's spellings
 * (arch/x86/include/asm/cpufeatures.h). Display names follow Intel's
 * spelling where Linux differs (pni is SSE3, sse4_2 is SSE4.2); NULL
 * displays the flag, and "" keeps a feature every x86-64 CPU has out of
 * the details list. The cpuid bits: Intel SDM vol. 2A, CPUID "Feature
 * Information" (leaf 1), "Structured Extended Feature Flags" (leaf 7); AMD
 * APM vol. 3 appendix E (leaves 8000_0001h, 8000_0008h). */
#define GPO_X86_FEATURES(X)                                                                        \
    X(CMOV, "cmov", "", 1, 0, EDX, 15)                                                             \
    X(CX8, "cx8", "", 1, 0, EDX, 8)                                                                \
    X(FXSR, "fxsr", "", 1, 0, EDX, 24)                                                             \
    X(MMX, "mmx", "", 1, 0, EDX, 23)                                                               \
    X(SSE, "sse", "", 1, 0, EDX, 25)                                                               \
    X(SSE2, "sse2", NULL, 1, 0, EDX, 26)                                                           \
    X(LM, "lm", "", 0x80000001u, 0, EDX, 29)                                                       \
    X(SSE3, "pni", "sse3", 1, 0, ECX, 0)                                                           \
    X(SSSE3, "ssse3", NULL, 1, 0, ECX, 9)                                                          \
    X(SSE4_1, "sse4_1", "sse4.1", 1, 0, ECX, 19)                                                   \
    X(SSE4_2, "sse4_2", "sse4.2", 1, 0, ECX, 20)                                                   \
    X(POPCNT, "popcnt", NULL, 1, 0, ECX, 23)                                                       \
    X(CX16, "cx16", NULL, 1, 0, ECX, 13)                                                           \
    X(LAHF, "lahf_lm", NULL, 0x80000001u, 0, ECX, 0)                                               \
    X(PCLMUL, "pclmulqdq", NULL, 1, 0, ECX, 1)                                                     \
    X(AES, "aes", NULL, 1, 0, ECX, 25)                                                             \
    X(AVX, "avx", NULL, 1, 0, ECX, 28)                                                             \
    X(F16C, "f16c", NULL, 1, 0, ECX, 29)                                                           \
    X(FMA, "fma", NULL, 1, 0, ECX, 12)                                                             \
    X(AVX2, "avx2", NULL, 7, 0, EBX, 5)                                                            \
    X(BMI1, "bmi1", NULL, 7, 0, EBX, 3)                                                            \
    X(BMI2, "bmi2", NULL, 7, 0, EBX, 8)                                                            \
    X(LZCNT, "abm", "lzcnt", 0x80000001u, 0, ECX, 5)                                               \
    X(MOVBE, "movbe", NULL, 1, 0, ECX, 22)                                                         \
    X(XSAVE, "xsave", NULL, 1, 0, ECX, 26)                                                         \
    X(ADX, "adx", NULL, 7, 0, EBX, 19)                                                             \
    X(SHA, "sha_ni", "sha", 7, 0, EBX, 29)                                                         \
    X(CLFLUSHOPT, "clflushopt", NULL, 7, 0, EBX, 23)                                               \
    X(CLWB, "clwb", NULL, 7, 0, EBX, 24)                                                           \
    X(CLZERO, "clzero", NULL, 0x80000008u, 0, EBX, 0)                                              \
    X(GFNI, "gfni", NULL, 7, 0, ECX, 8)                                                            \
    X(VAES, "vaes", NULL, 7, 0, ECX, 9)                                                            \
    X(SSE4A, "sse4a", NULL, 0x80000001u, 0, ECX, 6)                                                \
    X(XOP, "xop", NULL, 0x80000001u, 0, ECX, 11)                                                   \
    X(FMA4, "fma4", NULL, 0x80000001u, 0, ECX, 16)                                                 \
    X(AVX512F, "avx512f", NULL, 7, 0, EBX, 16)                                                     \
    X(AVX512DQ, "avx512dq", NULL, 7, 0, EBX, 17)                                                   \
    X(AVX512CD, "avx512cd", NULL, 7, 0, EBX, 28)                                                   \
    X(AVX512BW, "avx512bw", NULL, 7, 0, EBX, 30)                                                   \
    X(AVX512VL, "avx512vl", NULL, 7, 0, EBX, 31)                                                   \
    X(AVX512IFMA, "avx512ifma", NULL, 7, 0, EBX, 21)                                               \
    X(AVX512VBMI, "avx512vbmi", NULL, 7, 0, ECX, 1)                                                \
    X(AVX512VBMI2, "avx512_vbmi2", NULL, 7, 0, ECX, 6)                                             \
    X(AVX512VNNI, "avx512_vnni", NULL, 7, 0, ECX, 11)                                              \
    X(AVX512BITALG, "avx512_bitalg", NULL, 7, 0, ECX, 12)                                          \
    X(AVX512VPOPCNTDQ, "avx512_vpopcntdq", NULL, 7, 0, ECX, 14)                                    \
    X(AVX512BF16, "avx512_bf16", NULL, 7, 1, EAX, 5)                                               \
    X(AVX512FP16, "avx512_fp16", NULL, 7, 0, EDX, 23)                                              \
    X(AVX512VP2INTERSECT, "avx512_vp2intersect", NULL, 7, 0, EDX, 8)                               \
    X(AVX512ER, "avx512er", NULL, 7, 0, EBX, 27)                                                   \
    X(AVXVNNI, "avx_vnni", NULL, 7, 1, EAX, 4)                                                     \
    X(AMX_TILE, "amx_tile", "amx", 7, 0, EDX, 24)                                                  \
    X(AMX_INT8, "amx_int8", NULL, 7, 0, EDX, 25)                                                   \
    X(AMX_BF16, "amx_bf16", NULL, 7, 0, EDX, 22)                                                   \
    X(AMX_FP16, "amx_fp16", NULL, 7, 1, EAX, 21)                                                   \
    X(HYPERVISOR, "hypervisor", NULL, 1, 0, ECX, 31)

typedef enum gpo_x86_feature {
#define GPO_X86_ENUM_(id, flag, display, leaf, sub, reg, bit) GPO_X86_##id,
    GPO_X86_FEATURES(GPO_X86_ENUM_)
#undef GPO_X86_ENUM_
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
