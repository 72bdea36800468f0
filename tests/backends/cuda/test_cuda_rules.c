/* The CUDA tier 0/1 rules through the public API, table-driven: every
 * test-double GPU (tests/fakes/cuda/devices, all of them in one fake
 * driver, in the order of DEVICES below; CTest sets GPUOPT_CUDA_LIBRARY and
 * GPUOPT_FAKE_CUDA_DEVICES) x workload x level -> the exact set of knobs,
 * their values, tier, source and environment variable. The expected values
 * were computed apart from the C rules, by a model written from
 * docs/knobs.md ("CUDA backend"), from the device descriptions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"

/* cuda:N is DEVICES[N]: the order of GPUOPT_FAKE_CUDA_DEVICES. */
static const char *const devices[] = {
    "jetson-nano",     "k80",     "p100-sxm2", "v100-sxm2", "t4",      "a100-sxm4-40gb", "rtx3090",
    "jetson-agx-orin", "rtx4090", "h100-sxm5", "b200",      "rtx5090",
};
#define N_DEVICES (sizeof devices / sizeof devices[0])

enum { W_NONE, W_SENSITIVE, W_REDUCED_QUANTISED, W_FIXED_SHAPES, W_REDUCED, N_WORKLOADS };
static const char *const workload_names[] = {"none", "precision-sensitive", "reduced+quantised",
                                             "fixed shapes", "reduced, not quantised"};

/* Level 0 reads no fact: the same knobs on every GPU. TF32 is left to the
 * framework (no cuda.tf32, nothing exported) except for precision-sensitive
 * work, which gets it off and enforced. */
static const char level0[] =
    "launch.block_multiple=32 launch.block_size=256 cuda.module_loading=LAZY "
    "cuda.cudnn_benchmark=false cuda.bf16=false cuda.fp8=false "
    "cuda.autocast_dtype=float32 cuda.dim_multiple=8 !cuda.torch_tf32_override";
static const char level0_tf32[] = "!cuda.tf32 !cuda.tf32_override";
static const char level0_sensitive[] = "cuda.tf32=false cuda.tf32_override=0";

#include "cuda_rules_table.h"

