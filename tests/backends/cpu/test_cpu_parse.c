/* The CPU backend's text parsers and derived facts, on literal inputs:
 * well-formed, malformed, empty and absent (a NULL text: the file could
 * not be read). Pointer arguments a caller must supply are asserted
 * contracts, not tested here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cpu/affinity.h"
#include "cpu/cgroup.h"
#include "cpu/cpu_facts.h"
#include "cpu/cpu_procfs.h"
#include "cpu/memory.h"
#include "cpu/topology.h"

static void cpu_max_parses_quota_period_and_max(void **state)
{
    (void)state;
    int64_t q, p;
    assert_int_equal(gpo_cgroup_parse_cpu_max("150000 100000", &q, &p), 0);
    assert_int_equal(q, 150000);
    assert_int_equal(p, 100000);
    assert_int_equal(gpo_cgroup_parse_cpu_max("max 100000\n", &q, &p), 0);
    assert_int_equal(q, -1);
    assert_int_equal(gpo_cgroup_parse_cpu_max("max", &q, &p), 0);
    assert_int_equal(q, -1);
    assert_int_equal(p, 100000);
    assert_int_equal(gpo_cgroup_parse_cpu_max("50000", &q, &p), 0);
    assert_int_equal(q, 50000);
}

static void cpu_max_garbage_is_rejected(void **state)
{
    (void)state;
    int64_t q = 7, p = 7;
    const char *bad[] = {"",         "garbage",         "150000 abc",    "-5 100000",
                         "0 100000", "150000 0",        "150000 -100",   "max max",
                         "1.5 1",    "150000 100000 9", "150000x100000", "99999999999999999999 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gpo_cgroup_parse_cpu_max(bad[i], &q, &p), -1);
    assert_int_equal(q, 7); /* outputs untouched on failure */
    assert_int_equal(gpo_cgroup_parse_cpu_max(NULL, &q, &p), -1);
}

static void memory_limit_parses_bytes_max_and_v1_unlimited(void **state)
{
    (void)state;
    uint64_t l;
    assert_int_equal(gpo_cgroup_parse_memory_limit("2147483648\n", &l), 0);
    assert_int_equal(l, UINT64_C(2147483648));
    assert_int_equal(gpo_cgroup_parse_memory_limit("max", &l), 0);
    assert_int_equal(l, 0);
    /* cgroup v1's "no limit": PAGE_COUNTER_MAX pages. */
    assert_int_equal(gpo_cgroup_parse_memory_limit("9223372036854771712", &l), 0);
    assert_int_equal(l, 0);
    assert_int_equal(gpo_cgroup_parse_memory_limit("-1", &l), -1);
    assert_int_equal(gpo_cgroup_parse_memory_limit("2G", &l), -1);
    assert_int_equal(gpo_cgroup_parse_memory_limit("", &l), -1);
    assert_int_equal(gpo_cgroup_parse_memory_limit("99999999999999999999999", &l), -1);
    assert_int_equal(gpo_cgroup_parse_memory_limit(NULL, &l), -1);
}

static void self_cgroup_prefers_v1_controller_line_then_v2(void **state)
{
    (void)state;
    const char *hybrid = "9:name=systemd:/\n4:memory:/process_api/4d0d\n"
                         "2:cpu,cpuacct:/a:b/c\n0::/\n";
    char path[256];
    int v = 0;
    assert_int_equal(gpo_cgroup_parse_self(hybrid, "memory", path, sizeof path, &v), 0);
    assert_string_equal(path, "/process_api/4d0d");
    assert_int_equal(v, 1);
    /* Combined controllers, and a colon inside the cgroup name. */
    assert_int_equal(gpo_cgroup_parse_self(hybrid, "cpu", path, sizeof path, &v), 0);
    assert_string_equal(path, "/a:b/c");
    assert_int_equal(v, 1);
    /* "cpuacct" must not match "cpu" the other way round. */
    assert_int_equal(gpo_cgroup_parse_self("2:cpuacct:/x\n0::/y\n", "cpu", path, sizeof path, &v),
                     0);
    assert_string_equal(path, "/y");
    assert_int_equal(v, 2);
    assert_int_equal(
        gpo_cgroup_parse_self("0::/kubepods.slice/pod.slice", "memory", path, sizeof path, &v), 0);
    assert_string_equal(path, "/kubepods.slice/pod.slice");
    assert_int_equal(v, 2);
}

