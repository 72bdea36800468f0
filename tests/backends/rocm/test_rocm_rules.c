/* The ROCm knob rules through the public API, table-driven: each described
 * GPU (the HIP test double, ROCm 5 and 6 flavours, chosen with
 * GPUOPT_HIP_LIBRARY) or KFD-only GPU (a recorded topology, no runtime) x
 * workload x level -> the knobs expected and the knobs that must be absent.
 * Then the rules that read the environment (HIP_VISIBLE_DEVICES inherited,
 * ROCR_VISIBLE_DEVICES), the HSA_OVERRIDE_GFX_VERSION opt-in, and apply. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"

typedef struct wl {
    int has;
    int32_t reduced, quantized, objective, fixed;
} wl;

#define NONE                                                                                       \
    {                                                                                              \
        0, -1, 0, 0, 0                                                                             \
    }
#define THR GPUOPT_OBJECTIVE_THROUGHPUT
#define LAT GPUOPT_OBJECTIVE_LATENCY

typedef struct row {
    const char *name;
    int major;           /* HIP test double flavour; 0: no runtime, KFD tree only */
    const char *devices; /* fake device files (':'), or the KFD tree for major 0 */
    const char *device;  /* selection: "rocm:0" */
    int level;
    wl w;
    int applied;         /* level the plan reaches */
    const char *expect;  /* "name=value;..." */
    const char *absent;  /* "name;..." */
    const char *warning; /* part of a warning, or NULL for none */
} row;

#define MI300X_UUID "GPU-3d7a0f52c19e86b4"
#define NAVI31_UUID "GPU-6f2d84b1e0c7395a"
#define ALL_WORKLOAD_ABSENT "rocm.miopen_find_mode;batch.max_size"

