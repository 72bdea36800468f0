/* Parameter spaces: building, constraints pruning exactly what brute force
 * rejects, the lazy walk on a CLTune-sized space in constant memory,
 * sampling, neighbours, configurations, the canonical text and hash. */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/detail.h"
#include "util/strutil.h"
#include "tune/space.h"
#include "util/hash.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif
#ifdef HAVE_ASAN
/* From the sanitizer runtime (sanitizer/allocator_interface.h, which not
 * every compiler installs). */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

/* Bytes currently allocated on the heap (the sanitizer's allocator when
 * it replaces malloc). */

/* The hash of a space's canonical text, as the cache keys take it. */
static gpuopt_status space_hash(const gpuopt_space *s, uint64_t *h)
{
    char *text = NULL;
    gpuopt_status st = gpo_space_canonical(s, &text);
    if (st == GPUOPT_OK)
        *h = gpo_hash64(text, strlen(text));
    free(text);
    return st;
}

static size_t heap_in_use(void)
{
#ifdef HAVE_ASAN
    return __sanitizer_get_current_allocated_bytes();
#else
    return mallinfo2().uordblks;
#endif
}

static gpuopt_space *new_space(void)
{
    gpuopt_space *s = NULL;
    assert_int_equal(gpuopt_space_create(&s), GPUOPT_OK);
    return s;
}

static void add_ints(gpuopt_space *s, const char *name, const int64_t *v, int32_t n)
{
    assert_int_equal(gpuopt_space_add_int(s, name, v, n), GPUOPT_OK);
}

/* ---- a small space checked against nested C loops ------------------------ */

static const int64_t A[] = {1, 2, 3, 4, 6, 8}, B[] = {1, 2, 4, 8, 16}, C[] = {0, 1, 2};
static const char *const E[] = {"off", "on"};

static int c_legal(int64_t a, int64_t b, int64_t c, int e, int64_t n)
{
    return a * b <= 16 && (b % a == 0 || c == 2) && (e == 1 || a < 4) && n % (a * b) == 0;
}

static gpuopt_space *small_space(int64_t n)
{
    gpuopt_space *s = new_space();
    add_ints(s, "A", A, 6);
    add_ints(s, "B", B, 5);
    add_ints(s, "C", C, 3);
    assert_int_equal(gpuopt_space_add_enum(s, "E", E, 2), GPUOPT_OK);
    assert_int_equal(gpuopt_space_set_size(s, "N", n), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(s, "A*B <= 16"), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(s, "B % A == 0 || C == 2"), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(s, "E == 1 || A < 4"), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(s, "N % (A * B) == 0"), GPUOPT_OK);
    return s;
}

static void walk_yields_exactly_the_brute_force_legal_set_in_order(void **state)
{
    (void)state;
    gpuopt_space *s = small_space(24);
    gpo_space_iter it;
    assert_int_equal(gpo_space_iter_init(&it, s), GPUOPT_OK);
    uint64_t want = 0;
    for (int a = 0; a < 6; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 3; c++)
                for (int e = 0; e < 2; e++) {
                    if (!c_legal(A[a], B[b], C[c], e, 24))
                        continue;
                    want++;
                    assert_int_equal(gpo_space_iter_next(&it), 1);
                    uint32_t expect[4] = {(uint32_t)a, (uint32_t)b, (uint32_t)c, (uint32_t)e};
                    assert_memory_equal(it.idx, expect, sizeof expect);
                    assert_true(gpo_space_is_legal(s, expect));
                }
    assert_int_equal(gpo_space_iter_next(&it), 0);
    assert_int_equal(gpo_space_iter_next(&it), 0); /* stays done */
    gpo_space_iter_free(&it);
    uint64_t raw, legal;
    assert_int_equal(gpuopt_space_count(s, &raw, &legal), GPUOPT_OK);
    assert_int_equal(raw, 6 * 5 * 3 * 2);
    assert_int_equal(legal, want);
    assert_true(want > 5 && want < raw);
    /* raw only */
    assert_int_equal(gpuopt_space_count(s, &raw, NULL), GPUOPT_OK);
    /* A new problem size changes the legal set, not the space's hash. */
    uint64_t h1, h2, legal2;
    assert_int_equal(space_hash(s, &h1), GPUOPT_OK);
    assert_int_equal(gpuopt_space_set_size(s, "N", 7), GPUOPT_OK);
    assert_int_equal(gpuopt_space_count(s, &raw, &legal2), GPUOPT_OK);
    assert_int_equal(legal2, 6); /* only A*B == 1 divides 7: A=B=1, any C, any E */
    assert_int_equal(space_hash(s, &h2), GPUOPT_OK);
    assert_true(h1 == h2);
    gpuopt_space_destroy(s);
}