static void self_cgroup_without_match_or_room_fails(void **state)
{
    (void)state;
    char path[8];
    int v;
    assert_int_equal(gpo_cgroup_parse_self("garbage\n", "cpu", path, sizeof path, &v), -1);
    assert_int_equal(gpo_cgroup_parse_self("", "cpu", path, sizeof path, &v), -1);
    assert_int_equal(gpo_cgroup_parse_self("0::/a/very/long/path", "cpu", path, sizeof path, &v),
                     -1);
    assert_int_equal(gpo_cgroup_parse_self("4:cpu:/a/very/long/path", "cpu", path, sizeof path, &v),
                     -1);
    assert_int_equal(gpo_cgroup_parse_self(NULL, "cpu", path, sizeof path, &v), -1);
}

static void mountinfo_finds_v1_controller_and_v2_mounts(void **state)
{
    (void)state;
    const char *mi =
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:5 - cgroup cgroup "
        "rw,cpu,cpuacct\n"
        "35 31 0:32 /docker/abc /sys/fs/cgroup/mem\\040ory rw - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
    char mp[256], root[256];
    assert_int_equal(gpo_cgroup_parse_mountinfo(mi, "cpu", 1, mp, sizeof mp, root, sizeof root), 0);
    assert_string_equal(mp, "/sys/fs/cgroup/cpu,cpuacct");
    assert_string_equal(root, "/");
    assert_int_equal(gpo_cgroup_parse_mountinfo(mi, "memory", 1, mp, sizeof mp, root, sizeof root),
                     0);
    assert_string_equal(mp, "/sys/fs/cgroup/mem ory"); /* \040 decoded */
    assert_string_equal(root, "/docker/abc");
    assert_int_equal(gpo_cgroup_parse_mountinfo(mi, "cpu", 2, mp, sizeof mp, root, sizeof root), 0);
    assert_string_equal(mp, "/sys/fs/cgroup/unified");
}

static void mountinfo_without_cgroup_or_malformed_fails(void **state)
{
    (void)state;
    char mp[64], root[64];
    assert_int_equal(gpo_cgroup_parse_mountinfo("22 27 0:21 / /proc rw - proc proc rw\n", "cpu", 1,
                                                mp, sizeof mp, root, sizeof root),
                     -1);
    assert_int_equal(gpo_cgroup_parse_mountinfo("garbage without fields", "cpu", 2, mp, sizeof mp,
                                                root, sizeof root),
                     -1);
    assert_int_equal(
        gpo_cgroup_parse_mountinfo("1 2 3 - cgroup2", "cpu", 2, mp, sizeof mp, root, sizeof root),
        -1);
    assert_int_equal(gpo_cgroup_parse_mountinfo("", "cpu", 2, mp, sizeof mp, root, sizeof root),
                     -1);
    assert_int_equal(gpo_cgroup_parse_mountinfo(NULL, "cpu", 2, mp, sizeof mp, root, sizeof root),
                     -1);
}

static void meminfo_reads_kib_values(void **state)
{
    (void)state;
    uint64_t t, a;
    assert_int_equal(gpo_cpu_parse_meminfo("MemTotal:       24684084 kB\nMemFree: 1 kB\n"
                                           "MemAvailable:   24326216 kB\n",
                                           &t, &a),
                     0);
    assert_int_equal(t, UINT64_C(24684084) * 1024);
    assert_int_equal(a, UINT64_C(24326216) * 1024);
    /* Kernels before 3.14 have no MemAvailable: total only. */
    assert_int_equal(gpo_cpu_parse_meminfo("MemTotal: 1000 kB\n", &t, &a), 0);
    assert_int_equal(a, 0);
    assert_int_equal(gpo_cpu_parse_meminfo("MemFree: 1000 kB\n", &t, &a), -1);
    assert_int_equal(gpo_cpu_parse_meminfo("MemTotal: lots kB\n", &t, &a), -1);
    assert_int_equal(gpo_cpu_parse_meminfo("MemTotal: 1000 MB\n", &t, &a), -1);
    assert_int_equal(gpo_cpu_parse_meminfo("MemTotal: 0 kB\n", &t, &a), -1);
    assert_int_equal(gpo_cpu_parse_meminfo("", &t, &a), -1);
    assert_int_equal(gpo_cpu_parse_meminfo(NULL, &t, &a), -1);
}