/* The environment variable each knob exports to; the rest export none. */
static const struct {
    const char *knob, *env;
} env_knobs[] = {
    {"cuda.module_loading", "CUDA_MODULE_LOADING"},
    {"cuda.tf32_override", "NVIDIA_TF32_OVERRIDE"},
    {"cuda.torch_tf32_override", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"},
    {"cuda.cublaslt_workspace_kib", "CUBLASLT_WORKSPACE_SIZE"},
    {"cuda.cublas_workspace_config", "CUBLAS_WORKSPACE_CONFIG"},
    {"cuda.alloc_conf", "PYTORCH_CUDA_ALLOC_CONF"},
};

static const char *env_of(const char *knob)
{
    for (size_t i = 0; i < sizeof env_knobs / sizeof env_knobs[0]; i++)
        if (strcmp(env_knobs[i].knob, knob) == 0)
            return env_knobs[i].env;
    return NULL;
}

static gpuopt_context *ctx_with(const char *reduced_precision)
{
    gpuopt_options o;
    gpuopt_context *ctx = NULL;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = "cuda";
    o.config_path = "";
    o.reduced_precision = reduced_precision;
    assert_int_equal(gpuopt_context_create(&o, &ctx), GPUOPT_OK);
    return ctx;
}

static gpuopt_plan *plan_for(gpuopt_context *ctx, size_t device, int workload, int level)
{
    gpuopt_device *dev = NULL;
    gpuopt_plan *plan = NULL;
    gpuopt_workload w;
    char id[32];
    snprintf(id, sizeof id, "cuda:%zu", device);
    assert_int_equal(gpuopt_device_select(ctx, id, &dev), GPUOPT_OK);
    gpuopt_workload_init(&w);
    w.reduced_precision = workload == W_SENSITIVE                                    ? 0
                          : workload == W_REDUCED_QUANTISED || workload == W_REDUCED ? 1
                                                                                     : -1;
    w.quantized = workload == W_REDUCED_QUANTISED;
    w.fixed_shapes = workload == W_FIXED_SHAPES;
    gpuopt_status st = workload == W_NONE ? gpuopt_plan_create(ctx, dev, level, &plan)
                                          : gpuopt_plan_create_for(ctx, dev, level, &w, &plan);
    if (st)
        fail_msg("%s: %s", id, gpuopt_last_error());
    return plan;
}

/* Checks every "knob=value" (present with that value) and "!knob" (absent)
 * of `expect`; returns how many knobs it says are present. */
static int check_knobs(const gpuopt_plan *plan, const char *expect, int level, const char *what)
{
    char buf[2048];
    int present = 0;
    snprintf(buf, sizeof buf, "%s", expect);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save)) {
        gpuopt_knob k;
        memset(&k, 0, sizeof k);
        k.struct_size = sizeof k;
        if (tok[0] == '!') {
            if (gpuopt_plan_knob_find(plan, tok + 1, &k) != GPUOPT_ERR_NOT_FOUND)
                fail_msg("%s: %s is set (%s) but should be absent", what, tok + 1, k.value);
            continue;
        }
        char *eq = strchr(tok, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (gpuopt_plan_knob_find(plan, tok, &k) != GPUOPT_OK)
            fail_msg("%s: %s is missing", what, tok);
        if (strcmp(k.value, eq + 1) != 0)
            fail_msg("%s: %s = %s, expected %s (%s)", what, tok, k.value, eq + 1, k.reason);
        if (k.tier != level || k.source != (level ? GPUOPT_SOURCE_DETECTED : GPUOPT_SOURCE_DEFAULT))
            fail_msg("%s: %s has tier %d source %d", what, tok, (int)k.tier, (int)k.source);
        if (!k.reason || strlen(k.reason) < 20)
            fail_msg("%s: %s has no real reason: '%s'", what, tok, k.reason ? k.reason : "");
        const char *env = env_of(tok);
        if ((env == NULL) != (k.env == NULL) || (env && strcmp(env, k.env) != 0))
            fail_msg("%s: %s exports to %s, expected %s", what, tok, k.env ? k.env : "nothing",
                     env ? env : "nothing");
        present++;
    }
    return present;
}

static void every_gpu_and_workload_gives_the_table_s_knobs(void **state)
{
    (void)state;
    gpuopt_context *ctx = ctx_with(NULL);
    int plans = 0;
    for (size_t d = 0; d < N_DEVICES; d++) {
        const struct device_row *dr = NULL;
        for (size_t i = 0; i < sizeof device_rows / sizeof device_rows[0]; i++)
            if (strcmp(device_rows[i].device, devices[d]) == 0)
                dr = &device_rows[i];
        assert_non_null(dr);
        for (int w = 0; w < N_WORKLOADS; w++) {
            const struct workload_row *wr = NULL;
            for (size_t i = 0; i < sizeof workload_rows / sizeof workload_rows[0]; i++)
                if (strcmp(workload_rows[i].device, devices[d]) == 0 &&
                    workload_rows[i].workload == w)
                    wr = &workload_rows[i];
            assert_non_null(wr);
            for (int level = 0; level <= 1; level++) {
                char what[128];
                int32_t count = 0, requested = 0, applied = 0;
                snprintf(what, sizeof what, "%s, workload %s, level %d", devices[d],
                         workload_names[w], level);
                gpuopt_plan *plan = plan_for(ctx, d, w, level);
                assert_int_equal(gpuopt_plan_level(plan, &requested, &applied), GPUOPT_OK);
                assert_int_equal(applied, level);
                int present =
                    level == 0
                        ? check_knobs(plan, level0, 0, what) +
                              check_knobs(plan, w == W_SENSITIVE ? level0_sensitive : level0_tf32,
                                          0, what)
                        : check_knobs(plan, dr->knobs, 1, what) +
                              check_knobs(plan, wr->knobs, 1, what);
                assert_int_equal(gpuopt_plan_knob_count(plan, &count), GPUOPT_OK);
                if (count != present)
                    fail_msg("%s: %d knobs, the table says %d", what, (int)count, present);
                gpuopt_plan_destroy(plan);
                plans++;
            }
        }
    }
    assert_int_equal(plans, (int)(N_DEVICES * N_WORKLOADS * 2));
    gpuopt_context_destroy(ctx);
}

