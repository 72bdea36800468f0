/* Device records of the ROCm backend, from what HIP says (enriched by the
 * KFD node of the same GPU) or from the KFD topology alone. */
#include <stdlib.h>
#include <string.h>

#include "rocm_device.h"

#include "arch/amd.h"
#include "util/strutil.h"

/* gfx targets that only exist as APUs ("APU" in the LLVM AMDGPU processor
 * table, llvm/docs/AMDGPUUsage.rst), so the KFD path, which has no
 * "integrated" property, can still tell. gfx942 is both (MI300A is an APU,
 * MI300X is not): it is told apart by PCI device id below. */
static const char *const apu_targets[] = {"gfx801",  "gfx810",  "gfx902",  "gfx909",  "gfx90c",
                                          "gfx1013", "gfx1033", "gfx1035", "gfx1036", "gfx1103",
                                          "gfx1150", "gfx1151", "gfx1152", "gfx1153", NULL};

/* MI300A, "74A0, 00, AMD Instinct MI300A" in libdrm's amdgpu.ids. */
#define PCI_ID_MI300A 0x74a0u

static int32_t kfd_integrated(const gpo_kfd_gpu *g, const gpo_arch_amd_info *arch, int arch_ok)
{
    if (g->cpu_cores_count > 0 || g->device_id == PCI_ID_MI300A)
        return 1;
    for (size_t i = 0; apu_targets[i]; i++)
        if (strcmp(g->gfx, apu_targets[i]) == 0)
            return 1;
    return arch_ok && !arch->extrapolated ? 0 : -1;
}

static const char *matrix_name(int32_t m)
{
    return m == GPO_ARCH_AMD_MATRIX_MFMA ? "mfma" : m == GPO_ARCH_AMD_MATRIX_WMMA ? "wmma" : "none";
}

static void add_num(cJSON *o, const char *key, double v)
{
    cJSON_AddNumberToObject(o, key, v);
}

/* Arch facts shared by both paths. Returns 1 when the target is known. */
static int apply_arch(gpuopt_device *dev, const char *gfx, cJSON *d)
{
    gpo_arch_amd_info a;
    if (!gfx || gpo_arch_amd_lookup(gfx, &a) != 0)
        return 0;
    gpo_strlcpy(dev->info.arch_name, a.gfx, sizeof dev->info.arch_name);
    gpo_strlcpy(dev->info.arch_family, a.family, sizeof dev->info.arch_family);
    dev->info.arch_extrapolated = a.extrapolated;
    dev->info.features = a.features;
    dev->info.features_known = a.features_known;
    if (dev->info.simd_width < 0)
        dev->info.simd_width = a.wavefront;
    double peaks[GPO_PREC_COUNT];
    gpo_arch_amd_peaks(&a, dev->info.compute_units, dev->info.clock_mhz, peaks);
    dev->est_gflops = peaks[GPO_PREC_FP32];
    for (int p = GPO_PREC_FP32 + 1; p < GPO_PREC_COUNT; p++)
        dev->est_matrix_gflops[p] = peaks[p];
    if (d) {
        cJSON_AddStringToObject(d, "matrix_units", matrix_name(a.matrix));
        cJSON_AddStringToObject(d, "fp64_rate", a.fp64_full_rate ? "full or half" : "reduced");
        add_num(d, "fp32_lanes_per_cu", a.fp32_lanes_per_cu);
        add_num(d, "native_wavefront", a.wavefront);
    }
    return 1;
}

static void kfd_details(cJSON *d, const gpo_kfd_gpu *g)
{
    add_num(d, "kfd_node", g->node);
    add_num(d, "gpu_id", g->gpu_id);
    add_num(d, "gfx_target_version", g->gfx_target_version);
    add_num(d, "simd_per_cu", g->simd_per_cu);
    add_num(d, "simd_count", g->simd_count);
    add_num(d, "num_xcc", g->num_xcc);
    if (g->num_sdma_engines >= 0)
        add_num(d, "num_sdma_engines", g->num_sdma_engines);
    add_num(d, "lds_kb", g->lds_size_kb);
    add_num(d, "max_waves_per_simd", g->max_waves_per_simd);
    char hex[16];
    gpo_snprintf(hex, sizeof hex, "0x%04x", g->device_id);
    cJSON_AddStringToObject(d, "pci_device_id", hex);
    if (g->revision >= 0) {
        gpo_snprintf(hex, sizeof hex, "0x%02x", (unsigned)g->revision);
        cJSON_AddStringToObject(d, "pci_revision", hex);
    }
    if (g->drm_render_minor >= 0)
        add_num(d, "drm_render_minor", g->drm_render_minor);
    if (g->hive_id) {
        char hive[24];
        gpo_snprintf(hive, sizeof hive, "0x%016llx", (unsigned long long)g->hive_id);
        cJSON_AddStringToObject(d, "xgmi_hive_id", hive);
    }
}

