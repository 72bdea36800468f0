/* Where a device sits: the PCI locality reader (src/locality.c), the CPU
 * lists and process CPUs it leans on (src/util/cpuset.c), and the
 * derivations that follow cpu.affinity, on the two-socket recorded trees
 * (tests/fixtures/fleet, tests/fixtures/kfd/mi300x) and small trees built
 * here for the kernel's "don't know" answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "device.h"
#include "locality.h"
#include "util/cpuset.h"
#include "util/fs.h"
#include "util/strutil.h"

static gpuopt_device *device_at(const char *bus)
{
    gpuopt_device *d = gpo_device_new();
    assert_non_null(d);
    gpo_strlcpy(d->info.pci_bus_id, bus, sizeof d->info.pci_bus_id);
    return d;
}

static void read_tree(const char *tree, gpuopt_device *d)
{
    gpo_fs fs;
    gpo_core_map *map = calloc(1, sizeof *map);
    assert_non_null(map);
    gpo_fs_init(&fs, tree);
    gpo_locality_read(&fs, d);
    gpo_locality_cores(&fs, map, d);
    free(map);
}

/* mkdir -p of the file's folder, then the file. */
static void put(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void cpulist_format_writes_ranges_and_refuses_a_short_buffer(void **state)
{
    (void)state;
    unsigned char set[GPO_CPUSET_BYTES];
    assert_int_equal(gpo_parse_cpulist("0-3,112-115,7,9-9", set, GPO_CPUSET_BITS), 10);
    char out[64];
    assert_int_equal(gpo_cpulist_format(set, GPO_CPUSET_BITS, out, sizeof out), 0);
    assert_string_equal(out, "0-3,7,9,112-115");
    assert_int_equal(gpo_cpulist_format(set, GPO_CPUSET_BITS, out, 8), -1);
    assert_string_equal(out, "");
    memset(set, 0, sizeof set);
    assert_int_equal(gpo_cpulist_format(set, GPO_CPUSET_BITS, out, sizeof out), 0);
    assert_string_equal(out, "");
}

static void status_cpus_come_from_the_allowed_list_line_only(void **state)
{
    (void)state;
    unsigned char set[GPO_CPUSET_BYTES];
    assert_int_equal(gpo_parse_status_cpus("Name:\tx\nCpus_allowed:\tff\nCpus_allowed_list:\t0-3,"
                                           "112-115\nMems_allowed_list:\t0\n",
                                           set),
                     8);
    assert_int_equal(gpo_parse_status_cpus("Name:\tx\n", set), -1);
    assert_int_equal(gpo_parse_status_cpus("Cpus_allowed_list:\t\n", set), -1);
    assert_int_equal(gpo_parse_status_cpus("Cpus_allowed_list:\t0-x\n", set), -1);
    assert_int_equal(gpo_parse_status_cpus(NULL, set), -1);
}

static void process_cpus_of_a_recorded_tree_are_its_status_file(void **state)
{
    (void)state;
    gpo_fs fs;
    gpo_fs_init(&fs, GPO_FIXTURES_DIR "/fleet/hgx-h100-2s-job");
    unsigned char set[GPO_CPUSET_BYTES];
    char src[64], text[64];
    assert_int_equal(gpo_process_cpus(&fs, set, src, sizeof src), 8);
    assert_string_equal(src, "/proc/self/status Cpus_allowed_list");
    gpo_cpulist_format(set, GPO_CPUSET_BITS, text, sizeof text);
    assert_string_equal(text, "0-3,112-115");
    gpo_fs_init(&fs, GPO_FIXTURES_DIR "/nvidia/absent");
    assert_int_equal(gpo_process_cpus(&fs, set, src, sizeof src), -1);
    gpo_fs_init(&fs, NULL); /* the live system: at least this thread's CPU */
    assert_true(gpo_process_cpus(&fs, set, src, sizeof src) >= 1);
    assert_string_equal(src, "sched_getaffinity");
}

static void gpus_on_each_socket_get_their_node_cpus_and_logical_cores(void **state)
{
    (void)state;
    static const struct {
        const char *bus;
        int node;
        const char *cpus, *cores;
    } want[] = {
        {"0000:18:00.0", 0, "0-55,112-167", "0-55"},
        {"0000:2A:00.0", 0, "0-55,112-167", "0-55"}, /* upper case, as some drivers print */
        {"9a:00.0", 1, "56-111,168-223", "56-111"},  /* no domain */
        {"0000:ab:00.0", 1, "56-111,168-223", "56-111"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        gpuopt_device *d = device_at(want[i].bus);
        read_tree(GPO_FIXTURES_DIR "/fleet/hgx-h100-2s", d);
        assert_int_equal(d->numa_node, want[i].node);
        assert_string_equal(d->local_cpus, want[i].cpus);
        assert_string_equal(d->local_cores, want[i].cores);
        gpo_device_free(d);
    }
    /* AMD's two-socket MI300X machine: the fifth GPU is socket 1's first. */
    gpuopt_device *d = device_at("0000:8b:00.0");
    read_tree(GPO_FIXTURES_DIR "/kfd/mi300x", d);
    assert_int_equal(d->numa_node, 1);
    assert_string_equal(d->local_cpus, "96-191,288-383");
    assert_string_equal(d->local_cores, "96-191");
    gpo_device_free(d);
}

static void unknown_locality_stays_unknown(void **state)
{
    (void)state;
    char root[512];
    snprintf(root, sizeof root, "%s/tests/tmp-locality-%d", GPO_BUILD_DIR, (int)getpid());
    mkdir(root, 0755);
    /* The kernel's own "don't know" (one node, or firmware without _PXM). */
    put(root, "sys/bus/pci/devices/0000:01:00.0/numa_node", "-1\n");
    put(root, "sys/bus/pci/devices/0000:01:00.0/local_cpulist", "0-7\n");
    /* Garbage, and an empty CPU list. */
    put(root, "sys/bus/pci/devices/0000:02:00.0/numa_node", "one\n");
    put(root, "sys/bus/pci/devices/0000:02:00.0/local_cpulist", "\n");
    gpuopt_device *d = device_at("0000:01:00.0");
    read_tree(root, d);
    assert_int_equal(d->numa_node, -1);
    assert_string_equal(d->local_cpus, "0-7");
    /* No CPU topology in this tree: the cores are unknown, not guessed. */
    assert_string_equal(d->local_cores, "");
    gpo_device_free(d);
    d = device_at("0000:02:00.0");
    read_tree(root, d);
    assert_int_equal(d->numa_node, -1);
    assert_string_equal(d->local_cpus, "");
    gpo_device_free(d);
    d = device_at("0000:03:00.0"); /* no files at all */
    read_tree(root, d);
    assert_int_equal(d->numa_node, -1);
    assert_string_equal(d->local_cpus, "");
    gpo_device_free(d);
    d = gpo_device_new(); /* no bus id: a CPU, an OpenCL device that gave none */
    read_tree(GPO_FIXTURES_DIR "/fleet/hgx-h100-2s", d);
    assert_int_equal(d->numa_node, -1);
    assert_string_equal(d->local_cpus, "");
    gpo_device_free(d);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static void affinity_derivations_follow_the_cpu_list(void **state)
{
    (void)state;
    gpo_knob_input in = {.name = "cpu.affinity", .present = 1, .text = "0-3,112-115"};
    gpo_derive_env env;
    memset(&env, 0, sizeof env);
    gpo_derivation out;
    assert_int_equal(gpo_derive_affinity_threads(&in, &env, &out), GPUOPT_OK);
    assert_true(out.present);
    assert_string_equal(out.value, "8");
    assert_int_equal(gpo_derive_affinity_places(&in, &env, &out), GPUOPT_OK);
    assert_true(out.present);
    assert_string_equal(out.value, "{0}:4,{112}:4");
    /* Every other CPU: too many ranges for one value, so no OMP_PLACES. */
    char many[4096] = "";
    for (int c = 0; c < 400; c += 2)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", c ? "," : "", c);
    in.text = many;
    assert_int_equal(gpo_derive_affinity_places(&in, &env, &out), GPUOPT_OK);
    assert_false(out.present);
    assert_non_null(strstr(out.how, "too many ranges"));
    assert_int_equal(gpo_derive_affinity_threads(&in, &env, &out), GPUOPT_OK);
    assert_string_equal(out.value, "200");
    /* A CPU device: its backend's knobs export OMP_NUM_THREADS and
     * OMP_PLACES already. */
    gpuopt_device *cpu = gpo_device_new();
    cpu->info.type = GPUOPT_DEVICE_TYPE_CPU;
    env.dev = cpu;
    in.text = "0-3";
    assert_int_equal(gpo_derive_affinity_threads(&in, &env, &out), GPUOPT_OK);
    assert_false(out.present);
    assert_int_equal(gpo_derive_affinity_places(&in, &env, &out), GPUOPT_OK);
    assert_false(out.present);
    gpo_device_free(cpu);
    env.dev = NULL;
    in.present = 0;
    in.text = NULL;
    assert_int_equal(gpo_derive_affinity_threads(&in, &env, &out), GPUOPT_OK);
    assert_false(out.present);
    assert_int_equal(gpo_derive_affinity_places(&in, &env, &out), GPUOPT_OK);
    assert_false(out.present);
    assert_true(gpo_cpulist_form("0-3,8"));
    assert_false(gpo_cpulist_form(""));
    assert_false(gpo_cpulist_form("3-1"));
    assert_false(gpo_cpulist_form("all"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpulist_format_writes_ranges_and_refuses_a_short_buffer),
        cmocka_unit_test(status_cpus_come_from_the_allowed_list_line_only),
        cmocka_unit_test(process_cpus_of_a_recorded_tree_are_its_status_file),
        cmocka_unit_test(gpus_on_each_socket_get_their_node_cpus_and_logical_cores),
        cmocka_unit_test(unknown_locality_stays_unknown),
        cmocka_unit_test(affinity_derivations_follow_the_cpu_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
