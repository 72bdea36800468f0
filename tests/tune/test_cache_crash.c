/* Crashes and concurrency, with real processes: a writer killed between
 * writes loses nothing it saved; a write killed at any point leaves the
 * old file or the new one; six writers at once, one of them killed, lose
 * no result and leave nothing corrupt; a writer waits its turn, and past
 * the bound says it gave up; threads sharing one cache lose nothing. */
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

static gpo_cache *open_with(const char *dir, gpo_cache_options *o, gpo_logger *log)
{
    gpo_cache_device dev;
    tc_device(&dev);
    gpo_cache *c = NULL;
    if (gpo_cache_open(dir, &dev, o, log, &c))
        return NULL;
    return c;
}

static gpo_cache *open_at(const char *dir, uint32_t max_entries)
{
    gpo_cache_options o = tc_options(max_entries, 64ull << 20);
    return open_with(dir, &o, NULL);
}

/* The directory check: every file readable, nothing corrupt, nothing set
 * aside. */
static void assert_dir_sound(const char *dir)
{
    cJSON *r;
    assert_int_equal(gpo_cache_dir_verify(dir, &r), GPUOPT_OK);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON *files = cJSON_GetObjectItem(r, "files");
    assert_int_equal(cJSON_GetArraySize(files), 1);
    cJSON *f = cJSON_GetArrayItem(files, 0);
    assert_string_equal(cJSON_GetObjectItem(f, "status")->valuestring, "ok");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "set_aside")), 0);
    cJSON_Delete(r);
}

/* Child: a tune that adds candidates until it is killed, telling the
 * parent the index of each one whose save returned. */
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

static void writer_killed_between_writes_loses_nothing_saved(void **state)
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

        assert_dir_sound(dir);
        gpo_cache *c = open_at(dir, 0);
        tc_key k;
        cJSON *cands;
        int finished;
        assert_int_equal(gpo_cache_candidates(c, tc_key_init(&k, "N=killed"), &cands, &finished),
                         GPUOPT_OK);
        assert_int_equal(finished, 0);
        int n = cJSON_GetArraySize(cands);
        /* Every acknowledged candidate is there, once, in order; at most
         * one more (saved, killed before its acknowledgement). */
        assert_true(n == last + 1 || n == last + 2);
        for (int j = 0; j < n; j++) {
            cJSON *p = cJSON_GetObjectItem(cJSON_GetArrayItem(cands, j), "params");
            assert_int_equal(cJSON_GetObjectItem(p, "I")->valueint, j);
        }
        cJSON_Delete(cands);
        /* The next writer finds a sound file. */
        assert_int_equal(tc_tune(c, &k.key, NULL, 1), 0);
        assert_dir_sound(dir);
        gpo_cache_close(c);
    }
}

static const char *kill_at;

static void kill_here(const char *point)
{
    if (kill_at && strcmp(point, kill_at) == 0)
        raise(SIGKILL);
}

