/* Selection across real backends through the public API: the CUDA and HIP
 * test doubles (tests/fakes/cuda, tests/fakes/hip) with real GPUs' facts,
 * PoCL and the CPU backend. CMake runs this program once per scenario,
 * each with the environment that picks the doubles' devices:
 *   mixed    RTX 4090, H100, A100 and T4 on CUDA, an MI300X on ROCm 6
 *   k80      a Tesla K80 and a T4 with NVRTC 13.0
 *   rx580    a Radeon RX 580 and an MI300X on ROCm 6.2
 *   broken   a CUDA driver whose library and kernel module disagree, a
 *            library that is not a driver, the toolkit's stub
 *   nodes    a driver that sees no GPU while the kernel module lists two
 *   plain    no GPU backend: PoCL and the CPU */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "gpuopt/gpuopt.h"

#define GIB (1024ull * 1024 * 1024)

static gpuopt_context *context(const char *backends, const char *device)
{
    gpuopt_options o;
    gpuopt_context *ctx = NULL;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = backends;
    o.device = device;
    o.log_level = "off";
    assert_int_equal(gpuopt_context_create(&o, &ctx), GPUOPT_OK);
    return ctx;
}

static const char *id_of(const gpuopt_device *d)
{
    static gpuopt_device_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    assert_int_equal(gpuopt_device_get_info(d, &i), GPUOPT_OK);
    return i.id;
}

/* The plan for `w` in a fresh context (`list_first`: after listing every
 * device); its JSON, parsed, for the caller to free. */
static cJSON *plan_json(const char *backends, const gpuopt_workload *w, int level, int list_first)
{
    gpuopt_context *ctx = context(backends, NULL);
    gpuopt_plan *plan = NULL;
    char *text = NULL;
    if (list_first) {
        assert_int_equal(gpuopt_context_to_json(ctx, &text), GPUOPT_OK);
        gpuopt_free(text);
    }
    assert_int_equal(gpuopt_plan_create_for(ctx, NULL, level, w, &plan), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_to_json(plan, &text), GPUOPT_OK);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    gpuopt_free(text);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    return root;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static const char *reason_of(const cJSON *plan)
{
    return str(cJSON_GetObjectItemCaseSensitive(plan, "selection"), "reason");
}

/* 1 when a warning of the plan (or list) contains `part`. */
static int warns(const cJSON *warnings, const char *part)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, warnings)
    {
        if (cJSON_IsString(w) && strstr(w->valuestring, part))
            return 1;
    }
    return 0;
}

static cJSON *devices_json(const char *backends)
{
    gpuopt_context *ctx = context(backends, NULL);
    char *text = NULL;
    assert_int_equal(gpuopt_context_to_json(ctx, &text), GPUOPT_OK);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    gpuopt_free(text);
    gpuopt_context_destroy(ctx);
    return root;
}

static const cJSON *device_by_id(const cJSON *root, const char *id)
{
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(root, "devices"))
    {
        if (strcmp(str(d, "id"), id) == 0)
            return d;
    }
    fail_msg("no device %s", id);
    return NULL;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* ---- mixed: RTX 4090, H100, A100, T4 (CUDA) and MI300X (ROCm) -------------- */

