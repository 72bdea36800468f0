/* OpenCL devices to normalised records: one record per physical device,
 * facts in gpuopt_device_info, everything else under details "opencl".
 *
 * Numbering: opencl:N counts physical devices in the order they first
 * appear when platforms are walked in the loader's order and each
 * platform's devices in its own order. A device that two platforms expose
 * (an NVIDIA GPU seen by NVIDIA's platform and by PoCL's CUDA driver, a CPU
 * seen by PoCL and by Intel's runtime) is one record, routed through the
 * vendor's own platform; the others are listed in details.other_platforms. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch/nvidia.h"
#include "arch/amd.h"
#include "cl_device.h"
#include "util/json.h"
#include "util/strutil.h"

/* PCI-SIG vendor ids (the PCI ID Repository, pci-ids.ucw.cz) and how each
 * vendor's own OpenCL platform names its vendor (CL_PLATFORM_VENDOR as
 * shipped by NVIDIA's driver, AMD's ROCm/Adrenalin and Intel's runtimes). */
static const struct {
    cl_uint id;
    const char *short_name;
    const char *platform_vendor[2];
} vendors[] = {
    {0x10de, "NVIDIA", {"NVIDIA", NULL}},
    {0x1002, "AMD", {"Advanced Micro Devices", "AMD"}},
    {0x1022, "AMD", {"Advanced Micro Devices", "AMD"}},
    {0x8086, "Intel", {"Intel", NULL}},
    {0x13b5, "ARM", {"ARM", NULL}},
    {0x5143, "Qualcomm", {"QUALCOMM", "Qualcomm"}},
    {0x1010, "Imagination", {"Imagination", NULL}},
    {0x106b, "Apple", {"Apple", NULL}},
};

const char *gpo_ocl_vendor_short(cl_uint vendor_id)
{
    for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++)
        if (vendors[i].id == vendor_id)
            return vendors[i].short_name;
    return NULL;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

/* 1 when `platform_vendor` is the device vendor's own platform. */
static int own_platform(cl_uint vendor_id, const char *platform_vendor)
{
    for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++) {
        if (vendors[i].id != vendor_id)
            continue;
        for (size_t j = 0; j < 2 && vendors[i].platform_vendor[j]; j++)
            if (contains_nocase(platform_vendor, vendors[i].platform_vendor[j]))
                return 1;
    }
    return 0;
}

/* Whether two (platform, device) pairs are the same hardware: equal UUIDs
 * when both have one, else equal PCI addresses; every CPU device is the
 * host's CPU. The same rule as the core's cross-backend join. */
static int same_physical(const ocl_facts *a, const ocl_facts *b)
{
    /* One platform listing a device twice means two devices (PoCL's
     * pthread and basic CPU drivers side by side): only platforms join. */
    if (a->platform_index == b->platform_index)
        return 0;
    const char *ua = a->uuid, *ub = b->uuid;
    if (strncmp(ua, "GPU-", 4) == 0)
        ua += 4;
    if (strncmp(ub, "GPU-", 4) == 0)
        ub += 4;
    if (ua[0] && ub[0])
        return strcasecmp(ua, ub) == 0;
    if (a->pci_bus_id[0] && b->pci_bus_id[0])
        return strcmp(a->pci_bus_id, b->pci_bus_id) == 0;
    return (a->type & CL_DEVICE_TYPE_CPU) && (b->type & CL_DEVICE_TYPE_CPU);
}

void gpo_ocl_priv_free(void *priv)
{
    ocl_dev_priv *p = priv;
    if (!p)
        return;
    gpo_ocl_facts_free(&p->facts);
    free(p);
}

/* A device's CL_DEVICE_TYPE, by its first bit in this order: gpuopt's type
 * and the word in details; the last row takes every other device. */
static const struct {
    cl_device_type bit;
    int32_t type;
    const char *word;
} types[] = {
    {CL_DEVICE_TYPE_GPU, GPUOPT_DEVICE_TYPE_GPU, "gpu"},
    {CL_DEVICE_TYPE_CPU, GPUOPT_DEVICE_TYPE_CPU, "cpu"},
    {CL_DEVICE_TYPE_ACCELERATOR, GPUOPT_DEVICE_TYPE_ACCELERATOR, "accelerator"},
    {CL_DEVICE_TYPE_CUSTOM, GPUOPT_DEVICE_TYPE_OTHER, "custom"},
    {0, GPUOPT_DEVICE_TYPE_OTHER, "other"},
};

