/* The CPU's device record: the normalised fields every backend fills
 * (features in the core's vocabulary), and details.cpu with each fact and
 * its source. Nothing here reads the machine. */
#include <assert.h>

#include "cpu/cpu_device.h"
#include "cpu/cpu_peak.h"
#include "cpu/cpuinfo_arm.h"
#include "cpu/x86_isa.h"
#include "util/json.h"
#include "util/strutil.h"

static uint32_t features_of(const gpo_cpu_facts *f, uint32_t *known)
{
    uint32_t on = 0;
    *known = 0;
    if (f->arch == GPO_CPU_ARCH_X86_64) {
        /* FP64 is SSE2 (x86-64 baseline). FP16 means arithmetic in half
         * precision (AVX512-FP16), not F16C's conversions; int8 and bf16
         * are the dot-product instructions (Intel SDM vol. 1, ch. 18-20). */
        uint64_t i = f->isa;
        on = GPUOPT_FEATURE_FP64;
        if (i & GPO_BIT(GPO_X86_AVX512FP16))
            on |= GPUOPT_FEATURE_FP16;
        if (i & (GPO_BIT(GPO_X86_AVX512BF16) | GPO_BIT(GPO_X86_AMX_BF16)))
            on |= GPUOPT_FEATURE_BF16;
        if (i &
            (GPO_BIT(GPO_X86_AVX512VNNI) | GPO_BIT(GPO_X86_AVXVNNI) | GPO_BIT(GPO_X86_AMX_INT8)))
            on |= GPUOPT_FEATURE_INT8;
        if (i & GPO_BIT(GPO_X86_AMX_TILE))
            on |= GPUOPT_FEATURE_MATRIX_UNITS;
    } else if (f->arch == GPO_CPU_ARCH_ARM64) {
        /* AdvSIMD has FP64 in Armv8-A; FP16 arithmetic is asimdhp (8.2),
         * int8 dot products asimddp / i8mm, matrix units SME. */
        uint64_t i = f->isa;
        on = GPUOPT_FEATURE_FP64;
        if (i & GPO_BIT(GPO_ARM_ASIMDHP))
            on |= GPUOPT_FEATURE_FP16;
        if (i & (GPO_BIT(GPO_ARM_BF16) | GPO_BIT(GPO_ARM_SVEBF16)))
            on |= GPUOPT_FEATURE_BF16;
        if (i & (GPO_BIT(GPO_ARM_ASIMDDP) | GPO_BIT(GPO_ARM_I8MM)))
            on |= GPUOPT_FEATURE_INT8;
        if (i & GPO_BIT(GPO_ARM_SME))
            on |= GPUOPT_FEATURE_MATRIX_UNITS;
    } else {
        return 0;
    }
    /* TF32 and FP8 are GPU formats no CPU ISA above computes in. */
    *known = GPUOPT_FEATURE_FP64 | GPUOPT_FEATURE_FP16 | GPUOPT_FEATURE_BF16 | GPUOPT_FEATURE_TF32 |
             GPUOPT_FEATURE_FP8 | GPUOPT_FEATURE_INT8 | GPUOPT_FEATURE_MATRIX_UNITS;
    return on;
}

static uint64_t llc_bytes(const gpo_cpu_facts *f)
{
    const gpo_cpu_cache *c = f->l3.size_bytes ? &f->l3 : f->l2.size_bytes ? &f->l2 : NULL;
    if (!c)
        return 0;
    return c->size_bytes * (uint64_t)(c->instances > 0 ? c->instances : 1);
}

typedef struct name_list {
    gpo_json *b;
    cJSON *array;
} name_list;

static void add_name(const char *name, void *user)
{
    name_list *l = user;
    gpo_json_str(l->b, l->array, NULL, name);
}

