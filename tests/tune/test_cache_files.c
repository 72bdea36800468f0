/* Damaged cache files are survived as promised: a torn last line is
 * ignored and cut, a corrupt file is set aside (its good records kept), a
 * newer schema is left alone and never overwritten, an older one set
 * aside; and the directory-level listing, check and clearing. */
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

/* A report of the directory, and whether it says all is well. */
static int verify_ok(const char *dir)
{
    cJSON *r;
    assert_int_equal(gpo_cache_dir_verify(dir, &r), GPUOPT_OK);
    int ok = cJSON_IsTrue(cJSON_GetObjectItem(r, "ok"));
    cJSON *files = cJSON_GetObjectItem(r, "files");
    for (int i = 0; i < cJSON_GetArraySize(files); i++) {
        cJSON *t = cJSON_GetObjectItem(cJSON_GetArrayItem(files, i), "torn_bytes");
        ok = ok && t->valuedouble == 0;
    }
    cJSON_Delete(r);
    return ok;
}

static void torn_last_line_is_ignored_then_cut_by_the_next_write(void **state)
{
    (void)state;
    fixture f;
    make(&f, "torn");
    tc_append_raw(f.path, "{\"t\":\"cand\",\"key\":\"01234");
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    assert_int_equal(look(c, &f.k2), GPUOPT_OK);
    assert_int_equal(f.cap.count, 1);
    assert_non_null(strstr(f.cap.text, "torn line"));
    assert_false(verify_ok(f.dir)); /* reported, though nothing is lost */
    tc_key k3;
    assert_int_equal(tc_tune(c, tc_key_init(&k3, "N=3"), &soft1, 1), 0);
    assert_true(verify_ok(f.dir));
    size_t len;
    char *text = tc_read(f.path, &len);
    assert_int_equal(text[len - 1], '\n');
    assert_null(strstr(text, "\"key\":\"01234\n"));
    free(text);
    assert_int_equal(look(c, &k3), GPUOPT_OK);
    assert_int_equal(tc_count_files(f.dir, ".corrupt-"), 0);
    gpo_cache_close(c);
}

static void file_cut_mid_line_keeps_every_record_before_the_cut(void **state)
{
    (void)state;
    fixture f;
    make(&f, "cut");
    size_t len;
    char *text = tc_read(f.path, &len);
    /* Cut inside the second tune's finished record (its last line). */
    size_t cut = len - 40;
    assert_int_equal(truncate(f.path, (off_t)cut), 0);
    free(text);
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    assert_int_equal(look(c, &f.k2), GPUOPT_ERR_NOT_FOUND);
    /* Its candidates were written before the cut: a new run resumes. */
    cJSON *cands;
    int finished;
    assert_int_equal(gpo_cache_candidates(c, &f.k2.key, &cands, &finished), GPUOPT_OK);
    assert_int_equal(finished, 0);
    assert_int_equal(cJSON_GetArraySize(cands), 3);
    cJSON_Delete(cands);
    gpo_cache_close(c);
}

static void garbage_before_the_last_line_is_set_aside_and_good_records_kept(void **state)
{
    (void)state;
    fixture f;
    make(&f, "garbage");
    size_t len;
    char *text = tc_read(f.path, &len);
    /* "garbage" after the third line (the first tune's begin + 1 cand). */
    char *p = text;
    for (int i = 0; i < 3; i++)
        p = strchr(p, '\n') + 1;
    char *bad = malloc(len + 32);
    sprintf(bad, "%.*sthis is not json\n%s", (int)(p - text), text, p);
    write_file(f.path, bad);
    free(text);
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    assert_int_equal(look(c, &f.k2), GPUOPT_OK);
    assert_non_null(strstr(f.cap.text, "set aside as"));
    assert_non_null(strstr(f.cap.text, "line 4: not a JSON object"));
    assert_int_equal(tc_count_files(f.dir, ".jsonl.corrupt-"), 1);
    assert_true(verify_ok(f.dir));
    /* The damaged copy is kept byte for byte. */
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

static void record_whose_key_is_not_its_hash_is_corruption(void **state)
{
    (void)state;
    fixture f;
    make(&f, "rehash");
    char *text = tc_read(f.path, NULL);
    /* Someone edited the first tune's workload by hand. */
    int edits = 0;
    for (char *w = text; (w = strstr(w, "\"workload\":\"N=1\"")); edits++)
        w[14] = '9';
    assert_int_equal(edits, 2); /* its begin and its finished record */
    write_file(f.path, text);
    free(text);
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k2), GPUOPT_OK);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    tc_key k9;
    tc_key_init(&k9, "N=9");
    assert_int_equal(look(c, &k9), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(f.cap.text, "not the hash of its hard key"));
    gpo_cache_close(c);
}