static size_t type_row(cl_device_type t)
{
    size_t i = 0;
    while (types[i].bit && !(t & types[i].bit))
        i++;
    return i;
}

/* LLVM triple architecture to the family names the CPU backend uses. */
static const struct {
    const char *triple_arch;
    const char *family;
} cpu_families[] = {
    {"x86_64", "x86-64"},       {"i386", "x86"},        {"i686", "x86"},
    {"aarch64", "aarch64"},     {"arm", "arm"},         {"riscv64", "riscv64"},
    {"powerpc64le", "ppc64le"}, {"powerpc64", "ppc64"}, {"s390x", "s390x"},
};

static void set_peaks(gpuopt_device *dev, const double peaks[GPO_PREC_COUNT])
{
    dev->est_gflops = peaks[GPO_PREC_FP32];
    for (int p = GPO_PREC_FP32 + 1; p < GPO_PREC_COUNT; p++)
        dev->est_matrix_gflops[p] = peaks[p];
}

/* NVIDIA: the CUDA architecture table by compute capability, as the CUDA
 * backend does, so both views of one GPU say the same (family, features,
 * throughput estimate). What OpenCL itself exposes (cl_khr_fp16, fp64)
 * stays in details.opencl. */
static void fill_nvidia_arch(const ocl_facts *f, gpuopt_device *dev)
{
    gpuopt_device_info *info = &dev->info;
    gpo_arch_nvidia_info arch;
    info->cc_major = (int32_t)f->nv_cc_major;
    info->cc_minor = (int32_t)f->nv_cc_minor;
    if (gpo_arch_nvidia_lookup(info->cc_major, info->cc_minor, &arch) != 0) {
        gpo_snprintf(info->arch_name, sizeof info->arch_name, "sm_%d%d", info->cc_major,
                     info->cc_minor);
        return;
    }
    gpo_strlcpy(info->arch_family, arch.family, sizeof info->arch_family);
    gpo_strlcpy(info->arch_name, arch.sm_name, sizeof info->arch_name);
    info->arch_extrapolated = arch.extrapolated;
    info->features = arch.features;
    info->features_known = arch.features_known;
    double peaks[GPO_PREC_COUNT];
    gpo_arch_nvidia_peaks(&arch, info->compute_units, info->clock_mhz, info->name, peaks);
    set_peaks(dev, peaks);
}

/* AMD: the ROCm architecture table by gfx target, as the ROCm backend
 * does (family, features, wavefront, throughput estimate). */
static void fill_amd_arch(const ocl_facts *f, gpuopt_device *dev)
{
    gpuopt_device_info *info = &dev->info;
    gpo_arch_amd_info arch;
    if (gpo_arch_amd_lookup(f->amd_gfx, &arch) != 0) {
        /* "gfx90a:sramecc+:xnack-": the target without its feature flags. */
        gpo_snprintf(info->arch_name, sizeof info->arch_name, "%.*s", (int)strcspn(f->amd_gfx, ":"),
                     f->amd_gfx);
        return;
    }
    gpo_strlcpy(info->arch_name, arch.gfx, sizeof info->arch_name);
    gpo_strlcpy(info->arch_family, arch.family, sizeof info->arch_family);
    info->arch_extrapolated = arch.extrapolated;
    info->features = arch.features;
    info->features_known = arch.features_known;
    if (info->simd_width < 0)
        info->simd_width = arch.wavefront;
    double peaks[GPO_PREC_COUNT];
    gpo_arch_amd_peaks(&arch, info->compute_units, info->clock_mhz, peaks);
    set_peaks(dev, peaks);
}

static void fill_arch(const ocl_facts *f, gpuopt_device *dev)
{
    gpuopt_device_info *info = &dev->info;
    if (f->nv_cc_major > 0 && f->nv_cc_minor >= 0) {
        fill_nvidia_arch(f, dev);
    } else if (f->amd_gfx[0]) {
        fill_amd_arch(f, dev);
    } else if (f->cpu_arch[0]) {
        gpo_strlcpy(info->arch_name, f->cpu_arch, sizeof info->arch_name);
        size_t n = strcspn(f->cpu_triple, "-");
        for (size_t i = 0; i < sizeof cpu_families / sizeof cpu_families[0]; i++) {
            if (strlen(cpu_families[i].triple_arch) == n &&
                strncmp(f->cpu_triple, cpu_families[i].triple_arch, n) == 0) {
                gpo_strlcpy(info->arch_family, cpu_families[i].family, sizeof info->arch_family);
                break;
            }
        }
    }
}