static void a_write_killed_at_any_point_leaves_the_old_file_or_the_new(void **state)
{
    (void)state;
    const char *points[] = {"write:temp-written", "write:before-rename", "write:renamed"};
    for (size_t p = 0; p < sizeof points / sizeof points[0]; p++) {
        const char *dir = tc_dir("write-kill");
        gpo_cache *c = open_at(dir, 0);
        tc_key k[5];
        char w[16];
        for (int i = 0; i < 4; i++) {
            snprintf(w, sizeof w, "N=%d", i);
            assert_int_equal(tc_tune(c, tc_key_init(&k[i], w), NULL, 3), 0);
            assert_int_equal(tc_tune(c, &k[i].key, NULL, 2), 0);
        }
        tc_key_init(&k[4], "N=4");
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            kill_at = points[p];
            gpo_cache_fault_hook = kill_here;
            gpo_cache *cc = open_at(dir, 0);
            tc_tune(cc, &k[4].key, NULL, 2); /* killed in its first write */
            _exit(0);                        /* not reached */
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        assert_dir_sound(dir);
        for (int i = 0; i < 4; i++) {
            gpo_cache_hit *hit;
            assert_int_equal(gpo_cache_lookup(c, &k[i].key, NULL, &hit), GPUOPT_OK);
            assert_int_equal((int)cJSON_GetObjectItem(hit->record, "evaluated")->valueint, 2);
            gpo_cache_hit_free(hit);
        }
        /* Killed after the rename: the new file, with the first candidate
         * of the killed tune; before it: the old file and a stale temp
         * file, which the next write removes. */
        cJSON *cands = NULL;
        int finished;
        assert_int_equal(gpo_cache_candidates(c, &k[4].key, &cands, &finished),
                         p == 2 ? GPUOPT_OK : GPUOPT_ERR_NOT_FOUND);
        assert_int_equal(cJSON_GetArraySize(cands), p == 2 ? 1 : 0);
        cJSON_Delete(cands);
        assert_int_equal(tc_count_files(dir, ".tmp-"), p < 2 ? 1 : 0);
        assert_int_equal(tc_tune(c, &k[4].key, NULL, 1), 0);
        assert_int_equal(tc_count_files(dir, ".tmp-"), 0);
        int entries;
        assert_int_equal(tc_verify(dir, &entries, NULL, NULL), 1);
        assert_int_equal(entries, 5);
        gpo_cache_close(c);
    }
}

/* ---- six writers, one killed (issue 12, items 7 and 8) ------------------------ */

#define WRITERS 6
#define RESULTS 50
#define ROUNDS 10

static void key_of(tc_key *k, int who, int i)
{
    char w[32];
    snprintf(w, sizeof w, "w=%d-%d", who, i);
    tc_key_init(k, w);
}

/* Child: RESULTS finished tunes (the last writer: until it is killed),
 * acknowledging each stored one. Default checkpoints: one write a result. */
static void writer(const char *dir, int who, int ack_fd)
{
    gpo_cache_options o = tc_options(0, 0);
    o.checkpoint_ms = 0;
    gpo_cache *c = open_with(dir, &o, NULL);
    if (!c)
        _exit(3);
    for (int i = 0; i < (ack_fd >= 0 ? 1000000 : RESULTS); i++) {
        tc_key k;
        key_of(&k, who, i);
        if (tc_tune(c, &k.key, NULL, 3))
            _exit(4);
        if (ack_fd >= 0 && write(ack_fd, &i, sizeof i) != sizeof i)
            _exit(5);
    }
    gpo_cache_close(c);
    _exit(0);
}

static void six_writers_one_killed_lose_no_result_and_corrupt_nothing(void **state)
{
    (void)state;
    for (int round = 0; round < ROUNDS; round++) {
        const char *dir = tc_dir("six");
        pid_t pids[WRITERS];
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        fflush(NULL);
        for (int w = 0; w < WRITERS; w++) {
            pids[w] = fork();
            assert_true(pids[w] >= 0);
            if (pids[w] == 0) {
                close(fds[0]);
                if (w < WRITERS - 1)
                    close(fds[1]);
                writer(dir, w, w == WRITERS - 1 ? fds[1] : -1);
            }
        }
        close(fds[1]);
        /* The last writer dies mid-run, at any point of a write. */
        int i = -1, acked = -1;
        while (acked < RESULTS / 2 && read(fds[0], &i, sizeof i) == sizeof i)
            acked = i;
        kill(pids[WRITERS - 1], SIGKILL);
        for (int w = 0; w < WRITERS; w++) {
            int status;
            assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
            if (w < WRITERS - 1)
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        while (read(fds[0], &i, sizeof i) == sizeof i)
            acked = i;
        close(fds[0]);

        gpo_cache *c = open_at(dir, 0);
        for (int w = 0; w < WRITERS; w++)
            for (int r = 0; r < (w < WRITERS - 1 ? RESULTS : acked + 1); r++) {
                tc_key k;
                key_of(&k, w, r);
                gpo_cache_hit *hit = NULL;
                if (gpo_cache_lookup(c, &k.key, NULL, &hit) != GPUOPT_OK)
                    fail_msg("round %d: result %d of writer %d is missing", round, r, w);
                assert_int_equal(cJSON_GetObjectItem(hit->record, "evaluated")->valueint, 3);
                gpo_cache_hit_free(hit);
            }
        gpo_cache_close(c);
        assert_int_equal(tc_count_files(dir, ".corrupt-"), 0);
        assert_dir_sound(dir);
        /* And as a user would check it: exit status 0, nothing found. */
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "GPUOPT_CACHE_DIR='%s' '%s' cache verify >/dev/null", dir,
                 GPO_CLI);
        assert_int_equal(system(cmd), 0);
    }
}

