/* Element types and the per-element output check (see validate.h). */
#include <math.h>
#include <string.h>

#include "util/strutil.h"
#include "tune/validate.h"

size_t gpo_elem_size(int32_t type)
{
    static const size_t sizes[] = {0, 4, 8, 4, 4, 8}; /* by GPUOPT_ELEM_* */
    return type >= GPUOPT_ELEM_F32 && type <= GPUOPT_ELEM_I64 ? sizes[type] : 0;
}

const char *gpo_elem_name(int32_t type)
{
    static const char *const names[] = {"?", "f32", "f64", "i32", "u32", "i64"};
    return type >= GPUOPT_ELEM_F32 && type <= GPUOPT_ELEM_I64 ? names[type] : names[0];
}

int gpo_elem_is_float(int32_t type)
{
    return type == GPUOPT_ELEM_F32 || type == GPUOPT_ELEM_F64;
}

/* One element of any type; every member starts at its first byte, so an
 * element's bytes copy in and out at &e. */
typedef union elem {
    float f32;
    double f64;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
} elem;

static elem load(const void *base, size_t i, int32_t type)
{
    elem e = {0};
    memcpy(&e, (const unsigned char *)base + i * gpo_elem_size(type), gpo_elem_size(type));
    return e;
}

double gpo_elem_get(const void *base, size_t i, int32_t type)
{
    elem e = load(base, i, type);
    switch (type) {
    case GPUOPT_ELEM_F32: return e.f32;
    case GPUOPT_ELEM_F64: return e.f64;
    case GPUOPT_ELEM_I32: return e.i32;
    case GPUOPT_ELEM_U32: return e.u32;
    case GPUOPT_ELEM_I64: return (double)e.i64;
    default: return NAN;
    }
}

static int64_t get_int(const void *base, size_t i, int32_t type)
{
    elem e = load(base, i, type);
    return type == GPUOPT_ELEM_I32 ? e.i32 : type == GPUOPT_ELEM_U32 ? e.u32 : e.i64;
}

void gpo_elem_set(void *base, size_t i, int32_t type, double v)
{
    elem e;
    /* Each conversion only for its own type: converting a double that the
     * type cannot hold (-7 to uint32_t) is undefined (C11 6.3.1.4). */
    switch (type) {
    case GPUOPT_ELEM_F32: e.f32 = (float)v; break;
    case GPUOPT_ELEM_F64: e.f64 = v; break;
    case GPUOPT_ELEM_I32: e.i32 = (int32_t)v; break;
    case GPUOPT_ELEM_U32: e.u32 = (uint32_t)v; break;
    case GPUOPT_ELEM_I64: e.i64 = (int64_t)v; break;
    default: return;
    }
    memcpy((unsigned char *)base + i * gpo_elem_size(type), &e, gpo_elem_size(type));
}

/* splitmix64's finaliser over (seed, stream, i): a counter-based generator,
 * so element i never depends on the elements before it. */
static uint64_t mix(uint64_t seed, uint32_t stream, size_t i)
{
    uint64_t z = seed ^ ((uint64_t)stream * 0xd1b54a32d192ed03ull) ^
                 ((uint64_t)i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void gpo_elem_fill_random(void *base, size_t n, int32_t type, uint64_t seed, uint32_t stream)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t h = mix(seed, stream, i);
        if (gpo_elem_is_float(type))
            gpo_elem_set(base, i, type, (double)(h >> 11) * 0x1.0p-52 - 1.0);
        else
            gpo_elem_set(base, i, type, (double)(h % 100));
    }
}

static int float_ok(double got, double want, double abs_tol, double rel_tol)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    return fabs(got - want) <= abs_tol + rel_tol * fabs(want);
}

static int int_ok(int64_t got, int64_t want, double abs_tol, double rel_tol)
{
    if (got == want)
        return 1;
    /* The difference in unsigned arithmetic cannot overflow. */
    uint64_t d = got > want ? (uint64_t)got - (uint64_t)want : (uint64_t)want - (uint64_t)got;
    return (double)d <= abs_tol + rel_tol * fabs((double)want);
}

int gpo_validate(const void *out, const void *ref, size_t n, int32_t type, double abs_tol,
                 double rel_tol, gpo_mismatch *m)
{
    size_t bad = 0, first = 0;
    int fl = gpo_elem_is_float(type);
    for (size_t i = 0; i < n; i++) {
        int ok =
            fl ? float_ok(gpo_elem_get(out, i, type), gpo_elem_get(ref, i, type), abs_tol, rel_tol)
               : int_ok(get_int(out, i, type), get_int(ref, i, type), abs_tol, rel_tol);
        if (!ok && bad++ == 0)
            first = i;
    }
    if (m) {
        memset(m, 0, sizeof *m);
        m->count = bad;
        if (bad) {
            m->index = first;
            m->got = gpo_elem_get(out, first, type);
            m->want = gpo_elem_get(ref, first, type);
        }
    }
    return bad == 0;
}

void gpo_validate_describe(const gpo_mismatch *m, uint32_t arg, size_t n, double abs_tol,
                           double rel_tol, char *out, size_t cap)
{
    gpo_snprintf(out, cap,
                 "output argument %u: element %zu is %.9g, expected %.9g (|difference| %.3g > "
                 "%g + %g * |expected|); %zu of %zu elements differ",
                 arg, m->index, m->got, m->want, fabs(m->got - m->want), abs_tol, rel_tol, m->count,
                 n);
}
