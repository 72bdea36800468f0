/* The fault sweep: every driver call the backend makes is failed at every
 * one of its uses (and at all of them), through the test double's fault
 * injection, across a whole session (load, enumerate, free memory of each
 * device, applying a plan's L2 set-aside on device 0's current context, a
 * runtime session on device 0 that builds, sets up and launches a kernel,
 * unload). Each failure must come back as a status with a reason
 * that names the call and the driver's error, leave no primary context,
 * pushed context or runtime object behind, and leak nothing (this test runs
 * under ASan/LSan in the sanitizer build). A failure inside an op that
 * returns nothing (a free, close) cannot be reported; the sweep checks that
 * such failures happen only there. NVRTC's calls are swept the same way
 * through its double. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_backend.h"
#include "cuda/cuda_load.h"
#include "cuda_test_util.h"
#include "plan.h"

#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"
#define ERR "CUDA_ERROR_UNKNOWN"

static fake_cuda full, r12, legacy;
static fake_nvrtc nvrtc;
static int injections; /* faults injected, so a silent no-op sweep shows */

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    return fake_cuda_open(&full, FAKE_CUDA_FULL) || fake_cuda_open(&r12, FAKE_CUDA_R12) ||
           fake_cuda_open(&legacy, FAKE_CUDA_LEGACY) || fake_nvrtc_open(&nvrtc, FAKE_NVRTC);
}

/* One session's outcome: the first failing step and its words. */
typedef struct session {
    gpuopt_status status;
    char step[24]; /* "load", "enumerate", "memory_live", a runtime op, or "" */
    char message[1024];
    char note[512]; /* report reason of a successful load */
    size_t devices;
    int runtime;       /* 1: the runtime session opened */
    char launch[1024]; /* what the launch said (the double cannot run code) */
    char applied[512]; /* apply_device's report */
    /* Uses of `watch` (numbered from 1) that cannot be reported: inside
     * ops that return nothing, or after the launch's expected failure. */
    long silent_from[16], silent_to[16];
    int n_silent;
} session;

static void silent_range(session *out, long before, long after)
{
    if (after > before && out->n_silent < 16) {
        out->silent_from[out->n_silent] = before + 1;
        out->silent_to[out->n_silent++] = after;
    }
}

/* 1 when use `nth` (0: every use of `uses`) failed where no op can say so. */
static int only_silent(const session *s, long nth, long uses)
{
    long n = 0;
    for (int i = 0; i < s->n_silent; i++) {
        if (nth && nth >= s->silent_from[i] && nth <= s->silent_to[i])
            return 1;
        n += s->silent_to[i] - s->silent_from[i] + 1;
    }
    return !nth && n == uses;
}

static const char kernel_src[] = "extern \"C\" __global__ void scale(float *x, float a, int n)\n"
                                 "{\n"
                                 "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                 "    if (i < n)\n"
                                 "        x[i] *= a;\n"
                                 "}\n";

/* The symbol under test and the double counting it, so uses inside ops
 * that return nothing can be told apart. */
static const char *watch;
static const fake_cuda *watch_cuda;
static const fake_nvrtc *watch_nvrtc;

static long watch_calls(void)
{
    if (!watch)
        return 0;
    return watch_cuda ? watch_cuda->calls(watch) : watch_nvrtc->calls(watch);
}

#define VOID_OP(out, call)                                                                         \
    do {                                                                                           \
        long before_ = watch_calls();                                                              \
        call;                                                                                      \
        silent_range(out, before_, watch_calls());                                                 \
    } while (0)

