/* Tier-0 and tier-1 OpenCL rules through the public API: PoCL for real,
 * vendor GPUs on the synthetic platforms, reduced precision on and off,
 * and GPUOPT_OPENCL_LIBRARY pointing nowhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ocl_test.h"
#include "cl_device.h"
#include "plan.h"

#define FIXTURE(name) GPO_OPENCL_FIXTURES "/" name

static gpuopt_context *context(const char *library, const char *reduced)
{
    if (library)
        setenv("GPUOPT_OPENCL_LIBRARY", library, 1);
    else
        unsetenv("GPUOPT_OPENCL_LIBRARY");
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "opencl";
    o.log_level = "error";
    o.reduced_precision = reduced;
    gpuopt_context *ctx = NULL;
    assert_int_equal(gpuopt_context_create(&o, &ctx), GPUOPT_OK);
    return ctx;
}

static gpuopt_knob knob(gpuopt_plan *p, const char *name)
{
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    if (gpuopt_plan_knob_find(p, name, &k) != GPUOPT_OK)
        fail_msg("the plan has no %s", name);
    return k;
}

static gpuopt_plan *plan_for(gpuopt_context *ctx, gpuopt_device *dev, int level)
{
    gpuopt_plan *p = NULL;
    assert_int_equal(gpuopt_plan_create(ctx, dev, level, &p), GPUOPT_OK);
    int32_t asked, applied;
    assert_int_equal(gpuopt_plan_level(p, &asked, &applied), GPUOPT_OK);
    assert_int_equal(applied, level);
    return p;
}

static gpuopt_device *pocl_device(gpuopt_context *ctx)
{
    gpuopt_device *dev = NULL;
    assert_int_equal(gpuopt_device_select(ctx, "opencl", &dev), GPUOPT_OK);
    assert_int_equal(dev->info.type, GPUOPT_DEVICE_TYPE_CPU);
    return dev;
}

static void pocl_level0_gives_safe_defaults(void **state)
{
    (void)state;
    gpuopt_context *ctx = context(NULL, NULL);
    gpuopt_plan *p = plan_for(ctx, pocl_device(ctx), 0);
    assert_string_equal(knob(p, "opencl.platform").value, "Portable Computing Language");
    gpuopt_knob k = knob(p, "opencl.build_options");
    assert_string_equal(k.value, "-cl-std=CL3.0");
    assert_int_equal(k.tier, 0);
    assert_non_null(strstr(k.reason, "CL_DEVICE_OPENCL_C_ALL_VERSIONS"));
    assert_int_equal(knob(p, "launch.block_size").int_value, 256);
    assert_int_equal(knob(p, "launch.block_multiple").int_value, 64);
    assert_int_equal(knob(p, "opencl.local_mem_tile_bytes").int_value, 16384);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void pocl_level1_follows_the_device(void **state)
{
    (void)state;
    gpuopt_context *ctx = context(NULL, NULL);
    gpuopt_device *dev = pocl_device(ctx);
    const ocl_facts *f = &((ocl_dev_priv *)dev->routes[0].priv)->facts;
    gpuopt_plan *p = plan_for(ctx, dev, 1);
    gpuopt_knob k = knob(p, "launch.block_multiple");
    assert_int_equal(k.tier, 1);
    assert_int_equal(k.source, GPUOPT_SOURCE_DETECTED);
    assert_int_equal(k.int_value, f->pref_multiple);
    assert_non_null(strstr(k.reason, "preferred work-group multiple"));
    k = knob(p, "launch.block_size");
    assert_int_equal(k.int_value % f->pref_multiple, 0);
    assert_true(k.int_value <= f->max_wg && k.int_value <= 256);
    k = knob(p, "opencl.local_mem_tile_bytes");
    assert_int_equal(k.int_value, 32768); /* emulated local memory (CL_GLOBAL) */
    assert_non_null(strstr(k.reason, "emulated"));
    k = knob(p, "opencl.build_options");
    assert_string_equal(k.value, "-cl-std=CL3.0");
    assert_non_null(strstr(k.reason, "reduced precision is not enabled"));
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void reduced_precision_adds_fast_math_and_says_so(void **state)
{
    (void)state;
    gpuopt_context *ctx = context(NULL, "true");
    gpuopt_plan *p = plan_for(ctx, pocl_device(ctx), 1);
    gpuopt_knob k = knob(p, "opencl.build_options");
    assert_string_equal(k.value,
                        "-cl-std=CL3.0 -cl-mad-enable -cl-no-signed-zeros -cl-fast-relaxed-math");
    assert_non_null(strstr(k.reason, "allowed by the configuration"));
    gpuopt_plan_destroy(p);
    /* A precision-sensitive workload overrides the configuration. */
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.reduced_precision = 0;
    assert_int_equal(gpuopt_plan_create_for(ctx, pocl_device(ctx), 1, &w, &p), GPUOPT_OK);
    assert_string_equal(knob(p, "opencl.build_options").value, "-cl-std=CL3.0");
    assert_non_null(strstr(knob(p, "opencl.build_options").reason, "precision-sensitive"));
    gpuopt_plan_destroy(p);
    p = plan_for(ctx, pocl_device(ctx), 1);
    k = knob(p, "opencl.build_options");
    /* The options build on this device. */
    const gpo_runtime_ops *ops = gpo_backend_opencl.runtime;
    gpuopt_device *dev = pocl_device(ctx);
    gpo_rt *rt = NULL;
    assert_int_equal(ops->open(dev->routes[0].backend_state, &dev->routes[0], &rt), GPUOPT_OK);
    gpo_rt_prog *prog = NULL;
    assert_int_equal(ops->program_build(rt,
                                        "__kernel void k(__global float *x)"
                                        "{ x[0] = x[0] * 2.0f + 1.0f; }",
                                        k.value, &prog, NULL),
                     GPUOPT_OK);
    ops->close(rt);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

typedef struct expect {
    const char *name;
    int64_t multiple, block, tile;
    const char *build, *platform, *why;
} expect;

static void vendor_rules_on_synthetic_gpus(void **state)
{
    (void)state;
    static const expect want[] = {
        {"NVIDIA A100-SXM4-80GB", 32, 256, 16384, "-cl-std=CL3.0", "NVIDIA CUDA",
         "CL_DEVICE_WARP_SIZE_NV"},
        {"cpu-znver3-AMD EPYC 7763 64-Core Processor", 8, 256, 32768, "-cl-std=CL3.0",
         "Portable Computing Language", "CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE"},
        {"AMD Instinct MI250X", 64, 256, 32768, "-cl-std=CL2.0",
         "AMD Accelerated Parallel Processing", "CL_DEVICE_WAVEFRONT_WIDTH_AMD"},
        {"AMD Radeon RX 7900 XTX", 32, 256, 32768, "-cl-std=CL2.0",
         "AMD Accelerated Parallel Processing", "CL_DEVICE_WAVEFRONT_WIDTH_AMD"},
        {"Intel(R) Arc(TM) A770 Graphics", 32, 256, 32768, "-cl-std=CL3.0",
         "Intel(R) OpenCL Graphics", "CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE"},
    };
    ocl_fake_set_devices(GPO_FAKE_OPENCL, FIXTURE("gpus.json"));
    gpuopt_context *ctx = context(GPO_FAKE_OPENCL, NULL);
    int32_t n = 0;
    assert_int_equal(gpuopt_device_count(ctx, &n), GPUOPT_OK);
    assert_int_equal(n, 5);
    for (int32_t i = 0; i < n; i++) {
        gpuopt_device *dev = NULL;
        assert_int_equal(gpuopt_device_at(ctx, i, &dev), GPUOPT_OK);
        const expect *e = &want[i];
        assert_string_equal(dev->info.name, e->name);
        gpuopt_plan *p = plan_for(ctx, dev, 1);
        gpuopt_knob k = knob(p, "launch.block_multiple");
        if (k.int_value != e->multiple || !strstr(k.reason, e->why))
            fail_msg("%s: block_multiple %lld (%s)", e->name, (long long)k.int_value, k.reason);
        assert_int_equal(knob(p, "launch.block_size").int_value, e->block);
        assert_int_equal(knob(p, "opencl.local_mem_tile_bytes").int_value, e->tile);
        assert_string_equal(knob(p, "opencl.build_options").value, e->build);
        assert_string_equal(knob(p, "opencl.platform").value, e->platform);
        gpuopt_plan_destroy(p);
    }
    /* The A100 names the generic platform it was preferred over. */
    gpuopt_device *a100 = NULL;
    assert_int_equal(gpuopt_device_at(ctx, 0, &a100), GPUOPT_OK);
    gpuopt_plan *p = plan_for(ctx, a100, 0);
    assert_non_null(strstr(knob(p, "opencl.platform").reason, "Portable Computing Language"));
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
    assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), 0);
}

