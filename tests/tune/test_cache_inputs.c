/* Every cache function given out-of-range or malformed data: an error
 * with words, nothing written, nothing leaked (the sanitizer build checks
 * the last). NULL where a pointer is required is a broken internal
 * contract (an assert), not an input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_cache_util.h"

#define BAD GPUOPT_ERR_INVALID_ARGUMENT
#define RANGE GPUOPT_ERR_OUT_OF_RANGE

static gpo_cache *fresh(const char *name)
{
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c;
    assert_int_equal(gpo_cache_open(tc_dir(name), &dev, &o, NULL, &c), GPUOPT_OK);
    return c;
}

static void detail_has(const char *words)
{
    if (!strstr(gpo_detail_get(), words))
        fail_msg("detail '%s' lacks '%s'", gpo_detail_get(), words);
}

static void fingerprints_and_names_take_any_input(void **state)
{
    (void)state;
    gpo_cache_device dev;
    gpuopt_device_info info;
    memset(&info, 0, sizeof info);
    gpo_cache_device_from_info(&info, &dev);
    assert_int_equal(dev.compute_units, 0);
    assert_string_equal(dev.backend, "");
    char name[256];
    assert_int_equal(gpo_cache_file_name(&dev, NULL, name, sizeof name), GPUOPT_OK);
    assert_string_equal(name, "unknown_unknown_0cu_device.jsonl");
    /* Hostile names cannot leave the directory or hide the file. */
    strcpy(info.backend, "../opencl");
    strcpy(info.vendor, "ACME");
    strcpy(info.name, "../../etc/passwd\n Ünïcode GPU");
    info.compute_units = 8;
    gpo_cache_device_from_info(&info, &dev);
    assert_string_equal(dev.arch, "ACME ../../etc/passwd\n Ünïcode GPU");
    assert_int_equal(gpo_cache_file_name(&dev, "node 7/x", name, sizeof name), GPUOPT_OK);
    assert_string_equal(name, "opencl_acme-..-..-etc-passwd-n-code-gpu_8cu_etc-passwd-n-code-gpu"
                              "@node-7-x.jsonl");
    assert_null(strchr(name, '/'));
    assert_int_equal(gpo_cache_file_name(&dev, NULL, name, 10), RANGE);
    detail_has("bytes");
    /* The UUID wins over the PCI id, which wins over the name. */
    strcpy(info.uuid, "GPU-ABC");
    strcpy(info.pci_bus_id, "0000:3b:00.0");
    strcpy(info.arch_name, "gfx942");
    gpo_cache_device_from_info(&info, &dev);
    assert_int_equal(gpo_cache_file_name(&dev, NULL, name, sizeof name), GPUOPT_OK);
    assert_string_equal(name, "opencl_gfx942_8cu_abc.jsonl");
    info.uuid[0] = '\0';
    gpo_cache_device_from_info(&info, &dev);
    assert_int_equal(gpo_cache_file_name(&dev, NULL, name, sizeof name), GPUOPT_OK);
    assert_string_equal(name, "opencl_gfx942_8cu_pci-0000-3b-00.0.jsonl");
}

static void hashes_of_empty_and_different_texts(void **state)
{
    (void)state;
    char out[32], a[32], b[32];
    assert_int_equal(gpo_cache_hash_text(NULL, 0, out, sizeof out), GPUOPT_OK);
    assert_int_equal(gpo_cache_hash_text("abc", 3, a, sizeof a), GPUOPT_OK);
    assert_int_equal(gpo_cache_hash_text("abd", 3, b, sizeof b), GPUOPT_OK);
    assert_string_not_equal(a, b);
    assert_true(strncmp(a, "fnv1a64:", 8) == 0 && strlen(a) == 24);
}

