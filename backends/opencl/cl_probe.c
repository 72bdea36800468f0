/* Reading every fact of one OpenCL device (clGetDeviceInfo), standard
 * queries first, then the vendor extensions that name the physical device.
 * Query names and types: OpenCL 3.0 API specification §4.2, table 5;
 * extension queries: the Khronos extension texts named beside each. */
#include "cl_probe.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

/* A string query of any length; *out malloc'd (NUL-terminated, trimmed). */
static cl_int dev_str_alloc(const ocl_api *api, cl_device_id dev, cl_device_info what, char **out)
{
    size_t size = 0;
    *out = NULL;
    cl_int err = api->GetDeviceInfo(dev, what, 0, NULL, &size);
    if (err != CL_SUCCESS)
        return err;
    char *s = malloc(size + 1);
    if (!s)
        return CL_OUT_OF_HOST_MEMORY;
    err = size ? api->GetDeviceInfo(dev, what, size, s, NULL) : CL_SUCCESS;
    if (err != CL_SUCCESS) {
        free(s);
        return err;
    }
    s[size] = '\0';
    gpo_trim(s);
    *out = s;
    return CL_SUCCESS;
}

/* A string query into a fixed buffer (truncated); "" on failure. */
static cl_int dev_str(const ocl_api *api, cl_device_id dev, cl_device_info what, char *buf,
                      size_t cap)
{
    char *s = NULL;
    cl_int err = dev_str_alloc(api, dev, what, &s);
    buf[0] = '\0';
    if (err == CL_SUCCESS)
        gpo_strlcpy(buf, s, cap);
    free(s);
    return err;
}

/* Fixed-size queries: the value only when the driver answers with exactly
 * the size asked (a wrong size is a broken driver, not a fact). */
static int dev_get(const ocl_api *api, cl_device_id dev, cl_device_info what, void *value,
                   size_t size)
{
    size_t got = 0;
    if (api->GetDeviceInfo(dev, what, size, value, &got) != CL_SUCCESS || got != size)
        return 0;
    return 1;
}

static int64_t dev_uint(const ocl_api *api, cl_device_id dev, cl_device_info what)
{
    cl_uint v = 0;
    return dev_get(api, dev, what, &v, sizeof v) ? (int64_t)v : -1;
}

static uint64_t dev_ulong(const ocl_api *api, cl_device_id dev, cl_device_info what)
{
    cl_ulong v = 0;
    return dev_get(api, dev, what, &v, sizeof v) ? (uint64_t)v : 0;
}

static int64_t dev_size(const ocl_api *api, cl_device_id dev, cl_device_info what)
{
    size_t v = 0;
    return dev_get(api, dev, what, &v, sizeof v) ? (int64_t)v : -1;
}

static int dev_bool(const ocl_api *api, cl_device_id dev, cl_device_info what)
{
    cl_bool v = CL_FALSE;
    return dev_get(api, dev, what, &v, sizeof v) ? (v ? 1 : 0) : -1;
}

/* Whole-word membership in a space-separated list (extension names are
 * prefixes of one another: cl_khr_fp16 / cl_khr_fp16_something). */
static int has_token(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && (p = strstr(p, name)) != NULL; p += n) {
        int starts = p == list || p[-1] == ' ';
        int ends = p[n] == '\0' || p[n] == ' ';
        if (starts && ends)
            return 1;
    }
    return 0;
}

/* "OpenCL 3.0 ..." / "OpenCL C 1.2 ..." -> major, minor (OpenCL 3.0 §4.2). */
static void parse_version(const char *s, const char *prefix, int *major, int *minor)
{
    size_t n = strlen(prefix);
    int a = 0, b = 0;
    char dot = 0;
    *major = *minor = -1;
    if (strncmp(s, prefix, n) == 0 && sscanf(s + n, "%d%c%d", &a, &dot, &b) == 3 && dot == '.' &&
        a > 0 && b >= 0) {
        *major = a;
        *minor = b;
    }
}

