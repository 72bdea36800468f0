/* The kernel's own description of AMD GPUs: the KFD topology under
 * /sys/class/kfd/kfd/topology/nodes/N/ (the amdgpu driver publishes it with
 * or without any ROCm user space). Format: one "name value" pair per line,
 * values in decimal (drivers/gpu/drm/amd/amdkfd/kfd_topology.c, node_show
 * and mem_banks_show; unique_id stays decimal: the patch "drm/amdkfd: Align
 * unique_id format to match amdgpu" was held back as an ABI break, amd-gfx,
 * Sep 2023).
 *
 * Node order is ROCr's enumeration order (runtime/hsa-runtime/core/runtime/
 * amd_topology.cpp walks node ids 0..N-1), so it is sorted numerically here,
 * not by name ("10" after "9"). CPU nodes (simd_count 0) are skipped. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rocm_kfd.h"

#include "arch/amd.h"
#include "rocm_ids.h"
#include "util/strutil.h"

#define TOPOLOGY "/sys/class/kfd/kfd/topology/nodes"

typedef enum { K_I32, K_U32, K_U64 } kind;

typedef struct prop_field {
    const char *key;
    size_t offset;
    kind kind;
} prop_field;

#define I32(k, f)                                                                                  \
    {                                                                                              \
        k, offsetof(gpo_kfd_gpu, f), K_I32                                                         \
    }
#define U32(k, f)                                                                                  \
    {                                                                                              \
        k, offsetof(gpo_kfd_gpu, f), K_U32                                                         \
    }
#define U64(k, f)                                                                                  \
    {                                                                                              \
        k, offsetof(gpo_kfd_gpu, f), K_U64                                                         \
    }

static const prop_field fields[] = {
    I32("cpu_cores_count", cpu_cores_count),
    I32("simd_count", simd_count),
    I32("max_waves_per_simd", max_waves_per_simd),
    I32("lds_size_in_kb", lds_size_kb),
    I32("wave_front_size", wave_front_size),
    I32("array_count", array_count),
    I32("simd_per_cu", simd_per_cu),
    U32("gfx_target_version", gfx_target_version),
    U32("vendor_id", vendor_id),
    U32("device_id", device_id),
    U32("location_id", location_id),
    U32("domain", domain),
    I32("drm_render_minor", drm_render_minor),
    U64("hive_id", hive_id),
    I32("max_engine_clk_fcompute", max_engine_clk_mhz),
    U64("unique_id", unique_id),
    I32("num_xcc", num_xcc),
    I32("num_sdma_engines", num_sdma_engines),
};

#define N_FIELDS (sizeof fields / sizeof fields[0])

static void store(gpo_kfd_gpu *gpu, const prop_field *f, unsigned long long v)
{
    char *p = (char *)gpu + f->offset;
    if (f->kind == K_U64) {
        uint64_t x = (uint64_t)v;
        memcpy(p, &x, sizeof x);
    } else if (f->kind == K_U32) {
        uint32_t x = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
        memcpy(p, &x, sizeof x);
    } else {
        int32_t x = v > INT32_MAX ? INT32_MAX : (int32_t)v;
        memcpy(p, &x, sizeof x);
    }
}

void gpo_kfd_pci_text(uint32_t domain, uint32_t location_id, char *out, size_t cap)
{
    gpo_snprintf(out, cap, "%04x:%02x:%02x.%x", domain & 0xffffu, (location_id >> 8) & 0xffu,
                 (location_id >> 3) & 0x1fu, location_id & 0x7u);
}

int gpo_kfd_parse_properties(const char *text, gpo_kfd_gpu *gpu)
{
    if (!text || !gpu)
        return -1;
    memset(gpu, 0, sizeof *gpu);
    gpu->num_xcc = 1; /* kernels before 6.5 print no num_xcc: one XCC */
    gpu->drm_render_minor = -1;
    gpu->num_sdma_engines = -1;
    gpu->revision = -1;

    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char key[64];
        size_t k = 0;
        while (k < len && line[k] != ' ' && line[k] != '\t' && k < sizeof key - 1) {
            key[k] = line[k];
            k++;
        }
        key[k] = '\0';
        const char *val = line + k;
        while (val < line + len && (*val == ' ' || *val == '\t'))
            val++;
        for (size_t i = 0; i < N_FIELDS; i++) {
            if (strcmp(fields[i].key, key) != 0)
                continue;
            char num[32];
            size_t vl = (size_t)(line + len - val);
            if (vl == 0 || vl >= sizeof num)
                break;
            memcpy(num, val, vl);
            num[vl] = '\0';
            char *stop = NULL;
            errno = 0;
            unsigned long long v = strtoull(num, &stop, 10);
            /* A malformed value leaves the field unknown, never a guess. */
            if (errno == 0 && stop != num && (*stop == '\0' || *stop == '\r') && num[0] != '-')
                store(gpu, &fields[i], v);
            break;
        }
        line = end ? end + 1 : line + len;
    }

    if (gpu->simd_count <= 0)
        return -1;
    if (gpu->simd_per_cu > 0)
        gpu->cu_count = gpu->simd_count / gpu->simd_per_cu;
    if (gpu->num_xcc <= 0)
        gpu->num_xcc = 1;
    if (gpo_arch_amd_gfx_from_version(gpu->gfx_target_version, gpu->gfx, sizeof gpu->gfx) != 0)
        gpu->gfx[0] = '\0';
    gpo_kfd_pci_text(gpu->domain, gpu->location_id, gpu->pci, sizeof gpu->pci);
    /* ROCr's agent UUID: "GPU-" and the unique id in 16 hex digits
     * (amd_gpu_agent.cpp, HSA_AMD_AGENT_INFO_UUID); none without an id. */
    if (gpu->unique_id)
        gpo_snprintf(gpu->uuid, sizeof gpu->uuid, "GPU-%016llx",
                     (unsigned long long)gpu->unique_id);
    return 0;
}

