/* x86-64: ISA features, the psABI microarchitecture level and the
 * microarchitecture name.
 *
 * Live, the facts come from the cpuid instruction (with the OS's XCR0 state
 * checked, as the kernel does before it shows a flag); from a recorded tree
 * they come from /proc/cpuinfo. Both land in the same feature bits, so the
 * naming rules below never know which source fed them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_facts.h"
#include "strutil.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define GPO_HAVE_CPUID 1
#endif

/* Flag spellings: Linux arch/x86/include/asm/cpufeatures.h (the names
 * /proc/cpuinfo prints). Display names follow Intel's spelling where Linux
 * differs (pni is SSE3, sse4_2 is SSE4.2); "" keeps a feature every
 * x86-64 CPU has out of the details list. */
const gpo_isa_name gpo_x86_isa_names[] = {
    {GPO_X86_CMOV, "cmov", ""},
    {GPO_X86_CX8, "cx8", ""},
    {GPO_X86_FXSR, "fxsr", ""},
    {GPO_X86_MMX, "mmx", ""},
    {GPO_X86_SSE, "sse", ""},
    {GPO_X86_SSE2, "sse2", NULL},
    {GPO_X86_LM, "lm", ""},
    {GPO_X86_SSE3, "pni", "sse3"},
    {GPO_X86_SSSE3, "ssse3", NULL},
    {GPO_X86_SSE4_1, "sse4_1", "sse4.1"},
    {GPO_X86_SSE4_2, "sse4_2", "sse4.2"},
    {GPO_X86_POPCNT, "popcnt", NULL},
    {GPO_X86_CX16, "cx16", NULL},
    {GPO_X86_LAHF, "lahf_lm", NULL},
    {GPO_X86_PCLMUL, "pclmulqdq", NULL},
    {GPO_X86_AES, "aes", NULL},
    {GPO_X86_AVX, "avx", NULL},
    {GPO_X86_F16C, "f16c", NULL},
    {GPO_X86_FMA, "fma", NULL},
    {GPO_X86_AVX2, "avx2", NULL},
    {GPO_X86_BMI1, "bmi1", NULL},
    {GPO_X86_BMI2, "bmi2", NULL},
    {GPO_X86_LZCNT, "abm", "lzcnt"},
    {GPO_X86_MOVBE, "movbe", NULL},
    {GPO_X86_XSAVE, "xsave", NULL},
    {GPO_X86_ADX, "adx", NULL},
    {GPO_X86_SHA, "sha_ni", "sha"},
    {GPO_X86_CLFLUSHOPT, "clflushopt", NULL},
    {GPO_X86_CLWB, "clwb", NULL},
    {GPO_X86_CLZERO, "clzero", NULL},
    {GPO_X86_GFNI, "gfni", NULL},
    {GPO_X86_VAES, "vaes", NULL},
    {GPO_X86_SSE4A, "sse4a", NULL},
    {GPO_X86_XOP, "xop", NULL},
    {GPO_X86_FMA4, "fma4", NULL},
    {GPO_X86_AVX512F, "avx512f", NULL},
    {GPO_X86_AVX512DQ, "avx512dq", NULL},
    {GPO_X86_AVX512CD, "avx512cd", NULL},
    {GPO_X86_AVX512BW, "avx512bw", NULL},
    {GPO_X86_AVX512VL, "avx512vl", NULL},
    {GPO_X86_AVX512IFMA, "avx512ifma", NULL},
    {GPO_X86_AVX512VBMI, "avx512vbmi", NULL},
    {GPO_X86_AVX512VBMI2, "avx512_vbmi2", NULL},
    {GPO_X86_AVX512VNNI, "avx512_vnni", NULL},
    {GPO_X86_AVX512BITALG, "avx512_bitalg", NULL},
    {GPO_X86_AVX512VPOPCNTDQ, "avx512_vpopcntdq", NULL},
    {GPO_X86_AVX512BF16, "avx512_bf16", NULL},
    {GPO_X86_AVX512FP16, "avx512_fp16", NULL},
    {GPO_X86_AVX512VP2INTERSECT, "avx512_vp2intersect", NULL},
    {GPO_X86_AVX512ER, "avx512er", NULL},
    {GPO_X86_AVXVNNI, "avx_vnni", NULL},
    {GPO_X86_AMX_TILE, "amx_tile", "amx"},
    {GPO_X86_AMX_INT8, "amx_int8", NULL},
    {GPO_X86_AMX_BF16, "amx_bf16", NULL},
    {GPO_X86_AMX_FP16, "amx_fp16", NULL},
    {GPO_X86_HYPERVISOR, "hypervisor", NULL},
};
const size_t gpo_n_x86_isa_names = sizeof gpo_x86_isa_names / sizeof gpo_x86_isa_names[0];