static const char *reason_of(const gpuopt_plan *plan, const char *name)
{
    static gpuopt_knob k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    if (gpuopt_plan_knob_find(plan, name, &k) != GPUOPT_OK)
        return "";
    return k.reason;
}

/* FP8 needs capability, permission and a quantised workload: the reason
 * names the first that is missing. */
static void fp8_reason_names_the_condition_that_failed(void **state)
{
    (void)state;
    static const struct {
        const char *device;
        int workload;
        const char *says;
    } rows[] = {
        {"t4", W_REDUCED_QUANTISED,
         "compute capability 7.5 has no FP8 tensor cores (8.9 and later)"},
        {"a100-sxm4-40gb", W_REDUCED_QUANTISED, "compute capability 8.0 has no FP8 tensor cores"},
        {"h100-sxm5", W_NONE, "but reduced precision is not enabled"},
        {"h100-sxm5", W_SENSITIVE, "but the workload is precision-sensitive"},
        {"h100-sxm5", W_FIXED_SHAPES, "but reduced precision is not enabled"},
        {"h100-sxm5", W_REDUCED, "but the workload does not say it is quantised"},
        {"rtx4090", W_REDUCED_QUANTISED,
         "compute capability 8.9 >= 8.9 has FP8 tensor cores, the workload accepts reduced "
         "precision and the workload is quantised"},
    };
    gpuopt_context *ctx = ctx_with(NULL);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t d = 0;
        while (d < N_DEVICES && strcmp(devices[d], rows[i].device) != 0)
            d++;
        assert_true(d < N_DEVICES);
        gpuopt_plan *plan = plan_for(ctx, d, rows[i].workload, 1);
        const char *why = reason_of(plan, "cuda.fp8");
        if (!strstr(why, rows[i].says))
            fail_msg("%s, %s: '%s' does not say '%s'", rows[i].device,
                     workload_names[rows[i].workload], why, rows[i].says);
        gpuopt_plan_destroy(plan);
    }
    gpuopt_context_destroy(ctx);
}

/* Without a workload, the configuration's reduced_precision decides; FP8
 * still needs a workload that says it is quantised. */