static void legacy_gpu_multiple_comes_from_a_probe_kernel(void **state)
{
    (void)state;
    ocl_fake_set_devices(GPO_FAKE_OPENCL, FIXTURE("legacy.json"));
    gpuopt_context *ctx = context(GPO_FAKE_OPENCL, NULL);
    gpuopt_device *dev = NULL;
    assert_int_equal(gpuopt_device_at(ctx, 0, &dev), GPUOPT_OK);
    gpuopt_plan *p = plan_for(ctx, dev, 0);
    assert_string_equal(knob(p, "opencl.build_options").value, "-cl-std=CL1.1");
    assert_non_null(strstr(knob(p, "opencl.build_options").reason, "CL_DEVICE_OPENCL_C_VERSION"));
    gpuopt_plan_destroy(p);
    p = plan_for(ctx, dev, 1);
    gpuopt_knob k = knob(p, "launch.block_multiple");
    assert_int_equal(k.int_value, 64);
    assert_non_null(strstr(k.reason, "probe kernel"));
    assert_int_equal(knob(p, "opencl.local_mem_tile_bytes").int_value, 16384);
    gpuopt_plan_destroy(p);
    /* A gfx target without AMD's query extension: the ROCm table's
     * wavefront, no probe. */
    assert_int_equal(gpuopt_device_at(ctx, 1, &dev), GPUOPT_OK);
    p = plan_for(ctx, dev, 1);
    k = knob(p, "launch.block_multiple");
    assert_int_equal(k.int_value, 64);
    assert_non_null(strstr(k.reason, "gfx906 (gcn5"));
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
    assert_int_equal(ocl_fake_live(GPO_FAKE_OPENCL), 0);
}

