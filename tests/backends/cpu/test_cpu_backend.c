/* The CPU backend end to end: a context over a fixture tree
 * (gpuopt_options.sysfs_root), the device record it lists, the plans it
 * makes at levels 0 and 1, its ops called directly on the live system,
 * and free memory reused while fresh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "backends/cpu/cpu_tree.h"
#include "cpu/cpu_backend.h"
#include "cpu/cpu_device.h"
#include "cpu/cpu_rules.h"
#include "cpu/memory.h"
#include "plan.h"
#include "support/cjson_fail.h"
#include "util/strutil.h"

typedef struct fixture {
    gpuopt_context *ctx;
    gpuopt_device *dev;
    gpuopt_plan *plan;
} fixture;

static fixture fx;

static void open_root(const char *root, int32_t level)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_ENV | GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "cpu";
    o.sysfs_root = root;
    o.log_level = "off";
    assert_int_equal(gpuopt_context_create(&o, &fx.ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(fx.ctx, "cpu:0", &fx.dev), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(fx.ctx, fx.dev, level, &fx.plan), GPUOPT_OK);
}

static void open_fixture(const char *name, int32_t level)
{
    char root[1024];
    snprintf(root, sizeof root, "%s/cpu/%s", GPO_FIXTURES_DIR, name);
    open_root(root, level);
}

static int teardown(void **state)
{
    (void)state;
    gpuopt_plan_destroy(fx.plan);
    gpuopt_context_destroy(fx.ctx);
    memset(&fx, 0, sizeof fx);
    return 0;
}

static gpuopt_knob knob(const char *name)
{
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    assert_int_equal(gpuopt_plan_knob_find(fx.plan, name, &k), GPUOPT_OK);
    return k;
}

static int has_knob(const char *name)
{
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    return gpuopt_plan_knob_find(fx.plan, name, &k) == GPUOPT_OK;
}

static gpuopt_device_info info(void)
{
    gpuopt_device_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    assert_int_equal(gpuopt_device_get_info(fx.dev, &i), GPUOPT_OK);
    return i;
}

static void quota_on_ancestor_cgroup_limits_threads(void **state)
{
    (void)state;
    open_fixture("epyc-7763-k8s-pod", 1);
    int32_t applied = -1;
    assert_int_equal(gpuopt_plan_level(fx.plan, NULL, &applied), GPUOPT_OK);
    assert_int_equal(applied, 1);
    gpuopt_knob k = knob("threads");
    assert_int_equal(k.int_value, 2);
    assert_int_equal(k.tier, 1);
    assert_int_equal(k.source, GPUOPT_SOURCE_DETECTED);
    assert_non_null(strstr(k.reason, "8 CPUs in this process's affinity mask"));
    assert_non_null(strstr(k.reason, "cpu.max 150000/100000 = 1.5 CPUs"));
    assert_non_null(strstr(k.reason, "kubepods-burstable-pod"));
    assert_non_null(strstr(k.reason, "rounded up => 2 threads"));
    k = knob("omp.num_threads");
    assert_int_equal(k.int_value, 2);
    assert_string_equal(k.env, "OMP_NUM_THREADS");
    /* Under a quota threads stay unbound, and places would mean nothing. */
    assert_string_equal(knob("omp.proc_bind").value, "false");
    assert_false(has_knob("omp.places"));
    assert_int_equal(info().compute_units, 2);
}

static void memory_max_on_ancestor_caps_memory(void **state)
{
    (void)state;
    open_fixture("epyc-7763-k8s-pod", 1);
    gpuopt_device_info i = info();
    assert_int_equal(i.memory_bytes, UINT64_C(2147483648));
    /* Read again for the level-1 plan (memory_free): limit minus usage. */
    assert_int_equal(i.memory_free_bytes, UINT64_C(2147483648) - UINT64_C(1288490188));
}

