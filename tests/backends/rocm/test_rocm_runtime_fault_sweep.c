/* The runtime fault sweep: every call the runtime ops make (the HIP
 * runtime-ops slice, hiprtc, comgr's ISA list) is made to fail through the
 * test doubles, on its first use, its second and every use, for ROCm 5
 * (hiprtc inside the runtime) and ROCm 7 (hiprtc in libhiprtc.so.7), while
 * one scripted session runs every op. Each run must end without a crash,
 * with the failing call named in the op's detail, and with every object the
 * session created released (the doubles count them; ASan/LSan builds check
 * our own memory). Calls whose failure has nowhere to go are listed in
 * `silent` with why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/detail.h"
#include "rocm/hip_rt_api.h"
#include "rocm/rocm_runtime.h"
#include "rocm_test.h"
#include "util/strutil.h"

static const char *const devices[] = {"mi300x", NULL};
static const gpo_runtime_ops *ops = &gpo_rocm_runtime;

static const char kernel_src[] = "extern \"C\" __global__ void scale(float *x, float a) {}\n";

/* Failures nothing can report: releases (void ops), the words for another
 * failure, a compiler log or version that cannot be read (then empty or
 * unknown), and comgr's list (then the guard cannot ask and steps aside). */
static const char *const silent[] = {
    "hipFree",
    "hipHostFree",
    "hipModuleUnload",
    "hipEventDestroy",
    "hipGetErrorName",
    "hipGetErrorString",
    "hiprtcGetErrorString",
    "hiprtcVersion",
    "hiprtcGetProgramLogSize",
    "hiprtcGetProgramLog",
    "hiprtcDestroyProgram",
    "amd_comgr_get_isa_count",
    "amd_comgr_get_isa_name",
};

static int is_silent(const char *call)
{
    for (size_t i = 0; i < sizeof silent / sizeof silent[0]; i++)
        if (strcmp(silent[i], call) == 0)
            return 1;
    return 0;
}

/* A release whose failure leaves the double holding the object. */
static int is_release(const char *call)
{
    return strcmp(call, "hipFree") == 0 || strcmp(call, "hipHostFree") == 0 ||
           strcmp(call, "hipModuleUnload") == 0 || strcmp(call, "hipEventDestroy") == 0 ||
           strcmp(call, "hiprtcDestroyProgram") == 0;
}

