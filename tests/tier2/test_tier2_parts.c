/* The tier-2 engine's parts one by one: the timing drivers on synthetic
 * durations, the group-size ladder, the kernel sources, formatting, and
 * NULL, out-of-range and malformed input to every function. */
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
#include "tier2/t2_generic.h"
#include "tier2/tier2.h"

/* ---- timing ------------------------------------------------------------------ */

typedef struct subject {
    double ns[4]; /* per subject index */
    int runs;
    int fail_at; /* 0: never */
} subject;

static gpuopt_status run_k(void *user, int32_t i, double *ns)
{
    subject *s = user;
    s->runs++;
    if (s->fail_at && s->runs == s->fail_at)
        return gpo_fail(GPUOPT_ERR_LAUNCH, "subject failed on run %d", s->runs);
    *ns = s->ns[i] * (s->runs % 2 ? 1.01 : 0.99);
    return GPUOPT_OK;
}

static void retime_keeps_the_incumbent_within_noise_and_yields_to_a_clear_winner(void **state)
{
    (void)state;
    gpo_stats st[3];
    int32_t pick = -1;
    subject tie = {{1000, 990, 1005}, 0, 0};
    assert_int_equal(gpo_t2_retime(run_k, &tie, 3, 7, GPO_NOISE_FLOOR, st, &pick), GPUOPT_OK);
    assert_int_equal(pick, 0);
    assert_int_equal(tie.runs, 21);
    assert_int_equal(st[1].count, 6); /* the warm-up round is dropped */

    subject clear = {{1000, 600, 800}, 0, 0};
    assert_int_equal(gpo_t2_retime(run_k, &clear, 3, 5, GPO_NOISE_FLOOR, st, &pick), GPUOPT_OK);
    assert_int_equal(pick, 1);

    /* 4% faster: enough for the tuner's 2% floor, not for tier 2's 5%. */
    subject small = {{1000, 960}, 0, 0};
    assert_int_equal(gpo_t2_retime(run_k, &small, 2, 11, GPO_NOISE_FLOOR, st, &pick), GPUOPT_OK);
    assert_int_equal(pick, 1);
    assert_int_equal(gpo_t2_retime(run_k, &small, 2, 11, GPO_T2_SWITCH_FLOOR, st, &pick),
                     GPUOPT_OK);
    assert_int_equal(pick, 0);

    subject failing = {{1000, 600}, 0, 4};
    assert_int_equal(gpo_t2_retime(run_k, &failing, 2, 5, GPO_NOISE_FLOOR, st, &pick),
                     GPUOPT_ERR_LAUNCH);
    assert_int_equal(gpo_t2_retime(NULL, &clear, 2, 5, GPO_NOISE_FLOOR, st, &pick),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_retime(run_k, &clear, 2, 5, GPO_NOISE_FLOOR, NULL, &pick),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_retime(run_k, &clear, 0, 5, GPO_NOISE_FLOOR, st, &pick),
                     GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpo_t2_retime(run_k, &clear, 2, 1, GPO_NOISE_FLOOR, st, &pick),
                     GPUOPT_ERR_OUT_OF_RANGE);
}

/* ---- the ladder of group sizes ------------------------------------------------ */

static void ladder_orders_multiples_by_distance_from_the_incumbent(void **state)
{
    (void)state;
    int64_t v[16];
    char text[128];
    int32_t n = gpo_t2_ladder(32, 2048, 256, 0, v, 16);
    gpo_t2_ladder_text(v, n, text, sizeof text);
    assert_string_equal(text, "256,128,512,64,1024,32,2048");

    /* An incumbent off the ladder is added; the power-of-two-only ladder
     * of an odd multiple is just the incumbent when it is one. */
    n = gpo_t2_ladder(48, 800, 240, 0, v, 16);
    gpo_t2_ladder_text(v, n, text, sizeof text);
    assert_string_equal(text, "240,192,384,96,768,48");
    n = gpo_t2_ladder(48, 800, 256, 1, v, 16);
    gpo_t2_ladder_text(v, n, text, sizeof text);
    assert_string_equal(text, "256");
    assert_int_equal(gpo_t2_ladder(48, 800, 240, 1, v, 16), 0);

    /* Bounds: the cap, a limit under the multiple, bad arguments. */
    assert_int_equal(gpo_t2_ladder(8, 4096, 256, 0, v, 3), 3);
    assert_int_equal(gpo_t2_ladder(64, 32, 64, 0, v, 16), 0);
    assert_int_equal(gpo_t2_ladder(0, 1024, 256, 0, v, 16), 0);
    assert_int_equal(gpo_t2_ladder(32, 1024, 256, 0, NULL, 16), 0);
    assert_int_equal(gpo_t2_ladder(32, 1024, 256, 0, v, 0), 0);
    gpo_t2_ladder_text(v, 0, text, sizeof text);
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
    gpo_t2_fmt_ns(1.25e6, b, sizeof b);
    assert_string_equal(b, "1.25 ms");
    gpo_t2_fmt_ns(48200, b, sizeof b);
    assert_string_equal(b, "48.2 us");
    gpo_t2_fmt_ns(730, b, sizeof b);
    assert_string_equal(b, "730 ns");
    gpo_t2_fmt_rate(12.4e9, b, sizeof b);
    assert_string_equal(b, "12.4 GB/s");
    gpo_t2_fmt_rate(350e6, b, sizeof b);
    assert_string_equal(b, "350 MB/s");
}

