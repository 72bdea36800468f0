/* The live machine's facts agree with what the system's own tools and
 * files say: nproc, lscpu, sysconf, /proc/meminfo and /proc/cpuinfo. No
 * number is written here; each comparison reads the other source now, so
 * the test holds on any Linux machine. A tool that is missing skips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cpu/cpu_facts.h"
#include "cpu/cpu_procfs.h"
#include "cpu/x86_isa.h"

static gpo_cpu_facts live;

static int setup(void **state)
{
    (void)state;
    gpo_fs fs;
    gpo_fs_init(&fs, NULL);
    gpo_logger quiet = {GPUOPT_LOG_OFF, NULL, NULL};
    return gpo_cpu_facts_read(&fs, &quiet, &live) == GPUOPT_OK ? 0 : -1;
}

/* Runs a command and returns its whole output (malloc'd) or NULL. */
static char *run(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 4096, n = 0;
    char *out = malloc(cap);
    while (out) {
        size_t r = fread(out + n, 1, cap - n - 1, p);
        n += r;
        if (r == 0)
            break;
        if (n + 1 == cap) {
            char *bigger = realloc(out, cap * 2);
            if (!bigger) {
                free(out);
                out = NULL;
                break;
            }
            out = bigger;
            cap *= 2;
        }
    }
    int rc = pclose(p);
    if (!out)
        return NULL;
    out[n] = '\0';
    if (rc != 0) {
        free(out);
        return NULL;
    }
    return out;
}

static void live_logical_cpus_match_sysconf(void **state)
{
    (void)state;
    assert_int_equal(live.logical_cpus, (int)sysconf(_SC_NPROCESSORS_ONLN));
}

static void live_affinity_matches_nproc(void **state)
{
    (void)state;
    /* GNU nproc honours OMP_NUM_THREADS and OMP_THREAD_LIMIT; drop them. */
    char *out = run("env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null");
    if (!out)
        skip();
    assert_int_equal(live.affinity_cpus, atoi(out));
    free(out);
    assert_string_equal(live.src_affinity, "sched_getaffinity");
}

static void live_sockets_cores_and_nodes_match_lscpu(void **state)
{
    (void)state;
    char *out = run("lscpu -p=CPU,CORE,SOCKET,NODE 2>/dev/null");
    if (!out)
        skip();
    enum { MAX = 8192 };
    static int sockets[MAX], cores[MAX][2], nodes[MAX];
    int ns = 0, nc = 0, nn = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        int cpu, core, sock, node = 0;
        if (line[0] == '#' || sscanf(line, "%d,%d,%d,%d", &cpu, &core, &sock, &node) < 3)
            continue;
        int seen = 0;
        for (int i = 0; i < ns; i++)
            seen |= sockets[i] == sock;
        if (!seen && ns < MAX)
            sockets[ns++] = sock;
        seen = 0;
        for (int i = 0; i < nc; i++)
            seen |= cores[i][0] == sock && cores[i][1] == core;
        if (!seen && nc < MAX) {
            cores[nc][0] = sock;
            cores[nc][1] = core;
            nc++;
        }
        seen = 0;
        for (int i = 0; i < nn; i++)
            seen |= nodes[i] == node;
        if (!seen && nn < MAX)
            nodes[nn++] = node;
    }
    free(out);
    assert_int_equal(live.sockets, ns);
    assert_int_equal(live.physical_cores, nc);
    assert_int_equal(live.numa_nodes, nn);
}

static void live_cache_sizes_match_lscpu(void **state)
{
    (void)state;
    char *out = run("lscpu -C=NAME,ONE-SIZE -B 2>/dev/null");
    if (!out)
        skip();
    int compared = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char name[16];
        unsigned long long bytes;
        if (sscanf(line, "%15s %llu", name, &bytes) != 2)
            continue;
        if (strcmp(name, "L1d") == 0) {
            assert_int_equal(live.l1d.size_bytes, bytes);
            compared++;
        } else if (strcmp(name, "L2") == 0) {
            assert_int_equal(live.l2.size_bytes, bytes);
            compared++;
        } else if (strcmp(name, "L3") == 0) {
            assert_int_equal(live.l3.size_bytes, bytes);
            compared++;
        }
    }
    free(out);
    if (!compared)
        skip();
}

static void live_memory_total_matches_meminfo(void **state)
{
    (void)state;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        skip();
    unsigned long long kb = 0;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
            break;
    fclose(f);
    assert_int_equal(live.mem_total, kb * 1024);
    assert_true(live.memory_bytes > 0 && live.memory_bytes <= live.mem_total);
    assert_true(live.memory_free_bytes <= live.memory_bytes);
}

static void live_isa_agrees_with_cpuinfo_flags(void **state)
{
    (void)state;
    if (live.arch != GPO_CPU_ARCH_X86_64)
        skip();
    char *text = NULL;
    gpo_fs fs;
    gpo_fs_init(&fs, NULL);
    assert_int_equal(gpo_fs_read_alloc(&fs, "/proc/cpuinfo", &text, NULL), GPUOPT_OK);
    char flags[8192];
    assert_int_equal(gpo_cpuinfo_field(text, "flags", flags, sizeof flags), 0);
    free(text);
    uint64_t from_flags = gpo_x86_features_from_flags(flags);
    /* cpuid (with XCR0) and the kernel must agree on the features the
     * tiers use; a kernel older than the CPU may hide newer flags, so only
     * these are compared. */
    const gpo_x86_feature checked[] = {GPO_X86_SSE4_2,   GPO_X86_AVX,   GPO_X86_AVX2,
                                       GPO_X86_FMA,      GPO_X86_F16C,  GPO_X86_AVX512F,
                                       GPO_X86_AVX512BW, GPO_X86_POPCNT};
    for (size_t i = 0; i < sizeof checked / sizeof checked[0]; i++)
        assert_int_equal(!!(live.isa & GPO_BIT(checked[i])), !!(from_flags & GPO_BIT(checked[i])));
    assert_int_equal(live.x86_level, gpo_x86_level(from_flags));
    assert_string_equal(live.src_isa, "cpuid instruction (XCR0-checked)");
}

static void live_vendor_and_model_match_cpuinfo(void **state)
{
    (void)state;
    if (live.arch != GPO_CPU_ARCH_X86_64)
        skip();
    char *text = NULL;
    gpo_fs fs;
    gpo_fs_init(&fs, NULL);
    assert_int_equal(gpo_fs_read_alloc(&fs, "/proc/cpuinfo", &text, NULL), GPUOPT_OK);
    char v[256];
    assert_int_equal(gpo_cpuinfo_field(text, "vendor_id", v, sizeof v), 0);
    assert_string_equal(live.vendor_id, v);
    assert_int_equal(gpo_cpuinfo_field(text, "cpu family", v, sizeof v), 0);
    assert_int_equal(live.family, atoi(v));
    assert_int_equal(gpo_cpuinfo_field(text, "model", v, sizeof v), 0);
    assert_int_equal(live.model, atoi(v));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(live_logical_cpus_match_sysconf),
        cmocka_unit_test(live_affinity_matches_nproc),
        cmocka_unit_test(live_sockets_cores_and_nodes_match_lscpu),
        cmocka_unit_test(live_cache_sizes_match_lscpu),
        cmocka_unit_test(live_memory_total_matches_meminfo),
        cmocka_unit_test(live_isa_agrees_with_cpuinfo_flags),
        cmocka_unit_test(live_vendor_and_model_match_cpuinfo),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
