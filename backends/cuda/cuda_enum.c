/* Listing CUDA devices. Through the driver API without creating a context
 * (cuDeviceGet*, cuDeviceGetAttribute and cuDeviceTotalMem only, so listing
 * costs the host program no time or device memory beyond cuInit); or, when
 * libcuda.so.1 cannot be used, from the kernel module's files
 * (cuda_procfs.c), as records that say why CUDA cannot use them. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "arch/nvidia.h"
#include "cuda_backend.h"
#include "cuda_load.h"
#include "cuda_procfs.h"
#include "util/json.h"
#include "util/strutil.h"

/* How an attribute is used. INFO fills gpuopt_device_info (code below);
 * the others go to details["cuda"][key]. */
enum { K_INFO, K_NUM, K_BOOL, K_MHZ, K_MODE };

/* X(slot, CU_DEVICE_ATTRIBUTE_ suffix, details key, kind, essential)
 * essential: even "unknown attribute" (CUDA_ERROR_INVALID_VALUE, which an
 * older driver answers for attributes newer than itself) fails the listing;
 * every attribute here except those exists since CUDA 2.x-7.x. */
#define CUDA_READ_ATTRS(X)                                                                         \
    X(CC_MAJOR, COMPUTE_CAPABILITY_MAJOR, NULL, K_INFO, 1)                                         \
    X(CC_MINOR, COMPUTE_CAPABILITY_MINOR, NULL, K_INFO, 1)                                         \
    X(SMS, MULTIPROCESSOR_COUNT, NULL, K_INFO, 0)                                                  \
    X(WARP, WARP_SIZE, NULL, K_INFO, 0)                                                            \
    X(CLOCK, CLOCK_RATE, NULL, K_INFO, 0)                                                          \
    X(MAX_TPB, MAX_THREADS_PER_BLOCK, NULL, K_INFO, 0)                                             \
    X(SHMEM_BLOCK, MAX_SHARED_MEMORY_PER_BLOCK, NULL, K_INFO, 0)                                   \
    X(L2, L2_CACHE_SIZE, NULL, K_INFO, 0)                                                          \
    X(ECC, ECC_ENABLED, NULL, K_INFO, 0)                                                           \
    X(INTEGRATED, INTEGRATED, NULL, K_INFO, 0)                                                     \
    X(UNIFIED, UNIFIED_ADDRESSING, NULL, K_INFO, 0)                                                \
    X(PCI_DOMAIN, PCI_DOMAIN_ID, NULL, K_INFO, 0)                                                  \
    X(PCI_BUS, PCI_BUS_ID, NULL, K_INFO, 0)                                                        \
    X(PCI_DEVICE, PCI_DEVICE_ID, NULL, K_INFO, 0)                                                  \
    X(MEM_CLOCK, MEMORY_CLOCK_RATE, "memory_clock_mhz", K_MHZ, 0)                                  \
    X(BUS_WIDTH, GLOBAL_MEMORY_BUS_WIDTH, "memory_bus_width_bits", K_NUM, 0)                       \
    X(SHMEM_OPTIN, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared_mem_per_block_optin", K_NUM, 0)      \
    X(SHMEM_SM, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "shared_mem_per_multiprocessor", K_NUM, 0)   \
    X(TPSM, MAX_THREADS_PER_MULTIPROCESSOR, "max_threads_per_multiprocessor", K_NUM, 0)            \
    X(BPSM, MAX_BLOCKS_PER_MULTIPROCESSOR, "max_blocks_per_multiprocessor", K_NUM, 0)              \
    X(REG_BLOCK, MAX_REGISTERS_PER_BLOCK, "registers_per_block", K_NUM, 0)                         \
    X(REG_SM, MAX_REGISTERS_PER_MULTIPROCESSOR, "registers_per_multiprocessor", K_NUM, 0)          \
    X(CONST_MEM, TOTAL_CONSTANT_MEMORY, "total_constant_memory", K_NUM, 0)                         \
    X(BLOCK_X, MAX_BLOCK_DIM_X, "max_block_dim_x", K_NUM, 0)                                       \
    X(BLOCK_Y, MAX_BLOCK_DIM_Y, "max_block_dim_y", K_NUM, 0)                                       \
    X(BLOCK_Z, MAX_BLOCK_DIM_Z, "max_block_dim_z", K_NUM, 0)                                       \
    X(GRID_X, MAX_GRID_DIM_X, "max_grid_dim_x", K_NUM, 0)                                          \
    X(GRID_Y, MAX_GRID_DIM_Y, "max_grid_dim_y", K_NUM, 0)                                          \
    X(GRID_Z, MAX_GRID_DIM_Z, "max_grid_dim_z", K_NUM, 0)                                          \
    X(ASYNC, ASYNC_ENGINE_COUNT, "async_engine_count", K_NUM, 0)                                   \
    X(FP64_RATIO, SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO, "single_to_double_perf_ratio", K_NUM, 0)  \
    X(PERSIST_L2, MAX_PERSISTING_L2_CACHE_SIZE, "max_persisting_l2_bytes", K_NUM, 0)               \
    X(MODE, COMPUTE_MODE, "compute_mode", K_MODE, 0)                                               \
    X(MANAGED, MANAGED_MEMORY, "managed_memory", K_BOOL, 0)                                        \
    X(CONC_MANAGED, CONCURRENT_MANAGED_ACCESS, "concurrent_managed_access", K_BOOL, 0)             \
    X(VMM, VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "virtual_memory_management", K_BOOL, 0)            \
    X(PAGEABLE, PAGEABLE_MEMORY_ACCESS, "pageable_memory_access", K_BOOL, 0)                       \
    X(TIMEOUT, KERNEL_EXEC_TIMEOUT, "kernel_exec_timeout", K_BOOL, 0)                              \
    X(MAP_HOST, CAN_MAP_HOST_MEMORY, "can_map_host_memory", K_BOOL, 0)                             \
    X(CONC_KERNELS, CONCURRENT_KERNELS, "concurrent_kernels", K_BOOL, 0)                           \
    X(MULTI_BOARD, MULTI_GPU_BOARD, "multi_gpu_board", K_BOOL, 0)                                  \
    X(COOP, COOPERATIVE_LAUNCH, "cooperative_launch", K_BOOL, 0)                                   \
    X(CLUSTER, CLUSTER_LAUNCH, "cluster_launch", K_BOOL, 0)                                        \
    X(MPS, MPS_ENABLED, "mps_enabled", K_BOOL, 0)

enum {
#define SLOT_(slot, attr, key, kind, essential) A_##slot,
    CUDA_READ_ATTRS(SLOT_)
#undef SLOT_
        N_ATTRS
};

static const struct attr_row {
    int attr;
    const char *name;
    const char *key;
    int kind;
    int essential;
} attr_rows[N_ATTRS] = {
#define ROW_(slot, attr, key, kind, essential)                                                     \
    {GPO_CU_DEVICE_ATTRIBUTE_##attr, #attr, key, kind, essential},
    CUDA_READ_ATTRS(ROW_)
#undef ROW_
};

/* CUcomputemode values in words (cuda.h 13.0, CUcomputemode). */
static const char *mode_word(int mode)
{
    static const struct {
        int mode;
        const char *word;
    } modes[] = {
#define MODE_ROW_(name, value) {value, #name},
        GPO_CU_COMPUTEMODES(MODE_ROW_)
#undef MODE_ROW_
    };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (modes[i].mode == mode)
            return modes[i].word;
    return "UNKNOWN";
}

/* A result an attribute or UUID query may give when the driver predates
 * the question: the fact is unknown, nothing is broken. */
static int is_unknown_fact(gpo_cu_result r)
{
    return r == GPO_CUDA_ERROR_INVALID_VALUE || r == GPO_CUDA_ERROR_NOT_SUPPORTED;
}

/* A record for device `index` with the facts every path shares. */
static gpuopt_status device_new(int index, gpuopt_device **out)
{
    gpuopt_device *dev = gpo_device_new();
    *out = NULL;
    if (!dev)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda: out of memory for device %d", index);
    /* The core fills id, backend, routes and routes[0] (backend.h). */
    dev->info.index = index;
    dev->info.type = GPUOPT_DEVICE_TYPE_GPU;
    gpo_strlcpy(dev->info.vendor, "NVIDIA", sizeof dev->info.vendor);
    *out = dev;
    return GPUOPT_OK;
}

/* nvidia-smi's form: the prefix, then the 16 bytes as 8-4-4-4-12 hex
 * digits; "" for all zeros (no UUID). `mig`: a MIG instance's UUID, which
 * nvidia-smi -L and CUDA_VISIBLE_DEVICES spell "MIG-..." (NVML's
 * nvmlDeviceGetUUID: "MIG-<uuid>" since R470). */
static void format_uuid(const gpo_cu_uuid *u, int mig, char *out, size_t cap)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    int zero = 1;
    for (int i = 0; i < 16; i++)
        zero &= b[i] == 0;
    if (zero) {
        gpo_strlcpy(out, "", cap);
        return;
    }
    gpo_snprintf(out, cap,
                 "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 mig ? "MIG" : "GPU", b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
                 b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* Adds an attribute to the details, in its kind's form. */
static void add_detail(gpo_json *b, cJSON *d, const struct attr_row *row, int value)
{
    switch (row->kind) {
    case K_BOOL: gpo_json_bool(b, d, row->key, value); break;
    case K_MHZ: gpo_json_num(b, d, row->key, value / 1000); break;
    case K_MODE: gpo_json_str(b, d, row->key, mode_word(value)); break;
    default: gpo_json_num(b, d, row->key, value); break;
    }
}

/* Peak DRAM bandwidth as NVIDIA's "How to Query Device Properties" (CUDA
 * blog) computes it: 2 x memory clock (kHz) x bus width (bits) / 8. */
static double peak_bandwidth_gbs(int mem_clock_khz, int bus_width_bits)
{
    return 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

/* Facts derived from the attributes and the architecture table. */
static void add_derived(gpo_json *b, cJSON *d, const int *v, const gpo_arch_nvidia_info *arch,
                        const gpo_cuda_state *s)
{
    if (v[A_MEM_CLOCK] > 0 && v[A_BUS_WIDTH] > 0) {
        double gbs = peak_bandwidth_gbs(v[A_MEM_CLOCK], v[A_BUS_WIDTH]);
        gpo_json_num(b, d, "theoretical_bandwidth_gbs", (double)(long)(gbs + 0.5));
    }
    gpo_json_num(b, d, "fp32_lanes_per_multiprocessor", arch->fp32_lanes_per_sm);
    gpo_json_str(b, d, "fp64_rate", arch->fp64_full_rate ? "full" : "reduced");
    gpo_json_str(b, d, "source", "driver");
    if (s->kernel_version[0])
        gpo_json_str(b, d, "kernel_driver_version", s->kernel_version);
}

/* The device's UUID, and whether it is a MIG instance: _v2 answers a MIG
 * instance's own UUID ("If the device is in MIG mode, returns its MIG UUID
 * which uniquely identifies the subscribed MIG compute instance", cuda.h),
 * the unversioned call (drivers before CUDA 11.4) the whole GPU's, so the
 * two differ exactly on a MIG instance. *mig: 1, 0, or -1 unknown (only
 * one call answered). */
static gpuopt_status read_uuid(gpo_cuda_state *s, gpo_cu_device cu, const char *what,
                               gpuopt_device_info *in, int *mig)
{
    gpo_cu_uuid u, gpu;
    gpo_cu_result r;
    *mig = -1;
    memset(&u, 0, sizeof u);
    memset(&gpu, 0, sizeof gpu);
    if (s->api.cuDeviceGetUuid) {
        r = s->api.cuDeviceGetUuid(&u, cu);
        if (r != GPO_CUDA_SUCCESS && !is_unknown_fact(r))
            return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDeviceGetUuid_v2", r);
        if (r == GPO_CUDA_SUCCESS && s->api.cuDeviceGetUuid_v1) {
            gpo_cu_result r1 = s->api.cuDeviceGetUuid_v1(&gpu, cu);
            if (r1 == GPO_CUDA_SUCCESS)
                *mig = memcmp(&u, &gpu, sizeof u) != 0;
            else if (!is_unknown_fact(r1))
                return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDeviceGetUuid", r1);
        }
    } else if (s->api.cuDeviceGetUuid_v1) {
        r = s->api.cuDeviceGetUuid_v1(&u, cu);
        if (r != GPO_CUDA_SUCCESS && !is_unknown_fact(r))
            return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDeviceGetUuid", r);
    } else {
        return GPUOPT_OK;
    }
    if (r == GPO_CUDA_SUCCESS)
        format_uuid(&u, *mig == 1, in->uuid, sizeof in->uuid);
    return GPUOPT_OK;
}

static gpuopt_status one_device(gpo_cuda_state *s, int index, gpo_device_list *out)
{
    gpuopt_status st;
    gpuopt_device *dev = NULL;
    gpo_cu_device cu = 0;
    gpo_cu_result r;
    char what[320], call[96];
    int v[N_ATTRS];
    size_t total = 0;

    gpo_snprintf(what, sizeof what, "cuda: device %d", index);
    st = device_new(index, &dev);
    if (st)
        goto out;
    gpuopt_device_info *in = &dev->info;

    r = s->api.cuDeviceGet(&cu, index);
    if (r != GPO_CUDA_SUCCESS) {
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDeviceGet", r);
        goto out;
    }
    char name[256] = "";
    r = s->api.cuDeviceGetName(name, (int)sizeof name, cu);
    if (r != GPO_CUDA_SUCCESS) {
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDeviceGetName", r);
        goto out;
    }
    name[sizeof name - 1] = '\0';
    gpo_strlcpy(in->name, name, sizeof in->name);
    gpo_snprintf(what, sizeof what, "cuda: device %d (%s)", index, in->name);

    r = s->api.cuDeviceTotalMem(&total, cu);
    if (r != GPO_CUDA_SUCCESS) {
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, "cuDeviceTotalMem_v2", r);
        goto out;
    }
    in->memory_bytes = total;

    for (int i = 0; i < N_ATTRS; i++) {
        v[i] = -1;
        r = s->api.cuDeviceGetAttribute(&v[i], attr_rows[i].attr, cu);
        if (r == GPO_CUDA_SUCCESS)
            continue;
        v[i] = -1;
        if (is_unknown_fact(r) && !attr_rows[i].essential)
            continue;
        gpo_snprintf(call, sizeof call, "cuDeviceGetAttribute(%s)", attr_rows[i].name);
        st = gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, what, call, r);
        goto out;
    }
    int mig = -1;
    st = read_uuid(s, cu, what, in, &mig);
    if (st)
        goto out;

    in->cc_major = v[A_CC_MAJOR];
    in->cc_minor = v[A_CC_MINOR];
    in->compute_units = v[A_SMS];
    in->simd_width = v[A_WARP];
    in->clock_mhz = v[A_CLOCK] > 0 ? v[A_CLOCK] / 1000 : -1;
    in->max_threads_per_block = v[A_MAX_TPB];
    in->shared_mem_per_block = v[A_SHMEM_BLOCK] > 0 ? (uint64_t)v[A_SHMEM_BLOCK] : 0;
    in->l2_bytes = v[A_L2] > 0 ? (uint64_t)v[A_L2] : 0;
    in->ecc = v[A_ECC] < 0 ? -1 : v[A_ECC] != 0;
    in->integrated = v[A_INTEGRATED] < 0 ? -1 : v[A_INTEGRATED] != 0;
    in->unified_memory = v[A_UNIFIED] < 0 ? -1 : v[A_UNIFIED] != 0;
    if (v[A_PCI_DOMAIN] >= 0 && v[A_PCI_BUS] >= 0 && v[A_PCI_DEVICE] >= 0)
        /* The driver gives domain, bus and device; CUDA devices are PCI
         * function 0 (cuDeviceGetPCIBusId prints the same). */
        gpo_snprintf(in->pci_bus_id, sizeof in->pci_bus_id, "%04x:%02x:%02x.0",
                     (unsigned)v[A_PCI_DOMAIN], (unsigned)v[A_PCI_BUS], (unsigned)v[A_PCI_DEVICE]);
    gpo_cuda_version_text(s->driver_version, in->driver_version, sizeof in->driver_version);
    dev->copy_engines = v[A_ASYNC];

    gpo_arch_nvidia_info arch;
    if (gpo_arch_nvidia_lookup(in->cc_major, in->cc_minor, &arch) != 0) {
        st = gpo_fail(GPUOPT_ERR_DRIVER,
                      "%s: the driver reports compute capability %d.%d, "
                      "which is not one",
                      what, in->cc_major, in->cc_minor);
        goto out;
    }
    gpo_strlcpy(in->arch_family, arch.family, sizeof in->arch_family);
    gpo_strlcpy(in->arch_name, arch.sm_name, sizeof in->arch_name);
    in->arch_extrapolated = arch.extrapolated;
    in->features = arch.features;
    in->features_known = arch.features_known;
    double peaks[GPO_PREC_COUNT];
    gpo_arch_nvidia_peaks(&arch, in->compute_units, in->clock_mhz, in->name, peaks);
    dev->est_gflops = peaks[GPO_PREC_FP32];
    for (int p = GPO_PREC_FP32 + 1; p < GPO_PREC_COUNT; p++)
        dev->est_matrix_gflops[p] = peaks[p];
    if (v[A_MEM_CLOCK] > 0 && v[A_BUS_WIDTH] > 0)
        dev->est_bandwidth_gbs = peak_bandwidth_gbs(v[A_MEM_CLOCK], v[A_BUS_WIDTH]);

    cJSON *d = gpo_device_details(dev, "cuda");
    gpo_json b = {!d};
    for (int i = 0; i < N_ATTRS; i++)
        if (attr_rows[i].key && v[i] >= 0)
            add_detail(&b, d, &attr_rows[i], v[i]);
    add_derived(&b, d, v, &arch, s);
    if (mig >= 0)
        gpo_json_bool(&b, d, "mig_instance", mig);
    if (b.failed) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "%s: out of memory for its details", what);
        goto out;
    }
    st = gpo_device_list_push(out, dev);
    dev = NULL; /* the list owns it now, or freed it on failure */
    if (st)
        st = gpo_fail(st, "%s: out of memory listing it", what);
out:
    gpo_device_free(dev);
    return st;
}

