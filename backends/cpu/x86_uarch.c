/* x86-64: the microarchitecture name (GCC -march spelling) from the
 * vendor/family/model table, falling back to the feature set. The features
 * come from cpuid_x86.c; nothing here reads the machine. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "cpu/x86_isa.h"
#include "cpu/x86_uarch.h"
#include "util/strutil.h"

#define B(f) GPO_BIT(GPO_X86_##f)

/* Features that set microarchitectures apart. When a CPU has one that its
 * family/model row does not list, the model number is not the silicon's
 * (a hypervisor's virtual CPU model, or a new stepping): name by features. */
#define SIGNATURE                                                                                  \
    (B(AVX) | B(AVX2) | B(AVX512F) | B(AVX512VNNI) | B(AVX512BF16) | B(AVX512FP16) | B(AMX_TILE) | \
     B(AVXVNNI))

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
    {GPO_X86_VENDOR_INTEL, 6, 0x0f, 0x0f, "core2", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x17, 0x17, "core2", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x1d, 0x1d, "core2", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x1a, 0x1a, "nehalem", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x1e, 0x1f, "nehalem", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x2e, 0x2e, "nehalem", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x25, 0x25, "westmere", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x2c, 0x2c, "westmere", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x2f, 0x2f, "westmere", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x2a, 0x2a, "sandybridge", E_AVX},
    {GPO_X86_VENDOR_INTEL, 6, 0x2d, 0x2d, "sandybridge", E_AVX},
    {GPO_X86_VENDOR_INTEL, 6, 0x3a, 0x3a, "ivybridge", E_AVX},
    {GPO_X86_VENDOR_INTEL, 6, 0x3e, 0x3e, "ivybridge", E_AVX},
    {GPO_X86_VENDOR_INTEL, 6, 0x3c, 0x3c, "haswell", E_AVX2},
    {GPO_X86_VENDOR_INTEL, 6, 0x3f, 0x3f, "haswell", E_AVX2},
    {GPO_X86_VENDOR_INTEL, 6, 0x45, 0x46, "haswell", E_AVX2},
    {GPO_X86_VENDOR_INTEL, 6, 0x3d, 0x3d, "broadwell", E_AVX2},
    {GPO_X86_VENDOR_INTEL, 6, 0x47, 0x47, "broadwell", E_AVX2},
    {GPO_X86_VENDOR_INTEL, 6, 0x4f, 0x4f, "broadwell", E_AVX2},
    {GPO_X86_VENDOR_INTEL, 6, 0x56, 0x56, "broadwell", E_AVX2},
    /* Skylake, Kaby Lake, Coffee Lake, Comet Lake client: one -march. */
    {GPO_X86_VENDOR_INTEL, 6, 0x4e, 0x4e, "skylake", E_AVX2},
    {GPO_X86_VENDOR_INTEL, 6, 0x5e, 0x5e, "skylake", E_AVX2},
    {GPO_X86_VENDOR_INTEL, 6, 0x8e, 0x8e, "skylake", E_AVX2},
    {GPO_X86_VENDOR_INTEL, 6, 0x9e, 0x9e, "skylake", E_AVX2},
    {GPO_X86_VENDOR_INTEL, 6, 0xa5, 0xa6, "skylake", E_AVX2},
    /* Skylake-SP; Cascade Lake (AVX512-VNNI) and Cooper Lake (AVX512-BF16)
     * share the model and are told apart by features below. */
    {GPO_X86_VENDOR_INTEL, 6, 0x55, 0x55, "skylake-avx512", E_AVX512},
    {GPO_X86_VENDOR_INTEL, 6, 0x66, 0x66, "cannonlake", E_AVX512},
    {GPO_X86_VENDOR_INTEL, 6, 0x6a, 0x6a, "icelake-server", E_ICL},
    {GPO_X86_VENDOR_INTEL, 6, 0x6c, 0x6c, "icelake-server", E_ICL},
    {GPO_X86_VENDOR_INTEL, 6, 0x7d, 0x7e, "icelake-client", E_ICL},
    {GPO_X86_VENDOR_INTEL, 6, 0x9d, 0x9d, "icelake-client", E_ICL},
    {GPO_X86_VENDOR_INTEL, 6, 0x8c, 0x8d, "tigerlake", E_ICL},
    {GPO_X86_VENDOR_INTEL, 6, 0xa7, 0xa8, "rocketlake", E_ICL},
    /* Hybrid client parts: Alder Lake, Raptor Lake, Meteor Lake. */
    {GPO_X86_VENDOR_INTEL, 6, 0x97, 0x97, "alderlake", E_ADL},
    {GPO_X86_VENDOR_INTEL, 6, 0x9a, 0x9a, "alderlake", E_ADL},
    {GPO_X86_VENDOR_INTEL, 6, 0xbf, 0xbf, "alderlake", E_ADL},
    {GPO_X86_VENDOR_INTEL, 6, 0xb7, 0xb7, "raptorlake", E_ADL},
    {GPO_X86_VENDOR_INTEL, 6, 0xba, 0xba, "raptorlake", E_ADL},
    {GPO_X86_VENDOR_INTEL, 6, 0xaa, 0xac, "meteorlake", E_ADL},
    {GPO_X86_VENDOR_INTEL, 6, 0xbd, 0xbd, "lunarlake", E_ADL},
    {GPO_X86_VENDOR_INTEL, 6, 0xc5, 0xc6, "arrowlake", E_ADL},
    {GPO_X86_VENDOR_INTEL, 6, 0xb5, 0xb5, "arrowlake", E_ADL},
    /* Xeon Scalable 4th/5th gen (Emerald Rapids is -march=emeraldrapids, an
     * alias of sapphirerapids), 6th gen P-core and E-core. */
    {GPO_X86_VENDOR_INTEL, 6, 0x8f, 0x8f, "sapphirerapids", E_SPR},
    {GPO_X86_VENDOR_INTEL, 6, 0xcf, 0xcf, "emeraldrapids", E_SPR},
    {GPO_X86_VENDOR_INTEL, 6, 0xad, 0xad, "graniterapids", E_SPR},
    {GPO_X86_VENDOR_INTEL, 6, 0xae, 0xae, "graniterapids-d", E_SPR},
    {GPO_X86_VENDOR_INTEL, 6, 0xaf, 0xaf, "sierraforest", E_ADL},
    {GPO_X86_VENDOR_INTEL, 6, 0xb6, 0xb6, "grandridge", E_ADL},
    {GPO_X86_VENDOR_INTEL, 6, 0xdd, 0xdd, "clearwaterforest", E_ADL},
    /* Atom and Xeon Phi. */
    {GPO_X86_VENDOR_INTEL, 6, 0x1c, 0x1c, "bonnell", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x26, 0x26, "bonnell", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x37, 0x37, "silvermont", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x4a, 0x4d, "silvermont", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x5a, 0x5a, "silvermont", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x5d, 0x5d, "silvermont", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x75, 0x75, "silvermont", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x5c, 0x5c, "goldmont", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x5f, 0x5f, "goldmont", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x7a, 0x7a, "goldmont-plus", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x86, 0x86, "tremont", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x96, 0x96, "tremont", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x9c, 0x9c, "tremont", 0},
    {GPO_X86_VENDOR_INTEL, 6, 0x57, 0x57, "knl", E_AVX512},
    {GPO_X86_VENDOR_INTEL, 6, 0x85, 0x85, "knm", E_AVX512},

    /* AMD: family and model ranges from the AMD Revision Guides and
     * Processor Programming References of each family; names as GCC's
     * get_amd_cpu. */
    {GPO_X86_VENDOR_AMD, 0x10, 0x00, 0xff, "amdfam10", 0},
    {GPO_X86_VENDOR_AMD, 0x14, 0x00, 0xff, "btver1", 0},
    {GPO_X86_VENDOR_AMD, 0x15, 0x00, 0x01, "bdver1", E_AVX},
    {GPO_X86_VENDOR_AMD, 0x15, 0x02, 0x02, "bdver2", E_AVX},
    {GPO_X86_VENDOR_AMD, 0x15, 0x03, 0x0f, "bdver1", E_AVX},
    {GPO_X86_VENDOR_AMD, 0x15, 0x10, 0x2f, "bdver2", E_AVX},
    {GPO_X86_VENDOR_AMD, 0x15, 0x30, 0x4f, "bdver3", E_AVX},
    {GPO_X86_VENDOR_AMD, 0x15, 0x60, 0x7f, "bdver4", E_AVX2},
    {GPO_X86_VENDOR_AMD, 0x16, 0x00, 0xff, "btver2", E_AVX},
    {GPO_X86_VENDOR_AMD, 0x17, 0x00, 0x2f, "znver1", E_AVX2},
    {GPO_X86_VENDOR_AMD, 0x17, 0x30, 0xff, "znver2", E_AVX2},
    {GPO_X86_VENDOR_AMD, 0x19, 0x00, 0x0f, "znver3", E_AVX2},
    {GPO_X86_VENDOR_AMD, 0x19, 0x10, 0x1f, "znver4", E_ZEN4},
    {GPO_X86_VENDOR_AMD, 0x19, 0x20, 0x5f, "znver3", E_AVX2},
    {GPO_X86_VENDOR_AMD, 0x19, 0x60, 0xaf, "znver4", E_ZEN4},
    {GPO_X86_VENDOR_AMD, 0x1a, 0x00, 0x7f, "znver5", E_ZEN4 | B(AVXVNNI)},
    /* Hygon Dhyana: family 18h is a licensed Zen 1 (Linux
     * arch/x86/kernel/cpu/hygon.c). */
    {GPO_X86_VENDOR_HYGON, 0x18, 0x00, 0xff, "znver1", E_AVX2},
};

