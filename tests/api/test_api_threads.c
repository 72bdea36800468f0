/* The header's thread-safety paragraph, through the public API: one context
 * shared by several threads that select, plan, export and fail at once.
 * Each thread must get the same answers as a lone caller, and its own
 * failure detail, never another thread's. */
#include <pthread.h>

#include "api_check.h"

#define N_THREADS 4
#define ROUNDS 40

typedef struct shared {
    gpuopt_context *ctx;
    int32_t knob_count; /* what a lone caller saw */
    char first_knob[64];
} shared;

typedef struct worker {
    shared *s;
    int id;
    int errors; /* mismatches seen; 0 expected */
    char why[256];
} worker;

static void note(worker *w, const char *what)
{
    if (!w->errors++)
        snprintf(w->why, sizeof w->why, "thread %d: %s (detail \"%s\")", w->id, what,
                 gpuopt_last_error());
}

static void *work(void *arg)
{
    worker *w = arg;
    char policy[32], *json = NULL;
    for (int r = 0; r < ROUNDS; r++) {
        gpuopt_device *dev = NULL;
        gpuopt_plan *plan = NULL;
        int32_t count = -1;
        gpuopt_knob k;
        memset(&k, 0, sizeof k);
        k.struct_size = sizeof k;

        if (gpuopt_device_select(w->s->ctx, "cpu", &dev) != GPUOPT_OK || !dev)
            note(w, "select failed");
        if (gpuopt_plan_create(w->s->ctx, dev, 1, &plan) != GPUOPT_OK)
            note(w, "plan_create failed");
        if (plan &&
            (gpuopt_plan_knob_count(plan, &count) != GPUOPT_OK || count != w->s->knob_count))
            note(w, "a different number of knobs");
        if (plan && (gpuopt_plan_knob_at(plan, 0, &k) != GPUOPT_OK ||
                     strcmp(k.name, w->s->first_knob) != 0))
            note(w, "a different first knob");
        if (plan && gpuopt_plan_to_json(plan, &json) == GPUOPT_OK)
            gpuopt_free(json);
        else
            note(w, "plan_to_json failed");
        gpuopt_plan_destroy(plan);

        /* A failure of this thread's own: the detail names this thread's
         * policy, whatever the others are failing on meanwhile. */
        snprintf(policy, sizeof policy, "cpu:%d", 100 + w->id);
        if (gpuopt_device_select(w->s->ctx, policy, &dev) != GPUOPT_ERR_NO_DEVICE)
            note(w, "a missing device was not GPUOPT_ERR_NO_DEVICE");
        else if (!strstr(gpuopt_last_error(), policy))
            note(w, "the detail is not this thread's");
    }
    return NULL;
}