static void keys_reject_missing_and_oversized_fields(void **state)
{
    (void)state;
    tc_key k;
    char *canon = (char *)"x";
    uint64_t h;
    assert_int_equal(gpo_cache_key_canon(tc_key_init(&k, "N=1"), &canon, NULL), GPUOPT_OK);
    free(canon);
    k.key.kind = NULL;
    assert_int_equal(gpo_cache_key_canon(&k.key, &canon, &h), BAD);
    assert_null(canon);
    detail_has("'kind'");
    tc_key_sync(&k);
    k.key.backend = "";
    assert_int_equal(gpo_cache_key_canon(&k.key, &canon, &h), BAD);
    detail_has("'backend'");
    tc_key_sync(&k);
    k.key.arch = NULL;
    assert_int_equal(gpo_cache_key_canon(&k.key, &canon, &h), BAD);
    tc_key_sync(&k);
    k.key.compute_units = -2;
    assert_int_equal(gpo_cache_key_canon(&k.key, &canon, &h), RANGE);
    tc_key_sync(&k);
    k.key.source_hash = k.key.options_hash = k.key.space_hash = k.key.workload = NULL;
    assert_int_equal(gpo_cache_key_canon(&k.key, &canon, &h), GPUOPT_OK); /* read as "" */
    free(canon);
    char *big = malloc(5000);
    memset(big, 'w', 4999);
    big[4999] = '\0';
    k.key.workload = big;
    assert_int_equal(gpo_cache_key_canon(&k.key, &canon, &h), RANGE);
    detail_has("'workload' is 4999 bytes");
    free(big);
    assert_null(gpo_cache_status_name(-1));
    assert_null(gpo_cache_status_name(7));
    assert_string_equal(gpo_cache_status_name(6), "pruned");
    assert_int_equal(gpo_cache_status_parse(NULL), -1);
    assert_int_equal(gpo_cache_status_parse("bogus"), -1);
    assert_int_equal(gpo_cache_status_parse("wrong_result"), 4);
}

static void open_refuses_an_overlong_directory_and_takes_defaults(void **state)
{
    (void)state;
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache *c = (gpo_cache *)1;
    gpo_cache_options o = tc_options(0, 0);
    char *longdir = malloc(GPO_PATH_MAX);
    memset(longdir, 'd', GPO_PATH_MAX - 1);
    longdir[GPO_PATH_MAX - 1] = '\0';
    assert_int_equal(gpo_cache_open(longdir, &dev, NULL, NULL, &c), RANGE);
    assert_null(c);
    free(longdir);
    gpo_cache_close(NULL);
    assert_string_equal(gpo_cache_file(NULL), "");
    const char *why;
    assert_int_equal(gpo_cache_get_state(NULL, &why), GPO_CACHE_OFF);
    assert_int_equal(gpo_cache_get_state(NULL, NULL), GPO_CACHE_OFF);
    /* Defaults with NULL options; "@host" when asked. */
    assert_int_equal(gpo_cache_open("/tmp/x/", &dev, NULL, NULL, &c), GPUOPT_OK);
    assert_non_null(strstr(gpo_cache_file(c), "/tmp/x/cuda_sm-90"));
    assert_null(strchr(gpo_cache_file(c), '@'));
    gpo_cache_close(c);
    o.per_host = 1;
    assert_int_equal(gpo_cache_open("/tmp/x", &dev, &o, NULL, &c), GPUOPT_OK);
    assert_non_null(strchr(gpo_cache_file(c), '@'));
    gpo_cache_close(c);
}

static void lookups_refuse_a_malformed_key(void **state)
{
    (void)state;
    gpo_cache *c = fresh("badlookup");
    tc_key k;
    tc_key_init(&k, "N=1");
    gpo_cache_hit *hit = (gpo_cache_hit *)1;
    k.key.kind = "";
    assert_int_equal(gpo_cache_lookup(c, &k.key, NULL, &hit), BAD);
    assert_null(hit);
    gpo_cache_hit_free(NULL);
    cJSON *cands = (cJSON *)1;
    int finished;
    assert_int_equal(gpo_cache_candidates(c, &k.key, &cands, &finished), BAD);
    assert_null(cands);
    assert_int_equal(gpo_cache_touch(c, &k.key), BAD);
    gpo_cache_close(c);
}