#define B(f) GPO_BIT(GPO_X86_##f)

/* x86-64 psABI, "Micro-Architecture Levels" (System V AMD64 ABI 1.0, 3.1.1;
 * also GCC's -march=x86-64-v2/v3/v4). OSXSAVE for v3 is implied: the kernel
 * and the cpuid path below only report AVX when the OS enabled its state. */
static const struct {
    int32_t level;
    uint64_t needs;
} x86_levels[] = {
    {1, B(CMOV) | B(CX8) | B(FXSR) | B(MMX) | B(SSE) | B(SSE2) | B(LM)},
    {2, B(CX16) | B(LAHF) | B(POPCNT) | B(SSE3) | B(SSE4_1) | B(SSE4_2) | B(SSSE3)},
    {3, B(AVX) | B(AVX2) | B(BMI1) | B(BMI2) | B(F16C) | B(FMA) | B(LZCNT) | B(MOVBE) |
            B(XSAVE)},
    {4, B(AVX512F) | B(AVX512BW) | B(AVX512CD) | B(AVX512DQ) | B(AVX512VL)},
};

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

uint64_t gpo_x86_features_from_flags(const char *flags)
{
    uint64_t isa = 0;
    if (!flags)
        return 0;
    const char *p = flags;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *start = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        size_t n = (size_t)(p - start);
        for (size_t i = 0; n && i < gpo_n_x86_isa_names; i++) {
            const char *flag = gpo_x86_isa_names[i].flag;
            if (strlen(flag) == n && memcmp(flag, start, n) == 0) {
                isa |= GPO_BIT(gpo_x86_isa_names[i].bit);
                break;
            }
        }
    }
    return isa;
}

/* ---- Microarchitecture names ------------------------------------------- */

enum { V_OTHER = 0, V_INTEL, V_AMD, V_HYGON };

static const struct {
    const char *id;
    const char *name;
    int code;
} x86_vendors[] = {
    /* cpuid leaf 0 vendor strings (Intel SDM vol. 2A "CPUID"; AMD APM vol. 3
     * appendix E). */
    {"GenuineIntel", "Intel", V_INTEL},
    {"AuthenticAMD", "AMD", V_AMD},
    {"HygonGenuine", "Hygon", V_HYGON},
    {"CentaurHauls", "Centaur", V_OTHER},
    {"  Shanghai  ", "Zhaoxin", V_OTHER},
};

static int vendor_code(const char *vendor_id, const char **name)
{
    for (size_t i = 0; i < sizeof x86_vendors / sizeof x86_vendors[0]; i++) {
        if (strcmp(vendor_id, x86_vendors[i].id) == 0) {
            if (name)
                *name = x86_vendors[i].name;
            return x86_vendors[i].code;
        }
    }
    if (name)
        *name = NULL;
    return V_OTHER;
}

/* Features that set microarchitectures apart. When a CPU has one that its
 * family/model row does not list, the model number is not the silicon's
 * (a hypervisor's virtual CPU model, or a new stepping): name by features. */
#define SIGNATURE                                                                                  \
    (B(AVX) | B(AVX2) | B(AVX512F) | B(AVX512VNNI) | B(AVX512BF16) | B(AVX512FP16) |            \
     B(AMX_TILE) | B(AVXVNNI))

#define E_AVX (B(AVX))
#define E_AVX2 (B(AVX) | B(AVX2))
#define E_AVX512 (E_AVX2 | B(AVX512F))
#define E_ICL (E_AVX512 | B(AVX512VNNI))
#define E_ADL (E_AVX2 | B(AVXVNNI))
#define E_SPR (E_ICL | B(AVX512BF16) | B(AVX512FP16) | B(AMX_TILE) | B(AVXVNNI))
#define E_ZEN4 (E_ICL | B(AVX512BF16))

typedef struct x86_uarch {
    int vendor;
    int32_t family;
    int32_t model_lo, model_hi;
    const char *name; /* GCC -march spelling */
    uint64_t expect;  /* SIGNATURE features the part has */
} x86_uarch;

