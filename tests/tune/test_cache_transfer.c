/* Export and import between nodes (issue 15, item 4): a node with the same
 * device answers from the import; one with another driver re-verifies;
 * one with another GPU skips it (or keeps it as it is with `all`); a newer
 * local result is never replaced; a cut export, a newer schema, a record
 * that fails its checks and an unwritable directory import nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "cache/transfer.h"
#include "test_cache_util.h"

/* The exporting node: one device, two finished tunes and one unfinished. */
static char *exported(void)
{
    const char *dir = tc_dir("export");
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c = NULL;
    assert_int_equal(gpo_cache_open(dir, &dev, &o, NULL, &c), GPUOPT_OK);
    tc_key a, b, u;
    tc_now = 1000;
    assert_int_equal(tc_tune(c, tc_key_init(&a, "N=1"), NULL, 3), 0);
    assert_int_equal(tc_tune(c, tc_key_init(&b, "N=2"), NULL, 2), 0);
    gpo_cache_search s = {"exhaustive", 1, 0, 0, 0};
    gpo_cache_tune *t;
    assert_int_equal(gpo_cache_begin(c, tc_key_init(&u, "N=unfinished"), NULL, &s, &t), 0);
    cJSON *p = tc_params(1, 1);
    gpo_cache_stats st = tc_stats(5);
    assert_int_equal(gpo_cache_add_candidate(t, p, &st), 0);
    cJSON_Delete(p);
    gpo_cache_abandon(t); /* the unfinished tune stays in the file */
    gpo_cache_close(c);
    char *text = NULL;
    assert_int_equal(gpo_cache_export(dir, NULL, &text), GPUOPT_OK);
    assert_non_null(strstr(text, "\"t\":\"end\",\"format\":\"" GPO_CACHE_EXPORT_FORMAT
                                 "\",\"files\":1,\"records\":2}"));
    assert_null(strstr(text, "unfinished"));
    return text;
}

/* The same product on another node: another UUID and PCI slot. */
static void twin(gpo_cache_device *dev)
{
    tc_device(dev);
    snprintf(dev->uuid, sizeof dev->uuid, "GPU-00000000-1111-2222-3333-444444444444");
    snprintf(dev->pci, sizeof dev->pci, "0000:c1:00.0");
}

static gpo_cache *open_on(const char *dir, const gpo_cache_device *dev)
{
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c = NULL;
    assert_int_equal(gpo_cache_open(dir, dev, &o, NULL, &c), GPUOPT_OK);
    return c;
}

static double number(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItem(o, name)->valuedouble;
}

static void a_node_with_the_same_device_answers_from_the_import(void **state)
{
    (void)state;
    char *text = exported();
    const char *dir = tc_dir("twin");
    gpo_cache_device here;
    twin(&here);
    cJSON *r = NULL;
    assert_int_equal(gpo_cache_import(dir, text, strlen(text), &here, 1, 0, NULL, &r), GPUOPT_OK);
    assert_true(number(r, "imported") == 2);
    cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "files"), 0);
    assert_true(number(f, "records") == 2);
    assert_null(cJSON_GetObjectItem(f, "skipped"));
    cJSON_Delete(r);
    gpo_cache *c = open_on(dir, &here);
    tc_key k;
    gpo_cache_hit *hit = NULL;
    assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, "N=1"), NULL, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, 0); /* a plain hit: nothing is measured */
    assert_int_equal(cJSON_GetObjectItem(hit->record, "evaluated")->valueint, 3);
    gpo_cache_hit_free(hit);
    assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, "N=unfinished"), NULL, &hit),
                     GPUOPT_ERR_NOT_FOUND);
    gpo_cache_close(c);
    /* Again: nothing new, nothing lost. */
    assert_int_equal(gpo_cache_import(dir, text, strlen(text), &here, 1, 0, NULL, &r), GPUOPT_OK);
    assert_true(number(r, "imported") == 0 && number(r, "kept_newer") == 2);
    cJSON_Delete(r);
    assert_int_equal(tc_verify(dir, NULL, NULL, NULL), 1);
    free(text);
}

static void another_driver_re_verifies_on_first_use(void **state)
{
    (void)state;
    char *text = exported();
    const char *dir = tc_dir("driver");
    gpo_cache_device here;
    twin(&here);
    cJSON *r = NULL;
    assert_int_equal(gpo_cache_import(dir, text, strlen(text), &here, 1, 0, NULL, &r), GPUOPT_OK);
    cJSON_Delete(r);
    gpo_cache *c = open_on(dir, &here);
    tc_key k;
    gpo_cache_soft soft = {"999.1", NULL, NULL, NULL};
    gpo_cache_hit *hit = NULL;
    assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, "N=2"), &soft, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, GPO_SOFT_DRIVER);
    gpo_cache_hit_free(hit);
    gpo_cache_close(c);
    free(text);
}

