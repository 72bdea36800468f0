/* A core's fp32 vector throughput by microarchitecture (see cpu_peak.h).
 *
 * FLOP/cycle = FMA pipes x fp32 lanes per pipe x 2. The width is what the
 * pipes process per cycle, not the widest instruction the core decodes:
 * Zen 4 decodes AVX-512 but "reused the existing 256-bit hardware from
 * Zen3 by 'double-pumping' 512-bit instructions" (A. Yee, "Zen5's AVX512
 * Teardown", numberworld.org, 2024), so it does 32, not 64. Rows name the
 * microarchitecture as the readers do (GCC -march / -mcpu spelling,
 * x86_uarch.c and cpuinfo_arm.c). Cross-checked against LLVM 19's
 * scheduling models (llvm-mca on 12 independent vfmadd231ps / fmla:
 * "Block RThroughput"), which are models, not silicon: they under-count
 * Ice Lake-SP and Zen 5 zmm FMAs. */
#include "cpu/cpu_peak.h"

#include <assert.h>
#include <string.h>

#include "cpu/cpuinfo_arm.h"
#include "cpu/x86_isa.h"
#include "util/strutil.h"

/* Skylake-SP and Cascade/Cooper Lake-SP: the second 512-bit FMA unit
 * (port 5) exists on some SKUs only, and CPUID does not say which. */
#define SKX_BY_SKU (-1)

typedef struct peak_row {
    const char *microarch;
    int32_t flops; /* fp32 FLOP per cycle per core; SKX_BY_SKU: by brand */
    const char *source;
} peak_row;

/* Notes shared by the parts of one design. */
#define ICL_CLIENT "one 512-bit FMA (ports 0+1) or 2 x 256-bit (Intel optimization manual)"
#define XEON_2FMA "2 x 512-bit FMA, assumed for every SKU (not verified per SKU)"
#define HYBRID                                                                                     \
    "hybrid: P-cores 32, E-cores 16; every core counted at the E-core rate (the table cannot "     \
    "tell cores apart)"