static void estimates_come_from_the_architecture_tables(void **state)
{
    (void)state;
    cJSON *root = devices_json("cuda,rocm");
    static const struct {
        const char *id;
        double fp32, bf16, fp16, bandwidth; /* -1: null */
    } want[] = {
        /* 128 SMs x 128 lanes x 2 x 2.52 GHz; GeForce: FP32 accumulation at
         * half the AD102 tensor rate (Ada whitepaper, RTX 4090: 165.2). */
        {"cuda:0", 82575, 165150, 165150, 1008},
        /* 132 x 4096 x 1.98 GHz; H100 whitepaper at 1.83 GHz: 989.4. */
        {"cuda:1", 66908, 1070530, 1070530, 3352},
        {"cuda:2", 19491, 311869, 311869, 1555},  /* A100 whitepaper: 19.5, 312 */
        {"cuda:3", 8140, -1, 65126, 320},         /* T4 datasheet: 8.1, 65 */
        {"rocm:0", 163430, 1307443, 1307443, -1}, /* MI300X data sheet: 163.4, 1307.4 */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const cJSON *d = device_by_id(root, want[i].id);
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "est_matrix_gflops");
        print_message("%s\n", want[i].id);
        assert_int_equal((int)num(d, "est_gflops"), (int)want[i].fp32);
        assert_int_equal((int)num(m, "bf16"), (int)want[i].bf16);
        assert_int_equal((int)num(m, "fp16"), (int)want[i].fp16);
        assert_int_equal((int)num(d, "est_bandwidth_gbs"), (int)want[i].bandwidth);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "warnings")), 0);
    }
    cJSON_Delete(root);
}

static void select_alone_and_after_a_listing_agree_in_c(void **state)
{
    (void)state;
    gpuopt_context *alone = context(NULL, NULL), *listed = context(NULL, NULL);
    gpuopt_device *a, *b;
    int32_t n;
    assert_int_equal(gpuopt_device_select(alone, NULL, &a), GPUOPT_OK);
    assert_int_equal(gpuopt_device_count(listed, &n), GPUOPT_OK);
    assert_int_equal(gpuopt_device_select(listed, NULL, &b), GPUOPT_OK);
    assert_string_equal(id_of(a), "rocm:0");
    assert_string_equal(id_of(b), "rocm:0");
    gpuopt_context_destroy(alone);
    gpuopt_context_destroy(listed);
}

