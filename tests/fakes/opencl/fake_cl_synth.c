/* The synthetic platforms of the test-double loader: platforms and devices
 * read from a JSON file (tests/fixtures/opencl/README.md describes the
 * format and where each file's values come from). A device key that the
 * file leaves out makes its query fail with CL_INVALID_VALUE, as a driver
 * does for a query it does not know. */
#include "fake_cl.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PLATFORMS 8
#define MAX_DEVICES 8

typedef struct fdev {
    const cJSON *json;
} fdev;

typedef struct fplat {
    const cJSON *json;
    fdev devices[MAX_DEVICES];
    cl_uint n_devices;
} fplat;

static cJSON *root;
static fplat plats[MAX_PLATFORMS];
static cl_uint n_plats;

int synth_load(const char *path)
{
    cJSON_Delete(root);
    root = NULL;
    memset(plats, 0, sizeof plats);
    n_plats = 0;
    if (!path)
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            char *nb = realloc(buf, cap + 65536);
            if (!nb)
                break;
            buf = nb;
            cap += 65536;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    root = buf ? cJSON_ParseWithLength(buf, len) : NULL;
    free(buf);
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "platforms");
    const cJSON *p;
    cJSON_ArrayForEach(p, ps)
    {
        if (n_plats == MAX_PLATFORMS)
            break;
        fplat *fp = &plats[n_plats++];
        fp->json = p;
        const cJSON *d;
        cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(p, "devices"))
        {
            if (fp->n_devices < MAX_DEVICES)
                fp->devices[fp->n_devices++].json = d;
        }
    }
    return root ? 0 : -1;
}

static fplat *plat_of(cl_platform_id id)
{
    for (cl_uint i = 0; i < n_plats; i++)
        if ((void *)&plats[i] == (void *)id)
            return &plats[i];
    return NULL;
}

static const cJSON *dev_json(cl_device_id id)
{
    for (cl_uint i = 0; i < n_plats; i++)
        for (cl_uint d = 0; d < plats[i].n_devices; d++)
            if ((void *)&plats[i].devices[d] == (void *)id)
                return plats[i].devices[d].json;
    return NULL;
}

/* Copies `n` bytes of `src` out by the OpenCL query convention. */
static cl_int answer(const void *src, size_t n, size_t size, void *value, size_t *ret)
{
    if (ret)
        *ret = n;
    if (value) {
        if (size < n)
            return CL_INVALID_VALUE;
        memcpy(value, src, n);
    }
    return CL_SUCCESS;
}

static cl_int answer_str(const cJSON *s, size_t size, void *value, size_t *ret)
{
    if (!cJSON_IsString(s))
        return CL_INVALID_VALUE;
    return answer(s->valuestring, strlen(s->valuestring) + 1, size, value, ret);
}

cl_int synth_platform_ids(cl_uint n, cl_platform_id *out, cl_uint *count)
{
    if ((n == 0 && out) || (!out && !count))
        return CL_INVALID_VALUE;
    if (n_plats == 0)
        return CL_PLATFORM_NOT_FOUND_KHR;
    for (cl_uint i = 0; out && i < n && i < n_plats; i++)
        out[i] = (cl_platform_id)(void *)&plats[i];
    if (count)
        *count = n_plats;
    return CL_SUCCESS;
}

cl_int synth_platform_info(cl_platform_id id, cl_platform_info what, size_t size, void *value,
                           size_t *ret)
{
    fplat *p = plat_of(id);
    if (!p)
        return CL_INVALID_PLATFORM;
    const char *key = what == CL_PLATFORM_NAME      ? "name"
                      : what == CL_PLATFORM_VENDOR  ? "vendor"
                      : what == CL_PLATFORM_VERSION ? "version"
                      : what == CL_PLATFORM_PROFILE ? "profile"
                                                    : NULL;
    return key ? answer_str(cJSON_GetObjectItemCaseSensitive(p->json, key), size, value, ret)
               : CL_INVALID_VALUE;
}

static cl_device_type type_bits(const cJSON *d)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(d, "type");
    const char *s = cJSON_IsString(t) ? t->valuestring : "";
    return strcmp(s, "gpu") == 0           ? CL_DEVICE_TYPE_GPU
           : strcmp(s, "cpu") == 0         ? CL_DEVICE_TYPE_CPU
           : strcmp(s, "accelerator") == 0 ? CL_DEVICE_TYPE_ACCELERATOR
                                           : CL_DEVICE_TYPE_DEFAULT;
}

cl_int synth_device_ids(cl_platform_id id, cl_device_type type, cl_uint n, cl_device_id *out,
                        cl_uint *count)
{
    fplat *p = plat_of(id);
    if (!p)
        return CL_INVALID_PLATFORM;
    cl_uint k = 0;
    for (cl_uint i = 0; i < p->n_devices; i++) {
        if (type != CL_DEVICE_TYPE_ALL && !(type_bits(p->devices[i].json) & type))
            continue;
        if (out && k < n)
            out[k] = (cl_device_id)(void *)&p->devices[i];
        k++;
    }
    if (count)
        *count = k;
    return k ? CL_SUCCESS : CL_DEVICE_NOT_FOUND;
}