static void fill_info(const ocl_facts *f, int32_t index, gpuopt_device *dev)
{
    gpuopt_device_info *info = &dev->info;
    gpo_snprintf(info->id, sizeof info->id, "opencl:%d", index);
    gpo_strlcpy(info->backend, "opencl", sizeof info->backend);
    info->index = index;
    info->type = types[type_row(f->type)].type;
    const char *vs = gpo_ocl_vendor_short(f->vendor_id);
    /* CPUs keep the vendor string they report (GenuineIntel, AuthenticAMD),
     * as the CPU backend does; other devices get the vendor's short name. */
    gpo_strlcpy(info->vendor, (vs && info->type != GPUOPT_DEVICE_TYPE_CPU) ? vs : f->vendor,
                sizeof info->vendor);
    gpo_strlcpy(info->name, f->amd_board[0] ? f->amd_board : f->name, sizeof info->name);
    info->compute_units = (int32_t)f->compute_units;
    if (f->nv_warp > 0)
        info->simd_width = (int32_t)f->nv_warp;
    else if (f->amd_wavefront > 0)
        info->simd_width = (int32_t)f->amd_wavefront;
    else if ((f->type & CL_DEVICE_TYPE_CPU) && f->native_vec_float > 0)
        info->simd_width = (int32_t)f->native_vec_float;
    info->clock_mhz = (int32_t)f->clock_mhz;
    info->integrated = f->nv_integrated >= 0 ? f->nv_integrated : f->host_unified;
    info->unified_memory = f->unified_addressing;
    info->ecc = f->ecc;
    info->max_threads_per_block = f->max_wg > INT32_MAX ? INT32_MAX : (int32_t)f->max_wg;
    info->memory_bytes = f->global_mem;
    info->l2_bytes = f->global_cache;
    info->shared_mem_per_block = f->local_mem;
    gpo_strlcpy(info->pci_bus_id, f->pci_bus_id, sizeof info->pci_bus_id);
    gpo_strlcpy(info->uuid, f->uuid, sizeof info->uuid);
    gpo_strlcpy(info->driver_version, f->driver, sizeof info->driver_version);
    if (f->ver_major > 0)
        gpo_snprintf(info->runtime_version, sizeof info->runtime_version, "OpenCL %d.%d",
                     f->ver_major, f->ver_minor);
    info->features_known |= GPUOPT_FEATURE_FP64 | GPUOPT_FEATURE_FP16;
    if (f->fp64)
        info->features |= GPUOPT_FEATURE_FP64;
    if (f->fp16)
        info->features |= GPUOPT_FEATURE_FP16;
    fill_arch(f, dev);
}

/* Adders into one object through the checked builder (util/json.h), which
 * latches the first failure. */
typedef struct jw {
    gpo_json b;
    cJSON *obj;
} jw;

static void j_str(jw *w, const char *k, const char *v)
{
    if (v && v[0])
        gpo_json_str(&w->b, w->obj, k, v);
}

static void j_num(jw *w, const char *k, double v)
{
    gpo_json_num(&w->b, w->obj, k, v);
}

/* An integer fact; -1 (unknown) is left out. */
static void j_int(jw *w, const char *k, int64_t v)
{
    if (v >= 0)
        j_num(w, k, (double)v);
}

static void j_bool(jw *w, const char *k, int v)
{
    if (v >= 0)
        gpo_json_bool(&w->b, w->obj, k, v);
}

/* n sizes as a JSON array of numbers; none: no member. */
static void j_sizes(jw *w, const char *k, const size_t *v, size_t n)
{
    cJSON *a = n ? gpo_json_array(&w->b, w->obj, k) : NULL;
    for (size_t i = 0; a && i < n; i++)
        gpo_json_num(&w->b, a, NULL, (double)v[i]);
}

/* A space-separated list as a JSON array of strings. */
static void j_words(jw *w, const char *k, const char *list)
{
    cJSON *a = list ? gpo_json_array(&w->b, w->obj, k) : NULL;
    for (const char *p = list; a && !w->b.failed && *p;) {
        p += strspn(p, " ");
        size_t n = strcspn(p, " ");
        if (!n)
            break;
        char word[128];
        gpo_snprintf(word, sizeof word, "%.*s", (int)n, p);
        gpo_json_str(&w->b, a, NULL, word);
        p += n;
    }
}

