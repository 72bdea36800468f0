/* The CUDA backend's apply_device at its edges, called as the core calls it
 * (whose arguments it asserts): a malformed knob value, a driver library
 * without one of the context calls, and GPUs seen only by the kernel module.
 * (The public path is test_cuda_apply.c; a fork()ed child is in
 * test_cuda_fork.c; every driver call failing is in test_cuda_faults.c.) */
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
#define MISSING_LIBRARY "/nonexistent/libcuda.so.1"

static fake_cuda full;

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    return fake_cuda_open(&full, FAKE_CUDA_FULL);
}

typedef struct fixture {
    cuda_env e;
    void *st;
    gpo_device_list list;
    struct gpuopt_plan *plan;
    gpo_route route;
    gpo_sbuf report;
} fixture;

/* Loads (`library` on the kernel tree `root`), lists, and makes a level-1
 * plan for device 0 holding `l2` bytes as cuda.l2_persisting_bytes (< 0:
 * no such knob). */
static void open_fixture(fixture *f, const char *library, const char *root, int64_t l2)
{
    gpo_backend_report rep;
    memset(f, 0, sizeof *f);
    cuda_env_init(&f->e, library, root);
    fake_cuda_configure(&full, fake_devices("h100-sxm5.json", NULL), NULL, NULL);
    gpuopt_status st = gpo_backend_cuda.load(&f->e.env, &f->st, &rep);
    assert_true(st == GPUOPT_OK || (st == GPUOPT_ERR_UNAVAILABLE && f->st));
    assert_int_equal(gpo_backend_cuda.enumerate(f->st, &f->e.env, &f->list), GPUOPT_OK);
    assert_true(f->list.n > 0);
    gpuopt_device *dev = f->list.items[0];
    dev->routes[0].backend = &gpo_backend_cuda; /* the core's part: the knob catalogue */
    dev->n_routes = 1;
    f->route.index = dev->info.index;
    f->plan = gpo_plan_new(NULL, dev, 1);
    assert_non_null(f->plan);
    f->plan->cur_tier = f->plan->level_applied = 1;
    if (l2 >= 0)
        assert_int_equal(
            gpo_knob_set_bytes(f->plan, "cuda.l2_persisting_bytes", (uint64_t)l2, "test"),
            GPUOPT_OK);
    gpo_sbuf_init(&f->report);
}

/* The report so far (static buffer). */
static const char *report_text(fixture *f)
{
    static char text[2048];
    char *t = gpo_sbuf_take(&f->report);
    snprintf(text, sizeof text, "%s", t ? t : "");
    free(t);
    gpo_sbuf_init(&f->report);
    return text;
}

static void close_fixture(fixture *f)
{
    gpo_sbuf_free(&f->report);
    gpo_plan_free(f->plan);
    gpo_device_list_free(&f->list);
    gpo_backend_cuda.unload(f->st);
}

static void a_negative_set_aside_is_malformed(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f, FAKE_CUDA_FULL, NO_KERNEL_DRIVER, 1);
    /* Only a bug could store it: bytes knobs refuse negative values. */
    gpo_plan_find(f.plan, "cuda.l2_persisting_bytes")->ival = -1;
    assert_int_equal(full.make_current(0), 0);
    assert_int_equal(gpo_backend_cuda.apply_device(f.st, &f.route, f.plan, &f.report),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "cuda.l2_persisting_bytes is -1 bytes"));
    assert_int_equal(full.calls("cuCtxSetLimit"), 0);
    assert_int_equal(full.clear_current(), 0);
    close_fixture(&f);
}

static void a_library_without_a_context_call_applies_nothing_and_names_it(void **state)
{
    (void)state;
    static const char *const calls[] = {"cuCtxGetCurrent", "cuCtxGetDevice", "cuCtxSetLimit",
                                        "cuCtxGetLimit"};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        fixture f;
        char expected[256];
        open_fixture(&f, FAKE_CUDA_FULL, NO_KERNEL_DRIVER, 39321600);
        gpo_cuda_state *s = f.st;
        /* As a library that does not export it leaves the entry. */
        if (i == 0)
            s->api.cuCtxGetCurrent = NULL;
        else if (i == 1)
            s->api.cuCtxGetDevice = NULL;
        else if (i == 2)
            s->api.cuCtxSetLimit = NULL;
        else
            s->api.cuCtxGetLimit = NULL;
        assert_int_equal(full.make_current(0), 0);
        assert_int_equal(gpo_backend_cuda.apply_device(f.st, &f.route, f.plan, &f.report),
                         GPUOPT_OK);
        snprintf(expected, sizeof expected,
                 "nothing applied on cuda:0: the CUDA driver library lacks %s (", calls[i]);
        const char *text = report_text(&f);
        if (strncmp(text, expected, strlen(expected)) != 0)
            fail_msg("%s: '%s'", calls[i], text);
        assert_int_equal(full.calls("cuCtxGetCurrent") + full.calls("cuCtxSetLimit"), 0);
        assert_int_equal(full.clear_current(), 0);
        close_fixture(&f);
    }
}

static void gpus_seen_only_by_the_kernel_get_nothing_applied(void **state)
{
    (void)state;
    fixture f;
    /* A user's value on a GPU the driver library cannot reach. */
    open_fixture(&f, MISSING_LIBRARY, GPO_FIXTURES_DIR "/nvidia/hgx-h100-open-580", 39321600);
    assert_true(((gpo_cuda_state *)f.st)->kernel_only);
    assert_int_equal(gpo_backend_cuda.apply_device(f.st, &f.route, f.plan, &f.report), GPUOPT_OK);
    const char *text = report_text(&f);
    assert_non_null(strstr(text, "nothing applied on cuda:0: the CUDA driver library is not "
                                 "usable here: cannot open " MISSING_LIBRARY));
    close_fixture(&f);
}

static void a_level1_plan_without_the_knob_says_the_device_has_no_set_aside(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f, FAKE_CUDA_FULL, NO_KERNEL_DRIVER, -1);
    assert_int_equal(gpo_backend_cuda.apply_device(f.st, &f.route, f.plan, &f.report), GPUOPT_OK);
    assert_string_equal(report_text(&f),
                        "nothing applied on cuda:0: the plan has no cuda.l2_persisting_bytes (the "
                        "device reports no persisting set-aside: "
                        "CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE is 0 or unknown)\n");
    assert_int_equal(full.calls("cuCtxGetCurrent"), 0);
    close_fixture(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_negative_set_aside_is_malformed),
        cmocka_unit_test(a_library_without_a_context_call_applies_nothing_and_names_it),
        cmocka_unit_test(gpus_seen_only_by_the_kernel_get_nothing_applied),
        cmocka_unit_test(a_level1_plan_without_the_knob_says_the_device_has_no_set_aside),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