#define STEP(out, name, expr)                                                                      \
    do {                                                                                           \
        if ((out)->status == GPUOPT_OK) {                                                          \
            gpuopt_status s_ = (expr);                                                             \
            if (s_) {                                                                              \
                (out)->status = s_;                                                                \
                snprintf((out)->step, sizeof(out)->step, "%s", name);                              \
                snprintf((out)->message, sizeof(out)->message, "%s", gpo_detail_get());            \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* A runtime session on device 0: every op of the table once. */
static void run_runtime(void *st, session *out)
{
    const gpo_runtime_ops *ops = gpo_backend_cuda.runtime;
    gpo_route route;
    gpo_rt *rt = NULL;
    gpo_rt_buf *a = NULL, *b = NULL;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = NULL;
    void *pinned = NULL;
    char *log = NULL;
    float host[256] = {1.0f}, scale = 2.0f;
    int n = 256;
    size_t max_group = 0, global[3] = {1024, 1, 1}, local[3] = {256, 1, 1};
    double ns = 0.0;

    memset(&route, 0, sizeof route);
    gpuopt_status s = ops->open(st, &route, &rt);
    if (s == GPUOPT_ERR_UNSUPPORTED && strstr(gpo_detail_get(), "lacks")) {
        assert_null(rt); /* a driver too old for the runtime: nothing to run */
        return;
    }
    STEP(out, "open", s);
    if (!rt)
        return;
    out->runtime = 1;
    STEP(out, "buffer_alloc", ops->buffer_alloc(rt, sizeof host, &a));
    STEP(out, "buffer_alloc", ops->buffer_alloc(rt, sizeof host, &b));
    STEP(out, "buffer_write", ops->buffer_write(rt, a, 0, host, sizeof host));
    STEP(out, "buffer_copy", ops->buffer_copy(rt, b, a, sizeof host, &ns));
    STEP(out, "buffer_read", ops->buffer_read(rt, b, 0, host, sizeof host));
    STEP(out, "host_alloc_pinned", ops->host_alloc_pinned(rt, 4096, &pinned));
    STEP(out, "program_build", ops->program_build(rt, kernel_src, "-DUNUSED=1", &prog, &log));
    free(log);
    if (prog)
        STEP(out, "kernel_create", ops->kernel_create(rt, prog, "scale", &k));
    if (k) {
        STEP(out, "kernel_set_buffer", ops->kernel_set_buffer(rt, k, 0, a));
        STEP(out, "kernel_set_scalar", ops->kernel_set_scalar(rt, k, 1, &scale, sizeof scale));
        STEP(out, "kernel_set_scalar", ops->kernel_set_scalar(rt, k, 2, &n, sizeof n));
        STEP(out, "kernel_max_group", ops->kernel_max_group(rt, k, &max_group));
        /* Above the default 48 KiB: the launch opts in (cuFuncSetAttribute). */
        STEP(out, "kernel_set_local", ops->kernel_set_local(rt, k, 0, 64 << 10));
        if (out->status == GPUOPT_OK) {
            /* The double checks the launch and then cannot run it. */
            long before = watch_calls();
            s = ops->launch(rt, k, 1, global, local, &ns);
            snprintf(out->launch, sizeof out->launch, "%s", gpo_detail_get());
            if (s != GPUOPT_ERR_UNSUPPORTED || !strstr(out->launch, "real NVIDIA GPU"))
                STEP(out, "launch", s ? s : GPUOPT_ERR_LAUNCH);
            else /* an op reports its first failure: later ones in it are masked */
                silent_range(out, before, watch_calls());
        }
    }
    STEP(out, "finish", ops->finish(rt));
    VOID_OP(out, ops->host_free_pinned(rt, pinned));
    VOID_OP(out, ops->kernel_free(rt, k));
    VOID_OP(out, ops->program_free(rt, prog));
    VOID_OP(out, ops->buffer_free(rt, a));
    /* b is left for close to release. */
    VOID_OP(out, ops->close(rt));
}

/* gpuopt_plan_apply(GPUOPT_APPLY_DEVICE) as the core calls it: a plan for
 * device 0 (the H100) with its L2 set-aside, on a thread where the
 * program's framework made device 0's context current. */
static void run_apply(void *st, gpuopt_device *dev, const fake_cuda *f, session *out)
{
    gpo_sbuf report;
    gpo_route route;
    memset(&route, 0, sizeof route);
    route.index = dev->info.index;
    dev->routes[0].backend = &gpo_backend_cuda; /* the core's part: the knob catalogue */
    dev->n_routes = 1;
    struct gpuopt_plan *plan = gpo_plan_new(NULL, dev, 1);
    assert_non_null(plan);
    plan->cur_tier = plan->level_applied = 1;
    assert_int_equal(gpo_knob_set_bytes(plan, "cuda.l2_persisting_bytes", 39321600, "3/4 of L2"),
                     GPUOPT_OK);
    gpo_sbuf_init(&report);
    assert_int_equal(f->make_current(0), 0);
    STEP(out, "apply_device", gpo_backend_cuda.apply_device(st, &route, plan, &report));
    assert_int_equal(f->clear_current(), 0);
    char *text = gpo_sbuf_take(&report);
    snprintf(out->applied, sizeof out->applied, "%s", text ? text : "");
    free(text);
    gpo_plan_free(plan);
}

static void run_session(const char *library, const fake_cuda *f, const char *fail,
                        const char *nvrtc_fail, session *out)
{
    cuda_env e;
    gpo_backend_report rep;
    gpo_device_list list = {0};
    void *st = NULL;
    memset(out, 0, sizeof *out);
    cuda_env_init(&e, library, NO_KERNEL_DRIVER);
    cuda_env_set_nvrtc(&e, FAKE_NVRTC);
    fake_cuda_configure(f, fake_devices("h100-sxm5.json", "k80.json", "t4.json", NULL), NULL, fail);
    /* The NVRTC double keeps the architectures a pass chose. */
    char archs[128] = "";
    const char *env = getenv("GPUOPT_FAKE_NVRTC_ARCHS");
    snprintf(archs, sizeof archs, "%s", env ? env : "");
    fake_nvrtc_configure(&nvrtc, NULL, archs[0] ? archs : NULL, nvrtc_fail);

    out->status = gpo_backend_cuda.load(&e.env, &st, &rep);
    if (out->status) {
        strcpy(out->step, "load");
        snprintf(out->message, sizeof out->message, "%s", rep.reason);
        assert_null(st);
        goto out;
    }
    snprintf(out->note, sizeof out->note, "%s", rep.reason);
    out->status = gpo_backend_cuda.enumerate(st, &e.env, &list);
    out->devices = list.n;
    if (out->status) {
        strcpy(out->step, "enumerate");
        snprintf(out->message, sizeof out->message, "%s", gpo_detail_get());
        goto out;
    }
    for (size_t i = 0; i < list.n; i++) {
        gpo_route route;
        gpo_memory_reading live;
        live.free = 1;
        memset(&route, 0, sizeof route);
        route.index = list.items[i]->info.index;
        gpuopt_status s =
            gpo_backend_cuda.memory_live(st, &route, GPO_MEMORY_MAY_CREATE_CONTEXT, &live);
        uint64_t free_bytes = live.free;
        if (s == GPUOPT_ERR_UNSUPPORTED) /* the legacy driver cannot tell */
            continue;
        if (s) {
            out->status = s;
            strcpy(out->step, "memory_live");
            snprintf(out->message, sizeof out->message, "%s", gpo_detail_get());
            assert_int_equal(free_bytes, 0);
            break;
        }
        assert_true(free_bytes > 0);
    }
    if (out->status == GPUOPT_OK)
        run_apply(st, list.items[0], f, out);
    if (out->status == GPUOPT_OK)
        run_runtime(st, out);
out:
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

/* A reason names the failed call ("cuX failed" or "cuX(ATTR) failed"). */
static int names_call(const char *message, const char *sym)
{
    char a[96], b[96];
    snprintf(a, sizeof a, "%s failed", sym);
    snprintf(b, sizeof b, "%s(", sym);
    return strstr(message, a) || strstr(message, b);
}

/* The status a failed call must give: what an op reports for the driver
 * failing under it. Running code and waiting for it (the session's stream,
 * in finish and in the blocking copies) are launch errors. */
static gpuopt_status expected_status(const char *step, const char *sym)
{
    if (strcmp(step, "load") == 0)
        return GPUOPT_ERR_DRIVER; /* unused: load's statuses are load_test's */
    if (strcmp(sym, "cuLaunchKernel") == 0 || strcmp(sym, "cuEventSynchronize") == 0 ||
        strcmp(sym, "cuStreamSynchronize") == 0 || strcmp(sym, "cuFuncSetAttribute") == 0)
        return GPUOPT_ERR_LAUNCH;
    return GPUOPT_ERR_DRIVER;
}

/* Fails `sym` at use `nth` (0: every use) and checks the outcome. */
static void inject(const char *library, const fake_cuda *f, const char *sym, long nth)
{
    char rule[128];
    session s;
    injections++;
    if (nth)
        snprintf(rule, sizeof rule, "%s:%ld:%s", sym, nth, ERR);
    else
        snprintf(rule, sizeof rule, "%s:*:%s", sym, ERR);
    watch = sym;
    watch_cuda = f;
    watch_nvrtc = NULL;
    run_session(library, f, rule, NULL, &s);
    watch = NULL;
    long uses = f->calls(sym);

    if (strcmp(sym, "cuDriverGetVersion") == 0) {
        /* Not fatal by design: the version is unknown, the load says so. */
        assert_int_equal(s.status, GPUOPT_OK);
        if (!names_call(s.note, sym) || !strstr(s.note, ERR))
            fail_msg("%s: note '%s' does not name the failure", rule, s.note);
    } else if (s.status == GPUOPT_OK) {
        /* Silent only where nothing can be reported: every failed use was
         * inside an op that returns nothing (a free, close). */
        if (!only_silent(&s, nth, uses))
            fail_msg("%s: the session succeeded", rule);
    } else {
        if (!names_call(s.message, sym) || !strstr(s.message, ERR))
            fail_msg("%s: %s failed with '%s', which does not name the call and error", rule,
                     s.step, s.message);
        if (strcmp(s.step, "load") != 0 && s.status != expected_status(s.step, sym))
            fail_msg("%s: %s returned %d, not %d", rule, s.step, (int)s.status,
                     (int)expected_status(s.step, sym));
    }
    /* Nothing of the runtime outlives the session: what the backend could
     * not free went with the primary context it released. */
    if (f->live_contexts() == 0 && f->live_objects(NULL) != 0)
        fail_msg("%s: %ld runtime objects left", rule, f->live_objects(NULL));
    if (nvrtc.live_programs() != 0)
        fail_msg("%s: %ld NVRTC programs left", rule, nvrtc.live_programs());
    /* Everything the backend retained or pushed is given back, unless the
     * driver refused exactly that (then it holds one, and nothing more). */
    int live = f->live_contexts(), depth = f->stack_depth();
    if (strcmp(sym, "cuDevicePrimaryCtxRelease_v2") == 0)
        assert_true(live <= 1);
    else if (live != 0)
        fail_msg("%s: %d primary context references left", rule, live);
    if (strcmp(sym, "cuCtxPopCurrent_v2") == 0)
        assert_true(depth <= 1);
    else if (depth != 0)
        fail_msg("%s: %d contexts left pushed", rule, depth);
}

static void sweep(const char *library, const fake_cuda *f, int *covered)
{
    session clean;
    long counts[64];
    run_session(library, f, NULL, NULL, &clean);
    if (clean.status)
        fail_msg("%s: the clean session failed at %s: %s", library, clean.step, clean.message);
    assert_int_equal(clean.devices, 3);
    assert_string_equal(clean.applied,
                        "set cuda L2 persisting limit to 39321600 bytes on cuda:0 (was 0)\n");
    if (clean.runtime && !strstr(clean.launch, "cuLaunchKernel failed: CUDA_ERROR_NOT_SUPPORTED"))
        fail_msg("%s: the launch said '%s'", library, clean.launch);
    assert_true(gpo_cuda_n_syms <= 64);
    for (size_t i = 0; i < gpo_cuda_n_syms; i++)
        counts[i] = f->calls(gpo_cuda_syms[i].symbol);
    for (size_t i = 0; i < gpo_cuda_n_syms; i++) {
        /* The error-naming calls only turn results into words; failing them
         * is checked below. */
        if (counts[i] == 0 || strncmp(gpo_cuda_syms[i].symbol, "cuGetError", 10) == 0)
            continue;
        covered[i] = 1;
        for (long n = 1; n <= counts[i]; n++)
            inject(library, f, gpo_cuda_syms[i].symbol, n);
        inject(library, f, gpo_cuda_syms[i].symbol, 0);
    }
}

static void every_driver_call_failing_at_every_use_gives_a_reason(void **state)
{
    (void)state;
    int covered[64] = {0};
    sweep(FAKE_CUDA_FULL, &full, covered);
    sweep(FAKE_CUDA_R12, &r12, covered);
    sweep(FAKE_CUDA_LEGACY, &legacy, covered);

    /* The error-naming calls run only after a failure: fail cuInit and
     * them, and the built-in table still names the result. */
    for (size_t i = 0; i < gpo_cuda_n_syms; i++) {
        const char *sym = gpo_cuda_syms[i].symbol;
        if (strncmp(sym, "cuGetError", 10) != 0)
            continue;
        char rule[128];
        session s;
        snprintf(rule, sizeof rule, "cuInit:1:%s,%s:*:CUDA_ERROR_INVALID_VALUE", ERR, sym);
        run_session(FAKE_CUDA_FULL, &full, rule, NULL, &s);
        assert_int_equal(s.status, GPUOPT_ERR_DRIVER);
        assert_non_null(strstr(s.message, "cuInit failed with " ERR));
        assert_true(full.calls(sym) > 0);
        covered[i] = 1;
    }
    /* Every use of every call: several hundred sessions with three GPUs. */
    assert_true(injections > 500);
    /* Every symbol the backend resolves was failed somewhere. */
    for (size_t i = 0; i < gpo_cuda_n_syms; i++)
        if (!covered[i])
            fail_msg("%s is never called in the sweep", gpo_cuda_syms[i].symbol);
}

/* NVRTC's calls, each failed at every use and at all: the build (or the
 * first op that opens NVRTC) fails naming the call; no program is left. */
static int nvrtc_pass(const char *archs, int *covered)
{
    session clean;
    long counts[32];
    int n_injected = 0;
    fake_nvrtc_configure(&nvrtc, NULL, archs, NULL);
    run_session(FAKE_CUDA_FULL, &full, NULL, NULL, &clean);
    assert_int_equal(clean.status, GPUOPT_OK);
    assert_true(gpo_nvrtc_n_syms <= 32);
    for (size_t i = 0; i < gpo_nvrtc_n_syms; i++)
        counts[i] = nvrtc.calls(gpo_nvrtc_syms[i].symbol);
    for (size_t i = 0; i < gpo_nvrtc_n_syms; i++) {
        const char *sym = gpo_nvrtc_syms[i].symbol;
        if (counts[i] == 0 || strcmp(sym, "nvrtcGetErrorString") == 0)
            continue; /* words, not a result: nothing to inject */
        covered[i] = 1;
        for (long nth = 0; nth <= counts[i]; nth++) {
            char rule[128];
            session s;
            if (nth)
                snprintf(rule, sizeof rule, "%s:%ld:NVRTC_ERROR_INTERNAL_ERROR", sym, nth);
            else
                snprintf(rule, sizeof rule, "%s:*:NVRTC_ERROR_INTERNAL_ERROR", sym);
            watch = sym;
            watch_cuda = NULL;
            watch_nvrtc = &nvrtc;
            run_session(FAKE_CUDA_FULL, &full, NULL, rule, &s);
            watch = NULL;
            n_injected++;
            if (strcmp(sym, "nvrtcDestroyProgram") == 0) {
                /* Cleanup: nothing to report, and the double keeps the program. */
                assert_int_equal(s.status, GPUOPT_OK);
                continue;
            }
            if (strcmp(sym, "nvrtcGetProgramLogSize") == 0 ||
                strcmp(sym, "nvrtcGetProgramLog") == 0) {
                /* The log is a courtesy: a build without it still builds. */
                assert_int_equal(s.status, GPUOPT_OK);
                continue;
            }
            if (s.status == GPUOPT_OK || !strstr(s.message, sym) ||
                !strstr(s.message, "NVRTC_ERROR_INTERNAL_ERROR"))
                fail_msg("%s: %s gave %d '%s'", rule, s.step, (int)s.status, s.message);
            assert_int_equal(full.live_contexts(), 0);
            assert_int_equal(full.live_objects(NULL), 0);
        }
    }
    unsetenv("GPUOPT_FAKE_NVRTC_ARCHS");
    return n_injected;
}

static void every_nvrtc_call_failing_at_every_use_gives_a_reason(void **state)
{
    (void)state;
    int covered[32] = {0};
    /* NVRTC 13.0 knows sm_90: a CUBIN. Without 90 in its list: PTX of
     * compute_89 for the driver to compile. */
    int n = nvrtc_pass(NULL, covered) + nvrtc_pass("75,80,86,89", covered);
    assert_true(n > 20);
    for (size_t i = 0; i < gpo_nvrtc_n_syms; i++)
        if (!covered[i] && strcmp(gpo_nvrtc_syms[i].symbol, "nvrtcGetErrorString") != 0)
            fail_msg("%s is never called by a build", gpo_nvrtc_syms[i].symbol);
}

static void unknown_attribute_is_tolerated_but_other_errors_are_not(void **state)
{
    (void)state;
    session s;
    /* INVALID_VALUE is what an older driver says for a newer attribute: the
     * fact is unknown and listing goes on. The 3rd attribute is the SM count. */
    run_session(FAKE_CUDA_FULL, &full, "cuDeviceGetAttribute:3:CUDA_ERROR_INVALID_VALUE", NULL, &s);
    assert_int_equal(s.status, GPUOPT_OK);
    assert_int_equal(s.devices, 3);
    /* ...except for the compute capability, without which nothing is known. */
    run_session(FAKE_CUDA_FULL, &full, "cuDeviceGetAttribute:1:CUDA_ERROR_INVALID_VALUE", NULL, &s);
    assert_int_equal(s.status, GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(s.message, "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR) failed: "
                                      "CUDA_ERROR_INVALID_VALUE"));
    /* A failure on the second device names that device. */
    run_session(FAKE_CUDA_FULL, &full, "cuDeviceGetName:2:CUDA_ERROR_UNKNOWN", NULL, &s);
    assert_int_equal(s.status, GPUOPT_ERR_DRIVER);
    assert_non_null(strstr(s.message, "cuda: device 1: cuDeviceGetName failed"));
    run_session(FAKE_CUDA_FULL, &full, "cuDeviceTotalMem_v2:2:CUDA_ERROR_UNKNOWN", NULL, &s);
    assert_non_null(strstr(s.message, "cuda: device 1 (Tesla K80): cuDeviceTotalMem_v2 failed"));
}

static void malformed_fault_configuration_is_caught_by_the_fake(void **state)
{
    (void)state;
    session s;
    /* A broken rule makes every call fail: the test itself would notice. */
    run_session(FAKE_CUDA_FULL, &full, "cuInit:zero:NOPE", NULL, &s);
    assert_string_not_equal(full.config_error(), "");
    assert_int_equal(s.status, GPUOPT_ERR_DRIVER);
    fake_cuda_configure(&full, NULL, NULL, NULL);
    assert_string_equal(full.config_error(), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_driver_call_failing_at_every_use_gives_a_reason),
        cmocka_unit_test(every_nvrtc_call_failing_at_every_use_gives_a_reason),
        cmocka_unit_test(unknown_attribute_is_tolerated_but_other_errors_are_not),
        cmocka_unit_test(malformed_fault_configuration_is_caught_by_the_fake),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