/* CUs from HIP's count: on gfx10 and later the runtime runs in WGP mode
 * unless GPU_ENABLE_WGP_MODE=0 and then counts work-group processors (two
 * CUs each) as "multiprocessors" (clr rocclr/device/rocm/rocdevice.cpp,
 * maxComputeUnits_ / 2; rocsettings.cpp enables it for gfxipMajor >= 10). */
static int32_t cus_from_hip(int32_t mp, const char *gfx, int *wgp)
{
    *wgp = 0;
    if (mp <= 0)
        return -1;
    /* A two-digit major ("gfx1030") is gfx10 or later. */
    if (gfx && strncmp(gfx, "gfx", 3) == 0 && strlen(gfx) >= 7) {
        const char *env = getenv("GPU_ENABLE_WGP_MODE");
        int on = 1;
        if (env && *env && gpo_parse_bool(env, &on) != 0)
            on = 1;
        if (on) {
            *wgp = 1;
            return mp * 2;
        }
    }
    return mp;
}

gpuopt_status gpo_rocm_device_from_hip(int ordinal, const gpo_kfd_gpu *kfd,
                                       const gpo_hip_device *hd, const cJSON *notes,
                                       gpuopt_device **out)
{
    gpuopt_device *dev = gpo_device_new();
    cJSON *d;
    const int *at = hd->attr;
    gpuopt_status st = GPUOPT_OK;
    char gfx[64];

    *out = NULL;
    if (!dev || !(d = gpo_device_details(dev, "rocm"))) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory describing HIP device %d", ordinal);
        goto out;
    }
    dev->info.index = ordinal;
    dev->info.type = GPUOPT_DEVICE_TYPE_GPU;
    gpo_strlcpy(dev->info.vendor, "AMD", sizeof dev->info.vendor);

    /* The target: HIP's gcnArchName, else the KFD node's. */
    gfx[0] = '\0';
    if (hd->target[0]) {
        gpo_strlcpy(gfx, hd->target, sizeof gfx);
        gfx[strcspn(gfx, ":")] = '\0';
        cJSON_AddStringToObject(d, "target_id", hd->target);
    } else if (kfd && kfd->gfx[0]) {
        gpo_strlcpy(gfx, kfd->gfx, sizeof gfx);
    }

    if (hd->name[0])
        gpo_strlcpy(dev->info.name, hd->name, sizeof dev->info.name);
    else if (kfd && kfd->name[0])
        gpo_strlcpy(dev->info.name, kfd->name, sizeof dev->info.name);
    else
        gpo_snprintf(dev->info.name, sizeof dev->info.name, "AMD GPU %s", gfx[0] ? gfx : "");

    int wgp = 0;
    int32_t hip_cus = cus_from_hip(at[GPO_HIP_ATTR_MULTIPROCESSOR_COUNT], gfx, &wgp);
    dev->info.compute_units = kfd && kfd->cu_count > 0 ? kfd->cu_count : hip_cus;
    if (at[GPO_HIP_ATTR_MULTIPROCESSOR_COUNT] >= 0) {
        add_num(d, "hip_multiprocessor_count", at[GPO_HIP_ATTR_MULTIPROCESSOR_COUNT]);
        cJSON_AddBoolToObject(d, "wgp_mode", wgp);
    }
    dev->info.simd_width = at[GPO_HIP_ATTR_WARP_SIZE] > 0 ? at[GPO_HIP_ATTR_WARP_SIZE] : -1;
    dev->info.clock_mhz = at[GPO_HIP_ATTR_CLOCK_RATE] > 0      ? at[GPO_HIP_ATTR_CLOCK_RATE] / 1000
                          : kfd && kfd->max_engine_clk_mhz > 0 ? kfd->max_engine_clk_mhz
                                                               : -1;
    dev->info.integrated = at[GPO_HIP_ATTR_INTEGRATED] >= 0 ? at[GPO_HIP_ATTR_INTEGRATED] != 0 : -1;
    dev->info.unified_memory =
        at[GPO_HIP_ATTR_UNIFIED_ADDRESSING] >= 0 ? at[GPO_HIP_ATTR_UNIFIED_ADDRESSING] != 0 : -1;
    dev->info.ecc = at[GPO_HIP_ATTR_ECC_ENABLED] >= 0 ? at[GPO_HIP_ATTR_ECC_ENABLED] != 0 : -1;
    dev->info.max_threads_per_block = at[GPO_HIP_ATTR_MAX_THREADS_PER_BLOCK];
    dev->info.memory_bytes = hd->total_mem ? hd->total_mem : kfd ? kfd->vram_bytes : 0;
    /* HIP's hipDeviceAttributeAsyncEngineCount is CUDA-only (hip_runtime_api.h);
     * the KFD counts the SDMA engines that do host-device copies. */
    if (kfd)
        dev->copy_engines = kfd->num_sdma_engines;
    if (at[GPO_HIP_ATTR_L2_CACHE_SIZE] > 0)
        dev->info.l2_bytes = (uint64_t)at[GPO_HIP_ATTR_L2_CACHE_SIZE];
    if (at[GPO_HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK] > 0)
        dev->info.shared_mem_per_block = (uint64_t)at[GPO_HIP_ATTR_MAX_SHARED_MEMORY_PER_BLOCK];

    /* PCI: KFD knows the function number; HIP formats it as 0. */
    if (kfd)
        gpo_strlcpy(dev->info.pci_bus_id, kfd->pci, sizeof dev->info.pci_bus_id);
    else if (at[GPO_HIP_ATTR_PCI_BUS_ID] >= 0 && at[GPO_HIP_ATTR_PCI_DEVICE_ID] >= 0)
        gpo_snprintf(
            dev->info.pci_bus_id, sizeof dev->info.pci_bus_id, "%04x:%02x:%02x.0",
            (unsigned)(at[GPO_HIP_ATTR_PCI_DOMAIN_ID] > 0 ? at[GPO_HIP_ATTR_PCI_DOMAIN_ID] : 0),
            (unsigned)at[GPO_HIP_ATTR_PCI_BUS_ID] & 0xffu,
            (unsigned)at[GPO_HIP_ATTR_PCI_DEVICE_ID] & 0x1fu);
    if (hd->uuid[0])
        gpo_strlcpy(dev->info.uuid, hd->uuid, sizeof dev->info.uuid);
    else if (kfd && kfd->uuid[0])
        gpo_strlcpy(dev->info.uuid, kfd->uuid, sizeof dev->info.uuid);

    int arch_known = apply_arch(dev, gfx, d);

    cJSON_AddStringToObject(d, "source", kfd ? "hip+kfd" : "hip");
    add_num(d, "hip_ordinal", ordinal);
    if (kfd)
        kfd_details(d, kfd);
    if (at[GPO_HIP_ATTR_NUMBER_OF_XCCS] > 0 && !kfd)
        add_num(d, "num_xcc", at[GPO_HIP_ATTR_NUMBER_OF_XCCS]);
    if (at[GPO_HIP_ATTR_MEMORY_BUS_WIDTH] > 0)
        add_num(d, "memory_bus_width", at[GPO_HIP_ATTR_MEMORY_BUS_WIDTH]);
    if (at[GPO_HIP_ATTR_MEMORY_CLOCK_RATE] > 0)
        add_num(d, "memory_clock_mhz", at[GPO_HIP_ATTR_MEMORY_CLOCK_RATE] / 1000);
    if (at[GPO_HIP_ATTR_MAX_SHARED_MEMORY_PER_MP] > 0)
        add_num(d, "max_shared_memory_per_cu", at[GPO_HIP_ATTR_MAX_SHARED_MEMORY_PER_MP]);
    if (at[GPO_HIP_ATTR_ASIC_REVISION] >= 0)
        add_num(d, "asic_revision", at[GPO_HIP_ATTR_ASIC_REVISION]);
    if (at[GPO_HIP_ATTR_IS_LARGE_BAR] >= 0)
        cJSON_AddBoolToObject(d, "large_bar", at[GPO_HIP_ATTR_IS_LARGE_BAR] != 0);
    if (at[GPO_HIP_ATTR_MANAGED_MEMORY] >= 0)
        cJSON_AddBoolToObject(d, "managed_memory", at[GPO_HIP_ATTR_MANAGED_MEMORY] != 0);
    /* What HIP refused, kept with the device (a copy: the caller owns
     * notes). Losing them to an allocation failure loses no fact. */
    if ((notes && cJSON_GetArraySize(notes) > 0) || !arch_known) {
        cJSON *mine = notes ? cJSON_Duplicate(notes, 1) : cJSON_CreateArray();
        if (mine && !arch_known)
            cJSON_AddItemToArray(mine, cJSON_CreateString("the gfx target is unknown: family "
                                                          "and features unknown"));
        if (mine)
            cJSON_AddItemToObject(d, "notes", mine);
    }

