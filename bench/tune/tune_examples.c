/* The tuner on the built-in examples (issue 6, item 6), in one process:
 *
 *   exhaustive   the exhaustive search, cache off: wall time (cold or warm
 *                PoCL program cache: the caller sets POCL_CACHE_DIR), the
 *                legal space, the best configuration and its time
 *   engine_warm  the same tuner again: its compiled programs (the engine's
 *                compile cache) are reused, PoCL is not asked to build
 *   resize       the same tuner, one problem size changed (NAME=VALUE):
 *                re-tuning the same space for a new problem with warm caches
 *   replay       each non-exhaustive strategy, seeds 1..SEEDS, budget 30% of
 *                the legal space, on the landscape the exhaustive run
 *                measured (a host-callback subject that reports each
 *                configuration's measured median): best found / exhaustive
 *                best, the fraction evaluated, the fraction at which the
 *                best first came within 5%
 *   live         (--live) the same strategies on the real kernel (the
 *                tuner's compiled programs reused); the found best and the
 *                exhaustive best timed against each other, alternately
 *                (median of 5 rounds)
 *   overhead     the tuner's own cost per candidate: a callback subject
 *                that does nothing, with the fewest runs the tuner allows
 *                (one warm-up, the 3-run probe), over the same space
 *                (search, bookkeeping, result; with the cache on, the
 *                candidate's record and the checkpoints)
 *   cache_hit    gpuopt_tuner_run answering from the cache (kernel subject)
 *
 *   bench_tune_examples SPEC.json NAME=VALUE[,NAME=VALUE...] [--seeds N] [--live]
 *                       [--only-exhaustive] [--at-new-size]
 *
 * --only-exhaustive stops after the first run; --at-new-size makes that run
 * at the new sizes (a cold run to compare the re-tuning with).
 *
 * Prints one line per figure: "<what> <key>=<value> ...". bench/run.sh
 * (section tune) turns them into docs/benchmarks.md's tables. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune_spec.h"

typedef struct point {
    char *config; /* gpuopt_point_to_string */
    int32_t status;
    double median_ns;
} point;

