/* Latency advice through the public API (docs/latency.md): on the H100 and
 * T4 doubles and on PoCL, a latency-oriented workload (the real-time audio
 * case) and a throughput one of the same sizes get different plans, each
 * knob with its reason, and every number in a reason is one the plan holds:
 * detected (copy engines, memory), measured (PoCL at level 2; on the
 * doubles, which run no kernels, measurements given as the user's
 * overrides of the measured.* knobs, as a real GPU's level 2 would set
 * them) or described. Precision-sensitive latency work keeps fp32. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"

#define MIB (1ull << 20)

static char cache_dir[512];

static gpuopt_context *context(const char *backends)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = backends;
    o.log_level = "off";
    o.cache_dir = cache_dir;
    gpuopt_context *ctx = NULL;
    if (gpuopt_context_create(&o, &ctx) != GPUOPT_OK)
        fail_msg("context: %s", gpuopt_last_error());
    return ctx;
}

/* Ten users' phrases per step, under 100 ms, fp32 throughout. */
static gpuopt_workload audio(int32_t objective)
{
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.objective = objective;
    w.reduced_precision = 0;
    w.fixed_shapes = 1;
    w.model_bytes = 1ull << 30;
    w.item_bytes = 48 * MIB;
    w.items_per_step = 10;
    w.launches_per_step = 4000;
    w.step_time_ns = 100000000;
    w.h2d_bytes_per_step = 64 << 10;
    w.d2h_bytes_per_step = 5 * MIB;
    return w;
}

static gpuopt_plan *plan_of(gpuopt_context *ctx, const char *device, int level,
                            const gpuopt_workload *w)
{
    gpuopt_device *d = NULL;
    gpuopt_plan *p = NULL;
    if (gpuopt_device_select(ctx, device, &d) != GPUOPT_OK ||
        gpuopt_plan_create_for(ctx, d, level, w, &p) != GPUOPT_OK)
        fail_msg("%s: %s", device, gpuopt_last_error());
    return p;
}

static gpuopt_knob knob(const gpuopt_plan *p, const char *name)
{
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    if (gpuopt_plan_knob_find(p, name, &k) != GPUOPT_OK)
        fail_msg("%s is absent", name);
    return k;
}

static int has(const gpuopt_plan *p, const char *name)
{
    gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    return gpuopt_plan_knob_find(p, name, &k) == GPUOPT_OK;
}

static void contains(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("\"%s\" not in: %s", part, text);
}

static int warned(const gpuopt_plan *p, const char *part)
{
    int32_t n = 0;
    gpuopt_plan_warning_count(p, &n);
    for (int32_t i = 0; i < n; i++) {
        const char *w = NULL;
        if (gpuopt_plan_warning_at(p, i, &w) == GPUOPT_OK && strstr(w, part))
            return 1;
    }
    return 0;
}

static const char *const latency_knobs[] = {"launch.graph", "warmup.runs", "prealloc.bytes",
                                            "transfer.streams"};

/* What a real GPU's level 2 would measure, given as overrides. */
static void measured(gpuopt_context *ctx, const char *launch_ns, const char *h2d, const char *d2h,
                     const char *copy_ns)
{
    assert_int_equal(gpuopt_context_set_knob(ctx, "measured.launch_latency_ns", launch_ns),
                     GPUOPT_OK);
    assert_int_equal(gpuopt_context_set_knob(ctx, "measured.h2d_pinned", h2d), GPUOPT_OK);
    assert_int_equal(gpuopt_context_set_knob(ctx, "measured.d2h_pinned", d2h), GPUOPT_OK);
    assert_int_equal(gpuopt_context_set_knob(ctx, "measured.h2d_latency_ns", copy_ns), GPUOPT_OK);
    assert_int_equal(gpuopt_context_set_knob(ctx, "measured.d2h_latency_ns", copy_ns), GPUOPT_OK);
}

