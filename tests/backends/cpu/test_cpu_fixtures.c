/* CPU facts read from recorded and built trees (tests/fixtures/cpu, see its
 * README), and from small trees written here with malformed or missing
 * files: every fallback gives a fact or "unknown" plus a note, never a
 * crash or a failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cpu/cpu_tree.h"
#include "cpu/cpu_facts.h"
#include "cpu/cpu_peak.h"
#include "cpu/cpuinfo_arm.h"
#include "cpu/x86_isa.h"

static gpo_cpu_facts facts; /* large: keep off the stack */

static void read_tree(const char *root)
{
    gpo_fs fs;
    gpo_fs_init(&fs, root);
    gpo_logger quiet = {GPUOPT_LOG_OFF, NULL, NULL};
    assert_int_equal(gpo_cpu_facts_read(&fs, &quiet, &facts), GPUOPT_OK);
}

static void read_fixture(const char *name)
{
    char root[1024];
    snprintf(root, sizeof root, "%s/cpu/%s", GPO_FIXTURES_DIR, name);
    read_tree(root);
}

static int has_x86(gpo_x86_feature f)
{
    return (facts.isa & GPO_BIT(f)) != 0;
}

static void two_socket_server_reads_sockets_nodes_cores_and_caches(void **state)
{
    (void)state;
    read_fixture("xeon-gold-6248-2s");
    assert_int_equal(facts.arch, GPO_CPU_ARCH_X86_64);
    assert_string_equal(facts.vendor, "Intel");
    assert_string_equal(facts.model_name, "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz");
    assert_int_equal(facts.logical_cpus, 80);
    assert_int_equal(facts.physical_cores, 40);
    assert_int_equal(facts.sockets, 2);
    assert_int_equal(facts.numa_nodes, 2);
    assert_int_equal(facts.affinity_cpus, 80);
    assert_int_equal(facts.affinity_cores, 40);
    assert_int_equal(facts.affinity_nodes, 2);
    assert_int_equal(facts.usable_cpus, 80);
    assert_int_equal(facts.l1d.size_bytes, 32 * 1024);
    assert_int_equal(facts.l2.size_bytes, 1024 * 1024);
    assert_int_equal(facts.l2.shared_cpus, 2);
    assert_int_equal(facts.l2.instances, 40);
    assert_int_equal(facts.l3.size_bytes, 28160 * 1024);
    assert_int_equal(facts.l3.instances, 2);
    assert_int_equal(facts.clock_mhz, 3900);
    assert_non_null(strstr(facts.src_clock, "cpuinfo_max_freq"));
    assert_int_equal(facts.memory_bytes, UINT64_C(394850204) * 1024);
    assert_int_equal(facts.cg_mem_limit, 0);
    assert_int_equal(facts.quota_us, -1);
    assert_int_equal(facts.cgroup_version, 2);
    assert_string_equal(facts.notes, "");
}

static void cascade_lake_is_named_by_vnni_beyond_its_model_row(void **state)
{
    (void)state;
    read_fixture("xeon-gold-6248-2s");
    assert_int_equal(facts.family, 6);
    assert_int_equal(facts.model, 85);
    assert_string_equal(facts.microarch, "cascadelake");
    assert_string_equal(facts.isa_level, "x86-64-v4");
    assert_int_equal(facts.x86_level, 4);
    assert_non_null(strstr(facts.src_microarch, "skylake-avx512"));
    assert_true(has_x86(GPO_X86_AVX512VNNI));
    assert_false(has_x86(GPO_X86_AVX512BF16));
    assert_false(has_x86(GPO_X86_AMX_TILE));
    assert_int_equal(gpo_cpu_simd_lanes(&facts), 16);
    /* 40 cores x 3.9 GHz x 64 FLOP/cycle: a Gold 6000 has two FMA units */
    assert_true(gpo_cpu_est_gflops(&facts) > 9983.0 && gpo_cpu_est_gflops(&facts) < 9985.0);
}

