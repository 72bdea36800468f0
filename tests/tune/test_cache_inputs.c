/* Every cache function given NULL, out-of-range or malformed input: an
 * error with words, nothing written, nothing leaked (the sanitizer build
 * checks the last). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_cache_util.h"
#include "tune/cache_int.h"

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
    memset(&dev, 0x55, sizeof dev);
    gpo_cache_device_from_info(NULL, &dev);
    assert_int_equal(dev.compute_units, -1);
    assert_string_equal(dev.backend, "");
    gpo_cache_device_from_info(NULL, NULL); /* nothing to do, no crash */
    char name[256];
    assert_int_equal(gpo_cache_file_name(&dev, NULL, name, sizeof name), GPUOPT_OK);
    assert_string_equal(name, "unknown_unknown_0cu_device.jsonl");
    /* Hostile names cannot leave the directory or hide the file. */
    gpuopt_device_info info;
    memset(&info, 0, sizeof info);
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
    assert_int_equal(gpo_cache_file_name(NULL, NULL, name, sizeof name), BAD);
    assert_int_equal(gpo_cache_file_name(&dev, NULL, NULL, 10), BAD);
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

static void hashes_reject_bad_buffers(void **state)
{
    (void)state;
    char out[32];
    assert_int_equal(gpo_cache_hash_text(NULL, 0, out, sizeof out), GPUOPT_OK);
    assert_int_equal(gpo_cache_hash_text(NULL, 3, out, sizeof out), BAD);
    assert_int_equal(gpo_cache_hash_text("abc", 3, NULL, 32), BAD);
    assert_int_equal(gpo_cache_hash_text("abc", 3, out, 24), RANGE);
    char a[32], b[32];
    assert_int_equal(gpo_cache_hash_text("abc", 3, a, sizeof a), GPUOPT_OK);
    assert_int_equal(gpo_cache_hash_text("abd", 3, b, sizeof b), GPUOPT_OK);
    assert_string_not_equal(a, b);
    const char *items[] = {"x", NULL};
    assert_int_equal(gpo_cache_hash_set(NULL, 0, out, sizeof out), GPUOPT_OK);
    assert_int_equal(gpo_cache_hash_set(NULL, 2, out, sizeof out), BAD);
    assert_int_equal(gpo_cache_hash_set(items, 2, out, sizeof out), BAD);
    detail_has("item 1 is NULL");
    assert_int_equal(gpo_cache_hash_set(items, 1, NULL, 32), BAD);
    assert_int_equal(gpo_cache_hash_set(items, 1, out, 8), RANGE);
}