static const x86_uarch x86_uarchs[] = {
    /* Intel family 6: DisplayModel values from the Intel SDM vol. 4, table
     * 2-1 "CPUID Signature Values of DisplayFamily_DisplayModel", names as
     * GCC's -march (gcc/common/config/i386/cpuinfo.h, get_intel_cpu). */
    {V_INTEL, 6, 0x0f, 0x0f, "core2", 0},
    {V_INTEL, 6, 0x17, 0x17, "core2", 0},
    {V_INTEL, 6, 0x1d, 0x1d, "core2", 0},
    {V_INTEL, 6, 0x1a, 0x1a, "nehalem", 0},
    {V_INTEL, 6, 0x1e, 0x1f, "nehalem", 0},
    {V_INTEL, 6, 0x2e, 0x2e, "nehalem", 0},
    {V_INTEL, 6, 0x25, 0x25, "westmere", 0},
    {V_INTEL, 6, 0x2c, 0x2c, "westmere", 0},
    {V_INTEL, 6, 0x2f, 0x2f, "westmere", 0},
    {V_INTEL, 6, 0x2a, 0x2a, "sandybridge", E_AVX},
    {V_INTEL, 6, 0x2d, 0x2d, "sandybridge", E_AVX},
    {V_INTEL, 6, 0x3a, 0x3a, "ivybridge", E_AVX},
    {V_INTEL, 6, 0x3e, 0x3e, "ivybridge", E_AVX},
    {V_INTEL, 6, 0x3c, 0x3c, "haswell", E_AVX2},
    {V_INTEL, 6, 0x3f, 0x3f, "haswell", E_AVX2},
    {V_INTEL, 6, 0x45, 0x46, "haswell", E_AVX2},
    {V_INTEL, 6, 0x3d, 0x3d, "broadwell", E_AVX2},
    {V_INTEL, 6, 0x47, 0x47, "broadwell", E_AVX2},
    {V_INTEL, 6, 0x4f, 0x4f, "broadwell", E_AVX2},
    {V_INTEL, 6, 0x56, 0x56, "broadwell", E_AVX2},
    /* Skylake, Kaby Lake, Coffee Lake, Comet Lake client: one -march. */
    {V_INTEL, 6, 0x4e, 0x4e, "skylake", E_AVX2},
    {V_INTEL, 6, 0x5e, 0x5e, "skylake", E_AVX2},
    {V_INTEL, 6, 0x8e, 0x8e, "skylake", E_AVX2},
    {V_INTEL, 6, 0x9e, 0x9e, "skylake", E_AVX2},
    {V_INTEL, 6, 0xa5, 0xa6, "skylake", E_AVX2},
    /* Skylake-SP; Cascade Lake (AVX512-VNNI) and Cooper Lake (AVX512-BF16)
     * share the model and are told apart by features below. */
    {V_INTEL, 6, 0x55, 0x55, "skylake-avx512", E_AVX512},
    {V_INTEL, 6, 0x66, 0x66, "cannonlake", E_AVX512},
    {V_INTEL, 6, 0x6a, 0x6a, "icelake-server", E_ICL},
    {V_INTEL, 6, 0x6c, 0x6c, "icelake-server", E_ICL},
    {V_INTEL, 6, 0x7d, 0x7e, "icelake-client", E_ICL},
    {V_INTEL, 6, 0x9d, 0x9d, "icelake-client", E_ICL},
    {V_INTEL, 6, 0x8c, 0x8d, "tigerlake", E_ICL},
    {V_INTEL, 6, 0xa7, 0xa8, "rocketlake", E_ICL},
    /* Hybrid client parts: Alder Lake, Raptor Lake, Meteor Lake. */
    {V_INTEL, 6, 0x97, 0x97, "alderlake", E_ADL},
    {V_INTEL, 6, 0x9a, 0x9a, "alderlake", E_ADL},
    {V_INTEL, 6, 0xbf, 0xbf, "alderlake", E_ADL},
    {V_INTEL, 6, 0xb7, 0xb7, "raptorlake", E_ADL},
    {V_INTEL, 6, 0xba, 0xba, "raptorlake", E_ADL},
    {V_INTEL, 6, 0xaa, 0xac, "meteorlake", E_ADL},
    {V_INTEL, 6, 0xbd, 0xbd, "lunarlake", E_ADL},
    {V_INTEL, 6, 0xc5, 0xc6, "arrowlake", E_ADL},
    {V_INTEL, 6, 0xb5, 0xb5, "arrowlake", E_ADL},
    /* Xeon Scalable 4th/5th gen (Emerald Rapids is -march=emeraldrapids, an
     * alias of sapphirerapids), 6th gen P-core and E-core. */
    {V_INTEL, 6, 0x8f, 0x8f, "sapphirerapids", E_SPR},
    {V_INTEL, 6, 0xcf, 0xcf, "emeraldrapids", E_SPR},
    {V_INTEL, 6, 0xad, 0xad, "graniterapids", E_SPR},
    {V_INTEL, 6, 0xae, 0xae, "graniterapids-d", E_SPR},
    {V_INTEL, 6, 0xaf, 0xaf, "sierraforest", E_ADL},
    {V_INTEL, 6, 0xb6, 0xb6, "grandridge", E_ADL},
    {V_INTEL, 6, 0xdd, 0xdd, "clearwaterforest", E_ADL},
    /* Atom and Xeon Phi. */
    {V_INTEL, 6, 0x1c, 0x1c, "bonnell", 0},
    {V_INTEL, 6, 0x26, 0x26, "bonnell", 0},
    {V_INTEL, 6, 0x37, 0x37, "silvermont", 0},
    {V_INTEL, 6, 0x4a, 0x4d, "silvermont", 0},
    {V_INTEL, 6, 0x5a, 0x5a, "silvermont", 0},
    {V_INTEL, 6, 0x5d, 0x5d, "silvermont", 0},
    {V_INTEL, 6, 0x75, 0x75, "silvermont", 0},
    {V_INTEL, 6, 0x5c, 0x5c, "goldmont", 0},
    {V_INTEL, 6, 0x5f, 0x5f, "goldmont", 0},
    {V_INTEL, 6, 0x7a, 0x7a, "goldmont-plus", 0},
    {V_INTEL, 6, 0x86, 0x86, "tremont", 0},
    {V_INTEL, 6, 0x96, 0x96, "tremont", 0},
    {V_INTEL, 6, 0x9c, 0x9c, "tremont", 0},
    {V_INTEL, 6, 0x57, 0x57, "knl", E_AVX512},
    {V_INTEL, 6, 0x85, 0x85, "knm", E_AVX512},

    /* AMD: family and model ranges from the AMD Revision Guides and
     * Processor Programming References of each family; names as GCC's
     * get_amd_cpu. */
    {V_AMD, 0x10, 0x00, 0xff, "amdfam10", 0},
    {V_AMD, 0x14, 0x00, 0xff, "btver1", 0},
    {V_AMD, 0x15, 0x00, 0x01, "bdver1", E_AVX},
    {V_AMD, 0x15, 0x02, 0x02, "bdver2", E_AVX},
    {V_AMD, 0x15, 0x03, 0x0f, "bdver1", E_AVX},
    {V_AMD, 0x15, 0x10, 0x2f, "bdver2", E_AVX},
    {V_AMD, 0x15, 0x30, 0x4f, "bdver3", E_AVX},
    {V_AMD, 0x15, 0x60, 0x7f, "bdver4", E_AVX2},
    {V_AMD, 0x16, 0x00, 0xff, "btver2", E_AVX},
    {V_AMD, 0x17, 0x00, 0x2f, "znver1", E_AVX2},
    {V_AMD, 0x17, 0x30, 0xff, "znver2", E_AVX2},
    {V_AMD, 0x19, 0x00, 0x0f, "znver3", E_AVX2},
    {V_AMD, 0x19, 0x10, 0x1f, "znver4", E_ZEN4},
    {V_AMD, 0x19, 0x20, 0x5f, "znver3", E_AVX2},
    {V_AMD, 0x19, 0x60, 0xaf, "znver4", E_ZEN4},
    {V_AMD, 0x1a, 0x00, 0x7f, "znver5", E_ZEN4 | B(AVXVNNI)},
    /* Hygon Dhyana: family 18h is a licensed Zen 1 (Linux
     * arch/x86/kernel/cpu/hygon.c). */
    {V_HYGON, 0x18, 0x00, 0xff, "znver1", E_AVX2},
};

