/* gpuopt tune: tunes the kernel a spec file describes (tune_spec.h) on one
 * device, or answers from the tuning cache; a progress line on a terminal,
 * then a summary, the result as JSON, or a CSV of every candidate. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tune_spec.h"

enum { MAX_SIZES = 64 };

typedef struct tune_opts {
    const char *spec, *device, *csv, *strategy, *budget, *seed, *cache, *backends, *isolation;
    const char *sizes[MAX_SIZES];
    int n_sizes, json;
} tune_opts;

/* ---- Progress ----------------------------------------------------------- */

typedef struct progress {
    int shown; /* something was drawn on the line */
} progress;

static void fmt_duration(double s, char *out, size_t cap)
{
    if (!(s >= 0))
        snprintf(out, cap, "?");
    else if (s < 60)
        snprintf(out, cap, "%.0fs", s);
    else if (s < 3600)
        snprintf(out, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(out, cap, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* One line on stderr, redrawn in place: bar, done/total, best, time left. */
static void on_progress(int32_t done, int32_t total, double best_ns, double seconds_left,
                        void *user)
{
    progress *p = user;
    char bar[25], best[32], left[32];
    int width = (int)sizeof bar - 1, fill = 0;
    if (total > 0)
        fill = (int)((double)done / total * width + 0.5);
    if (fill > width)
        fill = width;
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : (total > 0 ? '.' : ' ');
    bar[width] = '\0';
    cli_format_ns(best_ns, best, sizeof best);
    fmt_duration(seconds_left, left, sizeof left);
    if (total > 0)
        fprintf(stderr, "\r[%s] %d/%d  best %s  %s left\033[K", bar, (int)done, (int)total, best,
                left);
    else
        fprintf(stderr, "\r%d done  best %s\033[K", (int)done, best);
    fflush(stderr);
    p->shown = 1;
}

/* ---- Summary ----------------------------------------------------------- */

static const char *const status_words[] = {
    "ok",           "invalid", "compile failed", "launch failed",
    "wrong result", "timeout", "pruned",         "fault"};
enum { N_STATUS = (int)(sizeof status_words / sizeof *status_words) };

static int is_default(const tune_spec *s, const gpuopt_point *cfg)
{
    if (!s->n_defaults || !cfg)
        return 0;
    for (int32_t i = 0; i < s->n_defaults; i++) {
        const char *v = NULL;
        if (gpuopt_point_get_text(cfg, s->defaults[i].name, &v) || !v ||
            strcmp(v, s->defaults[i].text) != 0)
            return 0;
    }
    return 1;
}

static void print_config(const char *label, const gpuopt_point *cfg)
{
    char *text = NULL;
    if (cfg && gpuopt_point_to_string(cfg, &text) == GPUOPT_OK) {
        printf("  %-11s %s\n", label, text);
        gpuopt_free(text);
    }
}

static void budget_part(const cJSON *budget, const char *name, const char *unit, char *out,
                        size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(budget, name);
    double x = cJSON_IsNumber(v) ? v->valuedouble : -1;
    size_t n = strlen(out);
    if (x > 0)
        snprintf(out + n, cap - n, "%s%g %s", n ? ", " : "", x, unit);
}

/* How a cached answer was searched, and when: the stored strategy, seed and
 * budget, which may differ from what this run asked for. */
static void print_stored_search(const gpuopt_result *res)
{
    char *text = NULL;
    if (gpuopt_result_to_json(res, &text) != GPUOPT_OK)
        return;
    cJSON *o = cJSON_Parse(text);
    gpuopt_free(text);
    const cJSON *strategy = cJSON_GetObjectItemCaseSensitive(o, "strategy");
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(o, "seed");
    const cJSON *when = cJSON_GetObjectItemCaseSensitive(o, "measured_at");
    const cJSON *budget = cJSON_GetObjectItemCaseSensitive(o, "budget");
    char limits[160] = "";
    budget_part(budget, "max_evaluations", "candidates", limits, sizeof limits);
    budget_part(budget, "max_seconds", "s", limits, sizeof limits);
    budget_part(budget, "max_failures", "failures", limits, sizeof limits);
    if (cJSON_IsString(strategy) && cJSON_IsString(seed))
        printf("  %-11s %s, seed %s, budget %s; measured %s\n", "stored", strategy->valuestring,
               seed->valuestring, *limits ? limits : "none",
               cJSON_IsString(when) ? when->valuestring : "at an unknown time");
    cJSON_Delete(o);
}

static void print_summary(const tune_spec *s, const gpuopt_device_info *info, gpuopt_result *res,
                          double wall_s, int32_t cache_mode)
{
    gpuopt_candidate best = {.struct_size = sizeof best}, c;
    int32_t n = 0, origin = GPUOPT_ORIGIN_TUNED, counts[N_STATUS] = {0};
    gpuopt_result_count(res, &n);
    gpuopt_result_get_origin(res, &origin);
    int cached = origin != GPUOPT_ORIGIN_TUNED;
    int have_best = gpuopt_result_best(res, &best) == GPUOPT_OK;
    double worst = -1, dflt = -1;
    int first_fail[N_STATUS];
    for (int i = 0; i < N_STATUS; i++)
        first_fail[i] = -1;
    for (int32_t i = 0; i < n; i++) {
        c = (gpuopt_candidate){.struct_size = sizeof c};
        if (gpuopt_result_at(res, i, &c))
            continue;
        if (c.status >= 0 && c.status < N_STATUS) {
            counts[c.status]++;
            if (first_fail[c.status] < 0)
                first_fail[c.status] = (int)i;
        }
        if (c.status == GPUOPT_CANDIDATE_OK && c.median_ns > worst)
            worst = c.median_ns;
        if (c.status == GPUOPT_CANDIDATE_OK && is_default(s, c.point))
            dflt = c.median_ns;
    }
    char sizes[256], t[32], p20[32], p80[32];
    tune_spec_sizes_text(s, sizes, sizeof sizes);
    printf("Tuned %s (%s) on %s (%s)%s%s\n", s->name, s->file, info->id, info->name,
           *sizes ? ", " : "", sizes);
    if (have_best) {
        print_config("best", best.point);
        cli_format_ns(best.median_ns, t, sizeof t);
        cli_format_ns(best.p20_ns, p20, sizeof p20);
        cli_format_ns(best.p80_ns, p80, sizeof p80);
        printf("  %-11s %s median (p20 %s, p80 %s; %d runs)\n", "time", t, p20, p80,
               (int)best.runs);
        if (worst > 0 && best.median_ns > 0) {
            /* A cached answer keeps only the winner and the runner-up. */
            cli_format_ns(worst, t, sizeof t);
            printf("  %-11s %.2fx over the %s (%s)", "speed-up", worst / best.median_ns,
                   cached ? "runner-up" : "worst valid", t);
            if (dflt > 0) {
                cli_format_ns(dflt, t, sizeof t);
                printf(", %.2fx over the default (%s)", dflt / best.median_ns, t);
            } else if (s->n_defaults) {
                printf("; the default was not evaluated");
            }
            printf("\n");
        }
    } else {
        printf("  %-11s none: no candidate was valid\n", "best");
    }
    printf("  %-11s %d%s:", "candidates", (int)n, cached ? " stored" : "");
    int first = 1;
    for (int i = 0; i < N_STATUS; i++)
        if (counts[i]) {
            printf("%s %d %s", first ? "" : ",", counts[i], status_words[i]);
            first = 0;
        }
    printf("\n");
    /* The first failure of each kind, so a broken space says why. */
    for (int k = GPUOPT_CANDIDATE_COMPILE_FAILED; k < N_STATUS; k++) {
        if (k == GPUOPT_CANDIDATE_PRUNED || first_fail[k] < 0)
            continue;
        c = (gpuopt_candidate){.struct_size = sizeof c};
        if (gpuopt_result_at(res, first_fail[k], &c) || !c.message || !*c.message)
            continue;
        char *cfg = NULL;
        gpuopt_point_to_string(c.point, &cfg);
        const char *nl = strchr(c.message, '\n');
        printf("  %-11s %s (%s): %.*s%s\n", "first", status_words[k], cfg ? cfg : "?",
               nl ? (int)(nl - c.message) : (int)strlen(c.message), c.message, nl ? " ..." : "");
        gpuopt_free(cfg);
    }
    char wall[32];
    fmt_duration(wall_s, wall, sizeof wall);
    if (wall_s < 1)
        snprintf(wall, sizeof wall, "%.0f ms", wall_s * 1e3);
    printf("  %-11s %s, strategy %s, seed %llu%s\n", "wall time", wall,
           tune_spec_strategy_name(s->strategy), (unsigned long long)s->seed,
           cached ? " (asked; the answer's below)" : "");
    if (cached)
        print_stored_search(res);
    printf("  %-11s %s\n", "from cache",
           origin == GPUOPT_ORIGIN_CACHE_HIT ? "yes (from cache: nothing was built or run)"
           : origin == GPUOPT_ORIGIN_CACHE_VERIFIED
               ? "yes (from cache, the stored winner re-timed after a driver, compiler or "
                 "library change)"
           : cache_mode == GPUOPT_CACHE_OFF ? "no (measured now; the cache is off)"
                                            : "no (measured now, cached)");
}

/* ---- Options ------------------------------------------------------------ */

enum { OPT_STRATEGY = CLI_LONG, OPT_BUDGET, OPT_SEED, OPT_CSV, OPT_CACHE, OPT_SIZE, OPT_ISOLATION };

/* Returns 0, HELP_SHOWN after --help, or the exit status of a usage error. */
enum { HELP_SHOWN = -1 };

static int parse_args(int argc, char **argv, tune_opts *o)
{
    memset(o, 0, sizeof *o);
    const cli_option options[] = {
        {"strategy", OPT_STRATEGY, "S", &o->strategy},
        {"budget", OPT_BUDGET, "N|Ns", &o->budget},
        {"seed", OPT_SEED, "K", &o->seed},
        {"csv", OPT_CSV, "FILE", &o->csv},
        {"json", 'j', NULL, &o->json},
        {"device", 'd', "SPEC", &o->device},
        {"size", OPT_SIZE, "NAME=VALUE", NULL},
        {"cache", OPT_CACHE, "MODE", &o->cache},
        {"isolation", OPT_ISOLATION, "MODE", &o->isolation},
        {"backend", 'b', "LIST", &o->backends},
        {"help", 'h', NULL, NULL},
        {0},
    };
    cli_parser p;
    cli_parser_init(&p, &cli_tune, options, 0);
    int c;
    while ((c = cli_parser_next(&p, argc, argv)) != CLI_OPTS_END) {
        if (c != OPT_SIZE)
            return p.status == CLI_OK ? HELP_SHOWN : p.status;
        if (o->n_sizes == MAX_SIZES)
            return cli_usage_error("tune", "--size: at most %d", MAX_SIZES);
        o->sizes[o->n_sizes++] = p.value;
    }
    for (int i = p.operands; i < argc; i++) {
        if (o->spec)
            return cli_usage_error("tune", "one spec file at a time ('%s' and '%s')", o->spec,
                                   argv[i]);
        o->spec = argv[i];
    }
    if (!o->spec)
        return cli_usage_error("tune", "missing the spec file; usage: gpuopt tune SPEC.json "
                                       "[OPTIONS] (gpuopt tune --help)");
    if (o->json && o->csv && strcmp(o->csv, "-") == 0)
        return cli_usage_error("tune", "--csv - and --json contradict each other: both write to "
                                       "stdout; give --csv a file, or drop one of them");
    return 0;
}

/* Applies --strategy, --isolation, --budget, --seed and --size to the loaded spec. */
static int override_spec(const tune_opts *o, tune_spec *s)
{
    char err[512];
    if (o->strategy) {
        int32_t st = tune_spec_strategy_parse(o->strategy);
        if (st < 0)
            return cli_usage_error("tune",
                                   "--strategy %s: accepted: auto, exhaustive, random, "
                                   "annealing, model",
                                   o->strategy);
        s->strategy = st;
    }
    if (o->isolation && (s->isolation = tune_spec_isolation_parse(o->isolation)) < 0)
        return cli_usage_error("tune", "--isolation %s: accepted: auto, in-process, worker",
                               o->isolation);
    if (o->budget) {
        char *end;
        errno = 0;
        double v = strtod(o->budget, &end);
        int seconds = strcmp(end, "s") == 0;
        if (end == o->budget || (*end && !seconds) || errno || !(v > 0) ||
            (!seconds && (v != floor(v) || v > 2147483647.0)))
            return cli_usage_error("tune",
                                   "--budget %s: accepted N (candidates, a positive "
                                   "integer) or Ns (seconds, such as 90s)",
                                   o->budget);
        if (seconds)
            s->max_seconds = v;
        else
            s->max_evaluations = (int32_t)v;
    }
    if (o->seed) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(o->seed, &end, 10);
        if (!*o->seed || *end || errno || o->seed[0] == '-')
            return cli_usage_error("tune", "--seed %s: accepted a non-negative integer", o->seed);
        s->seed = v;
    }
    for (int i = 0; i < o->n_sizes; i++)
        if (tune_spec_set_size(s, o->sizes[i], err, sizeof err))
            return cli_usage_error("tune", "%s", err);
    return 0;
}

static int write_csv(const char *path, gpuopt_result *res)
{
    char *csv = NULL;
    gpuopt_status st = gpuopt_result_to_csv(res, &csv);
    if (st)
        return cli_fail("tune", "cannot export CSV", st);
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    int failed = !f || fputs(csv, f) < 0;
    int err = errno;
    /* fclose releases the stream even when it fails (a full disk fails the
     * final flush): it is called once, whatever happened before. */
    if (f && f != stdout && fclose(f) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    gpuopt_free(csv);
    if (!failed)
        return CLI_OK;
    fprintf(stderr, "gpuopt tune: cannot write %s: %s\n", path, strerror(err));
    return CLI_FAIL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *default_policy(int32_t language)
{
    return language == GPUOPT_LANG_CUDA ? "cuda" : language == GPUOPT_LANG_HIP ? "rocm" : "opencl";
}

static int run(int argc, char **argv)
{
    tune_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc == HELP_SHOWN ? CLI_OK : rc;
    int32_t cache_mode = GPUOPT_CACHE_USE;
    if (o.cache) {
        if (strcmp(o.cache, "use") == 0)
            cache_mode = GPUOPT_CACHE_USE;
        else if (strcmp(o.cache, "refresh") == 0)
            cache_mode = GPUOPT_CACHE_REFRESH;
        else if (strcmp(o.cache, "off") == 0)
            cache_mode = GPUOPT_CACHE_OFF;
        else
            return cli_usage_error("tune",
                                   "--cache %s: accepted: use (answer from the cache "
                                   "when it can), refresh (tune again and store), off",
                                   o.cache);
    }
    char err[1024];
    tune_spec *spec = tune_spec_load(o.spec, err, sizeof err);
    if (!spec) {
        fprintf(stderr, "gpuopt tune: %s\n", err);
        return CLI_USAGE;
    }
    gpuopt_context *ctx = NULL;
    gpuopt_space *space = NULL;
    gpuopt_tuner *tuner = NULL;
    gpuopt_result *res = NULL;
    gpuopt_device *dev = NULL;
    progress prog = {0};
    if ((rc = override_spec(&o, spec)))
        goto out;
    if ((rc = cli_context("tune", o.backends, NULL, 0, &ctx)))
        goto out;
    gpuopt_status st;
    const char *policy = o.device ? o.device : default_policy(spec->language);
    if ((st = gpuopt_device_select(ctx, policy, &dev))) {
        rc = cli_fail("tune", o.device ? "--device" : "no device for the spec's language", st);
        goto out;
    }
    gpuopt_device_info info = {.struct_size = sizeof info};
    gpuopt_device_get_info(dev, &info);
    if ((st = tune_spec_apply(spec, ctx, dev, &space, &tuner, err, sizeof err))) {
        fprintf(stderr, "gpuopt tune: %s\n", err);
        /* What the spec got wrong is a usage error; what the machine could not do is not. */
        rc = st == GPUOPT_ERR_INVALID_ARGUMENT || st == GPUOPT_ERR_NOT_FOUND ||
                     st == GPUOPT_ERR_OUT_OF_RANGE || st == GPUOPT_ERR_CONFIG
                 ? CLI_USAGE
                 : CLI_FAIL;
        goto out;
    }
    gpuopt_tuner_settings set = {.struct_size = sizeof set};
    st = gpuopt_tuner_get_settings(tuner, &set);
    set.cache_mode = cache_mode;
    if (st || (st = gpuopt_tuner_set_settings(tuner, &set))) {
        rc = cli_fail("tune", "--cache", st);
        goto out;
    }
    /* A progress line only where someone watches it. */
    if (isatty(STDERR_FILENO) && (st = gpuopt_tuner_set_progress(tuner, on_progress, &prog))) {
        rc = cli_fail("tune", "progress", st);
        goto out;
    }
    double t0 = now_s();
    st = gpuopt_tuner_run(tuner, &res);
    double wall = now_s() - t0;
    if (prog.shown)
        fprintf(stderr, "\r\033[K");
    if (st) {
        rc = cli_fail("tune", "tuning failed", st);
        goto out;
    }
    if (o.csv && (rc = write_csv(o.csv, res)))
        goto out;
    if (o.json) {
        char *json = NULL;
        gpuopt_status js = gpuopt_result_to_json(res, &json);
        if (js) {
            rc = cli_fail("tune", "cannot export JSON", js);
            goto out;
        }
        printf("%s\n", json);
        gpuopt_free(json);
    } else if (!(o.csv && strcmp(o.csv, "-") == 0)) {
        print_summary(spec, &info, res, wall, cache_mode);
    }
    gpuopt_candidate best = {.struct_size = sizeof best};
    if (gpuopt_result_best(res, &best) == GPUOPT_ERR_NOT_FOUND) {
        fprintf(stderr, "gpuopt tune: no valid configuration: every candidate failed or was "
                        "illegal (see the summary or --csv)\n");
        rc = CLI_FAIL;
    }
out:
    gpuopt_result_destroy(res);
    gpuopt_tuner_destroy(tuner);
    gpuopt_space_destroy(space);
    gpuopt_context_destroy(ctx);
    tune_spec_free(spec);
    return rc;
}

const cli_command cli_tune = {
    "tune", "tune a kernel's parameters from a spec file (cached)",
    "usage: gpuopt tune SPEC.json [--strategy S] [--budget N|Ns] [--seed K] [--csv FILE]\n"
    "                   [-j|--json] [-d|--device SPEC] [--size NAME=VALUE] [--cache MODE]\n"
    "                   [-b|--backend LIST] [--isolation MODE]\n"
    "\n"
    "Searches the parameter space a spec file describes (kernel, parameters, constraints,\n"
    "sizes, geometry, arguments, reference, tolerance; docs/tuning.md, \"Spec files\") for\n"
    "the fastest configuration whose output matches the reference, and stores it in the\n"
    "tuning cache. A later run with the same kernel, space, sizes and device answers from\n"
    "the cache without building or running anything.\n"
    "\n"
    "Options:\n"
    "  --strategy S        auto (default: exhaustive when the space fits the budget),\n"
    "                      exhaustive, random, annealing, model\n"
    "  --budget N|Ns       at most N candidates, or N seconds (90s)\n"
    "  --seed K            the search's random seed (the same seed, the same sequence)\n"
    "  --csv FILE          every candidate as CSV, one column per parameter ('-': stdout,\n"
    "                      not with --json)\n"
    "  -j, --json          the result as JSON on stdout instead of the summary\n"
    "  -d, --device SPEC   the device (as in gpuopt devices: opencl:0, cuda:1, a UUID);\n"
    "                      default: the best device of the kernel language's backend\n"
    "  --size NAME=VALUE   overrides one of the spec's problem sizes (repeatable)\n"
    "  --cache MODE        use (default), refresh (tune again and store) or off\n"
    "  -b, --backend LIST  backends to open (like GPUOPT_BACKEND)\n"
    "  --isolation MODE    where candidates run: auto (default: a measurement worker\n"
    "                      process for CUDA and HIP, whose faults end the process), worker\n"
    "                      (every backend, OpenCL included) or in-process\n"
    "\n"
    "On a terminal a progress line on stderr shows candidates done, the best time so far\n"
    "and the time left. The summary gives the best configuration, its median with p20 and\n"
    "p80, the speed-up over the worst valid candidate and over the spec's \"default\", the\n"
    "candidates per status, the wall time, and whether the answer came from the cache\n"
    "(then also the strategy, seed and budget it was searched with, and when).\n"
    "\n"
    "Exit status: 0 a valid best was found (or cached), 1 tuning failed (no valid\n"
    "candidate, no device), 2 usage or spec error (the message names the file, the JSON\n"
    "path, the value and what is accepted), or a kernel entry the source does not\n"
    "define (the message lists those it defines).\n",
    run};