static void quota_on_ancestor_cgroup_limits_threads(void **state)
{
    (void)state;
    read_fixture("epyc-7763-k8s-pod");
    assert_int_equal(facts.cgroup_version, 2);
    assert_int_equal(facts.quota_us, 150000);
    assert_int_equal(facts.period_us, 100000);
    assert_true(facts.quota_cpus > 1.49 && facts.quota_cpus < 1.51);
    /* The pod slice holds the quota; the container's own cpu.max says max. */
    assert_non_null(strstr(facts.quota_path, "kubepods-burstable-pod"));
    assert_null(strstr(facts.quota_path, "cri-containerd"));
    assert_int_equal(facts.affinity_cpus, 8);
    assert_int_equal(facts.usable_cpus, 2);
    assert_non_null(strstr(facts.src_quota, "150000/100000"));
}

static void memory_max_on_ancestor_caps_memory(void **state)
{
    (void)state;
    read_fixture("epyc-7763-k8s-pod");
    assert_int_equal(facts.mem_total, UINT64_C(32883520) * 1024);
    assert_int_equal(facts.cg_mem_limit, UINT64_C(2147483648));
    assert_non_null(strstr(facts.mem_limit_path, "kubepods-burstable-pod"));
    assert_int_equal(facts.memory_bytes, UINT64_C(2147483648));
    /* Free is the limit minus the pod's usage, not the host's MemAvailable. */
    assert_int_equal(facts.memory_free_bytes, UINT64_C(2147483648) - UINT64_C(1288490188));
    assert_non_null(strstr(facts.src_memory, "2 GiB"));
}

static void milan_guest_is_znver3_at_level_v3(void **state)
{
    (void)state;
    read_fixture("epyc-7763-k8s-pod");
    assert_string_equal(facts.vendor, "AMD");
    assert_int_equal(facts.family, 25);
    assert_string_equal(facts.microarch, "znver3");
    assert_string_equal(facts.isa_level, "x86-64-v3");
    assert_true(has_x86(GPO_X86_HYPERVISOR));
    assert_int_equal(facts.physical_cores, 4);
    assert_int_equal(facts.l2.size_bytes, 512 * 1024);
    assert_int_equal(facts.clock_mhz, 2450);
    assert_non_null(strstr(facts.src_clock, "cpu MHz"));
    assert_int_equal(gpo_cpu_simd_lanes(&facts), 8);
}

static void recorded_cgroup_v1_host_reads_memory_controller_path(void **state)
{
    (void)state;
    read_fixture("kvm-sapphirerapids-cgroup1");
    assert_int_equal(facts.cgroup_version, 1);
    assert_int_equal(facts.quota_us, -1);
    assert_int_equal(facts.cg_mem_limit, 0); /* 9223372036854771712: unlimited */
    assert_int_equal(facts.logical_cpus, 2);
    assert_int_equal(facts.usable_cpus, 2);
    assert_int_equal(facts.numa_nodes, 1);
    assert_int_equal(facts.l2.size_bytes, 2048 * 1024);
    assert_int_equal(facts.memory_bytes, facts.mem_total);
}

static void virtual_cpu_model_is_named_by_its_features(void **state)
{
    (void)state;
    read_fixture("kvm-sapphirerapids-cgroup1");
    assert_int_equal(facts.model, 0xa7);
    assert_string_equal(facts.microarch, "sapphirerapids");
    assert_non_null(strstr(facts.src_microarch, "rocketlake"));
    assert_non_null(strstr(facts.src_microarch, "amx_tile"));
    assert_true(has_x86(GPO_X86_AMX_TILE));
    assert_true(has_x86(GPO_X86_AVX512FP16));
    assert_true(has_x86(GPO_X86_F16C));
}

static void arm64_server_reads_core_sve_and_features(void **state)
{
    (void)state;
    read_fixture("graviton3-c7g");
    assert_int_equal(facts.arch, GPO_CPU_ARCH_ARM64);
    assert_string_equal(facts.vendor, "Arm");
    assert_int_equal(facts.implementer, 0x41);
    assert_int_equal(facts.part, 0xd40);
    assert_string_equal(facts.microarch, "neoverse-v1");
    assert_string_equal(facts.isa_level, "armv8.4-a");
    assert_int_equal(facts.sve_bits, 256);
    assert_int_equal(gpo_cpu_simd_lanes(&facts), 8);
    assert_true(facts.isa & GPO_BIT(GPO_ARM_BF16));
    assert_true(facts.isa & GPO_BIT(GPO_ARM_I8MM));
    assert_true(facts.isa & GPO_BIT(GPO_ARM_ASIMDHP));
    assert_false(facts.isa & GPO_BIT(GPO_ARM_SME));
    assert_int_equal(facts.physical_cores, 8);
    assert_int_equal(facts.l1d.size_bytes, 64 * 1024);
    assert_int_equal(facts.clock_mhz, -1);
    assert_true(gpo_cpu_est_gflops(&facts) == 0.0); /* no clock, no estimate */
}