static const peak_row peak_rows[] = {
    /* Intel. Optimization Reference Manual (248966), per generation: two
     * FP pipes, add and multiply, before FMA; two FMA pipes from Haswell. */
    {"core2", 8, "Intel optimization manual: 128-bit add and multiply pipes"},
    {"nehalem", 8, "Intel optimization manual: 128-bit add and multiply pipes"},
    {"westmere", 8, "Intel optimization manual: 128-bit add and multiply pipes"},
    {"sandybridge", 16, "Intel optimization manual: 256-bit add and multiply pipes, no FMA"},
    {"ivybridge", 16, "Intel optimization manual: 256-bit add and multiply pipes, no FMA"},
    {"haswell", 32,
     "2 x 256-bit FMA (J. McCalpin, Intel forum 'Calculate the Max Flops on Skylake'; "
     "llvm-mca haswell)"},
    {"broadwell", 32, "2 x 256-bit FMA (llvm-mca broadwell)"},
    {"skylake", 32, "2 x 256-bit FMA (llvm-mca skylake)"},
    {"skylake-avx512", SKX_BY_SKU, NULL},
    {"cascadelake", SKX_BY_SKU, NULL},
    {"cooperlake", SKX_BY_SKU, NULL},
    /* Client parts with AVX-512 fuse ports 0 and 1 into one 512-bit FMA
     * and have no port-5 FMA: 32 either way (Intel optimization manual,
     * Ice Lake client). */
    {"cannonlake", 32, ICL_CLIENT},
    {"icelake-client", 32, ICL_CLIENT},
    {"tigerlake", 32, ICL_CLIENT},
    {"rocketlake", 32, ICL_CLIENT},
    /* Xeon Scalable 3rd generation onwards: two 512-bit FMA units assumed
     * on every SKU (not verified per SKU; LLVM 19 models one). */
    {"icelake-server", 64, XEON_2FMA},
    {"sapphirerapids", 64, XEON_2FMA},
    {"emeraldrapids", 64, XEON_2FMA},
    {"graniterapids", 64, XEON_2FMA},
    {"graniterapids-d", 64, XEON_2FMA},
    {"knl", 64, "2 x 512-bit FMA per core (Xeon Phi x200)"},
    {"knm", 64, "2 x 512-bit FMA per core (Xeon Phi 72x5)"},
    /* Hybrid clients: P-cores 2 x 256-bit FMA, E-cores (Gracemont,
     * Crestmont) 2 x 128-bit. Per-core types are not read here, so every
     * core counts at the E-core rate: the lower bound. */
    {"alderlake", 16, HYBRID},
    {"raptorlake", 16, HYBRID},
    {"meteorlake", 16, HYBRID},
    /* AMD. */
    {"znver1", 16,
     "2 x 128-bit FMA, AVX2 split in two (Agner Fog, microarchitecture.pdf; not verified here)"},
    {"znver2", 32, "2 x 256-bit FMA (llvm-mca znver2)"},
    {"znver3", 32, "2 x 256-bit FMA (llvm-mca znver3)"},
    {"znver4", 32,
     "2 x 256-bit FMA; AVX-512 double-pumped on them (A. Yee, 'Zen5's AVX512 Teardown'; "
     "llvm-mca znver4: one zmm FMA per cycle)"},
    /* Zen 5 desktop and server (Granite Ridge, Turin) have 2 x 512-bit
     * FMA (numberworld teardown), mobile Zen 5 (Strix Point) 256-bit
     * datapaths (Chips and Cheese, "AMD's Strix Point: Zen 5 Hits
     * Mobile"); which models are which was not verified here. */
    {"znver5", 32,
     "desktop/server 64 (2 x 512-bit), mobile 32 (256-bit datapaths); family 1Ah models do not "
     "tell them apart here: the lower figure"},
    /* Arm (llvm-mca per core on fmla v.4s / SVE; AnandTech on V1's two
     * 256-bit SVE pipes). */
    {"neoverse-n1", 16, "2 x 128-bit NEON FMA (llvm-mca neoverse-n1)"},
    {"neoverse-n2", 16, "2 x 128-bit NEON/SVE2 FMA (llvm-mca neoverse-n2)"},
    {"neoverse-v1", 32,
     "2 x 256-bit SVE = 4 x 128-bit NEON FMA (AnandTech, Neoverse V1 announcement; llvm-mca)"},
    {"neoverse-v2", 32, "4 x 128-bit NEON/SVE2 FMA (llvm-mca neoverse-v2)"},
};

/* Skylake-SP family SKUs by brand string, first match wins: "Up to two
 * AVX-512 FMA units per CPU core (depends upon CPU SKU)" (Microway,
 * "Detailed Specifications of the Skylake-SP Intel Xeon Processor
 * Scalable Family CPUs"); Gold 6000 and Platinum two, Gold 5000 one
 * except Gold 5122, Silver and Bronze one (J. McCalpin, Intel forum). */
static const struct {
    const char *brand;
    int32_t fma_units;
} skx_skus[] = {
    {"Platinum", 2}, {"Gold 5122", 2}, {"Gold 6", 2}, {"Gold 5", 1}, {"Silver", 1}, {"Bronze", 1},
};

static const peak_row *row_of(const gpo_cpu_facts *f)
{
    for (size_t i = 0; i < sizeof peak_rows / sizeof peak_rows[0]; i++)
        if (strcmp(peak_rows[i].microarch, f->microarch) == 0)
            return &peak_rows[i];
    return NULL;
}

/* FMA units of a Skylake-SP family part by its brand; 0 when the brand
 * does not decide. */
static int32_t skx_units(const gpo_cpu_facts *f)
{
    for (size_t i = 0; i < sizeof skx_skus / sizeof skx_skus[0]; i++)
        if (strstr(f->model_name, skx_skus[i].brand))
            return skx_skus[i].fma_units;
    return 0;
}

