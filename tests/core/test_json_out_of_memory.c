/* The JSON exports when cJSON runs out of memory: each of its allocations
 * fails in turn while the device list and a plan are written. The call
 * either fails with GPUOPT_ERR_NO_MEMORY and no output, or succeeds with the
 * very text it gives when nothing fails. They once returned GPUOPT_OK with
 * fields left out (a device's id, the selection, the version, knob names)
 * and leaked what they had built (issue 12 item 10). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"
#include "support/cjson_fail.h"

typedef gpuopt_status (*export_fn)(void *obj, char **json);

static gpuopt_status devices(void *ctx, char **json)
{
    return gpuopt_context_to_json(ctx, json);
}

static gpuopt_status plan(void *p, char **json)
{
    return gpuopt_plan_to_json(p, json);
}

/* Fails each cJSON allocation of one export in turn; returns how many. */
static long sweep(export_fn fn, void *obj)
{
    char *want = NULL;
    assert_int_equal(fn(obj, &want), GPUOPT_OK);
    long n = 1;
    for (;; n++) {
        char *got = (char *)1;
        cjson_fail_at(n);
        gpuopt_status st = fn(obj, &got);
        long made = cjson_allocations();
        cjson_fail_off();
        if (st == GPUOPT_OK) {
            assert_non_null(got);
            if (strcmp(got, want) != 0)
                fail_msg("allocation %ld failed, yet the export succeeded with:\n%s\nnot:\n%s", n,
                         got, want);
            gpuopt_free(got);
        } else {
            assert_int_equal(st, GPUOPT_ERR_NO_MEMORY);
            assert_null(got);
        }
        if (made < n)
            break;
    }
    gpuopt_free(want);
    return n;
}

static void exports_fail_whole_or_succeed_whole_when_cjson_runs_out(void **state)
{
    (void)state;
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_ENV | GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "cpu";
    o.log_level = "off";
    o.sysfs_root = GPO_FIXTURES_DIR "/cpu/epyc-7763-k8s-pod";
    gpuopt_context *ctx = NULL;
    gpuopt_plan *p = NULL;
    assert_int_equal(gpuopt_context_create(&o, &ctx), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_create(ctx, NULL, 1, &p), GPUOPT_OK);
    assert_true(sweep(devices, ctx) > 100); /* every field was reached */
    assert_true(sweep(plan, p) > 100);
    gpuopt_plan_destroy(p);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exports_fail_whole_or_succeed_whole_when_cjson_runs_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