/* OpenCL 3.0 devices list every OpenCL C version they accept
 * (CL_DEVICE_OPENCL_C_ALL_VERSIONS) and their optional features
 * (CL_DEVICE_OPENCL_C_FEATURES); CL_DEVICE_OPENCL_C_VERSION then only names
 * the highest fully backward-compatible one (1.2 on PoCL). */
static void read_c_versions(const ocl_api *api, ocl_facts *f)
{
    parse_version(f->c_version, "OpenCL C ", &f->c_major, &f->c_minor);
    if (f->ver_major < 3)
        return;
    size_t size = 0;
    cl_name_version *v = NULL;
    if (api->GetDeviceInfo(f->device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, 0, NULL, &size) ==
            CL_SUCCESS &&
        size >= sizeof *v && (v = malloc(size)) != NULL &&
        api->GetDeviceInfo(f->device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, size, v, NULL) ==
            CL_SUCCESS) {
        for (size_t i = 0; i < size / sizeof *v; i++) {
            int ma = (int)CL_VERSION_MAJOR(v[i].version), mi = (int)CL_VERSION_MINOR(v[i].version);
            if (ma > f->c_major || (ma == f->c_major && mi > f->c_minor)) {
                f->c_major = ma;
                f->c_minor = mi;
            }
        }
    }
    free(v);
    v = NULL;
    if (api->GetDeviceInfo(f->device, CL_DEVICE_OPENCL_C_FEATURES, 0, NULL, &size) == CL_SUCCESS &&
        size >= sizeof *v && (v = malloc(size)) != NULL &&
        api->GetDeviceInfo(f->device, CL_DEVICE_OPENCL_C_FEATURES, size, v, NULL) == CL_SUCCESS) {
        gpo_sbuf b;
        gpo_sbuf_init(&b);
        for (size_t i = 0; i < size / sizeof *v; i++) {
            v[i].name[CL_NAME_VERSION_MAX_NAME_SIZE - 1] = '\0';
            gpo_sbuf_appendf(&b, "%s%s", i ? " " : "", v[i].name);
        }
        f->c_features = gpo_sbuf_take(&b);
    }
    free(v);
}

/* Sub-group sizes: cl_intel_required_subgroup_size lists them; OpenCL 2.1+
 * (and 3.0 with sub-groups) gives the maximum count per work-group. */
static void read_sub_groups(const ocl_api *api, ocl_facts *f)
{
    if (has_token(f->extensions, "cl_intel_required_subgroup_size")) {
        size_t size = 0;
        if (api->GetDeviceInfo(f->device, CL_DEVICE_SUB_GROUP_SIZES_INTEL,
                               sizeof f->sub_group_sizes, f->sub_group_sizes, &size) == CL_SUCCESS)
            f->n_sub_group_sizes = size / sizeof(size_t);
        if (f->n_sub_group_sizes > OCL_MAX_SUB_GROUP_SIZES)
            f->n_sub_group_sizes = OCL_MAX_SUB_GROUP_SIZES;
    }
    if (f->ver_major > 2 || (f->ver_major == 2 && f->ver_minor >= 1))
        f->max_sub_groups = dev_uint(api, f->device, CL_DEVICE_MAX_NUM_SUB_GROUPS);
}

static void format_pci(char *out, size_t cap, unsigned domain, unsigned bus, unsigned device,
                       unsigned function)
{
    gpo_snprintf(out, cap, "%04x:%02x:%02x.%x", domain & 0xffffu, bus & 0xffu, device & 0x1fu,
                 function & 0x7u);
}

/* The PCI address, from the first of: cl_khr_pci_bus_info (Khronos),
 * cl_amd_device_attribute_query CL_DEVICE_TOPOLOGY_AMD (no domain: 0),
 * cl_nv_device_attribute_query bus/slot/domain (slot = device << 3 |
 * function). The same order as hwloc's include/hwloc/opencl.h. */