typedef struct landscape {
    point *p;
    int32_t n;
    double best_ns;
} landscape;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_point(const void *a, const void *b)
{
    return strcmp(((const point *)a)->config, ((const point *)b)->config);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const point *find(const landscape *l, const gpuopt_point *cfg)
{
    char *text = NULL;
    if (gpuopt_point_to_string(cfg, &text))
        return NULL;
    point key = {text, 0, 0};
    const point *p = bsearch(&key, l->p, (size_t)l->n, sizeof *l->p, cmp_point);
    gpuopt_free(text);
    return p;
}

static int die(const char *what, gpuopt_status st)
{
    fprintf(stderr, "bench_tune_examples: %s: %s: %s\n", what, gpuopt_strerror(st),
            gpuopt_last_error());
    exit(1);
}

/* Records every candidate of a result, sorted by configuration text. */
static void record(gpuopt_result *res, landscape *l)
{
    int32_t n = 0;
    gpuopt_result_count(res, &n);
    l->p = calloc((size_t)n, sizeof *l->p);
    l->n = 0;
    l->best_ns = -1;
    for (int32_t i = 0; i < n; i++) {
        gpuopt_candidate c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        if (gpuopt_result_at(res, i, &c))
            continue;
        point *p = &l->p[l->n++];
        gpuopt_point_to_string(c.point, &p->config);
        p->status = c.status;
        /* A pruned candidate keeps its probe's median: slow, not failed. */
        p->median_ns = c.status == GPUOPT_CANDIDATE_OK || c.status == GPUOPT_CANDIDATE_PRUNED
                           ? c.median_ns
                           : -1;
        if (c.status == GPUOPT_CANDIDATE_OK && (l->best_ns < 0 || p->median_ns < l->best_ns))
            l->best_ns = p->median_ns;
    }
    qsort(l->p, (size_t)l->n, sizeof *l->p, cmp_point);
}

static void print_result(const char *what, gpuopt_result *res, double wall)
{
    gpuopt_candidate best;
    memset(&best, 0, sizeof best);
    best.struct_size = sizeof best;
    int32_t n = 0, ok = 0;
    gpuopt_result_count(res, &n);
    double compile_ms = 0;
    for (int32_t i = 0; i < n; i++) {
        gpuopt_candidate c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        if (gpuopt_result_at(res, i, &c) == GPUOPT_OK) {
            ok += c.status == GPUOPT_CANDIDATE_OK;
            if (c.compile_ms > 0)
                compile_ms += c.compile_ms;
        }
    }
    char *cfg = NULL;
    if (gpuopt_result_best(res, &best) == GPUOPT_OK)
        gpuopt_point_to_string(best.point, &cfg);
    printf("%s wall_s=%.2f candidates=%d ok=%d compile_s=%.2f best_ns=%.0f best_p20_ns=%.0f "
           "best_p80_ns=%.0f best=\"%s\"\n",
           what, wall, (int)n, (int)ok, compile_ms / 1e3, best.median_ns, best.p20_ns, best.p80_ns,
           cfg ? cfg : "");
    gpuopt_free(cfg);
}

static gpuopt_result *timed_run(gpuopt_tuner *t, double *wall)
{
    gpuopt_result *res = NULL;
    double t0 = now_s();
    gpuopt_status st = gpuopt_tuner_run(t, &res);
    *wall = now_s() - t0;
    if (st)
        die("gpuopt_tuner_run", st);
    return res;
}

static gpuopt_tuner_settings settings_of(const gpuopt_tuner *t)
{
    gpuopt_tuner_settings s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    gpuopt_status st = gpuopt_tuner_get_settings(t, &s);
    if (st)
        die("gpuopt_tuner_get_settings", st);
    return s;
}

static void set_settings(gpuopt_tuner *t, const gpuopt_tuner_settings *s)
{
    gpuopt_status st = gpuopt_tuner_set_settings(t, s);
    if (st)
        die("gpuopt_tuner_set_settings", st);
}

/* ---- The replayed landscape --------------------------------------------- */

typedef struct replay {
    const landscape *l;
    int32_t calls;
} replay;

static gpuopt_status replay_run(const gpuopt_point *config, void *user, double *measured_ns)
{
    replay *r = user;
    const point *p = find(r->l, config);
    r->calls++;
    if (!p || p->median_ns <= 0)
        return GPUOPT_ERR_LAUNCH; /* failed or pruned in the exhaustive run */
    *measured_ns = p->median_ns;
    return GPUOPT_OK;
}

static gpuopt_status noop_run(const gpuopt_point *config, void *user, double *measured_ns)
{
    (void)config;
    (void)user;
    *measured_ns = 1000;
    return GPUOPT_OK;
}

/* The evaluated fraction at which the best so far first came within 5% of
 * the exhaustive best (by the exhaustive run's times), or -1. */
static double reach(gpuopt_result *res, const landscape *l, uint64_t legal)
{
    int32_t n = 0;
    gpuopt_result_count(res, &n);
    for (int32_t i = 0; i < n; i++) {
        gpuopt_candidate c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        if (gpuopt_result_at(res, i, &c))
            continue;
        const point *p = find(l, c.point);
        if (p && p->median_ns > 0 && p->median_ns <= 1.05 * l->best_ns)
            return (double)(i + 1) / (double)legal;
    }
    return -1;
}

/* ---- Live results judged side by side --------------------------------- */

typedef struct judge {
    tune_spec *spec;
    gpuopt_context *ctx;
    gpuopt_device *dev;
    const char *best_text; /* the exhaustive best, as gpuopt_point_to_string */
} judge;

/* A tuner over the one configuration `text` ("A=1 B=2"): every parameter's
 * values cut to that one, cache off. */
static gpuopt_tuner *pinned(judge *j, const char *text, gpuopt_space **space)
{
    tune_spec *s = j->spec;
    int64_t saved_int[64];
    const char *saved_text[64];
    int32_t saved_count[64];
    for (int32_t i = 0; i < s->n_params && i < 64; i++) {
        ts_param *p = &s->params[i];
        saved_count[i] = p->count;
        saved_int[i] = p->is_enum ? 0 : p->ints[0];
        saved_text[i] = p->is_enum ? p->texts[0] : NULL;
        char key[80];
        snprintf(key, sizeof key, "%s=", p->name);
        const char *at = text;
        while ((at = strstr(at, key)) && at != text && at[-1] != ' ')
            at++;
        if (!at)
            die("pinned: a parameter is missing from the configuration", GPUOPT_ERR_NOT_FOUND);
        const char *v = at + strlen(key);
        size_t n = strcspn(v, " ");
        for (int32_t k = 0; k < p->count; k++) {
            char buf[64];
            if (p->is_enum)
                snprintf(buf, sizeof buf, "%s", p->texts[k]);
            else
                snprintf(buf, sizeof buf, "%lld", (long long)p->ints[k]);
            if (strlen(buf) == n && !strncmp(buf, v, n)) {
                if (p->is_enum)
                    p->texts[0] = p->texts[k];
                else
                    p->ints[0] = p->ints[k];
            }
        }
        p->count = 1;
    }
    gpuopt_tuner *t = NULL;
    char err[1024];
    int32_t strategy = s->strategy;
    s->strategy = GPUOPT_STRATEGY_EXHAUSTIVE;
    gpuopt_status st = tune_spec_apply(s, j->ctx, j->dev, space, &t, err, sizeof err);
    s->strategy = strategy;
    for (int32_t i = 0; i < s->n_params && i < 64; i++) {
        ts_param *p = &s->params[i];
        /* Only the first slot was overwritten: put it back. */
        if (p->is_enum)
            p->texts[0] = saved_text[i];
        else
            p->ints[0] = saved_int[i];
        p->count = saved_count[i];
    }
    if (st) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    gpuopt_tuner_settings set = settings_of(t);
    set.cache_mode = GPUOPT_CACHE_OFF;
    set_settings(t, &set);
    return t;
}

/* time(found) / time(exhaustive best), timed alternately, median of 5 rounds. */
static double side_by_side(judge *j, const char *found)
{
    if (!strcmp(found, j->best_text))
        return 1.0;
    gpuopt_space *sa = NULL, *sb = NULL;
    gpuopt_tuner *a = pinned(j, j->best_text, &sa), *b = pinned(j, found, &sb);
    double ratio[5];
    for (int r = 0; r < 5; r++) {
        double ns[2] = {-1, -1};
        for (int k = 0; k < 2; k++) {
            gpuopt_result *res = NULL;
            gpuopt_candidate c;
            memset(&c, 0, sizeof c);
            c.struct_size = sizeof c;
            if (gpuopt_tuner_run(k ? b : a, &res) == GPUOPT_OK &&
                gpuopt_result_best(res, &c) == GPUOPT_OK)
                ns[k] = c.median_ns;
            gpuopt_result_destroy(res);
        }
        ratio[r] = ns[0] > 0 && ns[1] > 0 ? ns[1] / ns[0] : INFINITY;
    }
    gpuopt_tuner_destroy(a);
    gpuopt_tuner_destroy(b);
    gpuopt_space_destroy(sa);
    gpuopt_space_destroy(sb);
    return median(ratio, 5);
}

static const int32_t strategies[] = {GPUOPT_STRATEGY_RANDOM, GPUOPT_STRATEGY_ANNEALING,
                                     GPUOPT_STRATEGY_MODEL};

/* One strategy over seeds 1..seeds; live: the kernel tuner, else replay. */
static void strategy_rows(const char *what, gpuopt_tuner *t, const landscape *l, uint64_t legal,
                          int seeds, judge *j)
{
    int32_t budget = (int32_t)ceil(0.3 * (double)legal);
    for (size_t s = 0; s < sizeof strategies / sizeof *strategies; s++) {
        double ratio[64], frac[64], rch[64], wall[64];
        for (int seed = 1; seed <= seeds; seed++) {
            gpuopt_tuner_settings set = settings_of(t);
            set.strategy = strategies[s];
            set.seed = (uint64_t)seed;
            set.max_evaluations = budget;
            set.max_seconds = 0;
            set.max_failures = 0;
            set_settings(t, &set);
            gpuopt_result *res = timed_run(t, &wall[seed - 1]);
            gpuopt_candidate best;
            memset(&best, 0, sizeof best);
            best.struct_size = sizeof best;
            const point *p = NULL;
            if (gpuopt_result_best(res, &best) == GPUOPT_OK)
                p = find(l, best.point);
            ratio[seed - 1] = p && p->median_ns > 0 ? p->median_ns / l->best_ns : INFINITY;
            if (j && p) {
                /* Live: the exhaustive run's medians are one noisy sample each;
                 * time the two configurations against each other instead. */
                char *text = NULL;
                gpuopt_point_to_string(best.point, &text);
                ratio[seed - 1] = side_by_side(j, text);
                gpuopt_free(text);
            }
            int32_t n = 0;
            gpuopt_result_count(res, &n);
            frac[seed - 1] = (double)n / (double)legal;
            rch[seed - 1] = reach(res, l, legal);
            if (rch[seed - 1] < 0)
                rch[seed - 1] = INFINITY;
            printf("%s_seed strategy=%s seed=%d ratio=%.4f fraction=%.4f reach=%.4f wall_s=%.2f\n",
                   what, tune_spec_strategy_name(strategies[s]), seed, ratio[seed - 1],
                   frac[seed - 1], rch[seed - 1], wall[seed - 1]);
            gpuopt_result_destroy(res);
        }
        double worst = 0;
        for (int i = 0; i < seeds; i++)
            worst = ratio[i] > worst ? ratio[i] : worst;
        printf("%s strategy=%s seeds=%d budget=%d ratio_median=%.4f ratio_worst=%.4f "
               "fraction_median=%.4f reach_median=%.4f wall_s_median=%.2f\n",
               what, tune_spec_strategy_name(strategies[s]), seeds, (int)budget,
               median(ratio, seeds), worst, median(frac, seeds), median(rch, seeds),
               median(wall, seeds));
    }
}

static gpuopt_tuner *callback_tuner(gpuopt_context *ctx, gpuopt_device *dev,
                                    const gpuopt_space *space, gpuopt_run_fn fn, void *user)
{
    gpuopt_tuner *t = NULL;
    gpuopt_callback_desc cb = {sizeof cb, fn, NULL, NULL, user};
    gpuopt_status st = gpuopt_tuner_create(ctx, dev, space, &t);
    if (st || (st = gpuopt_tuner_set_callback(t, &cb)))
        die("callback tuner", st);
    gpuopt_tuner_settings set = settings_of(t);
    set.warmup_ms = set.repeat_ms = 0;
    set.min_runs = set.max_runs = 3;
    set.cache_mode = GPUOPT_CACHE_OFF;
    set_settings(t, &set);
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_tune_examples SPEC.json NAME=VALUE[,...] [--seeds N] "
                        "[--live] [--only-exhaustive] [--at-new-size]\n");
        return 2;
    }
    int seeds = 5, live = 0, only = 0, at_new = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress for whoever watches the log */
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
            seeds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--live"))
            live = 1;
        else if (!strcmp(argv[i], "--only-exhaustive"))
            only = 1;
        else if (!strcmp(argv[i], "--at-new-size"))
            at_new = 1;
    }
    if (seeds < 1 || seeds > 64)
        seeds = 5;
    char err[1024];
    tune_spec *spec = tune_spec_load(argv[1], err, sizeof err);
    if (!spec) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    gpuopt_space *space = NULL;
    gpuopt_tuner *t = NULL;
    gpuopt_status st;
    if ((st = gpuopt_context_create(NULL, &ctx)) ||
        (st = gpuopt_device_select(ctx, "opencl", &dev)))
        die("no OpenCL device", st);
    spec->strategy = GPUOPT_STRATEGY_EXHAUSTIVE;
    if (at_new) {
        /* The exhaustive run at the new sizes (cold, for the re-tuning ratio). */
        char list[256];
        snprintf(list, sizeof list, "%s", argv[2]);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
            if (tune_spec_set_size(spec, tok, err, sizeof err)) {
                fprintf(stderr, "%s\n", err);
                return 2;
            }
        only = 1;
    }
    if ((st = tune_spec_apply(spec, ctx, dev, &space, &t, err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    uint64_t raw = 0, legal = 0;
    gpuopt_space_count(space, &raw, &legal);
    char sizes[256];
    tune_spec_sizes_text(spec, sizes, sizeof sizes);
    printf("space name=%s raw=%llu legal=%llu sizes=\"%s\"\n", spec->name, (unsigned long long)raw,
           (unsigned long long)legal, sizes);

    /* Exhaustive, stored in the cache (for the hit below). */
    gpuopt_tuner_settings set = settings_of(t);
    set.cache_mode = GPUOPT_CACHE_REFRESH;
    set_settings(t, &set);
    double wall;
    gpuopt_result *res = timed_run(t, &wall);
    print_result("exhaustive", res, wall);
    landscape l;
    record(res, &l);
    char *best_text = NULL;
    {
        gpuopt_candidate b;
        memset(&b, 0, sizeof b);
        b.struct_size = sizeof b;
        if (gpuopt_result_best(res, &b) || gpuopt_point_to_string(b.point, &best_text))
            die("no valid configuration in the exhaustive run", GPUOPT_ERR_NOT_FOUND);
    }
    gpuopt_result_destroy(res);
    if (only)
        goto out;

    res = timed_run(t, &wall);
    print_result("engine_warm", res, wall);
    gpuopt_result_destroy(res);

    /* New problem sizes ("M=1024,N=1024"), the same tuner (compiled
     * programs kept), then the old sizes back. */
    {
        char list[256];
        snprintf(list, sizeof list, "%s", argv[2]);
        for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
            char *eq = strchr(tok, '=');
            if (!eq)
                continue;
            *eq = '\0';
            if ((st = gpuopt_tuner_set_size(t, tok, atoll(eq + 1))))
                die("gpuopt_tuner_set_size", st);
        }
        res = timed_run(t, &wall);
        printf("resize %s ", argv[2]);
        print_result("", res, wall);
        gpuopt_result_destroy(res);
        for (int32_t i = 0; i < spec->n_sizes; i++)
            gpuopt_tuner_set_size(t, spec->sizes[i].name, spec->sizes[i].value);
    }

    /* Cache hits through the public API (kernel subject). */
    {
        set = settings_of(t);
        set.strategy = GPUOPT_STRATEGY_EXHAUSTIVE;
        set.max_evaluations = set.max_failures = 0;
        set.max_seconds = 0;
        set.cache_mode = GPUOPT_CACHE_USE;
        set_settings(t, &set);
        double us[201];
        int32_t origin = GPUOPT_ORIGIN_TUNED;
        for (int i = 0; i < 201; i++) {
            res = timed_run(t, &wall);
            us[i] = wall * 1e6;
            gpuopt_result_get_origin(res, &origin);
            gpuopt_result_destroy(res);
        }
        double med = median(us + 1, 200); /* sorts: p10 and p90 after it */
        printf("cache_hit origin=%s median_us=%.2f p10_us=%.2f p90_us=%.2f\n",
               origin == GPUOPT_ORIGIN_CACHE_HIT ? "cache_hit" : "not_a_hit", med, us[1 + 20],
               us[1 + 180]);
        set.cache_mode = GPUOPT_CACHE_OFF;
        set_settings(t, &set);
    }

    /* The strategies on the measured landscape. */
    {
        replay r = {&l, 0};
        gpuopt_tuner *cb = callback_tuner(ctx, dev, space, replay_run, &r);
        strategy_rows("replay", cb, &l, legal, seeds, NULL);
        gpuopt_tuner_destroy(cb);
    }
    if (live) {
        judge j = {spec, ctx, dev, best_text};
        strategy_rows("live", t, &l, legal, seeds, &j);
    }

    /* The tuner's own overhead per candidate. */
    for (int cache = 0; cache < 2; cache++) {
        for (size_t s = 0; s < 2; s++) {
            int32_t strat = s == 0 ? GPUOPT_STRATEGY_EXHAUSTIVE : GPUOPT_STRATEGY_MODEL;
            gpuopt_tuner *cb = callback_tuner(ctx, dev, space, noop_run, NULL);
            gpuopt_tuner_settings cs = settings_of(cb);
            cs.strategy = strat;
            if (strat == GPUOPT_STRATEGY_MODEL)
                cs.max_evaluations = (int32_t)ceil(0.3 * (double)legal);
            cs.cache_mode = cache ? GPUOPT_CACHE_REFRESH : GPUOPT_CACHE_OFF;
            set_settings(cb, &cs);
            res = timed_run(cb, &wall);
            int32_t n = 0;
            gpuopt_result_count(res, &n);
            printf("overhead strategy=%s cache=%s candidates=%d per_candidate_us=%.1f\n",
                   tune_spec_strategy_name(strat), cache ? "on" : "off", (int)n,
                   n ? wall * 1e6 / n : 0.0);
            gpuopt_result_destroy(res);
            gpuopt_tuner_destroy(cb);
        }
    }
out:
    gpuopt_free(best_text);
    for (int32_t i = 0; i < l.n; i++)
        gpuopt_free(l.p[i].config);
    free(l.p);
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(space);
    gpuopt_context_destroy(ctx);
    tune_spec_free(spec);
    return 0;
}
