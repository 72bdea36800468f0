/* The tuning cache's records: what hits, what misses, what a soft change
 * reports, how parameters are kept, LRU eviction and what a write leaves
 * in the file. Real files in fresh directories under the build tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_cache_util.h"
#include "tune/space.h"

static const gpo_cache_soft soft1 = {"535.104", "nvrtc 12.2", NULL, "NVIDIA H100 80GB HBM3"};

static gpo_cache *open_in(const char *name, gpo_cache_options *o, gpo_logger *log)
{
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache *c = NULL;
    assert_int_equal(gpo_cache_open(tc_dir(name), &dev, o, log, &c), GPUOPT_OK);
    return c;
}

static double num(const cJSON *o, const char *name)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
    assert_true(cJSON_IsNumber(f));
    return f->valuedouble;
}

static double param(const cJSON *cand, const char *name)
{
    return num(cJSON_GetObjectItemCaseSensitive(cand, "params"), name);
}

static void every_hard_key_field_is_part_of_the_key(void **state)
{
    (void)state;
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c = open_in("hard", &o, NULL);
    tc_key k;
    gpo_cache_key *key = tc_key_init(&k, "M=512;N=512;K=512;type=f32");
    assert_int_equal(tc_tune(c, key, &soft1, 3), 0);
    gpo_cache_hit *hit = NULL;
    assert_int_equal(gpo_cache_lookup(c, key, &soft1, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, 0);
    assert_true(hit->complete);
    gpo_cache_hit_free(hit);
    /* Each field changed alone is a miss; restored, a hit again. */
    char *fields[] = {k.kind, k.backend, k.arch, k.source, k.options, k.space, k.workload};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        char keep[64];
        strcpy(keep, fields[i]);
        strcat(fields[i], "x");
        assert_int_equal(gpo_cache_lookup(c, tc_key_sync(&k), &soft1, &hit), GPUOPT_ERR_NOT_FOUND);
        assert_null(hit);
        strcpy(fields[i], keep);
        assert_int_equal(gpo_cache_lookup(c, tc_key_sync(&k), &soft1, &hit), GPUOPT_OK);
        gpo_cache_hit_free(hit);
    }
    k.compute_units = 114;
    assert_int_equal(gpo_cache_lookup(c, tc_key_sync(&k), &soft1, &hit), GPUOPT_ERR_NOT_FOUND);
    k.compute_units = 132;
    /* The schema version is in the hashed text. */
    char *canon = NULL;
    assert_int_equal(gpo_cache_key_canon(tc_key_sync(&k), &canon, NULL), GPUOPT_OK);
    char want[64];
    snprintf(want, sizeof want, "gpuopt-cache-key/%d\n", GPO_CACHE_SCHEMA);
    assert_true(strncmp(canon, want, strlen(want)) == 0);
    free(canon);
    /* A fresh open (another process) reads the same from the file. */
    c = tc_reopen(c, &o, NULL);
    assert_int_equal(gpo_cache_lookup(c, tc_key_sync(&k), &soft1, &hit), GPUOPT_OK);
    assert_true(param(hit->best, "TILE") == 1);
    gpo_cache_hit_free(hit);
    k.arch[0] = 'X';
    assert_int_equal(gpo_cache_lookup(c, tc_key_sync(&k), &soft1, &hit), GPUOPT_ERR_NOT_FOUND);
    gpo_cache_close(c);
}

/* Field contents cannot pose as other fields: lengths are in the text. */
static void key_fields_cannot_run_into_each_other(void **state)
{
    (void)state;
    tc_key a, b;
    tc_key_init(&a, "x");
    tc_key_init(&b, "x");
    strcpy(a.source, "ab");
    strcpy(a.options, "c");
    strcpy(b.source, "a");
    strcpy(b.options, "bc");
    uint64_t ha, hb;
    char *ca, *cb;
    assert_int_equal(gpo_cache_key_canon(tc_key_sync(&a), &ca, &ha), GPUOPT_OK);
    assert_int_equal(gpo_cache_key_canon(tc_key_sync(&b), &cb, &hb), GPUOPT_OK);
    assert_string_not_equal(ca, cb);
    assert_true(ha != hb);
    free(ca);
    free(cb);
}