/* Frame-buffer banks (heap_type 1 public, 2 private; 0 is system memory)
 * of node `node` (HSA_HEAPTYPE_* in hsakmttypes.h). */
static uint64_t vram_of(const gpo_fs *fs, const char *node)
{
    char dir[256];
    char **banks = NULL;
    size_t n = 0;
    uint64_t total = 0;
    gpo_snprintf(dir, sizeof dir, TOPOLOGY "/%s/mem_banks", node);
    if (gpo_fs_list(fs, dir, &banks, &n) != GPUOPT_OK)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char text[1024];
        if (gpo_fs_readf(fs, text, sizeof text, "%s/%s/properties", dir, banks[i]) != GPUOPT_OK)
            continue;
        unsigned long long heap = 99, size = 0;
        const char *h = strstr(text, "heap_type ");
        const char *s = strstr(text, "size_in_bytes ");
        if (h)
            heap = strtoull(h + 10, NULL, 10);
        if (s)
            size = strtoull(s + 14, NULL, 10);
        if (heap == 1 || heap == 2)
            total += size;
    }
    gpo_fs_list_free(banks, n);
    return total;
}

static int cmp_node(const void *a, const void *b)
{
    const gpo_kfd_gpu *x = a, *y = b;
    return x->node < y->node ? -1 : x->node > y->node;
}

static void name_of(const gpo_fs *fs, const char *ids, gpo_kfd_gpu *g)
{
    char path[128];
    uint64_t rev;
    /* KFD does not publish the revision; PCI sysfs does ("0xc8"). */
    gpo_snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/revision", g->pci);
    if (gpo_fs_read_u64(fs, path, &rev) == GPUOPT_OK && rev <= 0xff)
        g->revision = (int32_t)rev;
    if (ids)
        gpo_amdgpu_ids_lookup(ids, g->device_id, g->revision, g->name, sizeof g->name);
}

gpuopt_status gpo_kfd_scan(const gpo_fs *fs, gpo_kfd *out)
{
    char **nodes = NULL;
    size_t n_nodes = 0;
    char *ids = NULL;
    gpuopt_status st = GPUOPT_OK;

    memset(out, 0, sizeof *out);
    st = gpo_fs_list(fs, TOPOLOGY, &nodes, &n_nodes);
    if (st == GPUOPT_ERR_NO_MEMORY)
        goto out;
    if (st != GPUOPT_OK) {
        gpo_snprintf(out->note, sizeof out->note, "no KFD topology (%s does not exist)", TOPOLOGY);
        st = GPUOPT_OK;
        goto out;
    }
    out->present = 1;
    if (n_nodes == 0)
        goto out;
    out->gpus = calloc(n_nodes, sizeof *out->gpus);
    if (!out->gpus) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory reading the KFD topology");
        goto out;
    }
    /* amdgpu.ids is optional: without it names fall back to the gfx target. */
    size_t ids_len = 0;
    if (gpo_fs_read_alloc(fs, GPO_AMDGPU_IDS_PATH, &ids, &ids_len) != GPUOPT_OK)
        ids = NULL;

    for (size_t i = 0; i < n_nodes; i++) {
        int64_t id;
        char text[4096];
        gpo_kfd_gpu g;
        if (gpo_parse_i64(nodes[i], 0, INT32_MAX, &id) != 0)
            continue;
        if (gpo_fs_readf(fs, text, sizeof text, TOPOLOGY "/%s/properties", nodes[i]) != GPUOPT_OK) {
            gpo_snprintf(out->note, sizeof out->note, "KFD node %s has no readable properties",
                         nodes[i]);
            continue;
        }
        if (gpo_kfd_parse_properties(text, &g) != 0)
            continue; /* a CPU node */
        g.node = (uint32_t)id;
        uint64_t gpu_id = 0;
        char path[128];
        gpo_snprintf(path, sizeof path, TOPOLOGY "/%s/gpu_id", nodes[i]);
        if (gpo_fs_read_u64(fs, path, &gpu_id) == GPUOPT_OK && gpu_id <= UINT32_MAX)
            g.gpu_id = (uint32_t)gpu_id;
        g.vram_bytes = vram_of(fs, nodes[i]);
        name_of(fs, ids, &g);
        out->gpus[out->n++] = g;
    }
    qsort(out->gpus, out->n, sizeof *out->gpus, cmp_node);

out:
    free(ids);
    gpo_fs_list_free(nodes, n_nodes);
    if (st != GPUOPT_OK)
        gpo_kfd_free(out);
    return st;
}

void gpo_kfd_free(gpo_kfd *kfd)
{
    if (!kfd)
        return;
    free(kfd->gpus);
    kfd->gpus = NULL;
    kfd->n = 0;
}
