/* Helpers for the public-API tests: they see only gpuopt.h and the shared
 * library, as a user's program does. */
#ifndef GPO_TESTS_API_CHECK_H
#define GPO_TESTS_API_CHECK_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include <gpuopt/gpuopt.h>

/* 1 when `detail` contains one of the '|'-separated `needles`, ignoring
 * case ("ctx|context" accepts either word for the same parameter). */
static inline int api_detail_names(const char *detail, const char *needles)
{
    char buf[256];
    size_t n = strlen(needles);
    if (n >= sizeof buf)
        return 0;
    memcpy(buf, needles, n + 1);
    for (char *save = NULL, *tok = strtok_r(buf, "|", &save); tok;
         tok = strtok_r(NULL, "|", &save)) {
        if (strcasestr(detail, tok))
            return 1;
    }
    return 0;
}

static inline void api_expect(gpuopt_status got, gpuopt_status want, const char *needles,
                              const char *expr, const char *file, int line)
{
    const char *detail = gpuopt_last_error();
    if (got != want) {
        print_error("%s\n  returned %s, expected %s\n  detail: \"%s\"\n", expr,
                    gpuopt_status_name(got), gpuopt_status_name(want), detail ? detail : "(NULL)");
        _fail(file, line);
    }
    if (want == GPUOPT_OK)
        return;
    if (!detail || !detail[0]) {
        print_error("%s\n  returned %s with an empty gpuopt_last_error()\n", expr,
                    gpuopt_status_name(got));
        _fail(file, line);
    }
    if (needles && !api_detail_names(detail, needles)) {
        print_error("%s\n  returned %s, but the detail \"%s\" does not name %s\n", expr,
                    gpuopt_status_name(got), detail, needles);
        _fail(file, line);
    }
}

/* `call` returns `want`; when that is a failure, gpuopt_last_error() is
 * not empty and names one of `needles` (NULL: any detail). */
#define EXPECT_STATUS(call, want, needles)                                                         \
    api_expect((call), (want), (needles), #call, __FILE__, __LINE__)
#define EXPECT_OK(call) api_expect((call), GPUOPT_OK, NULL, #call, __FILE__, __LINE__)

/* The detail of the last failure names `needles` too (a second fact). */
#define EXPECT_DETAIL_NAMES(needles)                                                               \
    do {                                                                                           \
        if (!api_detail_names(gpuopt_last_error(), (needles)))                                     \
            fail_msg("detail \"%s\" does not name %s", gpuopt_last_error(), (needles));            \
    } while (0)

/* A context on `backends` reading no config file; no cmocka check, so a
 * thread other than the test's may call it. */
static inline gpuopt_status api_context_create(const char *backends, gpuopt_context **ctx)
{
    gpuopt_options opt;
    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    opt.backends = backends;
    opt.config_path = "";
    return gpuopt_context_create(&opt, ctx);
}

/* A context on the CPU backend only, reading no config file: fast and the
 * same on every machine. */
static inline gpuopt_context *api_cpu_context(void)
{
    gpuopt_context *ctx = NULL;
    EXPECT_OK(api_context_create("cpu", &ctx));
    assert_non_null(ctx);
    return ctx;
}

/* Integers the index and level checks try: the edges of int32_t. */
#define API_INT32_EDGES INT32_MIN, -2, -1, INT32_MAX

static inline const char *api_itoa(int64_t v, char *buf, size_t cap)
{
    snprintf(buf, cap, "%lld", (long long)v);
    return buf;
}

#endif