static void writes_reject_malformed_records_and_write_nothing(void **state)
{
    (void)state;
    gpo_cache *c = fresh("badwrite");
    tc_key k;
    gpo_cache_key *key = tc_key_init(&k, "N=1");
    gpo_cache_search s = {"random", 1, 10, 0, 0};
    gpo_cache_tune *t = (gpo_cache_tune *)1;
    s.max_evaluations = -1;
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), RANGE);
    assert_null(t);
    s.max_evaluations = 10;
    s.max_seconds = NAN;
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), RANGE);
    s.max_seconds = 0;
    /* Nothing reached the disk. */
    assert_null(tc_read(gpo_cache_file(c), NULL));

    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), GPUOPT_OK);
    gpo_cache_stats st = tc_stats(10);
    cJSON *good = tc_params(8, 2);
    cJSON *arr = cJSON_CreateArray();
    assert_int_equal(gpo_cache_add_candidate(t, arr, &st), BAD);
    detail_has("JSON object");
    cJSON *nested = cJSON_CreateObject();
    cJSON_AddItemToObject(nested, "TILE", cJSON_CreateObject());
    assert_int_equal(gpo_cache_add_candidate(t, nested, &st), BAD);
    detail_has("'TILE'");
    cJSON *nan = cJSON_CreateObject();
    cJSON_AddNumberToObject(nan, "TILE", NAN);
    assert_int_equal(gpo_cache_add_candidate(t, nan, &st), BAD);
    cJSON *dup = tc_params(8, 2);
    cJSON_AddNumberToObject(dup, "TILE", 4);
    assert_int_equal(gpo_cache_add_candidate(t, dup, &st), BAD);
    detail_has("twice");
    cJSON *unnamed = cJSON_CreateObject();
    cJSON_AddNumberToObject(unnamed, "", 4);
    assert_int_equal(gpo_cache_add_candidate(t, unnamed, &st), BAD);
    gpo_cache_stats bad = st;
    bad.status = 7;
    assert_int_equal(gpo_cache_add_candidate(t, good, &bad), BAD);
    detail_has("status 7");
    bad = st;
    bad.runs = -1;
    assert_int_equal(gpo_cache_add_candidate(t, good, &bad), BAD);
    bad = st;
    bad.median_ns = NAN;
    assert_int_equal(gpo_cache_add_candidate(t, good, &bad), BAD);
    bad = st;
    bad.p80_ns = -5;
    assert_int_equal(gpo_cache_add_candidate(t, good, &bad), BAD);
    bad = st;
    bad.compile_ms = INFINITY;
    assert_int_equal(gpo_cache_add_candidate(t, good, &bad), BAD);
    assert_null(tc_read(gpo_cache_file(c), NULL));
    /* A candidate longer than a record may be is refused whole. */
    cJSON *huge = cJSON_CreateObject();
    char *text = malloc(GPO_CACHE_RECORD_MAX + 10);
    memset(text, 'a', GPO_CACHE_RECORD_MAX + 9);
    text[GPO_CACHE_RECORD_MAX + 9] = '\0';
    cJSON_AddStringToObject(huge, "BIG", text);
    free(text);
    assert_int_equal(gpo_cache_add_candidate(t, huge, &st), RANGE);
    detail_has("at most 1048576");
    assert_null(tc_read(gpo_cache_file(c), NULL));

    /* finish frees the handle even when it refuses. */
    assert_int_equal(gpo_cache_finish(t, good, &st, arr, &st, 1, 0, NULL), BAD);
    gpo_cache_abandon(NULL);
    gpo_cache_hit *hit;
    assert_int_equal(gpo_cache_lookup(c, key, NULL, &hit), GPUOPT_ERR_NOT_FOUND);
    /* No valid candidate at all is a record too: the search ran, found none. */
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), GPUOPT_OK);
    assert_int_equal(gpo_cache_finish(t, NULL, NULL, NULL, NULL, 1, 2.0, NULL), GPUOPT_OK);
    assert_int_equal(gpo_cache_lookup(c, key, NULL, &hit), GPUOPT_OK);
    assert_null(hit->best);
    gpo_cache_hit_free(hit);

    assert_int_equal(gpo_cache_record_verify(c, key, NULL, 1, NAN, 1), BAD);
    assert_int_equal(gpo_cache_record_verify(c, key, NULL, 1, 1, INFINITY), BAD);
    cJSON_Delete(good);
    cJSON_Delete(arr);
    cJSON_Delete(nested);
    cJSON_Delete(nan);
    cJSON_Delete(dup);
    cJSON_Delete(unnamed);
    cJSON_Delete(huge);
    gpo_cache_close(c);
}

static void directory_functions_refuse_a_file_in_place_of_the_directory(void **state)
{
    (void)state;
    const char *dir = tc_dir("dirargs");
    int removed = 7;
    assert_int_equal(gpo_cache_dir_clear(dir, NULL, NULL, &removed), GPUOPT_OK);
    assert_int_equal(removed, 0);
    char file[600];
    snprintf(file, sizeof file, "%s/plain-file", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    cJSON *out = (cJSON *)1;
    assert_int_equal(gpo_cache_dir_list(file, &out), GPUOPT_ERR_IO);
    assert_null(out);
    assert_int_equal(gpo_cache_dir_verify(file, &out), GPUOPT_ERR_IO);
    detail_has("plain-file: Not a directory");
    assert_int_equal(gpo_cache_dir_clear(file, NULL, NULL, NULL), GPUOPT_ERR_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fingerprints_and_names_take_any_input),
        cmocka_unit_test(hashes_of_empty_and_different_texts),
        cmocka_unit_test(keys_reject_missing_and_oversized_fields),
        cmocka_unit_test(open_refuses_an_overlong_directory_and_takes_defaults),
        cmocka_unit_test(lookups_refuse_a_malformed_key),
        cmocka_unit_test(writes_reject_malformed_records_and_write_nothing),
        cmocka_unit_test(directory_functions_refuse_a_file_in_place_of_the_directory),
    };
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