static gpuopt_status enumerate_driver(gpo_cuda_state *s, const gpo_backend_env *env,
                                      gpo_device_list *out)
{
    int count = 0;
    gpuopt_status st = gpo_cuda_check_pid(s, "cuda: listing devices");
    if (st)
        return st;
    gpo_cu_result r = s->api.cuDeviceGetCount(&count);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_fail_call(s, GPUOPT_ERR_DRIVER, "cuda: counting devices",
                                  "cuDeviceGetCount", r);
    gpo_log_debug(gpo_env_log(env), "cuda: the driver reports %d device%s", count,
                  count == 1 ? "" : "s");
    for (int i = 0; i < count; i++) {
        size_t before = out->n;
        st = one_device(s, i, out);
        if (st)
            return st;
        /* The driver API has no device-node call; the kernel module's
         * description of the same bus id has its minor number. */
        for (size_t k = before; k < out->n; k++)
            gpo_cuda_procfs_device_file(gpo_env_fs(env), out->items[k]->info.pci_bus_id,
                                        out->items[k]->device_file,
                                        sizeof out->items[k]->device_file);
    }
    return GPUOPT_OK;
}

/* ---- the kernel module's view ------------------------------------------------ */

/* Text from the kernel module's files; an empty one is left out. */
static void add_str(gpo_json *b, cJSON *d, const char *key, const char *value)
{
    if (value[0])
        gpo_json_str(b, d, key, value);
}

