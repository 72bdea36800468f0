/* The ROCm block of gpuopt_context_diagnose reads the visibility variables with the
 * backend's own parser (rocm_visible.c), so what it tells the user is what
 * enumeration does. Each case below is one where ROCr's and HIP's real
 * rules differ from the CUDA rule the doctor used to apply to them; the
 * doctor's count must equal the GPUs the backend lists from the same KFD
 * tree (the MI300X fixture: eight GPUs with UUIDs, no HIP runtime, so the
 * backend applies the variables itself). Through the public API. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"

static const char *const visibility[] = {"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                                         "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", NULL};

static void set_visibility(const char *rocr, const char *hip, const char *cuda, const char *ordinal)
{
    const char *values[] = {rocr, hip, cuda, ordinal};
    for (size_t i = 0; visibility[i]; i++) {
        if (values[i])
            setenv(visibility[i], values[i], 1);
        else
            unsetenv(visibility[i]);
    }
}

static cJSON *json_of(gpuopt_status (*fn)(gpuopt_context *, char **), gpuopt_context *ctx)
{
    char *text = NULL;
    assert_int_equal(fn(ctx, &text), GPUOPT_OK);
    cJSON *root = cJSON_Parse(text);
    gpuopt_free(text);
    assert_non_null(root);
    return root;
}

/* The GPUs the ROCm backend lists. */
static int listed(gpuopt_context *ctx)
{
    cJSON *root = json_of(gpuopt_context_to_json, ctx);
    int n = -1;
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(root, "backends"))
    {
        const cJSON *name = cJSON_GetObjectItem(b, "name");
        if (cJSON_IsString(name) && strcmp(name->valuestring, "rocm") == 0)
            n = cJSON_GetObjectItem(b, "device_count")->valueint;
    }
    cJSON_Delete(root);
    return n;
}

/* The rocm/visible_devices finding whose path is `variable`, copied. */
static cJSON *finding(cJSON *root, const char *variable)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(root, "findings"))
    {
        const cJSON *backend = cJSON_GetObjectItem(f, "backend");
        const cJSON *check = cJSON_GetObjectItem(f, "check");
        const cJSON *path = cJSON_GetObjectItem(f, "path");
        if (cJSON_IsString(backend) && strcmp(backend->valuestring, "rocm") == 0 &&
            cJSON_IsString(check) && strcmp(check->valuestring, "visible_devices") == 0 &&
            cJSON_IsString(path) && strcmp(path->valuestring, variable) == 0)
            return cJSON_Duplicate(f, 1);
    }
    return NULL;
}

static const char *text(const cJSON *f, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(f, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* How many GPUs the finding says the variable leaves: "hides every GPU"
 * is 0, "shows N of" and "only the first N of" are N. */
static int doctor_count(const cJSON *f)
{
    const char *s = text(f, "summary");
    const char *p;
    int n = -1;
    if (strstr(s, "hides every GPU"))
        return 0;
    if ((p = strstr(s, " shows ")) && sscanf(p, " shows %d of", &n) == 1)
        return n;
    if ((p = strstr(s, "only the first ")) && sscanf(p, "only the first %d of", &n) == 1)
        return n;
    fail_msg("no GPU count in \"%s\"", s);
    return -1;
}

static int has_evidence(const cJSON *f, const char *part)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(f, "evidence"))
    {
        if (cJSON_IsString(e) && strstr(e->valuestring, part))
            return 1;
    }
    return 0;
}

typedef struct agreement {
    const char *rocr, *hip, *cuda;
    const char *variable; /* the finding to read: the last filter applied */
    int gpus;             /* what ROCr and HIP leave of the eight */
    const char *status;
    const char *evidence; /* part of the finding's evidence, or NULL */
} agreement;

