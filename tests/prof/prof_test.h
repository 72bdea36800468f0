/* What the profiler's tests share: a context, a profiler that writes no
 * file, and the JSON summary read back (public API and cJSON only). */
#ifndef GPO_PROF_TEST_H
#define GPO_PROF_TEST_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "gpuopt/gpuopt.h"

/* A context over `backends` ("cpu"), the config file ignored. */
gpuopt_context *prof_test_context(const char *backends);

/* A cmocka group's setup and teardown: prof_test_ctx is a CPU context
 * while the group runs. */
extern gpuopt_context *prof_test_ctx;
int prof_test_group_setup(void **state);
int prof_test_group_teardown(void **state);

/* A profiler with `flags` that writes no trace file, for `device` (NULL:
 * none) and `stream` (NULL: host time). */
gpuopt_profiler *prof_test_profiler(gpuopt_context *ctx, gpuopt_device *device, uint32_t flags,
                                    void *stream);

/* The profiler's JSON summary, parsed (the caller deletes it). */
cJSON *prof_test_summary(gpuopt_profiler *p);

/* The summary's row whose path, '/'-joined, is `path` ("inference/matmul");
 * NULL when there is none. */
const cJSON *prof_test_row(const cJSON *summary, const char *path);

/* A number and a string member (the string "(null)" when it is not one). */
double prof_test_num(const cJSON *o, const char *key);
const char *prof_test_str(const cJSON *o, const char *key);

#endif