/* ---- written trees -------------------------------------------------------- */

#define CG2 "35 24 0:30 / /sys/fs/cgroup rw,relatime shared:9 - cgroup2 cgroup2 rw\n"

static void garbage_cpu_max_is_skipped_with_a_note(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    tree_write(&t, "/proc/self/cgroup", "0::/a/b\n");
    tree_write(&t, "/proc/self/mountinfo", CG2);
    tree_write(&t, "/proc/self/status", "Cpus_allowed_list:\t0-7\n");
    tree_write(&t, "/sys/devices/system/cpu/online", "0-7\n");
    tree_write(&t, "/sys/fs/cgroup/a/b/cpu.max", "garbage\n");
    tree_write(&t, "/sys/fs/cgroup/a/cpu.max", "250000 100000\n");
    tree_write(&t, "/sys/fs/cgroup/a/b/memory.max", "lots\n");
    tree_write(&t, "/sys/fs/cgroup/a/memory.max", "1073741824\n");
    tree_write(&t, "/sys/fs/cgroup/a/memory.current", "not a number\n");
    read_tree(t.root);
    assert_int_equal(facts.quota_us, 250000);
    assert_int_equal(facts.usable_cpus, 3);
    assert_non_null(strstr(facts.notes, "cpu.max holds 'garbage'"));
    assert_non_null(strstr(facts.notes, "memory.max holds 'lots'"));
    assert_int_equal(facts.cg_mem_limit, UINT64_C(1073741824));
    assert_int_equal(facts.cg_mem_usage, 0); /* unreadable usage: the whole limit is free */
    tree_free(&t);
}

