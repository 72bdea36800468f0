/* What the profiler's tests share (prof_test.h). */
#include "prof_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

gpuopt_context *prof_test_context(const char *backends)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = backends;
    gpuopt_context *ctx = NULL;
    assert_int_equal(gpuopt_context_create(&o, &ctx), GPUOPT_OK);
    return ctx;
}

gpuopt_context *prof_test_ctx;

int prof_test_group_setup(void **state)
{
    (void)state;
    prof_test_ctx = prof_test_context("cpu");
    return 0;
}

int prof_test_group_teardown(void **state)
{
    (void)state;
    gpuopt_context_destroy(prof_test_ctx);
    prof_test_ctx = NULL;
    return 0;
}

gpuopt_profiler *prof_test_profiler(gpuopt_context *ctx, gpuopt_device *device, uint32_t flags,
                                    void *stream)
{
    gpuopt_profiler_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.trace_path = ""; /* no file, whatever the environment says */
    o.flags = flags;
    o.stream = stream;
    gpuopt_profiler *p = NULL;
    assert_int_equal(gpuopt_profiler_create(ctx, device, &o, &p), GPUOPT_OK);
    assert_non_null(p);
    return p;
}

cJSON *prof_test_summary(gpuopt_profiler *p)
{
    char *text = NULL;
    assert_int_equal(gpuopt_profiler_report(p, GPUOPT_PROFILE_JSON, &text), GPUOPT_OK);
    cJSON *j = cJSON_Parse(text);
    gpuopt_free(text);
    assert_non_null(j);
    return j;
}

const cJSON *prof_test_row(const cJSON *summary, const char *path)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(summary, "sections"))
    {
        char joined[2048] = "";
        size_t len = 0;
        const cJSON *n;
        cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(r, "path"))
        {
            size_t k = strlen(n->valuestring);
            if (len + k + 2 > sizeof joined)
                break;
            if (len)
                joined[len++] = '/';
            memcpy(joined + len, n->valuestring, k + 1);
            len += k;
        }
        if (strcmp(joined, path) == 0)
            return r;
    }
    return NULL;
}

double prof_test_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        fail_msg("%s is not a number", key);
    return v->valuedouble;
}

const char *prof_test_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "(null)";
}