static gpuopt_status fill_details(gpuopt_device *dev, const ocl_dev_priv *p)
{
    const ocl_facts *f = &p->facts;
    jw w = {{0}, gpo_device_details(dev, "opencl")};
    if (!w.obj)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl: out of memory for device details");
    j_str(&w, "platform_name", p->platform_name);
    j_str(&w, "platform_vendor", p->platform_vendor);
    j_str(&w, "platform_version", p->platform_version);
    j_str(&w, "other_platforms", p->other_platforms);
    j_str(&w, "device_name", f->name);
    j_str(&w, "device_vendor", f->vendor);
    j_str(&w, "device_version", f->version);
    j_str(&w, "opencl_c_version", f->c_version);
    if (f->c_major > 0) {
        char v[16];
        gpo_snprintf(v, sizeof v, "%d.%d", f->c_major, f->c_minor);
        j_str(&w, "opencl_c_highest", v);
    }
    j_str(&w, "driver_version", f->driver);
    j_str(&w, "profile", f->profile);
    j_num(&w, "vendor_id", f->vendor_id);
    j_str(&w, "type", types[type_row(f->type)].word);
    j_int(&w, "max_compute_units", f->compute_units);
    j_int(&w, "max_clock_mhz", f->clock_mhz);
    j_num(&w, "global_mem_bytes", (double)f->global_mem);
    j_num(&w, "local_mem_bytes", (double)f->local_mem);
    if (f->local_dedicated >= 0)
        j_str(&w, "local_mem_type", f->local_dedicated ? "local" : "global");
    j_num(&w, "max_mem_alloc_bytes", (double)f->max_alloc);
    j_num(&w, "global_mem_cache_bytes", (double)f->global_cache);
    j_int(&w, "global_mem_cacheline_bytes", f->cacheline);
    j_num(&w, "max_constant_buffer_bytes", (double)f->const_buf);
    j_int(&w, "max_work_group_size", f->max_wg);
    j_sizes(&w, "max_work_item_sizes", f->max_items, f->max_dims < 3 ? f->max_dims : 3);
    j_int(&w, "preferred_work_group_size_multiple", f->pref_multiple);
    if (f->pref_source == OCL_PREF_DEVICE)
        j_str(&w, "preferred_multiple_source", "CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE");
    else if (f->pref_source == OCL_PREF_KERNEL)
        j_str(&w, "preferred_multiple_source", "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE");
    j_sizes(&w, "sub_group_sizes", f->sub_group_sizes, f->n_sub_group_sizes);
    j_int(&w, "max_num_sub_groups", f->max_sub_groups);
    j_int(&w, "native_vector_width_float", f->native_vec_float);
    j_int(&w, "profiling_timer_resolution_ns", f->profiling_resolution_ns);
    j_bool(&w, "fp64", f->fp64);
    j_bool(&w, "fp16", f->fp16);
    j_bool(&w, "host_unified_memory", f->host_unified);
    j_bool(&w, "error_correction", f->ecc);
    j_bool(&w, "svm_fine_grain_system", f->unified_addressing);
    j_str(&w, "pci_bus_id", f->pci_bus_id);
    j_str(&w, "pci_bus_id_source", f->pci_source);
    j_str(&w, "uuid", f->uuid);
    if (f->nv_cc_major > 0) {
        char cc[16];
        gpo_snprintf(cc, sizeof cc, "%d.%d", (int)f->nv_cc_major, (int)f->nv_cc_minor);
        j_str(&w, "nv_compute_capability", cc);
    }
    j_int(&w, "nv_warp_size", f->nv_warp);
    j_bool(&w, "nv_integrated_memory", f->nv_integrated);
    j_str(&w, "amd_board_name", f->amd_board);
    j_str(&w, "amd_gfx_target", f->amd_gfx);
    j_int(&w, "amd_wavefront_width", f->amd_wavefront);
    j_int(&w, "amd_simd_per_compute_unit", f->amd_simd_per_cu);
    j_int(&w, "amd_simd_width", f->amd_simd_width);
    j_str(&w, "cpu_target_triple", f->cpu_triple);
    j_str(&w, "cpu_target", f->cpu_arch);
    j_words(&w, "opencl_c_features", f->c_features);
    j_words(&w, "extensions", f->extensions);
    if (w.b.failed)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl: out of memory for device details");
    return GPUOPT_OK;
}

/* One candidate per (platform, device) pair before joining. */
typedef struct cand {
    ocl_dev_priv *priv; /* NULL once joined into another or handed to a record */
    int own;            /* on the vendor's own platform */
} cand;