/* Returns 0, or -1 when an allocation failed (d is then incomplete). */
static int fill_details(const gpo_cpu_facts *f, cJSON *d)
{
    gpo_json b = {0};
    gpo_json_text(&b, d, "vendor_id", f->vendor_id);
    if (f->arch == GPO_CPU_ARCH_X86_64) {
        gpo_json_num_or_null(&b, d, "family", f->family, f->family >= 0);
        gpo_json_num_or_null(&b, d, "model", f->model, f->model >= 0);
        gpo_json_num_or_null(&b, d, "stepping", f->stepping, f->stepping >= 0);
    } else if (f->arch == GPO_CPU_ARCH_ARM64) {
        gpo_json_num_or_null(&b, d, "implementer", f->implementer, f->implementer >= 0);
        gpo_json_num_or_null(&b, d, "part", f->part, f->part >= 0);
        gpo_json_num_or_null(&b, d, "sve_bits", f->sve_bits, f->sve_bits > 0);
    }
    gpo_json_text(&b, d, "microarch", f->microarch);
    gpo_json_text(&b, d, "microarch_level", f->isa_level);
    gpo_json_num_or_null(&b, d, "logical_cpus", f->logical_cpus, f->logical_cpus > 0);
    gpo_json_num_or_null(&b, d, "physical_cores", f->physical_cores, f->physical_cores > 0);
    gpo_json_num_or_null(&b, d, "sockets", f->sockets, f->sockets > 0);
    gpo_json_num_or_null(&b, d, "numa_nodes", f->numa_nodes, f->numa_nodes > 0);
    gpo_json_num(&b, d, "affinity_cpus", f->affinity_cpus);
    gpo_json_num(&b, d, "usable_cpus", f->usable_cpus);
    gpo_json_num_or_null(&b, d, "cpu_quota", f->quota_cpus, f->quota_us >= 0);
    gpo_json_text(&b, d, "cpu_quota_cgroup", f->quota_us >= 0 ? f->quota_path : "");
    gpo_json_num_or_null(&b, d, "cgroup_memory_limit", (double)f->cg_mem_limit,
                         f->cg_mem_limit > 0);
    gpo_json_text(&b, d, "cgroup_memory_cgroup", f->cg_mem_limit ? f->mem_limit_path : "");
    gpo_json_num_or_null(&b, d, "mem_total", (double)f->mem_total, f->mem_total > 0);

    cJSON *caches = gpo_json_object(&b, d, "caches");
    cJSON *inst = gpo_json_object(&b, d, "cache_instances");
    const gpo_cpu_cache *c[3] = {&f->l1d, &f->l2, &f->l3};
    const char *names[3] = {"l1d", "l2", "l3"};
    for (int k = 0; k < 3; k++) {
        gpo_json_num_or_null(&b, caches, names[k], (double)c[k]->size_bytes, c[k]->size_bytes > 0);
        gpo_json_num_or_null(&b, inst, names[k], c[k]->instances, c[k]->size_bytes > 0);
    }
    name_list features = {&b, gpo_json_array(&b, d, "features")};
    gpo_cpu_feature_names(f, add_name, &features);

    cJSON *src = gpo_json_object(&b, d, "sources");
    gpo_json_text(&b, src, "isa", f->src_isa);
    gpo_json_text(&b, src, "microarch", f->src_microarch);
    gpo_json_text(&b, src, "topology", f->src_topology);
    gpo_json_text(&b, src, "caches", f->src_caches);
    gpo_json_text(&b, src, "clock", f->src_clock);
    gpo_json_text(&b, src, "affinity", f->src_affinity);
    gpo_json_text(&b, src, "cpu_quota", f->src_quota);
    gpo_json_text(&b, src, "memory", f->src_memory);
    char peak[GPO_CPU_SRC_CAP];
    gpo_cpu_flops_source(f, peak, sizeof peak);
    gpo_json_text(&b, src, "throughput", peak);
    if (f->notes[0])
        gpo_json_text(&b, d, "notes", f->notes);
    return b.failed ? -1 : 0;
}

gpuopt_status gpo_cpu_fill_device(const gpo_cpu_facts *f, gpuopt_device *dev)
{
    assert(f && dev);
    gpuopt_device_info *i = &dev->info;
    i->index = 0;
    i->type = GPUOPT_DEVICE_TYPE_CPU;
    gpo_strlcpy(i->vendor, f->vendor[0] ? f->vendor : "unknown", sizeof i->vendor);
    gpo_strlcpy(i->name, f->model_name[0] ? f->model_name : "unknown CPU", sizeof i->name);
    gpo_strlcpy(i->arch_family, f->microarch, sizeof i->arch_family);
    gpo_strlcpy(i->arch_name, f->isa_level, sizeof i->arch_name);
    i->compute_units = f->usable_cpus;
    i->simd_width = gpo_cpu_simd_lanes(f);
    i->clock_mhz = f->clock_mhz;
    i->unified_memory = 1; /* the host's own memory */
    i->memory_bytes = f->memory_bytes;
    i->memory_free_bytes = f->memory_free_bytes;
    i->l2_bytes = llc_bytes(f);
    i->features = features_of(f, &i->features_known);
    dev->est_gflops = gpo_cpu_est_gflops(f);
    cJSON *d = gpo_device_details(dev, "cpu");
    if (!d || fill_details(f, d))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory describing the CPU");
    return GPUOPT_OK;
}