static void soft_change_returns_winner_runner_up_and_what_changed(void **state)
{
    (void)state;
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c = open_in("soft", &o, NULL);
    tc_key k;
    gpo_cache_key *key = tc_key_init(&k, "N=4096");
    assert_int_equal(tc_tune(c, key, &soft1, 5), 0);
    gpo_cache_soft soft2 = soft1;
    soft2.driver = "550.54";
    soft2.device_name = "NVIDIA H100 PCIe";
    gpo_cache_hit *hit;
    assert_int_equal(gpo_cache_lookup(c, key, &soft2, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, GPO_SOFT_DRIVER | GPO_SOFT_DEVICE_NAME);
    assert_non_null(hit->best);
    assert_non_null(hit->runner_up);
    assert_true(param(hit->best, "TILE") == 1);
    assert_true(num(hit->best, "median_ns") == 1000);
    assert_true(param(hit->runner_up, "TILE") == 2);
    assert_true(num(hit->runner_up, "median_ns") == 2000);
    assert_string_equal(cJSON_GetObjectItem(hit->soft, "driver")->valuestring, "535.104");
    assert_string_equal(cJSON_GetObjectItem(hit->soft, "library")->valuestring, gpuopt_version());
    assert_string_equal(gpo_cache_soft_name(GPO_SOFT_DRIVER), "driver");
    assert_string_equal(gpo_cache_soft_name(GPO_SOFT_DEVICE_NAME), "device_name");
    assert_null(gpo_cache_soft_name(3));
    gpo_cache_hit_free(hit);
    /* The library version is soft too. */
    gpo_cache_soft soft3 = soft1;
    soft3.library = "9.9.9";
    assert_int_equal(gpo_cache_lookup(c, key, &soft3, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, GPO_SOFT_LIBRARY);
    gpo_cache_hit_free(hit);
    /* Verified: the new soft fields are adopted. */
    assert_int_equal(gpo_cache_record_verify(c, key, &soft2, 1, 1010, 2050), GPUOPT_OK);
    assert_int_equal(gpo_cache_lookup(c, key, &soft2, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, 0);
    assert_true(param(hit->best, "TILE") == 1);
    gpo_cache_hit_free(hit);
    /* A failed verification drops the record: re-tune. */
    assert_int_equal(gpo_cache_record_verify(c, key, &soft3, 0, 5000, 2100), GPUOPT_OK);
    assert_int_equal(gpo_cache_lookup(c, key, &soft3, &hit), GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(gpo_cache_record_verify(c, key, &soft3, 1, 1, 1), GPUOPT_ERR_NOT_FOUND);
    /* ... and a new tune answers again, also to another open (process). */
    assert_int_equal(tc_tune(c, key, &soft3, 2), 0);
    c = tc_reopen(c, &o, NULL);
    assert_int_equal(gpo_cache_lookup(c, key, &soft3, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, 0);
    gpo_cache_hit_free(hit);
    gpo_cache_close(c);
}

/* The space hash of the key: a space's canonical text, hashed. */
static void space_hash(int tile_first, char *out, size_t cap)
{
    static const int64_t tiles[] = {8, 16, 32}, vecs[] = {1, 2, 4};
    gpuopt_space *s = NULL;
    char *text = NULL;
    assert_int_equal(gpuopt_space_create(&s), GPUOPT_OK);
    for (int i = 0; i < 2; i++)
        assert_int_equal(i == !tile_first ? gpuopt_space_add_int(s, "TILE", tiles, 3)
                                          : gpuopt_space_add_int(s, "VEC", vecs, 3),
                         GPUOPT_OK);
    assert_int_equal(gpuopt_space_add_constraint(s, "TILE*VEC<=64"), GPUOPT_OK);
    assert_int_equal(gpo_space_canonical(s, &text), GPUOPT_OK);
    assert_int_equal(gpo_cache_hash_text(text, strlen(text), out, cap), GPUOPT_OK);
    free(text);
    gpuopt_space_destroy(s);
}

static void parameters_are_kept_by_name_not_position(void **state)
{
    (void)state;
    char h1[32], h2[32];
    space_hash(1, h1, sizeof h1);
    space_hash(0, h2, sizeof h2);
    assert_string_equal(h1, h2);
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c = open_in("byname", &o, NULL);
    tc_key k;
    tc_key_init(&k, "N=64");
    strcpy(k.space, h1);
    gpo_cache_search search = {"random", 7, 100, 0, 0};
    gpo_cache_tune *t;
    assert_int_equal(gpo_cache_begin(c, tc_key_sync(&k), &soft1, &search, &t), GPUOPT_OK);
    cJSON *best = cJSON_CreateObject();
    cJSON_AddNumberToObject(best, "VEC", 4);
    cJSON_AddNumberToObject(best, "TILE", 16);
    cJSON_AddStringToObject(best, "STAGE", "on");
    gpo_cache_stats s = tc_stats(777);
    assert_int_equal(gpo_cache_add_candidate(t, best, &s), GPUOPT_OK);
    assert_int_equal(gpo_cache_finish(t, best, &s, NULL, NULL, 0, 3.0, NULL), GPUOPT_OK);
    cJSON_Delete(best);
    /* The space declared in another order has the same hash: a hit. */
    strcpy(k.space, h2);
    gpo_cache_hit *hit;
    assert_int_equal(gpo_cache_lookup(c, tc_key_sync(&k), &soft1, &hit), GPUOPT_OK);
    assert_null(hit->runner_up);
    assert_false(hit->complete);
    assert_true(param(hit->best, "TILE") == 16);
    assert_true(param(hit->best, "VEC") == 4);
    const cJSON *stage = cJSON_GetObjectItem(cJSON_GetObjectItem(hit->best, "params"), "STAGE");
    assert_string_equal(stage->valuestring, "on");
    assert_string_equal(cJSON_GetObjectItem(hit->record, "strategy")->valuestring, "random");
    assert_string_equal(cJSON_GetObjectItem(hit->record, "seed")->valuestring, "7");
    assert_true(num(cJSON_GetObjectItem(hit->record, "budget"), "max_evaluations") == 100);
    assert_true(num(hit->record, "evaluated") == 1);
    assert_true(num(hit->record, "wall_s") == 3.0);
    gpo_cache_hit_free(hit);
    gpo_cache_close(c);
}

static void unfinished_tune_leaves_candidates_to_resume(void **state)
{
    (void)state;
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c = open_in("resume", &o, NULL);
    tc_key k;
    gpo_cache_key *key = tc_key_init(&k, "N=1");
    gpo_cache_search search = {"exhaustive", 1, 0, 0, 0};
    gpo_cache_tune *t;
    assert_int_equal(gpo_cache_begin(c, key, &soft1, &search, &t), GPUOPT_OK);
    for (int i = 0; i < 3; i++) {
        cJSON *p = tc_params(i, 1);
        gpo_cache_stats s = tc_stats(100 + i);
        s.status = i == 2 ? 2 : 0; /* a compile failure is kept too */
        s.median_ns = i == 2 ? -1 : s.median_ns;
        assert_int_equal(gpo_cache_add_candidate(t, p, &s), GPUOPT_OK);
        cJSON_Delete(p);
    }
    gpo_cache_abandon(t);
    gpo_cache_hit *hit;
    assert_int_equal(gpo_cache_lookup(c, key, &soft1, &hit), GPUOPT_ERR_NOT_FOUND);
    cJSON *cands;
    int finished = -1;
    assert_int_equal(gpo_cache_candidates(c, key, &cands, &finished), GPUOPT_OK);
    assert_int_equal(finished, 0);
    assert_int_equal(cJSON_GetArraySize(cands), 3);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cands, 2), "status")->valuestring,
                        "compile_failed");
    cJSON_Delete(cands);
    /* Another open (process) finds the unfinished tune too. */
    char dir[1024];
    strcpy(dir, gpo_cache_file(c));
    *strrchr(dir, '/') = '\0';
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache *c2;
    assert_int_equal(gpo_cache_open(dir, &dev, &o, NULL, &c2), GPUOPT_OK);
    assert_int_equal(gpo_cache_candidates(c2, key, &cands, &finished), GPUOPT_OK);
    assert_int_equal(finished, 0);
    assert_int_equal(cJSON_GetArraySize(cands), 3);
    cJSON_Delete(cands);
    gpo_cache_close(c2);
    /* A finished tune replaces it. */
    assert_int_equal(tc_tune(c, key, &soft1, 2), 0);
    assert_int_equal(gpo_cache_candidates(c, key, &cands, &finished), GPUOPT_OK);
    assert_int_equal(finished, 1);
    assert_int_equal(cJSON_GetArraySize(cands), 2);
    cJSON_Delete(cands);
    tc_key other;
    assert_int_equal(gpo_cache_candidates(c, tc_key_init(&other, "N=2"), &cands, &finished),
                     GPUOPT_ERR_NOT_FOUND);
    assert_null(cands);
    gpo_cache_close(c);
}

static void measurement_payloads_are_stored_under_their_key(void **state)
{
    (void)state;
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c = open_in("put", &o, NULL);
    tc_key k;
    tc_key_init(&k, "bytes=268435456");
    strcpy(k.kind, "bench.bandwidth_d2d");
    k.source[0] = k.options[0] = k.space[0] = '\0';
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "gbps", 1650.5);
    assert_int_equal(tc_put(c, tc_key_sync(&k), &soft1, p), GPUOPT_OK);
    cJSON_ReplaceItemInObject(p, "gbps", cJSON_CreateNumber(1700.25));
    assert_int_equal(tc_put(c, tc_key_sync(&k), &soft1, p), GPUOPT_OK);
    cJSON_Delete(p);
    gpo_cache_hit *hit;
    assert_int_equal(gpo_cache_lookup(c, &k.key, &soft1, &hit), GPUOPT_OK);
    assert_null(hit->best);
    assert_true(hit->complete);
    assert_true(num(hit->payload, "gbps") == 1700.25);
    assert_int_equal(hit->time, tc_now);
    gpo_cache_hit_free(hit);
    gpo_cache_close(c);
}

/* A cache opened for one pass (tier 2's, per plan) hands a clean hit's
 * record over instead of copying it; a changed one is still copied, so
 * its verification finds the record. */
static void a_one_pass_cache_hands_clean_hits_over(void **state)
{
    (void)state;
    gpo_cache_options o = tc_options(0, 0);
    o.hand_over = 1;
    gpo_cache_device dev;
    tc_device(&dev);
    const char *dir = tc_dir("hand_over");
    gpo_cache *c = NULL;
    assert_int_equal(gpo_cache_open(dir, &dev, &o, NULL, &c), GPUOPT_OK);
    tc_key a, b;
    assert_int_equal(tc_tune(c, tc_key_init(&a, "N=1"), &soft1, 3), 0);
    assert_int_equal(tc_tune(c, tc_key_init(&b, "N=2"), &soft1, 3), 0);
    gpo_cache_hit *hit;
    assert_int_equal(gpo_cache_lookup(c, &a.key, &soft1, &hit), GPUOPT_OK);
    assert_true(hit->complete);
    assert_int_equal(hit->changed, 0);
    assert_true(param(hit->best, "TILE") == 1);
    gpo_cache_hit_free(hit);
    assert_int_equal(gpo_cache_lookup(c, &a.key, &soft1, &hit), GPUOPT_ERR_NOT_FOUND);
    gpo_cache_soft soft2 = soft1;
    soft2.driver = "550.54";
    assert_int_equal(gpo_cache_lookup(c, &b.key, &soft2, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, GPO_SOFT_DRIVER);
    gpo_cache_hit_free(hit);
    assert_int_equal(gpo_cache_record_verify(c, &b.key, &soft2, 1, 1000, 2000), GPUOPT_OK);
    gpo_cache_close(c);
    /* The file keeps both records: another open answers for both. */
    o.hand_over = 0;
    assert_int_equal(gpo_cache_open(dir, &dev, &o, NULL, &c), GPUOPT_OK);
    assert_int_equal(gpo_cache_lookup(c, &a.key, &soft1, &hit), GPUOPT_OK);
    gpo_cache_hit_free(hit);
    assert_int_equal(gpo_cache_lookup(c, &b.key, &soft2, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, 0);
    gpo_cache_hit_free(hit);
    gpo_cache_close(c);
}

static void least_recently_used_entries_are_evicted_first(void **state)
{
    (void)state;
    gpo_cache_options o = tc_options(4, 0);
    log_capture cap;
    gpo_logger log = tc_logger(&cap, GPUOPT_LOG_INFO);
    gpo_cache *c = open_in("lru", &o, &log);
    tc_key k[5];
    char w[16];
    for (int i = 0; i < 4; i++) {
        snprintf(w, sizeof w, "N=%d", i);
        tc_now = 1000 + i;
        assert_int_equal(tc_tune(c, tc_key_init(&k[i], w), &soft1, 2), 0);
    }
    tc_now = 2000;
    assert_int_equal(gpo_cache_touch(c, &k[0].key), GPUOPT_OK);
    tc_now = 3000;
    assert_int_equal(tc_tune(c, tc_key_init(&k[4], "N=4"), &soft1, 2), 0);
    /* Five keys passed the bound of four: down to three, the most recent. */
    const int kept[5] = {1, 0, 0, 1, 1};
    for (int i = 0; i < 5; i++) {
        gpo_cache_hit *hit;
        assert_int_equal(gpo_cache_lookup(c, &k[i].key, &soft1, &hit),
                         kept[i] ? GPUOPT_OK : GPUOPT_ERR_NOT_FOUND);
        gpo_cache_hit_free(hit);
    }
    assert_non_null(strstr(cap.text, "2 least recently used entries evicted"));
    tc_key none;
    assert_int_equal(gpo_cache_touch(c, tc_key_init(&none, "N=99")), GPUOPT_ERR_NOT_FOUND);
    gpo_cache_close(c);
}

static void byte_bound_drops_candidates_before_records(void **state)
{
    (void)state;
    /* Three records and their 36 candidates print about 7.3 kB, the records
     * alone about 3 kB, each key's candidates about 1.5 kB: over the bound,
     * three quarters of it (4950 bytes) hold the records and the newest
     * key's candidates only. */
    gpo_cache_options o = tc_options(0, 6600);
    gpo_cache *c = open_in("bytes", &o, NULL);
    tc_key k[3];
    for (int i = 0; i < 3; i++) {
        char w[16];
        snprintf(w, sizeof w, "N=%d", i);
        tc_now = 5000 + i;
        assert_int_equal(tc_tune(c, tc_key_init(&k[i], w), &soft1, 12), 0);
    }
    /* Every record is still there; the file stays within its bound. */
    for (int i = 0; i < 3; i++) {
        gpo_cache_hit *hit;
        assert_int_equal(gpo_cache_lookup(c, &k[i].key, &soft1, &hit), GPUOPT_OK);
        gpo_cache_hit_free(hit);
    }
    size_t len;
    free(tc_read(gpo_cache_file(c), &len));
    assert_true(len <= 6600);
    /* The oldest key's candidates went first. */
    cJSON *cands;
    int finished;
    assert_int_equal(gpo_cache_candidates(c, &k[2].key, &cands, &finished), GPUOPT_OK);
    assert_int_equal(cJSON_GetArraySize(cands), 12);
    cJSON_Delete(cands);
    assert_int_equal(gpo_cache_candidates(c, &k[0].key, &cands, &finished), GPUOPT_OK);
    assert_int_equal(cJSON_GetArraySize(cands), 0);
    cJSON_Delete(cands);
    gpo_cache_close(c);
}

static void most_recent_record_survives_a_bound_smaller_than_itself(void **state)
{
    (void)state;
    gpo_cache_options o = tc_options(0, 300);
    gpo_cache *c = open_in("tiny", &o, NULL);
    tc_key a, b;
    tc_now = 7000;
    assert_int_equal(tc_tune(c, tc_key_init(&a, "N=1"), &soft1, 2), 0);
    tc_now = 7001;
    assert_int_equal(tc_tune(c, tc_key_init(&b, "N=2"), &soft1, 2), 0);
    gpo_cache_hit *hit;
    assert_int_equal(gpo_cache_lookup(c, &b.key, &soft1, &hit), GPUOPT_OK);
    gpo_cache_hit_free(hit);
    assert_int_equal(gpo_cache_lookup(c, &a.key, &soft1, &hit), GPUOPT_ERR_NOT_FOUND);
    gpo_cache_close(c);
}

/* Every write leaves the latest state only (no history), in key order, so
 * the same content always prints the same bytes. */
static void a_write_keeps_the_latest_state_in_a_stable_order(void **state)
{
    (void)state;
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c = open_in("latest", &o, NULL);
    tc_key a, b;
    tc_key_init(&a, "N=1");
    tc_key_init(&b, "N=2");
    assert_int_equal(tc_tune(c, &a.key, &soft1, 4), 0);
    assert_int_equal(tc_tune(c, &a.key, &soft1, 3), 0); /* the later tune wins */
    assert_int_equal(tc_tune(c, &b.key, &soft1, 2), 0);
    tc_now += 10;
    assert_int_equal(gpo_cache_touch(c, &b.key), GPUOPT_OK);
    gpo_cache_soft soft2 = soft1;
    soft2.compiler = "nvrtc 12.4";
    assert_int_equal(gpo_cache_record_verify(c, &a.key, &soft2, 1, 1000, 2000), GPUOPT_OK);
    char dir[1024];
    strcpy(dir, gpo_cache_file(c));
    *strrchr(dir, '/') = '\0';
    int entries, cands, unfinished;
    assert_int_equal(tc_verify(dir, &entries, &cands, &unfinished), 1);
    assert_int_equal(entries, 2);
    assert_int_equal(cands, 3 + 2);
    assert_int_equal(unfinished, 0);
    gpo_cache_hit *hit;
    assert_int_equal(gpo_cache_lookup(c, &a.key, &soft2, &hit), GPUOPT_OK);
    assert_int_equal(hit->changed, 0); /* the verification adopted the new soft fields */
    assert_true(num(hit->record, "evaluated") == 3);
    gpo_cache_hit_free(hit);
    gpo_cache_close(c);
    /* Another open (process) writes the same content again: the same bytes. */
    gpo_cache_device dev;
    tc_device(&dev);
    assert_int_equal(gpo_cache_open(dir, &dev, &o, NULL, &c), GPUOPT_OK);
    size_t n1, n2;
    char *first = tc_read(gpo_cache_file(c), &n1);
    assert_int_equal(gpo_cache_record_verify(c, &a.key, &soft2, 1, 1000, 2000), GPUOPT_OK);
    char *second = tc_read(gpo_cache_file(c), &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(first, second, n1);
    free(first);
    free(second);
    assert_int_equal(gpo_cache_lookup(c, &b.key, &soft1, &hit), GPUOPT_OK);
    assert_int_equal(hit->time + 10, tc_now);
    gpo_cache_hit_free(hit);
    gpo_cache_close(c);
}

/* A hit notes its use at most once per touch interval, and the use is
 * written with the next write or when the cache closes: hits never write
 * the file themselves. */
static void hits_record_their_use_once_per_interval(void **state)
{
    (void)state;
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c = open_in("touch", &o, NULL);
    tc_key k;
    gpo_cache_key *key = tc_key_init(&k, "N=3");
    assert_int_equal(tc_tune(c, key, &soft1, 1), 0);
    int64_t measured = tc_now;
    char path[1024], dir[1024];
    strcpy(path, gpo_cache_file(c));
    strcpy(dir, path);
    *strrchr(dir, '/') = '\0';
    gpo_cache_close(c);
    gpo_cache_device dev;
    tc_device(&dev);
    char *before = tc_read(path, NULL);
    /* Round 0: used just now, nothing to note. Round 1: an interval later,
     * one use, written when the cache closes. Round 2: within the interval
     * of that use, nothing again. */
    for (int round = 0; round < 3; round++) {
        tc_now = measured + (round ? 4000 : 0) + (round == 2 ? 10 : 0);
        assert_int_equal(gpo_cache_open(dir, &dev, &o, NULL, &c), GPUOPT_OK);
        for (int i = 0; i < 3; i++) {
            gpo_cache_hit *hit;
            assert_int_equal(gpo_cache_lookup(c, key, &soft1, &hit), GPUOPT_OK);
            gpo_cache_hit_free(hit);
        }
        char *now = tc_read(path, NULL);
        assert_string_equal(now, before); /* hits write nothing themselves */
        free(now);
        gpo_cache_close(c);
        now = tc_read(path, NULL);
        if (round == 1)
            assert_string_not_equal(now, before);
        else
            assert_string_equal(now, before);
        free(before);
        before = now;
    }
    free(before);
    cJSON *list;
    assert_int_equal(gpo_cache_dir_list(dir, &list), GPUOPT_OK);
    cJSON *file = cJSON_GetArrayItem(cJSON_GetObjectItem(list, "files"), 0);
    cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(file, "entries"), 0);
    assert_true(num(e, "used") == measured + 4000);
    assert_true(num(e, "time") == measured);
    cJSON_Delete(list);
}

static void unwritable_directory_warns_once_and_misses(void **state)
{
    (void)state;
    /* A directory under a regular file cannot be created, even by root. */
    const char *d = tc_dir("unwritable");
    char file[600], dir[700];
    snprintf(file, sizeof file, "%s/plain-file", d);
    tc_append_raw(file, "x");
    snprintf(dir, sizeof dir, "%s/cache", file);
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache_options o = tc_options(0, 0);
    log_capture cap;
    gpo_logger log = tc_logger(&cap, GPUOPT_LOG_WARN);
    gpo_cache *c;
    assert_int_equal(gpo_cache_open(dir, &dev, &o, &log, &c), GPUOPT_OK);
    tc_key k;
    gpo_cache_key *key = tc_key_init(&k, "N=5");
    gpo_cache_hit *hit;
    assert_int_equal(gpo_cache_lookup(c, key, &soft1, &hit), GPUOPT_ERR_NOT_FOUND);
    /* A path that cannot be a directory is said once for reading... */
    assert_int_equal(cap.count, 1);
    assert_non_null(strstr(cap.text, "Not a directory"));
    assert_non_null(strstr(cap.text, "lookups miss"));
    assert_int_equal(gpo_cache_lookup(c, key, &soft1, &hit), GPUOPT_ERR_NOT_FOUND);
    /* ... and once for writing, however many writes are skipped. */
    assert_int_equal(tc_tune(c, key, &soft1, 3), 0);
    assert_int_equal(tc_tune(c, key, &soft1, 3), 0);
    assert_int_equal(cap.count, 2);
    assert_non_null(strstr(cap.text, "not stored"));
    assert_non_null(strstr(cap.text, dir));
    const char *why;
    assert_int_equal(gpo_cache_get_state(c, &why), GPO_CACHE_OFF);
    assert_non_null(strstr(why, "plain-file: Not a directory"));
    assert_int_equal(gpo_cache_lookup(c, key, &soft1, &hit), GPUOPT_ERR_NOT_FOUND);
    gpo_cache_close(c);
}

static void missing_directory_is_created_on_first_write(void **state)
{
    (void)state;
    char dir[700];
    snprintf(dir, sizeof dir, "%s/a/b/c", tc_dir("mkdir"));
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache_options o = tc_options(0, 0);
    gpo_cache *c;
    log_capture cap;
    gpo_logger log = tc_logger(&cap, GPUOPT_LOG_WARN);
    assert_int_equal(gpo_cache_open(dir, &dev, &o, &log, &c), GPUOPT_OK);
    tc_key k;
    gpo_cache_hit *hit;
    /* A directory that does not exist yet is a silent miss (a first run). */
    assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, "N=6"), &soft1, &hit),
                     GPUOPT_ERR_NOT_FOUND);
    assert_int_equal(cap.count, 0);
    assert_int_equal(tc_tune(c, &k.key, &soft1, 2), 0);
    assert_int_equal(gpo_cache_lookup(c, &k.key, &soft1, &hit), GPUOPT_OK);
    assert_int_equal(cap.count, 0);
    gpo_cache_hit_free(hit);
    assert_int_equal(gpo_cache_get_state(c, NULL), GPO_CACHE_READ_WRITE);
    gpo_cache_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_hard_key_field_is_part_of_the_key),
        cmocka_unit_test(key_fields_cannot_run_into_each_other),
        cmocka_unit_test(soft_change_returns_winner_runner_up_and_what_changed),
        cmocka_unit_test(parameters_are_kept_by_name_not_position),
        cmocka_unit_test(unfinished_tune_leaves_candidates_to_resume),
        cmocka_unit_test(measurement_payloads_are_stored_under_their_key),
        cmocka_unit_test(a_one_pass_cache_hands_clean_hits_over),
        cmocka_unit_test(least_recently_used_entries_are_evicted_first),
        cmocka_unit_test(byte_bound_drops_candidates_before_records),
        cmocka_unit_test(most_recent_record_survives_a_bound_smaller_than_itself),
        cmocka_unit_test(a_write_keeps_the_latest_state_in_a_stable_order),
        cmocka_unit_test(hits_record_their_use_once_per_interval),
        cmocka_unit_test(unwritable_directory_warns_once_and_misses),
        cmocka_unit_test(missing_directory_is_created_on_first_write),
    };
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