out:
    if (st != GPUOPT_OK) {
        gpo_device_free(dev);
        return st;
    }
    *out = dev;
    return GPUOPT_OK;
}

gpuopt_status gpo_rocm_device_from_kfd(const gpo_kfd_gpu *g, int index, gpuopt_device **out)
{
    gpuopt_device *dev = gpo_device_new();
    cJSON *d;
    gpo_arch_amd_info arch;

    *out = NULL;
    if (!dev || !(d = gpo_device_details(dev, "rocm"))) {
        gpo_device_free(dev);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory describing KFD node %u", g->node);
    }
    int arch_ok = g->gfx[0] && gpo_arch_amd_lookup(g->gfx, &arch) == 0;
    dev->info.index = index;
    dev->info.type = GPUOPT_DEVICE_TYPE_GPU;
    gpo_strlcpy(dev->info.vendor, "AMD", sizeof dev->info.vendor);
    if (g->name[0])
        gpo_strlcpy(dev->info.name, g->name, sizeof dev->info.name);
    else
        gpo_snprintf(dev->info.name, sizeof dev->info.name, "AMD GPU %s [1002:%04x]",
                     g->gfx[0] ? g->gfx : "(unknown target)", g->device_id);
    dev->info.compute_units = g->cu_count > 0 ? g->cu_count : -1;
    dev->info.simd_width = g->wave_front_size > 0 ? g->wave_front_size : -1;
    dev->info.clock_mhz = g->max_engine_clk_mhz > 0 ? g->max_engine_clk_mhz : -1;
    dev->info.integrated = kfd_integrated(g, &arch, arch_ok);
    dev->info.memory_bytes = g->vram_bytes;
    dev->copy_engines = g->num_sdma_engines;
    if (g->lds_size_kb > 0)
        dev->info.shared_mem_per_block = (uint64_t)g->lds_size_kb * 1024u;
    gpo_strlcpy(dev->info.pci_bus_id, g->pci, sizeof dev->info.pci_bus_id);
    gpo_strlcpy(dev->info.uuid, g->uuid, sizeof dev->info.uuid);
    apply_arch(dev, g->gfx, d);
    cJSON_AddStringToObject(d, "source", "kfd");
    kfd_details(d, g);
    *out = dev;
    return GPUOPT_OK;
}

