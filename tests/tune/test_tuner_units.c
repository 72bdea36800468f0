/* The tuner's parts that need no device: element-by-element validation,
 * seeded input data, and the program cache with its build worker, driven
 * through a stand-in runtime that counts builds and frees. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "util/strutil.h"
#include "tune/progcache.h"
#include "tune/validate.h"

/* ---- validation ----------------------------------------------------------- */

static void every_element_is_held_to_abs_plus_rel_tolerance(void **state)
{
    (void)state;
    float ref[4] = {1000.0f, 0.0f, -2.0f, 1e-6f};
    float out[4] = {1000.09f, 0.00009f, -2.0002f, 1e-6f};
    gpo_mismatch m;
    assert_true(gpo_validate(out, ref, 4, GPUOPT_ELEM_F32, 1e-4, 1e-4, &m));
    assert_int_equal(m.count, 0);
    /* Element 1 is 2e-4 off with |ref| 0: only the absolute part allows. */
    out[1] = 2e-4f;
    assert_false(gpo_validate(out, ref, 4, GPUOPT_ELEM_F32, 1e-4, 1e-4, &m));
    assert_int_equal(m.index, 1);
    assert_int_equal(m.count, 1);
    assert_true(fabs(m.got - 2e-4) < 1e-9 && m.want == 0);
    /* A summed norm would call this buffer fine (one big error hidden by
     * a large n); per element it is not. */
    double big_ref[1000], big_out[1000];
    for (int i = 0; i < 1000; i++)
        big_ref[i] = big_out[i] = 1.0;
    big_out[999] = 1.5;
    assert_false(gpo_validate(big_out, big_ref, 1000, GPUOPT_ELEM_F64, 1e-3, 0, &m));
    assert_int_equal(m.index, 999);
    char text[400];
    gpo_validate_describe(&m, 2, 1000, 1e-3, 0, text, sizeof text);
    assert_non_null(strstr(text, "output argument 2: element 999 is 1.5, expected 1"));
    assert_non_null(strstr(text, "1 of 1000 elements differ"));
}

static void nan_matches_only_nan_and_infinities_match_themselves(void **state)
{
    (void)state;
    double ref[3] = {NAN, INFINITY, 1.0}, out[3] = {NAN, INFINITY, 1.0};
    assert_true(gpo_validate(out, ref, 3, GPUOPT_ELEM_F64, 1e9, 1e9, NULL));
    out[0] = 0;
    assert_false(gpo_validate(out, ref, 3, GPUOPT_ELEM_F64, 1e9, 1e9, NULL));
    out[0] = NAN;
    out[1] = -INFINITY;
    assert_false(gpo_validate(out, ref, 3, GPUOPT_ELEM_F64, 1e9, 1e9, NULL));
    out[1] = INFINITY;
    out[2] = NAN;
    gpo_mismatch m;
    assert_false(gpo_validate(out, ref, 3, GPUOPT_ELEM_F64, 1e9, 1e9, &m));
    assert_int_equal(m.index, 2);
}

static void integers_compare_exactly_in_64_bits(void **state)
{
    (void)state;
    int64_t ref[2] = {INT64_MAX, INT64_MIN}, out[2] = {INT64_MAX - 1, INT64_MIN};
    assert_false(gpo_validate(out, ref, 2, GPUOPT_ELEM_I64, 0, 0, NULL));
    assert_true(gpo_validate(out, ref, 2, GPUOPT_ELEM_I64, 1, 0, NULL));
    out[1] = INT64_MAX; /* the difference does not overflow */
    assert_false(gpo_validate(out, ref, 2, GPUOPT_ELEM_I64, 1, 0, NULL));
    uint32_t ur[1] = {UINT32_MAX}, uo[1] = {0};
    assert_false(gpo_validate(uo, ur, 1, GPUOPT_ELEM_U32, 0, 0.5, NULL));
    assert_true(gpo_validate(uo, ur, 1, GPUOPT_ELEM_U32, 0, 1, NULL));
    assert_true(gpo_validate(NULL, NULL, 0, GPUOPT_ELEM_I32, 0, 0, NULL));
}

