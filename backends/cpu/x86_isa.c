/* The x86-64 ISA vocabulary (see x86_isa.h): flag names, psABI levels,
 * vendor strings. */
#include <string.h>

#include "cpu/x86_isa.h"

#define B(f) GPO_BIT(GPO_X86_##f)

const gpo_isa_name gpo_x86_isa_names[] = {
#define GPO_X86_NAME_(id, flag, display, leaf, sub, reg, bit) {GPO_X86_##id, flag, display},
    GPO_X86_FEATURES(GPO_X86_NAME_)
#undef GPO_X86_NAME_
};
const size_t gpo_n_x86_isa_names = sizeof gpo_x86_isa_names / sizeof gpo_x86_isa_names[0];

uint64_t gpo_x86_features_from_flags(const char *flags)
{
    return gpo_isa_from_names(flags, gpo_x86_isa_names, gpo_n_x86_isa_names);
}

/* x86-64 psABI, "Micro-Architecture Levels" (System V AMD64 ABI 1.0, 3.1.1;
 * also GCC's -march=x86-64-v2/v3/v4). OSXSAVE for v3 is implied: the kernel
 * and cpuid_x86.c only report AVX when the OS enabled its state. */
static const struct {
    int32_t level;
    uint64_t needs;
} x86_levels[] = {
    {1, B(CMOV) | B(CX8) | B(FXSR) | B(MMX) | B(SSE) | B(SSE2) | B(LM)},
    {2, B(CX16) | B(LAHF) | B(POPCNT) | B(SSE3) | B(SSE4_1) | B(SSE4_2) | B(SSSE3)},
    {3, B(AVX) | B(AVX2) | B(BMI1) | B(BMI2) | B(F16C) | B(FMA) | B(LZCNT) | B(MOVBE) | B(XSAVE)},
    {4, B(AVX512F) | B(AVX512BW) | B(AVX512CD) | B(AVX512DQ) | B(AVX512VL)},
};

uint64_t gpo_x86_level_features(int32_t level)
{
    uint64_t need = 0;
    for (size_t i = 0; i < sizeof x86_levels / sizeof x86_levels[0]; i++)
        if (x86_levels[i].level <= level)
            need |= x86_levels[i].needs;
    return need;
}

int32_t gpo_x86_level(uint64_t isa)
{
    int32_t level = 0;
    uint64_t need = 0;
    for (size_t i = 0; i < sizeof x86_levels / sizeof x86_levels[0]; i++) {
        need |= x86_levels[i].needs;
        if ((isa & need) != need)
            break;
        level = x86_levels[i].level;
    }
    return level;
}

static const struct {
    const char *id;
    const char *name;
    int code;
} x86_vendors[] = {
    /* cpuid leaf 0 vendor strings (Intel SDM vol. 2A "CPUID"; AMD APM vol. 3
     * appendix E). */
    {"GenuineIntel", "Intel", GPO_X86_VENDOR_INTEL},
    {"AuthenticAMD", "AMD", GPO_X86_VENDOR_AMD},
    {"HygonGenuine", "Hygon", GPO_X86_VENDOR_HYGON},
    {"CentaurHauls", "Centaur", GPO_X86_VENDOR_OTHER},
    {"  Shanghai  ", "Zhaoxin", GPO_X86_VENDOR_OTHER},
};

int gpo_x86_vendor(const char *vendor_id, const char **name)
{
    if (name)
        *name = NULL;
    if (!vendor_id)
        return GPO_X86_VENDOR_OTHER;
    for (size_t i = 0; i < sizeof x86_vendors / sizeof x86_vendors[0]; i++) {
        if (strcmp(vendor_id, x86_vendors[i].id) == 0) {
            if (name)
                *name = x86_vendors[i].name;
            return x86_vendors[i].code;
        }
    }
    return GPO_X86_VENDOR_OTHER;
}

const char *gpo_x86_level_name(int32_t level)
{
    static const char *const names[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
    return level >= 2 && level <= 4 ? names[level - 2] : "x86-64";
}