static const row rows[] = {
    {"mi300x level 0: safe defaults, no fact read", 6, "mi300x", "rocm:0", 0, NONE, 0,
     "launch.block_size=256;launch.block_multiple=64;rocm.bf16=false;rocm.fp8=false;"
     "rocm.autocast_dtype=float32;rocm.dim_multiple=16;rocm.miopen_benchmark=false;"
     "rocm.visible_devices=" MI300X_UUID,
     "rocm.matrix_units;rocm.gfx_override_advice;"
     "rocm.hsa_override_gfx_version;" ALL_WORKLOAD_ABSENT,
     NULL},
    {"mi300x level 1 without a workload", 6, "mi300x", "rocm:0", 1, NONE, 1,
     "launch.block_size=256;launch.block_multiple=64;rocm.matrix_units=mfma;"
     "rocm.dim_multiple=16;rocm.bf16=false;rocm.fp8=false;rocm.autocast_dtype=float32;"
     "rocm.miopen_benchmark=false",
     "rocm.gfx_override_advice;" ALL_WORKLOAD_ABSENT, NULL},
    {"mi300x quantised, fixed shapes, throughput",
     6,
     "mi300x",
     "rocm:0",
     1,
     {1, 1, 1, THR, 1},
     1,
     "rocm.bf16=true;rocm.fp8=true;rocm.autocast_dtype=bfloat16;rocm.dim_multiple=32;"
     "rocm.miopen_benchmark=true;rocm.miopen_find_mode=NORMAL",
     NULL,
     NULL},
    {"mi300x reduced precision but not quantised: no fp8",
     6,
     "mi300x",
     "rocm:0",
     1,
     {1, 1, 0, THR, 0},
     1,
     "rocm.bf16=true;rocm.fp8=false;rocm.autocast_dtype=bfloat16;rocm.dim_multiple=16;"
     "rocm.miopen_benchmark=false;rocm.miopen_find_mode=DYNAMIC_HYBRID",
     NULL,
     NULL},
    {"mi300x precision-sensitive: MFMA still fits fp32",
     6,
     "mi300x",
     "rocm:0",
     1,
     {1, 0, 0, THR, 0},
     1,
     "rocm.bf16=false;rocm.fp8=false;rocm.autocast_dtype=float32;rocm.dim_multiple=16",
     NULL,
     NULL},
    {"mi300x on ROCm 5: HIP index, no UUID", 5, "mi300x", "rocm:0", 1, NONE, 1,
     "rocm.visible_devices=0;rocm.matrix_units=mfma", NULL, NULL},
    {"mi300x level 2 falls back to level 1", 6, "mi300x", "rocm:0", 2, NONE, 1,
     "launch.block_size=256;rocm.matrix_units=mfma", NULL, "level 2"},
    {"rx7900xtx reduced precision, latency, changing shapes",
     6,
     "rx7900xtx",
     "rocm:0",
     1,
     {1, 1, 0, LAT, 0},
     1,
     "launch.block_size=128;launch.block_multiple=32;rocm.matrix_units=wmma;"
     "rocm.dim_multiple=16;rocm.bf16=true;rocm.fp8=false;rocm.miopen_find_mode=FAST;"
     "rocm.autocast_dtype=bfloat16;"
     "rocm.visible_devices=" NAVI31_UUID,
     "rocm.gfx_override_advice",
     NULL},
    {"rx7900xtx precision-sensitive: WMMA offers nothing",
     5,
     "rx7900xtx",
     "rocm:0",
     1,
     {1, 0, 0, THR, 1},
     1,
     "rocm.matrix_units=wmma;rocm.bf16=false;rocm.visible_devices=0;rocm.miopen_find_mode=NORMAL;"
     "rocm.dim_multiple=4;rocm.autocast_dtype=float32",
     NULL,
     NULL},
    {"rx7900xtx level 0 keeps the wave64-safe multiple", 6, "rx7900xtx", "rocm:0", 0, NONE, 0,
     "launch.block_size=256;launch.block_multiple=64", "rocm.matrix_units", NULL},
    {"rx6900xt: listed RDNA2, no matrix units, no bf16",
     6,
     "rx6900xt",
     "rocm:0",
     1,
     {1, 1, 1, LAT, 1},
     1,
     "rocm.matrix_units=none;rocm.bf16=false;rocm.fp8=false;rocm.miopen_find_mode=HYBRID;"
     "launch.block_size=128;rocm.autocast_dtype=float16;rocm.dim_multiple=8",
     "rocm.gfx_override_advice",
     NULL},
    {"rx6700xt: unlisted gfx1031 gets advice, never the variable", 6, "rx6700xt", "rocm:0", 1, NONE,
     1, "rocm.gfx_override_advice=10.3.0;rocm.matrix_units=none", "rocm.hsa_override_gfx_version",
     NULL},
    {"rx6700xt level 0 gives no advice", 6, "rx6700xt", "rocm:0", 0, NONE, 0, NULL,
     "rocm.gfx_override_advice", NULL},
    {"rx580 gcn4 on ROCm 5",
     5,
     "rx580",
     "rocm:0",
     1,
     {1, 1, 0, THR, 0},
     1,
     "launch.block_size=256;launch.block_multiple=64;rocm.matrix_units=none;rocm.bf16=false;"
     "rocm.autocast_dtype=float16;rocm.dim_multiple=8",
     "rocm.gfx_override_advice",
     /* The support matrix: ROCm 5.7 no longer supports gfx803. */
     "ROCm 5.7 no longer supports gfx803 (dropped in ROCm 4.0"},
    {"mi50 gcn5: no bf16",
     5,
     "mi50",
     "rocm:0",
     1,
     {1, 1, 0, THR, 0},
     1,
     "rocm.matrix_units=none;rocm.bf16=false;rocm.autocast_dtype=float16",
     NULL,
     NULL},
    {"mi100 cdna1: bf16 MFMA, no fp8",
     6,
     "mi100",
     "rocm:0",
     1,
     {1, 1, 1, THR, 0},
     1,
     "rocm.matrix_units=mfma;rocm.bf16=true;rocm.fp8=false;rocm.autocast_dtype=bfloat16;"
     "rocm.dim_multiple=16",
     NULL,
     NULL},
    {"mi210 cdna2: bf16, no fp8",
     6,
     "mi210",
     "rocm:0",
     1,
     {1, 1, 1, THR, 0},
     1,
     "rocm.bf16=true;rocm.fp8=false;launch.block_size=256",
     NULL,
     NULL},
    {"a target newer than the table: borrowed facts, no reduced precision by guess",
     6,
     "future-gfx1299",
     "rocm:0",
     1,
     {1, 1, 1, THR, 0},
     1,
     "rocm.bf16=false;rocm.fp8=false;rocm.autocast_dtype=float32;launch.block_multiple=32",
     "rocm.gfx_override_advice",
     NULL},
    {"two GPUs: the second is isolated by its UUID", 6, "mi300x:rx7900xtx", "rocm:1", 1, NONE, 1,
     "rocm.visible_devices=" NAVI31_UUID ";launch.block_size=128", NULL, NULL},
    {"KFD only (Phoenix APU, gfx1103): facts, advice, a warning", 0, "apu-phoenix", "rocm:0", 1,
     NONE, 1,
     "launch.block_size=128;launch.block_multiple=32;rocm.matrix_units=wmma;"
     "rocm.gfx_override_advice=11.0.0;rocm.visible_devices=0;rocm.bf16=false;"
     "rocm.dim_multiple=4",
     "rocm.hsa_override_gfx_version", "seen only in the kernel's KFD topology"},
    {"KFD only, level 2 stays at 1", 0, "apu-phoenix", "rocm:0", 2, NONE, 1,
     "rocm.matrix_units=wmma", NULL, "level 2"},
    {"KFD only (MI300X tree), fourth GPU, level 0", 0, "mi300x", "rocm:3", 0, NONE, 0,
     "rocm.visible_devices=3;launch.block_size=256", "rocm.matrix_units",
     "seen only in the kernel's KFD topology"},
    {"KFD only (RX 7900 XTX tree), reduced precision",
     0,
     "rx7900xtx",
     "rocm:0",
     1,
     {1, 1, 0, THR, 1},
     1,
     "rocm.matrix_units=wmma;rocm.dim_multiple=16;rocm.bf16=true;rocm.visible_devices=0;"
     "rocm.miopen_find_mode=NORMAL;rocm.miopen_benchmark=true;rocm.autocast_dtype=bfloat16",
     "rocm.gfx_override_advice",
     "seen only in the kernel's KFD topology"},
};

