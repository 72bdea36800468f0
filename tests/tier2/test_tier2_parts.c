/* Tier 2's parts one by one: the group-size ladder, the kernel sources,
 * formatting, and the generic entry on a route that cannot run code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "context.h"
#include "fake_rt.h"
#include "plan.h"
#include "tier2/bench.h"

/* ---- the ladder of group sizes ------------------------------------------------ */

/* "8,16,32,..." */
static void ladder_text(const int64_t *v, int32_t n, char *out, size_t cap)
{
    out[0] = '\0';
    for (int32_t i = 0; i < n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%lld", i ? "," : "", (long long)v[i]);
    }
}

static void ladder_orders_multiples_by_distance_from_the_incumbent(void **state)
{
    (void)state;
    int64_t v[16];
    char text[128];
    int32_t n = gpo_t2_ladder(32, 2048, 256, 0, v, 16);
    ladder_text(v, n, text, sizeof text);
    assert_string_equal(text, "256,128,512,64,1024,32,2048");

    /* An incumbent off the ladder is added; the power-of-two-only ladder
     * of an odd multiple is just the incumbent when it is one. */
    n = gpo_t2_ladder(48, 800, 240, 0, v, 16);
    ladder_text(v, n, text, sizeof text);
    assert_string_equal(text, "240,192,384,96,768,48");
    n = gpo_t2_ladder(48, 800, 256, 1, v, 16);
    ladder_text(v, n, text, sizeof text);
    assert_string_equal(text, "256");
    assert_int_equal(gpo_t2_ladder(48, 800, 240, 1, v, 16), 0);

    /* Bounds: the cap, a limit under the multiple, bad arguments. */
    assert_int_equal(gpo_t2_ladder(8, 4096, 256, 0, v, 3), 3);
    assert_int_equal(gpo_t2_ladder(64, 32, 64, 0, v, 16), 0);
    assert_int_equal(gpo_t2_ladder(0, 1024, 256, 0, v, 16), 0);
    assert_int_equal(gpo_t2_ladder(32, 1024, 256, 0, v, 0), 0);
    ladder_text(v, 0, text, sizeof text);
    assert_string_equal(text, "");
}

static void kernel_sources_exist_for_every_runtime_language(void **state)
{
    (void)state;
    static const char *const kernels[] = {"gpo_t2_copy", "gpo_t2_empty", "gpo_t2_reduce"};
    static const char *const langs[] = {"opencl-c", "cuda", "hip"};
    for (size_t l = 0; l < 3; l++) {
        const char *src = gpo_t2_kernel_source(langs[l]);
        assert_non_null(src);
        for (size_t k = 0; k < 3; k++)
            assert_non_null(strstr(src, kernels[k]));
        /* NVRTC and hiprtc mangle names unless they are extern "C". */
        if (l > 0)
            assert_non_null(strstr(src, "extern \"C\" __global__ void gpo_t2_reduce"));
    }
    assert_null(gpo_t2_kernel_source(NULL));
    assert_null(gpo_t2_kernel_source("metal"));
    assert_null(gpo_t2_kernel_source(""));
}

static void times_and_rates_read_in_their_units(void **state)
{
    (void)state;
    char b[32];
    gpo_format_ns(1.25e6, b, sizeof b);
    assert_string_equal(b, "1.25 ms");
    gpo_format_ns(48200, b, sizeof b);
    assert_string_equal(b, "48.2 us");
    gpo_format_ns(730, b, sizeof b);
    assert_string_equal(b, "730 ns");
    gpo_format_rate(12.4e9, b, sizeof b);
    assert_string_equal(b, "12.4 GB/s");
    gpo_format_rate(350e6, b, sizeof b);
    assert_string_equal(b, "350 MB/s");
    /* Where three digits round up to 1000, the next unit (not "1e+03 us"). */
    gpo_format_ns(999.7e3, b, sizeof b);
    assert_string_equal(b, "1 ms");
    gpo_format_ns(999.7, b, sizeof b);
    assert_string_equal(b, "1 us");
    gpo_format_ns(999.4e3, b, sizeof b);
    assert_string_equal(b, "999 us");
    gpo_format_rate(999.8e6, b, sizeof b);
    assert_string_equal(b, "1 GB/s");
}

/* The generic entry on a route whose backend cannot run code says so, and
 * touches nothing. */
static void the_generic_entry_refuses_a_route_without_runtime_ops(void **state)
{
    (void)state;
    fake_reset();
    fake_cl.enabled = 0;
    gpuopt_context *ctx = NULL;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tests/tier2/parts-XXXXXX", GPO_BUILD_DIR);
    assert_non_null(mkdtemp(dir));
    assert_int_equal(fake_context(dir, &ctx), GPUOPT_OK);
    gpuopt_device *dev = NULL;
    assert_int_equal(gpuopt_device_select(ctx, "fakegpu:0", &dev), GPUOPT_OK);
    struct gpuopt_plan *p = gpo_plan_new(ctx, dev, 2);
    assert_non_null(p);
    p->cfg = &ctx->cfg;
    p->log = &ctx->log;
    gpo_route bare = dev->routes[0];
    gpo_backend no_rt = *dev->routes[0].backend;
    no_rt.runtime = NULL;
    bare.backend = &no_rt;
    assert_int_equal(gpo_tier2_generic(bare.backend_state, &bare, dev, p), GPUOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuopt_last_error(), "no runtime ops"));
    assert_int_equal(fake_gpu.calls, 0);
    gpo_plan_free(p);
    gpuopt_context_destroy(ctx);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ladder_orders_multiples_by_distance_from_the_incumbent),
        cmocka_unit_test(kernel_sources_exist_for_every_runtime_language),
        cmocka_unit_test(times_and_rates_read_in_their_units),
        cmocka_unit_test(the_generic_entry_refuses_a_route_without_runtime_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