static void workloads_rank_the_nvidia_gpus_and_say_why(void **state)
{
    (void)state;
    static const struct {
        int reduced, bound;
        uint64_t model;
        const char *id;
        const char *words;
    } cases[] = {
        {-1, 0, 0, "cuda:0",
         "cuda:0 (NVIDIA GeForce RTX 4090): highest estimated peak fp32 throughput, 82.6 TFLOP/s "
         "against 66.9 TFLOP/s for cuda:1 (NVIDIA H100 80GB HBM3)"},
        {1, 0, 0, "cuda:1",
         "cuda:1 (NVIDIA H100 80GB HBM3): highest estimated matrix-unit throughput in the "
         "precision the workload will use (it accepts reduced precision), bf16 1070.5 TFLOP/s "
         "against bf16 311.9 TFLOP/s for cuda:2 (NVIDIA A100-SXM4-40GB)"},
        {-1, GPUOPT_BOUND_MEMORY, 0, "cuda:1",
         "3352 GB/s against 1555 GB/s for cuda:2 (NVIDIA A100-SXM4-40GB)"},
        {-1, GPUOPT_BOUND_COMPUTE, 30 * GIB, "cuda:1",
         "cuda:1 (NVIDIA H100 80GB HBM3): highest estimated peak fp32 throughput, 66.9 TFLOP/s "
         "against 19.5 TFLOP/s for cuda:2"},
        {-1, 0, 50 * GIB, "cuda:1",
         "the workload's 50 GiB fits in its 80 GiB (20% kept back), not in the"},
        {0, 0, 0, "cuda:0", "peak fp32 throughput"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpuopt_workload w;
        gpuopt_workload_init(&w);
        w.reduced_precision = cases[i].reduced;
        w.bound = cases[i].bound;
        w.model_bytes = cases[i].model;
        for (int list_first = 0; list_first < 2; list_first++) {
            cJSON *p = plan_json("cuda", &w, 0, list_first);
            print_message("case %zu: %s\n", i, reason_of(p));
            assert_string_equal(str(p, "device"), cases[i].id);
            if (!strstr(reason_of(p), cases[i].words))
                fail_msg("case %zu: '%s' lacks '%s'", i, reason_of(p), cases[i].words);
            cJSON_Delete(p);
        }
    }
}

static void with_the_mi300x_every_workload_gets_the_same_device_either_way(void **state)
{
    (void)state;
    gpuopt_workload w[4];
    for (int i = 0; i < 4; i++)
        gpuopt_workload_init(&w[i]);
    w[1].reduced_precision = 1;
    w[2].bound = GPUOPT_BOUND_MEMORY;
    w[3].model_bytes = 100 * GIB;
    for (int i = 0; i < 4; i++) {
        cJSON *a = plan_json(NULL, &w[i], 0, 0), *b = plan_json(NULL, &w[i], 0, 1);
        assert_string_equal(str(a, "device"), "rocm:0");
        assert_string_equal(str(b, "device"), "rocm:0");
        assert_string_equal(reason_of(a), reason_of(b));
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
}

/* ---- k80: a GPU that CUDA 13 no longer targets ---------------------------------- */

static void k80_is_a_warning_in_devices_plan_and_doctor_with_the_last_toolkit(void **state)
{
    (void)state;
    static const char *const words = "targets compute capability 7.5 and later: CUDA 13.0 no "
                                     "longer compiles for compute capability 3.7 (kepler); CUDA "
                                     "11.8 is the last toolkit that does";
    cJSON *root = devices_json("cuda");
    const cJSON *k80 = device_by_id(root, "cuda:0");
    assert_string_equal(str(k80, "name"), "Tesla K80");
    assert_true(warns(cJSON_GetObjectItemCaseSensitive(k80, "warnings"), words));
    assert_true(warns(cJSON_GetObjectItemCaseSensitive(k80, "warnings"), "NVRTC 13.0"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
                         device_by_id(root, "cuda:1"), "warnings")),
                     0); /* T4, 7.5 */
    cJSON_Delete(root);

    /* The plan warns, and tier 2 falls back with the reason, not compiling. */
    gpuopt_context *ctx = context("cuda", "cuda:0");
    gpuopt_plan *plan;
    int32_t asked, applied;
    char *text;
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 2, &plan), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_level(plan, &asked, &applied), GPUOPT_OK);
    assert_int_equal(applied, 1);
    assert_int_equal(gpuopt_plan_to_json(plan, &text), GPUOPT_OK);
    cJSON *p = cJSON_Parse(text);
    gpuopt_free(text);
    const cJSON *warnings = cJSON_GetObjectItemCaseSensitive(p, "warnings");
    assert_true(warns(warnings, "cuda:0 (Tesla K80) is no longer a compiler target"));
    assert_true(warns(warnings, "level 2 (measurements on the device) was not applied: cuda: "
                                "NVRTC 13.0"));
    assert_true(warns(warnings, "CUDA 11.8 is the last toolkit"));
    cJSON_Delete(p);
    gpuopt_plan_destroy(plan);

    /* The doctor's CUDA block. */
    assert_int_equal(gpuopt_context_diagnose(ctx, &text), GPUOPT_OK);
    cJSON *dr = cJSON_Parse(text);
    gpuopt_free(text);
    const cJSON *f;
    int found = 0;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(dr, "findings"))
    {
        if (strcmp(str(f, "check"), "toolchain_support") != 0)
            continue;
        found++;
        assert_string_equal(str(f, "backend"), "cuda");
        assert_string_equal(str(f, "status"), "warning");
        assert_non_null(strstr(str(f, "summary"), "cuda:0 (Tesla K80)"));
        assert_true(warns(cJSON_GetObjectItemCaseSensitive(f, "evidence"), words));
    }
    assert_int_equal(found, 1);
    cJSON_Delete(dr);
    gpuopt_context_destroy(ctx);
}

/* ---- rx580: a target the ROCm release found dropped --------------------------------- */