static void two_sockets_two_nodes_give_numa_advice(void **state)
{
    (void)state;
    open_fixture("xeon-gold-6248-2s", 1);
    gpuopt_knob k = knob("numa.placement");
    assert_string_equal(k.value, "first-touch");
    assert_non_null(strstr(k.reason, "2 NUMA nodes"));
    assert_string_equal(knob("omp.proc_bind").value, "spread");
    assert_string_equal(knob("omp.places").value, "threads"); /* 80 threads on 40 cores */
    assert_int_equal(knob("threads").int_value, 80);
    assert_int_equal(knob("cpu.vector_bits").int_value, 512);
    /* 1 MiB L2 per core shared by 2 SMT threads: half of 512 KiB. */
    k = knob("cpu.tile_bytes");
    assert_int_equal(k.type, GPUOPT_KNOB_BYTES);
    assert_int_equal(k.int_value, 256 * 1024);
    assert_non_null(strstr(k.reason, "L2 of 1 MiB per 2 CPUs"));
}

/* Like open_fixture, with a workload and the configuration's reduced_precision. */
static void open_fixture_for(const char *name, int32_t level, const gpuopt_workload *w,
                             const char *reduced)
{
    char root[1024];
    snprintf(root, sizeof root, "%s/cpu/%s", GPO_FIXTURES_DIR, name);
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_ENV | GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "cpu";
    o.sysfs_root = root;
    o.log_level = "off";
    o.reduced_precision = reduced;
    assert_int_equal(gpuopt_context_create(&o, &fx.ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(fx.ctx, "cpu:0", &fx.dev), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create_for(fx.ctx, fx.dev, level, w, &fx.plan), GPUOPT_OK);
}

static void latency_workload_runs_one_thread_per_physical_core(void **state)
{
    (void)state;
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.objective = GPUOPT_OBJECTIVE_LATENCY;
    open_fixture_for("xeon-gold-6248-2s", 1, &w, NULL);
    gpuopt_knob k = knob("threads");
    assert_int_equal(k.int_value, 40); /* 80 CPUs on 40 cores */
    assert_non_null(strstr(k.reason, "latency-bound"));
    assert_int_equal(knob("omp.num_threads").int_value, 40);
    assert_string_equal(knob("omp.places").value, "cores");
    teardown(NULL);
    /* Throughput (the default) keeps every hardware thread. */
    w.objective = GPUOPT_OBJECTIVE_THROUGHPUT;
    open_fixture_for("xeon-gold-6248-2s", 1, &w, NULL);
    assert_int_equal(knob("threads").int_value, 80);
    teardown(NULL);
    /* Under a quota below the cores nothing changes. */
    w.objective = GPUOPT_OBJECTIVE_LATENCY;
    open_fixture_for("epyc-7763-k8s-pod", 1, &w, NULL);
    assert_int_equal(knob("threads").int_value, 2);
}

static void bf16_math_mode_needs_bf16_units_and_reduced_precision(void **state)
{
    (void)state;
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    /* Sapphire Rapids has AMX-BF16, but nothing allows reduced precision. */
    open_fixture_for("kvm-sapphirerapids-cgroup1", 1, NULL, NULL);
    gpuopt_knob k = knob("cpu.fpmath_mode");
    assert_string_equal(k.value, "STRICT");
    assert_string_equal(k.env, "ONEDNN_DEFAULT_FPMATH_MODE");
    assert_non_null(strstr(k.reason, "not enabled"));
    teardown(NULL);
    /* The configuration allows it. */
    open_fixture_for("kvm-sapphirerapids-cgroup1", 1, NULL, "true");
    k = knob("cpu.fpmath_mode");
    assert_string_equal(k.value, "BF16");
    assert_non_null(strstr(k.reason, "amx_bf16"));
    teardown(NULL);
    /* A precision-sensitive workload overrides the configuration. */
    w.reduced_precision = 0;
    open_fixture_for("kvm-sapphirerapids-cgroup1", 1, &w, "true");
    k = knob("cpu.fpmath_mode");
    assert_string_equal(k.value, "STRICT");
    assert_non_null(strstr(k.reason, "precision-sensitive"));
    teardown(NULL);
    /* Cascade Lake has no bf16 units: strict whatever the workload says. */
    w.reduced_precision = 1;
    open_fixture_for("xeon-gold-6248-2s", 1, &w, NULL);
    k = knob("cpu.fpmath_mode");
    assert_string_equal(k.value, "STRICT");
    assert_non_null(strstr(k.reason, "no bf16 arithmetic units"));
    teardown(NULL);
    /* Level 0 is strict without reading a fact. */
    open_fixture_for("kvm-sapphirerapids-cgroup1", 0, &w, "true");
    k = knob("cpu.fpmath_mode");
    assert_string_equal(k.value, "STRICT");
    assert_int_equal(k.tier, 0);
}

static void one_numa_node_gives_no_numa_advice(void **state)
{
    (void)state;
    const char *single[] = {"epyc-7763-k8s-pod", "graviton3-c7g", "kvm-sapphirerapids-cgroup1"};
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++) {
        open_fixture(single[i], 1);
        assert_false(has_knob("numa.placement"));
        teardown(NULL);
    }
}

