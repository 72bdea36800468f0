/* The arm64 reader: core identity from /proc/cpuinfo (the MIDR fields),
 * ISA features from getauxval live or the "Features" line of a recorded
 * tree, the SVE vector length, and the core's name and architecture level
 * from the MIDR table (cpuinfo_arm.c). */
#ifndef GPO_CPUINFO_ARM_H
#define GPO_CPUINFO_ARM_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/cpu_procfs.h"

/* arm64 ISA features, bit numbers of gpo_cpu_facts.isa on arm64, one row
 * each: (feature, /proc/cpuinfo name, display name, getauxval word, bit).
 * Names: the "Features" words of arch/arm64/kernel/cpuinfo.c; display
 * names where the Arm architecture name differs (asimd is NEON; NULL
 * displays the name, "" hides a baseline feature). getauxval bits: word 1
 * is AT_HWCAP, 2 AT_HWCAP2 (Linux arch/arm64/include/uapi/asm/hwcap.h). */
#define GPO_ARM_FEATURES(X)                                                                        \
    X(FP, "fp", "", 1, 0)                                                                          \
    X(ASIMD, "asimd", "neon", 1, 1)                                                                \
    X(AES, "aes", NULL, 1, 3)                                                                      \
    X(CRC32, "crc32", NULL, 1, 7)                                                                  \
    X(ATOMICS, "atomics", "lse", 1, 8)                                                             \
    X(FPHP, "fphp", NULL, 1, 9)                                                                    \
    X(ASIMDHP, "asimdhp", NULL, 1, 10)                                                             \
    X(ASIMDRDM, "asimdrdm", NULL, 1, 12)                                                           \
    X(JSCVT, "jscvt", NULL, 1, 13)                                                                 \
    X(FCMA, "fcma", NULL, 1, 14)                                                                   \
    X(LRCPC, "lrcpc", NULL, 1, 15)                                                                 \
    X(DCPOP, "dcpop", NULL, 1, 16)                                                                 \
    X(SHA3, "sha3", NULL, 1, 17)                                                                   \
    X(ASIMDDP, "asimddp", "dotprod", 1, 20)                                                        \
    X(SVE, "sve", NULL, 1, 22)                                                                     \
    X(ASIMDFHM, "asimdfhm", NULL, 1, 23)                                                           \
    X(DIT, "dit", NULL, 1, 24)                                                                     \
    X(USCAT, "uscat", NULL, 1, 25)                                                                 \
    X(ILRCPC, "ilrcpc", NULL, 1, 26)                                                               \
    X(FLAGM, "flagm", NULL, 1, 27)                                                                 \
    X(PACA, "paca", NULL, 1, 30)                                                                   \
    X(SVE2, "sve2", NULL, 2, 1)                                                                    \
    X(SVEI8MM, "svei8mm", NULL, 2, 9)                                                              \
    X(SVEBF16, "svebf16", NULL, 2, 12)                                                             \
    X(I8MM, "i8mm", NULL, 2, 13)                                                                   \
    X(BF16, "bf16", NULL, 2, 14)                                                                   \
    X(SME, "sme", NULL, 2, 23)

typedef enum gpo_arm_feature {
#define GPO_ARM_ENUM_(id, name, display, word, bit) GPO_ARM_##id,
    GPO_ARM_FEATURES(GPO_ARM_ENUM_)
#undef GPO_ARM_ENUM_
        GPO_ARM_FEATURE_COUNT
} gpo_arm_feature;

/* Every feature with its /proc/cpuinfo name and display name. */
extern const gpo_isa_name gpo_arm_isa_names[];
extern const size_t gpo_n_arm_isa_names;

/* Feature bits from a /proc/cpuinfo "Features" value; NULL gives 0. */
uint64_t gpo_arm_features_from_names(const char *names);

/* Feature bits from getauxval(AT_HWCAP) and getauxval(AT_HWCAP2) values. */
uint64_t gpo_arm_features_from_hwcap(uint64_t hwcap, uint64_t hwcap2);

/* Parses arm64 /proc/cpuinfo text: MIDR fields of the first processor and
 * its Features (isa). Returns 0, -1 when the text (may be NULL) holds no
 * arm64 processor. */
int gpo_arm_parse_cpuinfo(const char *text, gpo_cpu_facts *f);

/* Fills vendor, microarch (core name) and isa_level from the MIDR table,
 * falling back to the feature set. */
void gpo_arm_name_core(gpo_cpu_facts *f);

/* Reads /proc/cpuinfo (+ getauxval live on arm64, + the SVE vector length). */
gpuopt_status gpo_arm_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

#endif
