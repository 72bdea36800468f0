/* The CUDA support matrix (gpo_backend_cuda.toolchain_dropped): whether the
 * NVRTC this backend compiles with still targets a GPU. Two facts decide:
 * the architectures NVRTC itself lists (nvrtcGetSupportedArchs, NVRTC 11.2
 * and later), and the architecture table's last toolkit per compute
 * capability (src/arch/nvidia.c, with its sources), which also names the
 * release to install instead. NVRTC (a library of 100 MB and more) is
 * opened only for a capability the table says some toolkit dropped, or
 * when it is open already: a GPU every current toolkit targets costs
 * nothing here. */
#include "cuda_backend.h"
#include "cuda_load.h"

#include "arch/nvidia.h"
#include "util/strutil.h"

int gpo_cuda_toolchain_dropped(void *state, const gpo_route *route, const gpuopt_device *dev,
                               char *why, size_t cap)
{
    gpo_cuda_state *s = state;
    const gpuopt_device_info *i = &route->info;
    gpo_arch_nvidia_info a;
    (void)dev;
    why[0] = '\0';
    if (!s || gpo_arch_nvidia_lookup(i->cc_major, i->cc_minor, &a) != 0)
        return 0;
    if (!a.last_toolkit && !s->nvrtc)
        return 0;
    const gpo_nvrtc *nv = NULL;
    if (gpo_cuda_nvrtc(s, &nv) != GPUOPT_OK) {
        /* No NVRTC: nothing compiles, which tier 2 says in its own words. */
        gpo_detail_clear();
        return 0;
    }
    int cc = i->cc_major * 10 + i->cc_minor;
    int oldest = nv->n_archs > 0 ? nv->archs[0] : 0;
    char last[256];
    int by_table =
        gpo_arch_nvidia_toolkit_dropped(&a, nv->major * 1000 + nv->minor * 10, last, sizeof last);
    if (!by_table && !(oldest && cc < oldest))
        return 0;
    char version[32];
    gpo_nvrtc_version_text(nv, version, sizeof version);
    if (oldest && cc < oldest && by_table)
        gpo_snprintf(why, cap, "%s (%s) targets compute capability %d.%d and later: %s", version,
                     nv->library, oldest / 10, oldest % 10, last);
    else if (oldest && cc < oldest)
        gpo_snprintf(why, cap, "%s (%s) targets compute capability %d.%d and later, not %d.%d",
                     version, nv->library, oldest / 10, oldest % 10, i->cc_major, i->cc_minor);
    else
        gpo_snprintf(why, cap, "%s (%s): %s", version, nv->library, last);
    return 1;
}