/* What the ISA lets a program use: two pipes of the widest vector it
 * offers (at most `max_lanes` fp32 lanes), FMA where the ISA has it (every
 * arm64 core; x86 with FMA or AVX-512), else an add and a multiply pipe.
 * An OS that leaves AVX off leaves a Sandy Bridge at SSE's 8. */
static int32_t by_isa(const gpo_cpu_facts *f, int32_t max_lanes)
{
    int32_t lanes = gpo_cpu_simd_lanes(f);
    if (lanes > max_lanes)
        lanes = max_lanes;
    int fma = 1;
    if (f->arch == GPO_CPU_ARCH_X86_64)
        fma = (f->isa & (GPO_BIT(GPO_X86_FMA) | GPO_BIT(GPO_X86_AVX512F))) != 0;
    return fma ? lanes * 2 * 2 : lanes * 2;
}

/* The table's figure, before the ISA bound; 0 without a row. */
static int32_t table_flops(const gpo_cpu_facts *f)
{
    const peak_row *r = row_of(f);
    if (!r)
        return 0;
    if (r->flops != SKX_BY_SKU)
        return r->flops;
    /* One 512-bit unit, or the two 256-bit pipes AVX2 uses: 32. */
    return skx_units(f) == 2 ? 64 : 32;
}

int32_t gpo_cpu_flops_per_cycle(const gpo_cpu_facts *f)
{
    assert(f);
    int32_t table = table_flops(f);
    if (!table)
        return by_isa(f, 8);
    int32_t usable = by_isa(f, 1 << 20);
    return table < usable ? table : usable;
}

void gpo_cpu_flops_source(const gpo_cpu_facts *f, char *out, size_t cap)
{
    assert(f && out && cap > 0);
    const peak_row *r = row_of(f);
    int32_t flops = gpo_cpu_flops_per_cycle(f);
    if (r && flops < table_flops(f)) {
        gpo_snprintf(out, cap,
                     "%s: %d FLOP/cycle, bounded by the vector extensions enabled here (the "
                     "core's pipes do %d)",
                     r->microarch, (int)flops, (int)table_flops(f));
    } else if (!r) {
        gpo_snprintf(out, cap,
                     "%s is not in the throughput table: %d FLOP/cycle assumed from the ISA (two "
                     "pipes of at most 256 bits)",
                     f->microarch[0] ? f->microarch : "this core", (int)flops);
    } else if (r->flops != SKX_BY_SKU) {
        gpo_snprintf(out, cap, "%s: %d FLOP/cycle, %s", r->microarch, (int)flops, r->source);
    } else if (skx_units(f)) {
        gpo_snprintf(out, cap,
                     "%s: %d FLOP/cycle, %d AVX-512 FMA unit%s by the SKU in '%s' (Microway, "
                     "Skylake-SP specifications)",
                     r->microarch, (int)flops, (int)skx_units(f), skx_units(f) == 1 ? "" : "s",
                     f->model_name);
    } else {
        gpo_snprintf(out, cap,
                     "%s: one or two AVX-512 FMA units depending on the SKU, and neither CPUID "
                     "nor the brand '%s' says which: 32 FLOP/cycle (one unit), the lower figure",
                     r->microarch, f->model_name[0] ? f->model_name : "(none)");
    }
}

double gpo_cpu_est_gflops(const gpo_cpu_facts *f)
{
    assert(f);
    if (f->clock_mhz <= 0)
        return 0.0;
    int32_t cores = f->usable_cpus > 0 ? f->usable_cpus : 1;
    /* SMT siblings share one core's vector pipes. */
    int32_t phys = f->affinity_cores > 0 ? f->affinity_cores : f->physical_cores;
    if (phys > 0 && phys < cores)
        cores = phys;
    return (double)cores * f->clock_mhz / 1000.0 * gpo_cpu_flops_per_cycle(f);
}