static void nonexistent_library_variable_is_unavailable_with_its_path(void **state)
{
    (void)state;
    gpuopt_context *ctx = context("/nonexistent", NULL);
    gpuopt_backend_info bi;
    memset(&bi, 0, sizeof bi);
    bi.struct_size = sizeof bi;
    int32_t n = 0;
    assert_int_equal(gpuopt_backend_count(ctx, &n), GPUOPT_OK);
    int found = 0;
    for (int32_t i = 0; i < n; i++) {
        assert_int_equal(gpuopt_backend_at(ctx, i, &bi), GPUOPT_OK);
        if (strcmp(bi.name, "opencl") != 0)
            continue;
        found = 1;
        assert_int_equal(bi.status, GPUOPT_BACKEND_UNAVAILABLE);
        assert_non_null(strstr(bi.reason, "/nonexistent"));
        assert_int_equal(bi.device_count, 0);
    }
    assert_true(found);
    gpuopt_context_destroy(ctx);
    unsetenv("GPUOPT_OPENCL_LIBRARY");
}

/* NULL inputs are the core's contract (asserted); what is pinned here is
 * the rules' shape in the ops table and their catalogue. */
static void rules_declare_every_knob_they_set(void **state)
{
    (void)state;
    assert_null(gpo_backend_opencl.tier2);
    /* Every knob the rules set is declared, with the type they set. */
    assert_int_equal(gpo_backend_opencl.n_knobs, 3);
    assert_non_null(gpo_knob_find(gpo_backends, gpo_n_backends, "opencl.platform"));
    assert_non_null(gpo_knob_find(gpo_backends, gpo_n_backends, "opencl.build_options"));
    assert_int_equal(
        gpo_knob_find(gpo_backends, gpo_n_backends, "opencl.local_mem_tile_bytes")->type,
        GPUOPT_KNOB_BYTES);
    assert_int_equal(gpo_knob_find(gpo_backends, gpo_n_backends, "launch.block_multiple")->type,
                     GPUOPT_KNOB_INT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pocl_level0_gives_safe_defaults),
        cmocka_unit_test(pocl_level1_follows_the_device),
        cmocka_unit_test(reduced_precision_adds_fast_math_and_says_so),
        cmocka_unit_test(vendor_rules_on_synthetic_gpus),
        cmocka_unit_test(legacy_gpu_multiple_comes_from_a_probe_kernel),
        cmocka_unit_test(nonexistent_library_variable_is_unavailable_with_its_path),
        cmocka_unit_test(rules_declare_every_knob_they_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
