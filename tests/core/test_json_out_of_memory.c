/* The JSON exports when cJSON runs out of memory: each of its allocations
 * fails in turn while the device list, a plan and a memory manager are
 * written. The call either fails with GPUOPT_ERR_NO_MEMORY and no output,
 * or succeeds with the very text it gives when nothing fails. They once returned GPUOPT_OK with
 * fields left out (a device's id, the selection, the version, knob names)
 * and leaked what they had built (issue 12 item 10); the memory manager's
 * leaked an object whose key could not be copied. */
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

/* Cuts from `from` up to the first of `stop` after it: what may differ
 * between two exports of the same object. */
static void cut(char *text, const char *from, const char *stop)
{
    char *at = text ? strstr(text, from) : NULL;
    if (at) {
        size_t len = strlen(from) + strcspn(at + strlen(from), stop);
        memmove(at, at + len, strlen(at + len) + 1);
    }
}

/* The CPU's memory source says when it reuses the reading taken at load,
 * which it does for 100 ms (backends/cpu/memory.h): a matter of timing. */
static gpuopt_status devices(void *ctx, char **json)
{
    gpuopt_status st = gpuopt_context_to_json(ctx, json);
    cut(st == GPUOPT_OK ? *json : NULL, ", the backend's reading at load", "\"");
    return st;
}

static gpuopt_status plan(void *p, char **json)
{
    return gpuopt_plan_to_json(p, json);
}

/* The memory manager's JSON without the reading's age and its source's
 * timing remark. */
static gpuopt_status memory(void *mem, char **json)
{
    gpuopt_status st = gpuopt_memory_to_json(mem, json);
    cut(st == GPUOPT_OK ? *json : NULL, "\"age_s\":", ",}");
    cut(st == GPUOPT_OK ? *json : NULL, ", the backend's reading at load", "\"");
    return st;
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
    gpuopt_memory *mem = NULL;
    assert_int_equal(gpuopt_memory_create(p, &mem), GPUOPT_OK);
    assert_int_equal(gpuopt_memory_register(mem, "weights", GPUOPT_PLACE_DEVICE, 1 << 20),
                     GPUOPT_OK);
    assert_true(sweep(memory, mem) > 20);
    gpuopt_memory_destroy(mem);
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