#define STEP(expr, expected)                                                                       \
    do {                                                                                           \
        gpo_detail_clear();                                                                        \
        gpuopt_status st_ = (expr);                                                                \
        if (st_ != (expected)) {                                                                   \
            assert_true(gpo_detail_get()[0] != '\0');                                              \
            gpo_sbuf_appendf(all, "%s\n", gpo_detail_get());                                       \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* One scripted session; every detail of a failed step is appended to all. */
static void script(const rocm_run *r, gpo_sbuf *all)
{
    gpo_route route;
    gpo_rt *rt = NULL;
    gpo_rt_buf *a = NULL, *b = NULL;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = NULL;
    char *log = NULL;
    float data[64] = {0};
    double ns = 0;
    void *pin = NULL;
    size_t max = 0, global[3] = {256, 1, 1}, local[3] = {64, 1, 1};
    float scale = 2.0f;

    rocm_route_of(r, 0, &route);
    STEP(ops->open(r->state, &route, &rt), GPUOPT_OK);
    STEP(ops->buffer_alloc(rt, sizeof data, &a), GPUOPT_OK);
    STEP(ops->buffer_alloc(rt, sizeof data, &b), GPUOPT_OK);
    STEP(ops->buffer_write(rt, a, 0, data, sizeof data), GPUOPT_OK);
    STEP(ops->buffer_copy(rt, b, a, sizeof data, &ns), GPUOPT_OK);
    STEP(ops->buffer_read(rt, b, 0, data, sizeof data), GPUOPT_OK);
    STEP(ops->host_alloc_pinned(rt, 4096, &pin), GPUOPT_OK);
    ops->host_free_pinned(rt, pin);
    STEP(ops->host_alloc_pinned(rt, 4096, &pin), GPUOPT_OK); /* left for close */
    STEP(ops->program_build(rt, kernel_src, "-O3", &prog, &log), GPUOPT_OK);
    free(log);
    log = NULL;
    STEP(ops->kernel_create(rt, prog, "scale", &k), GPUOPT_OK);
    STEP(ops->kernel_max_group(rt, k, &max), GPUOPT_OK);
    STEP(ops->kernel_set_buffer(rt, k, 0, a), GPUOPT_OK);
    STEP(ops->kernel_set_scalar(rt, k, 1, &scale, sizeof scale), GPUOPT_OK);
    STEP(ops->launch(rt, k, 1, global, local, &ns), GPUOPT_ERR_LAUNCH);
    gpo_sbuf_appendf(all, "%s\n", gpo_detail_get()); /* the expected launch failure */
    STEP(ops->finish(rt), GPUOPT_OK);
    STEP(ops->buffer_copy(rt, a, b, sizeof data, NULL), GPUOPT_OK);
done:
    free(log);
    ops->close(rt);
}

static void one_run(int major, const char *call, const char *use, int *fired_any)
{
    char fail[160];
    const char *rtc = fake_hiprtc_for(major);
    int rtc_call = strncmp(call, "hiprtc", 6) == 0 || strncmp(call, "amd_comgr", 9) == 0;
    rocm_env e;
    rocm_run r;
    gpo_sbuf all;

    gpo_snprintf(fail, sizeof fail, "%s:%s:%s", call, use,
                 rtc_call ? "HIPRTC_ERROR_INTERNAL_ERROR" : "hipErrorUnknown");
    /* The words for a hiprtc failure are asked for only when a call has
     * failed: pair it with one. */
    if (strcmp(call, "hiprtcGetErrorString") == 0)
        gpo_snprintf(fail, sizeof fail,
                     "%s:%s:1,hiprtcCompileProgram:1:HIPRTC_ERROR_INTERNAL_ERROR", call, use);
    assert_int_equal(fake_reset(major, fake_devices(devices), fail), 1);
    if (major >= 7)
        fake_hiprtc_reset(rtc);
    rocm_env_init(&e, NULL, fake_hip_path(major));
    rocm_env_set_hiprtc(&e, rtc);
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_OK);
    gpo_sbuf_init(&all);
    script(&r, &all);
    rocm_run_free(&r);

    int fired = major >= 7 && rtc_call ? fake_hiprtc_faults_fired(rtc) : fake_faults_fired(major);
    *fired_any |= fired > 0;
    if (fired > 0 && !is_silent(call) && !strstr(all.data ? all.data : "", call))
        fail_msg("HIP %d, %s: the fault fired %d time(s) but no detail names %s:\n%s", major, fail,
                 fired, call, all.data ? all.data : "");
    if (!(fired > 0 && is_release(call))) {
        if (fake_live(major) != 0 || fake_programs_live(rtc) != 0)
            fail_msg("HIP %d, %s: %d runtime object(s) and %d hiprtc program(s) left alive", major,
                     fail, fake_live(major), fake_programs_live(rtc));
    }
    gpo_sbuf_free(&all);
}

static void every_runtime_call_failing_is_named_and_leaks_nothing(void **state)
{
    static const char *const uses[] = {"1", "2", "*"};
    static const char *const comgr[] = {"amd_comgr_get_isa_count", "amd_comgr_get_isa_name"};
    int fired_rt[64] = {0}, fired_rtc[64] = {0}, fired_comgr[2] = {0};
    (void)state;
    assert_true(gpo_hip_rt_n_syms <= 64 && gpo_hiprtc_n_syms <= 64);
    for (int major = 5; major <= 7; major += 2)
        for (size_t u = 0; u < sizeof uses / sizeof uses[0]; u++) {
            for (size_t s = 0; s < gpo_hip_rt_n_syms; s++)
                one_run(major, gpo_hip_rt_syms[s].symbol, uses[u], &fired_rt[s]);
            for (size_t s = 0; s < gpo_hiprtc_n_syms; s++)
                one_run(major, gpo_hiprtc_syms[s].symbol, uses[u], &fired_rtc[s]);
            for (size_t s = 0; s < 2; s++)
                one_run(major, comgr[s], uses[u], &fired_comgr[s]);
        }
    /* The sweep is real: every call was made, and failed, in some run. */
    for (size_t s = 0; s < gpo_hip_rt_n_syms; s++)
        if (!fired_rt[s])
            fail_msg("%s never failed in the sweep", gpo_hip_rt_syms[s].symbol);
    for (size_t s = 0; s < gpo_hiprtc_n_syms; s++)
        if (!fired_rtc[s])
            fail_msg("%s never failed in the sweep", gpo_hiprtc_syms[s].symbol);
    for (size_t s = 0; s < 2; s++)
        if (!fired_comgr[s])
            fail_msg("%s never failed in the sweep", comgr[s]);
    /* Leave the doubles clean for the leak checker. */
    fake_reset(5, NULL, NULL);
    fake_reset(7, NULL, NULL);
    fake_hiprtc_reset(fake_hiprtc_for(7));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_runtime_call_failing_is_named_and_leaks_nothing),
    };
    return cmocka_run_group_tests(tests, rocm_test_clean_env, NULL);
}