/* Random spaces and constraints: the pruned walk, counting with free tails,
 * and seek all agree with testing every raw configuration. */
static void random_spaces_prune_exactly_what_brute_force_rejects(void **state)
{
    (void)state;
    static const char *const templates[] = {
        "P0 * P1 <= 24",     "P1 % P0 == 0",
        "P2 != P0",          "P0 + P2 < 9",
        "N % P1 == 0",       "P3 == 0 || P2 > 1",
        "pow2(P0 * P3)",     "min(P1, P2) >= 2",
        "P1 / (P2 - 2) > 1", "ceildiv(N, P0) % 2 == 0",
        "P4 <= P0",          "N > 3",
    };
    gpo_rng rng;
    gpo_rng_seed(&rng, 7);
    for (int round = 0; round < 60; round++) {
        gpuopt_space *s = new_space();
        int np = 3 + (int)gpo_rng_below(&rng, 3);
        for (int p = 0; p < np; p++) {
            int64_t v[6];
            int n = 1 + (int)gpo_rng_below(&rng, 6);
            for (int k = 0; k < n; k++)
                v[k] = k * 2 + (int64_t)gpo_rng_below(&rng, 2) + 1; /* distinct, ascending */
            char name[16];
            snprintf(name, sizeof name, "P%d", p);
            add_ints(s, name, v, n);
        }
        assert_int_equal(gpuopt_space_set_size(s, "N", 12 + (int64_t)gpo_rng_below(&rng, 12)),
                         GPUOPT_OK);
        int nc = (int)gpo_rng_below(&rng, 4);
        for (int c = 0; c < nc; c++) {
            const char *t = templates[gpo_rng_below(&rng, sizeof templates / sizeof templates[0])];
            gpuopt_status st = gpuopt_space_add_constraint(s, t);
            assert_true(st == GPUOPT_OK || st == GPUOPT_ERR_NOT_FOUND); /* P3/P4 may not exist */
        }
        /* Brute force over the raw product, in walk order. */
        uint64_t raw;
        assert_int_equal(gpo_space_raw_size(s, &raw), 0);
        uint32_t idx[8] = {0};
        gpo_space_iter it, seek;
        assert_int_equal(gpo_space_iter_init(&it, s), GPUOPT_OK);
        assert_int_equal(gpo_space_iter_init(&seek, s), GPUOPT_OK);
        uint64_t legal = 0;
        for (uint64_t r = 0; r < raw; r++) {
            uint64_t x = r;
            for (int p = np - 1; p >= 0; p--) {
                uint32_t cnt = (uint32_t)gpo_space_value_count(s, p);
                idx[p] = (uint32_t)(x % cnt);
                x /= cnt;
            }
            /* seek from every raw point lands on the first legal one at or
             * after it: the next one the full walk will produce. */
            gpo_space_iter_seek(&seek, idx);
            int sought = gpo_space_iter_next(&seek);
            if (!gpo_space_is_legal(s, idx)) {
                if (sought)
                    assert_false(memcmp(seek.idx, idx, (size_t)np * 4) == 0);
                continue;
            }
            assert_int_equal(sought, 1);
            assert_memory_equal(seek.idx, idx, (size_t)np * 4);
            legal++;
            assert_int_equal(gpo_space_iter_next(&it), 1);
            assert_memory_equal(it.idx, idx, (size_t)np * 4);
        }
        assert_int_equal(gpo_space_iter_next(&it), 0);
        gpo_space_iter_free(&it);
        gpo_space_iter_free(&seek);
        uint64_t counted;
        int exact;
        assert_int_equal(gpo_space_count_legal(s, 0, 0, &counted, &exact), GPUOPT_OK);
        assert_int_equal(counted, legal);
        assert_int_equal(exact, 1);
        if (legal > 2) {
            assert_int_equal(gpo_space_count_legal(s, 1, 0, &counted, &exact), GPUOPT_OK);
            assert_int_equal(exact, 0);
            assert_true(counted > 1);
        }
        gpuopt_space_destroy(s);
    }
}

/* ---- the CLTune SGEMM space -------------------------------------------------- */

/* CLTune's GEMM sample (samples/gemm/gemm.cc): 14 parameters, 1,327,104 raw
 * configurations, 241,600 legal under its divisibility constraints. */
