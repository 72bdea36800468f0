/* gpuopt_cache_path/list/verify/clear over a context on synthetic devices:
 * what they report, that clearing one device leaves the others and every
 * file the cache did not make, and their answers to bad arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "context.h"
#include "util/strutil.h"
#include "support/synthetic.h"
#include "test_cache_util.h"

static gpuopt_context *context_in(const char *dir)
{
    syn_reset();
    gpuopt_device_info *a =
        syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "Syn GPU A",
                "GPU-aaaaaaaa-0000-0000-0000-000000000001", "0000:01:00.0", 1000, 1ull << 34);
    gpo_strlcpy(a->arch_name, "sm_89", sizeof a->arch_name);
    a->compute_units = 76;
    gpuopt_device_info *b =
        syn_add(&syn_cuda, GPUOPT_DEVICE_TYPE_GPU, "Syn GPU B",
                "GPU-bbbbbbbb-0000-0000-0000-000000000002", "0000:02:00.0", 900, 1ull << 34);
    gpo_strlcpy(b->arch_name, "sm_89", sizeof b->arch_name);
    b->compute_units = 76;
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.cache_dir = dir;
    gpuopt_context *ctx;
    assert_int_equal(gpo_context_create_with(&o, syn_list, 3, &ctx), GPUOPT_OK);
    return ctx;
}

static void fill(gpuopt_context *ctx, gpuopt_device *d, const char *workload)
{
    gpo_cache *c;
    gpo_cache_options o = tc_options(0, 0);
    assert_int_equal(gpo_cache_open_device(ctx, d, &o, &c), GPUOPT_OK);
    tc_key k;
    tc_key_init(&k, workload);
    assert_int_equal(tc_tune(c, &k.key, NULL, 2), 0);
    gpo_cache_close(c);
}

static cJSON *parse(char *text)
{
    cJSON *o = cJSON_Parse(text);
    gpuopt_free(text);
    assert_non_null(o);
    return o;
}

static void cache_functions_list_check_and_clear_per_device(void **state)
{
    (void)state;
    const char *dir = tc_dir("api");
    gpuopt_context *ctx = context_in(dir);
    char *text;
    assert_int_equal(gpuopt_cache_path(ctx, &text), GPUOPT_OK);
    assert_string_equal(text, dir);
    gpuopt_free(text);
    /* Empty. */
    assert_int_equal(gpuopt_cache_list(ctx, &text), GPUOPT_OK);
    cJSON *list = parse(text);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "files")), 0);
    assert_string_equal(cJSON_GetObjectItem(list, "dir")->valuestring, dir);
    cJSON_Delete(list);

    gpuopt_device *a, *b;
    assert_int_equal(gpuopt_device_at(ctx, 0, &a), GPUOPT_OK);
    assert_int_equal(gpuopt_device_at(ctx, 1, &b), GPUOPT_OK);
    fill(ctx, a, "N=1");
    fill(ctx, a, "N=2");
    fill(ctx, b, "N=1");
    /* Files the cache did not make. */
    char other[1024];
    snprintf(other, sizeof other, "%s/notes.txt", dir);
    tc_append_raw(other, "mine\n");
    snprintf(other, sizeof other, "%s/results.jsonl", dir);
    tc_append_raw(other, "{}\n");

    assert_int_equal(gpuopt_cache_list(ctx, &text), GPUOPT_OK);
    list = parse(text);
    cJSON *files = cJSON_GetObjectItem(list, "files");
    assert_int_equal(cJSON_GetArraySize(files), 2);
    cJSON *fa = cJSON_GetArrayItem(files, 0);
    assert_string_equal(cJSON_GetObjectItem(fa, "file")->valuestring,
                        "syncuda_sm-89_76cu_aaaaaaaa-0000-0000-0000-000000000001.jsonl");
    assert_string_equal(cJSON_GetObjectItem(fa, "status")->valuestring, "ok");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(fa, "device"), "name")->valuestring,
                        "Syn GPU A");
    cJSON *entries = cJSON_GetObjectItem(fa, "entries");
    assert_int_equal(cJSON_GetArraySize(entries), 2);
    cJSON *e = cJSON_GetArrayItem(entries, 0);
    assert_non_null(cJSON_GetObjectItem(e, "key"));
    assert_non_null(cJSON_GetObjectItem(e, "best"));
    assert_non_null(cJSON_GetObjectItem(e, "used"));
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "soft"), "library")->valuestring,
                        gpuopt_version());
    cJSON_Delete(list);

    assert_int_equal(gpuopt_cache_verify(ctx, &text), GPUOPT_OK);
    cJSON *rep = parse(text);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(rep, "ok")));
    cJSON *fr = cJSON_GetArrayItem(cJSON_GetObjectItem(rep, "files"), 0);
    assert_int_equal(cJSON_GetObjectItem(fr, "entries")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(fr, "candidates")->valueint, 4);
    assert_int_equal(cJSON_GetObjectItem(fr, "unfinished")->valueint, 0);
    assert_int_equal(cJSON_GetObjectItem(fr, "invalid")->valueint, 0);
    cJSON_Delete(rep);

    /* A damaged file fails the check, which rewrites nothing. */
    char pb[1024];
    snprintf(pb, sizeof pb, "%s/syncuda_sm-89_76cu_bbbbbbbb-0000-0000-0000-000000000002.jsonl",
             dir);
    size_t before;
    char *orig = tc_read(pb, &before);
    char *bad = malloc(before + 16);
    char *nl = strchr(orig, '\n') + 1;
    sprintf(bad, "%.*s{oops\n%s", (int)(nl - orig), orig, nl);
    FILE *fp = fopen(pb, "wb");
    fputs(bad, fp);
    fclose(fp);
    assert_int_equal(gpuopt_cache_verify(ctx, &text), GPUOPT_OK);
    rep = parse(text);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(rep, "ok")));
    fr = cJSON_GetArrayItem(cJSON_GetObjectItem(rep, "files"), 1);
    assert_string_equal(cJSON_GetObjectItem(fr, "status")->valuestring, "corrupt");
    assert_string_equal(cJSON_GetObjectItem(fr, "detail")->valuestring,
                        "line 2: not a gpuopt-tuning-cache entry");
    cJSON_Delete(rep);
    char *after = tc_read(pb, NULL);
    assert_string_equal(after, bad);
    free(after);
    free(bad);
    free(orig);
    assert_int_equal(tc_count_files(dir, ".corrupt-"), 0);

    /* Clearing device B removes its file only. */
    assert_int_equal(gpuopt_cache_clear(ctx, b), GPUOPT_OK);
    assert_int_equal(access(pb, F_OK), -1);
    snprintf(pb, sizeof pb, "%s/syncuda_sm-89_76cu_aaaaaaaa-0000-0000-0000-000000000001.jsonl",
             dir);
    assert_int_equal(access(pb, F_OK), 0);
    assert_int_equal(tc_count_files(dir, "bbbbbbbb"), 0); /* its lock file went too */
    assert_int_equal(tc_count_files(dir, "notes.txt"), 1);
    assert_int_equal(tc_count_files(dir, "results.jsonl"), 1);
    /* Clearing all removes the rest of the cache's files, and only those. */
    assert_int_equal(gpuopt_cache_clear(ctx, NULL), GPUOPT_OK);
    assert_int_equal(tc_count_files(dir, ".jsonl"), 1); /* results.jsonl */
    assert_int_equal(tc_count_files(dir, "notes.txt"), 1);
    assert_int_equal(gpuopt_cache_clear(ctx, NULL), GPUOPT_OK);
    gpuopt_context_destroy(ctx);
}

