/* Allocation-failure injection, compiled only into test builds
 * (GPUOPT_ALLOC_FAILURE_INJECTION=ON, the asan preset): never a release.
 *
 * Every allocation the library makes (malloc, calloc, realloc, strdup and
 * strndup, redirected here at link time by ld's --wrap, so the sources stay
 * as they are) and every allocation cJSON makes in the process (its hooks)
 * is counted by one counter, and the Nth fails when the environment says
 * GPUOPT_ALLOC_FAIL_AT=N. With GPUOPT_ALLOC_REPORT=FILE the count is
 * written to FILE at exit: a run that made fewer than N allocations had
 * nothing injected, which is how tests/alloc/alloc_sweep.py knows it has
 * tried every allocation of a scenario. Reading the environment in a
 * constructor is what a release never does; this file is not in one. */
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static atomic_long count;
static long fail_at;
static char report_path[4096];

static int fail_now(void)
{
    return atomic_fetch_add(&count, 1) + 1 == fail_at;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return fail_now() ? NULL : __real_strndup(s, n);
}

static void *cjson_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

static void write_report(void)
{
    FILE *f = fopen(report_path, "w");
    if (f) {
        fprintf(f, "%ld\n", (long)atomic_load(&count));
        fclose(f);
    }
}

__attribute__((constructor)) static void start_injection(void)
{
    const char *at = getenv("GPUOPT_ALLOC_FAIL_AT");
    fail_at = at ? strtol(at, NULL, 10) : 0;
    cJSON_Hooks hooks = {cjson_malloc, free};
    cJSON_InitHooks(&hooks);
    const char *report = getenv("GPUOPT_ALLOC_REPORT");
    if (report && *report && strlen(report) < sizeof report_path) {
        strcpy(report_path, report);
        atexit(write_report);
    }
}