static void cgroup_v1_quota_and_limit_on_ancestor_bind(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    tree_write(&t, "/proc/self/cgroup", "5:memory:/a/b\n3:cpu,cpuacct:/a/b\n0::/\n");
    tree_write(&t, "/proc/self/mountinfo",
               "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
               "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
    tree_write(&t, "/proc/self/status", "Cpus_allowed_list:\t0-7\n");
    tree_write(&t, "/sys/devices/system/cpu/online", "0-7\n");
    tree_write(&t, "/sys/fs/cgroup/cpu,cpuacct/a/b/cpu.cfs_quota_us", "-1\n");
    tree_write(&t, "/sys/fs/cgroup/cpu,cpuacct/a/b/cpu.cfs_period_us", "100000\n");
    tree_write(&t, "/sys/fs/cgroup/cpu,cpuacct/a/cpu.cfs_quota_us", "50000\n");
    tree_write(&t, "/sys/fs/cgroup/cpu,cpuacct/a/cpu.cfs_period_us", "100000\n");
    tree_write(&t, "/sys/fs/cgroup/memory/a/b/memory.limit_in_bytes", "9223372036854771712\n");
    tree_write(&t, "/sys/fs/cgroup/memory/a/memory.limit_in_bytes", "536870912\n");
    tree_write(&t, "/sys/fs/cgroup/memory/a/memory.usage_in_bytes", "600000000\n");
    tree_write(&t, "/proc/meminfo", "MemTotal: 8000000 kB\nMemAvailable: 7000000 kB\n");
    read_tree(t.root);
    assert_int_equal(facts.cgroup_version, 1);
    assert_int_equal(facts.quota_us, 50000);
    assert_int_equal(facts.usable_cpus, 1); /* 0.5 CPU rounds up to 1 */
    assert_non_null(strstr(facts.quota_path, "cpu,cpuacct/a"));
    assert_int_equal(facts.memory_bytes, UINT64_C(536870912));
    assert_int_equal(facts.memory_free_bytes, 0); /* usage above the limit */
    tree_free(&t);
}

static void garbage_v1_quota_is_skipped_with_a_note(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    tree_write(&t, "/proc/self/cgroup", "3:cpu:/a\n");
    tree_write(&t, "/proc/self/mountinfo",
               "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
    tree_write(&t, "/sys/fs/cgroup/cpu/a/cpu.cfs_quota_us", "fast\n");
    tree_write(&t, "/sys/fs/cgroup/cpu/a/cpu.cfs_period_us", "100000\n");
    tree_write(&t, "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "0\n");
    tree_write(&t, "/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    read_tree(t.root);
    assert_int_equal(facts.quota_us, -1);
    assert_non_null(strstr(facts.notes, "cpu.cfs_quota_us 'fast'"));
    assert_non_null(strstr(facts.notes, "cpu.cfs_quota_us '0'"));
    tree_free(&t);
}

static void cgroup_outside_the_mounted_part_uses_the_mount(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    /* A container's mount shows only its own cgroup (/docker/abc) while
     * /proc/self/cgroup names another path. */
    tree_write(&t, "/proc/self/cgroup", "0::/elsewhere\n");
    tree_write(&t, "/proc/self/mountinfo",
               "35 24 0:30 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    tree_write(&t, "/sys/fs/cgroup/cpu.max", "300000 100000\n");
    read_tree(t.root);
    assert_int_equal(facts.quota_us, 300000);
    assert_non_null(strstr(facts.notes, "outside the mounted part"));
    tree_free(&t);
}

static void cgroup_outside_the_namespace_never_walks_above_the_mount(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    tree_write(&t, "/proc/self/cgroup", "0::/../../etc\n");
    tree_write(&t, "/proc/self/mountinfo", CG2);
    tree_write(&t, "/sys/fs/cgroup/cpu.max", "200000 100000\n");
    tree_write(&t, "/etc/cpu.max", "100000 100000\n"); /* must not be read */
    read_tree(t.root);
    assert_int_equal(facts.quota_us, 200000);
    assert_non_null(strstr(facts.notes, "outside this cgroup namespace"));
    tree_free(&t);
}

static void mount_root_prefix_is_stripped_from_the_cgroup_path(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    tree_write(&t, "/proc/self/cgroup", "0::/docker/abc/job\n");
    tree_write(&t, "/proc/self/mountinfo",
               "35 24 0:30 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    tree_write(&t, "/sys/fs/cgroup/job/cpu.max", "max 100000\n");
    tree_write(&t, "/sys/fs/cgroup/cpu.max", "100000 100000\n");
    read_tree(t.root);
    assert_int_equal(facts.quota_us, 100000);
    assert_int_equal(facts.usable_cpus, 1);
    assert_null(strstr(facts.notes, "outside the mounted part"));
    tree_free(&t);
}

static void missing_mountinfo_falls_back_to_usual_mount_points(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    tree_write(&t, "/proc/self/cgroup", "0::/svc\n");
    tree_write(&t, "/sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
    tree_write(&t, "/sys/fs/cgroup/svc/cpu.max", "50000 100000\n");
    tree_write(&t, "/sys/fs/cgroup/svc/memory.max", "1048576\n");
    read_tree(t.root);
    assert_int_equal(facts.quota_us, 50000);
    assert_int_equal(facts.cg_mem_limit, 1048576);
    tree_free(&t);
}

static void garbage_cpulists_fall_back_to_cpuinfo_and_online(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    tree_write(&t, "/proc/cpuinfo",
               "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
               "physical id\t: 0\ncore id\t\t: 0\nflags\t\t: sse sse2\n\n"
               "processor\t: 1\nphysical id\t: 0\ncore id\t\t: 1\n\n"
               "processor\t: 2\nphysical id\t: 1\ncore id\t\t: 0\n\n"
               "processor\t: 3\nphysical id\t: 1\ncore id\t\t: 0\n\n");
    tree_write(&t, "/sys/devices/system/cpu/online", "0-zz\n");
    tree_write(&t, "/sys/devices/system/node/online", ",,\n");
    tree_write(&t, "/proc/self/status", "Cpus_allowed_list:\tnone\n");
    tree_write(&t, "/sys/devices/system/cpu/cpu0/cache/index0/level", "1\n");
    tree_write(&t, "/sys/devices/system/cpu/cpu0/cache/index0/type", "Data\n");
    tree_write(&t, "/sys/devices/system/cpu/cpu0/cache/index0/size", "huge\n");
    read_tree(t.root);
    assert_int_equal(facts.logical_cpus, 4);
    assert_int_equal(facts.physical_cores, 3); /* (0,0) (0,1) (1,0) */
    assert_int_equal(facts.sockets, 2);
    assert_int_equal(facts.numa_nodes, 1);
    assert_int_equal(facts.affinity_cpus, 4); /* the online CPUs */
    assert_non_null(strstr(facts.src_affinity, "online"));
    assert_int_equal(facts.l1d.size_bytes, 0);
    assert_non_null(strstr(facts.notes, "'0-zz', not a CPU list"));
    assert_non_null(strstr(facts.notes, "size holds 'huge'"));
    tree_free(&t);
}

static void empty_tree_gives_unknowns_and_notes_not_failure(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    read_tree(t.root);
    assert_int_equal(facts.logical_cpus, 1);
    assert_int_equal(facts.physical_cores, 1);
    assert_int_equal(facts.usable_cpus, 1);
    assert_int_equal(facts.memory_bytes, 0);
    assert_int_equal(facts.clock_mhz, -1);
    assert_int_equal(facts.quota_us, -1);
    assert_int_equal(facts.cgroup_version, 0);
    assert_true(gpo_cpu_simd_lanes(&facts) >= 1);
    assert_string_not_equal(facts.notes, "");
    tree_free(&t);
}

static void arm64_cpuinfo_without_midr_assumes_baseline(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    /* Looks arm64 (implementer line) but the value is garbage. */
    tree_write(&t, "/proc/cpuinfo", "processor\t: 0\nCPU implementer\t: zz\n");
    read_tree(t.root);
    assert_int_equal(facts.arch, GPO_CPU_ARCH_ARM64);
    assert_true(facts.isa & GPO_BIT(GPO_ARM_ASIMD));
    assert_string_equal(facts.microarch, "generic");
    assert_string_equal(facts.isa_level, "armv8-a");
    assert_int_equal(gpo_cpu_simd_lanes(&facts), 4);
    assert_non_null(strstr(facts.notes, "no arm64 processor"));
    tree_free(&t);
}

static void meminfo_without_memtotal_leaves_memory_unknown(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    tree_write(&t, "/proc/meminfo", "MemFree: 1 kB\n");
    read_tree(t.root);
    assert_int_equal(facts.mem_total, 0);
    assert_int_equal(facts.memory_bytes, 0);
    assert_string_equal(facts.src_memory, "unknown");
    assert_non_null(strstr(facts.notes, "MemTotal"));
    tree_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_socket_server_reads_sockets_nodes_cores_and_caches),
        cmocka_unit_test(cascade_lake_is_named_by_vnni_beyond_its_model_row),
        cmocka_unit_test(quota_on_ancestor_cgroup_limits_threads),
        cmocka_unit_test(memory_max_on_ancestor_caps_memory),
        cmocka_unit_test(milan_guest_is_znver3_at_level_v3),
        cmocka_unit_test(recorded_cgroup_v1_host_reads_memory_controller_path),
        cmocka_unit_test(virtual_cpu_model_is_named_by_its_features),
        cmocka_unit_test(arm64_server_reads_core_sve_and_features),
        cmocka_unit_test(garbage_cpu_max_is_skipped_with_a_note),
        cmocka_unit_test(cgroup_v1_quota_and_limit_on_ancestor_bind),
        cmocka_unit_test(garbage_v1_quota_is_skipped_with_a_note),
        cmocka_unit_test(cgroup_outside_the_mounted_part_uses_the_mount),
        cmocka_unit_test(cgroup_outside_the_namespace_never_walks_above_the_mount),
        cmocka_unit_test(mount_root_prefix_is_stripped_from_the_cgroup_path),
        cmocka_unit_test(missing_mountinfo_falls_back_to_usual_mount_points),
        cmocka_unit_test(garbage_cpulists_fall_back_to_cpuinfo_and_online),
        cmocka_unit_test(empty_tree_gives_unknowns_and_notes_not_failure),
        cmocka_unit_test(arm64_cpuinfo_without_midr_assumes_baseline),
        cmocka_unit_test(meminfo_without_memtotal_leaves_memory_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