/* Naming by features alone, newest first; the first row whose features
 * are all present wins. Each row's features are those GCC's -march adds at
 * that step (gcc/config/i386/i386.h PTA_* lists). */
static const struct {
    int vendor;
    uint64_t needs;
    const char *name;
} x86_by_features[] = {
    {V_INTEL, B(AMX_FP16) | B(AMX_TILE), "graniterapids"},
    {V_INTEL, B(AMX_TILE) | B(AVX512FP16), "sapphirerapids"},
    {V_INTEL, B(AVX512VP2INTERSECT) | B(AVX512VBMI2), "tigerlake"},
    {V_INTEL, B(AVX512VNNI) | B(AVX512VBMI2), "icelake-client"},
    {V_INTEL, B(AVX512BF16) | B(AVX512VNNI), "cooperlake"},
    {V_INTEL, B(AVX512VNNI) | B(AVX512BW), "cascadelake"},
    {V_INTEL, B(AVX512ER), "knl"},
    {V_INTEL, B(AVX512IFMA) | B(AVX512VBMI), "cannonlake"},
    {V_INTEL, B(AVX512F) | B(AVX512BW), "skylake-avx512"},
    {V_INTEL, B(AVXVNNI) | B(AVX2), "alderlake"},
    {V_INTEL, B(AVX2) | B(ADX) | B(CLFLUSHOPT), "skylake"},
    {V_INTEL, B(AVX2) | B(ADX), "broadwell"},
    {V_INTEL, B(AVX2), "haswell"},
    {V_INTEL, B(AVX) | B(F16C), "ivybridge"},
    {V_INTEL, B(AVX), "sandybridge"},
    {V_INTEL, B(SSE4_2) | B(PCLMUL), "westmere"},
    {V_INTEL, B(SSE4_2), "nehalem"},
    {V_INTEL, B(SSSE3), "core2"},
    {V_AMD, B(AVX512F) | B(AVXVNNI), "znver5"},
    {V_AMD, B(AVX512F), "znver4"},
    {V_AMD, B(AVX2) | B(VAES), "znver3"},
    {V_AMD, B(AVX2) | B(CLWB), "znver2"},
    {V_AMD, B(AVX2) | B(CLZERO), "znver1"},
    {V_AMD, B(AVX2) | B(XOP), "bdver4"},
    {V_AMD, B(FMA) | B(XOP), "bdver2"},
    {V_AMD, B(XOP), "bdver1"},
    {V_AMD, B(AVX) | B(MOVBE), "btver2"},
    {V_AMD, B(SSE4A) | B(SSSE3), "btver1"},
    {V_AMD, B(SSE4A), "amdfam10"},
    {V_HYGON, B(AVX2), "znver1"},
};

