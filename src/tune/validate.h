/* Element types of kernel arguments and the element-by-element check of a
 * candidate's outputs against the reference.
 *
 * The rule is per element: |out - ref| <= abs_tol + rel_tol * |ref|. A
 * summed norm (CLTune compares the sum of |ref - out| over a whole buffer
 * with 1e-4) grows with the buffer and fails any kernel that merely
 * reassociates a large sum, while letting one wildly wrong element through
 * in a small one. NaN matches only NaN; an infinity matches only the same
 * infinity. Integers compare exactly in 64 bits before the tolerance. */
#ifndef GPO_TUNE_VALIDATE_H
#define GPO_TUNE_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "gpuopt/gpuopt.h"

/* Bytes of one element of a gpuopt_elem_type; 0 for an unknown type. */
size_t gpo_elem_size(int32_t type);
/* "f32", "f64", "i32", "u32", "i64"; "?" for an unknown type. */
const char *gpo_elem_name(int32_t type);
int gpo_elem_is_float(int32_t type);

/* Element i as a double, and set from a double (converted as C does; the
 * caller keeps values in range). */
double gpo_elem_get(const void *base, size_t i, int32_t type);
void gpo_elem_set(void *base, size_t i, int32_t type, double v);

/* Fills n elements from `seed` and `stream` (the argument index): element
 * i is a function of (seed, stream, i) alone, so a buffer's content does
 * not depend on its length. Floats uniform in [-1, 1), integers in
 * [0, 100). */
void gpo_elem_fill_random(void *base, size_t n, int32_t type, uint64_t seed, uint32_t stream);

typedef struct gpo_mismatch {
    size_t index; /* first mismatching element */
    double got;   /* its value */
    double want;  /* the reference's */
    size_t count; /* how many elements differ */
} gpo_mismatch;

/* Compares n elements; 1 when every one is within tolerance, else 0 with
 * the first mismatch and the count in *m (may be NULL). */
int gpo_validate(const void *out, const void *ref, size_t n, int32_t type, double abs_tol,
                 double rel_tol, gpo_mismatch *m);

/* "output argument 2: element 17 is 3.5, expected 3.25 (|difference| 0.25 >
 * 0.0001 + 0.0001 * |expected|); 12 of 1024 elements differ" */
void gpo_validate_describe(const gpo_mismatch *m, uint32_t arg, size_t n, double abs_tol,
                           double rel_tol, char *out, size_t cap);

#endif
