/* The tuner's cache across processes: a tune killed with SIGKILL keeps
 * every candidate it saved and the next run resumes from them instead of
 * measuring them again; several processes tuning at once lose nothing.
 *
 * All device work happens in forked children: the parent opens no driver
 * (OpenCL state does not survive fork) and only reads the cache file. A
 * child checks its own results and exits with the failing line (0:
 * passed). Children save after every candidate (the default is at most
 * once a second), so what a kill leaves is known exactly. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "test_cache_util.h"
#include "test_tuner_util.h"
#include "tune/tuner.h"

#define CHILD_CHECK(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "child %d: %s:%d: %s failed (%s)\n", (int)getpid(), __FILE__,          \
                    __LINE__, #cond, gpuopt_last_error());                                         \
            _exit(__LINE__ % 250 + 1);                                                             \
        }                                                                                          \
    } while (0)

static int finished_before_kill = 5;

static void kill_after(int32_t done, int32_t total, double best, double left, void *user)
{
    (void)total, (void)best, (void)left, (void)user;
    if (done == finished_before_kill)
        raise(SIGKILL); /* mid-run: candidates 6.. are never measured */
}

static void child_tune(const char *dir, int kill, int resumed_expected)
{
    gpo_cache_checkpoint_default_ms = -1;
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    CHILD_CHECK(tt_context("opencl", dir, &ctx, &dev) == 0);
    gpuopt_space *s = tt_planted_space();
    gpuopt_tuner *t = tt_planted_tuner(ctx, dev, s, GPUOPT_CACHE_USE);
    CHILD_CHECK(t != NULL);
    if (kill)
        gpuopt_tuner_set_progress(t, kill_after, NULL);
    tt_count_install(t);
    gpuopt_result *r = NULL;
    CHILD_CHECK(gpuopt_tuner_run(t, &r) == GPUOPT_OK);
    CHILD_CHECK(!kill);
    CHILD_CHECK(strcmp(tt_best(r), "A=3 B=2") == 0);
    int32_t n = 0;
    gpuopt_result_count(r, &n);
    CHILD_CHECK(n == 12);
    char *json = NULL;
    CHILD_CHECK(gpuopt_result_to_json(r, &json) == GPUOPT_OK);
    cJSON *o = cJSON_Parse(json);
    int resumed = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(o, "candidates"))
    {
        resumed += cJSON_IsTrue(cJSON_GetObjectItem(c, "resumed"));
    }
    CHILD_CHECK(resumed == resumed_expected);
    /* The five saved ones were not built for measuring again: 7 new
     * candidates and the reference, plus finalists among the resumed. */
    CHILD_CHECK(tt_count.build >= 8 && tt_count.build <= 8 + 4);
    gpuopt_free(json);
    cJSON_Delete(o);
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    gpuopt_context_destroy(ctx);
    _exit(0);
}

static int wait_child(pid_t pid, int *signal_out)
{
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    if (signal_out)
        *signal_out = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The cache file's numbers (tc_verify), checked sound. */
static void counts(const char *dir, int *entries, int *cands, int *unfinished)
{
    assert_int_equal(tc_verify(dir, entries, cands, unfinished), 1);
}

static void a_killed_tune_keeps_every_finished_candidate_and_the_next_run_resumes(void **state)
{
    (void)state;
    const char *dir = tc_dir("crash");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        child_tune(dir, 1, 0);
    int sig = 0;
    wait_child(pid, &sig);
    assert_int_equal(sig, SIGKILL);
    int entries, cands, unfinished;
    counts(dir, &entries, &cands, &unfinished);
    assert_int_equal(cands, finished_before_kill);
    assert_int_equal(unfinished, 1);
    assert_int_equal(entries, 0);

    fflush(NULL);
    pid = fork();
    if (pid == 0)
        child_tune(dir, 0, finished_before_kill);
    assert_int_equal(wait_child(pid, NULL), 0);
    /* The new tune's 12 (its 5 resumed ones saved again under it, so a
     * second kill would still resume from them); the record supersedes
     * the killed tune. */
    counts(dir, &entries, &cands, &unfinished);
    assert_int_equal(cands, 12);
    assert_int_equal(unfinished, 0);
    assert_int_equal(entries, 1);
}

/* ---- several processes at once ----------------------------------------------- */

#define WRITERS 4
#define CANDIDATES 30

static gpuopt_status busy_run(const gpuopt_point *c, void *user, double *ns)
{
    (void)user;
    int64_t x = 0;
    gpuopt_point_get_int(c, "X", &x);
    *ns = 1000.0 + (double)((x * 7919) % CANDIDATES);
    return GPUOPT_OK;
}

static void child_concurrent(const char *dir)
{
    gpo_cache_checkpoint_default_ms = -1; /* many writes, all at once */
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    CHILD_CHECK(tt_context("cpu", dir, &ctx, &dev) == 0);
    gpuopt_space *s = NULL;
    int64_t v[CANDIDATES];
    for (int i = 0; i < CANDIDATES; i++)
        v[i] = i;
    gpuopt_space_create(&s);
    gpuopt_space_add_int(s, "X", v, CANDIDATES);
    gpuopt_tuner *t = NULL;
    CHILD_CHECK(gpuopt_tuner_create(ctx, dev, s, &t) == GPUOPT_OK);
    gpuopt_callback_desc cb = {.struct_size = sizeof cb};
    cb.run = busy_run;
    CHILD_CHECK(gpuopt_tuner_set_callback(t, &cb) == GPUOPT_OK);
    gpuopt_tuner_settings set = tt_settings(t);
    set.warmup_ms = 0;
    set.repeat_ms = 0.01;
    set.min_runs = 1;
    set.max_runs = 2;
    set.workload_key = "concurrent";
    set.cache_mode = GPUOPT_CACHE_REFRESH;
    CHILD_CHECK(gpuopt_tuner_set_settings(t, &set) == GPUOPT_OK);
    gpuopt_result *r = NULL;
    CHILD_CHECK(gpuopt_tuner_run(t, &r) == GPUOPT_OK);
    gpuopt_result_destroy(r);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(s);
    gpuopt_context_destroy(ctx);
    _exit(0);
}

static void concurrent_tuners_in_several_processes_lose_nothing(void **state)
{
    (void)state;
    const char *dir = tc_dir("concurrent");
    pid_t pids[WRITERS];
    fflush(NULL);
    for (int i = 0; i < WRITERS; i++)
        if ((pids[i] = fork()) == 0)
            child_concurrent(dir);
    for (int i = 0; i < WRITERS; i++)
        assert_int_equal(wait_child(pids[i], NULL), 0);
    /* One key: the last record written stands, with all its candidates;
     * no writer's file was lost or damaged on the way. */
    int entries, cands, unfinished;
    counts(dir, &entries, &cands, &unfinished);
    assert_int_equal(entries, 1);
    assert_int_equal(cands, CANDIDATES);
    assert_int_equal(unfinished, 0);
    assert_int_equal(tc_count_files(dir, ".corrupt-"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_killed_tune_keeps_every_finished_candidate_and_the_next_run_resumes),
        cmocka_unit_test(concurrent_tuners_in_several_processes_lose_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, tc_cleanup);
}
