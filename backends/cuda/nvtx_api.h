/* The slice of NVTX v3's tool interface this backend implements (its half
 * of the injection protocol), declared here so the library builds without
 * NVTX's headers, as cuda_api.h does for the driver.
 *
 * NVTX v3 is header-only: a program calls nvtxRangePushA, whose first call
 * reads NVTX_INJECTION64_PATH, dlopens that library (the tool: Nsight
 * Systems sets the variable for the process it launches), and calls its
 * InitializeInjectionNvtx2 with the program's nvtxGetExportTable. The tool
 * asks that table for the "callbacks" export, and through its
 * GetModuleFunctionTable for each module's table: an array of pointers to
 * the program's function-pointer slots, into which the tool writes its
 * implementations. The program then calls the slots. (CUDA 13.0,
 * include/nvtx3/nvtxDetail/nvtxInit.h "Version history ... 2" and the load
 * sequence; nvtxImpl.h, nvtxEtiGetModuleFunctionTable and
 * nvtxGetExportTable.)
 *
 * Values and layouts from CUDA 13.0's include/nvtx3/nvtxDetail/nvtxTypes.h
 * (NvtxCallbackModule, NvtxCallbackIdCore..Sync, NvtxExportTableID, the
 * two export-table structs) and nvToolsExt.h (NVTX_VERSION 3). The ABI is
 * shared by every NVTX copy ever compiled into a program, so it does not
 * change; where the headers are installed at build time,
 * tests/backends/cuda/test_cuda_nvtx_header.c checks every value here
 * against them. */
#ifndef GPO_NVTX_API_H
#define GPO_NVTX_API_H

#include <stddef.h>
#include <stdint.h>

#define GPO_NVTX_VERSION 3 /* NVTX_VERSION */
#define GPO_NVTX_INJECTION_VARIABLE "NVTX_INJECTION64_PATH"
#define GPO_NVTX_INITIALIZE_SYMBOL "InitializeInjectionNvtx2"

/* NvtxExportTableID */
#define GPO_NVTX_ETID_CALLBACKS 1
#define GPO_NVTX_ETID_VERSIONINFO 3

/* NvtxCallbackModule, each with its callback count (the enum's _SIZE: the
 * module's table has SIZE + 1 entries, 0 and SIZE unused). */
#define GPO_NVTX_MODULES(X)                                                                        \
    X(CORE, 1, 16)                                                                                 \
    X(CUDA, 2, 9)                                                                                  \
    X(OPENCL, 3, 15)                                                                               \
    X(CUDART, 4, 7)                                                                                \
    X(CORE2, 5, 16)                                                                                \
    X(SYNC, 6, 7)
#define GPO_NVTX_MODULE_ENUM_(name, id, size)                                                      \
    GPO_NVTX_CB_MODULE_##name = id, GPO_NVTX_CBID_##name##_SIZE = size,
enum { GPO_NVTX_MODULES(GPO_NVTX_MODULE_ENUM_) };

/* NvtxCallbackIdCore: the two calls a section makes. */
#define GPO_NVTX_CBID_CORE_RangePushA 9
#define GPO_NVTX_CBID_CORE_RangePop 11

typedef void (*gpo_nvtx_fn)(void);    /* NvtxFunctionPointer */
typedef gpo_nvtx_fn **gpo_nvtx_table; /* NvtxFunctionTable */
typedef const void *(*gpo_nvtx_get_export_table_fn)(uint32_t export_table_id);
typedef int (*gpo_nvtx_initialize_fn)(gpo_nvtx_get_export_table_fn get_export_table);

/* NvtxExportTableCallbacks */
typedef struct gpo_nvtx_callbacks {
    size_t struct_size;
    int (*GetModuleFunctionTable)(int module, gpo_nvtx_table *out_table, unsigned int *out_size);
} gpo_nvtx_callbacks;

/* NvtxExportTableVersionInfo */
typedef struct gpo_nvtx_version_info {
    size_t struct_size;
    uint32_t version;
    uint32_t reserved0;
    void (*SetInjectionNvtxVersion)(uint32_t version);
} gpo_nvtx_version_info;

/* The slots' real types (nvToolsExt.h: nvtxRangePushA, nvtxRangePop). */
typedef int (*gpo_nvtx_range_push_a_fn)(const char *message);
typedef int (*gpo_nvtx_range_pop_fn)(void);

#endif
