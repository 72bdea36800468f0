/* arm64: core identity from /proc/cpuinfo (the MIDR fields the kernel
 * prints), ISA features from getauxval(AT_HWCAP/AT_HWCAP2) live or the
 * "Features" line of a recorded tree, and the SVE vector length.
 *
 * The text parsers are plain functions over strings so they are tested on
 * any host; only the getauxval/prctl calls are arm64-only. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpuinfo_arm.h"
#include "util/strutil.h"

#if defined(__aarch64__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

const gpo_isa_name gpo_arm_isa_names[] = {
#define GPO_ARM_NAME_(id, name, display, word, bit) {GPO_ARM_##id, name, display},
    GPO_ARM_FEATURES(GPO_ARM_NAME_)
#undef GPO_ARM_NAME_
};
const size_t gpo_n_arm_isa_names = sizeof gpo_arm_isa_names / sizeof gpo_arm_isa_names[0];

#define A(f) GPO_BIT(GPO_ARM_##f)

static const struct {
    int word; /* 1: AT_HWCAP, 2: AT_HWCAP2 */
    uint8_t bit;
    uint8_t feature;
} hwcap_bits[] = {
#define GPO_ARM_HWCAP_(id, name, display, word, bit) {word, bit, GPO_ARM_##id},
    GPO_ARM_FEATURES(GPO_ARM_HWCAP_)
#undef GPO_ARM_HWCAP_
};

uint64_t gpo_arm_features_from_hwcap(uint64_t hwcap, uint64_t hwcap2)
{
    uint64_t isa = 0;
    for (size_t i = 0; i < sizeof hwcap_bits / sizeof hwcap_bits[0]; i++) {
        uint64_t word = hwcap_bits[i].word == 1 ? hwcap : hwcap2;
        if ((word >> hwcap_bits[i].bit) & 1)
            isa |= GPO_BIT(hwcap_bits[i].feature);
    }
    return isa;
}

uint64_t gpo_arm_features_from_names(const char *names)
{
    return gpo_isa_from_names(names, gpo_arm_isa_names, gpo_n_arm_isa_names);
}

/* Implementer codes: Linux arch/arm64/include/asm/cputype.h ARM_CPU_IMP_*. */
static const struct {
    int32_t code;
    const char *name;
} arm_implementers[] = {
    {0x41, "Arm"},       {0x42, "Broadcom"},  {0x43, "Cavium"}, {0x46, "Fujitsu"},
    {0x48, "HiSilicon"}, {0x4e, "NVIDIA"},    {0x50, "APM"},    {0x51, "Qualcomm"},
    {0x61, "Apple"},     {0x6d, "Microsoft"}, {0xc0, "Ampere"},
};

/* Cores: part numbers from Linux arch/arm64/include/asm/cputype.h, names
 * and architecture levels from GCC's gcc/config/aarch64/aarch64-cores.def
 * (the -mcpu spelling), cross-checked with each core's Technical Reference
 * Manual ("MIDR_EL1" and "Features" sections). */
