/* Versions, status names, the per-thread detail, freeing, struct sizes. */
#include <stdlib.h>

#include <string.h>

#include "gpuopt/tune.h"
#include "util/detail.h"

GPUOPT_API const char *gpuopt_version(void)
{
    return GPUOPT_VERSION_STRING;
}

GPUOPT_API uint32_t gpuopt_api_version(void)
{
    return GPUOPT_API_VERSION;
}

/* Both from GPUOPT_STATUS_MAP, the header's one list of statuses. A value
 * listed twice would be a duplicate case label: the compiler refuses it. */
GPUOPT_API const char *gpuopt_strerror(gpuopt_status status)
{
    switch (status) {
#define X(name, value, text)                                                                       \
    case name: return text;
        GPUOPT_STATUS_MAP(X)
#undef X
    default: break;
    }
    return "unknown status";
}

GPUOPT_API const char *gpuopt_status_name(gpuopt_status status)
{
    switch (status) {
#define X(name, value, text)                                                                       \
    case name: return #name;
        GPUOPT_STATUS_MAP(X)
#undef X
    default: break;
    }
    return "GPUOPT_UNKNOWN_STATUS";
}

GPUOPT_API const char *gpuopt_last_error(void)
{
    return gpo_detail_get();
}

GPUOPT_API void gpuopt_free(void *ptr)
{
    free(ptr);
}

/* The struct-size queries, one per public struct that carries a
 * struct_size, for bindings that cannot take sizeof. */
#define SIZE_QUERY(type)                                                                           \
    GPUOPT_API size_t type##_size(void)                                                            \
    {                                                                                              \
        return sizeof(type);                                                                       \
    }
SIZE_QUERY(gpuopt_options)
SIZE_QUERY(gpuopt_backend_info)
SIZE_QUERY(gpuopt_device_info)
SIZE_QUERY(gpuopt_knob)
SIZE_QUERY(gpuopt_workload)
SIZE_QUERY(gpuopt_memory_info)
SIZE_QUERY(gpuopt_memory_stats)
SIZE_QUERY(gpuopt_memory_advice)
SIZE_QUERY(gpuopt_profiler_options)
SIZE_QUERY(gpuopt_kernel_desc)
SIZE_QUERY(gpuopt_buffer_desc)
SIZE_QUERY(gpuopt_scalar_desc)
SIZE_QUERY(gpuopt_reference_desc)
SIZE_QUERY(gpuopt_callback_desc)
SIZE_QUERY(gpuopt_tuner_settings)
SIZE_QUERY(gpuopt_candidate)
#undef SIZE_QUERY

GPUOPT_API void gpuopt_workload_init(gpuopt_workload *workload)
{
    if (!workload)
        return;
    gpuopt_workload w;
    memset(&w, 0, sizeof w);
    w.struct_size = sizeof w;
    w.reduced_precision = GPUOPT_TRISTATE_UNKNOWN;
    w.objective = GPUOPT_OBJECTIVE_THROUGHPUT;
    w.bound = GPUOPT_BOUND_UNKNOWN;
    *workload = w;
}
