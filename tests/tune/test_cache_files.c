/* Damaged cache files are survived as promised: a file that is not one
 * JSON document of this format, or holds entries that fail their checks,
 * misses with one warning and is set aside by the next write (which keeps
 * what still reads); a newer schema is left alone and never overwritten,
 * an older one set aside; a link at the file's path is never followed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_cache_util.h"

static const gpo_cache_soft soft1 = {"535.104", "nvrtc 12.2", NULL, "NVIDIA H100 80GB HBM3"};

typedef struct fixture {
    const char *dir;
    char path[1024];
    tc_key k1, k2;
    log_capture cap;
    gpo_logger log;
    gpo_cache_options o;
} fixture;

/* A directory with one journal holding two finished tunes. */
static void make(fixture *f, const char *name)
{
    memset(f, 0, sizeof *f);
    f->dir = tc_dir(name);
    f->o = tc_options(0, 0);
    f->log = tc_logger(&f->cap, GPUOPT_LOG_WARN);
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache *c;
    assert_int_equal(gpo_cache_open(f->dir, &dev, &f->o, NULL, &c), GPUOPT_OK);
    assert_int_equal(tc_tune(c, tc_key_init(&f->k1, "N=1"), &soft1, 3), 0);
    assert_int_equal(tc_tune(c, tc_key_init(&f->k2, "N=2"), &soft1, 3), 0);
    strcpy(f->path, gpo_cache_file(c));
    gpo_cache_close(c);
}

static gpo_cache *reopen(fixture *f)
{
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache *c;
    assert_int_equal(gpo_cache_open(f->dir, &dev, &f->o, &f->log, &c), GPUOPT_OK);
    return c;
}

static gpuopt_status look(gpo_cache *c, const tc_key *k)
{
    gpo_cache_hit *hit = NULL;
    gpuopt_status st = gpo_cache_lookup(c, &k->key, &soft1, &hit);
    gpo_cache_hit_free(hit);
    return st;
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static int verify_ok(const char *dir)
{
    return tc_verify(dir, NULL, NULL, NULL) == 1;
}

static void a_line_cut_short_is_not_used_and_the_rest_is_kept(void **state)
{
    (void)state;
    fixture f;
    make(&f, "cut");
    size_t len;
    char *text = tc_read(f.path, &len);
    free(text);
    /* Not something a write leaves (a write renames a whole file over the
     * old one): a copy cut short, an editor's accident. */
    assert_int_equal(truncate(f.path, (off_t)(len - 40)), 0);
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1) + look(c, &f.k2), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(f.cap.count, 1);
    assert_non_null(strstr(f.cap.text, "not one JSON object"));
    assert_false(verify_ok(f.dir));
    tc_key k3;
    assert_int_equal(tc_tune(c, tc_key_init(&k3, "N=3"), &soft1, 1), 0);
    assert_int_equal(look(c, &k3), GPUOPT_OK);
    assert_int_equal(look(c, &f.k1) + look(c, &f.k2), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(f.cap.text, "set aside as"));
    assert_int_equal(tc_count_files(f.dir, ".jsonl.corrupt-"), 1);
    assert_true(verify_ok(f.dir)); /* the copy set aside is listed, not an error */
    gpo_cache_close(c);
}

static void an_entry_that_fails_its_checks_is_dropped_and_the_rest_kept(void **state)
{
    (void)state;
    fixture f;
    make(&f, "damaged");
    /* Valid JSON, not a valid value: the first tune's best time. */
    tc_edit(f.path, "\"median_ns\":1000,", "\"median_ns\":\"fast\",");
    char *bad = tc_read(f.path, NULL);
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(look(c, &f.k2), GPUOPT_OK);
    assert_int_equal(f.cap.count, 1);
    assert_non_null(strstr(f.cap.text, "1 entry failed its checks"));
    assert_non_null(strstr(f.cap.text, "without median_ns"));
    int entries = 0;
    assert_int_equal(tc_verify(f.dir, &entries, NULL, NULL), 0);
    assert_int_equal(entries, 1);
    /* The next write sets the file aside byte for byte and keeps the rest. */
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 1), 0);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    assert_int_equal(look(c, &f.k2), GPUOPT_OK);
    assert_non_null(strstr(f.cap.text, "the entries that still read are kept"));
    assert_true(verify_ok(f.dir));
    cJSON *r;
    assert_int_equal(gpo_cache_dir_verify(f.dir, &r), GPUOPT_OK);
    cJSON *aside = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "set_aside"), 0);
    char apath[1200];
    snprintf(apath, sizeof apath, "%s/%s", f.dir, aside->valuestring);
    cJSON_Delete(r);
    char *kept = tc_read(apath, NULL);
    assert_string_equal(kept, bad);
    free(kept);
    free(bad);
    gpo_cache_close(c);
}

static void record_whose_key_is_not_its_hash_is_not_used(void **state)
{
    (void)state;
    fixture f;
    make(&f, "rehash");
    /* Someone edited the first tune's workload by hand. */
    tc_edit(f.path, "\"workload\":\"N=1\"", "\"workload\":\"N=9\"");
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k2), GPUOPT_OK);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    tc_key k9;
    tc_key_init(&k9, "N=9");
    assert_int_equal(look(c, &k9), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(f.cap.text, "not the hash of its hard key"));
    gpo_cache_close(c);
}