static const struct {
    int32_t implementer, part;
    const char *name;
    const char *arch;
} arm_cores[] = {
    {0x41, 0xd03, "cortex-a53", "armv8-a"},
    {0x41, 0xd04, "cortex-a35", "armv8-a"},
    {0x41, 0xd05, "cortex-a55", "armv8.2-a"},
    {0x41, 0xd07, "cortex-a57", "armv8-a"},
    {0x41, 0xd08, "cortex-a72", "armv8-a"},
    {0x41, 0xd09, "cortex-a73", "armv8-a"},
    {0x41, 0xd0a, "cortex-a75", "armv8.2-a"},
    {0x41, 0xd0b, "cortex-a76", "armv8.2-a"},
    {0x41, 0xd0c, "neoverse-n1", "armv8.2-a"},
    {0x41, 0xd0d, "cortex-a77", "armv8.2-a"},
    {0x41, 0xd40, "neoverse-v1", "armv8.4-a"},
    {0x41, 0xd41, "cortex-a78", "armv8.2-a"},
    {0x41, 0xd44, "cortex-x1", "armv8.2-a"},
    {0x41, 0xd46, "cortex-a510", "armv9-a"},
    {0x41, 0xd47, "cortex-a710", "armv9-a"},
    {0x41, 0xd48, "cortex-x2", "armv9-a"},
    {0x41, 0xd49, "neoverse-n2", "armv9-a"},
    {0x41, 0xd4a, "neoverse-e1", "armv8.2-a"},
    {0x41, 0xd4d, "cortex-a715", "armv9-a"},
    {0x41, 0xd4e, "cortex-x3", "armv9-a"},
    {0x41, 0xd4f, "neoverse-v2", "armv9-a"},
    {0x41, 0xd80, "cortex-a520", "armv9.2-a"},
    {0x41, 0xd81, "cortex-a720", "armv9.2-a"},
    {0x41, 0xd82, "cortex-x4", "armv9.2-a"},
    {0x41, 0xd84, "neoverse-v3", "armv9.2-a"},
    {0x41, 0xd8e, "neoverse-n3", "armv9.2-a"},
    {0x42, 0x516, "thunderx2t99", "armv8.1-a"},
    {0x43, 0x0a1, "thunderxt88", "armv8-a"},
    {0x43, 0x0af, "thunderx2t99", "armv8.1-a"},
    {0x46, 0x001, "a64fx", "armv8.2-a"},
    {0x48, 0xd01, "tsv110", "armv8.2-a"},
    {0x4e, 0x004, "carmel", "armv8.2-a"},
    {0x51, 0xc00, "falkor", "armv8-a"},
    {0x61, 0x022, "apple-m1", "armv8.5-a"},
    {0x61, 0x023, "apple-m1", "armv8.5-a"},
    {0x6d, 0xd49, "neoverse-n2", "armv9-a"}, /* Azure Cobalt 100 */
    {0xc0, 0xac3, "ampere1", "armv8.6-a"},
    {0xc0, 0xac4, "ampere1a", "armv8.6-a"},
    {0xc0, 0xac5, "ampere1b", "armv8.7-a"},
};

/* Architecture level by features when the core is not in the table: the
 * feature each step made mandatory (Arm ARM, A2 "Armv8-A architecture
 * extensions"); newest first. */
static const struct {
    uint64_t needs;
    const char *arch;
} arm_levels[] = {
    {A(SVE2), "armv9-a"},
    {A(I8MM) | A(BF16), "armv8.6-a"},
    {A(DIT) | A(USCAT) | A(ILRCPC) | A(FLAGM), "armv8.4-a"},
    {A(JSCVT) | A(FCMA) | A(LRCPC), "armv8.3-a"},
    {A(DCPOP), "armv8.2-a"},
    {A(ATOMICS) | A(ASIMDRDM) | A(CRC32), "armv8.1-a"},
};

static int hex_field(const char *text, const char *key, int32_t *out)
{
    char val[64];
    if (gpo_cpuinfo_field(text, key, val, sizeof val))
        return -1;
    char *end;
    long v = strtol(val, &end, 0);
    if (end == val || *end || v < 0 || v > 0xfff)
        return -1;
    *out = (int32_t)v;
    return 0;
}

int gpo_arm_parse_cpuinfo(const char *text, gpo_cpu_facts *f)
{
    assert(f);
    if (!text)
        return -1;
    if (hex_field(text, "CPU implementer", &f->implementer))
        return -1;
    hex_field(text, "CPU part", &f->part);
    hex_field(text, "CPU variant", &f->variant);
    hex_field(text, "CPU revision", &f->revision);
    gpo_snprintf(f->vendor_id, sizeof f->vendor_id, "0x%02x", f->implementer);
    char val[2048];
    if (gpo_cpuinfo_field(text, "Features", val, sizeof val) == 0)
        f->isa = gpo_arm_features_from_names(val);
    return 0;
}