static void note_platform(ocl_dev_priv *keep, const char *name)
{
    size_t len = strlen(keep->other_platforms);
    if (strstr(keep->other_platforms, name))
        return;
    gpo_snprintf(keep->other_platforms + len, sizeof keep->other_platforms - len, "%s%s",
                 len ? "; " : "", name);
}

/* The record for `p` (which it takes over, also on failure). The core
 * fills the route's backend and state (src/backend.h, enumerate). */
static gpuopt_status make_record(ocl_dev_priv *p, int32_t index, gpo_device_list *out)
{
    gpuopt_device *dev = gpo_device_new();
    if (!dev) {
        gpo_ocl_priv_free(p);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl: out of memory for a device record");
    }
    fill_info(&p->facts, index, dev);
    gpo_route *r = &dev->routes[0];
    r->index = index;
    r->priv = p;
    r->priv_free = gpo_ocl_priv_free;
    dev->n_routes = 1;
    gpuopt_status s = fill_details(dev, p);
    if (s == GPUOPT_OK)
        r->info = dev->info;
    if (s != GPUOPT_OK) {
        gpo_device_free(dev);
        return s;
    }
    return gpo_device_list_push(out, dev);
}

gpuopt_status gpo_ocl_enumerate(void *state, const gpo_backend_env *env, gpo_device_list *out)
{
    ocl_state *st = state;
    assert(st && out);
    (void)env;
    size_t total = 0;
    for (cl_uint i = 0; i < st->n_platforms; i++)
        total += st->platforms[i].n_devices;
    if (total == 0)
        return GPUOPT_OK;

    gpuopt_status status = GPUOPT_OK;
    uint64_t t0 = gpo_now_ns();
    cand *c = calloc(total, sizeof *c);
    size_t n = 0;
    if (!c)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl enumerate: out of memory");
    for (cl_uint i = 0; i < st->n_platforms && status == GPUOPT_OK; i++) {
        const ocl_platform *pl = &st->platforms[i];
        for (cl_uint d = 0; d < pl->n_devices; d++) {
            ocl_dev_priv *p = calloc(1, sizeof *p);
            if (!p) {
                status = gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl enumerate: out of memory");
                break;
            }
            gpuopt_status fs = gpo_ocl_facts_read(&st->api, pl, (int)i, pl->devices[d], &p->facts);
            if (fs == GPUOPT_ERR_NO_MEMORY) {
                free(p);
                status = fs;
                break;
            }
            if (fs != GPUOPT_OK) {
                /* One device that cannot describe itself is left out and
                 * said so; the others are still listed. */
                gpo_log_warn(st->log, "%s; the device is left out", gpo_detail_get());
                free(p);
                continue;
            }
            gpo_strlcpy(p->platform_name, pl->name, sizeof p->platform_name);
            gpo_strlcpy(p->platform_vendor, pl->vendor, sizeof p->platform_vendor);
            gpo_strlcpy(p->platform_version, pl->version, sizeof p->platform_version);
            c[n].priv = p;
            c[n].own = own_platform(p->facts.vendor_id, pl->vendor);
            n++;
        }
    }

    /* Join duplicates: the first own-platform candidate wins, else the
     * first one; the record takes the position of the first appearance. */
    for (size_t i = 0; i < n && status == GPUOPT_OK; i++) {
        if (!c[i].priv)
            continue;
        size_t best = i;
        for (size_t j = i + 1; j < n; j++)
            if (c[j].priv && same_physical(&c[j].priv->facts, &c[i].priv->facts) && c[j].own &&
                !c[best].own)
                best = j;
        if (best != i) {
            cand tmp = c[i];
            c[i] = c[best];
            c[best] = tmp;
        }
        for (size_t j = i + 1; j < n; j++) {
            if (c[j].priv && same_physical(&c[j].priv->facts, &c[i].priv->facts)) {
                note_platform(c[i].priv, c[j].priv->platform_name);
                gpo_ocl_priv_free(c[j].priv);
                c[j].priv = NULL;
            }
        }
    }
    int32_t index = 0;
    for (size_t i = 0; i < n; i++) {
        if (!c[i].priv)
            continue;
        ocl_dev_priv *p = c[i].priv;
        c[i].priv = NULL;
        if (status == GPUOPT_OK)
            status = make_record(p, index++, out);
        else
            gpo_ocl_priv_free(p);
    }
    free(c);
    gpo_log_debug(st->log, "opencl: reading %zu devices took %.2f ms", total,
                  (double)(gpo_now_ns() - t0) / 1e6);
    return status;
}