static const char *level_name(int32_t level)
{
    switch (level) {
    case 4: return "x86-64-v4";
    case 3: return "x86-64-v3";
    case 2: return "x86-64-v2";
    default: return "x86-64";
    }
}

static const char *by_features(int vendor, uint64_t isa)
{
    for (size_t i = 0; i < sizeof x86_by_features / sizeof x86_by_features[0]; i++) {
        uint64_t need = x86_by_features[i].needs;
        if (x86_by_features[i].vendor == vendor && (isa & need) == need)
            return x86_by_features[i].name;
    }
    return NULL;
}

static void list_bits(uint64_t bits, char *out, size_t cap)
{
    out[0] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < gpo_n_x86_isa_names && len < cap; i++) {
        if (!(bits & GPO_BIT(gpo_x86_isa_names[i].bit)))
            continue;
        int n = snprintf(out + len, cap - len, "%s%s", len ? " " : "", gpo_x86_isa_names[i].flag);
        if (n < 0)
            break;
        len += (size_t)n;
    }
}

void gpo_x86_name_microarch(gpo_cpu_facts *f)
{
    if (!f)
        return;
    const char *vname;
    int vendor = vendor_code(f->vendor_id, &vname);
    f->x86_level = gpo_x86_level(f->isa);
    gpo_strlcpy(f->isa_level, level_name(f->x86_level), sizeof f->isa_level);

    const x86_uarch *row = NULL;
    for (size_t i = 0; i < sizeof x86_uarchs / sizeof x86_uarchs[0]; i++) {
        const x86_uarch *r = &x86_uarchs[i];
        if (r->vendor == vendor && r->family == f->family && f->model >= r->model_lo &&
            f->model <= r->model_hi) {
            row = r;
            break;
        }
    }
    const char *feat = by_features(vendor, f->isa);
    if (!feat)
        feat = f->x86_level >= 1 ? level_name(f->x86_level) : "x86-64";

    if (row) {
        uint64_t extra = f->isa & SIGNATURE & ~row->expect;
        if (!extra) {
            gpo_strlcpy(f->microarch, row->name, sizeof f->microarch);
            gpo_snprintf(f->src_microarch, sizeof f->src_microarch,
                         "family %d model 0x%02x in the family/model table: %s", f->family,
                         f->model, row->name);
        } else {
            char names[160];
            list_bits(extra, names, sizeof names);
            gpo_strlcpy(f->microarch, feat, sizeof f->microarch);
            gpo_snprintf(f->src_microarch, sizeof f->src_microarch,
                         "family %d model 0x%02x is listed as %s, but this CPU also has %s "
                         "(a later part or a virtual CPU model): named by features: %s",
                         f->family, f->model, row->name, names, feat);
        }
    } else {
        gpo_strlcpy(f->microarch, feat, sizeof f->microarch);
        gpo_snprintf(f->src_microarch, sizeof f->src_microarch,
                     "%s family %d model 0x%02x not in the table: named by features: %s",
                     f->vendor_id[0] ? f->vendor_id : "unknown vendor", f->family,
                     f->model < 0 ? 0 : f->model, feat);
    }
}

/* ---- Live cpuid ---------------------------------------------------------- */

#ifdef GPO_HAVE_CPUID
enum { R_EAX, R_EBX, R_ECX, R_EDX };

