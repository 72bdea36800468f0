/* Live device memory through the public API (gpuopt_device_memory) from
 * every source: a fake NVML built from the CUDA double's own device files,
 * recorded amdgpu sysfs trees of an RX 580 and an MI300X (no ROCm user
 * space), /proc/meminfo for the CPU; a missing NVML says so and the answer
 * falls back to the total; the device list shows the live reading. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "gpuopt/gpuopt.h"

static gpuopt_context *context(const char *backends, const char *sysfs)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = backends;
    o.sysfs_root = sysfs;
    o.log_level = "off";
    gpuopt_context *ctx = NULL;
    if (gpuopt_context_create(&o, &ctx) != GPUOPT_OK)
        fail_msg("context: %s", gpuopt_last_error());
    return ctx;
}

static gpuopt_memory_info read_of(gpuopt_context *ctx, const char *id)
{
    gpuopt_device *d = NULL;
    gpuopt_memory_info m;
    memset(&m, 0, sizeof m);
    m.struct_size = sizeof m;
    if (gpuopt_device_select(ctx, id, &d) != GPUOPT_OK)
        fail_msg("no %s: %s", id, gpuopt_last_error());
    assert_int_equal(gpuopt_device_memory(d, &m), GPUOPT_OK);
    return m;
}

static void nvml_gives_each_gpu_s_numbers_by_uuid(void **state)
{
    (void)state;
    setenv("GPUOPT_NVML_LIBRARY", GPO_FAKE_NVML, 1);
    gpuopt_context *ctx = context("cuda", NULL);
    /* h100-sxm5.json and t4.json: total_memory_bytes, free_memory_bytes. */
    gpuopt_memory_info h = read_of(ctx, "cuda:0"), t = read_of(ctx, "cuda:1");
    assert_int_equal(h.source, GPUOPT_MEMORY_SOURCE_MANAGEMENT);
    assert_int_equal(h.total_bytes, 85899345920ull);
    assert_int_equal(h.free_bytes, 85362475008ull);
    assert_int_equal(h.used_bytes, 85899345920ull - 85362475008ull);
    assert_string_equal(h.source_text, "NVML nvmlDeviceGetMemoryInfo (by UUID)");
    assert_true(h.age_s >= 0 && h.age_s < 60);
    assert_int_equal(t.total_bytes, 17179869184ull);
    assert_int_equal(t.free_bytes, 16642998272ull);
    /* The record keeps the reading. */
    gpuopt_device *d = NULL;
    gpuopt_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    assert_int_equal(gpuopt_device_select(ctx, "cuda:1", &d), GPUOPT_OK);
    assert_int_equal(gpuopt_device_get_info(d, &info), GPUOPT_OK);
    assert_int_equal(info.memory_free_bytes, 16642998272ull);
    gpuopt_context_destroy(ctx);
}

static void the_device_list_shows_the_live_reading(void **state)
{
    (void)state;
    setenv("GPUOPT_NVML_LIBRARY", GPO_FAKE_NVML, 1);
    gpuopt_context *ctx = context("cuda,cpu", NULL);
    char *text = NULL;
    assert_int_equal(gpuopt_context_to_json(ctx, &text), GPUOPT_OK);
    cJSON *root = cJSON_Parse(text);
    const cJSON *dev;
    int seen = 0;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItem(root, "devices"))
    {
        const cJSON *free_bytes = cJSON_GetObjectItem(dev, "memory_free_bytes");
        const cJSON *source = cJSON_GetObjectItem(dev, "memory_source");
        if (!cJSON_IsNumber(free_bytes) || !cJSON_IsString(source))
            fail_msg("%s: memory_free_bytes or memory_source missing", text);
        if (!strcmp(cJSON_GetObjectItem(dev, "id")->valuestring, "cuda:0")) {
            assert_true(free_bytes->valuedouble == 85362475008.0);
            assert_string_equal(source->valuestring, "NVML nvmlDeviceGetMemoryInfo (by UUID)");
        }
        seen++;
    }
    assert_int_equal(seen, 3);
    cJSON_Delete(root);
    gpuopt_free(text);
    gpuopt_context_destroy(ctx);
}