/* ---- bad input ------------------------------------------------------------------- */

static gpuopt_status describe_ok(gpo_t2 *t2, void *u, char *w, size_t wc, char *s, size_t sc)
{
    (void)t2;
    (void)u;
    (void)sc;
    s[0] = '\0';
    snprintf(w, wc, "w");
    return GPUOPT_OK;
}

static void jobs_runs_and_sweeps_reject_null_and_empty_input(void **state)
{
    (void)state;
    assert_int_equal(gpo_t2_job_knob_int(NULL, "x", 1, "r"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_job_knob_bool(NULL, "x", 1, "r"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_job_knob_bytes(NULL, "x", 1, "r"), GPUOPT_ERR_INVALID_ARGUMENT);
    gpo_t2_job job;
    memset(&job, 0, sizeof job);
    assert_int_equal(gpo_t2_job_knob_int(&job, NULL, 1, "r"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_job_note(NULL, "bytes", 1), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_job_note(&job, NULL, 1), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_job_knob_int(&job, "x", 7, "seven %d", 7), GPUOPT_OK);
    assert_int_equal(gpo_t2_job_note(&job, "bytes", 1), GPUOPT_OK);
    assert_int_equal(gpo_t2_job_note(&job, "bytes", 2), GPUOPT_OK); /* replaced, not doubled */
    assert_int_equal(cJSON_GetArraySize(job.knobs), 1);
    assert_int_equal(cJSON_GetArraySize(job.extra), 1);
    cJSON_Delete(job.knobs);
    cJSON_Delete(job.extra);
    assert_true(gpo_t2_job_left_ms(NULL) == 0.0);
    assert_true(gpo_t2_job_left_ms(&job) == 0.0); /* no deadline: nothing left */

    gpo_t2 t2;
    memset(&t2, 0, sizeof t2);
    assert_int_equal(gpo_t2_run(NULL, NULL, 0, NULL, 1), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_run(&t2, NULL, 0, NULL, 1), GPUOPT_ERR_INVALID_ARGUMENT);

    gpo_t2_sweep_result r;
    gpo_t2_sweep s;
    memset(&s, 0, sizeof s);
    assert_int_equal(gpo_t2_sweep_run(NULL, &job, &s, &r), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_sweep_run(&t2, &job, &s, &r), GPUOPT_ERR_INVALID_ARGUMENT);
    int keep = 1;
    assert_int_equal(gpo_t2_sweep_verify(NULL, &s, &keep), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_sweep_verify(&job, &s, &keep), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_t2_rt_session(NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpo_tier2_generic(NULL, NULL, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    (void)describe_ok;
}

/* An incomplete benchmark table is refused before anything runs. */
static void run_refuses_a_benchmark_without_its_functions(void **state)
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
    assert_int_equal(gpuopt_select(ctx, "fakegpu:0", &dev), GPUOPT_OK);
    struct gpuopt_plan *p = gpo_plan_new(ctx, dev, 2);
    assert_non_null(p);
    p->cfg = &ctx->cfg;
    p->log = &ctx->log;
    gpo_t2 t2;
    gpo_t2_init(&t2, p, &dev->routes[0], dev, "fnv1a64:0000000000000000", "");
    assert_string_equal(t2.backend, "fakegpu");
    assert_string_equal(t2.soft.driver, "1.0");
    gpo_t2_bench half = {"half", 1.0, describe_ok, NULL, NULL};
    const gpo_t2_bench *list[1] = {&half};
    assert_int_equal(gpo_t2_run(&t2, list, 1, NULL, 100), GPUOPT_ERR_INVALID_ARGUMENT);
    const gpo_t2_bench *none[1] = {NULL};
    assert_int_equal(gpo_t2_run(&t2, none, 1, NULL, 100), GPUOPT_ERR_INVALID_ARGUMENT);
    /* An empty list is a run that sets nothing. */
    assert_int_equal(gpo_t2_run(&t2, list, 0, NULL, 100), GPUOPT_OK);
    assert_int_equal(fake_gpu.calls, 0);

    /* The generic engine on a route whose backend cannot run code. */
    gpo_route bare = dev->routes[0];
    gpo_backend no_rt = *dev->routes[0].backend;
    no_rt.runtime = NULL;
    bare.backend = &no_rt;
    assert_int_equal(gpo_tier2_generic(bare.backend_state, &bare, dev, p), GPUOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpuopt_last_error(), "no runtime ops"));
    gpo_plan_free(p);
    gpuopt_context_destroy(ctx);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retime_keeps_the_incumbent_within_noise_and_yields_to_a_clear_winner),
        cmocka_unit_test(ladder_orders_multiples_by_distance_from_the_incumbent),
        cmocka_unit_test(kernel_sources_exist_for_every_runtime_language),
        cmocka_unit_test(times_and_rates_read_in_their_units),
        cmocka_unit_test(jobs_runs_and_sweeps_reject_null_and_empty_input),
        cmocka_unit_test(run_refuses_a_benchmark_without_its_functions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