/* Scalar and array device queries by JSON key. */
typedef enum { T_STR, T_UINT, T_ULONG, T_SIZE, T_BOOL, T_SIZES, T_CVERS, T_FEATS } qtype;

static const struct {
    cl_device_info what;
    const char *key;
    qtype type;
} queries[] = {
    {CL_DEVICE_NAME, "name", T_STR},
    {CL_DEVICE_VENDOR, "vendor", T_STR},
    {CL_DEVICE_VERSION, "version", T_STR},
    {CL_DEVICE_OPENCL_C_VERSION, "c_version", T_STR},
    {CL_DRIVER_VERSION, "driver", T_STR},
    {CL_DEVICE_PROFILE, "profile", T_STR},
    {CL_DEVICE_EXTENSIONS, "extensions", T_STR},
    {CL_DEVICE_VENDOR_ID, "vendor_id", T_UINT},
    {CL_DEVICE_MAX_COMPUTE_UNITS, "compute_units", T_UINT},
    {CL_DEVICE_MAX_CLOCK_FREQUENCY, "clock_mhz", T_UINT},
    {CL_DEVICE_GLOBAL_MEM_SIZE, "global_mem", T_ULONG},
    {CL_DEVICE_LOCAL_MEM_SIZE, "local_mem", T_ULONG},
    {CL_DEVICE_MAX_MEM_ALLOC_SIZE, "max_alloc", T_ULONG},
    {CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, "global_cache", T_ULONG},
    {CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, "const_buf", T_ULONG},
    {CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, "cacheline", T_UINT},
    {CL_DEVICE_MAX_WORK_GROUP_SIZE, "max_wg", T_SIZE},
    {CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, "max_dims", T_UINT},
    {CL_DEVICE_MAX_WORK_ITEM_SIZES, "max_items", T_SIZES},
    {CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, "preferred_multiple", T_SIZE},
    {CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, "native_vec_float", T_UINT},
    {CL_DEVICE_PROFILING_TIMER_RESOLUTION, "timer_resolution", T_SIZE},
    {CL_DEVICE_HOST_UNIFIED_MEMORY, "host_unified", T_BOOL},
    {CL_DEVICE_ERROR_CORRECTION_SUPPORT, "ecc", T_BOOL},
    {CL_DEVICE_SVM_CAPABILITIES, "svm", T_ULONG},
    {CL_DEVICE_DOUBLE_FP_CONFIG, "double_fp_config", T_ULONG},
    {CL_DEVICE_HALF_FP_CONFIG, "half_fp_config", T_ULONG},
    {CL_DEVICE_MAX_NUM_SUB_GROUPS, "max_sub_groups", T_UINT},
    {CL_DEVICE_SUB_GROUP_SIZES_INTEL, "sub_group_sizes", T_SIZES},
    {CL_DEVICE_OPENCL_C_ALL_VERSIONS, "c_all_versions", T_CVERS},
    {CL_DEVICE_OPENCL_C_FEATURES, "c_features", T_FEATS},
    {CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, "nv_cc_major", T_UINT},
    {CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, "nv_cc_minor", T_UINT},
    {CL_DEVICE_WARP_SIZE_NV, "nv_warp", T_UINT},
    {0x4006 /* CL_DEVICE_INTEGRATED_MEMORY_NV */, "nv_integrated", T_BOOL},
    {0x4008 /* CL_DEVICE_PCI_BUS_ID_NV */, "nv_pci_bus", T_UINT},
    {0x4009 /* CL_DEVICE_PCI_SLOT_ID_NV */, "nv_pci_slot", T_UINT},
    {0x400A /* CL_DEVICE_PCI_DOMAIN_ID_NV */, "nv_pci_domain", T_UINT},
    {CL_DEVICE_BOARD_NAME_AMD, "amd_board", T_STR},
    {CL_DEVICE_WAVEFRONT_WIDTH_AMD, "amd_wavefront", T_UINT},
    {CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD, "amd_simd_per_cu", T_UINT},
    {CL_DEVICE_SIMD_WIDTH_AMD, "amd_simd_width", T_UINT},
    {CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, "amd_free_kib", T_SIZES},
};

/* "1.2" -> CL_MAKE_VERSION(1, 2, 0). */
static cl_version version_of(const char *s)
{
    unsigned a = 0, b = 0;
    sscanf(s, "%u.%u", &a, &b);
    return CL_MAKE_VERSION(a, b, 0);
}