static void configuration_allows_reduced_precision_without_a_workload(void **state)
{
    (void)state;
    gpuopt_context *ctx = ctx_with("true");
    gpuopt_plan *plan = plan_for(ctx, 9 /* h100-sxm5 */, W_NONE, 1);
    assert_string_equal(devices[9], "h100-sxm5");
    assert_true(check_knobs(plan,
                            "cuda.tf32=true cuda.bf16=true cuda.fp8=false "
                            "cuda.autocast_dtype=bfloat16 cuda.dim_multiple=64 "
                            "!cuda.tf32_override !cuda.cublas_workspace_config",
                            1, "h100-sxm5 with reduced_precision=true") == 5);
    assert_non_null(strstr(reason_of(plan, "cuda.fp8"), "no workload was described"));
    assert_non_null(strstr(reason_of(plan, "cuda.bf16"), "allowed by the configuration"));
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

/* The arithmetic is in the reasons, not only the values. */
static void memory_reasons_carry_their_arithmetic(void **state)
{
    (void)state;
    gpuopt_context *ctx = ctx_with(NULL);
    gpuopt_plan *nano = plan_for(ctx, 0, W_SENSITIVE, 1);
    assert_string_equal(devices[0], "jetson-nano");
    assert_non_null(
        strstr(reason_of(nano, "cuda.cublas_workspace_bytes"),
               "1.5 GiB free / 512 rounded down to a power of two = 2 MiB: the cap wins"));
    assert_non_null(
        strstr(reason_of(nano, "cuda.alloc.max_split_mb"), "1.5 GiB free / 64 = 24 MiB"));
    assert_non_null(strstr(reason_of(nano, "cuda.alloc.gc_threshold_percent"),
                           "keep max(10%, 1 GiB) = 1 GiB of 1.5 GiB free"));
    assert_non_null(strstr(reason_of(nano, "cuda.cublas_workspace_config"), "16 KiB"));
    assert_non_null(strstr(reason_of(nano, "cuda.alloc.expandable_segments"),
                           "does not say the device supports virtual memory management"));
    gpuopt_plan_destroy(nano);
    gpuopt_plan *a100 = plan_for(ctx, 5, W_NONE, 1);
    assert_string_equal(devices[5], "a100-sxm4-40gb");
    assert_non_null(
        strstr(reason_of(a100, "cuda.l2_persisting_bytes"),
               "min(3/4 of the 40 MiB L2 = 30 MiB, the device's maximum set-aside 30 MiB"));
    assert_non_null(strstr(reason_of(a100, "launch.block_size"),
                           "2048 threads per SM / 256 = 8 resident blocks, within the SM's 32"));
    gpuopt_plan_destroy(a100);
    gpuopt_context_destroy(ctx);
}

/* Everything exported is also a plain value, and the shell export carries
 * the environment knobs. */
static void environment_knobs_are_exported_and_plain(void **state)
{
    (void)state;
    gpuopt_context *ctx = ctx_with(NULL);
    gpuopt_plan *plan = plan_for(ctx, 9, W_SENSITIVE, 1);
    char *text = NULL;
    assert_int_equal(gpuopt_plan_to_env(plan, &text), GPUOPT_OK);
    assert_non_null(
        strstr(text, ": \"${CUDA_MODULE_LOADING=LAZY}\"; export CUDA_MODULE_LOADING\n"));
    assert_non_null(strstr(text, ": \"${NVIDIA_TF32_OVERRIDE=0}\"; export NVIDIA_TF32_OVERRIDE\n"));
    assert_non_null(
        strstr(text, ": \"${CUBLAS_WORKSPACE_CONFIG=:4096:8}\"; export CUBLAS_WORKSPACE_CONFIG\n"));
    assert_non_null(
        strstr(text, ": \"${CUBLASLT_WORKSPACE_SIZE=32768}\"; export CUBLASLT_WORKSPACE_SIZE\n"));
    assert_non_null(strstr(text, ": \"${PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,"
                                 "max_split_size_mb:1024,garbage_collection_threshold:0.90}\"; "
                                 "export PYTORCH_CUDA_ALLOC_CONF\n"));
    gpuopt_free(text);
    /* The plain counterparts. */
    assert_true(check_knobs(plan,
                            "cuda.tf32=false cuda.cublas_workspace_bytes=33554432 "
                            "cuda.alloc.expandable_segments=true cuda.alloc.max_split_mb=1024 "
                            "cuda.alloc.gc_threshold_percent=90",
                            1, "plain values") == 5);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

/* A user's setting beats the rules and says what it replaced. */
static void user_override_beats_the_rules(void **state)
{
    (void)state;
    gpuopt_context *ctx = ctx_with(NULL);
    gpuopt_knob k;
    assert_int_equal(gpuopt_context_set_knob(ctx, "cuda.alloc_conf", "backend:cudaMallocAsync"),
                     GPUOPT_OK);
    gpuopt_plan *plan = plan_for(ctx, 9, W_NONE, 1);
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    assert_int_equal(gpuopt_plan_knob_find(plan, "cuda.alloc_conf", &k), GPUOPT_OK);
    assert_string_equal(k.value, "backend:cudaMallocAsync");
    assert_int_equal(k.source, GPUOPT_SOURCE_API);
    /* It replaced the derived value, and says what that was. */
    assert_non_null(strstr(k.reason, "overriding its derivation (which gives "
                                     "expandable_segments:True"));
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

/* Level 2 cannot measure on the double (it cannot run code): the plan stays
 * at level 1, with every level-1 knob, and a warning says why. */
static void level_2_on_the_double_stays_at_level_1_with_a_warning(void **state)
{
    (void)state;
    gpuopt_context *ctx = ctx_with(NULL);
    gpuopt_plan *plan = plan_for(ctx, 9, W_NONE, 2);
    int32_t requested = 0, applied = 0, warnings = 0;
    const char *text = NULL;
    assert_int_equal(gpuopt_plan_level(plan, &requested, &applied), GPUOPT_OK);
    assert_int_equal(requested, 2);
    assert_int_equal(applied, 1);
    assert_int_equal(gpuopt_plan_warning_count(plan, &warnings), GPUOPT_OK);
    assert_true(warnings >= 1);
    assert_int_equal(gpuopt_plan_warning_at(plan, 0, &text), GPUOPT_OK);
    assert_non_null(strstr(text, "level 2"));
    assert_true(check_knobs(plan, "cuda.tf32=true cuda.l2_persisting_bytes=39321600", 1,
                            "level 2 on h100-sxm5") == 2);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

/* A GPU the kernel module lists but no usable libcuda.so.1 describes has
 * no compute capability: level 1 is not applied, and the warning says why. */
static void a_gpu_seen_only_by_the_kernel_stays_at_level_0_with_the_reason(void **state)
{
    (void)state;
    char saved[1024];
    gpuopt_options o;
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    gpuopt_plan *plan = NULL;
    int32_t applied = -1;
    const char *text = NULL;
    snprintf(saved, sizeof saved, "%s", getenv("GPUOPT_CUDA_LIBRARY"));
    setenv("GPUOPT_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = "cuda";
    o.config_path = "";
    o.sysfs_root = GPO_FIXTURES_DIR "/nvidia/t4-proprietary-535";
    assert_int_equal(gpuopt_context_create(&o, &ctx), GPUOPT_OK);
    setenv("GPUOPT_CUDA_LIBRARY", saved, 1);
    assert_int_equal(gpuopt_device_select(ctx, "cuda:0", &dev), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, dev, 1, &plan), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_level(plan, NULL, &applied), GPUOPT_OK);
    assert_int_equal(applied, 0);
    assert_true(check_knobs(plan, level0, 0, "kernel-only T4") +
                    check_knobs(plan, level0_tf32, 0, "kernel-only T4") ==
                8);
    assert_int_equal(gpuopt_plan_warning_at(plan, 0, &text), GPUOPT_OK);
    assert_non_null(strstr(text, "did not give its compute capability (the CUDA driver library is "
                                 "not usable)"));
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    /* The double honours it as the driver does; these tests want every GPU. */
    unsetenv("CUDA_VISIBLE_DEVICES");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_gpu_and_workload_gives_the_table_s_knobs),
        cmocka_unit_test(fp8_reason_names_the_condition_that_failed),
        cmocka_unit_test(configuration_allows_reduced_precision_without_a_workload),
        cmocka_unit_test(memory_reasons_carry_their_arithmetic),
        cmocka_unit_test(environment_knobs_are_exported_and_plain),
        cmocka_unit_test(user_override_beats_the_rules),
        cmocka_unit_test(level_2_on_the_double_stays_at_level_1_with_a_warning),
        cmocka_unit_test(a_gpu_seen_only_by_the_kernel_stays_at_level_0_with_the_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