static void rx580_is_a_warning_with_the_rocm_release_detected(void **state)
{
    (void)state;
    static const char *const words = "ROCm 6.2 no longer supports gfx803 (dropped in ROCm 4.0";
    cJSON *root = devices_json("rocm");
    const cJSON *rx = NULL, *mi = NULL, *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(root, "devices"))
    {
        if (strstr(str(d, "name"), "RX 580"))
            rx = d;
        else if (strstr(str(d, "name"), "MI300X"))
            mi = d;
    }
    assert_non_null(rx);
    assert_non_null(mi);
    assert_true(warns(cJSON_GetObjectItemCaseSensitive(rx, "warnings"), words));
    assert_true(
        warns(cJSON_GetObjectItemCaseSensitive(rx, "warnings"), "ROCm 3.10 is the last release"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(mi, "warnings")), 0);
    char rx_id[32];
    snprintf(rx_id, sizeof rx_id, "%s", str(rx, "id"));
    cJSON_Delete(root);

    gpuopt_context *ctx = context("rocm", rx_id);
    gpuopt_plan *plan;
    const char *w;
    int32_t n, hits = 0;
    char *text;
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &plan), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_warning_count(plan, &n), GPUOPT_OK);
    for (int32_t i = 0; i < n; i++)
        if (gpuopt_plan_warning_at(plan, i, &w) == GPUOPT_OK && strstr(w, words))
            hits++;
    assert_int_equal(hits, 1);
    gpuopt_plan_destroy(plan);
    assert_int_equal(gpuopt_context_diagnose(ctx, &text), GPUOPT_OK);
    assert_non_null(strstr(text, "\"check\":\"toolchain_support\""));
    assert_non_null(strstr(text, words));
    gpuopt_free(text);
    gpuopt_context_destroy(ctx);
}

/* ---- broken: present but not working ------------------------------------------------ */

static void a_broken_driver_is_a_plan_warning_with_its_reason(void **state)
{
    (void)state;
    cJSON *p = plan_json("cuda,cpu", NULL, 0, 0);
    assert_string_equal(str(p, "device"), "cpu:0");
    const cJSON *warnings = cJSON_GetObjectItemCaseSensitive(p, "warnings");
    assert_true(warns(warnings, "the cuda backend is present but not working, so cpu:0 was "
                                "chosen instead: cuInit failed with "
                                "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"));
    assert_true(warns(warnings, "`gpuopt doctor` says why and what to do"));
    cJSON_Delete(p);
}

static void a_library_that_is_not_a_driver_is_broken_too(void **state)
{
    (void)state;
    /* The double built without the driver's entry points (broken.map). */
    const char *lib = getenv("SELECT_FAKE_CUDA_BROKEN");
    assert_non_null(lib);
    setenv("GPUOPT_CUDA_LIBRARY", lib, 1);
    cJSON *p = plan_json("cuda,cpu", NULL, 0, 0);
    assert_string_equal(str(p, "device"), "cpu:0");
    assert_true(warns(cJSON_GetObjectItemCaseSensitive(p, "warnings"),
                      "it is not an NVIDIA driver library"));
    cJSON_Delete(p);
}

static void gpus_behind_closed_device_nodes_are_a_broken_driver(void **state)
{
    (void)state;
    /* cuInit finds no GPU while the kernel module lists two. */
    cJSON *p = plan_json("cuda,cpu", NULL, 0, 0);
    assert_string_equal(str(p, "device"), "cpu:0");
    const cJSON *warnings = cJSON_GetObjectItemCaseSensitive(p, "warnings");
    assert_true(warns(warnings, "the cuda backend is present but not working"));
    assert_true(warns(warnings, "the kernel driver lists 2 GPUs: check that this user may open "
                                "/dev/nvidia*"));
    cJSON_Delete(p);
}

static void the_toolkit_stub_is_a_broken_driver_too(void **state)
{
    (void)state;
    const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
    if (access(stub, R_OK) != 0)
        skip();
    setenv("GPUOPT_CUDA_LIBRARY", stub, 1);
    cJSON *p = plan_json("cuda,cpu", NULL, 0, 0);
    assert_string_equal(str(p, "device"), "cpu:0");
    assert_true(warns(cJSON_GetObjectItemCaseSensitive(p, "warnings"),
                      "cuInit failed with CUDA_ERROR_STUB_LIBRARY"));
    cJSON_Delete(p);
}