/* Feature bits: Intel SDM vol. 2A, CPUID "Feature Information" (leaf 1),
 * "Structured Extended Feature Flags" (leaf 7); AMD APM vol. 3 appendix E
 * (leaves 8000_0001h, 8000_0008h). */
static const struct {
    uint32_t leaf, sub;
    uint8_t reg, bit;
    uint8_t feature;
} cpuid_bits[] = {
    {1, 0, R_EDX, 8, GPO_X86_CX8},          {1, 0, R_EDX, 15, GPO_X86_CMOV},
    {1, 0, R_EDX, 23, GPO_X86_MMX},         {1, 0, R_EDX, 24, GPO_X86_FXSR},
    {1, 0, R_EDX, 25, GPO_X86_SSE},         {1, 0, R_EDX, 26, GPO_X86_SSE2},
    {1, 0, R_ECX, 0, GPO_X86_SSE3},         {1, 0, R_ECX, 1, GPO_X86_PCLMUL},
    {1, 0, R_ECX, 9, GPO_X86_SSSE3},        {1, 0, R_ECX, 12, GPO_X86_FMA},
    {1, 0, R_ECX, 13, GPO_X86_CX16},        {1, 0, R_ECX, 19, GPO_X86_SSE4_1},
    {1, 0, R_ECX, 20, GPO_X86_SSE4_2},      {1, 0, R_ECX, 22, GPO_X86_MOVBE},
    {1, 0, R_ECX, 23, GPO_X86_POPCNT},      {1, 0, R_ECX, 25, GPO_X86_AES},
    {1, 0, R_ECX, 26, GPO_X86_XSAVE},       {1, 0, R_ECX, 28, GPO_X86_AVX},
    {1, 0, R_ECX, 29, GPO_X86_F16C},        {1, 0, R_ECX, 31, GPO_X86_HYPERVISOR},
    {7, 0, R_EBX, 3, GPO_X86_BMI1},         {7, 0, R_EBX, 5, GPO_X86_AVX2},
    {7, 0, R_EBX, 8, GPO_X86_BMI2},         {7, 0, R_EBX, 16, GPO_X86_AVX512F},
    {7, 0, R_EBX, 17, GPO_X86_AVX512DQ},    {7, 0, R_EBX, 19, GPO_X86_ADX},
    {7, 0, R_EBX, 21, GPO_X86_AVX512IFMA},  {7, 0, R_EBX, 23, GPO_X86_CLFLUSHOPT},
    {7, 0, R_EBX, 24, GPO_X86_CLWB},        {7, 0, R_EBX, 27, GPO_X86_AVX512ER},
    {7, 0, R_EBX, 28, GPO_X86_AVX512CD},    {7, 0, R_EBX, 29, GPO_X86_SHA},
    {7, 0, R_EBX, 30, GPO_X86_AVX512BW},    {7, 0, R_EBX, 31, GPO_X86_AVX512VL},
    {7, 0, R_ECX, 1, GPO_X86_AVX512VBMI},   {7, 0, R_ECX, 6, GPO_X86_AVX512VBMI2},
    {7, 0, R_ECX, 8, GPO_X86_GFNI},         {7, 0, R_ECX, 9, GPO_X86_VAES},
    {7, 0, R_ECX, 11, GPO_X86_AVX512VNNI},  {7, 0, R_ECX, 12, GPO_X86_AVX512BITALG},
    {7, 0, R_ECX, 14, GPO_X86_AVX512VPOPCNTDQ},
    {7, 0, R_EDX, 8, GPO_X86_AVX512VP2INTERSECT},
    {7, 0, R_EDX, 22, GPO_X86_AMX_BF16},    {7, 0, R_EDX, 23, GPO_X86_AVX512FP16},
    {7, 0, R_EDX, 24, GPO_X86_AMX_TILE},    {7, 0, R_EDX, 25, GPO_X86_AMX_INT8},
    {7, 1, R_EAX, 4, GPO_X86_AVXVNNI},      {7, 1, R_EAX, 5, GPO_X86_AVX512BF16},
    {7, 1, R_EAX, 21, GPO_X86_AMX_FP16},
    {0x80000001u, 0, R_ECX, 0, GPO_X86_LAHF},  {0x80000001u, 0, R_ECX, 5, GPO_X86_LZCNT},
    {0x80000001u, 0, R_ECX, 6, GPO_X86_SSE4A}, {0x80000001u, 0, R_ECX, 11, GPO_X86_XOP},
    {0x80000001u, 0, R_ECX, 16, GPO_X86_FMA4}, {0x80000001u, 0, R_EDX, 29, GPO_X86_LM},
    {0x80000008u, 0, R_EBX, 0, GPO_X86_CLZERO},
};