static void level_0_uses_only_the_architecture_baseline(void **state)
{
    (void)state;
    open_fixture("xeon-gold-6248-2s", 0);
    gpuopt_knob k = knob("threads");
    assert_int_equal(k.int_value, 1);
    assert_int_equal(k.tier, 0);
    assert_int_equal(k.source, GPUOPT_SOURCE_DEFAULT);
    k = knob("cpu.vector_bits");
    assert_int_equal(k.int_value, 128);
    assert_non_null(strstr(k.reason, "SSE2"));
    assert_int_equal(knob("cpu.tile_bytes").int_value, 128 * 1024);
    assert_false(has_knob("omp.num_threads"));
    assert_false(has_knob("numa.placement"));
    teardown(NULL);
    open_fixture("graviton3-c7g", 0);
    assert_non_null(strstr(knob("cpu.vector_bits").reason, "NEON"));
    assert_int_equal(knob("cpu.tile_bytes").int_value, 64 * 1024);
}

static void arm64_sve_sets_vector_bits_and_features(void **state)
{
    (void)state;
    open_fixture("graviton3-c7g", 1);
    gpuopt_knob k = knob("cpu.vector_bits");
    assert_int_equal(k.int_value, 256);
    assert_non_null(strstr(k.reason, "sve with a 256-bit vector length"));
    assert_string_equal(knob("omp.places").value, "cores");
    assert_int_equal(knob("cpu.tile_bytes").int_value, 512 * 1024);
    gpuopt_device_info i = info();
    assert_string_equal(i.arch_family, "neoverse-v1");
    assert_string_equal(i.arch_name, "armv8.4-a");
    assert_int_equal(i.simd_width, 8);
    assert_int_equal(i.clock_mhz, -1);
    assert_int_equal(i.features, GPUOPT_FEATURE_FP64 | GPUOPT_FEATURE_FP16 | GPUOPT_FEATURE_BF16 |
                                     GPUOPT_FEATURE_INT8);
}

static void device_record_describes_the_two_socket_server(void **state)
{
    (void)state;
    open_fixture("xeon-gold-6248-2s", 1);
    gpuopt_device_info i = info();
    assert_string_equal(i.id, "cpu:0");
    assert_string_equal(i.backend, "cpu");
    assert_int_equal(i.index, 0);
    assert_int_equal(i.type, GPUOPT_DEVICE_TYPE_CPU);
    assert_string_equal(i.vendor, "Intel");
    assert_string_equal(i.name, "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz");
    assert_string_equal(i.arch_family, "cascadelake");
    assert_string_equal(i.arch_name, "x86-64-v4");
    assert_int_equal(i.compute_units, 80);
    assert_int_equal(i.simd_width, 16);
    assert_int_equal(i.clock_mhz, 3900);
    assert_int_equal(i.l2_bytes, UINT64_C(2) * 28160 * 1024); /* both sockets' L3 */
    assert_int_equal(i.cc_major, -1);
    /* Cascade Lake: VNNI (int8) but no BF16, no FP16 arithmetic, no AMX. */
    assert_int_equal(i.features, GPUOPT_FEATURE_FP64 | GPUOPT_FEATURE_INT8);
    assert_int_equal(i.features_known & (GPUOPT_FEATURE_TF32 | GPUOPT_FEATURE_FP8),
                     GPUOPT_FEATURE_TF32 | GPUOPT_FEATURE_FP8);
}

