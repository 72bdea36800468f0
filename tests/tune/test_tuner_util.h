/* Shared by the tuner tests: contexts over PoCL (OpenCL on the CPU, for
 * real) and the CPU backend (callback subjects), a planted kernel whose
 * landscape is known, and a runtime wrapper that counts calls. */
#ifndef GPO_TEST_TUNER_UTIL_H
#define GPO_TEST_TUNER_UTIL_H

#include "gpuopt/gpuopt.h"

/* A context over `backend` ("opencl", "cpu") whose tuning cache is `dir`,
 * its log captured into tt_log, and the backend's first device. 0 on
 * success. */
int tt_context(const char *backend, const char *dir, gpuopt_context **ctx, gpuopt_device **dev);
extern char tt_log[16384];

/* The planted kernel (OpenCL C): out[i] = 2 * a[i] for i < n, with
 *   A in {1, 2, 3, 4}, B in {1, 2, 4}
 *   - (3, 2): the fast path, ~1000x faster than every other valid one;
 *   - (4, 4): returns at once without writing: the fastest, and wrong;
 *   - (1, 4): does not build ("#error planted_build_failure").
 * Size N = 1024. The reference kernel computes the same naively. */
extern const char *const tt_planted_source;
extern const char *const tt_reference_source;
gpuopt_space *tt_planted_space(void);
/* The tuner's settings (gpuopt_tuner_get_settings), to change and set. */
gpuopt_tuner_settings tt_settings(const gpuopt_tuner *t);
/* The planted kernel's descriptor: geometry N / 64. */
gpuopt_kernel_desc tt_planted_kernel(void);
/* A tuner of the planted kernel: geometry N / 64, arguments a (random),
 * out (output), n; the reference kernel; short timing; cache `mode`. */
gpuopt_tuner *tt_planted_tuner(gpuopt_context *ctx, gpuopt_device *dev, const gpuopt_space *space,
                               int32_t mode);

/* "A=3 B=2"-style text of the best candidate ("" when none; static). */
const char *tt_best(const gpuopt_result *r);
/* Index of the candidate whose config text equals `text`, -1 when none. */
int tt_find(const gpuopt_result *r, const char *text);
/* The status of candidate `text`, -1 when it was not evaluated. */
int tt_status_of(const gpuopt_result *r, const char *text);

/* Runtime calls of one tuner's sessions, counted through
 * gpo_tuner_test_wrap (installed by tt_count_install before the tuner opens
 * its session, which also zeroes the counts). */
typedef struct tt_counts {
    long open, build, kernel_create, launch, buffer_alloc;
} tt_counts;
extern tt_counts tt_count;
void tt_count_install(gpuopt_tuner *t);

#endif