/* XCR0 state components (Intel SDM vol. 1, 13.1 "XSAVE-supported
 * features"): SSE 1, AVX 2, AVX-512 opmask/ZMM_Hi256/Hi16_ZMM 5-7, AMX
 * TILECFG/TILEDATA 17-18. */
#define XCR0_AVX 0x6u
#define XCR0_AVX512 0xe6u
#define XCR0_AMX 0x60000u

static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* Every cpuid traps to the hypervisor in a virtual machine (several
 * microseconds each on a nested KVM guest), so each leaf is asked once and
 * the feature table reads the cached registers. */
typedef struct cpuid_cache {
    uint32_t max_basic, max_ext;
    int n;
    struct {
        uint32_t leaf, sub;
        unsigned r[4];
    } e[12];
} cpuid_cache;

static const unsigned *cpuid_leaf(cpuid_cache *c, uint32_t leaf, uint32_t sub)
{
    static const unsigned zero[4] = {0, 0, 0, 0};
    if ((leaf < 0x80000000u && leaf > c->max_basic) ||
        (leaf >= 0x80000000u && leaf > c->max_ext))
        return zero;
    for (int i = 0; i < c->n; i++)
        if (c->e[i].leaf == leaf && c->e[i].sub == sub)
            return c->e[i].r;
    if (c->n == (int)(sizeof c->e / sizeof c->e[0]))
        return zero;
    unsigned *r = c->e[c->n].r;
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
    c->e[c->n].leaf = leaf;
    c->e[c->n].sub = sub;
    c->n++;
    return r;
}

int gpo_x86_cpuid_live(gpo_cpu_facts *f)
{
    if (!f)
        return -1;
    cpuid_cache c;
    memset(&c, 0, sizeof c);
    unsigned r[4];
    /* cpuid itself is part of x86-64 (AMD64 architecture). */
    __cpuid(0, r[0], r[1], r[2], r[3]);
    if (r[0] < 1)
        return -1;
    c.max_basic = r[0];
    memcpy(f->vendor_id, &r[1], 4);
    memcpy(f->vendor_id + 4, &r[3], 4);
    memcpy(f->vendor_id + 8, &r[2], 4);
    f->vendor_id[12] = '\0';
    f->cpuid_max_leaf = c.max_basic;
    __cpuid(0x80000000u, r[0], r[1], r[2], r[3]);
    c.max_ext = r[0] >= 0x80000000u && r[0] < 0x80000100u ? r[0] : 0;

    /* Display family/model: Intel SDM vol. 2A, CPUID leaf 1 EAX. */
    const unsigned *l1 = cpuid_leaf(&c, 1, 0);
    uint32_t base_family = (l1[0] >> 8) & 0xf, base_model = (l1[0] >> 4) & 0xf;
    f->family = (int32_t)base_family;
    f->model = (int32_t)base_model;
    if (base_family == 0xf)
        f->family += (int32_t)((l1[0] >> 20) & 0xff);
    if (base_family == 0x6 || base_family == 0xf)
        f->model += (int32_t)(((l1[0] >> 16) & 0xf) << 4);
    f->stepping = (int32_t)(l1[0] & 0xf);
    int osxsave = (l1[2] >> 27) & 1;

    uint64_t isa = 0;
    for (size_t i = 0; i < sizeof cpuid_bits / sizeof cpuid_bits[0]; i++) {
        /* Leaf 7 subleaf 1 exists when leaf 7.0 EAX says so; CLZERO
         * (8000_0008h) is AMD's and only names Zen parts. */
        if (cpuid_bits[i].leaf == 7 && cpuid_bits[i].sub == 1 && cpuid_leaf(&c, 7, 0)[0] < 1)
            continue;
        if (cpuid_bits[i].leaf == 0x80000008u && vendor_code(f->vendor_id, NULL) == V_INTEL)
            continue;
        const unsigned *v = cpuid_leaf(&c, cpuid_bits[i].leaf, cpuid_bits[i].sub);
        if ((v[cpuid_bits[i].reg] >> cpuid_bits[i].bit) & 1)
            isa |= GPO_BIT(cpuid_bits[i].feature);
    }

    /* A feature is usable only when the OS saves its registers: the same
     * rule by which Linux hides the flags (arch/x86/kernel/fpu/xstate.c). */
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    if ((xcr0 & XCR0_AVX) != XCR0_AVX)
        isa &= ~(B(AVX) | B(F16C) | B(FMA) | B(AVX2) | B(VAES) | B(XOP) | B(FMA4) |
                 B(AVXVNNI));
    if ((xcr0 & XCR0_AVX512) != XCR0_AVX512)
        isa &= ~(B(AVX512F) | B(AVX512DQ) | B(AVX512CD) | B(AVX512BW) | B(AVX512VL) |
                 B(AVX512IFMA) | B(AVX512VBMI) | B(AVX512VBMI2) | B(AVX512VNNI) |
                 B(AVX512BITALG) | B(AVX512VPOPCNTDQ) | B(AVX512BF16) | B(AVX512FP16) |
                 B(AVX512VP2INTERSECT) | B(AVX512ER));
    if ((xcr0 & XCR0_AMX) != XCR0_AMX)
        isa &= ~(B(AMX_TILE) | B(AMX_INT8) | B(AMX_BF16) | B(AMX_FP16));
    f->isa = isa;

    /* Brand string: leaves 8000_0002h..8000_0004h. */
    if (c.max_ext >= 0x80000004u) {
        char brand[49];
        for (uint32_t i = 0; i < 3; i++)
            memcpy(brand + 16 * i, cpuid_leaf(&c, 0x80000002u + i, 0), 16);
        brand[48] = '\0';
        gpo_strlcpy(f->model_name, gpo_trim(brand), sizeof f->model_name);
    }
    return 0;
}