static const agreement cases[] = {
    /* ROCr reads indexes with strtol base 0: "0x1" is GPU 1 (the CUDA rule
     * called it no device and the list empty). */
    {"0x1", NULL, NULL, "ROCR_VISIBLE_DEVICES", 1, "info", NULL},
    /* ROCr upper-cases entries: a UUID prefix in lower case starting with
     * "g" still names the one GPU it matches (node 9's). */
    {"gpu-86c3f2d9", NULL, NULL, "ROCR_VISIBLE_DEVICES", 1, "info", NULL},
    /* A repeat ends ROCr's list (the CUDA rule counted all three). */
    {"1,1,2", NULL, NULL, "ROCR_VISIBLE_DEVICES", 1, "warning", "again"},
    /* ROCr takes UUID prefixes of 5 to 20 characters: "GPU-" ends the list
     * (the CUDA rule took it as a prefix of every UUID). */
    {"2,GPU-", NULL, NULL, "ROCR_VISIBLE_DEVICES", 1, "warning", "ROCr takes 5 to 20"},
    /* HIP skips repeats instead (the CUDA rule counted three). */
    {NULL, "1,1,0", NULL, "HIP_VISIBLE_DEVICES", 2, "info", NULL},
    /* HIP takes only canonical indexes: "01" is no device to it. */
    {NULL, "01", NULL, "HIP_VISIBLE_DEVICES", 0, "problem", "not an index as HIP reads one"},
    /* HIP counts what ROCr left: its "3" is past the three ROCr leaves. */
    {"3,1,2", "2,3", NULL, "HIP_VISIBLE_DEVICES", 1, "warning", "ROCR_VISIBLE_DEVICES leaves 3"},
    /* CUDA_VISIBLE_DEVICES is HIP's list when HIP's own is empty. */
    {NULL, "", "7,01", "CUDA_VISIBLE_DEVICES", 1, "warning", NULL},
};

static void the_doctor_counts_the_gpus_enumeration_lists(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const agreement *c = &cases[i];
        gpuopt_context *ctx = NULL;
        set_visibility(c->rocr, c->hip, c->cuda, NULL);
        assert_int_equal(gpuopt_context_create(NULL, &ctx), GPUOPT_OK);
        int gpus = listed(ctx);
        cJSON *root = json_of(gpuopt_context_diagnose, ctx);
        cJSON *f = finding(root, c->variable);
        if (!f)
            fail_msg("case %zu: no rocm/visible_devices finding for %s", i, c->variable);
        if (gpus != c->gpus || doctor_count(f) != gpus || strcmp(text(f, "status"), c->status) ||
            (c->evidence && !has_evidence(f, c->evidence)))
            fail_msg("case %zu (%s): listed %d, expected %d; the doctor says \"%s\" (%s)", i,
                     c->variable, gpus, c->gpus, text(f, "summary"), text(f, "status"));
        cJSON_Delete(f);
        cJSON_Delete(root);
        gpuopt_context_destroy(ctx);
    }
    set_visibility(NULL, NULL, NULL, NULL);
}

static void variables_hip_does_not_read_are_named_as_such(void **state)
{
    gpuopt_context *ctx = NULL;
    (void)state;
    /* HIP_VISIBLE_DEVICES wins over CUDA_VISIBLE_DEVICES; GPU_DEVICE_ORDINAL
     * is read by AMD's OpenCL runtime only. */
    set_visibility(NULL, "0", "5", "3");
    assert_int_equal(gpuopt_context_create(NULL, &ctx), GPUOPT_OK);
    assert_int_equal(listed(ctx), 1);
    cJSON *root = json_of(gpuopt_context_diagnose, ctx);
    cJSON *cuda = finding(root, "CUDA_VISIBLE_DEVICES");
    cJSON *ordinal = finding(root, "GPU_DEVICE_ORDINAL");
    cJSON *hip = finding(root, "HIP_VISIBLE_DEVICES");
    assert_non_null(cuda);
    assert_non_null(ordinal);
    assert_non_null(hip);
    assert_string_equal(text(cuda, "status"), "info");
    assert_non_null(strstr(text(cuda, "summary"), "changes nothing for HIP"));
    assert_true(has_evidence(cuda, "only when HIP_VISIBLE_DEVICES is unset or empty"));
    assert_string_equal(text(ordinal, "status"), "info");
    assert_true(has_evidence(ordinal, "OpenCL only"));
    assert_int_equal(doctor_count(hip), 1);
    cJSON_Delete(cuda);
    cJSON_Delete(ordinal);
    cJSON_Delete(hip);
    cJSON_Delete(root);
    gpuopt_context_destroy(ctx);
    set_visibility(NULL, NULL, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_doctor_counts_the_gpus_enumeration_lists),
        cmocka_unit_test(variables_hip_does_not_read_are_named_as_such),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