static void read_pci(const ocl_api *api, ocl_facts *f)
{
    if (has_token(f->extensions, "cl_khr_pci_bus_info")) {
        cl_device_pci_bus_info_khr info;
        if (dev_get(api, f->device, CL_DEVICE_PCI_BUS_INFO_KHR, &info, sizeof info)) {
            format_pci(f->pci_bus_id, sizeof f->pci_bus_id, info.pci_domain, info.pci_bus,
                       info.pci_device, info.pci_function);
            f->pci_source = "cl_khr_pci_bus_info";
            return;
        }
    }
    if (has_token(f->extensions, "cl_amd_device_attribute_query")) {
        cl_device_topology_amd t;
        if (dev_get(api, f->device, CL_DEVICE_TOPOLOGY_AMD, &t, sizeof t) &&
            t.raw.type == CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD) {
            format_pci(f->pci_bus_id, sizeof f->pci_bus_id, 0, (unsigned char)t.pcie.bus,
                       (unsigned char)t.pcie.device, (unsigned char)t.pcie.function);
            f->pci_source = "CL_DEVICE_TOPOLOGY_AMD";
            return;
        }
    }
    if (has_token(f->extensions, "cl_nv_device_attribute_query")) {
        int64_t bus = dev_uint(api, f->device, CL_DEVICE_PCI_BUS_ID_NV);
        int64_t slot = dev_uint(api, f->device, CL_DEVICE_PCI_SLOT_ID_NV);
        int64_t domain = dev_uint(api, f->device, CL_DEVICE_PCI_DOMAIN_ID_NV);
        if (bus >= 0 && slot >= 0) {
            format_pci(f->pci_bus_id, sizeof f->pci_bus_id, domain > 0 ? (unsigned)domain : 0,
                       (unsigned)bus, (unsigned)slot >> 3, (unsigned)slot & 7u);
            f->pci_source = "cl_nv_device_attribute_query";
        }
    }
}

/* cl_khr_device_uuid: 16 bytes, printed as 8-4-4-4-12 hex. NVIDIA's is the
 * same UUID CUDA and nvidia-smi report, so it carries their "GPU-" prefix
 * (cl_khr_device_uuid is specified to match Vulkan's deviceUUID, which
 * NVIDIA documents as the CUDA UUID). */