/* Naming by features alone, newest first; the first row whose features
 * are all present wins. Each row's features are those GCC's -march adds at
 * that step (gcc/config/i386/i386.h PTA_* lists). */
static const struct {
    int vendor;
    uint64_t needs;
    const char *name;
} x86_by_features[] = {
    {GPO_X86_VENDOR_INTEL, B(AMX_FP16) | B(AMX_TILE), "graniterapids"},
    {GPO_X86_VENDOR_INTEL, B(AMX_TILE) | B(AVX512FP16), "sapphirerapids"},
    {GPO_X86_VENDOR_INTEL, B(AVX512VP2INTERSECT) | B(AVX512VBMI2), "tigerlake"},
    {GPO_X86_VENDOR_INTEL, B(AVX512VNNI) | B(AVX512VBMI2), "icelake-client"},
    {GPO_X86_VENDOR_INTEL, B(AVX512BF16) | B(AVX512VNNI), "cooperlake"},
    {GPO_X86_VENDOR_INTEL, B(AVX512VNNI) | B(AVX512BW), "cascadelake"},
    {GPO_X86_VENDOR_INTEL, B(AVX512ER), "knl"},
    {GPO_X86_VENDOR_INTEL, B(AVX512IFMA) | B(AVX512VBMI), "cannonlake"},
    {GPO_X86_VENDOR_INTEL, B(AVX512F) | B(AVX512BW), "skylake-avx512"},
    {GPO_X86_VENDOR_INTEL, B(AVXVNNI) | B(AVX2), "alderlake"},
    {GPO_X86_VENDOR_INTEL, B(AVX2) | B(ADX) | B(CLFLUSHOPT), "skylake"},
    {GPO_X86_VENDOR_INTEL, B(AVX2) | B(ADX), "broadwell"},
    {GPO_X86_VENDOR_INTEL, B(AVX2), "haswell"},
    {GPO_X86_VENDOR_INTEL, B(AVX) | B(F16C), "ivybridge"},
    {GPO_X86_VENDOR_INTEL, B(AVX), "sandybridge"},
    {GPO_X86_VENDOR_INTEL, B(SSE4_2) | B(PCLMUL), "westmere"},
    {GPO_X86_VENDOR_INTEL, B(SSE4_2), "nehalem"},
    {GPO_X86_VENDOR_INTEL, B(SSSE3), "core2"},
    {GPO_X86_VENDOR_AMD, B(AVX512F) | B(AVXVNNI), "znver5"},
    {GPO_X86_VENDOR_AMD, B(AVX512F), "znver4"},
    {GPO_X86_VENDOR_AMD, B(AVX2) | B(VAES), "znver3"},
    {GPO_X86_VENDOR_AMD, B(AVX2) | B(CLWB), "znver2"},
    {GPO_X86_VENDOR_AMD, B(AVX2) | B(CLZERO), "znver1"},
    {GPO_X86_VENDOR_AMD, B(AVX2) | B(XOP), "bdver4"},
    {GPO_X86_VENDOR_AMD, B(FMA) | B(XOP), "bdver2"},
    {GPO_X86_VENDOR_AMD, B(XOP), "bdver1"},
    {GPO_X86_VENDOR_AMD, B(AVX) | B(MOVBE), "btver2"},
    {GPO_X86_VENDOR_AMD, B(SSE4A) | B(SSSE3), "btver1"},
    {GPO_X86_VENDOR_AMD, B(SSE4A), "amdfam10"},
    {GPO_X86_VENDOR_HYGON, B(AVX2), "znver1"},
};

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
    assert(f);
    const char *vname;
    int vendor = gpo_x86_vendor(f->vendor_id, &vname);
    f->x86_level = gpo_x86_level(f->isa);
    gpo_strlcpy(f->isa_level, gpo_x86_level_name(f->x86_level), sizeof f->isa_level);

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
        feat = f->x86_level >= 1 ? gpo_x86_level_name(f->x86_level) : "x86-64";

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