void gpo_arm_name_core(gpo_cpu_facts *f)
{
    assert(f);
    const char *vendor = NULL;
    for (size_t i = 0; i < sizeof arm_implementers / sizeof arm_implementers[0]; i++)
        if (arm_implementers[i].code == f->implementer)
            vendor = arm_implementers[i].name;
    if (vendor)
        gpo_strlcpy(f->vendor, vendor, sizeof f->vendor);
    else
        gpo_snprintf(f->vendor, sizeof f->vendor, "implementer 0x%02x",
                     f->implementer < 0 ? 0 : f->implementer);

    const char *arch = "armv8-a";
    for (size_t i = 0; i < sizeof arm_levels / sizeof arm_levels[0]; i++) {
        if ((f->isa & arm_levels[i].needs) == arm_levels[i].needs) {
            arch = arm_levels[i].arch;
            break;
        }
    }
    for (size_t i = 0; i < sizeof arm_cores / sizeof arm_cores[0]; i++) {
        if (arm_cores[i].implementer == f->implementer && arm_cores[i].part == f->part) {
            gpo_strlcpy(f->microarch, arm_cores[i].name, sizeof f->microarch);
            gpo_strlcpy(f->isa_level, arm_cores[i].arch, sizeof f->isa_level);
            gpo_snprintf(f->src_microarch, sizeof f->src_microarch,
                         "MIDR implementer 0x%02x part 0x%03x in the core table: %s (%s)",
                         f->implementer, f->part, arm_cores[i].name, arm_cores[i].arch);
            goto name;
        }
    }
    gpo_strlcpy(f->microarch, "generic", sizeof f->microarch);
    gpo_strlcpy(f->isa_level, arch, sizeof f->isa_level);
    gpo_snprintf(f->src_microarch, sizeof f->src_microarch,
                 "MIDR implementer 0x%02x part 0x%03x not in the core table: level %s "
                 "from features",
                 f->implementer < 0 ? 0 : f->implementer, f->part < 0 ? 0 : f->part, arch);
name:
    if (!f->model_name[0])
        gpo_snprintf(f->model_name, sizeof f->model_name, "%s %s", f->vendor, f->microarch);
}

/* The SVE vector length: this thread's (prctl) live on arm64, else the
 * default the kernel gives new processes, in bytes
 * (Documentation/arch/arm64/sve.rst, /proc/sys/abi/sve_default_vector_length). */
static void read_sve_length(const gpo_fs *fs, gpo_cpu_facts *f)
{
    if (!(f->isa & A(SVE)))
        return;
#if defined(__aarch64__) && defined(PR_SVE_GET_VL)
    if (!gpo_fs_is_recorded(fs)) {
        int vl = prctl(PR_SVE_GET_VL);
        if (vl > 0) {
            f->sve_bits = (vl & 0xffff) * 8;
            return;
        }
    }
#endif
    uint64_t bytes;
    if (gpo_fs_read_u64(fs, "/proc/sys/abi/sve_default_vector_length", &bytes) == GPUOPT_OK &&
        bytes >= 16 && bytes <= 256)
        f->sve_bits = (int32_t)bytes * 8;
}

gpuopt_status gpo_arm_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    assert(fs && f);
    f->arch = GPO_CPU_ARCH_ARM64;
    const char *text;
    gpuopt_status st = gpo_cpu_cpuinfo(fs, f, &text);
    if (st == GPUOPT_ERR_NO_MEMORY)
        return st;
    if (st || gpo_arm_parse_cpuinfo(text, f)) {
        gpo_cpu_note(f, log, GPUOPT_LOG_WARN,
                     "/proc/cpuinfo has no arm64 processor entry: core unknown");
        /* AdvSIMD and FP are mandatory in Armv8-A (Arm ARM A1.5). */
        f->isa = A(FP) | A(ASIMD);
        gpo_strlcpy(f->src_isa, "assumed Armv8-A baseline (fp, asimd)", sizeof f->src_isa);
    } else {
        gpo_strlcpy(f->src_isa, "/proc/cpuinfo Features", sizeof f->src_isa);
    }
#if defined(__aarch64__)
    if (!gpo_fs_is_recorded(fs)) {
        f->isa = gpo_arm_features_from_hwcap(getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
        gpo_strlcpy(f->src_isa, "getauxval(AT_HWCAP, AT_HWCAP2)", sizeof f->src_isa);
    }
#endif
    read_sve_length(fs, f);
    gpo_arm_name_core(f);
    return GPUOPT_OK;
}
