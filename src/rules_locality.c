/* The core's locality rule, the same on every backend: a device with a NUMA
 * node gets cpu.affinity, the CPUs of that node this process may run on,
 * so the host threads that feed it (data loading, launches, copies through
 * pinned memory) stay next to it. The same advice as NVIDIA's
 * `nvidia-smi topo -m` "CPU Affinity" column and AMD's "numactl
 * --cpunodebind" guidance for MI300X (AMD Instinct MI300X system
 * optimization guide, "NUMA"); the facts are the kernel's (src/locality.c).
 * The thread count and OpenMP places that follow are derived after the
 * user's overrides (cpu.affinity_threads, cpu.affinity_places). */

#include "context.h"
#include "device.h"
#include "rules.h"
#include "rules_core.h"
#include "util/cpuset.h"

gpuopt_status gpo_rules_locality(struct gpuopt_plan *p, int tier)
{
    const gpuopt_device *dev = gpo_plan_device(p);
    if (tier != 1 || dev->numa_node < 0 || !dev->local_cpus[0] || !dev->ctx)
        return GPUOPT_OK;
    unsigned char local[GPO_CPUSET_BYTES], allowed[GPO_CPUSET_BYTES], both[GPO_CPUSET_BYTES];
    char src[64], text[sizeof dev->local_cpus];
    int n_local = gpo_parse_cpulist(dev->local_cpus, local, GPO_CPUSET_BITS);
    int n_allowed = gpo_process_cpus(&dev->ctx->cfg.fs, allowed, src, sizeof src);
    if (n_local < 1)
        return GPUOPT_OK;
    if (n_allowed < 1) {
        gpo_log_debug(gpo_plan_log(p), "cpu.affinity: the process's CPUs are unknown (%s)", src);
        return GPUOPT_OK;
    }
    int n = 0;
    for (size_t i = 0; i < GPO_CPUSET_BYTES; i++) {
        both[i] = local[i] & allowed[i];
        n += __builtin_popcount(both[i]);
    }
    if (n == 0)
        return gpo_plan_warn(p,
                             "cpu.affinity is not set: none of the %d CPUs this process may use "
                             "(%s, inside its cgroup's cpuset) is on NUMA node %d of %s, so its "
                             "host threads cross the socket link to reach it",
                             n_allowed, src, (int)dev->numa_node, dev->info.id);
    if (gpo_cpulist_format(both, GPO_CPUSET_BITS, text, sizeof text) != 0)
        return GPUOPT_OK;
    if (n == n_local)
        return gpo_knob_set_string(p, "cpu.affinity", text,
                                   "%s sits on NUMA node %d, whose CPUs are %s "
                                   "(/sys/bus/pci/devices/%s/local_cpulist); this process may use "
                                   "all %d of them (%s, inside its cgroup's cpuset)",
                                   dev->info.id, (int)dev->numa_node, dev->local_cpus,
                                   dev->info.pci_bus_id, n, src);
    return gpo_knob_set_string(p, "cpu.affinity", text,
                               "%s sits on NUMA node %d, whose CPUs are %s "
                               "(/sys/bus/pci/devices/%s/local_cpulist); this process may use %d "
                               "of its %d CPUs there (%s, inside its cgroup's cpuset)",
                               dev->info.id, (int)dev->numa_node, dev->local_cpus,
                               dev->info.pci_bus_id, n, n_local, src);
}