static char fake_path[3][512];

static const char *hip_path(int major)
{
    snprintf(fake_path[major - 5], sizeof fake_path[0], "%s/fakes/hip%d/libamdhip64.so.%d",
             GPO_BUILD_DIR, major, major);
    return fake_path[major - 5];
}

/* Points the environment at the row's GPUs and resets the double. */
static void environment(int major, const char *devices)
{
    char list[2048] = "", root[512];
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("ROCR_VISIBLE_DEVICES");
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("GPUOPT_KNOBS");
    setenv("GPUOPT_BACKEND", "rocm", 1);
    if (major == 0) {
        snprintf(root, sizeof root, "%s/kfd/%s", GPO_FIXTURES_DIR, devices);
        setenv("GPUOPT_SYSFS_ROOT", root, 1);
        setenv("GPUOPT_HIP_LIBRARY", "/nonexistent/libamdhip64.so.6", 1);
        return;
    }
    setenv("GPUOPT_SYSFS_ROOT", GPO_BUILD_DIR "/no-such-sysfs-root", 1);
    setenv("GPUOPT_HIP_LIBRARY", hip_path(major), 1);
    char copy[256];
    snprintf(copy, sizeof copy, "%s", devices);
    size_t len = 0;
    for (char *save = NULL, *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s/%s.json", len ? ":" : "",
                                GPO_FAKE_HIP_DEVICES_DIR, t);
    setenv("GPUOPT_FAKE_HIP_DEVICES", list, 1);
    void *h = dlopen(hip_path(major), RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    int (*reset)(void);
    void *sym = dlsym(h, "gpuoptFakeHipReset");
    memcpy(&reset, &sym, sizeof sym);
    assert_non_null(sym);
    assert_true(reset() > 0);
    dlclose(h);
}

static gpuopt_plan *make_plan(gpuopt_context **ctx, const char *device, int level, const wl *w)
{
    gpuopt_device *dev = NULL;
    gpuopt_plan *plan = NULL;
    gpuopt_workload workload;
    assert_int_equal(gpuopt_context_create(NULL, ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(*ctx, device, &dev), GPUOPT_OK);
    if (w && w->has) {
        gpuopt_workload_init(&workload);
        workload.reduced_precision = w->reduced;
        workload.quantized = w->quantized;
        workload.objective = w->objective;
        workload.fixed_shapes = w->fixed;
    }
    assert_int_equal(
        gpuopt_plan_create_for(*ctx, dev, level, w && w->has ? &workload : NULL, &plan), GPUOPT_OK);
    return plan;
}

static int has_warning(const gpuopt_plan *plan, const char *part)
{
    int32_t n = 0;
    gpuopt_plan_warning_count(plan, &n);
    for (int32_t i = 0; i < n; i++) {
        const char *text = NULL;
        if (gpuopt_plan_warning_at(plan, i, &text) == GPUOPT_OK && strstr(text, part))
            return 1;
    }
    return 0;
}

static void check_row(const row *r)
{
    gpuopt_context *ctx = NULL;
    gpuopt_knob knob;
    int32_t requested = -1, applied = -1;
    char buf[1024];

    environment(r->major, r->devices);
    gpuopt_plan *plan = make_plan(&ctx, r->device, r->level, &r->w);
    assert_int_equal(gpuopt_plan_level(plan, &requested, &applied), GPUOPT_OK);
    if (applied != r->applied)
        fail_msg("%s: level applied %d, expected %d", r->name, applied, r->applied);
    snprintf(buf, sizeof buf, "%s", r->expect ? r->expect : "");
    for (char *save = NULL, *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(t, '=');
        *eq = '\0';
        knob.struct_size = sizeof knob;
        if (gpuopt_plan_knob_find(plan, t, &knob) != GPUOPT_OK)
            fail_msg("%s: knob %s is missing", r->name, t);
        if (strcmp(knob.value, eq + 1) != 0)
            fail_msg("%s: %s = %s (%s), expected %s", r->name, t, knob.value, knob.reason, eq + 1);
        /* Every knob says why, and ROCm knobs from a rule name their tier. */
        assert_true(knob.reason && knob.reason[0]);
        assert_true(knob.tier <= r->level);
    }
    snprintf(buf, sizeof buf, "%s", r->absent ? r->absent : "");
    for (char *save = NULL, *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
        knob.struct_size = sizeof knob;
        if (gpuopt_plan_knob_find(plan, t, &knob) == GPUOPT_OK)
            fail_msg("%s: knob %s = %s should be absent (%s)", r->name, t, knob.value, knob.reason);
    }
    if (r->warning && !has_warning(plan, r->warning))
        fail_msg("%s: no warning mentions '%s'", r->name, r->warning);
    if (!r->warning) {
        int32_t n = -1;
        gpuopt_plan_warning_count(plan, &n);
        if (n != 0) {
            const char *text = "";
            gpuopt_plan_warning_at(plan, 0, &text);
            fail_msg("%s: unexpected warning: %s", r->name, text);
        }
    }
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

static void each_gpu_workload_and_level_gives_its_knobs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        check_row(&rows[i]);
}

static const char *knob_value(const gpuopt_plan *plan, const char *name, gpuopt_knob *knob)
{
    knob->struct_size = sizeof *knob;
    if (gpuopt_plan_knob_find(plan, name, knob) != GPUOPT_OK)
        return NULL;
    return knob->value;
}

static void an_inherited_hip_visible_devices_list_is_narrowed_not_renumbered(void **state)
{
    gpuopt_context *ctx = NULL;
    gpuopt_knob knob;
    (void)state;
    /* The parent shows physical GPU 1 as HIP device 0: a child must be
     * given "1", not "0". */
    environment(5, "mi300x:rx7900xtx");
    setenv("HIP_VISIBLE_DEVICES", "1,0", 1);
    /* The double applies the variable when it re-reads its devices. */
    void *h = dlopen(hip_path(5), RTLD_NOW | RTLD_LOCAL);
    int (*reset)(void);
    void *sym = dlsym(h, "gpuoptFakeHipReset");
    memcpy(&reset, &sym, sizeof sym);
    assert_int_equal(reset(), 2);
    dlclose(h);
    gpuopt_plan *plan = make_plan(&ctx, "rocm:0", 0, NULL);
    assert_string_equal(knob_value(plan, "rocm.visible_devices", &knob), "1");
    assert_non_null(strstr(knob.reason, "inherited HIP_VISIBLE_DEVICES=1,0"));
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    /* HIP skips a repeated entry: HIP device 1 under "1,1,0" is "0". */
    setenv("HIP_VISIBLE_DEVICES", "1,1,0", 1);
    h = dlopen(hip_path(5), RTLD_NOW | RTLD_LOCAL);
    sym = dlsym(h, "gpuoptFakeHipReset");
    memcpy(&reset, &sym, sizeof sym);
    reset();
    dlclose(h);
    plan = make_plan(&ctx, "rocm:1", 0, NULL);
    assert_string_equal(knob_value(plan, "rocm.visible_devices", &knob), "0");
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    unsetenv("HIP_VISIBLE_DEVICES");
}

static void a_kfd_index_counts_what_rocr_visible_devices_leaves(void **state)
{
    gpuopt_context *ctx = NULL;
    gpuopt_knob knob;
    (void)state;
    environment(0, "mi300x");
    setenv("ROCR_VISIBLE_DEVICES", "2,3", 1);
    gpuopt_plan *plan = make_plan(&ctx, "rocm:1", 0, NULL);
    assert_string_equal(knob_value(plan, "rocm.visible_devices", &knob), "1");
    assert_non_null(strstr(knob.reason, "ROCR_VISIBLE_DEVICES=2,3"));
    assert_non_null(strstr(knob.reason, "no HIP runtime"));
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    unsetenv("ROCR_VISIBLE_DEVICES");
}

static void hsa_override_is_exported_only_when_the_user_opts_in(void **state)
{
    gpuopt_context *ctx = NULL;
    gpuopt_knob knob;
    char *env = NULL;
    (void)state;
    environment(6, "rx6700xt");
    gpuopt_plan *plan = make_plan(&ctx, "rocm:0", 1, NULL);
    assert_string_equal(knob_value(plan, "rocm.gfx_override_advice", &knob), "10.3.0");
    assert_null(knob.env); /* advice is a plain value, never exported */
    assert_non_null(strstr(knob.reason, "UNSAFE"));
    assert_non_null(strstr(knob.reason, "rocm.hsa_override_gfx_version=10.3.0"));
    assert_null(knob_value(plan, "rocm.hsa_override_gfx_version", &knob));
    assert_int_equal(gpuopt_plan_to_env(plan, &env), GPUOPT_OK);
    assert_null(strstr(env, "HSA_OVERRIDE_GFX_VERSION"));
    assert_non_null(strstr(env, "HIP_VISIBLE_DEVICES"));
    gpuopt_free(env);
    gpuopt_plan_destroy(plan);

    /* Opting in through the API: the value is the user's, and exported. */
    assert_int_equal(gpuopt_context_set_knob(ctx, "rocm.hsa_override_gfx_version", "10.3.0"),
                     GPUOPT_OK);
    gpuopt_device *dev = NULL;
    assert_int_equal(gpuopt_device_select(ctx, "rocm:0", &dev), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, dev, 1, &plan), GPUOPT_OK);
    assert_string_equal(knob_value(plan, "rocm.hsa_override_gfx_version", &knob), "10.3.0");
    assert_int_equal(knob.source, GPUOPT_SOURCE_API);
    assert_string_equal(knob.env, "HSA_OVERRIDE_GFX_VERSION");
    assert_int_equal(gpuopt_plan_to_env(plan, &env), GPUOPT_OK);
    assert_non_null(
        strstr(env, ": \"${HSA_OVERRIDE_GFX_VERSION=10.3.0}\"; export HSA_OVERRIDE_GFX_VERSION\n"));
    gpuopt_free(env);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);

    /* Or through GPUOPT_KNOBS. */
    environment(6, "rx6700xt");
    setenv("GPUOPT_KNOBS", "rocm.hsa_override_gfx_version=10.3.0", 1);
    plan = make_plan(&ctx, "rocm:0", 1, NULL);
    assert_string_equal(knob_value(plan, "rocm.hsa_override_gfx_version", &knob), "10.3.0");
    assert_int_equal(knob.source, GPUOPT_SOURCE_ENV);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    unsetenv("GPUOPT_KNOBS");
}