static void latency_and_throughput_differ_on_the_h100_and_t4_doubles(void **state)
{
    (void)state;
    static const struct {
        const char *id, *launch_ns, *launch_words, *h2d, *d2h;
        const char *graph_arithmetic, *streams_arithmetic;
    } gpus[] = {
        {"cuda:0", "4500", "4.5 us", "25000000000", "26000000000",
         "launch overhead 4000 launches x 4.5 us = 18 ms per step, 18.0% of the 100 ms step "
         "target",
         "device-to-host 5 MiB at 26 GB/s (measured.d2h_pinned) + 8 us per copy = 210 us"},
        {"cuda:1", "7000", "7 us", "12000000000", "13000000000",
         "launch overhead 4000 launches x 7 us = 28 ms per step, 28.0% of the 100 ms step target",
         "device-to-host 5 MiB at 13 GB/s (measured.d2h_pinned) + 8 us per copy = 411 us"},
    };
    gpuopt_context *ctx = context("cuda");
    for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
        gpuopt_workload lat = audio(GPUOPT_OBJECTIVE_LATENCY);
        gpuopt_workload thr = audio(GPUOPT_OBJECTIVE_THROUGHPUT);

        /* Throughput: lazy loading, no latency knob at all. */
        gpuopt_plan *p = plan_of(ctx, gpus[g].id, 1, &thr);
        assert_string_equal(knob(p, "cuda.module_loading").value, "LAZY");
        contains(knob(p, "cuda.module_loading").reason, "a throughput workload amortises");
        for (size_t i = 0; i < 4; i++)
            if (has(p, latency_knobs[i]))
                fail_msg("%s: a throughput plan has %s", gpus[g].id, latency_knobs[i]);
        gpuopt_plan_destroy(p);

        /* Latency at level 1: what needs no measurement, and warnings for
         * what does. */
        p = plan_of(ctx, gpus[g].id, 1, &lat);
        gpuopt_knob k = knob(p, "cuda.module_loading");
        assert_string_equal(k.value, "EAGER");
        assert_string_equal(k.env, "CUDA_MODULE_LOADING");
        contains(k.reason, "the workload is latency-oriented");
        contains(k.reason, "the CUDA 13.0 driver honours it");
        assert_string_equal(knob(p, "warmup.runs").value, "1");
        k = knob(p, "prealloc.bytes");
        assert_int_equal(k.int_value, 480 * MIB + 480 * MIB / 100 * 10);
        contains(k.reason, "a step holds 10 items x 48 MiB = 480 MiB, + 10% scratch");
        assert_false(has(p, "launch.graph"));
        assert_false(has(p, "transfer.streams"));
        assert_true(warned(p, "needs the launch latency, which level 2 measures"));
        assert_true(warned(p, "needs the transfer rates, which level 2 measures"));
        /* fp32 everywhere for precision-sensitive audio. */
        assert_string_equal(knob(p, "cuda.bf16").value, "false");
        assert_string_equal(knob(p, "cuda.fp8").value, "false");
        assert_string_equal(knob(p, "cuda.autocast_dtype").value, "float32");
        assert_string_equal(knob(p, "cuda.tf32").value, "false");
        if (g == 0) /* the T4 has no TF32 to keep out */
            assert_string_equal(knob(p, "cuda.tf32_override").value, "0");
        gpuopt_plan_destroy(p);

        /* With the measurements: the graph pays, the transfers do not. */
        measured(ctx, gpus[g].launch_ns, gpus[g].h2d, gpus[g].d2h, "8000");
        p = plan_of(ctx, gpus[g].id, 1, &lat);
        k = knob(p, "launch.graph");
        assert_string_equal(k.value, "true");
        contains(k.reason, "measured.launch_latency_ns = ");
        contains(k.reason, gpus[g].launch_ns);
        contains(k.reason, "(set by gpuopt_context_set_knob)");
        contains(k.reason, gpus[g].graph_arithmetic);
        contains(k.reason, "capture the step once in a CUDA graph");
        contains(k.reason, "torch.compile(mode=\"reduce-overhead\")");
        k = knob(p, "warmup.runs");
        assert_string_equal(k.value, "2");
        contains(k.reason, "launch.graph = true");
        k = knob(p, "transfer.streams");
        assert_string_equal(k.value, "1");
        contains(k.reason, gpus[g].streams_arithmetic);
        contains(k.reason, "under the 10% at which overlapping them with kernels pays");
        gpuopt_plan_destroy(p);

        /* 80 x the output: the copies are a sixth of the step or more, and the GPU's
         * three copy engines (deviceQuery's, in the double) can overlap them. */
        lat.d2h_bytes_per_step = 400 * MIB;
        p = plan_of(ctx, gpus[g].id, 1, &lat);
        k = knob(p, "transfer.streams");
        assert_string_equal(k.value, "3");
        contains(k.reason, "and the device has 3 copy engines: split the step over 3 streams "
                           "(copies in, kernels, copies out)");
        contains(k.reason, "pinned host memory");
        gpuopt_plan_destroy(p);

        /* Shapes that change: no graph, and why. */
        lat.fixed_shapes = 0;
        p = plan_of(ctx, gpus[g].id, 1, &lat);
        k = knob(p, "launch.graph");
        assert_string_equal(k.value, "false");
        contains(k.reason, "the shapes are not described as static");
        assert_string_equal(knob(p, "warmup.runs").value, "1");
        contains(knob(p, "warmup.runs").reason, "once for each input shape served");
        gpuopt_plan_destroy(p);
        measured(ctx, NULL, NULL, NULL, NULL);
    }
    gpuopt_context_destroy(ctx);
}

