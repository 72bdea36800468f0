/* What the cache does not trust (issue 12): a cache directory another user
 * owns or may write, or reached through a link (its records never reach a
 * plan; clearing it deletes nothing of a victim's); a FIFO or an oversized
 * file at the file's path (never blocks, never read whole); values out of
 * their range and entries of any shape (dropped, without a leak under the
 * sanitizers); and failed allocations (an error, never half a record). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_cache_util.h"
#include "util/strutil.h"

static gpo_cache *open_log(const char *dir, log_capture *cap, gpo_logger *log)
{
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache_options o = tc_options(0, 0);
    *log = tc_logger(cap, GPUOPT_LOG_WARN);
    gpo_cache *c = NULL;
    assert_int_equal(gpo_cache_open(dir, &dev, &o, log, &c), GPUOPT_OK);
    return c;
}

static gpuopt_status look(gpo_cache *c, const tc_key *k)
{
    gpo_cache_hit *hit = NULL;
    gpuopt_status st = gpo_cache_lookup(c, &k->key, NULL, &hit);
    gpo_cache_hit_free(hit);
    return st;
}

/* A directory holding one record of "N=1", as its owner made it. */
static void planted(const char *dir, tc_key *k)
{
    log_capture cap;
    gpo_logger log;
    gpo_cache *c = open_log(dir, &cap, &log);
    assert_int_equal(tc_tune(c, tc_key_init(k, "N=1"), NULL, 2), 0);
    gpo_cache_close(c);
}

/* Lookups miss, writes are skipped, list/verify/clear refuse with `words`,
 * and the planted file is untouched. */
static void refused(const char *dir, const tc_key *k, const char *words)
{
    char path[1200];
    log_capture cap;
    gpo_logger log;
    gpo_cache *c = open_log(dir, &cap, &log);
    snprintf(path, sizeof path, "%s", gpo_cache_file(c));
    char *before = tc_read(path, NULL);
    assert_int_equal(look(c, k), GPUOPT_ERR_NOT_FOUND);
    if (!strstr(cap.text, words))
        fail_msg("the warning \"%s\" lacks \"%s\"", cap.text, words);
    assert_non_null(strstr(cap.text, "the tuning cache is not used"));
    assert_int_equal(tc_tune(c, &k->key, NULL, 1), 0);
    assert_non_null(strstr(cap.text, "not stored"));
    const char *why;
    assert_int_equal(gpo_cache_get_state(c, &why), GPO_CACHE_OFF);
    gpo_cache_close(c);
    cJSON *out = (cJSON *)1;
    assert_int_equal(gpo_cache_dir_list(dir, &out), GPUOPT_ERR_IO);
    assert_null(out);
    assert_non_null(strstr(gpo_detail_get(), words));
    assert_int_equal(gpo_cache_dir_verify(dir, &out), GPUOPT_ERR_IO);
    assert_int_equal(gpo_cache_dir_clear(dir, NULL, NULL, NULL), GPUOPT_ERR_IO);
    char *after = tc_read(path, NULL);
    assert_non_null(after);
    assert_string_equal(after, before);
    free(before);
    free(after);
}

static void a_cache_directory_another_user_owns_is_not_used(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* giving a directory away needs root */
    const char *dir = tc_dir("foreign");
    tc_key k;
    planted(dir, &k);
    assert_int_equal(chown(dir, 65534, 65534), 0);
    refused(dir, &k, "is owned by uid 65534, not by this user (uid 0)");
}

static void a_cache_directory_others_may_write_is_not_used(void **state)
{
    (void)state;
    const char *dir = tc_dir("writable");
    tc_key k;
    planted(dir, &k);
    assert_int_equal(chmod(dir, 0777), 0);
    refused(dir, &k, "may be written by its group or others (mode 0777)");
    assert_int_equal(chmod(dir, 0770), 0);
    refused(dir, &k, "(mode 0770)");
    assert_int_equal(chmod(dir, 0755), 0);
    log_capture cap;
    gpo_logger log;
    gpo_cache *c = open_log(dir, &cap, &log);
    assert_int_equal(look(c, &k), GPUOPT_OK);
    gpo_cache_close(c);
}

/* /tmp/gpuopt-cache-<uid> replaced by a link to a victim's directory: the
 * victim's cache is neither trusted nor changed, and clearing through the
 * link deletes nothing. */
