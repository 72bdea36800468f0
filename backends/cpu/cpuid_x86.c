/* x86-64: vendor, family/model and ISA features (the level and the
 * microarchitecture name are derived in x86_uarch.c).
 *
 * Live, the facts come from the cpuid instruction (with the OS's XCR0 state
 * checked, as the kernel does before it shows a flag); from a recorded tree
 * they come from /proc/cpuinfo. Both land in the same feature bits, so the
 * naming rules below never know which source fed them. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpuid_x86.h"
#include "cpu/cpu_procfs.h"
#include "cpu/x86_isa.h"
#include "cpu/x86_uarch.h"
#include "util/strutil.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <pthread.h>
#define GPO_HAVE_CPUID 1
#endif

#define B(f) GPO_BIT(GPO_X86_##f)

/* ---- Live cpuid ---------------------------------------------------------- */

#ifdef GPO_HAVE_CPUID
enum { R_EAX, R_EBX, R_ECX, R_EDX };

static const struct {
    uint32_t leaf, sub;
    uint8_t reg, bit;
    uint8_t feature;
} cpuid_bits[] = {
#define GPO_X86_CPUID_(id, flag, display, leaf, sub, reg, bit)                                     \
    {leaf, sub, R_##reg, bit, GPO_X86_##id},
    GPO_X86_FEATURES(GPO_X86_CPUID_)
#undef GPO_X86_CPUID_
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
    if ((leaf < 0x80000000u && leaf > c->max_basic) || (leaf >= 0x80000000u && leaf > c->max_ext))
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

/* What cpuid says about the processor, asked once per process: the
 * answers cannot change while it runs (the OS fixes XCR0 at boot), and in a
 * virtual machine every cpuid traps to the hypervisor (several microseconds
 * each), so a second context reuses them instead of trapping again. */
typedef struct cpuid_answers {
    int ok; /* leaf 0 reports leaf 1 */
    char vendor_id[13];
    int32_t family, model, stepping;
    uint64_t isa;
    uint32_t max_leaf;
    char brand[49]; /* "" under a hypervisor (see below) */
    int32_t max_mhz;
} cpuid_answers;

static cpuid_answers answers;
static pthread_once_t answers_once = PTHREAD_ONCE_INIT;

static void ask_cpuid(void)
{
    cpuid_answers *a = &answers;
    cpuid_cache c;
    memset(&c, 0, sizeof c);
    a->max_mhz = -1;
    unsigned r[4];
    /* cpuid itself is part of x86-64 (AMD64 architecture). */
    __cpuid(0, r[0], r[1], r[2], r[3]);
    if (r[0] < 1)
        return;
    c.max_basic = r[0];
    memcpy(a->vendor_id, &r[1], 4);
    memcpy(a->vendor_id + 4, &r[3], 4);
    memcpy(a->vendor_id + 8, &r[2], 4);
    a->vendor_id[12] = '\0';
    a->max_leaf = c.max_basic;
    __cpuid(0x80000000u, r[0], r[1], r[2], r[3]);
    c.max_ext = r[0] >= 0x80000000u && r[0] < 0x80000100u ? r[0] : 0;

    /* Display family/model: Intel SDM vol. 2A, CPUID leaf 1 EAX. */
    const unsigned *l1 = cpuid_leaf(&c, 1, 0);
    uint32_t base_family = (l1[0] >> 8) & 0xf, base_model = (l1[0] >> 4) & 0xf;
    a->family = (int32_t)base_family;
    a->model = (int32_t)base_model;
    if (base_family == 0xf)
        a->family += (int32_t)((l1[0] >> 20) & 0xff);
    if (base_family == 0x6 || base_family == 0xf)
        a->model += (int32_t)(((l1[0] >> 16) & 0xf) << 4);
    a->stepping = (int32_t)(l1[0] & 0xf);
    int osxsave = (l1[2] >> 27) & 1;

    uint64_t isa = 0;
    int intel = gpo_x86_vendor(a->vendor_id, NULL) == GPO_X86_VENDOR_INTEL;
    for (size_t i = 0; i < sizeof cpuid_bits / sizeof cpuid_bits[0]; i++) {
        /* Leaf 7 subleaf 1 exists when leaf 7.0 EAX says so; CLZERO
         * (8000_0008h) is AMD's and only names Zen parts. */
        if (cpuid_bits[i].leaf == 7 && cpuid_bits[i].sub == 1 && cpuid_leaf(&c, 7, 0)[0] < 1)
            continue;
        if (cpuid_bits[i].leaf == 0x80000008u && intel)
            continue;
        const unsigned *v = cpuid_leaf(&c, cpuid_bits[i].leaf, cpuid_bits[i].sub);
        if ((v[cpuid_bits[i].reg] >> cpuid_bits[i].bit) & 1)
            isa |= GPO_BIT(cpuid_bits[i].feature);
    }

    /* A feature is usable only when the OS saves its registers: the same
     * rule by which Linux hides the flags (arch/x86/kernel/fpu/xstate.c). */
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    if ((xcr0 & XCR0_AVX) != XCR0_AVX)
        isa &= ~(B(AVX) | B(F16C) | B(FMA) | B(AVX2) | B(VAES) | B(XOP) | B(FMA4) | B(AVXVNNI));
    if ((xcr0 & XCR0_AVX512) != XCR0_AVX512)
        isa &= ~(B(AVX512F) | B(AVX512DQ) | B(AVX512CD) | B(AVX512BW) | B(AVX512VL) |
                 B(AVX512IFMA) | B(AVX512VBMI) | B(AVX512VBMI2) | B(AVX512VNNI) | B(AVX512BITALG) |
                 B(AVX512VPOPCNTDQ) | B(AVX512BF16) | B(AVX512FP16) | B(AVX512VP2INTERSECT) |
                 B(AVX512ER));
    if ((xcr0 & XCR0_AMX) != XCR0_AMX)
        isa &= ~(B(AMX_TILE) | B(AMX_INT8) | B(AMX_BF16) | B(AMX_FP16));
    a->isa = isa;

    /* Under a hypervisor (leaf 1 ECX bit 31) the brand and the clock are
     * left to /proc/cpuinfo: it has the same brand string, and hypervisors
     * leave leaf 16h zero or pass the host's clock through. */
    if (!(isa & B(HYPERVISOR))) {
        /* Brand string: leaves 8000_0002h..8000_0004h. */
        if (c.max_ext >= 0x80000004u) {
            char brand[49];
            for (uint32_t i = 0; i < 3; i++)
                memcpy(brand + 16 * i, cpuid_leaf(&c, 0x80000002u + i, 0), 16);
            brand[48] = '\0';
            gpo_strlcpy(a->brand, gpo_trim(brand), sizeof a->brand);
        }
        /* Leaf 16h EBX: maximum frequency in MHz (Intel SDM vol. 2A). */
        if (c.max_basic >= 0x16) {
            unsigned mhz = cpuid_leaf(&c, 0x16, 0)[1] & 0xffff;
            a->max_mhz = mhz ? (int32_t)mhz : -1;
        }
    }
    a->ok = 1;
}

int gpo_x86_cpuid_live(gpo_cpu_facts *f)
{
    assert(f);
    pthread_once(&answers_once, ask_cpuid);
    if (!answers.ok)
        return -1;
    gpo_strlcpy(f->vendor_id, answers.vendor_id, sizeof f->vendor_id);
    f->family = answers.family;
    f->model = answers.model;
    f->stepping = answers.stepping;
    f->isa = answers.isa;
    f->cpuid_max_leaf = answers.max_leaf;
    f->cpuid_max_mhz = answers.max_mhz;
    if (answers.brand[0])
        gpo_strlcpy(f->model_name, answers.brand, sizeof f->model_name);
    return 0;
}
#else
int gpo_x86_cpuid_live(gpo_cpu_facts *f)
{
    assert(f);
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
    assert(fs && f);
    f->arch = GPO_CPU_ARCH_X86_64;
    if (!gpo_fs_is_recorded(fs) && gpo_x86_cpuid_live(f) == 0) {
        gpo_strlcpy(f->src_isa, "cpuid instruction (XCR0-checked)", sizeof f->src_isa);
        const char *text;
        char name[256];
        if (!f->model_name[0] && gpo_cpu_cpuinfo(fs, f, &text) == GPUOPT_OK &&
            gpo_cpuinfo_field(text, "model name", name, sizeof name) == 0)
            gpo_strlcpy(f->model_name, name, sizeof f->model_name);
    } else {
        const char *text;
        gpuopt_status st = gpo_cpu_cpuinfo(fs, f, &text);
        if (st == GPUOPT_ERR_NO_MEMORY)
            return st;
        if (st) {
            gpo_cpu_note(f, log, GPUOPT_LOG_WARN,
                         "no /proc/cpuinfo (%s): ISA features unknown, assuming x86-64 baseline",
                         gpo_detail_get());
            /* Every x86-64 CPU has the v1 baseline (AMD64 architecture). */
            f->isa = gpo_x86_level_features(1);
            gpo_strlcpy(f->src_isa, "assumed x86-64 baseline", sizeof f->src_isa);
        } else {
            parse_cpuinfo(text, f);
            gpo_strlcpy(f->src_isa, "/proc/cpuinfo flags", sizeof f->src_isa);
        }
    }
    const char *vname;
    gpo_x86_vendor(f->vendor_id, &vname);
    gpo_strlcpy(f->vendor, vname ? vname : (f->vendor_id[0] ? f->vendor_id : "unknown"),
                sizeof f->vendor);
    gpo_x86_name_microarch(f);
    return GPUOPT_OK;
}