static void element_types_have_sizes_names_and_conversions(void **state)
{
    (void)state;
    assert_int_equal(gpo_elem_size(GPUOPT_ELEM_F32), 4);
    assert_int_equal(gpo_elem_size(GPUOPT_ELEM_I64), 8);
    assert_int_equal(gpo_elem_size(0), 0);
    assert_int_equal(gpo_elem_size(6), 0);
    assert_string_equal(gpo_elem_name(GPUOPT_ELEM_U32), "u32");
    assert_string_equal(gpo_elem_name(-3), "?");
    int32_t v[2];
    gpo_elem_set(v, 1, GPUOPT_ELEM_I32, -7);
    assert_int_equal(v[1], -7);
    assert_true(gpo_elem_get(v, 1, GPUOPT_ELEM_I32) == -7.0);
    assert_true(isnan(gpo_elem_get(v, 0, 0)));
}

static void seeded_data_is_reproducible_and_independent_of_length(void **state)
{
    (void)state;
    float a[100], b[10], c[10];
    gpo_elem_fill_random(a, 100, GPUOPT_ELEM_F32, 42, 0);
    gpo_elem_fill_random(b, 10, GPUOPT_ELEM_F32, 42, 0);
    assert_memory_equal(a, b, sizeof b); /* a prefix: the length does not matter */
    gpo_elem_fill_random(c, 10, GPUOPT_ELEM_F32, 42, 1);
    assert_memory_not_equal(b, c, sizeof c); /* another argument, other data */
    gpo_elem_fill_random(c, 10, GPUOPT_ELEM_F32, 43, 0);
    assert_memory_not_equal(b, c, sizeof c);
    for (int i = 0; i < 100; i++)
        assert_true(a[i] >= -1.0f && a[i] < 1.0f);
    int32_t n[1000];
    gpo_elem_fill_random(n, 1000, GPUOPT_ELEM_I32, 7, 3);
    int lo = 0, hi = 0;
    for (int i = 0; i < 1000; i++) {
        assert_true(n[i] >= 0 && n[i] < 100);
        lo += n[i] < 50;
        hi += n[i] >= 50;
    }
    assert_true(lo > 350 && hi > 350);
}

/* ---- the program cache ---------------------------------------------------- */

/* A stand-in session: programs are heap cells; builds take a little time
 * so the worker is really busy while the caller does other things. */
typedef struct fake_prog {
    char options[128];
} fake_prog;

static long builds, frees, live;
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t build_thread;
static int build_thread_seen;

static gpuopt_status fake_build(gpo_rt *rt, const char *src, const char *opts, gpo_rt_prog **out,
                                char **log)
{
    (void)rt;
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&fake_lock);
    builds++;
    if (!pthread_equal(pthread_self(), build_thread))
        build_thread_seen = 1;
    pthread_mutex_unlock(&fake_lock);
    if (strstr(src, "broken") || strstr(opts, "-DBAD")) {
        *log = gpo_strdup("error: planted");
        return gpo_fail(GPUOPT_ERR_BUILD, "the kernel did not build: planted");
    }
    fake_prog *p = calloc(1, sizeof *p);
    gpo_strlcpy(p->options, opts, sizeof p->options);
    pthread_mutex_lock(&fake_lock);
    live++;
    pthread_mutex_unlock(&fake_lock);
    *out = (gpo_rt_prog *)p;
    *log = NULL;
    return GPUOPT_OK;
}

static void fake_free(gpo_rt *rt, gpo_rt_prog *p)
{
    (void)rt;
    pthread_mutex_lock(&fake_lock);
    frees++;
    live--;
    pthread_mutex_unlock(&fake_lock);
    free(p);
}

static const char *fake_compiler(gpo_rt *rt)
{
    (void)rt;
    return "fake 1.0";
}