static void a_link_as_the_cache_directory_is_not_followed(void **state)
{
    (void)state;
    const char *victim = tc_dir("victim");
    tc_key k;
    planted(victim, &k);
    char link[1024];
    snprintf(link, sizeof link, "%s-link", victim);
    unlink(link);
    assert_int_equal(symlink(victim, link), 0);
    refused(link, &k, "is a symbolic link");
    assert_int_equal(tc_count_files(victim, ".jsonl"), 2); /* its file and lock, still there */
    unlink(link);
}

static void directories_above_that_others_may_write_need_the_sticky_bit(void **state)
{
    (void)state;
    const char *top = tc_dir("shared");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/cache", top);
    assert_int_equal(mkdir(dir, 0700), 0);
    tc_key k;
    planted(dir, &k);
    assert_int_equal(chmod(top, 0777), 0); /* anyone could rename "cache" */
    refused(dir, &k, "above the cache directory, may be written by its group or others");
    assert_int_equal(chmod(top, 01777), 0); /* as /tmp: others cannot rename ours */
    log_capture cap;
    gpo_logger log;
    gpo_cache *c = open_log(dir, &cap, &log);
    assert_int_equal(look(c, &k), GPUOPT_OK);
    gpo_cache_close(c);
    assert_int_equal(chmod(top, 0700), 0);
}

/* A home directory on a link of one's own is an everyday case. */
static void a_link_of_this_user_above_the_cache_directory_is_followed(void **state)
{
    (void)state;
    const char *real = tc_dir("real-home");
    char link[1024], dir[1100];
    snprintf(link, sizeof link, "%s-link", real);
    unlink(link);
    assert_int_equal(symlink(real, link), 0);
    snprintf(dir, sizeof dir, "%s/cache", link);
    tc_key k;
    planted(dir, &k);
    log_capture cap;
    gpo_logger log;
    gpo_cache *c = open_log(dir, &cap, &log);
    assert_int_equal(look(c, &k), GPUOPT_OK);
    assert_int_equal(cap.count, 0);
    gpo_cache_close(c);
    unlink(link);
}

static void directories_the_cache_creates_are_private(void **state)
{
    (void)state;
    char dir[1024], part[1024];
    snprintf(dir, sizeof dir, "%s/a/b/c", tc_dir("private"));
    tc_key k;
    planted(dir, &k);
    gpo_strlcpy(part, dir, sizeof part);
    for (int i = 0; i < 3; i++) {
        struct stat st;
        assert_int_equal(lstat(part, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(st.st_mode & 077, 0);
        assert_int_equal(st.st_uid, geteuid());
        *strrchr(part, '/') = '\0';
    }
    struct stat st;
    char file[1200];
    snprintf(file, sizeof file, "%s/%s", dir,
             "cuda_sm-90_132cu_5d2f0c3a-1b7e-4c1d-9a42-0f6d3e2b1a77.jsonl");
    assert_int_equal(lstat(file, &st), 0);
    assert_int_equal(st.st_mode & 077, 0);
}

/* A FIFO at the file's path (or at its lock's) would block an open for
 * reading forever; it is refused before anything waits on it. */
static void a_fifo_at_the_file_path_never_blocks(void **state)
{
    (void)state;
    alarm(60); /* a hang fails the test instead of holding ctest */
    const char *dir = tc_dir("fifo");
    log_capture cap;
    gpo_logger log;
    gpo_cache *c = open_log(dir, &cap, &log);
    assert_int_equal(mkfifo(gpo_cache_file(c), 0600), 0);
    tc_key k;
    tc_key_init(&k, "N=1");
    assert_int_equal(look(c, &k), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(cap.text, "it is a FIFO, not a regular file"));
    cJSON *r;
    assert_int_equal(gpo_cache_dir_list(dir, &r), GPUOPT_OK);
    cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "files"), 0);
    assert_string_equal(cJSON_GetObjectItem(f, "status")->valuestring, "unreadable");
    cJSON_Delete(r);
    assert_int_equal(gpo_cache_dir_verify(dir, &r), GPUOPT_OK);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    f = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "files"), 0);
    assert_string_equal(cJSON_GetObjectItem(f, "detail")->valuestring,
                        "it is a FIFO, not a regular file");
    cJSON_Delete(r);
    /* The next write moves the FIFO aside and starts a file. */
    assert_int_equal(tc_tune(c, &k.key, NULL, 1), 0);
    assert_int_equal(look(c, &k), GPUOPT_OK);
    assert_int_equal(tc_count_files(dir, ".corrupt-"), 1);
    gpo_cache_close(c);

    /* A FIFO as the lock file: writes are refused, saying why. */
    char lock[1200];
    const char *dir2 = tc_dir("fifo-lock");
    c = open_log(dir2, &cap, &log);
    snprintf(lock, sizeof lock, "%s.lock", gpo_cache_file(c));
    assert_int_equal(mkfifo(lock, 0600), 0);
    assert_int_equal(tc_tune(c, &k.key, NULL, 1), 0);
    assert_non_null(strstr(cap.text, "not a regular file"));
    assert_int_equal(gpo_cache_get_state(c, NULL), GPO_CACHE_READ_ONLY);
    assert_int_equal(look(c, &k), GPUOPT_ERR_NOT_FOUND);
    gpo_cache_close(c);
    alarm(0);
}

