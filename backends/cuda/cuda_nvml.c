/* NVML: a GPU's memory without a CUDA context. nvmlDeviceGetMemoryInfo
 * reads what the kernel driver accounts for the whole GPU (every process's
 * allocations), so it answers for a GPU no process of ours has touched,
 * costs no device memory, and is what nvidia-smi shows (NVML API Reference,
 * nvmlDeviceGetMemoryInfo). */
#include "cuda_nvml.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

static const gpo_dl_sym nvml_syms[] = {
#define SYM_ROW_(field, symbol, required, ret, params)                                             \
    {#symbol, offsetof(gpo_nvml_api, field), required},
    GPO_NVML_API(SYM_ROW_)
#undef SYM_ROW_
};

/* "NVML_ERROR_NOT_FOUND" for a known result, else NULL. */
static const char *return_name(gpo_nvml_return r)
{
    switch ((int)r) {
#define NAME_CASE_(name, value)                                                                    \
    case value: return #name;
        GPO_NVML_RETURNS(NAME_CASE_)
#undef NAME_CASE_
    }
    return NULL;
}

/* "NVML_ERROR_NOT_FOUND (Not Found)", from the library's own words when it
 * has them. */
static void words(const gpo_nvml *nv, gpo_nvml_return r, char *out, size_t cap)
{
    const char *name = return_name(r);
    const char *text = nv && nv->api.nvmlErrorString ? nv->api.nvmlErrorString(r) : NULL;
    if (name && text)
        gpo_snprintf(out, cap, "%s (%s)", name, text);
    else if (name)
        gpo_snprintf(out, cap, "%s", name);
    else
        gpo_snprintf(out, cap, "nvmlReturn_t %d", (int)r);
}

gpuopt_status gpo_nvml_open(const char *user_path, gpo_nvml **out)
{
    char err[512], missing[256], w[160];
    gpuopt_status st = GPUOPT_OK;
    *out = NULL;
    gpo_nvml *nv = calloc(1, sizeof *nv);
    if (!nv)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "NVML: out of memory");
    int user = user_path && *user_path;
    const char *name = user ? user_path : GPO_NVML_DEFAULT_LIBRARY;
    nv->handle = gpo_dl_open(name, err, sizeof err);
    if (!nv->handle) {
        st = gpo_fail(GPUOPT_ERR_UNAVAILABLE, "NVML: cannot open %s%s: %s", name,
                      user ? " (GPUOPT_NVML_LIBRARY)" : ", the NVIDIA driver's management library",
                      err);
        goto out;
    }
    gpo_dl_path(nv->handle, nv->library, sizeof nv->library);
    if (!nv->library[0])
        gpo_strlcpy(nv->library, name, sizeof nv->library);
    if (gpo_dl_resolve(nv->handle, nvml_syms, sizeof nvml_syms / sizeof nvml_syms[0], &nv->api,
                       missing, sizeof missing) != GPUOPT_OK) {
        st = gpo_fail(GPUOPT_ERR_UNAVAILABLE, "NVML: %s lacks %s: it is not NVML, or one too old",
                      nv->library, missing);
        goto out;
    }
    gpo_nvml_return r = nv->api.nvmlInit();
    if (r != GPO_NVML_SUCCESS) {
        words(nv, r, w, sizeof w);
        st = gpo_fail(GPUOPT_ERR_DRIVER, "NVML: nvmlInit_v2 failed in %s: %s", nv->library, w);
        goto out;
    }
out:
    if (st)
        free(nv); /* the library stays loaded: never dlclose a vendor library */
    else
        *out = nv;
    return st;
}

void gpo_nvml_close(gpo_nvml *nv)
{
    if (!nv)
        return;
    if (nv->api.nvmlShutdown)
        nv->api.nvmlShutdown();
    free(nv);
}

gpuopt_status gpo_nvml_read_memory(const gpo_nvml *nv, const char *uuid, const char *pci_bus_id,
                                   gpo_memory_reading *out)
{
    char w[160];
    gpo_nvml_device dev = NULL;
    const char *by;
    gpo_nvml_return r;
    if (uuid && *uuid) {
        by = "UUID";
        r = nv->api.nvmlDeviceGetHandleByUUID(uuid, &dev);
        if (r == GPO_NVML_ERROR_NOT_FOUND && strncmp(uuid, "MIG-", 4) != 0 && pci_bus_id &&
            *pci_bus_id && nv->api.nvmlDeviceGetHandleByPciBusId) {
            by = "PCI bus id";
            r = nv->api.nvmlDeviceGetHandleByPciBusId(pci_bus_id, &dev);
        }
    } else if (pci_bus_id && *pci_bus_id && nv->api.nvmlDeviceGetHandleByPciBusId) {
        by = "PCI bus id";
        r = nv->api.nvmlDeviceGetHandleByPciBusId(pci_bus_id, &dev);
    } else {
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "NVML: the device has neither a UUID nor a PCI bus id to find it by");
    }
    if (r != GPO_NVML_SUCCESS) {
        words(nv, r, w, sizeof w);
        return gpo_fail(GPUOPT_ERR_DRIVER, "NVML: no handle for %s by %s: %s",
                        uuid && *uuid ? uuid : pci_bus_id, by, w);
    }
    gpo_nvml_memory m;
    memset(&m, 0, sizeof m);
    r = nv->api.nvmlDeviceGetMemoryInfo(dev, &m);
    if (r != GPO_NVML_SUCCESS) {
        words(nv, r, w, sizeof w);
        return gpo_fail(GPUOPT_ERR_DRIVER, "NVML: nvmlDeviceGetMemoryInfo failed: %s", w);
    }
    if (m.free > m.total || !m.total)
        return gpo_fail(GPUOPT_ERR_DRIVER,
                        "NVML: nvmlDeviceGetMemoryInfo answered %llu bytes free of %llu", m.free,
                        m.total);
    out->total = m.total;
    out->free = m.free;
    out->used = m.used;
    out->source = GPUOPT_MEMORY_SOURCE_MANAGEMENT;
    out->read_ns = gpo_now_ns();
    gpo_snprintf(out->source_text, sizeof out->source_text, "NVML nvmlDeviceGetMemoryInfo (by %s)",
                 by);
    return GPUOPT_OK;
}