static const gpo_runtime_ops fake_ops = {
    .language = "opencl-c",
    .builds_alongside_launches = 1,
    .program_build = fake_build,
    .program_free = fake_free,
    .compiler_version = fake_compiler,
};

static int reset(void **state)
{
    (void)state;
    builds = frees = live = 0;
    build_thread = pthread_self();
    build_thread_seen = 0;
    return 0;
}

static void programs_are_built_once_and_failures_remembered(void **state)
{
    (void)state;
    gpo_progcache *pc = NULL;
    gpo_rt *rt = (gpo_rt *)&fake_ops; /* any non-NULL session */
    assert_int_equal(gpo_progcache_create(&fake_ops, rt, 0, 0, &pc), GPUOPT_OK);
    assert_false(gpo_progcache_overlaps(pc));
    gpo_rt_prog *a = NULL, *b = NULL;
    double ms = 0;
    char *log = NULL;
    assert_int_equal(gpo_progcache_get(pc, "src", "-DX=1", &a, &log, &ms), GPUOPT_OK);
    assert_true(ms > 0);
    assert_null(log);
    assert_int_equal(gpo_progcache_get(pc, "src", "-DX=1", &b, NULL, &ms), GPUOPT_OK);
    assert_ptr_equal(a, b);
    assert_true(ms == -1); /* handed out before: nothing built for this call */
    assert_int_equal(builds, 1);
    /* Another source text with the same options is another program. */
    assert_int_equal(gpo_progcache_get(pc, "src2", "-DX=1", &b, NULL, NULL), GPUOPT_OK);
    assert_ptr_not_equal(a, b);
    /* A failure is kept with its log, and not built again. */
    assert_int_equal(gpo_progcache_get(pc, "src", "-DBAD", &b, &log, &ms), GPUOPT_ERR_BUILD);
    assert_null(b);
    assert_string_equal(log, "error: planted");
    assert_non_null(strstr(gpo_detail_get(), "planted"));
    free(log);
    assert_int_equal(gpo_progcache_get(pc, "src", "-DBAD", &b, NULL, NULL), GPUOPT_ERR_BUILD);
    assert_int_equal(builds, 3);
    gpo_progcache_stats st;
    gpo_progcache_get_stats(pc, &st);
    assert_int_equal(st.builds, 3);
    assert_int_equal(st.hits, 2);
    assert_int_equal(gpo_progcache_prefetch(pc, "s", "x"), GPUOPT_OK); /* no worker: nothing */
    gpo_progcache_destroy(pc);
    assert_int_equal(live, 0);
    gpo_progcache_destroy(NULL);
}

static void the_worker_builds_ahead_and_a_get_overtakes_the_queue(void **state)
{
    (void)state;
    gpo_progcache *pc = NULL;
    gpo_rt *rt = (gpo_rt *)&fake_ops;
    assert_int_equal(gpo_progcache_create(&fake_ops, rt, 1, 0, &pc), GPUOPT_OK);
    assert_true(gpo_progcache_overlaps(pc));
    char opts[32];
    for (int i = 0; i < 20; i++) {
        snprintf(opts, sizeof opts, "-DX=%d", i);
        assert_int_equal(gpo_progcache_prefetch(pc, "src", opts), GPUOPT_OK);
    }
    /* Queued last, wanted first: built ahead of the rest. */
    gpo_rt_prog *p = NULL;
    double ms = 0;
    assert_int_equal(gpo_progcache_get(pc, "src", "-DX=19", &p, NULL, &ms), GPUOPT_OK);
    assert_string_equal(((fake_prog *)p)->options, "-DX=19");
    assert_true(ms > 0);
    gpo_progcache_release(pc, p);
    for (int i = 0; i < 19; i++) {
        snprintf(opts, sizeof opts, "-DX=%d", i);
        assert_int_equal(gpo_progcache_get(pc, "src", opts, &p, NULL, &ms), GPUOPT_OK);
        assert_true(ms > 0); /* its own build time, though built on the worker */
        gpo_progcache_release(pc, p);
    }
    pthread_mutex_lock(&fake_lock);
    int seen = build_thread_seen;
    pthread_mutex_unlock(&fake_lock);
    assert_true(seen);
    gpo_progcache_stats st;
    gpo_progcache_get_stats(pc, &st);
    assert_int_equal(st.builds, 20);
    assert_int_equal(st.prefetched, 20);
    /* Destroyed with work queued: the worker stops, everything is freed. */
    for (int i = 100; i < 140; i++) {
        snprintf(opts, sizeof opts, "-DX=%d", i);
        gpo_progcache_prefetch(pc, "src", opts);
    }
    gpo_progcache_destroy(pc);
    assert_int_equal(live, 0);
}

