/* Data of the runtime-ops, hiprtc and comgr slices (see hip_rt_api.h): the
 * dlsym tables and the hiprtc result names. */
#include "hip_rt_api.h"

const gpo_dl_sym gpo_hip_rt_syms[] = {
#define GPO_HIP_RT_SYM(field, sym, req, type) {sym, offsetof(gpo_hip_rt_fns, field), req},
    GPO_HIP_RT_SYMBOLS(GPO_HIP_RT_SYM)
#undef GPO_HIP_RT_SYM
};
const size_t gpo_hip_rt_n_syms = sizeof gpo_hip_rt_syms / sizeof gpo_hip_rt_syms[0];

const gpo_dl_sym gpo_hiprtc_syms[] = {
#define GPO_HIPRTC_SYM(field, sym, req, type) {sym, offsetof(gpo_hiprtc_fns, field), req},
    GPO_HIPRTC_SYMBOLS(GPO_HIPRTC_SYM)
#undef GPO_HIPRTC_SYM
};
const size_t gpo_hiprtc_n_syms = sizeof gpo_hiprtc_syms / sizeof gpo_hiprtc_syms[0];

const char *gpo_hiprtc_result_name(gpo_hiprtc_result r)
{
    switch (r) {
#define GPO_HIPRTC_CASE(v, n)                                                                      \
    case v: return #n;
        GPO_HIPRTC_RESULTS(GPO_HIPRTC_CASE)
#undef GPO_HIPRTC_CASE
    default: return NULL;
    }
}