static gpuopt_space *cltune_gemm_space(void)
{
    static const int64_t tile[] = {16, 32, 64, 128}, kwg[] = {16, 32}, dim[] = {8, 16, 32},
                         kwi[] = {2, 8}, vw[] = {1, 2, 4, 8}, bit[] = {0, 1};
    gpuopt_space *s = new_space();
    add_ints(s, "MWG", tile, 4);
    add_ints(s, "NWG", tile, 4);
    add_ints(s, "KWG", kwg, 2);
    add_ints(s, "MDIMC", dim, 3);
    add_ints(s, "NDIMC", dim, 3);
    add_ints(s, "MDIMA", dim, 3);
    add_ints(s, "NDIMB", dim, 3);
    add_ints(s, "KWI", kwi, 2);
    add_ints(s, "VWM", vw, 4);
    add_ints(s, "VWN", vw, 4);
    add_ints(s, "STRM", bit, 2);
    add_ints(s, "STRN", bit, 2);
    add_ints(s, "SA", bit, 2);
    add_ints(s, "SB", bit, 2);
    static const char *const cons[] = {
        "KWG % KWI == 0",
        "MWG % (MDIMC * VWM) == 0",
        "NWG % (NDIMC * VWN) == 0",
        "MWG % (MDIMA * VWM) == 0",
        "NWG % (NDIMB * VWN) == 0",
        "KWG % ((MDIMC * NDIMC) / MDIMA) == 0",
        "KWG % ((MDIMC * NDIMC) / NDIMB) == 0",
    };
    for (size_t i = 0; i < sizeof cons / sizeof cons[0]; i++)
        assert_int_equal(gpuopt_space_add_constraint(s, cons[i]), GPUOPT_OK);
    return s;
}

static void cltune_sized_space_walks_lazily_in_constant_memory(void **state)
{
    (void)state;
    gpuopt_space *s = cltune_gemm_space();
    uint64_t raw, legal;
    assert_int_equal(gpuopt_space_count(s, &raw, &legal), GPUOPT_OK);
    assert_int_equal(raw, 1327104);
    assert_int_equal(legal, 241600);

    size_t before = heap_in_use(), peak = before;
    gpo_space_iter it;
    assert_int_equal(gpo_space_iter_init(&it, s), GPUOPT_OK);
    uint64_t n = 0;
    while (gpo_space_iter_next(&it)) {
        n++;
        if (n % 4096 == 0 && heap_in_use() > peak)
            peak = heap_in_use();
    }
    gpo_space_iter_free(&it);
    assert_int_equal(n, 241600);
    /* Materialising even the legal list as index vectors would take
     * 241600 * 14 * 4 = 13.5 MB; the walk holds a few hundred bytes. */
    print_message("walk: %llu legal of %llu raw, heap growth %zu bytes\n", (unsigned long long)n,
                  (unsigned long long)raw, peak - before);
    assert_true(peak - before < 64 * 1024);
    gpuopt_space_destroy(s);
}