static void another_gpu_is_skipped_unless_all_are_asked_for(void **state)
{
    (void)state;
    char *text = exported();
    const char *dir = tc_dir("other-gpu");
    gpo_cache_device here;
    twin(&here);
    snprintf(here.arch, sizeof here.arch, "sm_80");
    here.compute_units = 108;
    cJSON *r = NULL;
    assert_int_equal(gpo_cache_import(dir, text, strlen(text), &here, 1, 0, NULL, &r), GPUOPT_OK);
    cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "files"), 0);
    assert_true(number(r, "imported") == 0);
    assert_non_null(strstr(cJSON_GetObjectItem(f, "skipped")->valuestring, "architecture"));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(f, "file")));
    cJSON_Delete(r);
    assert_int_equal(tc_count_files(dir, ".jsonl"), 0);
    /* A shared directory keeps every device's records, under their own. */
    assert_int_equal(gpo_cache_import(dir, text, strlen(text), &here, 1, 1, NULL, &r), GPUOPT_OK);
    assert_true(number(r, "imported") == 2);
    cJSON_Delete(r);
    gpo_cache_device theirs;
    tc_device(&theirs);
    gpo_cache *c = open_on(dir, &theirs);
    tc_key k;
    gpo_cache_hit *hit = NULL;
    assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, "N=1"), NULL, &hit), GPUOPT_OK);
    gpo_cache_hit_free(hit);
    gpo_cache_close(c);
    free(text);
}

static void a_newer_local_result_is_never_replaced(void **state)
{
    (void)state;
    char *text = exported(); /* measured at 1000 */
    const char *dir = tc_dir("newer");
    gpo_cache_device here;
    twin(&here);
    gpo_cache *c = open_on(dir, &here);
    tc_key k;
    tc_now = 2000;
    assert_int_equal(tc_tune(c, tc_key_init(&k, "N=1"), NULL, 7), 0);
    gpo_cache_close(c);
    cJSON *r = NULL;
    assert_int_equal(gpo_cache_import(dir, text, strlen(text), &here, 1, 0, NULL, &r), GPUOPT_OK);
    assert_true(number(r, "imported") == 1 && number(r, "kept_newer") == 1);
    cJSON_Delete(r);
    c = open_on(dir, &here);
    gpo_cache_hit *hit = NULL;
    assert_int_equal(gpo_cache_lookup(c, &k.key, NULL, &hit), GPUOPT_OK);
    assert_int_equal(cJSON_GetObjectItem(hit->record, "evaluated")->valueint, 7);
    gpo_cache_hit_free(hit);
    gpo_cache_close(c);
    free(text);
}

/* Imports `text` into a directory holding one local result: refused with
 * `words`, the directory as it was. */