static void one_context_shared_by_threads_answers_each_as_if_alone(void **state)
{
    shared s;
    worker workers[N_THREADS];
    pthread_t threads[N_THREADS];
    gpuopt_plan *plan = NULL;
    gpuopt_knob k;
    (void)state;

    s.ctx = api_cpu_context();
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    EXPECT_OK(gpuopt_plan_create(s.ctx, NULL, 1, &plan));
    EXPECT_OK(gpuopt_plan_knob_count(plan, &s.knob_count));
    EXPECT_OK(gpuopt_plan_knob_at(plan, 0, &k));
    snprintf(s.first_knob, sizeof s.first_knob, "%s", k.name);
    gpuopt_plan_destroy(plan);

    for (int i = 0; i < N_THREADS; i++) {
        workers[i] = (worker){.s = &s, .id = i};
        assert_int_equal(pthread_create(&threads[i], NULL, work, &workers[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    for (int i = 0; i < N_THREADS; i++) {
        if (workers[i].errors)
            fail_msg("%d mismatches; first: %s", workers[i].errors, workers[i].why);
    }
    gpuopt_context_destroy(s.ctx);
}

static void *create_and_destroy(void *arg)
{
    int *failures = arg;
    for (int r = 0; r < ROUNDS; r++) {
        gpuopt_context *ctx = NULL;
        if (api_context_create("cpu", &ctx) != GPUOPT_OK) {
            (*failures)++;
            continue;
        }
        int32_t n = 0;
        if (gpuopt_device_count(ctx, &n) != GPUOPT_OK || n < 1)
            (*failures)++;
        gpuopt_context_destroy(ctx);
    }
    return NULL;
}

/* Contexts created, probed and destroyed on several threads at once (the
 * library's one-time initialisation runs under contention). */
static void contexts_on_several_threads_at_once(void **state)
{
    pthread_t threads[N_THREADS];
    int failures[N_THREADS] = {0};
    (void)state;
    for (int i = 0; i < N_THREADS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, create_and_destroy, &failures[i]), 0);
    for (int i = 0; i < N_THREADS; i++) {
        assert_int_equal(pthread_join(threads[i], NULL), 0);
        assert_int_equal(failures[i], 0);
    }
}

typedef struct level2 {
    gpuopt_context *ctx; /* shared, or NULL: the thread makes its own */
    const char *policy;
    int failures;
    int32_t applied;
    char why[256];
} level2;

static void *plan_level_2(void *arg)
{
    level2 *l = arg;
    gpuopt_context *own = NULL, *ctx = l->ctx;
    gpuopt_device *dev = NULL;
    gpuopt_plan *plan = NULL;
    char *json = NULL;
    if (!ctx) {
        /* Not api_cpu_context: cmocka's checks must stay on the main thread. */
        if (api_context_create("cpu,opencl", &own) != GPUOPT_OK) {
            l->failures++;
            snprintf(l->why, sizeof l->why, "context: %s", gpuopt_last_error());
            return NULL;
        }
        ctx = own;
    }
    if (gpuopt_device_select(ctx, l->policy, &dev) != GPUOPT_OK ||
        gpuopt_plan_create(ctx, dev, 2, &plan) != GPUOPT_OK ||
        gpuopt_plan_level(plan, NULL, &l->applied) != GPUOPT_OK ||
        gpuopt_plan_to_json(plan, &json) != GPUOPT_OK) {
        l->failures++;
        snprintf(l->why, sizeof l->why, "%s", gpuopt_last_error());
    }
    gpuopt_free(json);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(own);
    return NULL;
}

/* Level 2 measures on the device and writes the tuning cache: two threads
 * doing so at once, on one shared context and on a context each, each get
 * a level-2 plan. One plans for the CPU, the other for OpenCL's device
 * where there is one (PoCL in the tests), so that the vendor library runs
 * under ThreadSanitizer too (make check runs this under it). */
static void level_2_plans_on_several_threads_at_once(void **state)
{
    (void)state;
    gpuopt_context *shared_ctx = NULL;
    gpuopt_device *cl = NULL;
    EXPECT_OK(api_context_create("cpu,opencl", &shared_ctx));
    const char *second =
        gpuopt_device_select(shared_ctx, "opencl", &cl) == GPUOPT_OK ? "opencl" : "cpu";
    for (int round = 0; round < 2; round++) {
        level2 l[2];
        pthread_t threads[2];
        for (int i = 0; i < 2; i++) {
            l[i] = (level2){.ctx = round == 0 ? shared_ctx : NULL, .policy = i ? second : "cpu"};
            assert_int_equal(pthread_create(&threads[i], NULL, plan_level_2, &l[i]), 0);
        }
        for (int i = 0; i < 2; i++) {
            assert_int_equal(pthread_join(threads[i], NULL), 0);
            if (l[i].failures)
                fail_msg("round %d, thread %d: %s", round, i, l[i].why);
            assert_int_equal(l[i].applied, 2);
        }
    }
    gpuopt_context_destroy(shared_ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(contexts_on_several_threads_at_once),
        cmocka_unit_test(one_context_shared_by_threads_answers_each_as_if_alone),
        cmocka_unit_test(level_2_plans_on_several_threads_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