int32_t gpo_x86_cpuid_max_mhz(const gpo_cpu_facts *f)
{
    if (!f || f->cpuid_max_leaf < 0x16)
        return -1;
    unsigned a, b, c, d;
    /* Leaf 16h EBX: maximum frequency in MHz (Intel SDM vol. 2A). */
    __cpuid_count(0x16, 0, a, b, c, d);
    (void)a, (void)c, (void)d;
    return (b & 0xffff) ? (int32_t)(b & 0xffff) : -1;
}
#else
int gpo_x86_cpuid_live(gpo_cpu_facts *f)
{
    (void)f;
    return -1;
}

int32_t gpo_x86_cpuid_max_mhz(const gpo_cpu_facts *f)
{
    (void)f;
    return -1;
}
#endif

/* ---- Reading ------------------------------------------------------------ */

static int int_field(const char *text, const char *key, int base, int32_t *out)
{
    char val[64];
    if (gpo_cpuinfo_field(text, key, val, sizeof val))
        return -1;
    char *end;
    long v = strtol(val, &end, base);
    if (end == val || *end || v < 0 || v > 0xffff)
        return -1;
    *out = (int32_t)v;
    return 0;
}

static void parse_cpuinfo(const char *text, gpo_cpu_facts *f)
{
    char val[4096];
    if (gpo_cpuinfo_field(text, "vendor_id", val, sizeof val) == 0)
        gpo_strlcpy(f->vendor_id, val, sizeof f->vendor_id);
    if (gpo_cpuinfo_field(text, "model name", val, sizeof val) == 0)
        gpo_strlcpy(f->model_name, val, sizeof f->model_name);
    int_field(text, "cpu family", 10, &f->family);
    int_field(text, "model", 10, &f->model);
    int_field(text, "stepping", 10, &f->stepping);
    if (gpo_cpuinfo_field(text, "flags", val, sizeof val) == 0)
        f->isa = gpo_x86_features_from_flags(val);
}

gpuopt_status gpo_x86_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f)
{
    if (!fs || !f)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpo_x86_read: NULL argument");
    f->arch = GPO_CPU_ARCH_X86_64;
    if (!gpo_fs_is_recorded(fs) && gpo_x86_cpuid_live(f) == 0) {
        gpo_strlcpy(f->src_isa, "cpuid instruction (XCR0-checked)", sizeof f->src_isa);
    } else {
        char *text = NULL;
        gpuopt_status st = gpo_fs_read_alloc(fs, "/proc/cpuinfo", &text, NULL);
        if (st == GPUOPT_ERR_NO_MEMORY)
            return st;
        if (st) {
            gpo_cpu_note(f, log, GPUOPT_LOG_WARN,
                         "no /proc/cpuinfo (%s): ISA features unknown, assuming x86-64 baseline",
                         gpo_detail_get());
            /* Every x86-64 CPU has the v1 baseline (AMD64 architecture). */
            f->isa = x86_levels[0].needs;
            gpo_strlcpy(f->src_isa, "assumed x86-64 baseline", sizeof f->src_isa);
        } else {
            parse_cpuinfo(text, f);
            free(text);
            gpo_strlcpy(f->src_isa, "/proc/cpuinfo flags", sizeof f->src_isa);
        }
    }
    const char *vname;
    vendor_code(f->vendor_id, &vname);
    gpo_strlcpy(f->vendor, vname ? vname : (f->vendor_id[0] ? f->vendor_id : "unknown"),
                sizeof f->vendor);
    gpo_x86_name_microarch(f);
    return GPUOPT_OK;
}
