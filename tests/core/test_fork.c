/* After fork(), a context whose GPU backends hold driver state answers with
 * GPUOPT_ERR_FORKED and a sentence, never with stale counts or a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "context.h"
#include "support/synthetic.h"
#include "support/testutil.h"

static int setup(void **state)
{
    (void)state;
    syn_reset();
    syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "gpu", NULL, NULL, 1000, 1u << 30)->integrated = 0;
    syn_add(&syn_cpu, GPUOPT_DEVICE_TYPE_CPU, "cpu", NULL, NULL, 10, 1u << 30);
    return 0;
}

/* Runs `fn` in a child and returns its exit status. */
static int in_child(int (*fn)(gpuopt_context *), gpuopt_context *ctx)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(fn(ctx));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int child_expects_forked(gpuopt_context *ctx)
{
    int32_t n = 99;
    gpuopt_device *d;
    gpuopt_plan *p;
    if (gpuopt_device_count(ctx, &n) != GPUOPT_ERR_FORKED || n != 0)
        return 1;
    if (!strstr(gpuopt_last_error(), "does not survive fork()") ||
        !strstr(gpuopt_last_error(), "create a new context"))
        return 2;
    if (gpuopt_device_select(ctx, "auto", &d) != GPUOPT_ERR_FORKED)
        return 3;
    if (gpuopt_plan_create(ctx, NULL, 1, &p) != GPUOPT_ERR_FORKED)
        return 4;
    /* A fresh context in the child works. */
    gpuopt_context *fresh;
    if (syn_context(NULL, NULL, NULL, &fresh) != GPUOPT_OK)
        return 5;
    if (gpuopt_device_count(fresh, &n) != GPUOPT_OK || n != 2)
        return 6;
    gpuopt_context_destroy(fresh);
    return 0;
}

static int child_expects_ok(gpuopt_context *ctx)
{
    int32_t n = 0;
    return gpuopt_device_count(ctx, &n) == GPUOPT_OK && n == 1 ? 0 : 1;
}

static void child_of_a_process_with_gpu_state_gets_a_clear_answer(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    int32_t n;
    assert_int_equal(syn_context(NULL, NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_count(ctx, &n), GPUOPT_OK);
    assert_int_equal(n, 2);
    assert_int_equal(in_child(child_expects_forked, ctx), 0);
    /* The parent is unaffected. */
    assert_int_equal(gpuopt_device_count(ctx, &n), GPUOPT_OK);
    assert_int_equal(n, 2);
    gpuopt_context_destroy(ctx);
}

static void cpu_only_context_stays_usable_in_a_child(void **state)
{
    (void)state;
    gpuopt_context *ctx;
    int32_t n;
    assert_int_equal(syn_context("syncpu", NULL, NULL, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_device_count(ctx, &n), GPUOPT_OK);
    assert_int_equal(in_child(child_expects_ok, ctx), 0);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(child_of_a_process_with_gpu_state_gets_a_clear_answer, setup),
        cmocka_unit_test_setup(cpu_only_context_stays_usable_in_a_child, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
