/* The text parsers of /proc, /sys and the KFD topology, each on any bytes.
 * The first byte picks the parser (its value modulo the count below); the
 * rest is the file's text. Seeds are recorded files from tests/fixtures
 * with that byte in front (make_seeds.py). The NVIDIA "information" file is
 * read from a small tree, as the CUDA backend reads it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cpu/affinity.h"
#include "cpu/cgroup.h"
#include "cpu/cpu_facts.h"
#include "cpu/cpu_procfs.h"
#include "cpu/cpuinfo_arm.h"
#include "cpu/memory.h"
#include "cpu/topology.h"
#include "cpu/x86_isa.h"
#include "cuda/cuda_procfs.h"
#include "fuzz_util.h"
#include "rocm/rocm_ids.h"
#include "rocm/rocm_kfd.h"
#include "util/fs.h"

enum {
    P_CPUINFO,
    P_ARM_CPUINFO,
    P_CPU_MAX,
    P_MEMORY_LIMIT,
    P_CGROUP_SELF,
    P_MOUNTINFO,
    P_STATUS,
    P_MEMINFO,
    P_CPULIST,
    P_CACHE_SIZE,
    P_KFD_PROPERTIES,
    P_AMDGPU_IDS,
    P_NVIDIA_VERSION,
    P_NVIDIA_INFORMATION,
    P_COUNT
};

static gpo_cpu_facts facts; /* large: keep off the stack */

static void nvidia_information(const char *text, size_t len)
{
    char root[512], dir[600];
    snprintf(root, sizeof root, "%s/nv", fz_scratch());
    snprintf(dir, sizeof dir, "%s/proc/driver/nvidia/gpus/0000:3b:00.0", root);
    static int made;
    if (!made) {
        const char *parts[] = {"/proc", "/proc/driver", "/proc/driver/nvidia",
                               "/proc/driver/nvidia/gpus", "/proc/driver/nvidia/gpus/0000:3b:00.0"};
        mkdir(root, 0755);
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            char p[600];
            snprintf(p, sizeof p, "%s%s", root, parts[i]);
            mkdir(p, 0755);
        }
        made = 1;
    }
    fz_write(1, "nv/proc/driver/nvidia/gpus/0000:3b:00.0/information", text, len);
    gpo_fs fs;
    gpo_fs_init(&fs, root);
    gpo_cuda_gpu_info gi;
    gpo_cuda_procfs_gpu(&fs, "0000:3b:00.0", &gi);
    gpo_cuda_procfs_uuid_known(gi.uuid);
    char **bus = NULL;
    size_t n = 0;
    if (gpo_cuda_procfs_gpus(&fs, &bus, &n) == GPUOPT_OK)
        gpo_fs_list_free(bus, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1 << 20)
        return 0;
    int which = data[0] % P_COUNT;
    char *text = fz_text(data + 1, size - 1);
    char a[4096], b[4096];
    int64_t q, p;
    uint64_t u, v;
    int version;
    switch (which) {
    case P_CPUINFO: {
        const char *cur = text;
        while (gpo_cpuinfo_next(&cur, a, sizeof a, b, sizeof b))
            ;
        if (gpo_cpuinfo_field(text, "flags", b, sizeof b) == 0)
            gpo_isa_from_names(b, gpo_x86_isa_names, gpo_n_x86_isa_names);
        break;
    }
    case P_ARM_CPUINFO:
        memset(&facts, 0, sizeof facts);
        gpo_cpu_facts_init(&facts);
        if (gpo_arm_parse_cpuinfo(text, &facts) == 0)
            gpo_arm_name_core(&facts);
        gpo_arm_features_from_names(text);
        break;
    case P_CPU_MAX: gpo_cgroup_parse_cpu_max(text, &q, &p); break;
    case P_MEMORY_LIMIT: gpo_cgroup_parse_memory_limit(text, &u); break;
    case P_CGROUP_SELF:
        gpo_cgroup_parse_self(text, "cpu", a, sizeof a, &version);
        gpo_cgroup_parse_self(text, "memory", a, sizeof a, &version);
        break;
    case P_MOUNTINFO:
        gpo_cgroup_parse_mountinfo(text, "cpu", 1, a, sizeof a, b, sizeof b);
        gpo_cgroup_parse_mountinfo(text, "memory", 2, a, sizeof a, b, sizeof b);
        break;
    case P_STATUS:
        memset(&facts, 0, sizeof facts);
        gpo_cpu_facts_init(&facts);
        gpo_cpu_parse_status_affinity(text, &facts);
        break;
    case P_MEMINFO: gpo_cpu_parse_meminfo(text, &u, &v); break;
    case P_CPULIST: {
        unsigned char bits[1024];
        gpo_parse_cpulist(text, bits, sizeof bits * 8);
        gpo_parse_cpulist(text, bits, 13);
        break;
    }
    case P_CACHE_SIZE: gpo_cpu_parse_cache_size(text, &u); break;
    case P_KFD_PROPERTIES: {
        gpo_kfd_gpu gpu;
        memset(&gpu, 0, sizeof gpu);
        if (gpo_kfd_parse_properties(text, &gpu) == 0)
            gpo_kfd_pci_text(gpu.domain, gpu.location_id, a, sizeof a);
        break;
    }
    case P_AMDGPU_IDS:
        gpo_amdgpu_ids_lookup(text, 0x744c, 0xc8, a, sizeof a);
        gpo_amdgpu_ids_lookup(text, 0x74a1, -1, a, sizeof a);
        break;
    case P_NVIDIA_VERSION: gpo_cuda_procfs_parse_version(text, a, sizeof a); break;
    case P_NVIDIA_INFORMATION: nvidia_information(text, size - 1); break;
    }
    free(text);
    return 0;
}
