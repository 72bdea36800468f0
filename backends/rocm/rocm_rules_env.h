/* The ROCm knobs that export environment variables (rocm_rules_env.c),
 * called by tiers 0 and 1: HIP_VISIBLE_DEVICES for the selected device,
 * MIOpen's benchmark flag and find mode, and the HSA_OVERRIDE_GFX_VERSION
 * advice. */
#ifndef GPO_ROCM_RULES_ENV_H
#define GPO_ROCM_RULES_ENV_H

#include "backend.h"
#include "rocm_state.h"

gpuopt_status gpo_rocm_set_visible(const gpo_rocm_state *st, const gpo_route *route,
                                   const gpuopt_device *dev, struct gpuopt_plan *plan);
gpuopt_status gpo_rocm_set_miopen(struct gpuopt_plan *plan);
gpuopt_status gpo_rocm_set_override_advice(const gpuopt_device *dev, struct gpuopt_plan *plan);

/* The HSA_OVERRIDE_GFX_VERSION value for an unlisted consumer target whose
 * ISA matches a listed one ("10.3.0" for gfx1031), with the listed target
 * and the caveat; NULL when the target does not qualify. */
typedef struct gpo_rocm_override {
    const char *gfx;    /* "gfx1031" */
    const char *as;     /* "gfx1030", listed in the support matrix */
    const char *value;  /* "10.3.0" */
    const char *family; /* the LLVM generic target both belong to */
    const char *caveat; /* what differs, in words */
} gpo_rocm_override;
const gpo_rocm_override *gpo_rocm_override_for(const char *gfx);

#endif