/* A writer waits while another holds the lock, and stores its result when
 * its turn comes; a wait past the bound gives up saying so. */
static void a_writer_waits_its_turn_and_says_when_the_wait_ran_out(void **state)
{
    (void)state;
    const char *dir = tc_dir("wait");
    log_capture cap;
    gpo_logger log = tc_logger(&cap, GPUOPT_LOG_WARN);
    gpo_cache_options o = tc_options(0, 0);
    o.lock_wait_ms = 50;
    gpo_cache *c = open_with(dir, &o, &log);
    const char *name = strrchr(gpo_cache_file(c), '/') + 1;
    char why[400];
    int dirfd = gpo_cache_dir_open(dir, 0, why, sizeof why);
    assert_true(dirfd >= 0);
    int held = gpo_cache_file_lock(dirfd, name, 1000, why, sizeof why);
    assert_true(held >= 0);
    tc_key a, b;
    assert_int_equal(tc_put(c, tc_key_init(&a, "N=1"), NULL, NULL), GPUOPT_OK);
    assert_non_null(strstr(cap.text, "a tuning result was not stored"));
    assert_non_null(strstr(cap.text, "the longest a writer waits"));
    gpo_cache_hit *hit = NULL;
    assert_int_equal(gpo_cache_lookup(c, &a.key, NULL, &hit), GPUOPT_ERR_NOT_FOUND);
    /* A writer with the default bound waits, however long the holder takes
     * (up to it), and then stores. */
    tc_key_init(&b, "N=2");
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(held); /* the lock belongs to the parent's open file */
        gpo_cache *cc = open_at(dir, 0);
        _exit(cc && tc_put(cc, &b.key, NULL, NULL) == 0 ? 0 : 1);
    }
    usleep(100000); /* the child reaches the lock meanwhile, or later: either way it waits */
    gpo_cache_file_unlock(held);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(gpo_cache_lookup(c, &b.key, NULL, &hit), GPUOPT_OK);
    gpo_cache_hit_free(hit);
    close(dirfd);
    gpo_cache_close(c);
}

/* ---- threads ------------------------------------------------------------------ */

typedef struct thread_arg {
    gpo_cache *c;
    int who;
} thread_arg;

static cJSON *payload(int i)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "i", i);
    cJSON_AddStringToObject(p, "pad", "a little text so records differ in length, 0123456789");
    return p;
}

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
            assert_int_equal(cJSON_GetObjectItem(hit->payload, "i")->valueint, i);
            gpo_cache_hit_free(hit);
        }
    assert_dir_sound(dir);
    gpo_cache_close(c);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writer_killed_between_writes_loses_nothing_saved),
        cmocka_unit_test(a_write_killed_at_any_point_leaves_the_old_file_or_the_new),
        cmocka_unit_test(six_writers_one_killed_lose_no_result_and_corrupt_nothing),
        cmocka_unit_test(a_writer_waits_its_turn_and_says_when_the_wait_ran_out),
        cmocka_unit_test(threads_sharing_one_cache_lose_nothing),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
