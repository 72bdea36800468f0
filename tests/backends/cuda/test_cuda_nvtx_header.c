/* Checks backends/cuda/nvtx_api.h against NVTX v3's own headers (the CUDA
 * toolkit's include/nvtx3, where installed at build time): every value,
 * module size and struct layout of the injection protocol the backend
 * implements. All at compile time; the run only says so. */
/* NVTX's loader converts dlsym's answer to a function pointer, which ISO
 * C does not define: its header, not this file, is what -Wpedantic
 * flags. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cuda/nvtx_api.h"

_Static_assert(GPO_NVTX_VERSION == NVTX_VERSION, "NVTX_VERSION");
_Static_assert(GPO_NVTX_ETID_CALLBACKS == (int)NVTX_ETID_CALLBACKS, "NVTX_ETID_CALLBACKS");
_Static_assert(GPO_NVTX_ETID_VERSIONINFO == (int)NVTX_ETID_VERSIONINFO, "NVTX_ETID_VERSIONINFO");
#define MODULE_CHECK_(name, id, size)                                                              \
    _Static_assert((int)GPO_NVTX_CB_MODULE_##name == (int)NVTX_CB_MODULE_##name &&                 \
                       (id) == (int)NVTX_CB_MODULE_##name,                                         \
                   "NVTX_CB_MODULE_" #name);                                                       \
    _Static_assert((int)GPO_NVTX_CBID_##name##_SIZE == (int)NVTX_CBID_##name##_SIZE,               \
                   "NVTX_CBID_" #name "_SIZE");
GPO_NVTX_MODULES(MODULE_CHECK_)
_Static_assert(GPO_NVTX_CBID_CORE_RangePushA == (int)NVTX_CBID_CORE_RangePushA, "RangePushA");
_Static_assert(GPO_NVTX_CBID_CORE_RangePop == (int)NVTX_CBID_CORE_RangePop, "RangePop");

_Static_assert(sizeof(gpo_nvtx_callbacks) == sizeof(NvtxExportTableCallbacks), "callbacks size");
_Static_assert(offsetof(gpo_nvtx_callbacks, GetModuleFunctionTable) ==
                   offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable),
               "callbacks layout");
_Static_assert(sizeof(gpo_nvtx_version_info) == sizeof(NvtxExportTableVersionInfo), "version size");
_Static_assert(offsetof(gpo_nvtx_version_info, version) ==
                       offsetof(NvtxExportTableVersionInfo, version) &&
                   offsetof(gpo_nvtx_version_info, SetInjectionNvtxVersion) ==
                       offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion),
               "version layout");
_Static_assert(sizeof(gpo_nvtx_table) == sizeof(NvtxFunctionTable), "NvtxFunctionTable");

/* The function types, as the header's. */
static gpo_nvtx_range_push_a_fn push = nvtxRangePushA;
static gpo_nvtx_range_pop_fn pop = nvtxRangePop;

static void the_nvtx_slice_matches_the_nvtx3_headers(void **state)
{
    (void)state;
    assert_non_null(push);
    assert_non_null(pop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(the_nvtx_slice_matches_the_nvtx3_headers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