static void cache_size_accepts_sysfs_units(void **state)
{
    (void)state;
    uint64_t b;
    assert_int_equal(gpo_cpu_parse_cache_size("32K", &b), 0);
    assert_int_equal(b, 32768);
    assert_int_equal(gpo_cpu_parse_cache_size("36M", &b), 0);
    assert_int_equal(b, UINT64_C(36) << 20);
    assert_int_equal(gpo_cpu_parse_cache_size("4096", &b), 0);
    assert_int_equal(b, 4096);
    assert_int_equal(gpo_cpu_parse_cache_size("K", &b), -1);
    assert_int_equal(gpo_cpu_parse_cache_size("32KB", &b), -1);
    assert_int_equal(gpo_cpu_parse_cache_size("-32K", &b), -1);
    assert_int_equal(gpo_cpu_parse_cache_size("", &b), -1);
    assert_int_equal(gpo_cpu_parse_cache_size("99999999999999999999G", &b), -1);
    assert_int_equal(gpo_cpu_parse_cache_size(NULL, &b), -1);
}

static void cpuinfo_iterator_splits_keys_and_values(void **state)
{
    (void)state;
    const char *text = "processor\t: 0\nmodel name\t: Test CPU @ 2GHz\n\npower management:\n"
                       "no colon here\n";
    const char *cur = text;
    char k[32], v[64];
    assert_int_equal(gpo_cpuinfo_next(&cur, k, sizeof k, v, sizeof v), 1);
    assert_string_equal(k, "processor");
    assert_string_equal(v, "0");
    assert_int_equal(gpo_cpuinfo_next(&cur, k, sizeof k, v, sizeof v), 1);
    assert_string_equal(v, "Test CPU @ 2GHz");
    assert_int_equal(gpo_cpuinfo_next(&cur, k, sizeof k, v, sizeof v), 1);
    assert_string_equal(k, "");
    assert_int_equal(gpo_cpuinfo_next(&cur, k, sizeof k, v, sizeof v), 1);
    assert_string_equal(k, "power management");
    assert_string_equal(v, "");
    assert_int_equal(gpo_cpuinfo_next(&cur, k, sizeof k, v, sizeof v), 1);
    assert_string_equal(k, "no colon here");
    assert_int_equal(gpo_cpuinfo_next(&cur, k, sizeof k, v, sizeof v), 0);
    /* Truncation to small buffers, and no text. */
    cur = text;
    char tiny[4];
    assert_int_equal(gpo_cpuinfo_next(&cur, tiny, sizeof tiny, v, 2), 1);
    assert_string_equal(tiny, "pro");
    cur = NULL;
    assert_int_equal(gpo_cpuinfo_next(&cur, k, sizeof k, v, sizeof v), 0);
    assert_int_equal(gpo_cpuinfo_field(text, "model name", v, sizeof v), 0);
    assert_string_equal(v, "Test CPU @ 2GHz");
    assert_int_equal(gpo_cpuinfo_field(text, "flags", v, sizeof v), -1);
    assert_int_equal(gpo_cpuinfo_field(NULL, "flags", v, sizeof v), -1);
}

static void status_affinity_reads_cpus_allowed_list(void **state)
{
    (void)state;
    static gpo_cpu_facts f;
    gpo_cpu_facts_init(&f);
    assert_int_equal(gpo_cpu_parse_status_affinity(
                         "Name:\tx\nCpus_allowed:\tf\nCpus_allowed_list:\t0-1,4,6-7\n", &f),
                     0);
    assert_int_equal(f.affinity_cpus, 5);
    assert_true(gpo_cpuset_has(f.affinity, 4));
    assert_false(gpo_cpuset_has(f.affinity, 5));
    assert_false(gpo_cpuset_has(f.affinity, -1));
    assert_false(gpo_cpuset_has(f.affinity, GPO_CPU_MAX));
    assert_int_equal(gpo_cpu_parse_status_affinity("Cpus_allowed_list:\t0-\n", &f), -1);
    assert_int_equal(gpo_cpu_parse_status_affinity("Cpus_allowed_list:\tzero\n", &f), -1);
    assert_int_equal(gpo_cpu_parse_status_affinity("Cpus_allowed_list:\t\n", &f), -1);
    assert_int_equal(gpo_cpu_parse_status_affinity("Name:\tx\n", &f), -1);
    assert_int_equal(f.affinity_cpus, 5); /* unchanged by failures */
    assert_int_equal(gpo_cpu_parse_status_affinity(NULL, &f), -1);
}

