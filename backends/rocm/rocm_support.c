/* The ROCm support matrix: the release is the HIP runtime's
 * (hipRuntimeGetVersion, major * 10000000 + minor * 100000 + patch, as the
 * HIP headers' HIP_VERSION), the supported targets per release the
 * architecture table's (src/arch/amd.c, with its sources). Without a HIP
 * runtime (GPUs seen only in the KFD topology) the release is unknown and
 * nothing is said. */
#include "rocm_support.h"

#include "arch/amd.h"
#include "rocm_state.h"
#include "util/strutil.h"

int gpo_rocm_toolchain_dropped(void *state, const gpo_route *route, const gpuopt_device *dev,
                               char *why, size_t cap)
{
    const gpo_rocm_state *st = state;
    gpo_arch_amd_info a;
    char dropped[448];
    (void)dev;
    why[0] = '\0';
    if (!st || st->hip.runtime_version <= 0 || gpo_arch_amd_lookup(route->info.arch_name, &a) != 0)
        return 0;
    int major = st->hip.runtime_version / 10000000;
    int minor = (st->hip.runtime_version / 100000) % 100;
    if (!gpo_arch_amd_rocm_dropped(&a, major, minor, dropped, sizeof dropped))
        return 0;
    gpo_snprintf(why, cap, "HIP runtime %s (%s): %s", st->runtime_version, st->hip.library,
                 dropped);
    return 1;
}
