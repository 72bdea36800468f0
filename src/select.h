/* Device selection: the order a search ("auto", "gpu", a backend name)
 * ranks devices in, with or without a workload, resolving a selector
 * (src/policy.h) against a context while probing backends lazily, and the
 * words that say why the chosen device won and which present-but-broken
 * backend it was chosen over. */
#ifndef GPO_SELECT_H
#define GPO_SELECT_H

#include <stddef.h>

#include "config.h"
#include "device.h"
#include "policy.h"

struct gpuopt_context;

/* Why a selection chose its device, for the plan, the device list and the
 * log (docs/selection.md). */
typedef struct gpo_selection {
    char policy[GPO_POLICY_MAX];
    char reason[1024];
    /* Backends the search passed over although they are present: an
     * "error" status, or devices the kernel lists that their backend
     * cannot use. One line each, with the backend's reason and the
     * `gpuopt doctor` hint. */
    int n_warnings;
    char warnings[GPO_MAX_BACKENDS][768];
} gpo_selection;

/* With the context's lock held: resolves a selector (NULL: the configured
 * one) for `workload` (NULL: none, today's rule), probing only as far as
 * the answer needs: every native GPU backend, then the others only when
 * none of those offers a discrete GPU the workload fits on. The answer is
 * the same whatever was probed before. `why` (may be NULL) receives the
 * reason and the passed-over backends; those are also logged once per
 * context at warning level. */
gpuopt_status gpo_ctx_select_for(struct gpuopt_context *ctx, const char *policy,
                                 const gpuopt_workload *workload, gpuopt_device **out,
                                 gpo_selection *why);

/* gpo_ctx_select_for without a workload or reasons. */
gpuopt_status gpo_ctx_select(struct gpuopt_context *ctx, const char *policy, gpuopt_device **out);

/* With the lock held: why `dev` is the device to use, when a caller chose
 * it: the configured selector's answer for `workload` when that is `dev`
 * (with its warnings), else a reason that says the caller chose it and what
 * the selector would have chosen. Never fails: what it cannot tell it says. */
void gpo_ctx_explain(struct gpuopt_context *ctx, const gpuopt_device *dev,
                     const gpuopt_workload *workload, gpo_selection *why);

#endif