static void apply_sets_rocm_variables_but_keeps_the_users(void **state)
{
    gpuopt_context *ctx = NULL;
    char *report = NULL;
    wl w = {1, 1, 0, THR, 1};
    (void)state;
    environment(6, "mi300x");
    unsetenv("HIP_VISIBLE_DEVICES");
    setenv("MIOPEN_FIND_MODE", "FAST", 1);
    gpuopt_plan *plan = make_plan(&ctx, "rocm:0", 1, &w);
    /* Planning read the environment before it is changed. */
    assert_int_equal(gpuopt_plan_apply(plan, GPUOPT_APPLY_ENV, &report), GPUOPT_OK);
    assert_non_null(strstr(report, "set HIP_VISIBLE_DEVICES=" MI300X_UUID));
    assert_non_null(strstr(report, "kept MIOPEN_FIND_MODE=FAST"));
    assert_string_equal(getenv("MIOPEN_FIND_MODE"), "FAST");
    assert_string_equal(getenv("HIP_VISIBLE_DEVICES"), MI300X_UUID);
    gpuopt_free(report);
    /* No device setting is ROCm's to own. */
    assert_int_equal(gpuopt_plan_apply(plan, GPUOPT_APPLY_DEVICE, &report), GPUOPT_OK);
    assert_non_null(strstr(report, "owns none"));
    gpuopt_free(report);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("MIOPEN_FIND_MODE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_gpu_workload_and_level_gives_its_knobs),
        cmocka_unit_test(an_inherited_hip_visible_devices_list_is_narrowed_not_renumbered),
        cmocka_unit_test(a_kfd_index_counts_what_rocr_visible_devices_leaves),
        cmocka_unit_test(hsa_override_is_exported_only_when_the_user_opts_in),
        cmocka_unit_test(apply_sets_rocm_variables_but_keeps_the_users),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