static void amx_host_reports_fp16_bf16_int8_and_matrix_units(void **state)
{
    (void)state;
    open_fixture("kvm-sapphirerapids-cgroup1", 1);
    gpuopt_device_info i = info();
    assert_string_equal(i.arch_family, "sapphirerapids");
    assert_int_equal(i.features, GPUOPT_FEATURE_FP64 | GPUOPT_FEATURE_FP16 | GPUOPT_FEATURE_BF16 |
                                     GPUOPT_FEATURE_INT8 | GPUOPT_FEATURE_MATRIX_UNITS);
}

static cJSON *find_cpu_details(cJSON *root)
{
    cJSON *devices = cJSON_GetObjectItemCaseSensitive(root, "devices");
    cJSON *dev = cJSON_GetArrayItem(devices, 0);
    cJSON *details = cJSON_GetObjectItemCaseSensitive(dev, "details");
    return cJSON_GetObjectItemCaseSensitive(details, "cpu");
}

static void details_json_names_the_quota_limit_and_sources(void **state)
{
    (void)state;
    open_fixture("epyc-7763-k8s-pod", 1);
    char *json = NULL;
    assert_int_equal(gpuopt_context_to_json(fx.ctx, &json), GPUOPT_OK);
    cJSON *root = cJSON_Parse(json);
    gpuopt_free(json);
    assert_non_null(root);
    cJSON *cpu = find_cpu_details(root);
    assert_non_null(cpu);
    assert_true(cJSON_GetObjectItemCaseSensitive(cpu, "cpu_quota")->valuedouble == 1.5);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(cpu, "usable_cpus")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(cpu, "logical_cpus")->valueint, 8);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(cpu, "physical_cores")->valueint, 4);
    assert_true(cJSON_GetObjectItemCaseSensitive(cpu, "cgroup_memory_limit")->valuedouble ==
                2147483648.0);
    cJSON *caches = cJSON_GetObjectItemCaseSensitive(cpu, "caches");
    assert_true(cJSON_GetObjectItemCaseSensitive(caches, "l2")->valuedouble == 524288.0);
    cJSON *features = cJSON_GetObjectItemCaseSensitive(cpu, "features");
    int avx2 = 0, avx512 = 0;
    cJSON *f;
    cJSON_ArrayForEach(f, features)
    {
        avx2 |= strcmp(f->valuestring, "avx2") == 0;
        avx512 |= strcmp(f->valuestring, "avx512f") == 0;
    }
    assert_true(avx2);
    assert_false(avx512);
    cJSON *src = cJSON_GetObjectItemCaseSensitive(cpu, "sources");
    assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(src, "cpu_quota")->valuestring,
                           "cpu.max 150000/100000"));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cpu, "microarch_level")->valuestring,
                        "x86-64-v3");
    cJSON_Delete(root);
}

static void details_json_has_null_quota_without_one(void **state)
{
    (void)state;
    open_fixture("xeon-gold-6248-2s", 1);
    char *json = NULL;
    assert_int_equal(gpuopt_context_to_json(fx.ctx, &json), GPUOPT_OK);
    cJSON *root = cJSON_Parse(json);
    gpuopt_free(json);
    cJSON *cpu = find_cpu_details(root);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cpu, "cpu_quota")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cpu, "cgroup_memory_limit")));
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(cpu, "sockets")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(cpu, "numa_nodes")->valueint, 2);
    cJSON_Delete(root);
}

