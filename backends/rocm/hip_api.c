/* Data of the HIP API slice (see hip_api.h): the dlsym table, the attribute
 * ids and props layout per HIP major, error names. */
#include "hip_api.h"

#include <stdio.h>

const gpo_dl_sym gpo_hip_syms[] = {
#define GPO_HIP_SYM(field, sym, req, type) {sym, offsetof(gpo_hip_fns, field), req},
    GPO_HIP_SYMBOLS(GPO_HIP_SYM)
#undef GPO_HIP_SYM
};
const size_t gpo_hip_n_syms = sizeof gpo_hip_syms / sizeof gpo_hip_syms[0];

/* The header names do not change between majors. */
static const char *const attr_names[GPO_HIP_ATTR_COUNT] = {
#define GPO_HIP_NAME(id, name, v5, v6, v7) #name,
    GPO_HIP_ATTRS(GPO_HIP_NAME)
#undef GPO_HIP_NAME
};

/* One column of GPO_HIP_ATTRS per major. */
#define GPO_HIP_V5(id, name, v5, v6, v7) v5,
#define GPO_HIP_V6(id, name, v5, v6, v7) v6,
#define GPO_HIP_V7(id, name, v5, v6, v7) v7,

static const gpo_hip_abi abis[] = {
    {5,
     "ROCm 5.x include/hip/hip_runtime_api.h (Debian libamdhip64-dev 5.2.3; ROCm/HIP rocm-5.0.0, "
     "rocm-5.7.1)",
     {GPO_HIP_ATTRS(GPO_HIP_V5)},
     attr_names,
     /* ROCm 5 exports only the unversioned symbol, filling the 792-byte
      * layout. */
     "hipGetDeviceProperties",
     792,
     396},
    {6,
     "ROCm 6.x include/hip/hip_runtime_api.h (ROCm/HIP rocm-6.0.0, rocm-6.2.0)",
     {GPO_HIP_ATTRS(GPO_HIP_V6)},
     attr_names,
     "hipGetDevicePropertiesR0600",
     1472,
     1160},
    {7,
     "ROCm 7.x projects/hip/include/hip/hip_runtime_api.h (ROCm/rocm-systems develop)",
     {GPO_HIP_ATTRS(GPO_HIP_V7)},
     attr_names,
     "hipGetDevicePropertiesR0600",
     1472,
     1160},
};

#define N_ABIS (sizeof abis / sizeof abis[0])

const gpo_hip_abi *gpo_hip_abi_for(int major, int *extrapolated)
{
    if (extrapolated)
        *extrapolated = 0;
    if (major < abis[0].major)
        return NULL;
    for (size_t i = 0; i < N_ABIS; i++)
        if (abis[i].major == major)
            return &abis[i];
    if (extrapolated)
        *extrapolated = 1;
    return &abis[N_ABIS - 1];
}

int gpo_hip_version_text(int version, char *out, size_t cap)
{
    if (!out || cap == 0)
        return -1;
    out[0] = '\0';
    if (version < 0)
        return -1;
    snprintf(out, cap, "%d.%d.%d", version / 10000000, (version / 100000) % 100, version % 100000);
    return 0;
}

const char *gpo_hip_error_name(gpo_hip_error code)
{
    switch (code) {
#define GPO_HIP_ERR_CASE(v, n)                                                                     \
    case v: return #n;
        GPO_HIP_ERRORS(GPO_HIP_ERR_CASE)
#undef GPO_HIP_ERR_CASE
    default: return NULL;
    }
}

/* The faults HIP shares with CUDA by value (hip_runtime_api.h gives them
 * CUDA's numbers, and HIP's NVIDIA path maps CUDA's sticky
 * cudaErrorIllegalAddress, LaunchTimeout, Assert and LaunchFailure onto
 * them: hipCUDAErrorTohipError in nvidia_detail/nvidia_hip_runtime_api.h).
 * cuda.h says of each that the process "must be terminated and
 * relaunched"; on AMD a memory fault is worse still (ROCr's default
 * system-event handler ends the process), so whoever meets one is done
 * with the device for this process either way. */
static const gpo_hip_error sticky_errors[] = {
    GPO_hipErrorIllegalAddress,
    GPO_hipErrorLaunchTimeOut,
    GPO_hipErrorAssert,
    GPO_hipErrorLaunchFailure,
};

int gpo_hip_error_sticky(gpo_hip_error code)
{
    for (size_t i = 0; i < sizeof sticky_errors / sizeof sticky_errors[0]; i++)
        if (sticky_errors[i] == code)
            return 1;
    return 0;
}