static void quota_rounds_up_and_never_exceeds_affinity(void **state)
{
    (void)state;
    assert_int_equal(gpo_cpu_usable_from_quota(8, 150000, 100000), 2); /* 1.5 -> 2 */
    assert_int_equal(gpo_cpu_usable_from_quota(8, 200000, 100000), 2); /* exact */
    assert_int_equal(gpo_cpu_usable_from_quota(8, 200001, 100000), 3);
    assert_int_equal(gpo_cpu_usable_from_quota(8, 10000, 100000), 1);  /* 0.1 -> 1 */
    assert_int_equal(gpo_cpu_usable_from_quota(4, 800000, 100000), 4); /* mask is tighter */
    assert_int_equal(gpo_cpu_usable_from_quota(8, -1, 100000), 8);     /* no quota */
    assert_int_equal(gpo_cpu_usable_from_quota(8, 150000, 0), 8);      /* bad period */
    assert_int_equal(gpo_cpu_usable_from_quota(0, -1, 0), 1);          /* unknown mask */
    assert_int_equal(gpo_cpu_usable_from_quota(-3, 150000, 100000), 1);
}

static void cpuinfo_is_read_once_and_its_failure_remembered(void **state)
{
    (void)state;
    static gpo_cpu_facts f;
    gpo_cpu_facts_init(&f);
    gpo_fs fs;
    gpo_fs_init(&fs, "/nonexistent-gpuopt-root");
    const char *text = "x";
    assert_int_equal(gpo_cpu_cpuinfo(&fs, &f, &text), GPUOPT_ERR_NOT_FOUND);
    assert_null(text);
    assert_int_equal(gpo_cpu_cpuinfo(&fs, &f, &text), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(gpo_detail_get(), "/proc/cpuinfo"));
    gpo_cpu_cpuinfo_release(&f);
    gpo_fs_init(&fs, NULL);
    assert_int_equal(gpo_cpu_cpuinfo(&fs, &f, &text), GPUOPT_OK);
    const char *again = NULL;
    assert_int_equal(gpo_cpu_cpuinfo(&fs, &f, &again), GPUOPT_OK);
    assert_ptr_equal(text, again); /* the same buffer: read once */
    gpo_cpu_cpuinfo_release(&f);
    assert_null(f.cpuinfo);
}

static void notes_accumulate_and_truncate_without_overflow(void **state)
{
    (void)state;
    static gpo_cpu_facts f;
    gpo_cpu_facts_init(&f);
    gpo_cpu_note(&f, NULL, GPUOPT_LOG_WARN, "first %d", 1);
    gpo_cpu_note(&f, NULL, GPUOPT_LOG_WARN, "second");
    assert_string_equal(f.notes, "first 1; second");
    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    for (int i = 0; i < 10; i++)
        gpo_cpu_note(&f, NULL, GPUOPT_LOG_WARN, "%s", big);
    assert_true(strlen(f.notes) < sizeof f.notes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpu_max_parses_quota_period_and_max),
        cmocka_unit_test(cpu_max_garbage_is_rejected),
        cmocka_unit_test(memory_limit_parses_bytes_max_and_v1_unlimited),
        cmocka_unit_test(self_cgroup_prefers_v1_controller_line_then_v2),
        cmocka_unit_test(self_cgroup_without_match_or_room_fails),
        cmocka_unit_test(mountinfo_finds_v1_controller_and_v2_mounts),
        cmocka_unit_test(mountinfo_without_cgroup_or_malformed_fails),
        cmocka_unit_test(meminfo_reads_kib_values),
        cmocka_unit_test(cache_size_accepts_sysfs_units),
        cmocka_unit_test(cpuinfo_iterator_splits_keys_and_values),
        cmocka_unit_test(status_affinity_reads_cpus_allowed_list),
        cmocka_unit_test(quota_rounds_up_and_never_exceeds_affinity),
        cmocka_unit_test(cpuinfo_is_read_once_and_its_failure_remembered),
        cmocka_unit_test(notes_accumulate_and_truncate_without_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