static void a_missing_nvml_says_so_and_falls_back_to_the_total(void **state)
{
    (void)state;
    setenv("GPUOPT_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    gpuopt_context *ctx = context("cuda", NULL);
    gpuopt_memory_info m = read_of(ctx, "cuda:0");
    assert_int_equal(m.source, GPUOPT_MEMORY_SOURCE_NONE);
    assert_int_equal(m.total_bytes, 85899345920ull); /* the record's (cuDeviceTotalMem) */
    assert_int_equal(m.free_bytes, 0);
    assert_int_equal(m.used_bytes, 0);
    assert_non_null(strstr(m.source_text, "free memory unknown"));
    assert_non_null(strstr(m.source_text, "NVML: cannot open /nonexistent/libnvidia-ml.so.1"));
    assert_non_null(strstr(m.source_text, "no CUDA context is active"));
    /* A plan at level 1 may create a context: it still sizes against free memory. */
    gpuopt_plan *p = NULL;
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &p), GPUOPT_OK);
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    assert_int_equal(gpuopt_plan_knob_find(p, "cuda.alloc.max_split_mb", &k), GPUOPT_OK);
    assert_non_null(strstr(k.reason, "79.5 GiB free"));
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

/* Kernel-only AMD GPUs: no HIP library, the KFD topology lists them, and
 * amdgpu's counters say what is in use (tests/fixtures/kfd/README.md). */
static void amdgpu_sysfs_counters_give_an_rx_580_and_an_mi300x(void **state)
{
    (void)state;
    setenv("GPUOPT_HIP_LIBRARY", "/nonexistent/libamdhip64.so.6", 1);
    gpuopt_context *ctx = context("rocm", GPO_FIXTURES_DIR "/kfd/rx580");
    gpuopt_memory_info m = read_of(ctx, "rocm:0");
    assert_int_equal(m.source, GPUOPT_MEMORY_SOURCE_KERNEL);
    assert_int_equal(m.total_bytes, 8589934592ull);
    assert_int_equal(m.used_bytes, 325058560ull);
    assert_int_equal(m.free_bytes, 8589934592ull - 325058560ull);
    assert_string_equal(m.source_text, "amdgpu sysfs mem_info_vram_total and mem_info_vram_used "
                                       "of 0000:01:00.0");
    gpuopt_context_destroy(ctx);

    ctx = context("rocm", GPO_FIXTURES_DIR "/kfd/mi300x");
    m = read_of(ctx, "rocm:0");
    assert_int_equal(m.source, GPUOPT_MEMORY_SOURCE_KERNEL);
    assert_int_equal(m.total_bytes, 206158430208ull);
    assert_int_equal(m.free_bytes, 206158430208ull - 536870912ull);
    /* GPU 1 of the tree has no counters: unknown, in words, with the total. */
    m = read_of(ctx, "rocm:1");
    assert_int_equal(m.source, GPUOPT_MEMORY_SOURCE_NONE);
    assert_int_equal(m.total_bytes, 206158430208ull);
    assert_non_null(strstr(m.source_text, "mem_info_vram_{total,used} cannot be read"));
    assert_non_null(strstr(m.source_text, "no HIP runtime"));
    gpuopt_context_destroy(ctx);
}

static void the_cpu_reads_proc_meminfo_under_its_cgroup_limit(void **state)
{
    (void)state;
    /* A recorded pod: 2 GiB cgroup v2 limit, 1.2 GiB of it in use. */
    gpuopt_context *ctx = context("cpu", GPO_FIXTURES_DIR "/cpu/epyc-7763-k8s-pod");
    gpuopt_memory_info m = read_of(ctx, "cpu:0");
    assert_int_equal(m.source, GPUOPT_MEMORY_SOURCE_HOST);
    assert_int_equal(m.total_bytes, 2147483648ull);
    assert_int_equal(m.free_bytes, 2147483648ull - 1288490188ull);
    assert_int_equal(m.used_bytes, 1288490188ull);
    assert_non_null(strstr(
        m.source_text, "/proc/meminfo capped by cgroup limit 2 GiB on /sys/fs/cgroup/kubepods"));
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("ROCR_VISIBLE_DEVICES");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvml_gives_each_gpu_s_numbers_by_uuid),
        cmocka_unit_test(the_device_list_shows_the_live_reading),
        cmocka_unit_test(a_missing_nvml_says_so_and_falls_back_to_the_total),
        cmocka_unit_test(amdgpu_sysfs_counters_give_an_rx_580_and_an_mi300x),
        cmocka_unit_test(the_cpu_reads_proc_meminfo_under_its_cgroup_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