static void keys_reject_missing_and_oversized_fields(void **state)
{
    (void)state;
    tc_key k;
    char *canon = (char *)"x";
    uint64_t h;
    assert_int_equal(gpo_cache_key_canon(NULL, &canon, &h), BAD);
    assert_int_equal(gpo_cache_key_canon(tc_key_init(&k, "N=1"), NULL, &h), BAD);
    assert_int_equal(gpo_cache_key_canon(&k.key, &canon, NULL), GPUOPT_OK);
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

static void open_and_state_reject_bad_arguments(void **state)
{
    (void)state;
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache *c = (gpo_cache *)1;
    assert_int_equal(gpo_cache_open(NULL, &dev, NULL, NULL, &c), BAD);
    assert_null(c);
    assert_int_equal(gpo_cache_open("/tmp", NULL, NULL, NULL, &c), BAD);
    assert_int_equal(gpo_cache_open("/tmp", &dev, NULL, NULL, NULL), BAD);
    assert_int_equal(gpo_cache_open("", &dev, NULL, NULL, &c), BAD);
    gpo_cache_options o = tc_options(0, 0);
    o.per_host = 2;
    assert_int_equal(gpo_cache_open("/tmp", &dev, &o, NULL, &c), RANGE);
    char *longdir = malloc(GPO_PATH_MAX);
    memset(longdir, 'd', GPO_PATH_MAX - 1);
    longdir[GPO_PATH_MAX - 1] = '\0';
    assert_int_equal(gpo_cache_open(longdir, &dev, NULL, NULL, &c), RANGE);
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

static void lookups_reject_bad_arguments(void **state)
{
    (void)state;
    gpo_cache *c = fresh("badlookup");
    tc_key k;
    gpo_cache_key *key = tc_key_init(&k, "N=1");
    gpo_cache_hit *hit = (gpo_cache_hit *)1;
    assert_int_equal(gpo_cache_lookup(NULL, key, NULL, &hit), BAD);
    assert_null(hit);
    assert_int_equal(gpo_cache_lookup(c, NULL, NULL, &hit), BAD);
    assert_int_equal(gpo_cache_lookup(c, key, NULL, NULL), BAD);
    k.key.kind = "";
    assert_int_equal(gpo_cache_lookup(c, &k.key, NULL, &hit), BAD);
    gpo_cache_hit_free(NULL);
    cJSON *cands = (cJSON *)1;
    int finished;
    assert_int_equal(gpo_cache_candidates(NULL, key, &cands, &finished), BAD);
    assert_null(cands);
    assert_int_equal(gpo_cache_candidates(c, NULL, &cands, &finished), BAD);
    assert_int_equal(gpo_cache_candidates(c, key, NULL, &finished), BAD);
    assert_int_equal(gpo_cache_candidates(c, key, &cands, NULL), BAD);
    assert_int_equal(gpo_cache_candidates(c, &k.key, &cands, &finished), BAD);
    assert_int_equal(gpo_cache_touch(NULL, key), BAD);
    assert_int_equal(gpo_cache_touch(c, NULL), BAD);
    assert_int_equal(gpo_cache_touch(c, &k.key), BAD);
    assert_int_equal(gpo_cache_compact(NULL), BAD);
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
    assert_int_equal(gpo_cache_begin(NULL, key, NULL, &s, &t), BAD);
    assert_null(t);
    assert_int_equal(gpo_cache_begin(c, NULL, NULL, &s, &t), BAD);
    assert_int_equal(gpo_cache_begin(c, key, NULL, NULL, &t), BAD);
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, NULL), BAD);
    s.strategy = NULL;
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), BAD);
    s.strategy = "";
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), BAD);
    s.strategy = "random";
    s.max_evaluations = -1;
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), RANGE);
    s.max_evaluations = 10;
    s.max_seconds = NAN;
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), RANGE);
    s.max_seconds = 0;
    /* Nothing reached the disk. */
    assert_null(tc_read(gpo_cache_file(c), NULL));

    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), GPUOPT_OK);
    size_t lines = tc_lines(gpo_cache_file(c));
    gpo_cache_stats st = tc_stats(10);
    cJSON *good = tc_params(8, 2);
    assert_int_equal(gpo_cache_add_candidate(NULL, good, &st), BAD);
    assert_int_equal(gpo_cache_add_candidate(t, NULL, &st), BAD);
    assert_int_equal(gpo_cache_add_candidate(t, good, NULL), BAD);
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
    assert_int_equal(tc_lines(gpo_cache_file(c)), lines);
    /* A line longer than the journal takes is refused whole. */
    cJSON *huge = cJSON_CreateObject();
    char *text = malloc(GPO_CACHE_LINE_MAX + 10);
    memset(text, 'a', GPO_CACHE_LINE_MAX + 9);
    text[GPO_CACHE_LINE_MAX + 9] = '\0';
    cJSON_AddStringToObject(huge, "BIG", text);
    free(text);
    assert_int_equal(gpo_cache_add_candidate(t, huge, &st), RANGE);
    assert_int_equal(tc_lines(gpo_cache_file(c)), lines);

    /* finish frees the handle even when it refuses. */
    assert_int_equal(gpo_cache_finish(NULL, good, &st, NULL, NULL, 1, 0, NULL), BAD);
    assert_int_equal(gpo_cache_finish(t, good, NULL, NULL, NULL, 1, 0, NULL), BAD);
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), GPUOPT_OK);
    assert_int_equal(gpo_cache_finish(t, NULL, NULL, good, &st, 1, 0, NULL), BAD);
    detail_has("runner-up without a best");
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), GPUOPT_OK);
    assert_int_equal(gpo_cache_finish(t, good, &st, arr, &st, 1, 0, NULL), BAD);
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), GPUOPT_OK);
    assert_int_equal(gpo_cache_finish(t, good, &st, NULL, NULL, 1, NAN, NULL), RANGE);
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), GPUOPT_OK);
    assert_int_equal(gpo_cache_finish(t, good, &st, NULL, NULL, 1, 0, arr), BAD);
    gpo_cache_abandon(NULL);
    gpo_cache_hit *hit;
    assert_int_equal(gpo_cache_lookup(c, key, NULL, &hit), GPUOPT_ERR_NOT_FOUND);
    /* No valid candidate at all is a record too: the search ran, found none. */
    assert_int_equal(gpo_cache_begin(c, key, NULL, &s, &t), GPUOPT_OK);
    assert_int_equal(gpo_cache_finish(t, NULL, NULL, NULL, NULL, 1, 2.0, NULL), GPUOPT_OK);
    assert_int_equal(gpo_cache_lookup(c, key, NULL, &hit), GPUOPT_OK);
    assert_null(hit->best);
    gpo_cache_hit_free(hit);

    assert_int_equal(gpo_cache_put(NULL, key, NULL, good), BAD);
    assert_int_equal(gpo_cache_put(c, NULL, NULL, good), BAD);
    assert_int_equal(gpo_cache_put(c, key, NULL, NULL), BAD);
    assert_int_equal(gpo_cache_put(c, key, NULL, arr), BAD);
    assert_int_equal(gpo_cache_record_verify(NULL, key, NULL, 1, 1, 1), BAD);
    assert_int_equal(gpo_cache_record_verify(c, NULL, NULL, 1, 1, 1), BAD);
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

static void directory_functions_reject_bad_arguments(void **state)
{
    (void)state;
    cJSON *out = (cJSON *)1;
    assert_int_equal(gpo_cache_dir_list(NULL, NULL, &out), BAD);
    assert_null(out);
    assert_int_equal(gpo_cache_dir_list("", NULL, &out), BAD);
    assert_int_equal(gpo_cache_dir_list("/tmp", NULL, NULL), BAD);
    assert_int_equal(gpo_cache_dir_verify(NULL, NULL, &out), BAD);
    assert_int_equal(gpo_cache_dir_verify("", NULL, &out), BAD);
    assert_int_equal(gpo_cache_dir_verify("/tmp", NULL, NULL), BAD);
    int removed = 7;
    assert_int_equal(gpo_cache_dir_clear(NULL, NULL, NULL, &removed), BAD);
    assert_int_equal(removed, 0);
    assert_int_equal(gpo_cache_dir_clear("", NULL, NULL, NULL), BAD);
    const char *dir = tc_dir("dirargs");
    assert_int_equal(gpo_cache_dir_clear(dir, NULL, NULL, NULL), GPUOPT_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fingerprints_and_names_take_any_input),
        cmocka_unit_test(hashes_reject_bad_buffers),
        cmocka_unit_test(keys_reject_missing_and_oversized_fields),
        cmocka_unit_test(open_and_state_reject_bad_arguments),
        cmocka_unit_test(lookups_reject_bad_arguments),
        cmocka_unit_test(writes_reject_malformed_records_and_write_nothing),
        cmocka_unit_test(directory_functions_reject_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
