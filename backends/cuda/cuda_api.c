/* Tables generated from cuda_api.h: the dlsym list and CUresult names. */
#include "cuda_api.h"

#include <stddef.h>

#include "util/strutil.h"

const gpo_dl_sym gpo_cuda_syms[] = {
#define SYM_ROW_(field, symbol, required, checked, params)                                         \
    {#symbol, offsetof(gpo_cuda_api, field), required},
    GPO_CUDA_API(SYM_ROW_)
#undef SYM_ROW_
};
const size_t gpo_cuda_n_syms = sizeof gpo_cuda_syms / sizeof gpo_cuda_syms[0];

static const struct {
    gpo_cu_result value;
    const char *name;
} result_names[] = {
#define NAME_ROW_(name, value) {value, #name},
    GPO_CUDA_RESULTS(NAME_ROW_)
#undef NAME_ROW_
        {GPO_CUDA_ERROR_INSUFFICIENT_DRIVER, "CUDA_ERROR_INSUFFICIENT_DRIVER"},
};

const char *gpo_cuda_result_name(gpo_cu_result r)
{
    for (size_t i = 0; i < sizeof result_names / sizeof result_names[0]; i++)
        if (result_names[i].value == r)
            return result_names[i].name;
    return NULL;
}

/* Every result cuda.h 13.0 documents as sticky: "This leaves the process in
 * an inconsistent state and any further CUDA work will return the same
 * error. To continue using CUDA, the process must be terminated and
 * relaunched" (CONTAINED, ILLEGAL_ADDRESS, LAUNCH_TIMEOUT, the 714-719
 * faults, TENSOR_MEMORY_LEAK, EXTERNAL_DEVICE; MPS_CLIENT_TERMINATED in
 * the same words), and ASSERT ("The context cannot be used anymore, and
 * must be destroyed"), which in the primary context the host program
 * shares amounts to the same. */
static const gpo_cu_result sticky_results[] = {
    GPO_CUDA_ERROR_CONTAINED,
    GPO_CUDA_ERROR_ILLEGAL_ADDRESS,
    GPO_CUDA_ERROR_LAUNCH_TIMEOUT,
    GPO_CUDA_ERROR_ASSERT,
    GPO_CUDA_ERROR_HARDWARE_STACK_ERROR,
    GPO_CUDA_ERROR_ILLEGAL_INSTRUCTION,
    GPO_CUDA_ERROR_MISALIGNED_ADDRESS,
    GPO_CUDA_ERROR_INVALID_ADDRESS_SPACE,
    GPO_CUDA_ERROR_INVALID_PC,
    GPO_CUDA_ERROR_LAUNCH_FAILED,
    GPO_CUDA_ERROR_TENSOR_MEMORY_LEAK,
    GPO_CUDA_ERROR_MPS_CLIENT_TERMINATED,
    GPO_CUDA_ERROR_EXTERNAL_DEVICE,
};

int gpo_cuda_result_sticky(gpo_cu_result r)
{
    for (size_t i = 0; i < sizeof sticky_results / sizeof sticky_results[0]; i++)
        if (sticky_results[i] == r)
            return 1;
    return 0;
}

void gpo_cuda_result_words(const gpo_cuda_api *api, gpo_cu_result r, char *out, size_t cap)
{
    const char *name = NULL, *text = NULL;
    if (!out || !cap)
        return;
    /* The library's own words first: a newer driver knows results this table
     * does not. A stub or broken library fails these calls too, so a failure
     * here is never an error of its own. */
    if (api && api->cuGetErrorName && api->cuGetErrorName(r, &name) != GPO_CUDA_SUCCESS)
        name = NULL;
    if (api && api->cuGetErrorString && api->cuGetErrorString(r, &text) != GPO_CUDA_SUCCESS)
        text = NULL;
    if (!name)
        name = gpo_cuda_result_name(r);
    if (name && text && *text)
        gpo_snprintf(out, cap, "%s (%s)", name, text);
    else if (name)
        gpo_snprintf(out, cap, "%s", name);
    else
        gpo_snprintf(out, cap, "CUresult %d", r);
}