/* A pool above max_split_size_mb would be kept whole by PyTorch: the
 * allocator string leaves that option out, and says why. */
static void a_large_pool_drops_max_split_size_from_the_allocator_settings(void **state)
{
    (void)state;
    gpuopt_context *ctx = context("cuda");
    gpuopt_workload w = audio(GPUOPT_OBJECTIVE_LATENCY);
    gpuopt_plan *p = plan_of(ctx, "cuda:0", 1, &w);
    /* 10 x 48 MiB x 1.1 = 528 MiB: below the H100's 1024 MiB split size. */
    assert_string_equal(knob(p, "cuda.alloc_conf").value,
                        "expandable_segments:True,max_split_size_mb:1024,"
                        "garbage_collection_threshold:0.90");
    gpuopt_plan_destroy(p);
    w.items_per_step = 40; /* 40 x 48 MiB x 1.1 = 2.06 GiB */
    p = plan_of(ctx, "cuda:0", 1, &w);
    gpuopt_knob k = knob(p, "cuda.alloc_conf");
    assert_string_equal(k.value, "expandable_segments:True,garbage_collection_threshold:0.90");
    contains(k.reason, "max_split_size_mb:1024 left out: the pre-allocated pool of 2.1 GiB "
                       "(prealloc.bytes) is one cached block above it");
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void hip_loads_every_code_object_at_start_for_latency_work(void **state)
{
    (void)state;
    gpuopt_context *ctx = context("rocm");
    gpuopt_workload lat = audio(GPUOPT_OBJECTIVE_LATENCY), thr = audio(GPUOPT_OBJECTIVE_THROUGHPUT);
    gpuopt_plan *p = plan_of(ctx, "rocm:0", 1, &lat);
    gpuopt_knob k = knob(p, "rocm.deferred_loading");
    assert_string_equal(k.value, "0");
    assert_string_equal(k.env, "HIP_ENABLE_DEFERRED_LOADING");
    gpuopt_plan_destroy(p);
    p = plan_of(ctx, "rocm:0", 1, &thr);
    assert_string_equal(knob(p, "rocm.deferred_loading").value, "1");
    gpuopt_plan_destroy(p);
    p = plan_of(ctx, "rocm:0", 1, NULL);
    assert_false(has(p, "rocm.deferred_loading"));
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

/* PoCL measures for real at level 2: the numbers in the reasons are the
 * plan's own measured knobs. */
static void pocl_measures_and_the_reasons_carry_the_measurements(void **state)
{
    (void)state;
    gpuopt_context *ctx = context("opencl");
    gpuopt_device *d = NULL;
    if (gpuopt_device_select(ctx, "opencl", &d) != GPUOPT_OK) {
        gpuopt_context_destroy(ctx);
        skip(); /* PoCL may be missing on a build machine */
    }
    gpuopt_workload lat = audio(GPUOPT_OBJECTIVE_LATENCY), thr = audio(GPUOPT_OBJECTIVE_THROUGHPUT);
    lat.launches_per_step = 40;
    gpuopt_plan *p = plan_of(ctx, "opencl:0", 2, &lat);
    int32_t applied = 0;
    assert_int_equal(gpuopt_plan_level(p, NULL, &applied), GPUOPT_OK);
    assert_int_equal(applied, 2);
    gpuopt_knob lk = knob(p, "measured.launch_latency_ns");
    gpuopt_knob g = knob(p, "launch.graph");
    char share[64];
    snprintf(share, sizeof share, "%.1f%% of the 100 ms step target",
             100.0 * 40 * (double)lk.int_value / 1e8);
    contains(g.reason, "launch overhead 40 launches x ");
    contains(g.reason, share);
    char value[64];
    snprintf(value, sizeof value, "measured.launch_latency_ns = %lld (measured on the device)",
             (long long)lk.int_value);
    contains(g.reason, value);
    contains(g.reason, lk.int_value * 40 * 10 < 100000000 ? "under the 10%" : "capture the step");
    gpuopt_knob s = knob(p, "transfer.streams");
    assert_string_equal(s.value, "1");
    contains(s.reason, "is a CPU device, whose memory is host memory");
    snprintf(value, sizeof value, "measured.d2h_latency_ns = %lld (measured on the device)",
             (long long)knob(p, "measured.d2h_latency_ns").int_value);
    contains(s.reason, value);
    assert_true(has(p, "warmup.runs"));
    assert_true(has(p, "prealloc.bytes"));
    gpuopt_plan_destroy(p);
    p = plan_of(ctx, "opencl:0", 2, &thr);
    for (size_t i = 0; i < 4; i++)
        if (has(p, latency_knobs[i]))
            fail_msg("PoCL: a throughput plan has %s", latency_knobs[i]);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

static void malformed_step_descriptions_are_refused_naming_the_field(void **state)
{
    (void)state;
    gpuopt_context *ctx = context("cpu");
    gpuopt_plan *p = (gpuopt_plan *)1;
    static const struct {
        const char *field;
        int which;
    } bad[] = {{"launches_per_step", 0},
               {"items_per_step", 1},
               {"step_time_ns", 2},
               {"sizes above 2^63", 3}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpuopt_workload w = audio(GPUOPT_OBJECTIVE_LATENCY);
        if (bad[i].which == 0)
            w.launches_per_step = -1;
        else if (bad[i].which == 1)
            w.items_per_step = -5;
        else if (bad[i].which == 2)
            w.step_time_ns = 3600000000001ull;
        else
            w.d2h_bytes_per_step = 1ull << 63;
        assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 1, &w, &p), GPUOPT_ERR_OUT_OF_RANGE);
        assert_null(p);
        contains(gpuopt_last_error(), bad[i].field);
        p = (gpuopt_plan *)1;
    }
    /* A caller built before the step fields gets them as "unknown". */
    gpuopt_workload w = audio(GPUOPT_OBJECTIVE_LATENCY);
    w.struct_size = offsetof(gpuopt_workload, launches_per_step);
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, 1, &w, &p), GPUOPT_OK);
    assert_false(has(p, "launch.graph"));
    assert_false(has(p, "transfer.streams"));
    assert_true(has(p, "warmup.runs"));
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("ROCR_VISIBLE_DEVICES");
    snprintf(cache_dir, sizeof cache_dir, "%s/tests/memory/latency-cache-XXXXXX", GPO_BUILD_DIR);
    if (!mkdtemp(cache_dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(latency_and_throughput_differ_on_the_h100_and_t4_doubles),
        cmocka_unit_test(a_large_pool_drops_max_split_size_from_the_allocator_settings),
        cmocka_unit_test(hip_loads_every_code_object_at_start_for_latency_work),
        cmocka_unit_test(pocl_measures_and_the_reasons_carry_the_measurements),
        cmocka_unit_test(malformed_step_descriptions_are_refused_naming_the_field),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[640];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
    return system(cmd) == 0 ? rc : 1;
}