/* Failing each of cJSON's allocations in turn while the CPU's details are
 * written: the fill reports out of memory, or succeeds with every field.
 * It once deleted a container whose key could not be added and went on
 * filling it (a use after free under ASan). */
static void details_are_whole_or_the_fill_fails_when_an_allocation_fails(void **state)
{
    (void)state;
    static gpo_cpu_facts f; /* large: keep off the stack */
    gpo_fs fs;
    char root[1024];
    snprintf(root, sizeof root, "%s/cpu/%s", GPO_FIXTURES_DIR, "epyc-7763-k8s-pod");
    gpo_fs_init(&fs, root);
    gpo_logger quiet = {GPUOPT_LOG_OFF, NULL, NULL};
    assert_int_equal(gpo_cpu_facts_read(&fs, &quiet, &f), GPUOPT_OK);
    gpuopt_device *dev = gpo_device_new();
    assert_non_null(dev);
    assert_int_equal(gpo_cpu_fill_device(&f, dev), GPUOPT_OK);
    char *want = cJSON_PrintUnformatted(dev->details);
    assert_non_null(want);
    gpo_device_free(dev);
    long n = 1;
    for (;; n++) {
        dev = gpo_device_new();
        assert_non_null(dev);
        cjson_fail_at(n);
        gpuopt_status st = gpo_cpu_fill_device(&f, dev);
        long made = cjson_allocations();
        cjson_fail_off();
        if (st == GPUOPT_OK) {
            char *got = cJSON_PrintUnformatted(dev->details);
            assert_non_null(got);
            assert_string_equal(got, want);
            cJSON_free(got);
        } else {
            assert_int_equal(st, GPUOPT_ERR_NO_MEMORY);
        }
        gpo_device_free(dev);
        if (made < n)
            break;
    }
    assert_true(n > 40); /* every field was reached */
    cJSON_free(want);
}

static void env_export_carries_the_openmp_knobs(void **state)
{
    (void)state;
    open_fixture("xeon-gold-6248-2s", 1);
    char *text = NULL;
    assert_int_equal(gpuopt_plan_to_env(fx.plan, &text), GPUOPT_OK);
    assert_non_null(strstr(text, ": \"${OMP_NUM_THREADS=80}\"; export OMP_NUM_THREADS\n"));
    assert_non_null(strstr(text, ": \"${OMP_PROC_BIND=spread}\"; export OMP_PROC_BIND\n"));
    assert_non_null(strstr(text, ": \"${OMP_PLACES=threads}\"; export OMP_PLACES\n"));
    assert_null(strstr(text, "tile"));
    gpuopt_free(text);
}

static void empty_tree_still_gives_a_device_and_a_level_1_plan(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    open_root(t.root, 1);
    int32_t applied = -1;
    assert_int_equal(gpuopt_plan_level(fx.plan, NULL, &applied), GPUOPT_OK);
    assert_int_equal(applied, 1);
    assert_int_equal(knob("threads").int_value, 1);
    gpuopt_backend_info b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    int32_t n = 0;
    assert_int_equal(gpuopt_backend_count(fx.ctx, &n), GPUOPT_OK);
    for (int32_t k = 0; k < n; k++) {
        assert_int_equal(gpuopt_backend_at(fx.ctx, k, &b), GPUOPT_OK);
        if (strcmp(b.name, "cpu") == 0)
            break;
    }
    assert_string_equal(b.name, "cpu");
    assert_int_equal(b.status, GPUOPT_BACKEND_AVAILABLE);
    assert_non_null(strstr(b.reason, "no /proc/cpuinfo")); /* the notes say what fell back */
    tree_free(&t);
}