static cl_int special(const cJSON *d, cl_device_info what, size_t size, void *value, size_t *ret)
{
    if (what == CL_DEVICE_TYPE) {
        cl_device_type t = type_bits(d);
        return answer(&t, sizeof t, size, value, ret);
    }
    if (what == CL_DEVICE_LOCAL_MEM_TYPE) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(d, "local_mem_type");
        if (!cJSON_IsString(t))
            return CL_INVALID_VALUE;
        cl_device_local_mem_type v = strcmp(t->valuestring, "local") == 0 ? CL_LOCAL : CL_GLOBAL;
        return answer(&v, sizeof v, size, value, ret);
    }
    if (what == CL_DEVICE_PCI_BUS_INFO_KHR) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(d, "pci_bus_info");
        if (cJSON_GetArraySize(a) != 4)
            return CL_INVALID_VALUE;
        cl_device_pci_bus_info_khr v = {(cl_uint)cJSON_GetArrayItem(a, 0)->valuedouble,
                                        (cl_uint)cJSON_GetArrayItem(a, 1)->valuedouble,
                                        (cl_uint)cJSON_GetArrayItem(a, 2)->valuedouble,
                                        (cl_uint)cJSON_GetArrayItem(a, 3)->valuedouble};
        return answer(&v, sizeof v, size, value, ret);
    }
    if (what == CL_DEVICE_TOPOLOGY_AMD) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(d, "topology_amd");
        if (cJSON_GetArraySize(a) != 3)
            return CL_INVALID_VALUE;
        cl_device_topology_amd v;
        memset(&v, 0, sizeof v);
        v.pcie.type = CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD;
        v.pcie.bus = (cl_char)(int)cJSON_GetArrayItem(a, 0)->valuedouble;
        v.pcie.device = (cl_char)(int)cJSON_GetArrayItem(a, 1)->valuedouble;
        v.pcie.function = (cl_char)(int)cJSON_GetArrayItem(a, 2)->valuedouble;
        return answer(&v, sizeof v, size, value, ret);
    }
    if (what == CL_DEVICE_UUID_KHR) {
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(d, "uuid");
        if (!cJSON_IsString(u) || strlen(u->valuestring) != 32)
            return CL_INVALID_VALUE;
        cl_uchar v[CL_UUID_SIZE_KHR];
        for (int i = 0; i < CL_UUID_SIZE_KHR; i++) {
            unsigned b = 0;
            sscanf(u->valuestring + 2 * i, "%2x", &b);
            v[i] = (cl_uchar)b;
        }
        return answer(v, sizeof v, size, value, ret);
    }
    return 1; /* not special */
}

cl_int synth_device_info(cl_device_id id, cl_device_info what, size_t size, void *value,
                         size_t *ret)
{
    const cJSON *d = dev_json(id);
    if (!d)
        return CL_INVALID_DEVICE;
    cl_int s = special(d, what, size, value, ret);
    if (s != 1)
        return s;
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
        if (queries[i].what != what)
            continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, queries[i].key);
        if (!v)
            return CL_INVALID_VALUE;
        switch (queries[i].type) {
        case T_STR: return answer_str(v, size, value, ret);
        case T_UINT: {
            cl_uint x = (cl_uint)v->valuedouble;
            return answer(&x, sizeof x, size, value, ret);
        }
        case T_ULONG: {
            cl_ulong x = (cl_ulong)v->valuedouble;
            return answer(&x, sizeof x, size, value, ret);
        }
        case T_SIZE: {
            size_t x = (size_t)v->valuedouble;
            return answer(&x, sizeof x, size, value, ret);
        }
        case T_BOOL: {
            cl_bool x = cJSON_IsTrue(v) ? CL_TRUE : CL_FALSE;
            return answer(&x, sizeof x, size, value, ret);
        }
        case T_SIZES: {
            size_t x[16] = {0};
            int n = cJSON_GetArraySize(v);
            n = n > 16 ? 16 : n;
            for (int k = 0; k < n; k++)
                x[k] = (size_t)cJSON_GetArrayItem(v, k)->valuedouble;
            return answer(x, (size_t)n * sizeof x[0], size, value, ret);
        }
        case T_CVERS:
        case T_FEATS: {
            cl_name_version x[32];
            memset(x, 0, sizeof x);
            int n = cJSON_GetArraySize(v);
            n = n > 32 ? 32 : n;
            for (int k = 0; k < n; k++) {
                const char *s = cJSON_GetArrayItem(v, k)->valuestring;
                if (queries[i].type == T_CVERS) {
                    x[k].version = version_of(s);
                    snprintf(x[k].name, sizeof x[k].name, "OpenCL C");
                } else {
                    x[k].version = CL_MAKE_VERSION(3, 0, 0);
                    snprintf(x[k].name, sizeof x[k].name, "%s", s);
                }
            }
            return answer(x, (size_t)n * sizeof x[0], size, value, ret);
        }
        }
    }
    return CL_INVALID_VALUE;
}

size_t synth_kernel_multiple(cl_device_id id)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(dev_json(id), "kernel_preferred_multiple");
    return cJSON_IsNumber(v) ? (size_t)v->valuedouble : 0;
}