static void read_uuid(const ocl_api *api, ocl_facts *f)
{
    if (!has_token(f->extensions, "cl_khr_device_uuid"))
        return;
    cl_uchar u[CL_UUID_SIZE_KHR];
    if (!dev_get(api, f->device, CL_DEVICE_UUID_KHR, u, sizeof u))
        return;
    int zero = 1;
    for (size_t i = 0; i < sizeof u; i++)
        zero &= u[i] == 0;
    if (zero)
        return;
    gpo_snprintf(f->uuid, sizeof f->uuid,
                 "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 f->vendor_id == 0x10de ? "GPU-" : "", u[0], u[1], u[2], u[3], u[4], u[5], u[6],
                 u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static void read_vendor_specific(const ocl_api *api, ocl_facts *f)
{
    /* cl_nv_device_attribute_query: compute capability, warp size,
     * integrated memory. */
    if (has_token(f->extensions, "cl_nv_device_attribute_query")) {
        f->nv_cc_major = dev_uint(api, f->device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV);
        f->nv_cc_minor = dev_uint(api, f->device, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV);
        f->nv_warp = dev_uint(api, f->device, CL_DEVICE_WARP_SIZE_NV);
        f->nv_integrated = dev_bool(api, f->device, CL_DEVICE_INTEGRATED_MEMORY_NV);
    }
    /* cl_amd_device_attribute_query: board name, wavefront and SIMD shape.
     * AMD's ROCm runtime names the device by its gfx target
     * ("gfx90a:sramecc+:xnack-"); the marketing name is the board name. */
    if (has_token(f->extensions, "cl_amd_device_attribute_query")) {
        dev_str(api, f->device, CL_DEVICE_BOARD_NAME_AMD, f->amd_board, sizeof f->amd_board);
        f->amd_wavefront = dev_uint(api, f->device, CL_DEVICE_WAVEFRONT_WIDTH_AMD);
        f->amd_simd_per_cu = dev_uint(api, f->device, CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD);
        f->amd_simd_width = dev_uint(api, f->device, CL_DEVICE_SIMD_WIDTH_AMD);
    }
    if (f->vendor_id == 0x1002 && strncmp(f->name, "gfx", 3) == 0)
        gpo_strlcpy(f->amd_gfx, f->name, sizeof f->amd_gfx);
}

/* PoCL's CPU device: CL_DEVICE_VERSION ends in "HSTR: <driver>-<triple>-<cpu>"
 * and the name is "<driver>-<cpu>-<model>", so the LLVM CPU name is the
 * tail of the HSTR that also starts the name (both may contain dashes:
 * "x86_64-pc-linux-gnu", "skylake-avx512"). */
static void read_pocl_cpu(ocl_facts *f)
{
    const char *h = strstr(f->version, "HSTR: ");
    const char *dash = strchr(f->name, '-');
    if (!h || !dash)
        return;
    h += 6;
    size_t drv = (size_t)(dash - f->name) + 1;
    if (strncmp(h, f->name, drv) != 0)
        return;
    const char *rest = h + drv, *name_rest = f->name + drv;
    for (const char *p = strchr(rest, '-'); p; p = strchr(p + 1, '-')) {
        const char *cpu = p + 1;
        size_t n = strcspn(cpu, " ");
        if (n && strncmp(name_rest, cpu, n) == 0 && (name_rest[n] == '-' || !name_rest[n])) {
            gpo_snprintf(f->cpu_triple, sizeof f->cpu_triple, "%.*s", (int)(p - rest), rest);
            gpo_snprintf(f->cpu_arch, sizeof f->cpu_arch, "%.*s", (int)n, cpu);
            return;
        }
    }
}

void gpo_ocl_facts_free(ocl_facts *f)
{
    if (!f)
        return;
    free(f->extensions);
    free(f->c_features);
    f->extensions = f->c_features = NULL;
}

static void facts_init(ocl_facts *f)
{
    memset(f, 0, sizeof *f);
    f->ver_major = f->ver_minor = f->c_major = f->c_minor = -1;
    f->compute_units = f->clock_mhz = f->cacheline = f->max_wg = -1;
    f->pref_multiple = f->max_sub_groups = f->native_vec_float = -1;
    f->profiling_resolution_ns = -1;
    f->local_dedicated = f->host_unified = f->ecc = f->unified_addressing = -1;
    f->nv_cc_major = f->nv_cc_minor = f->nv_warp = -1;
    f->nv_integrated = -1;
    f->amd_wavefront = f->amd_simd_per_cu = f->amd_simd_width = -1;
}

gpuopt_status gpo_ocl_facts_read(const ocl_api *api, const ocl_platform *plat, int platform_index,
                                 cl_device_id dev, ocl_facts *f)
{
    assert(api && plat && dev && f);
    facts_init(f);
    f->platform = plat->id;
    f->device = dev;
    f->platform_index = platform_index;

    /* Name, type and version are what every later decision rests on: a
     * device that cannot give them is reported, not guessed. */
    cl_int err = dev_str(api, dev, CL_DEVICE_NAME, f->name, sizeof f->name);
    if (err == CL_SUCCESS && !dev_get(api, dev, CL_DEVICE_TYPE, &f->type, sizeof f->type))
        err = CL_INVALID_VALUE;
    if (err == CL_SUCCESS)
        err = dev_str(api, dev, CL_DEVICE_VERSION, f->version, sizeof f->version);
    if (err == CL_SUCCESS)
        err = dev_str_alloc(api, dev, CL_DEVICE_EXTENSIONS, &f->extensions);
    if (err != CL_SUCCESS) {
        gpo_ocl_facts_free(f);
        return gpo_fail(err == CL_OUT_OF_HOST_MEMORY ? GPUOPT_ERR_NO_MEMORY : GPUOPT_ERR_DRIVER,
                        "opencl: clGetDeviceInfo on a device of platform \"%s\" failed (%s, %d)",
                        plat->name, gpo_ocl_error_name(err), (int)err);
    }
    parse_version(f->version, "OpenCL ", &f->ver_major, &f->ver_minor);
    dev_str(api, dev, CL_DEVICE_VENDOR, f->vendor, sizeof f->vendor);
    dev_str(api, dev, CL_DEVICE_OPENCL_C_VERSION, f->c_version, sizeof f->c_version);
    dev_str(api, dev, CL_DRIVER_VERSION, f->driver, sizeof f->driver);
    dev_str(api, dev, CL_DEVICE_PROFILE, f->profile, sizeof f->profile);
    int64_t vid = dev_uint(api, dev, CL_DEVICE_VENDOR_ID);
    f->vendor_id = vid > 0 ? (cl_uint)vid : 0;

    f->compute_units = dev_uint(api, dev, CL_DEVICE_MAX_COMPUTE_UNITS);
    f->clock_mhz = dev_uint(api, dev, CL_DEVICE_MAX_CLOCK_FREQUENCY);
    f->global_mem = dev_ulong(api, dev, CL_DEVICE_GLOBAL_MEM_SIZE);
    f->local_mem = dev_ulong(api, dev, CL_DEVICE_LOCAL_MEM_SIZE);
    f->max_alloc = dev_ulong(api, dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    f->global_cache = dev_ulong(api, dev, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    f->const_buf = dev_ulong(api, dev, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE);
    f->cacheline = dev_uint(api, dev, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE);
    cl_device_local_mem_type lt;
    if (dev_get(api, dev, CL_DEVICE_LOCAL_MEM_TYPE, &lt, sizeof lt))
        f->local_dedicated = lt == CL_LOCAL ? 1 : 0;
    f->max_wg = dev_size(api, dev, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    int64_t dims = dev_uint(api, dev, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
    if (dims >= 1) {
        size_t sizes[16] = {0};
        size_t n = dims < 16 ? (size_t)dims : 16;
        if (api->GetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, n * sizeof(size_t), sizes,
                               NULL) == CL_SUCCESS) {
            f->max_dims = (cl_uint)dims;
            for (size_t i = 0; i < 3 && i < n; i++)
                f->max_items[i] = sizes[i];
        }
    }
    if (f->ver_major >= 3) {
        f->pref_multiple = dev_size(api, dev, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE);
        if (f->pref_multiple > 0)
            f->pref_source = OCL_PREF_DEVICE;
        else
            f->pref_multiple = -1;
    }
    f->native_vec_float = dev_uint(api, dev, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT);
    f->profiling_resolution_ns = dev_size(api, dev, CL_DEVICE_PROFILING_TIMER_RESOLUTION);
    f->host_unified = dev_bool(api, dev, CL_DEVICE_HOST_UNIFIED_MEMORY);
    f->ecc = dev_bool(api, dev, CL_DEVICE_ERROR_CORRECTION_SUPPORT);
    if (f->ver_major >= 2) {
        cl_device_svm_capabilities svm = 0;
        if (dev_get(api, dev, CL_DEVICE_SVM_CAPABILITIES, &svm, sizeof svm))
            f->unified_addressing = (svm & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM) ? 1 : 0;
    }

    read_c_versions(api, f);
    /* fp64: cl_khr_fp64, the OpenCL C 3.0 feature __opencl_c_fp64, or a
     * non-zero CL_DEVICE_DOUBLE_FP_CONFIG (core-optional since 1.2). fp16:
     * cl_khr_fp16 or a non-zero CL_DEVICE_HALF_FP_CONFIG. */
    cl_device_fp_config fp = 0;
    f->fp64 = has_token(f->extensions, "cl_khr_fp64") ||
              has_token(f->c_features, "__opencl_c_fp64") ||
              (dev_get(api, dev, CL_DEVICE_DOUBLE_FP_CONFIG, &fp, sizeof fp) && fp != 0);
    fp = 0;
    f->fp16 = has_token(f->extensions, "cl_khr_fp16") ||
              (dev_get(api, dev, CL_DEVICE_HALF_FP_CONFIG, &fp, sizeof fp) && fp != 0);

    read_sub_groups(api, f);
    read_pci(api, f);
    read_uuid(api, f);
    read_vendor_specific(api, f);
    if (f->type & CL_DEVICE_TYPE_CPU)
        read_pocl_cpu(f);
    return GPUOPT_OK;
}

/* A one-line kernel whose CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE is
 * the device's (OpenCL 1.1 §5.7.3); needed before OpenCL 3.0 made it a
 * device query. Every object is released on every path. */
gpuopt_status gpo_ocl_probe_preferred_multiple(const ocl_api *api, ocl_facts *f)
{
    assert(api && f && f->device);
    static const char *src = "__kernel void gpo_probe(__global float *x)"
                             "{ x[get_global_id(0)] *= 2.0f; }";
    gpuopt_status status = GPUOPT_OK;
    cl_context ctx = NULL;
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_int err = CL_SUCCESS;
    const char *step = "clCreateContext";
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)f->platform, 0};

    ctx = api->CreateContext(props, 1, &f->device, NULL, NULL, &err);
    if (!ctx || err != CL_SUCCESS)
        goto fail;
    step = "clCreateProgramWithSource";
    prog = api->CreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (!prog || err != CL_SUCCESS)
        goto fail;
    step = "clBuildProgram";
    err = api->BuildProgram(prog, 1, &f->device, "", NULL, NULL);
    if (err != CL_SUCCESS)
        goto fail;
    step = "clCreateKernel";
    k = api->CreateKernel(prog, "gpo_probe", &err);
    if (!k || err != CL_SUCCESS)
        goto fail;
    step = "clGetKernelWorkGroupInfo";
    size_t m = 0;
    err = api->GetKernelWorkGroupInfo(k, f->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                      sizeof m, &m, NULL);
    if (err != CL_SUCCESS || m == 0) {
        if (err == CL_SUCCESS)
            err = CL_INVALID_VALUE;
        goto fail;
    }
    f->pref_multiple = (int64_t)m;
    f->pref_source = OCL_PREF_KERNEL;
    goto out;
fail:
    if (err == CL_SUCCESS)
        err = CL_INVALID_VALUE; /* a NULL object with CL_SUCCESS: a broken driver */
    f->pref_source = OCL_PREF_FAILED;
    status = gpo_fail(gpo_ocl_status(err, GPUOPT_ERR_DRIVER),
                      "opencl: probing the preferred work-group multiple of \"%s\": %s failed "
                      "(%s, %d)",
                      f->name, step, gpo_ocl_error_name(err), (int)err);
out:
    if (k)
        api->ReleaseKernel(k);
    if (prog)
        api->ReleaseProgram(prog);
    if (ctx)
        api->ReleaseContext(ctx);
    return status;
}

/* Free device memory: only AMD's runtime says (cl_amd_device_attribute_query
 * CL_DEVICE_GLOBAL_FREE_MEMORY_AMD: total free and largest free block, in
 * KiB). Elsewhere the core uses the total. */
gpuopt_status gpo_ocl_facts_free_memory(const ocl_api *api, const ocl_facts *f,
                                        uint64_t *free_bytes)
{
    assert(api && f && free_bytes);
    *free_bytes = 0;
    if (!has_token(f->extensions, "cl_amd_device_attribute_query"))
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "opencl: \"%s\" does not report its free memory",
                        f->name);
    size_t kib[2] = {0, 0};
    size_t got = 0;
    cl_int err =
        api->GetDeviceInfo(f->device, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, sizeof kib, kib, &got);
    if (err != CL_SUCCESS || got < sizeof kib[0])
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "opencl: CL_DEVICE_GLOBAL_FREE_MEMORY_AMD failed (%s, %d)",
                        gpo_ocl_error_name(err), (int)err);
    *free_bytes = (uint64_t)kib[0] * 1024u;
    return GPUOPT_OK;
}
