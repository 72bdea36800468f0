/* On a real NVIDIA GPU (label `gpu`; skipped without one): the library
 * inside a host program that uses CUDA itself, as PyTorch does. Listing
 * creates no context; with the host's primary context current, a level-2
 * plan measures on the device (its reading of free memory says it used
 * the active context and created none), applies its device settings to
 * the host's context, and leaves that context current and healthy: memory
 * can be allocated, copied both ways and synchronised after it. Through
 * gpuopt.h and the driver the library loaded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpu_cuda.h"

static gpuopt_context *ctx;
static gpuopt_device *dev;
static gpu_driver drv;

/* The library's log, for the note its free-memory reading leaves. */
static char notes[8192];

static void on_log(int32_t level, const char *message, void *user)
{
    (void)level;
    (void)user;
    size_t n = strlen(notes);
    snprintf(notes + n, sizeof notes - n, "%s\n", message);
}

static void listing_creates_no_context(void **state)
{
    (void)state;
    int cu = -1, active = -1;
    unsigned int flags = 0;
    assert_int_equal(drv.cuDeviceGet(&cu, 0), 0);
    assert_int_equal(drv.cuDevicePrimaryCtxGetState(cu, &flags, &active), 0);
    /* Nothing in this process used the GPU yet but the library's listing. */
    assert_int_equal(active, 0);
}

static void a_level_2_plan_keeps_the_host_context_current_and_healthy(void **state)
{
    (void)state;
    int cu = -1, active = 0;
    unsigned int flags = 0;
    void *host_ctx = NULL, *now = NULL;
    /* The host program's framework: the primary context, current. */
    assert_int_equal(drv.cuDeviceGet(&cu, 0), 0);
    assert_int_equal(drv.cuDevicePrimaryCtxRetain(&host_ctx, cu), 0);
    assert_int_equal(drv.cuCtxPushCurrent(host_ctx), 0);

    notes[0] = '\0';
    assert_int_equal(gpuopt_context_set_log(ctx, GPUOPT_LOG_INFO, on_log, NULL), GPUOPT_OK);
    gpuopt_plan *plan = NULL;
    assert_int_equal(gpuopt_plan_create(ctx, dev, 2, &plan), GPUOPT_OK);
    int32_t asked = 0, applied = 0;
    assert_int_equal(gpuopt_plan_level(plan, &asked, &applied), GPUOPT_OK);
    int32_t n_warn = 0;
    gpuopt_plan_warning_count(plan, &n_warn);
    for (int32_t i = 0; i < n_warn; i++) {
        const char *w = NULL;
        if (gpuopt_plan_warning_at(plan, i, &w) == GPUOPT_OK)
            print_message("plan warning: %s\n", w);
    }
    print_message("level asked 2, applied %d\n", (int)applied);
    /* On the doubles kernels compute nothing, so level 2 falls back. */
    if (!gpu_on_doubles())
        assert_int_equal(applied, 2);
    /* The host made its context current: the reading asks in it. */
    if (!strstr(notes, "in the calling thread's current context"))
        fail_msg("no note that free memory used the host's current context; the log:\n%s", notes);

    char *report = NULL;
    gpuopt_status st = gpuopt_plan_apply(plan, GPUOPT_APPLY_DEVICE, &report);
    print_message("apply: %s: %s\n", gpuopt_status_name(st), report ? report : "");
    assert_int_equal(st, GPUOPT_OK);
    gpuopt_free(report);
    gpuopt_plan_destroy(plan);

    /* Still the host's context, and it still works. */
    assert_int_equal(drv.cuCtxGetCurrent(&now), 0);
    assert_ptr_equal(now, host_ctx);
    assert_int_equal(drv.cuDevicePrimaryCtxGetState(cu, &flags, &active), 0);
    assert_int_equal(active, 1);
    enum { N = 1 << 18 };
    static unsigned char out[N], back[N];
    for (size_t i = 0; i < N; i++)
        out[i] = (unsigned char)(i * 13 + 7);
    unsigned long long p = 0;
    assert_int_equal(drv.cuMemAlloc(&p, N), 0);
    assert_int_equal(drv.cuMemcpyHtoD(p, out, N), 0);
    assert_int_equal(drv.cuMemcpyDtoH(back, p, N), 0);
    assert_int_equal(drv.cuCtxSynchronize(), 0);
    assert_memory_equal(out, back, N);
    assert_int_equal(drv.cuMemFree(p), 0);

    void *popped = NULL;
    assert_int_equal(drv.cuCtxPopCurrent(&popped), 0);
    assert_ptr_equal(popped, host_ctx);
    assert_int_equal(drv.cuDevicePrimaryCtxRelease(cu), 0);
}

int main(void)
{
    int rc = gpu_cuda_open(&ctx, &dev, &drv);
    if (rc)
        return rc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(listing_creates_no_context),
        cmocka_unit_test(a_level_2_plan_keeps_the_host_context_current_and_healthy),
    };
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    gpuopt_context_destroy(ctx);
    return rc;
}
