/* Opening the OpenCL ICD loader: dlopen, the symbol table, the platform
 * list and each platform's device ids. No context is created here. */
#include "cl_load.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

#define OCL_API_SYM(field, symbol, required, ret, params)                                          \
    {symbol, offsetof(ocl_api, field), required},
const gpo_dl_sym gpo_ocl_api_syms[] = {OCL_API(OCL_API_SYM)};
#undef OCL_API_SYM
const size_t gpo_ocl_api_n_syms = sizeof gpo_ocl_api_syms / sizeof gpo_ocl_api_syms[0];

/* "OpenCL 3.0 PoCL ..." -> 3, 0. The format is fixed by the specification
 * (OpenCL 3.0 §4.1 CL_PLATFORM_VERSION, §4.2 CL_DEVICE_VERSION). */
static void parse_cl_version(const char *s, const char *prefix, int *major, int *minor)
{
    size_t n = strlen(prefix);
    *major = *minor = -1;
    if (strncmp(s, prefix, n) != 0)
        return;
    int a = 0, b = 0;
    char dot = 0;
    if (sscanf(s + n, "%d%c%d", &a, &dot, &b) == 3 && dot == '.' && a > 0 && b >= 0) {
        *major = a;
        *minor = b;
    }
}

static void platform_string(const ocl_api *api, cl_platform_id p, cl_platform_info what, char *out,
                            size_t cap)
{
    out[0] = '\0';
    if (api->GetPlatformInfo(p, what, cap, out, NULL) != CL_SUCCESS)
        out[0] = '\0';
    out[cap - 1] = '\0';
    gpo_trim(out);
}

/* Device ids of one platform. CL_DEVICE_NOT_FOUND is an empty platform,
 * not a failure (OpenCL 3.0 §4.2). */
static gpuopt_status platform_devices(ocl_state *st, ocl_platform *p)
{
    cl_uint n = 0;
    cl_int err = st->api.GetDeviceIDs(p->id, CL_DEVICE_TYPE_ALL, 0, NULL, &n);
    if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && n == 0))
        return GPUOPT_OK;
    if (err != CL_SUCCESS) {
        p->devices_err = err;
        return GPUOPT_OK;
    }
    p->devices = calloc(n, sizeof *p->devices);
    if (!p->devices)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory listing OpenCL devices");
    cl_uint got = 0;
    err = st->api.GetDeviceIDs(p->id, CL_DEVICE_TYPE_ALL, n, p->devices, &got);
    if (err != CL_SUCCESS) {
        free(p->devices);
        p->devices = NULL;
        p->devices_err = err;
        return GPUOPT_OK;
    }
    p->n_devices = got < n ? got : n;
    return GPUOPT_OK;
}

/* 1 when `v` is one of the ", "-separated items of `list`. */
static int listed(const char *list, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = list; *p;) {
        const char *end = strstr(p, ", ");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0)
            return 1;
        p += len + (end ? 2 : 0);
    }
    return 0;
}

/* Distinct CL_DRIVER_VERSION values, ", "-joined ("3.1+debian"). */
static void driver_versions(const ocl_state *st, char *out, size_t cap)
{
    out[0] = '\0';
    for (cl_uint i = 0; i < st->n_platforms; i++) {
        for (cl_uint d = 0; d < st->platforms[i].n_devices; d++) {
            char v[128] = "";
            if (st->api.GetDeviceInfo(st->platforms[i].devices[d], CL_DRIVER_VERSION, sizeof v, v,
                                      NULL) != CL_SUCCESS)
                continue;
            v[sizeof v - 1] = '\0';
            gpo_trim(v);
            if (!v[0] || listed(out, v))
                continue;
            size_t len = strlen(out);
            gpo_snprintf(out + len, cap - len, "%s%s", len ? ", " : "", v);
        }
    }
}