static void knob_catalogue_is_complete_and_typed(void **state)
{
    (void)state;
    const gpo_knob_def *knobs = gpo_backend_cpu.knobs;
    assert_int_equal(gpo_backend_cpu.n_knobs, 8);
    for (size_t i = 0; i < gpo_backend_cpu.n_knobs; i++) {
        const gpo_knob_def *d = &knobs[i];
        assert_non_null(d->name);
        assert_non_null(d->summary);
        assert_true(d->type >= GPUOPT_KNOB_BOOL && d->type <= GPUOPT_KNOB_STRING);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(d->name, knobs[j].name);
        /* OpenMP knobs and the oneDNN math mode export their variable; the
         * others do not. */
        if (strncmp(d->name, "omp.", 4) == 0 || strcmp(d->name, "cpu.fpmath_mode") == 0)
            assert_non_null(d->env);
        else
            assert_null(d->env);
    }
    assert_int_equal(gpo_backend_cpu.abi, GPO_BACKEND_ABI);
    assert_string_equal(gpo_backend_cpu.name, "cpu");
    assert_ptr_equal(gpo_backend_cpu.tier2, gpo_cpu_tier2); /* measured with host threads */
    assert_null(gpo_backend_cpu.runtime);
}

static void ops_read_the_live_system_without_an_env(void **state)
{
    (void)state;
    const gpo_backend *b = &gpo_backend_cpu;
    gpo_backend_report report;
    memset(&report, 0, sizeof report);
    void *st = NULL;
    /* No env: the live system, silently. */
    assert_int_equal(b->load(NULL, &st, &report), GPUOPT_OK);
    assert_non_null(st);
    assert_false(gpo_cpu_state_recorded(st));
    gpo_device_list list = {0};
    assert_int_equal(b->enumerate(st, NULL, &list), GPUOPT_OK);
    assert_int_equal(list.n, 1);
    gpuopt_device *dev = list.items[0];
    struct gpuopt_plan *p = gpo_plan_new(NULL, dev, 1);
    assert_non_null(p);
    dev->n_routes = 1;
    dev->routes[0].backend = b;
    dev->routes[0].backend_state = st;
    p->cur_tier = 1;
    p->cur_source = GPUOPT_SOURCE_DETECTED;
    assert_int_equal(b->tier1(st, &dev->routes[0], dev, p), GPUOPT_OK);
    assert_non_null(gpo_plan_find(p, "threads"));
    gpo_plan_free(p);
    gpo_memory_reading live;
    assert_int_equal(b->memory_live(st, NULL, 0, &live), GPUOPT_OK);
    assert_true(live.free > 0);
    assert_int_equal(live.source, GPUOPT_MEMORY_SOURCE_HOST);
    assert_true(live.total >= live.free);
    assert_non_null(strstr(live.source_text, "/proc/meminfo"));
    gpo_device_list_free(&list);
    b->unload(st);
    b->unload(NULL);
}

static void memory_free_without_meminfo_is_an_io_error(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    gpo_fs fs;
    gpo_fs_init(&fs, t.root);
    static gpo_cpu_facts f;
    gpo_cpu_facts_init(&f);
    uint64_t free_bytes = 7;
    assert_int_equal(gpo_cpu_memory_free_now(&fs, &f, &free_bytes), GPUOPT_ERR_NOT_FOUND);
    tree_write(&t, "/proc/meminfo", "MemTotal: 1000 kB\n"); /* no MemAvailable */
    assert_int_equal(gpo_cpu_memory_free_now(&fs, &f, &free_bytes), GPUOPT_ERR_IO);
    tree_write(&t, "/proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 800 kB\n");
    f.cg_mem_limit = 512 * 1024;
    gpo_strlcpy(f.mem_limit_path, "/sys/fs/cgroup/gone", sizeof f.mem_limit_path);
    assert_int_equal(gpo_cpu_memory_free_now(&fs, &f, &free_bytes), GPUOPT_OK);
    assert_int_equal(free_bytes, 512 * 1024); /* usage unreadable: the limit bounds it */
    tree_free(&t);
}