static void sampler_is_uniform_and_picks_its_mode_by_density(void **state)
{
    (void)state;
    gpo_rng rng;
    gpo_rng_seed(&rng, 1);
    /* Dense (18% legal): rejection, no memory. */
    gpuopt_space *s = cltune_gemm_space();
    gpo_sampler *sm;
    assert_int_equal(gpo_sampler_create(s, &sm), GPUOPT_OK);
    uint32_t idx[16];
    for (int i = 0; i < 2000; i++) {
        assert_int_equal(gpo_sampler_draw(sm, &rng, idx), 1);
        assert_true(gpo_space_is_legal(s, idx));
    }
    assert_string_equal(gpo_sampler_mode(sm), "rejection");
    assert_int_equal(gpo_sampler_bytes(sm), 0);
    gpo_sampler_destroy(sm);
    gpuopt_space_destroy(s);

    /* Sparse: 8 legal of 1024 (under 1 in 32): the index, and each legal
     * configuration drawn about equally often. */
    s = new_space();
    static const int64_t v[] = {0, 1, 2, 3, 4, 5, 6, 7};
    add_ints(s, "X", v, 8);
    add_ints(s, "Y", v, 8);
    add_ints(s, "Z", v, 8);
    add_ints(s, "W", v, 2); /* free: no constraint reads it */
    assert_int_equal(gpuopt_space_add_constraint(s, "X + Y + Z <= 1"), GPUOPT_OK);
    assert_int_equal(gpo_sampler_create(s, &sm), GPUOPT_OK);
    int hist[8][8][8][8];
    memset(hist, 0, sizeof hist);
    const int draws = 8000;
    for (int i = 0; i < draws; i++) {
        assert_int_equal(gpo_sampler_draw(sm, &rng, idx), 1);
        assert_true(gpo_space_is_legal(s, idx));
        hist[idx[0]][idx[1]][idx[2]][idx[3]]++;
    }
    assert_string_equal(gpo_sampler_mode(sm), "index");
    /* 4 legal prefixes (X, Y, Z) x 2 free W values = 8 configurations; the
     * index holds the 4 prefixes only. */
    assert_int_equal(gpo_sampler_bytes(sm), 4 * sizeof(uint64_t));
    int seen = 0;
    for (int x = 0; x < 8; x++)
        for (int y = 0; y < 8; y++)
            for (int z = 0; z < 8; z++)
                for (int w = 0; w < 8; w++)
                    if (hist[x][y][z][w]) {
                        seen++;
                        /* expected 1000 each; 6 sigma is about 200 */
                        assert_in_range(hist[x][y][z][w], 800, 1200);
                    }
    assert_int_equal(seen, 8);
    gpo_sampler_destroy(sm);
    gpuopt_space_destroy(s);

    /* More than 64 bits of constrained prefix (14 x 5 bits), 2^14 legal in
     * 2^70 raw: the walk, which still only answers legal ones. */
    s = new_space();
    int64_t w32[32];
    for (int k = 0; k < 32; k++)
        w32[k] = k;
    for (int p = 0; p < 14; p++) {
        char name[16], cons[32];
        snprintf(name, sizeof name, "Q%d", p);
        add_ints(s, name, w32, 32);
        snprintf(cons, sizeof cons, "Q%d %% 16 == 3", p);
        assert_int_equal(gpuopt_space_add_constraint(s, cons), GPUOPT_OK);
    }
    uint64_t raw;
    assert_int_equal(gpo_space_raw_size(s, &raw), -1);
    assert_true(raw == UINT64_MAX);
    assert_int_equal(gpo_sampler_create(s, &sm), GPUOPT_OK);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(gpo_sampler_draw(sm, &rng, idx), 1);
        assert_true(gpo_space_is_legal(s, idx));
    }
    assert_string_equal(gpo_sampler_mode(sm), "walk");
    gpo_sampler_destroy(sm);
    /* A constraint reading every parameter prunes nothing until the last
     * one: bounded counting says "not exact" instead of walking 2^70. */
    gpo_sbuf sum;
    gpo_sbuf_init(&sum);
    for (int p = 0; p < 14; p++)
        gpo_sbuf_appendf(&sum, "%sQ%d", p ? "+" : "", p);
    gpo_sbuf_append(&sum, " <= 42");
    assert_int_equal(gpuopt_space_add_constraint(s, sum.data), GPUOPT_OK);
    gpo_sbuf_free(&sum);
    uint64_t counted;
    int exact;
    assert_int_equal(gpo_space_count_legal(s, 0, 100000, &counted, &exact), GPUOPT_OK);
    assert_int_equal(exact, 0);
    gpuopt_space_destroy(s);

    /* Empty: no draw, in any mode. */
    s = small_space(24);
    assert_int_equal(gpuopt_space_add_constraint(s, "A > 100"), GPUOPT_OK);
    assert_int_equal(gpo_sampler_create(s, &sm), GPUOPT_OK);
    assert_int_equal(gpo_sampler_draw(sm, &rng, idx), 0);
    assert_int_equal(gpo_sampler_draw(sm, &rng, idx), 0);
    assert_int_equal(gpo_sampler_draw(NULL, &rng, idx), 0);
    assert_int_equal(gpo_sampler_draw(sm, NULL, idx), 0);
    assert_int_equal(gpo_sampler_draw(sm, &rng, NULL), 0);
    gpo_sampler_destroy(sm);
    gpo_sampler_destroy(NULL);
    assert_string_equal(gpo_sampler_mode(NULL), "none");
    gpuopt_space_destroy(s);
}

static void neighbours_skip_to_the_nearest_legal_value(void **state)
{
    (void)state;
    static const int64_t t[] = {1, 2, 3, 4, 5, 6, 7, 8}, u[] = {1, 2, 4};
    gpuopt_space *s = new_space();
    add_ints(s, "T", t, 8);
    add_ints(s, "U", u, 3);
    assert_int_equal(gpuopt_space_add_constraint(s, "T % U == 0"), GPUOPT_OK);
    uint32_t out[64 * 2];
    int32_t n;
    /* T=4 (index 3), U=4 (index 2): T's adjacent values 3 and 5 are not
     * multiples of 4; the nearest legal are none below (T=4 is the
     * smallest) and 8 above. U moves to 2. */
    uint32_t at[2] = {3, 2};
    assert_int_equal(gpo_space_neighbours(s, at, 0, out, 64, &n), GPUOPT_OK);
    assert_int_equal(n, 1); /* adjacent only: U=2 */
    assert_int_equal(out[0], 3);
    assert_int_equal(out[1], 1);
    assert_int_equal(gpo_space_neighbours(s, at, GPO_NB_NEAREST_LEGAL, out, 64, &n), GPUOPT_OK);
    assert_int_equal(n, 2);
    assert_int_equal(out[0], 7); /* T=8 */
    assert_int_equal(out[1], 2);
    assert_int_equal(out[2], 3); /* U=2 */
    assert_int_equal(out[3], 1);
    /* Pairs: (T=3,U=2)? 3%2 no; (T=5,U=2) no; (T=3/5, U=...)... only legal ones. */
    assert_int_equal(gpo_space_neighbours(s, at, GPO_NB_NEAREST_LEGAL | GPO_NB_PAIRS, out, 64, &n),
                     GPUOPT_OK);
    for (int32_t i = 0; i < n; i++)
        assert_true(gpo_space_is_legal(s, out + 2 * i));
    assert_true(n <= gpo_space_neighbour_max(s, GPO_NB_NEAREST_LEGAL | GPO_NB_PAIRS));
    assert_int_equal(gpo_space_neighbour_max(s, 0), 4);
    assert_int_equal(gpo_space_neighbour_max(s, GPO_NB_PAIRS), 8);
    /* max bounds the output. */
    assert_int_equal(gpo_space_neighbours(s, at, GPO_NB_NEAREST_LEGAL, out, 1, &n), GPUOPT_OK);
    assert_int_equal(n, 1);
    /* Bad input. */
    uint32_t bad[2] = {8, 0};
    assert_int_equal(gpo_space_neighbours(s, bad, 0, out, 64, &n), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpo_space_neighbour_max(NULL, 0), 0);
    gpuopt_space_destroy(s);
}

