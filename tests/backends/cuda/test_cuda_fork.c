/* After fork(), the parent's CUDA driver state is stale in the child: the
 * child gets GPUOPT_ERR_FORKED in words, never a crash or a stale count. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cuda/cuda_backend.h"
#include "cuda/cuda_load.h"
#include "cuda_test_util.h"
#include "plan.h"

#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"

static fake_cuda full;

static int setup(void **state)
{
    (void)state;
    unsetenv("CUDA_VISIBLE_DEVICES");
    return fake_cuda_open(&full, FAKE_CUDA_FULL);
}

static int child_exit_code(pid_t pid)
{
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/* Must run first: here the host program, not this library, initialised
 * CUDA before forking, so only the driver can tell the child. */
static void child_of_a_cuda_parent_hears_why_cuinit_fails(void **state)
{
    (void)state;
    gpo_cu_result (*init)(unsigned) = NULL;
    void *p = dlsym(full.handle, "cuInit");
    memcpy(&init, &p, sizeof p);
    fake_cuda_configure(&full, fake_devices("h100-sxm5.json", NULL), NULL, NULL);
    assert_int_equal(init(0), GPO_CUDA_SUCCESS);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cuda_env e;
        gpo_backend_report rep;
        void *st = NULL;
        int code = 0;
        cuda_env_init(&e, FAKE_CUDA_FULL, NO_KERNEL_DRIVER);
        if (gpo_backend_cuda.load(&e.env, &st, &rep) != GPUOPT_ERR_DRIVER)
            code |= 1;
        if (!strstr(rep.reason, "CUDA_ERROR_NOT_INITIALIZED") ||
            !strstr(rep.reason, "fork()ed from one that had already initialised CUDA"))
            code |= 2;
        if (st)
            code |= 4;
        _exit(code);
    }
    assert_int_equal(child_exit_code(pid), 0);
}

static void child_after_discovery_gets_forked_not_stale_devices(void **state)
{
    (void)state;
    cuda_env e;
    gpo_backend_report rep;
    gpo_device_list list = {0};
    void *st = NULL;
    char why[512];
    cuda_env_init(&e, FAKE_CUDA_FULL, NO_KERNEL_DRIVER);
    fake_cuda_configure(&full, fake_devices("h100-sxm5.json", "t4.json", NULL), NULL, NULL);
    assert_int_equal(cuda_load_and_list(&e, &st, &list, why, sizeof why), GPUOPT_OK);
    assert_int_equal(list.n, 2);
    gpo_device_list_free(&list);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int code = 0;
        gpo_device_list again = {0};
        gpo_route route;
        uint64_t free_bytes = 1;
        memset(&route, 0, sizeof route);
        if (gpo_backend_cuda.enumerate(st, &e.env, &again) != GPUOPT_ERR_FORKED)
            code |= 1;
        if (!strstr(gpo_detail_get(), "fork()ed child"))
            code |= 2;
        if (again.n != 0)
            code |= 4;
        gpo_memory_reading live;
        live.free = free_bytes;
        if (gpo_backend_cuda.memory_live(st, &route, GPO_MEMORY_MAY_CREATE_CONTEXT, &live) !=
                GPUOPT_ERR_FORKED ||
            live.free != 0)
            code |= 8;
        /* A fresh load in the child is refused too, before touching the
         * driver, and says what to do. */
        void *st2 = NULL;
        long inits = full.calls("cuInit");
        if (gpo_backend_cuda.load(&e.env, &st2, &rep) != GPUOPT_ERR_FORKED || st2)
            code |= 16;
        if (!strstr(rep.reason, "fork()ed") || !strstr(rep.reason, "spawn"))
            code |= 32;
        if (full.calls("cuInit") != inits)
            code |= 64;
        gpo_device_list_free(&again);
        _exit(code);
    }
    assert_int_equal(child_exit_code(pid), 0);
    /* The parent is unaffected. */
    assert_int_equal(gpo_backend_cuda.enumerate(st, &e.env, &list), GPUOPT_OK);
    assert_int_equal(list.n, 2);
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

static void child_applying_a_plan_gets_forked_before_any_context_call(void **state)
{
    (void)state;
    cuda_env e;
    gpo_device_list list = {0};
    void *st = NULL;
    char why[512];
    gpo_route route;
    cuda_env_init(&e, FAKE_CUDA_FULL, NO_KERNEL_DRIVER);
    fake_cuda_configure(&full, fake_devices("h100-sxm5.json", NULL), NULL, NULL);
    assert_int_equal(cuda_load_and_list(&e, &st, &list, why, sizeof why), GPUOPT_OK);
    gpuopt_device *dev = list.items[0];
    dev->routes[0].backend = &gpo_backend_cuda; /* the core's part: the knob catalogue */
    dev->n_routes = 1;
    memset(&route, 0, sizeof route);
    struct gpuopt_plan *plan = gpo_plan_new(NULL, dev, 1);
    assert_non_null(plan);
    plan->cur_tier = plan->level_applied = 1;
    assert_int_equal(gpo_knob_set_bytes(plan, "cuda.l2_persisting_bytes", 39321600, "test"),
                     GPUOPT_OK);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int code = 0;
        gpo_sbuf report;
        gpo_sbuf_init(&report);
        /* Even with a context made current in the child (the double lets
         * it; a real driver would not). */
        if (full.make_current(0) != 0)
            code |= 1;
        if (gpo_backend_cuda.apply_device(st, &route, plan, &report) != GPUOPT_ERR_FORKED)
            code |= 2;
        if (!strstr(gpo_detail_get(), "fork()ed child"))
            code |= 4;
        char *text = gpo_sbuf_take(&report);
        if (!text || !strstr(text, "failed: setting the L2 persisting limit on cuda:0: the CUDA "
                                   "driver was initialised in process"))
            code |= 8;
        if (full.calls("cuCtxGetCurrent") != 0 || full.calls("cuCtxSetLimit") != 0)
            code |= 16;
        free(text);
        _exit(code);
    }
    assert_int_equal(child_exit_code(pid), 0);
    gpo_plan_free(plan);
    gpo_device_list_free(&list);
    gpo_backend_cuda.unload(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(child_of_a_cuda_parent_hears_why_cuinit_fails),
        cmocka_unit_test(child_after_discovery_gets_forked_not_stale_devices),
        cmocka_unit_test(child_applying_a_plan_gets_forked_before_any_context_call),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