static void bad_header_is_set_aside_and_a_new_file_started(void **state)
{
    (void)state;
    fixture f;
    make(&f, "header");
    char *text = tc_read(f.path, NULL);
    char *rest = strchr(text, '\n') + 1;
    char *bad = malloc(strlen(text) + 32);
    sprintf(bad, "{\"hello\":1}\n%s", rest);
    write_file(f.path, bad);
    free(bad);
    free(text);
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(f.cap.text, "not a gpuopt-tuning-cache header"));
    assert_int_equal(tc_count_files(f.dir, ".corrupt-"), 1);
    assert_int_equal(access(f.path, F_OK), -1);
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 1), 0);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
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
    assert_int_equal(gpo_cache_compact(c), GPUOPT_OK);
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
    write_file(f.path, "{\"t\":\"header\",\"format\":\"gpuopt-tuning-cache\",\"schema\":0}\n");
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(f.cap.text, "older"));
    assert_int_equal(tc_count_files(f.dir, ".jsonl.old-"), 1);
    gpo_cache_close(c);
}

static void empty_file_is_a_silent_miss_and_gets_a_header(void **state)
{
    (void)state;
    fixture f;
    make(&f, "empty");
    write_file(f.path, "");
    gpo_cache *c = reopen(&f);
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(f.cap.count, 0);
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 1), 0);
    char *text = tc_read(f.path, NULL);
    assert_true(strncmp(text, "{\"t\":\"header\",\"format\":\"gpuopt-tuning-cache\"", 44) == 0);
    free(text);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    /* A header torn by a crash on the very first write is started again. */
    write_file(f.path, "{\"t\":\"header\",\"for");
    assert_int_equal(look(c, &f.k1), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 1), 0);
    assert_int_equal(look(c, &f.k1), GPUOPT_OK);
    assert_true(verify_ok(f.dir));
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
    gpo_cache_close(c);
}

static void a_symbolic_link_at_the_journal_path_is_never_followed(void **state)
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
    assert_int_equal(tc_tune(c, &f.k1.key, &soft1, 1), 0);
    assert_true(f.cap.count >= 1);
    char *t = tc_read(target, NULL);
    assert_string_equal(t, "precious\n");
    free(t);
    gpo_cache_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(torn_last_line_is_ignored_then_cut_by_the_next_write),
        cmocka_unit_test(file_cut_mid_line_keeps_every_record_before_the_cut),
        cmocka_unit_test(garbage_before_the_last_line_is_set_aside_and_good_records_kept),
        cmocka_unit_test(record_whose_key_is_not_its_hash_is_corruption),
        cmocka_unit_test(bad_header_is_set_aside_and_a_new_file_started),
        cmocka_unit_test(newer_schema_is_left_alone_and_never_overwritten),
        cmocka_unit_test(older_schema_is_set_aside),
        cmocka_unit_test(empty_file_is_a_silent_miss_and_gets_a_header),
        cmocka_unit_test(a_file_removed_under_an_open_cache_is_a_miss),
        cmocka_unit_test(a_symbolic_link_at_the_journal_path_is_never_followed),
    };
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