const gpo_kfd_gpu *gpo_rocm_match_kfd(const gpo_kfd *kfd, const gpo_hip_device *all, int ordinal)
{
    const gpo_hip_device *hd = &all[ordinal];
    if (!kfd || kfd->n == 0)
        return NULL;
    if (hd->uuid[0])
        for (size_t i = 0; i < kfd->n; i++)
            if (strcmp(kfd->gpus[i].uuid, hd->uuid) == 0)
                return &kfd->gpus[i];

    /* Same PCI location; partitions of one GPU (MI300X in CPX mode) share
     * it, so the n-th HIP device there is the n-th KFD node there. */
    const int *a = hd->attr;
    if (a[GPO_HIP_ATTR_PCI_BUS_ID] < 0 || a[GPO_HIP_ATTR_PCI_DEVICE_ID] < 0)
        return NULL;
    uint32_t dom = a[GPO_HIP_ATTR_PCI_DOMAIN_ID] > 0 ? (uint32_t)a[GPO_HIP_ATTR_PCI_DOMAIN_ID] : 0;
    uint32_t bus = (uint32_t)a[GPO_HIP_ATTR_PCI_BUS_ID] & 0xffu;
    uint32_t slot = (uint32_t)a[GPO_HIP_ATTR_PCI_DEVICE_ID] & 0x1fu;
    int nth = 0;
    for (int k = 0; k < ordinal; k++) {
        const int *b = all[k].attr;
        nth += b[GPO_HIP_ATTR_PCI_BUS_ID] == a[GPO_HIP_ATTR_PCI_BUS_ID] &&
               b[GPO_HIP_ATTR_PCI_DEVICE_ID] == a[GPO_HIP_ATTR_PCI_DEVICE_ID] &&
               b[GPO_HIP_ATTR_PCI_DOMAIN_ID] == a[GPO_HIP_ATTR_PCI_DOMAIN_ID];
    }
    for (size_t i = 0; i < kfd->n; i++) {
        const gpo_kfd_gpu *g = &kfd->gpus[i];
        if (g->domain == dom && ((g->location_id >> 8) & 0xffu) == bus &&
            ((g->location_id >> 3) & 0x1fu) == slot && nth-- == 0)
            return g;
    }
    return NULL;
}
