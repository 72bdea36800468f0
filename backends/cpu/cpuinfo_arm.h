/* The arm64 reader: core identity from /proc/cpuinfo (the MIDR fields),
 * ISA features from getauxval live or the "Features" line of a recorded
 * tree, the SVE vector length, and the core's name and architecture level
 * from the MIDR table (cpuinfo_arm.c). */
#ifndef GPO_CPUINFO_ARM_H
#define GPO_CPUINFO_ARM_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/cpu_procfs.h"

/* arm64 ISA features, bit numbers of gpo_cpu_facts.isa on arm64; names of
 * the "Features" line of /proc/cpuinfo (arch/arm64/kernel/cpuinfo.c). */
typedef enum gpo_arm_feature {
    GPO_ARM_FP,
    GPO_ARM_ASIMD,
    GPO_ARM_AES,
    GPO_ARM_CRC32,
    GPO_ARM_ATOMICS,
    GPO_ARM_FPHP,
    GPO_ARM_ASIMDHP,
    GPO_ARM_ASIMDRDM,
    GPO_ARM_JSCVT,
    GPO_ARM_FCMA,
    GPO_ARM_LRCPC,
    GPO_ARM_DCPOP,
    GPO_ARM_SHA3,
    GPO_ARM_ASIMDDP,
    GPO_ARM_SVE,
    GPO_ARM_ASIMDFHM,
    GPO_ARM_DIT,
    GPO_ARM_USCAT,
    GPO_ARM_ILRCPC,
    GPO_ARM_FLAGM,
    GPO_ARM_PACA,
    GPO_ARM_SVE2,
    GPO_ARM_SVEI8MM,
    GPO_ARM_SVEBF16,
    GPO_ARM_I8MM,
    GPO_ARM_BF16,
    GPO_ARM_SME,
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
