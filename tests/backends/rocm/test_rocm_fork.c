/* After fork(), the parent's HIP runtime state is stale in the child: the
 * child gets GPUOPT_ERR_FORKED in words, never a crash or a stale list, and
 * a fresh load there is refused before any HIP call. */
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

#include "util/detail.h"
#include "rocm_test.h"

static long fake_uses(int major, const char *call)
{
    void *h = dlopen(fake_hip_path(major), RTLD_NOW | RTLD_LOCAL);
    long (*uses)(const char *);
    void *sym = h ? dlsym(h, "gpuoptFakeHipUses") : NULL;
    memcpy(&uses, &sym, sizeof sym);
    long n = uses ? uses(call) : -1;
    if (h)
        dlclose(h);
    return n;
}

static int child_exit_code(pid_t pid)
{
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

static void child_after_discovery_gets_forked_not_stale_devices(void **state)
{
    static const char *const two[] = {"mi300x", "rx7900xtx", NULL};
    rocm_env e;
    rocm_run r;
    (void)state;
    fake_reset(6, fake_devices(two), NULL);
    rocm_env_init(&e, NULL, fake_hip_path(6));
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_OK);
    assert_int_equal(r.list.n, 2);
    gpo_route route;
    rocm_route_of(&r, 0, &route);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int code = 0;
        gpo_device_list again = {0};
        uint64_t free_bytes = 0;
        if (gpo_backend_rocm.enumerate(r.state, &e.env, &again) != GPUOPT_ERR_FORKED)
            code |= 1;
        if (!strstr(gpo_detail_get(), "fork()ed child") || !strstr(gpo_detail_get(), "spawn"))
            code |= 2;
        if (again.n != 0)
            code |= 4;
        if (rocm_free(r.state, &route, &free_bytes) != GPUOPT_ERR_FORKED || free_bytes != 0)
            code |= 8;
        /* A fresh load is refused before touching the runtime. */
        void *st2 = NULL;
        gpo_backend_report rep;
        long inits = fake_uses(6, "hipInit");
        if (gpo_backend_rocm.load(&e.env, &st2, &rep) != GPUOPT_ERR_FORKED || st2)
            code |= 16;
        if (!strstr(rep.reason, "fork()ed from process") || !strstr(rep.reason, "spawn"))
            code |= 32;
        if (fake_uses(6, "hipInit") != inits)
            code |= 64;
        gpo_device_list_free(&again);
        _exit(code);
    }
    assert_int_equal(child_exit_code(pid), 0);

    /* The parent is unaffected. */
    gpo_device_list again = {0};
    uint64_t free_bytes = 0;
    assert_int_equal(gpo_backend_rocm.enumerate(r.state, &e.env, &again), GPUOPT_OK);
    assert_int_equal(again.n, 2);
    assert_int_equal(rocm_free(r.state, &route, &free_bytes), GPUOPT_OK);
    gpo_device_list_free(&again);
    rocm_run_free(&r);
}

static void kfd_only_listing_survives_fork(void **state)
{
    rocm_env e;
    rocm_run r;
    (void)state;
    /* Reading /sys is as good in the child: no runtime state to go stale.
     * (The earlier test initialised HIP in this process, so a load in a
     * child is refused; the state loaded here, before fork, lists.) */
    rocm_env_init(&e, kfd_root(0, "rx7900xtx"), "/nonexistent/libamdhip64.so");
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(r.state);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        gpo_device_list again = {0};
        int code = gpo_backend_rocm.enumerate(r.state, &e.env, &again) != GPUOPT_OK;
        code |= (again.n != 1) << 1;
        gpo_device_list_free(&again);
        _exit(code);
    }
    assert_int_equal(child_exit_code(pid), 0);
    rocm_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(child_after_discovery_gets_forked_not_stale_devices),
        cmocka_unit_test(kfd_only_listing_survives_fork),
    };
    return cmocka_run_group_tests(tests, rocm_test_clean_env, NULL);
}