static gpuopt_status kernel_device(gpo_cuda_state *s, const gpo_fs *fs, size_t i,
                                   gpo_device_list *out)
{
    const char *busdir = s->kernel_gpus[i];
    gpuopt_device *dev = NULL;
    char pci_id[32] = "";
    gpo_cuda_gpu_info gi;
    gpuopt_status st = device_new((int)i, &dev);
    if (st)
        goto out;
    gpuopt_device_info *in = &dev->info;

    gpo_cuda_procfs_gpu(fs, busdir, &gi);
    gpo_strlcpy(in->name, gi.model[0] ? gi.model : "NVIDIA GPU", sizeof in->name);
    if (gpo_cuda_procfs_uuid_known(gi.uuid))
        gpo_strlcpy(in->uuid, gi.uuid, sizeof in->uuid);
    /* The directory is named by the bus id; the file says it again. */
    if (gpo_pci_normalise(gi.bus, in->pci_bus_id, sizeof in->pci_bus_id) != 0 &&
        gpo_pci_normalise(busdir, in->pci_bus_id, sizeof in->pci_bus_id) != 0)
        in->pci_bus_id[0] = '\0';
    gpo_strlcpy(in->driver_version, s->kernel_version, sizeof in->driver_version);
    gpo_cuda_procfs_device_file(fs, busdir, dev->device_file, sizeof dev->device_file);
    if (in->pci_bus_id[0])
        gpo_fs_readf(fs, pci_id, sizeof pci_id, "/sys/bus/pci/devices/%s/device", in->pci_bus_id);

    cJSON *d = gpo_device_details(dev, "cuda");
    gpo_json b = {!d};
    gpo_json_str(&b, d, "source", "kernel");
    gpo_json_bool(&b, d, "usable", 0);
    gpo_json_str(&b, d, "unusable_because", s->why_unusable);
    add_str(&b, d, "kernel_driver_version", s->kernel_version);
    add_str(&b, d, "video_bios", gi.vbios);
    add_str(&b, d, "bus_type", gi.bus_type);
    add_str(&b, d, "device_minor", gi.minor);
    add_str(&b, d, "gpu_firmware", gi.firmware);
    add_str(&b, d, "pci_device_id", pci_id);
    if (gi.excluded[0])
        gpo_json_bool(&b, d, "excluded", strcmp(gi.excluded, "Yes") == 0);
    if (b.failed) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda: out of memory describing GPU %s", busdir);
        goto out;
    }
    st = gpo_device_list_push(out, dev);
    dev = NULL;
    if (st)
        st = gpo_fail(st, "cuda: out of memory listing GPU %s", busdir);
out:
    gpo_device_free(dev);
    return st;
}

static gpuopt_status enumerate_kernel(gpo_cuda_state *s, const gpo_backend_env *env,
                                      gpo_device_list *out)
{
    for (size_t i = 0; i < s->n_kernel_gpus; i++) {
        gpuopt_status st = kernel_device(s, gpo_env_fs(env), i, out);
        if (st)
            return st;
    }
    gpo_log_debug(gpo_env_log(env), "cuda: %zu GPU%s from the kernel module only", s->n_kernel_gpus,
                  s->n_kernel_gpus == 1 ? "" : "s");
    return GPUOPT_OK;
}

gpuopt_status gpo_cuda_enumerate(void *state, const gpo_backend_env *env, gpo_device_list *out)
{
    gpo_cuda_state *s = state;
    assert(s && env && out);
    if (s->kernel_only)
        return enumerate_kernel(s, env, out);
    return enumerate_driver(s, env, out);
}
