/* Crashes and concurrency, with real processes: a writer killed between
 * writes loses nothing it finished; a compaction killed at any point
 * leaves a valid file with every record; several processes (and threads)
 * appending at once lose nothing and tear no line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_cache_util.h"

static gpo_cache *open_at(const char *dir, uint32_t max_entries)
{
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache_options o = tc_options(max_entries, 64ull << 20);
    gpo_cache *c = NULL;
    if (gpo_cache_open(dir, &dev, &o, NULL, &c))
        return NULL;
    return c;
}

/* The directory check: every journal readable, nothing corrupt. */
static void assert_dir_sound(const char *dir, int allow_torn)
{
    cJSON *r;
    assert_int_equal(gpo_cache_dir_verify(dir, &r), GPUOPT_OK);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON *files = cJSON_GetObjectItem(r, "files");
    assert_int_equal(cJSON_GetArraySize(files), 1);
    cJSON *f = cJSON_GetArrayItem(files, 0);
    assert_string_equal(cJSON_GetObjectItem(f, "status")->valuestring, "ok");
    if (!allow_torn)
        assert_int_equal(cJSON_GetObjectItem(f, "torn_bytes")->valueint, 0);
    cJSON_Delete(r);
}

/* Child: a tune that appends candidates until it is killed, telling the
 * parent the index of each one whose append returned. */
static void endless_tune(const char *dir, int ack_fd)
{
    gpo_cache *c = open_at(dir, 0);
    tc_key k;
    gpo_cache_search s = {"exhaustive", 1, 0, 0, 0};
    gpo_cache_tune *t;
    if (!c || gpo_cache_begin(c, tc_key_init(&k, "N=killed"), NULL, &s, &t))
        _exit(3);
    for (int i = 0; i < 1000000; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "I", i);
        gpo_cache_stats st = tc_stats(100 + i);
        if (gpo_cache_add_candidate(t, p, &st))
            _exit(4);
        cJSON_Delete(p);
        if (write(ack_fd, &i, sizeof i) != sizeof i)
            _exit(5);
    }
    _exit(6);
}

static void writer_killed_between_writes_loses_nothing_finished(void **state)
{
    (void)state;
    const int after[3] = {5, 60, 250};
    for (int round = 0; round < 3; round++) {
        const char *dir = tc_dir("killed");
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            endless_tune(dir, fds[1]);
        }
        close(fds[1]);
        int i = -1, last = -1;
        while (last < after[round] && read(fds[0], &i, sizeof i) == sizeof i)
            last = i;
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        while (read(fds[0], &i, sizeof i) == sizeof i)
            last = i; /* acknowledged before the kill landed */
        close(fds[0]);

        assert_dir_sound(dir, 1);
        gpo_cache *c = open_at(dir, 0);
        tc_key k;
        cJSON *cands;
        int finished;
        assert_int_equal(gpo_cache_candidates(c, tc_key_init(&k, "N=killed"), &cands, &finished),
                         GPUOPT_OK);
        assert_int_equal(finished, 0);
        int n = cJSON_GetArraySize(cands);
        /* Every acknowledged candidate is there, once, in order; at most
         * one more (written, killed before its acknowledgement). */
        assert_true(n == last + 1 || n == last + 2);
        for (int j = 0; j < n; j++) {
            cJSON *p = cJSON_GetObjectItem(cJSON_GetArrayItem(cands, j), "params");
            assert_int_equal(cJSON_GetObjectItem(p, "I")->valueint, j);
        }
        cJSON_Delete(cands);
        /* The next writer finds a clean end. */
        assert_int_equal(tc_tune(c, &k.key, NULL, 1), 0);
        assert_dir_sound(dir, 0);
        gpo_cache_close(c);
    }
}

static const char *kill_at;

static void kill_here(const char *point)
{
    if (kill_at && strcmp(point, kill_at) == 0)
        raise(SIGKILL);
}

static void compaction_killed_at_any_point_leaves_a_valid_file(void **state)
{
    (void)state;
    const char *points[] = {"compact:temp-written", "compact:before-rename", "compact:renamed"};
    for (size_t p = 0; p < sizeof points / sizeof points[0]; p++) {
        const char *dir = tc_dir("compact-kill");
        gpo_cache *c = open_at(dir, 0);
        tc_key k[4];
        char w[16];
        for (int i = 0; i < 4; i++) {
            snprintf(w, sizeof w, "N=%d", i);
            assert_int_equal(tc_tune(c, tc_key_init(&k[i], w), NULL, 3), 0);
            assert_int_equal(tc_tune(c, &k[i].key, NULL, 2), 0); /* history to drop */
        }
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            kill_at = points[p];
            gpo_cache_fault_hook = kill_here;
            gpo_cache *cc = open_at(dir, 0);
            gpo_cache_compact(cc);
            _exit(0); /* not reached */
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        assert_dir_sound(dir, 0);
        for (int i = 0; i < 4; i++) {
            gpo_cache_hit *hit;
            assert_int_equal(gpo_cache_lookup(c, &k[i].key, NULL, &hit), GPUOPT_OK);
            assert_int_equal((int)cJSON_GetObjectItem(hit->record, "evaluated")->valueint, 2);
            gpo_cache_hit_free(hit);
        }
        /* Killed before the rename: the old file and a stale temp file;
         * the next compaction removes the temp file. */
        assert_int_equal(tc_count_files(dir, ".tmp-"), p < 2 ? 1 : 0);
        assert_int_equal(gpo_cache_compact(c), GPUOPT_OK);
        assert_int_equal(tc_count_files(dir, ".tmp-"), 0);
        assert_int_equal(tc_lines(gpo_cache_file(c)), 1 + 4 * 3);
        gpo_cache_close(c);
    }
}