/* ---- configurations ------------------------------------------------------------ */

static void configurations_read_by_name_and_print_in_parameter_order(void **state)
{
    (void)state;
    gpuopt_space *s = small_space(24);
    uint32_t idx[4] = {1, 2, 0, 1}; /* A=2 B=4 C=0 E=on */
    gpuopt_point *c;
    assert_int_equal(gpo_point_create(s, idx, &c), GPUOPT_OK);
    gpuopt_space_destroy(s); /* the configuration keeps the space alive */
    int64_t v;
    const char *text;
    assert_int_equal(gpuopt_point_get_int(c, "B", &v), GPUOPT_OK);
    assert_int_equal(v, 4);
    assert_int_equal(gpuopt_point_get_int(c, "E", &v), GPUOPT_OK);
    assert_int_equal(v, 1); /* an enum reads as its position */
    assert_int_equal(gpuopt_point_get_text(c, "E", &text), GPUOPT_OK);
    assert_string_equal(text, "on");
    assert_int_equal(gpuopt_point_get_text(c, "A", &text), GPUOPT_OK);
    assert_string_equal(text, "2");
    char *str;
    assert_int_equal(gpuopt_point_to_string(c, &str), GPUOPT_OK);
    assert_string_equal(str, "A=2 B=4 C=0 E=on");
    gpuopt_free(str);
    assert_int_equal(gpuopt_point_get_int(c, "Z", &v), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(gpuopt_last_error(), "no parameter 'Z'"));
    assert_int_equal(gpuopt_point_get_int(c, NULL, &v), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_point_get_int(c, "A", NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_point_get_int(NULL, "A", &v), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_point_get_text(c, "A", NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_point_get_text(NULL, "A", &text), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_point_to_string(NULL, &str), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_point_to_string(c, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    const uint32_t *got = gpo_point_indices(c);
    assert_memory_equal(got, idx, sizeof idx);
    assert_non_null(gpo_point_space(c));
    assert_null(gpo_point_space(NULL));
    assert_null(gpo_point_indices(NULL));
    gpo_point_destroy(c);
    gpo_point_destroy(NULL);

    /* Out-of-range indices are refused, not read. */
    s = small_space(24);
    uint32_t bad[4] = {6, 0, 0, 0};
    assert_int_equal(gpo_point_create(s, bad, &c), GPUOPT_ERR_OUT_OF_RANGE);
    assert_null(c);
    gpuopt_point borrowed;
    gpo_point_borrow(&borrowed, s, bad);
    assert_int_equal(gpuopt_point_get_int(&borrowed, "A", &v), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_point_to_string(&borrowed, &str), GPUOPT_ERR_OUT_OF_RANGE);
    gpo_point_borrow(NULL, s, bad);
    assert_false(gpo_space_is_legal(s, bad));
    assert_false(gpo_space_is_legal(s, NULL));
    gpuopt_space_destroy(s);

    /* No parameters: one empty configuration. */
    s = new_space();
    uint64_t raw, legal;
    assert_int_equal(gpuopt_space_count(s, &raw, &legal), GPUOPT_OK);
    assert_int_equal(raw, 1);
    assert_int_equal(legal, 1);
    gpo_point_borrow(&borrowed, s, NULL);
    assert_int_equal(gpuopt_point_to_string(&borrowed, &str), GPUOPT_OK);
    assert_string_equal(str, "");
    gpuopt_free(str);
    gpo_space_iter it;
    assert_int_equal(gpo_space_iter_init(&it, s), GPUOPT_OK);
    assert_int_equal(gpo_space_iter_next(&it), 1);
    assert_int_equal(gpo_space_iter_next(&it), 0);
    gpo_space_iter_free(&it);
    gpuopt_space_destroy(s);
}

/* ---- building errors ------------------------------------------------------------- */

static void bad_names_values_and_constraints_are_refused_with_reasons(void **state)
{
    (void)state;
    gpuopt_space *s = new_space();
    static const int64_t v[] = {1, 2, 4};
    static const int64_t dup[] = {1, 2, 1};
    assert_int_equal(gpuopt_space_create(NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    static const char *const bad_names[] = {
        "",    "1A", "a-b",
        "a b", "é",  "x123456789012345678901234567890123456789012345678901234567890123"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++)
        assert_int_equal(gpuopt_space_add_int(s, bad_names[i], v, 3), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_int(s, NULL, v, 3), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_int(NULL, "A", v, 3), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_int(s, "A", NULL, 3), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_int(s, "A", v, 0), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_space_add_int(s, "A", v, -1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_space_add_int(s, "A", v, (1 << 20) + 1), GPUOPT_ERR_OUT_OF_RANGE);
    assert_int_equal(gpuopt_space_add_int(s, "A", dup, 3), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "value 1 appears twice"));
    assert_int_equal(gpuopt_space_add_int(s, "A", v, 3), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "A", v, 3), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "already used"));
    assert_int_equal(gpuopt_space_set_size(s, "A", 3), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_set_size(s, "N", 64), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_int(s, "N", v, 3), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_set_size(NULL, "M", 3), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_set_size(s, NULL, 3), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_set_size(s, "9x", 3), GPUOPT_ERR_INVALID_ARGUMENT);

    static const char *const bad_enum[][2] = {{"on", "on"}, {"a b", "c"}, {"", "x"}, {"x\n", "y"}};
    for (size_t i = 0; i < sizeof bad_enum / sizeof bad_enum[0]; i++)
        assert_int_equal(gpuopt_space_add_enum(s, "E", bad_enum[i], 2),
                         GPUOPT_ERR_INVALID_ARGUMENT);
    const char *with_null[] = {"x", NULL};
    assert_int_equal(gpuopt_space_add_enum(s, "E", with_null, 2), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_enum(s, "E", NULL, 2), GPUOPT_ERR_INVALID_ARGUMENT);
    static const char *const good[] = {"float4", "__local", "-1"};
    assert_int_equal(gpuopt_space_add_enum(s, "E", good, 3), GPUOPT_OK);

    assert_int_equal(gpuopt_space_add_constraint(s, "A * Q < 4"), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(gpuopt_last_error(), "unknown name 'Q' (known: A, E, N)"));
    assert_int_equal(gpuopt_space_add_constraint(s, "A <"), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "column 4"));
    assert_int_equal(gpuopt_space_add_constraint(s, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_constraint(NULL, "1"), GPUOPT_ERR_INVALID_ARGUMENT);

    /* 64 parameters at most. */
    gpuopt_space *many = new_space();
    for (int p = 0; p < 64; p++) {
        char name[8];
        snprintf(name, sizeof name, "P%d", p);
        add_ints(many, name, v, 1);
    }
    assert_int_equal(gpuopt_space_add_int(many, "P64", v, 1), GPUOPT_ERR_OUT_OF_RANGE);
    gpuopt_space_destroy(many);

    uint64_t raw;
    assert_int_equal(gpuopt_space_count(NULL, &raw, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_count(s, NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    gpuopt_space_destroy(s);
    gpuopt_space_destroy(NULL);
}

/* ---- callbacks ------------------------------------------------------------------ */

static int32_t even_sum(const gpuopt_point *c, void *user)
{
    int64_t a, b;
    (*(int *)user)++;
    if (gpuopt_point_get_int(c, "A", &a) != GPUOPT_OK ||
        gpuopt_point_get_int(c, "B", &b) != GPUOPT_OK)
        return 0;
    return (a + b) % 2 == 0;
}

static void callback_constraints_run_after_expressions_and_count_in_the_hash(void **state)
{
    (void)state;
    gpuopt_space *s = small_space(24);
    int calls = 0;
    assert_int_equal(gpuopt_space_add_constraint_fn(s, even_sum, &calls, "even-sum v1"), GPUOPT_OK);
    uint64_t raw, legal, want = 0, expression_legal = 0;
    for (int a = 0; a < 6; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 3; c++)
                for (int e = 0; e < 2; e++)
                    if (c_legal(A[a], B[b], C[c], e, 24)) {
                        expression_legal++;
                        want += (A[a] + B[b]) % 2 == 0;
                    }
    assert_int_equal(gpuopt_space_count(s, &raw, &legal), GPUOPT_OK);
    assert_int_equal(legal, want);
    /* The callback saw only what the expressions let through. */
    assert_int_equal(calls, (int)expression_legal);

    uint64_t h1, h2;
    assert_int_equal(space_hash(s, &h1), GPUOPT_OK);
    gpuopt_space *t = small_space(24);
    assert_int_equal(gpuopt_space_add_constraint_fn(t, even_sum, &calls, "even-sum v2"), GPUOPT_OK);
    assert_int_equal(space_hash(t, &h2), GPUOPT_OK);
    assert_true(h1 != h2);
    gpuopt_space_destroy(t);

    assert_int_equal(gpuopt_space_add_constraint_fn(s, even_sum, &calls, "even-sum v1"),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_constraint_fn(s, NULL, NULL, "x"),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_constraint_fn(s, even_sum, NULL, NULL),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_constraint_fn(s, even_sum, NULL, ""),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_constraint_fn(s, even_sum, NULL, "a\nb"),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_space_add_constraint_fn(NULL, even_sum, NULL, "x"),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    gpuopt_space_destroy(s);
}

/* ---- canonical text, hash, clone ------------------------------------------------- */

static void hash_ignores_order_and_spacing_but_not_content(void **state)
{
    (void)state;
    static const int64_t x[] = {8, 16, 32}, x_rev[] = {32, 16, 8}, x_other[] = {8, 16, 64},
                         y[] = {1, 2};
    static const char *const e[] = {"on", "off"}, *const e_rev[] = {"off", "on"};
    gpuopt_space *a = new_space(), *b = new_space();
    add_ints(a, "X", x, 3);
    add_ints(a, "Y", y, 2);
    assert_int_equal(gpuopt_space_add_enum(a, "S", e, 2), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(a, "X*Y<=32"), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(a, "S == 0 || Y == 1"), GPUOPT_OK);
    assert_int_equal(gpuopt_space_set_size(a, "N", 100), GPUOPT_OK);

    assert_int_equal(gpuopt_space_set_size(b, "N", 200), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_enum(b, "S", e, 2), GPUOPT_OK);
    add_ints(b, "Y", y, 2);
    add_ints(b, "X", x_rev, 3);
    assert_int_equal(gpuopt_space_add_constraint(b, "(S == 0) || (Y == 1)"), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(b, " X * Y <= 0x20 "), GPUOPT_OK);

    char *ta, *tb;
    assert_int_equal(gpo_space_canonical(a, &ta), GPUOPT_OK);
    assert_int_equal(gpo_space_canonical(b, &tb), GPUOPT_OK);
    assert_string_equal(ta, "gpuopt-space 1\n"
                            "constraint S == 0 || Y == 1\n"
                            "constraint X * Y <= 32\n"
                            "enum S 2:on 3:off\n"
                            "int X 8,16,32\n"
                            "int Y 1,2\n");
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
    uint64_t ha, hb;
    assert_int_equal(space_hash(a, &ha), GPUOPT_OK);
    assert_int_equal(space_hash(b, &hb), GPUOPT_OK);
    assert_true(ha == hb);
    /* Enum values keep their order: constraints read an enum by position,
     * so "S == 0" means "on" here and "off" with the values reversed. */
    gpuopt_space *r = new_space();
    add_ints(r, "X", x, 3);
    add_ints(r, "Y", y, 2);
    assert_int_equal(gpuopt_space_add_enum(r, "S", e_rev, 2), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(r, "X*Y<=32"), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(r, "S == 0 || Y == 1"), GPUOPT_OK);
    uint64_t hr;
    assert_int_equal(space_hash(r, &hr), GPUOPT_OK);
    assert_true(hr != ha);
    gpuopt_space_destroy(r);

    gpuopt_space *c = new_space();
    add_ints(c, "X", x_other, 3);
    add_ints(c, "Y", y, 2);
    assert_int_equal(gpuopt_space_add_enum(c, "S", e, 2), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(c, "X*Y<=32"), GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(c, "S == 0 || Y == 1"), GPUOPT_OK);
    uint64_t hc;
    assert_int_equal(space_hash(c, &hc), GPUOPT_OK);
    assert_true(hc != ha);
    assert_int_equal(gpuopt_space_add_constraint(c, "X > 8"), GPUOPT_OK);
    uint64_t hc2;
    assert_int_equal(space_hash(c, &hc2), GPUOPT_OK);
    assert_true(hc2 != hc);

    /* A clone is equal, and independent of later edits to the original. */
    gpuopt_space *k;
    assert_int_equal(gpo_space_clone(a, &k), GPUOPT_OK);
    uint64_t hk, ra, la, rk, lk;
    assert_int_equal(space_hash(k, &hk), GPUOPT_OK);
    assert_true(hk == ha);
    assert_int_equal(gpuopt_space_count(a, &ra, &la), GPUOPT_OK);
    assert_int_equal(gpuopt_space_count(k, &rk, &lk), GPUOPT_OK);
    assert_int_equal(ra, rk);
    assert_int_equal(la, lk);
    assert_int_equal(gpuopt_space_add_constraint(a, "X == 8"), GPUOPT_OK);
    assert_int_equal(gpuopt_space_count(k, &rk, &lk), GPUOPT_OK);
    assert_int_equal(la, lk);
    assert_int_equal(gpo_space_param_count(k), 3);
    assert_string_equal(gpo_space_value_text(k, 2, 0), "on");
    assert_int_equal(gpo_space_value(k, 0, 2), 32);
    assert_int_equal(gpo_space_size_values(k)[0], 100);
    assert_string_equal(gpo_space_size_name(k, 0), "N");
    assert_int_equal(gpo_space_size_count(k), 1);
    /* Readers answer neutrally out of range. */
    assert_null(gpo_space_param_name(k, 3));
    assert_null(gpo_space_value_text(k, 0, 3));
    assert_int_equal(gpo_space_value(k, -1, 0), 0);
    assert_int_equal(gpo_space_value_count(NULL, 0), 0);
    assert_int_equal(gpo_space_find_param(k, NULL), -1);
    assert_null(gpo_space_size_name(k, 1));

    gpuopt_space_destroy(a);
    gpuopt_space_destroy(b);
    gpuopt_space_destroy(c);
    gpuopt_space_destroy(k);
}

static void size_expressions_bind_and_evaluate_for_a_configuration(void **state)
{
    (void)state;
    gpuopt_space *s = small_space(24);
    gpo_expr *e;
    assert_int_equal(gpo_expr_parse("ceildiv(N, A * B) * B", &e), GPUOPT_OK);
    assert_int_equal(gpo_space_bind(s, e, "geometry global[0]"), GPUOPT_OK);
    uint32_t idx[4] = {4, 1, 0, 1}; /* A=6 B=2 */
    int64_t v;
    assert_int_equal(gpo_space_eval(s, idx, e, &v), GPO_EXPR_OK);
    assert_int_equal(v, 4);
    uint32_t bad[4] = {9, 0, 0, 0};
    assert_int_equal(gpo_space_eval(s, bad, e, &v), GPO_EXPR_UNDEFINED);
    assert_int_equal(gpo_space_eval(NULL, idx, e, &v), GPO_EXPR_UNDEFINED);
    gpo_expr_destroy(e);
    assert_int_equal(gpo_expr_parse("WPT * 2", &e), GPUOPT_OK);
    assert_int_equal(gpo_space_bind(s, e, "geometry local[1]"), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(gpuopt_last_error(), "geometry local[1] 'WPT * 2': unknown name"));
    gpo_expr_destroy(e);
    /* A sizes-only constraint that fails empties the space. */
    assert_int_equal(gpuopt_space_add_constraint(s, "N > 100"), GPUOPT_OK);
    uint64_t raw, legal;
    assert_int_equal(gpuopt_space_count(s, &raw, &legal), GPUOPT_OK);
    assert_int_equal(legal, 0);
    gpo_space_iter it;
    assert_int_equal(gpo_space_iter_init(&it, s), GPUOPT_OK);
    assert_int_equal(gpo_space_iter_next(&it), 0);
    gpo_space_iter_seek(&it, idx);
    assert_int_equal(gpo_space_iter_next(&it), 0);
    gpo_space_iter_free(&it);
    assert_int_equal(gpo_space_iter_next(NULL), 0);
    gpo_space_iter_seek(NULL, idx);
    gpo_space_iter_free(NULL);
    gpuopt_space_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(walk_yields_exactly_the_brute_force_legal_set_in_order),
        cmocka_unit_test(random_spaces_prune_exactly_what_brute_force_rejects),
        cmocka_unit_test(cltune_sized_space_walks_lazily_in_constant_memory),
        cmocka_unit_test(sampler_is_uniform_and_picks_its_mode_by_density),
        cmocka_unit_test(neighbours_skip_to_the_nearest_legal_value),
        cmocka_unit_test(configurations_read_by_name_and_print_in_parameter_order),
        cmocka_unit_test(bad_names_values_and_constraints_are_refused_with_reasons),
        cmocka_unit_test(callback_constraints_run_after_expressions_and_count_in_the_hash),
        cmocka_unit_test(hash_ignores_order_and_spacing_but_not_content),
        cmocka_unit_test(size_expressions_bind_and_evaluate_for_a_configuration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