static void free_memory_reuses_a_fresh_reading_and_rereads_a_stale_one(void **state)
{
    (void)state;
    test_tree t;
    assert_int_equal(tree_new(&t), 0);
    tree_write(&t, "/proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 800 kB\n");
    gpo_fs fs;
    gpo_fs_init(&fs, t.root);
    gpo_logger quiet = {GPUOPT_LOG_OFF, NULL, NULL};
    static gpo_cpu_facts f;
    assert_int_equal(gpo_cpu_facts_read(&fs, &quiet, &f), GPUOPT_OK);
    assert_int_equal(f.memory_free_bytes, 800 * 1024);
    assert_true(f.memory_read_ns > 0);
    tree_write(&t, "/proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 300 kB\n");
    uint64_t at = f.memory_read_ns, free_bytes = 0;
    /* Within the window the load's reading stands: no file is opened. */
    assert_int_equal(gpo_cpu_memory_free(&fs, &f, at + GPO_CPU_FREE_FRESH_NS - 1, &free_bytes),
                     GPUOPT_OK);
    assert_int_equal(free_bytes, 800 * 1024);
    /* Past it, or at a time before the reading, free memory is read anew. */
    assert_int_equal(gpo_cpu_memory_free(&fs, &f, at + GPO_CPU_FREE_FRESH_NS, &free_bytes),
                     GPUOPT_OK);
    assert_int_equal(free_bytes, 300 * 1024);
    tree_write(&t, "/proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 200 kB\n");
    assert_int_equal(gpo_cpu_memory_free(&fs, &f, at - 1, &free_bytes), GPUOPT_OK);
    assert_int_equal(free_bytes, 200 * 1024);
    /* A reading without MemAvailable is never reused: the read's error shows. */
    tree_write(&t, "/proc/meminfo", "MemTotal: 1000 kB\n");
    assert_int_equal(gpo_cpu_facts_read(&fs, &quiet, &f), GPUOPT_OK);
    assert_int_equal(gpo_cpu_memory_free(&fs, &f, f.memory_read_ns, &free_bytes), GPUOPT_ERR_IO);
    tree_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(quota_on_ancestor_cgroup_limits_threads, teardown),
        cmocka_unit_test_teardown(memory_max_on_ancestor_caps_memory, teardown),
        cmocka_unit_test_teardown(two_sockets_two_nodes_give_numa_advice, teardown),
        cmocka_unit_test_teardown(one_numa_node_gives_no_numa_advice, teardown),
        cmocka_unit_test_teardown(latency_workload_runs_one_thread_per_physical_core, teardown),
        cmocka_unit_test_teardown(bf16_math_mode_needs_bf16_units_and_reduced_precision, teardown),
        cmocka_unit_test_teardown(level_0_uses_only_the_architecture_baseline, teardown),
        cmocka_unit_test_teardown(arm64_sve_sets_vector_bits_and_features, teardown),
        cmocka_unit_test_teardown(device_record_describes_the_two_socket_server, teardown),
        cmocka_unit_test_teardown(amx_host_reports_fp16_bf16_int8_and_matrix_units, teardown),
        cmocka_unit_test_teardown(details_json_names_the_quota_limit_and_sources, teardown),
        cmocka_unit_test_teardown(details_json_has_null_quota_without_one, teardown),
        cmocka_unit_test_teardown(env_export_carries_the_openmp_knobs, teardown),
        cmocka_unit_test(details_are_whole_or_the_fill_fails_when_an_allocation_fails),
        cmocka_unit_test_teardown(empty_tree_still_gives_a_device_and_a_level_1_plan, teardown),
        cmocka_unit_test(knob_catalogue_is_complete_and_typed),
        cmocka_unit_test(ops_read_the_live_system_without_an_env),
        cmocka_unit_test(free_memory_reuses_a_fresh_reading_and_rereads_a_stale_one),
        cmocka_unit_test(memory_free_without_meminfo_is_an_io_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