/* The loader's own name and version ("OpenCL ICD Loader 2.3.1"), from
 * clGetICDLoaderInfoOCLICD, which both ocl-icd and the Khronos loader
 * answer; else the highest platform version. */
static void runtime_version(const ocl_state *st, char *out, size_t cap)
{
    out[0] = '\0';
    if (st->api.GetExtensionFunctionAddress) {
        void *p = st->api.GetExtensionFunctionAddress("clGetICDLoaderInfoOCLICD");
        ocl_loader_info_fn info;
        memcpy(&info, &p, sizeof info);
        char name[64] = "", ver[32] = "";
        if (info && info(OCL_ICDL_NAME, sizeof name, name, NULL) == CL_SUCCESS &&
            info(OCL_ICDL_VERSION, sizeof ver, ver, NULL) == CL_SUCCESS) {
            name[sizeof name - 1] = ver[sizeof ver - 1] = '\0';
            gpo_snprintf(out, cap, "%s %s", gpo_trim(name), gpo_trim(ver));
            return;
        }
    }
    int best_major = -1, best_minor = -1;
    for (cl_uint i = 0; i < st->n_platforms; i++) {
        const ocl_platform *p = &st->platforms[i];
        if (p->ver_major > best_major ||
            (p->ver_major == best_major && p->ver_minor > best_minor)) {
            best_major = p->ver_major;
            best_minor = p->ver_minor;
        }
    }
    if (best_major > 0)
        gpo_snprintf(out, cap, "OpenCL %d.%d", best_major, best_minor);
}

void gpo_ocl_unload(void *state)
{
    ocl_state *st = state;
    if (!st)
        return;
    for (cl_uint i = 0; i < st->n_platforms; i++)
        free(st->platforms[i].devices);
    free(st->platforms);
    /* The loader stays mapped: unloading ICDs at run time crashes several
     * drivers (KhronosGroup/OpenCL-ICD-Loader#138, libocca/occa#253). */
    free(st);
}

static gpuopt_status fail_report(gpo_backend_report *report, gpuopt_status status, const char *fmt,
                                 const char *a, const char *b)
{
    gpo_snprintf(report->reason, sizeof report->reason, fmt, a, b);
    return gpo_fail(status, "opencl: %s", report->reason);
}

const char *gpo_ocl_library_name(const char *user_path)
{
    return user_path && user_path[0] ? user_path : OCL_DEFAULT_LIBRARY;
}