static void another_format_is_set_aside_and_a_new_file_started(void **state)
{
    (void)state;
    fixture f;
    make(&f, "format");
    tc_edit(f.path, "\"format\":\"gpuopt-tuning-cache\"", "\"format\":\"something-else\"");
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(f.cap.text, "the first line is not a gpuopt-tuning-cache header"));
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 1), 0);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    assert_int_equal(look(c, &f.k2), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(tc_count_files(f.dir, ".corrupt-"), 1);
    assert_non_null(strstr(f.cap.text, "a new file is started"));
    assert_true(verify_ok(f.dir));
    gpo_cache_close(c);
}

static void newer_schema_is_left_alone_and_never_overwritten(void **state)
{
    (void)state;
    fixture f;
    make(&f, "newer");
    const char *future = "{\"t\":\"header\",\"format\":\"gpuopt-tuning-cache\",\"schema\":99}\n"
                         "{\"t\":\"shiny\",\"key\":\"whatever the future holds\"}\n";
    write_file(f.path, future);
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(f.cap.count, 1);
    assert_non_null(strstr(f.cap.text, f.path));
    assert_non_null(strstr(f.cap.text, "schema 99"));
    const char *why;
    assert_int_equal(gpo_cache_get_state(c, &why), GPO_CACHE_READ_ONLY);
    assert_non_null(strstr(why, "newer"));
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 2), 0); /* skipped, with a warning */
    assert_int_equal(f.cap.count, 2);
    assert_non_null(strstr(f.cap.text, "not stored"));
    char *now = tc_read(f.path, NULL);
    assert_string_equal(now, future);
    free(now);
    assert_int_equal(tc_count_files(f.dir, ".corrupt-"), 0);
    assert_true(verify_ok(f.dir)); /* not ours to read, not broken */
    gpo_cache_close(c);
}

static void older_schema_is_set_aside(void **state)
{
    (void)state;
    fixture f;
    make(&f, "older");
    /* 0.1's journal: its header names schema 1. */
    write_file(f.path, "{\"t\":\"header\",\"format\":\"gpuopt-tuning-cache\",\"schema\":1}\n"
                       "{\"t\":\"touch\",\"key\":\"0123456789abcdef\",\"time\":1}\n");
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(f.cap.text, "older"));
    assert_false(verify_ok(f.dir));
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 1), 0);
    assert_int_equal(tc_count_files(f.dir, ".jsonl.old-"), 1);
    assert_true(verify_ok(f.dir));
    gpo_cache_close(c);
}

static void empty_file_is_a_silent_miss_and_is_replaced(void **state)
{
    (void)state;
    fixture f;
    make(&f, "empty");
    write_file(f.path, "");
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(f.cap.count, 0);
    assert_true(verify_ok(f.dir));
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 1), 0);
    char *text = tc_read(f.path, NULL);
    const char *head = "{\"t\":\"header\",\"format\":\"gpuopt-tuning-cache\",\"schema\":2,";
    assert_true(strncmp(text, head, strlen(head)) == 0);
    free(text);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    assert_int_equal(tc_count_files(f.dir, ".corrupt-"), 0);
    gpo_cache_close(c);
}

static void a_file_removed_under_an_open_cache_is_a_miss(void **state)
{
    (void)state;
    fixture f;
    make(&f, "removed");
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    int removed = -1;
    assert_int_equal(gpo_cache_dir_clear(f.dir, NULL, NULL, &removed), GPUOPT_OK);
    assert_int_equal(removed, 1);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 1), 0);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    assert_int_equal(look(c, &f.k2), GPUOPT_ERR_NOT_FOUND);
    gpo_cache_close(c);
}

static void a_symbolic_link_at_the_file_path_is_never_followed(void **state)
{
    (void)state;
    fixture f;
    make(&f, "symlink");
    char target[1200];
    snprintf(target, sizeof target, "%s/elsewhere", f.dir);
    write_file(target, "precious\n");
    assert_int_equal(unlink(f.path), 0);
    assert_int_equal(symlink(target, f.path), 0);
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(f.cap.text, "symbolic link"));
    /* The next write moves the link aside (never what it points to). */
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 1), 0);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    char *t = tc_read(target, NULL);
    assert_string_equal(t, "precious\n");
    free(t);
    gpo_cache_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_line_cut_short_is_not_used_and_the_rest_is_kept),
        cmocka_unit_test(an_entry_that_fails_its_checks_is_dropped_and_the_rest_kept),
        cmocka_unit_test(record_whose_key_is_not_its_hash_is_not_used),
        cmocka_unit_test(another_format_is_set_aside_and_a_new_file_started),
        cmocka_unit_test(newer_schema_is_left_alone_and_never_overwritten),
        cmocka_unit_test(older_schema_is_set_aside),
        cmocka_unit_test(empty_file_is_a_silent_miss_and_is_replaced),
        cmocka_unit_test(a_file_removed_under_an_open_cache_is_a_miss),
        cmocka_unit_test(a_symbolic_link_at_the_file_path_is_never_followed),
    };
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
