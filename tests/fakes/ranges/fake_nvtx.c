/* A test double of an NVTX tool: what Nsight Systems' injection library is
 * to a program. The program (here, libgpuopt's cuda_nvtx.c) finds it
 * through NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2 with its
 * export-table getter; this tool then asks for the callbacks and version
 * tables, asks for every module's function table (as a real tool may) and
 * writes its range calls into the CORE table's nvtxRangePushA and
 * nvtxRangePop slots. It uses only the ABI of nvtx_api.h, which follows
 * NVTX v3's nvtxTypes.h.
 *
 * Controls (environment, read at initialisation):
 *   GPUOPT_FAKE_NVTX_DECLINE=1   InitializeInjectionNvtx2 returns 0 (the
 *                                tool declines to attach)
 *   GPUOPT_FAKE_NVTX_NO_RANGES=1 attach, but fill no range slot
 *   GPUOPT_FAKE_RANGES_LOG=1     record each call (range_log.h)
 * and, for tests that dlopen it too, gpo_fake_nvtx_* below. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/nvtx_api.h"
#include "range_log.h"

#define EXPORT __attribute__((visibility("default")))

static int inits;
static uint32_t client_version;
static unsigned module_sizes[8];

static int push_a(const char *name)
{
    return range_log_push(name);
}

static int pop(void)
{
    return range_log_pop();
}

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

EXPORT int InitializeInjectionNvtx2(gpo_nvtx_get_export_table_fn get_export_table)
{
    inits++;
    if (env_on("GPUOPT_FAKE_NVTX_DECLINE"))
        return 0;
    const gpo_nvtx_version_info *vi = get_export_table(GPO_NVTX_ETID_VERSIONINFO);
    if (vi && vi->struct_size >= sizeof *vi) {
        client_version = vi->version;
        if (vi->SetInjectionNvtxVersion)
            vi->SetInjectionNvtxVersion(GPO_NVTX_VERSION);
    }
    const gpo_nvtx_callbacks *cb = get_export_table(GPO_NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable)
        return 0;
    if (get_export_table(2) != NULL) /* NVTX_ETID_RESERVED0: the program has none */
        return 0;
    for (int m = 1; m <= 6; m++) {
        gpo_nvtx_table table = NULL;
        unsigned size = 0;
        if (!cb->GetModuleFunctionTable(m, &table, &size) || !table)
            return 0;
        module_sizes[m] = size;
        if (m != GPO_NVTX_CB_MODULE_CORE || env_on("GPUOPT_FAKE_NVTX_NO_RANGES"))
            continue;
        if (size <= GPO_NVTX_CBID_CORE_RangePop)
            return 0;
        gpo_nvtx_range_push_a_fn p = push_a;
        gpo_nvtx_range_pop_fn q = pop;
        memcpy(table[GPO_NVTX_CBID_CORE_RangePushA], &p, sizeof p);
        memcpy(table[GPO_NVTX_CBID_CORE_RangePop], &q, sizeof q);
    }
    return 1;
}

/* ---- for tests and the benchmark ---- */

EXPORT int gpo_fake_nvtx_inits(void)
{
    return inits;
}
EXPORT uint32_t gpo_fake_nvtx_client_version(void)
{
    return client_version;
}
EXPORT unsigned gpo_fake_nvtx_module_size(int module)
{
    return module > 0 && module < 8 ? module_sizes[module] : 0;
}
EXPORT size_t gpo_fake_nvtx_log(char *out, size_t cap)
{
    return range_log_read(out, cap);
}
EXPORT void gpo_fake_nvtx_reset(void)
{
    range_log_reset();
}
/* The tool's own range calls, as a program calls them once NVTX has
 * attached (through a function pointer): the benchmark's reference. */
EXPORT int gpo_fake_nvtx_push(const char *name)
{
    return push_a(name);
}
EXPORT int gpo_fake_nvtx_pop(void)
{
    return pop();
}