gpuopt_status gpo_ocl_load(const gpo_backend_env *env, void **state, gpo_backend_report *report)
{
    assert(env && state && report);
    *state = NULL;
    memset(report, 0, sizeof *report);

    gpuopt_status status = GPUOPT_OK;
    ocl_state *st = calloc(1, sizeof *st);
    if (!st)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl load: out of memory");
    st->log = gpo_env_log(env);

    const char *path = gpo_ocl_library_name(gpo_env_library(env, "opencl"));
    char err[512];
    st->lib = gpo_dl_open(path, err, sizeof err);
    if (!st->lib) {
        status = fail_report(report, GPUOPT_ERR_UNAVAILABLE,
                             "cannot load the OpenCL ICD loader %s: %s", path, err);
        goto out;
    }
    gpo_dl_path(st->lib, st->library, sizeof st->library);
    if (!st->library[0])
        gpo_strlcpy(st->library, path, sizeof st->library);
    gpo_strlcpy(report->library, st->library, sizeof report->library);

    char missing[400];
    if (gpo_dl_resolve(st->lib, gpo_ocl_api_syms, gpo_ocl_api_n_syms, &st->api, missing,
                       sizeof missing) != GPUOPT_OK) {
        status = fail_report(report, GPUOPT_ERR_DRIVER, "%s lacks required OpenCL entry points: %s",
                             st->library, missing);
        goto out;
    }

    /* The first call initialises every ICD (PoCL starts LLVM here): most of
     * the backend's start-up cost, logged for the benchmark. */
    cl_uint n = 0;
    uint64_t t0 = gpo_now_ns();
    cl_int cerr = st->api.GetPlatformIDs(0, NULL, &n);
    st->platforms_ns = gpo_now_ns() - t0;
    gpo_log_debug(gpo_env_log(env), "opencl: clGetPlatformIDs took %.2f ms (%u platforms)",
                  (double)st->platforms_ns / 1e6, cerr == CL_SUCCESS ? n : 0u);
    if (cerr == CL_PLATFORM_NOT_FOUND_KHR) {
        status = fail_report(report, GPUOPT_ERR_UNAVAILABLE,
                             "no OpenCL platform is installed: the ICD loader %s found no vendor "
                             "driver (no usable .icd file in /etc/OpenCL/vendors or "
                             "OCL_ICD_VENDORS) (%s)",
                             st->library, "CL_PLATFORM_NOT_FOUND_KHR");
        goto out;
    }
    if (cerr != CL_SUCCESS) {
        char code[96];
        gpo_snprintf(code, sizeof code, "%s, %d", gpo_ocl_error_name(cerr), (int)cerr);
        status = fail_report(report, GPUOPT_ERR_DRIVER, "clGetPlatformIDs in %s failed (%s)",
                             st->library, code);
        goto out;
    }
    if (n > 0) {
        cl_platform_id *ids = calloc(n, sizeof *ids);
        st->platforms = calloc(n, sizeof *st->platforms);
        if (!ids || !st->platforms) {
            free(ids);
            status = gpo_fail(GPUOPT_ERR_NO_MEMORY, "opencl load: out of memory");
            goto out;
        }
        cl_uint got = 0;
        cerr = st->api.GetPlatformIDs(n, ids, &got);
        if (cerr != CL_SUCCESS) {
            free(ids);
            char code[96];
            gpo_snprintf(code, sizeof code, "%s, %d", gpo_ocl_error_name(cerr), (int)cerr);
            status = fail_report(report, GPUOPT_ERR_DRIVER, "clGetPlatformIDs in %s failed (%s)",
                                 st->library, code);
            goto out;
        }
        st->n_platforms = got < n ? got : n;
        for (cl_uint i = 0; i < st->n_platforms; i++) {
            ocl_platform *p = &st->platforms[i];
            p->id = ids[i];
            platform_string(&st->api, p->id, CL_PLATFORM_NAME, p->name, sizeof p->name);
            platform_string(&st->api, p->id, CL_PLATFORM_VENDOR, p->vendor, sizeof p->vendor);
            platform_string(&st->api, p->id, CL_PLATFORM_VERSION, p->version, sizeof p->version);
            parse_cl_version(p->version, "OpenCL ", &p->ver_major, &p->ver_minor);
            status = platform_devices(st, p);
            if (status != GPUOPT_OK)
                break;
        }
        free(ids);
        if (status != GPUOPT_OK)
            goto out;
    }

    /* A platform whose device list failed is left out, and said so; the
     * others still count (a broken ICD must not hide a working one). */
    for (cl_uint i = 0; i < st->n_platforms; i++) {
        const ocl_platform *p = &st->platforms[i];
        if (p->devices_err == CL_SUCCESS)
            continue;
        size_t len = strlen(report->reason);
        gpo_snprintf(report->reason + len, sizeof report->reason - len,
                     "%splatform \"%s\" skipped: clGetDeviceIDs failed (%s, %d)", len ? "; " : "",
                     p->name, gpo_ocl_error_name(p->devices_err), (int)p->devices_err);
    }
    driver_versions(st, report->driver_version, sizeof report->driver_version);
    runtime_version(st, report->runtime_version, sizeof report->runtime_version);

out:
    if (status != GPUOPT_OK) {
        /* st->lib stays mapped even here: the loader may already have
         * initialised ICDs, which must never be unloaded. */
        gpo_ocl_unload(st);
        return status;
    }
    *state = st;
    return GPUOPT_OK;
}