static void refused(const char *text, const char *words)
{
    const char *dir = tc_dir("refused");
    gpo_cache_device here;
    twin(&here);
    gpo_cache *c = open_on(dir, &here);
    tc_key k;
    assert_int_equal(tc_tune(c, tc_key_init(&k, "N=local"), NULL, 2), 0);
    char *before = tc_read(gpo_cache_file(c), NULL);
    cJSON *r = NULL;
    assert_int_equal(gpo_cache_import(dir, text, strlen(text), &here, 1, 1, NULL, &r),
                     GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(r);
    if (!strstr(gpuopt_last_error(), words))
        fail_msg("expected '%s' in: %s", words, gpuopt_last_error());
    char *after = tc_read(gpo_cache_file(c), NULL);
    assert_string_equal(before, after);
    assert_int_equal(tc_count_files(dir, "5d2f0c3a"), 0); /* the exporter's own file */
    free(before);
    free(after);
    gpo_cache_close(c);
}

static void bad_exports_import_nothing(void **state)
{
    (void)state;
    char *text = exported();
    /* Cut anywhere before its end line. */
    size_t len = strlen(text);
    for (size_t cut = len - 2; cut > 0; cut -= len / 7) {
        char *part = strndup(text, cut);
        refused(part, "the cache export");
        free(part);
        if (cut < len / 7)
            break;
    }
    /* A file of a newer schema. */
    char *newer = strdup(text);
    memcpy(strstr(newer, "\"schema\":2"), "\"schema\":9", 10);
    refused(newer, "schema 9 is newer");
    free(newer);
    /* A record that fails its checks. */
    char *bad = strdup(text);
    memcpy(strstr(bad, "\"evaluated\":"), "\"evaluated\":-", 13);
    refused(bad, "line 1: the record of key");
    free(bad);
    /* An end line that counts more than came. */
    char *more = strdup(text);
    memcpy(strstr(more, "\"records\":2"), "\"records\":3", 11);
    refused(more, "counts 1 files and 3 records");
    free(more);
    free(text);
}

static void an_unwritable_directory_is_an_error(void **state)
{
    (void)state;
    char *text = exported();
    /* A file where the directory should be: refused for root as well. */
    char dir[600];
    snprintf(dir, sizeof dir, "%s/not-a-directory", tc_dir("unwritable"));
    tc_write(dir, "");
    gpo_cache_device here;
    twin(&here);
    cJSON *r = NULL;
    assert_int_equal(gpo_cache_import(dir, text, strlen(text), &here, 1, 0, NULL, &r),
                     GPUOPT_ERR_IO);
    assert_null(r);
    assert_non_null(strstr(gpuopt_last_error(), "were not written to"));
    free(text);
}

/* ---- the shared, read-only layer ---------------------------------------- */

/* A shared directory filled by an import with `all` (no device here). */
static const char *shared_dir(const char *name)
{
    char *text = exported();
    const char *dir = tc_dir(name);
    cJSON *r = NULL;
    assert_int_equal(gpo_cache_import(dir, text, strlen(text), NULL, 0, 1, NULL, &r), GPUOPT_OK);
    assert_true(number(r, "imported") == 2);
    cJSON_Delete(r);
    free(text);
    return dir;
}

/* The exporting device's file in `dir`, read (malloc'd). */
static char *their_file(const char *dir)
{
    gpo_cache_device theirs;
    char name[256], path[800];
    tc_device(&theirs);
    assert_int_equal(gpo_cache_file_name(&theirs, NULL, name, sizeof name), GPUOPT_OK);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return tc_read(path, NULL);
}

static gpo_cache *open_layered(const char *dir, const char *shared, gpo_logger *log)
{
    gpo_cache_device here;
    twin(&here);
    gpo_cache_options o = tc_options(0, 0);
    o.shared_dir = shared;
    gpo_cache *c = NULL;
    assert_int_equal(gpo_cache_open(dir, &here, &o, log, &c), GPUOPT_OK);
    return c;
}

static void a_shared_directory_answers_a_local_miss_and_is_never_written(void **state)
{
    (void)state;
    const char *shared = shared_dir("shared");
    int files = tc_count_files(shared, "");
    char *file = their_file(shared);
    assert_non_null(file);
    chmod(shared, 0500); /* read-only, as a ConfigMap is (root writes anyway) */
    const char *dir = tc_dir("layered-local");
    gpo_cache *c = open_layered(dir, shared, NULL);
    tc_key k;
    gpo_cache_hit *hit = NULL;
    assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, "N=1"), NULL, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, 0);
    assert_int_equal(cJSON_GetObjectItem(hit->record, "evaluated")->valueint, 3);
    gpo_cache_hit_free(hit);
    /* A key the fleet never measured misses, saying where it looked. */
    assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, "N=none"), NULL, &hit),
                     GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(gpuopt_last_error(), "nor in the shared cache"));
    gpo_cache_close(c);
    /* The answer was copied into the local file: a local hit from now on. */
    c = open_layered(dir, NULL, NULL);
    assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, "N=1"), NULL, &hit), GPUOPT_OK);
    gpo_cache_hit_free(hit);
    gpo_cache_close(c);
    /* Nothing was written in the shared directory: no new file, the same bytes. */
    chmod(shared, 0700);
    assert_int_equal(tc_count_files(shared, ""), files);
    char *after = their_file(shared);
    assert_string_equal(file, after);
    free(file);
    free(after);
}

static void a_shared_directory_others_may_write_is_not_used(void **state)
{
    (void)state;
    const char *shared = shared_dir("shared-open");
    assert_int_equal(chmod(shared, 0777), 0);
    log_capture cap;
    gpo_logger log = tc_logger(&cap, GPUOPT_LOG_WARN);
    gpo_cache *c = open_layered(tc_dir("layered-open"), shared, &log);
    tc_key k;
    gpo_cache_hit *hit = NULL;
    assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, "N=1"), NULL, &hit), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(cap.text, "the shared tuning cache is not used"));
    assert_non_null(strstr(cap.text, "may be written by its group or others"));
    gpo_cache_close(c);
    assert_int_equal(chmod(shared, 0700), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_node_with_the_same_device_answers_from_the_import),
        cmocka_unit_test(another_driver_re_verifies_on_first_use),
        cmocka_unit_test(another_gpu_is_skipped_unless_all_are_asked_for),
        cmocka_unit_test(a_newer_local_result_is_never_replaced),
        cmocka_unit_test(bad_exports_import_nothing),
        cmocka_unit_test(an_unwritable_directory_is_an_error),
        cmocka_unit_test(a_shared_directory_answers_a_local_miss_and_is_never_written),
        cmocka_unit_test(a_shared_directory_others_may_write_is_not_used),
    };
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