static void programs_past_the_bound_are_evicted_but_never_one_in_use(void **state)
{
    (void)state;
    gpo_progcache *pc = NULL;
    gpo_rt *rt = (gpo_rt *)&fake_ops;
    assert_int_equal(gpo_progcache_create(&fake_ops, rt, 1, 4, &pc), GPUOPT_OK);
    gpo_rt_prog *held = NULL, *p = NULL;
    assert_int_equal(gpo_progcache_get(pc, "src", "-DX=0", &held, NULL, NULL), GPUOPT_OK);
    char opts[32];
    for (int i = 1; i < 10; i++) {
        snprintf(opts, sizeof opts, "-DX=%d", i);
        assert_int_equal(gpo_progcache_get(pc, "src", opts, &p, NULL, NULL), GPUOPT_OK);
        gpo_progcache_release(pc, p);
    }
    assert_true(live <= 4);
    /* The one in use is still there: asking again builds nothing. */
    long before = builds;
    assert_int_equal(gpo_progcache_get(pc, "src", "-DX=0", &p, NULL, NULL), GPUOPT_OK);
    assert_ptr_equal(p, held);
    assert_int_equal(builds, before);
    assert_string_equal(((fake_prog *)held)->options, "-DX=0");
    gpo_progcache_release(pc, p);
    gpo_progcache_release(pc, held);
    gpo_progcache_stats st;
    gpo_progcache_get_stats(pc, &st);
    assert_true(st.evicted >= 6);
    gpo_progcache_destroy(pc);
    assert_int_equal(live, 0);
    assert_int_equal(frees, builds);
}

static void only_runtimes_known_to_allow_it_build_on_a_worker(void **state)
{
    (void)state;
    gpo_runtime_ops o = fake_ops;
    o.builds_alongside_launches = 1;
    assert_true(gpo_progcache_threaded(&o));
    o.builds_alongside_launches = 0;
    assert_false(gpo_progcache_threaded(&o));
    assert_false(gpo_progcache_threaded(NULL));
    /* The real runtimes: OpenCL allows it, CUDA and HIP module loads need
     * the context current on the loading thread. */
    for (size_t i = 0; i < gpo_n_backends; i++) {
        const gpo_runtime_ops *rt = gpo_backends[i]->runtime;
        if (rt)
            assert_int_equal(gpo_progcache_threaded(rt), strcmp(rt->language, "opencl-c") == 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_element_is_held_to_abs_plus_rel_tolerance),
        cmocka_unit_test(nan_matches_only_nan_and_infinities_match_themselves),
        cmocka_unit_test(integers_compare_exactly_in_64_bits),
        cmocka_unit_test(element_types_have_sizes_names_and_conversions),
        cmocka_unit_test(seeded_data_is_reproducible_and_independent_of_length),
        cmocka_unit_test_setup(programs_are_built_once_and_failures_remembered, reset),
        cmocka_unit_test_setup(the_worker_builds_ahead_and_a_get_overtakes_the_queue, reset),
        cmocka_unit_test_setup(programs_past_the_bound_are_evicted_but_never_one_in_use, reset),
        cmocka_unit_test(only_runtimes_known_to_allow_it_build_on_a_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