static void a_file_over_the_read_limit_is_not_read(void **state)
{
    (void)state;
    const char *dir = tc_dir("huge");
    log_capture cap;
    gpo_logger log;
    gpo_cache *c = open_log(dir, &cap, &log);
    int fd = open(gpo_cache_file(c), O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)GPO_CACHE_READ_MAX + 1), 0); /* sparse */
    close(fd);
    tc_key k;
    tc_key_init(&k, "N=1");
    assert_int_equal(look(c, &k), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(cap.text, "over the read limit of 64 MiB"));
    cJSON *r;
    assert_int_equal(gpo_cache_dir_verify(dir, &r), GPUOPT_OK);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);
    gpo_cache_close(c);
}

/* Numbers out of their range: never converted, the entry not used (issue
 * 12: a time of 1e300 was cast to int64_t). */
static void values_out_of_their_range_are_not_trusted(void **state)
{
    (void)state;
    static const char *const edits[][2] = {
        {"\"time\":1700000000,", "\"time\":1e300,"},
        {"\"time\":1700000000,", "\"time\":-1,"},
        {"\"time\":1700000000,", "\"time\":1.5,"},
        {"\"used\":1700000000,", "\"used\":1e300,"},
        {"\"runs\":10,", "\"runs\":1e300,"},
        {"\"runs\":10,", "\"runs\":-1,"},
        {"\"median_ns\":1000,", "\"median_ns\":-7,"},
        {"\"evaluated\":2,", "\"evaluated\":-1,"},
        {"\"compute_units\":132,\"source\"", "\"compute_units\":1e300,\"source\""},
        {"\"status\":\"ok\"", "\"status\":\"splendid\""},
        {"\"params\":{\"TILE\":1,", "\"params\":{\"TILE\":{},"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        const char *dir = tc_dir("range");
        tc_key k;
        planted(dir, &k);
        log_capture cap;
        gpo_logger log;
        gpo_cache *c = open_log(dir, &cap, &log);
        tc_edit(gpo_cache_file(c), edits[i][0], edits[i][1]);
        if (look(c, &k) != GPUOPT_ERR_NOT_FOUND)
            fail_msg("%s: the record was used", edits[i][1]);
        assert_non_null(strstr(cap.text, "failed its checks"));
        int entries = -1;
        assert_int_equal(tc_verify(dir, &entries, NULL, NULL), 0);
        assert_int_equal(entries, 0);
        gpo_cache_close(c);
    }
}

/* Lines of every shape a file may hold: each is dropped when met, nothing
 * leaks (issue 12: a crafted line leaked its detached item), the rest
 * serves, and a write by the process that met one sets the file aside. */
static void lines_of_any_shape_are_dropped_without_a_leak(void **state)
{
    (void)state;
    static const char *const crafted[] = {
        "1",
        "[]",
        "{}",
        "not JSON at all",
        "{\"t\":\"record\",\"key\":\"0123456789ABCDEF\",\"used\":5,\"x\":1}",
        "{\"t\":\"record\",\"key\":\"0123456789abcdef\",\"used\":5,}",
        "{\"t\":\"record\",\"key\":\"0123456789abcdef\",\"used\":55555555555555555,\"x\":1}",
        "{\"t\":\"record\",\"key\":\"0123456789abcdef\",\"used\":5,\"hard\":{}}",
        "{\"t\":\"unfinished\",\"key\":\"0123456789abcdef\",\"used\":5,\"hard\":{\"kind\":\"x\","
        "\"backend\":\"y\",\"arch\":\"z\",\"compute_units\":1,\"source\":\"\",\"options\":\"\","
        "\"space\":\"\",\"workload\":\"\"}}",
        "{\"t\":\"record\",\"key\":\"0123456789abcdef\",\"used\":5,\"soft\":7,\"best\":\"fast\","
        "\"payload\":[1],\"candidates\":{},\"verified\":{}}",
    };
    /* Fields a record cannot do without, renamed away one at a time. */
    static const char *const fields[] = {
        "\"soft\":",     "\"hard\":",      "\"tune\":",    "\"best\":", "\"runner_up\":",
        "\"complete\":", "\"evaluated\":", "\"payload\":", "\"time\":"};
    size_t n_crafted = sizeof crafted / sizeof crafted[0],
           n_fields = sizeof fields / sizeof *fields;
    const char *dir = tc_dir("shapes");
    tc_key k;
    planted(dir, &k);
    log_capture cap;
    gpo_logger log;
    gpo_cache *c = open_log(dir, &cap, &log);
    char path[1200];
    snprintf(path, sizeof path, "%s", gpo_cache_file(c));
    gpo_cache_close(c);
    char *good = tc_read(path, NULL);
    for (size_t i = 0; i <= n_crafted + n_fields; i++) {
        tc_write(path, good);
        char *out = malloc(strlen(good) * 2 + 1000);
        char *second = strchr(good, '\n') + 1; /* the record's line */
        if (i < n_crafted) {
            sprintf(out, "%.*s%s\n%s", (int)(second - good), good, crafted[i], second);
        } else if (i < n_crafted + n_fields) {
            const char *f = fields[i - n_crafted], *at = strstr(second, f);
            sprintf(out, "%.*s\"x%s", (int)(at - good), good, at + 1);
        } else { /* the record's line twice */
            sprintf(out, "%s%s", good, second);
        }
        tc_write(path, out);
        free(out);
        c = open_log(dir, &cap, &log);
        look(c, &k);
        cJSON *r;
        assert_int_equal(gpo_cache_dir_list(dir, &r), GPUOPT_OK);
        cJSON_Delete(r);
        if (tc_verify(dir, NULL, NULL, NULL) != 0)
            fail_msg("shape %zu passed the check", i);
        /* What still reads serves; a write sets the file aside, keeps it. */
        tc_key k3;
        assert_int_equal(tc_tune(c, tc_key_init(&k3, "N=3"), NULL, 1), 0);
        assert_int_equal(look(c, &k3), GPUOPT_OK);
        gpo_cache_close(c);
        if (i < n_crafted || i == n_crafted + n_fields) {
            c = open_log(dir, &cap, &log);
            assert_int_equal(look(c, &k), GPUOPT_OK);
            gpo_cache_close(c);
            if (tc_verify(dir, NULL, NULL, NULL) != 1) {
                cJSON *v = NULL;
                gpo_cache_dir_verify(dir, &v);
                char *x = cJSON_PrintUnformatted(v);
                fail_msg("shape %zu: after a write: %s", i, x);
            }
        }
    }
    free(good);
}

/* ---- failed allocations (issue 12: a candidate saved without its
 * parameters or status, then the file called corrupt) ----------------------- */

static long fail_at = -1, allocations;

static void *failing_malloc(size_t n)
{
    if (++allocations == fail_at)
        return NULL;
    return malloc(n);
}

/* A fresh directory on tmpfs when there is one: the sweep writes a few
 * thousand files, and what it checks does not depend on the disk. */
static const char *sweep_dir(char *buf, size_t cap)
{
    struct stat st;
    if (stat("/dev/shm", &st) != 0 || !S_ISDIR(st.st_mode))
        return tc_dir("alloc");
    snprintf(buf, cap, "/dev/shm/gpuopt-cache-test-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", buf);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(mkdir(buf, 0700), 0);
    return buf;
}

static void every_failed_allocation_is_an_error_never_half_a_record(void **state)
{
    (void)state;
    cJSON_Hooks failing = {failing_malloc, free};
    long needed = 0;
    char buf[512] = "";
    for (fail_at = 1; needed == 0 || fail_at <= needed; fail_at++) {
        const char *dir = sweep_dir(buf, sizeof buf);
        log_capture cap;
        gpo_logger log;
        gpo_cache *c = open_log(dir, &cap, &log);
        tc_key k, before;
        /* A record stored earlier, by another process: it must survive. */
        gpo_cache *other = open_log(dir, &cap, &log);
        assert_int_equal(tc_tune(other, tc_key_init(&before, "N=0"), NULL, 1), 0);
        gpo_cache_close(other);
        tc_key_init(&k, "N=1");
        gpo_cache_search s = {"exhaustive", 1, 0, 0, 0};
        cJSON *p = tc_params(1, 2), *q = tc_params(2, 2);
        gpo_cache_stats st1 = tc_stats(100), st2 = tc_stats(200);
        gpo_cache_tune *t = NULL;
        gpuopt_status rc[6];
        allocations = 0;
        cJSON_InitHooks(&failing);
        rc[0] = gpo_cache_begin(c, &k.key, NULL, &s, &t);
        rc[1] = t ? gpo_cache_add_candidate(t, p, &st1) : GPUOPT_ERR_NO_MEMORY;
        rc[2] = t ? gpo_cache_add_candidate(t, q, &st2) : GPUOPT_ERR_NO_MEMORY;
        rc[3] = t ? gpo_cache_finish(t, p, &st1, q, &st2, 1, 1.0, NULL) : GPUOPT_ERR_NO_MEMORY;
        gpo_cache_hit *hit = NULL;
        rc[4] = gpo_cache_lookup(c, &k.key, NULL, &hit);
        gpo_cache_hit_free(hit);
        rc[5] = gpo_cache_record_verify(c, &k.key, NULL, 1, 100, 200);
        cJSON_InitHooks(NULL);
        if (allocations < fail_at)
            needed = fail_at - 1; /* a run that met no failure: the last one */
        for (int i = 0; i < 6; i++)
            if (rc[i] != GPUOPT_OK && rc[i] != GPUOPT_ERR_NO_MEMORY &&
                rc[i] != GPUOPT_ERR_NOT_FOUND)
                fail_msg("allocation %ld: call %d returned %d", fail_at, i, (int)rc[i]);
        /* Whatever was written is whole: the file checks clean, and a
         * record, when there is one, has its parameters and status. */
        int entries = 0, cands = 0;
        if (tc_verify(dir, &entries, &cands, NULL) != 1) {
            cJSON *r = NULL;
            gpo_cache_dir_verify(dir, &r);
            char *x = cJSON_PrintUnformatted(r);
            fail_msg("allocation %ld: the file does not check: %s (%d %d %d %d %d %d)", fail_at, x,
                     rc[0], rc[1], rc[2], rc[3], rc[4], rc[5]);
        }
        gpo_cache_close(c);
        c = open_log(dir, &cap, &log);
        assert_int_equal(look(c, &before), GPUOPT_OK);
        assert_int_equal(tc_count_files(dir, ".corrupt-"), 0);
        if (gpo_cache_lookup(c, &k.key, NULL, &hit) == GPUOPT_OK) {
            char why[200];
            assert_int_equal(gpo_cache_candidate_valid(hit->best, NULL, why, sizeof why), 0);
            assert_int_equal(gpo_cache_candidate_valid(hit->runner_up, NULL, why, sizeof why), 0);
            gpo_cache_hit_free(hit);
        }
        gpo_cache_close(c);
        cJSON_Delete(p);
        cJSON_Delete(q);
        if (fail_at > 100000)
            fail_msg("the sweep does not end");
    }
    assert_true(needed > 10);
    if (strncmp(buf, "/dev/shm/", 9) == 0) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", buf);
        assert_int_equal(system(cmd), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_cache_directory_another_user_owns_is_not_used),
        cmocka_unit_test(a_cache_directory_others_may_write_is_not_used),
        cmocka_unit_test(a_link_as_the_cache_directory_is_not_followed),
        cmocka_unit_test(directories_above_that_others_may_write_need_the_sticky_bit),
        cmocka_unit_test(a_link_of_this_user_above_the_cache_directory_is_followed),
        cmocka_unit_test(directories_the_cache_creates_are_private),
        cmocka_unit_test(a_fifo_at_the_file_path_never_blocks),
        cmocka_unit_test(a_file_over_the_read_limit_is_not_read),
        cmocka_unit_test(values_out_of_their_range_are_not_trusted),
        cmocka_unit_test(lines_of_any_shape_are_dropped_without_a_leak),
        cmocka_unit_test(every_failed_allocation_is_an_error_never_half_a_record),
    };
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