static void asking_for_cuda_without_it_names_why(void **state)
{
    (void)state;
    setenv("GPUOPT_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    gpuopt_context *ctx = context("cuda", NULL);
    gpuopt_device *d;
    assert_int_equal(gpuopt_device_select(ctx, NULL, &d), GPUOPT_ERR_NO_DEVICE);
    assert_non_null(strstr(gpuopt_last_error(), "no device matches 'auto': cuda: cannot open "
                                                "/nonexistent/libcuda.so.1 (GPUOPT_CUDA_LIBRARY)"));
    assert_null(strstr(gpuopt_last_error(), "devices here: none"));
    gpuopt_context_destroy(ctx);
}

/* ---- plain: PoCL and the CPU ---------------------------------------------------------- */

static void the_cpu_wins_over_its_opencl_view_either_way(void **state)
{
    (void)state;
    cJSON *a = plan_json(NULL, NULL, 0, 0), *b = plan_json(NULL, NULL, 0, 1);
    assert_string_equal(str(a, "device"), "cpu:0");
    assert_string_equal(str(b, "device"), "cpu:0");
    assert_string_equal(reason_of(a), reason_of(b));
    /* No warning: CUDA and ROCm are absent, not broken. */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "warnings")), 0);
    cJSON *list = devices_json(NULL);
    int pocl = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(list, "devices"))
    {
        pocl |= strcmp(str(d, "backend"), "opencl") == 0;
    }
    if (pocl)
        assert_non_null(strstr(reason_of(a), "reached through its own backend (cpu), ranked "
                                             "above opencl:"));
    cJSON_Delete(list);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

int main(int argc, char **argv)
{
    static const struct CMUnitTest mixed[] = {
        cmocka_unit_test(estimates_come_from_the_architecture_tables),
        cmocka_unit_test(select_alone_and_after_a_listing_agree_in_c),
        cmocka_unit_test(workloads_rank_the_nvidia_gpus_and_say_why),
        cmocka_unit_test(with_the_mi300x_every_workload_gets_the_same_device_either_way),
    };
    static const struct CMUnitTest k80[] = {
        cmocka_unit_test(k80_is_a_warning_in_devices_plan_and_doctor_with_the_last_toolkit),
    };
    static const struct CMUnitTest rx580[] = {
        cmocka_unit_test(rx580_is_a_warning_with_the_rocm_release_detected),
    };
    static const struct CMUnitTest broken[] = {
        cmocka_unit_test(a_broken_driver_is_a_plan_warning_with_its_reason),
        cmocka_unit_test(a_library_that_is_not_a_driver_is_broken_too),
        cmocka_unit_test(the_toolkit_stub_is_a_broken_driver_too),
        cmocka_unit_test(asking_for_cuda_without_it_names_why),
    };
    static const struct CMUnitTest nodes[] = {
        cmocka_unit_test(gpus_behind_closed_device_nodes_are_a_broken_driver),
    };
    static const struct CMUnitTest plain[] = {
        cmocka_unit_test(the_cpu_wins_over_its_opencl_view_either_way),
    };
    const char *which = argc > 1 ? argv[1] : "";
    if (strcmp(which, "mixed") == 0)
        return cmocka_run_group_tests_name("mixed", mixed, NULL, NULL);
    if (strcmp(which, "k80") == 0)
        return cmocka_run_group_tests_name("k80", k80, NULL, NULL);
    if (strcmp(which, "rx580") == 0)
        return cmocka_run_group_tests_name("rx580", rx580, NULL, NULL);
    if (strcmp(which, "broken") == 0)
        return cmocka_run_group_tests_name("broken", broken, NULL, NULL);
    if (strcmp(which, "nodes") == 0)
        return cmocka_run_group_tests_name("nodes", nodes, NULL, NULL);
    if (strcmp(which, "plain") == 0)
        return cmocka_run_group_tests_name("plain", plain, NULL, NULL);
    fprintf(stderr, "usage: %s mixed|k80|rx580|broken|nodes|plain\n", argv[0]);
    return 2;
}