#define WRITERS 4
#define PER_WRITER 120

static cJSON *payload(int i)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "i", i);
    cJSON_AddStringToObject(p, "pad", "a little text so lines differ in length, 0123456789");
    return p;
}

static void concurrent_writer(const char *dir, int who)
{
    gpo_cache *c = open_at(dir, 100000);
    if (!c)
        _exit(3);
    for (int i = 0; i < PER_WRITER; i++) {
        tc_key k;
        char w[32];
        snprintf(w, sizeof w, "w=%d-%d", who, i);
        cJSON *p = payload(i);
        int rc = tc_put(c, tc_key_init(&k, w), NULL, p);
        cJSON_Delete(p);
        if (rc)
            _exit(4);
        if (i % 20 == 0 && tc_tune(c, &k.key, NULL, 2))
            _exit(5);
        /* One writer compacts now and then, under everyone's feet. */
        if (who == 0 && i % 30 == 29 && gpo_cache_compact(c))
            _exit(6);
    }
    gpo_cache_close(c);
    _exit(0);
}

static void concurrent_processes_lose_nothing_and_tear_no_line(void **state)
{
    (void)state;
    const char *dir = tc_dir("concurrent");
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0)
            concurrent_writer(dir, w);
    }
    for (int w = 0; w < WRITERS; w++) {
        int status;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_dir_sound(dir, 0);
    gpo_cache *c = open_at(dir, 100000);
    for (int w = 0; w < WRITERS; w++)
        for (int i = 0; i < PER_WRITER; i++) {
            tc_key k;
            char s[32];
            snprintf(s, sizeof s, "w=%d-%d", w, i);
            gpo_cache_hit *hit;
            assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, s), NULL, &hit), GPUOPT_OK);
            /* A tune after the put replaces it (the later record wins). */
            if (i % 20 == 0)
                assert_non_null(hit->best);
            else
                assert_int_equal(cJSON_GetObjectItem(hit->payload, "i")->valueint, i);
            gpo_cache_hit_free(hit);
        }
    gpo_cache_close(c);
}

typedef struct thread_arg {
    gpo_cache *c;
    int who;
} thread_arg;

static void *thread_writer(void *p)
{
    thread_arg *a = p;
    for (int i = 0; i < 50; i++) {
        tc_key k;
        char w[32];
        snprintf(w, sizeof w, "t=%d-%d", a->who, i);
        cJSON *pl = payload(i);
        tc_put(a->c, tc_key_init(&k, w), NULL, pl);
        cJSON_Delete(pl);
        gpo_cache_hit *hit = NULL;
        gpo_cache_lookup(a->c, &k.key, NULL, &hit);
        gpo_cache_hit_free(hit);
    }
    return NULL;
}

static void threads_sharing_one_cache_lose_nothing(void **state)
{
    (void)state;
    const char *dir = tc_dir("threads");
    gpo_cache *c = open_at(dir, 100000);
    pthread_t th[3];
    thread_arg args[3];
    for (int i = 0; i < 3; i++) {
        args[i].c = c;
        args[i].who = i;
        assert_int_equal(pthread_create(&th[i], NULL, thread_writer, &args[i]), 0);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    for (int w = 0; w < 3; w++)
        for (int i = 0; i < 50; i++) {
            tc_key k;
            char s[32];
            snprintf(s, sizeof s, "t=%d-%d", w, i);
            gpo_cache_hit *hit;
            assert_int_equal(gpo_cache_lookup(c, tc_key_init(&k, s), NULL, &hit), GPUOPT_OK);
            gpo_cache_hit_free(hit);
        }
    assert_dir_sound(dir, 0);
    gpo_cache_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writer_killed_between_writes_loses_nothing_finished),
        cmocka_unit_test(compaction_killed_at_any_point_leaves_a_valid_file),
        cmocka_unit_test(concurrent_processes_lose_nothing_and_tear_no_line),
        cmocka_unit_test(threads_sharing_one_cache_lose_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