static void set_aside_and_temp_files_are_listed_and_cleared(void **state)
{
    (void)state;
    const char *dir = tc_dir("leftovers");
    gpuopt_context *ctx = context_in(dir);
    gpuopt_device *a;
    assert_int_equal(gpuopt_device_at(ctx, 0, &a), GPUOPT_OK);
    fill(ctx, a, "N=1");
    char p[1024];
    const char *base = "syncuda_sm-89_76cu_aaaaaaaa-0000-0000-0000-000000000001.jsonl";
    snprintf(p, sizeof p, "%s/%s.corrupt-1700000000", dir, base);
    tc_append_raw(p, "junk");
    snprintf(p, sizeof p, "%s/.%s.tmp-123-1", dir, base);
    tc_append_raw(p, "half");
    char *text;
    assert_int_equal(gpuopt_cache_verify(ctx, &text), GPUOPT_OK);
    cJSON *rep = parse(text);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(rep, "set_aside")), 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(rep, "stale_temp")), 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(rep, "files")), 1);
    cJSON_Delete(rep);
    assert_int_equal(gpuopt_cache_clear(ctx, a), GPUOPT_OK);
    assert_int_equal(tc_count_files(dir, "aaaaaaaa"), 0);
    gpuopt_context_destroy(ctx);
}

static void cache_functions_reject_bad_arguments(void **state)
{
    (void)state;
    const char *dir = tc_dir("badargs");
    gpuopt_context *ctx = context_in(dir), *ctx2 = context_in(dir);
    char *text = (char *)"untouched";
    assert_int_equal(gpuopt_cache_path(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_cache_path(ctx, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_cache_list(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_cache_list(ctx, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_cache_verify(NULL, &text), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_cache_verify(ctx, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(gpuopt_cache_clear(NULL, NULL), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "ctx"));
    gpuopt_device *foreign;
    assert_int_equal(gpuopt_device_at(ctx2, 0, &foreign), GPUOPT_OK);
    assert_int_equal(gpuopt_cache_clear(ctx, foreign), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpuopt_last_error(), "another context"));
    gpuopt_context_destroy(ctx);
    gpuopt_context_destroy(ctx2);

    /* A cache path that is a regular file cannot be listed: an I/O error
     * naming it, not a crash and not an empty answer. */
    char file[1024];
    snprintf(file, sizeof file, "%s/plain", dir);
    tc_append_raw(file, "x");
    ctx = context_in(file);
    assert_int_equal(gpuopt_cache_list(ctx, &text), GPUOPT_ERR_IO);
    assert_non_null(strstr(gpuopt_last_error(), file));
    assert_int_equal(gpuopt_cache_verify(ctx, &text), GPUOPT_ERR_IO);
    assert_int_equal(gpuopt_cache_clear(ctx, NULL), GPUOPT_ERR_IO);
    gpuopt_context_destroy(ctx);
    /* A directory that does not exist is an empty cache. */
    snprintf(file, sizeof file, "%s/not/there", dir);
    ctx = context_in(file);
    assert_int_equal(gpuopt_cache_verify(ctx, &text), GPUOPT_OK);
    cJSON *rep = parse(text);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(rep, "ok")));
    cJSON_Delete(rep);
    assert_int_equal(gpuopt_cache_clear(ctx, NULL), GPUOPT_OK);
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cache_functions_list_check_and_clear_per_device),
        cmocka_unit_test(set_aside_and_temp_files_are_listed_and_cleared),
        cmocka_unit_test(cache_functions_reject_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
