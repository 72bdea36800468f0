/* The synthetic SGEMM landscape (see the header). The efficiency factors
 * are shaped after what tiled GEMM tuning reports show (register tiles
 * around 4x4..8x8 best, vector width 4 on 128-bit units, local-memory
 * staging paying off for large tiles), not measured on a device. */
#include "test_strategy_landscape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "util/hash.h"

static void add(gpuopt_space *s, const char *name, const int64_t *v, int32_t n)
{
    assert_int_equal(gpuopt_space_add_int(s, name, v, n), GPUOPT_OK);
}

gpuopt_space *landscape_space(int big)
{
    static const int64_t tile_big[] = {16, 32, 64, 128}, tile_small[] = {32, 64, 128},
                         kwg[] = {16, 32}, dim[] = {8, 16, 32}, vw_big[] = {1, 2, 4, 8},
                         vw_small[] = {1, 2, 4}, bit[] = {0, 1};
    static const char *const stage[] = {"off", "on"};
    gpuopt_space *s = NULL;
    assert_int_equal(gpuopt_space_create(&s), GPUOPT_OK);
    if (big) {
        /* 13,824 raw, 6,728 legal. */
        add(s, "MWG", tile_big, 4);
        add(s, "NWG", tile_big, 4);
        add(s, "KWG", kwg, 2);
        add(s, "MDIMC", dim, 3);
        add(s, "NDIMC", dim, 3);
        add(s, "VWM", vw_big, 4);
        add(s, "VWN", vw_big, 4);
        add(s, "SA", bit, 2);
        add(s, "SB", bit, 2);
        static const char *const cons[] = {
            "MWG % (MDIMC * VWM) == 0",
            "NWG % (NDIMC * VWN) == 0",
            "MDIMC * NDIMC >= 64",
            "(SA * KWG * MWG + SB * KWG * NWG) * 4 <= 32768",
        };
        for (size_t i = 0; i < sizeof cons / sizeof cons[0]; i++)
            assert_int_equal(gpuopt_space_add_constraint(s, cons[i]), GPUOPT_OK);
    } else {
        /* 486 raw, 362 legal: one vector width, staging on or off. */
        add(s, "MWG", tile_small, 3);
        add(s, "NWG", tile_small, 3);
        add(s, "MDIMC", dim, 3);
        add(s, "NDIMC", dim, 3);
        add(s, "VW", vw_small, 3);
        assert_int_equal(gpuopt_space_add_enum(s, "STAGE", stage, 2), GPUOPT_OK);
        static const char *const cons[] = {
            "MWG % (MDIMC * VW) == 0",
            "NWG % (NDIMC * VW) == 0",
            "MDIMC * NDIMC >= 64",
        };
        for (size_t i = 0; i < sizeof cons / sizeof cons[0]; i++)
            assert_int_equal(gpuopt_space_add_constraint(s, cons[i]), GPUOPT_OK);
    }
    return s;
}

/* A parameter's value, or `fallback` when the space has no such one. */
static int64_t get(const gpuopt_space *s, const uint32_t *idx, const char *name, int64_t fallback)
{
    int32_t p = gpo_space_find_param(s, name);
    return p < 0 ? fallback : gpo_space_value(s, p, idx[p]);
}

static double vec_eff(int64_t w, const double *table)
{
    return table[w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : 3];
}

/* Parameters that differ from the planted optimum: MWG=64 NWG=128 KWG=32
 * MDIMC=16 NDIMC=16 VWM=VWN=4 SA=SB=1 (small: VW=4 STAGE=on). */
static int planted_distance(const gpuopt_space *s, const uint32_t *idx)
{
    struct {
        const char *name;
        int64_t v;
    } const want[] = {{"MWG", 64},   {"NWG", 128}, {"KWG", 32}, {"MDIMC", 16},
                      {"NDIMC", 16}, {"VWM", 4},   {"VWN", 4},  {"SA", 1},
                      {"SB", 1},     {"VW", 4},    {"STAGE", 1}};
    int d = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        d += get(s, idx, want[i].name, want[i].v) != want[i].v;
    return d;
}

int32_t landscape_eval(const gpuopt_space *s, const uint32_t *idx, double *ns)
{
    int64_t vw = get(s, idx, "VW", 0), stage = get(s, idx, "STAGE", 0);
    int64_t mwg = get(s, idx, "MWG", 0), nwg = get(s, idx, "NWG", 0), kwg = get(s, idx, "KWG", 16);
    int64_t mdimc = get(s, idx, "MDIMC", 0), ndimc = get(s, idx, "NDIMC", 0);
    int64_t vwm = get(s, idx, "VWM", vw), vwn = get(s, idx, "VWN", vw);
    int64_t sa = get(s, idx, "SA", stage), sb = get(s, idx, "SB", stage);
    int64_t wm = mwg / mdimc, wn = nwg / ndimc, regs = wm * wn, threads = mdimc * ndimc;
    *ns = -1;
    if (threads > 256)
        return GPO_CAND_LAUNCH_FAILED; /* over the device's work-group limit */
    if (regs > 128)
        return GPO_CAND_COMPILE_FAILED; /* the register allocator gives up */
    double reuse = 2.0 * (double)regs / (double)(wm + wn);
    double eff = reuse / (reuse + 1.5);
    if (regs > 64)
        eff *= 0.55; /* spills */
    eff *= threads >= 256 ? 1.0 : threads >= 128 ? 0.93 : 0.8;
    static const double vm[] = {0.62, 0.82, 1.0, 0.9}, vn[] = {0.75, 0.9, 1.0, 0.93};
    eff *= vec_eff(vwm, vm) * vec_eff(vwn, vn);
    eff *= sa ? (mwg >= 64 ? 1.18 : 0.96) : 1.0;
    eff *= sb ? (nwg >= 64 ? 1.12 : 0.97) : 1.0;
    eff *= kwg == 32 ? 1.04 : 1.0;
    double t = 2.0 * 1024 * 1024 * 1024 / (4e12 * 0.5 * eff) * 1e9;
    /* The narrow optimum: 20% ahead of the landscape there, its immediate
     * neighbours only 4%. */
    int d = planted_distance(s, idx);
    if (d == 0)
        t *= 0.8;
    else if (d == 1)
        t *= 0.96;
    /* Deterministic ruggedness: +-4% from the configuration's hash. */
    uint64_t h = gpo_space_idx_hash(s, idx);
    t *= 1.0 + 0.08 * ((double)(h >> 11) * 0x1.0p-53 - 0.5);
    /* A planted bug: wide M vectors without staging (big), or width 4
     * without staging (small), give wrong results, and look fast. */
    if ((vwm == 8 && sa == 0) || (vw == 4 && stage == 0)) {
        *ns = t * 0.3;
        return GPO_CAND_WRONG_RESULT;
    }
    *ns = t;
    return GPO_CAND_OK;
}

void landscape_optimum(const gpuopt_space *s, uint64_t *legal, double *best_ns, uint32_t *best)
{
    gpo_space_iter it;
    assert_int_equal(gpo_space_iter_init(&it, s), GPUOPT_OK);
    *legal = 0;
    *best_ns = INFINITY;
    while (gpo_space_iter_next(&it)) {
        (*legal)++;
        double ns;
        if (landscape_eval(s, it.idx, &ns) == GPO_CAND_OK && ns < *best_ns) {
            *best_ns = ns;
            memcpy(best, it.idx, (size_t)gpo_space_param_count(s) * sizeof *best);
        }
    }
    gpo_space_iter_free(&it);
}
