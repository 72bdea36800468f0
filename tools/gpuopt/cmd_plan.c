/* gpuopt plan: the knobs for a device at a level, with tier, source and
 * reason; as JSON or as shell export lines. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char *const source_words[] = {"default", "detected", "benchmark", "cache",
                                           "config",  "env",      "api"};

static gpuopt_status knob_at(const gpuopt_plan *plan, int32_t i, gpuopt_knob *k)
{
    *k = (gpuopt_knob){.struct_size = sizeof *k};
    return gpuopt_plan_knob_at(plan, i, k);
}

/* The selection's reason, from the plan's JSON (selection.reason): the one
 * place the library says it. "" when it gave none; a failure (out of
 * memory) fails the command rather than leave the line out. */
static gpuopt_status selection_reason(const gpuopt_plan *plan, char *out, size_t cap)
{
    char *text = NULL;
    out[0] = '\0';
    gpuopt_status st = gpuopt_plan_to_json(plan, &text);
    if (st)
        return st;
    cJSON *root = cJSON_Parse(text);
    gpuopt_free(text);
    if (!root)
        return GPUOPT_ERR_NO_MEMORY; /* the library's own JSON: only memory can fail it */
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(root, "selection");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(sel, "reason");
    if (cJSON_IsString(reason))
        snprintf(out, cap, "%s", reason->valuestring);
    cJSON_Delete(root);
    return GPUOPT_OK;
}

static gpuopt_status print_plan(gpuopt_plan *plan)
{
    int32_t asked = 0, applied = 0, n = 0, nwarn = 0;
    gpuopt_device *dev = NULL;
    gpuopt_device_info info = {.struct_size = sizeof info};
    char reason[1024];
    gpuopt_status st = selection_reason(plan, reason, sizeof reason);
    if (st)
        return st;
    gpuopt_plan_level(plan, &asked, &applied);
    gpuopt_plan_device(plan, &dev);
    gpuopt_device_get_info(dev, &info);
    printf("Plan for %s (%s): level %d", info.id, info.name, (int)applied);
    if (asked != applied)
        printf(" (asked %d)", (int)asked);
    printf("\n");
    if (reason[0])
        printf("Selected: %s\n", reason);
    printf("\n");
    gpuopt_plan_knob_count(plan, &n);
    /* The name column fits the longest name; the value column the longest
     * value up to VALUE_MAX (a longer value, such as an allocator string,
     * pushes only its own row's tier over). */
    enum { NAME_MIN = 28, VALUE_MIN = 18, VALUE_MAX = 24 };
    int nw = NAME_MIN, vw = VALUE_MIN;
    gpuopt_knob k;
    for (int32_t i = 0; i < n; i++) {
        if (knob_at(plan, i, &k))
            continue;
        if ((int)strlen(k.name) > nw)
            nw = (int)strlen(k.name);
        if ((int)strlen(k.value) > vw && (int)strlen(k.value) <= VALUE_MAX)
            vw = (int)strlen(k.value);
    }
    for (int32_t i = 0; i < n; i++) {
        if (knob_at(plan, i, &k))
            continue;
        char tier[16];
        if (k.tier >= 0)
            snprintf(tier, sizeof tier, "tier %d", (int)k.tier);
        else
            snprintf(tier, sizeof tier, "user");
        printf("  %-*s %-*s [%s, %s]%s%s\n", nw, k.name, vw, k.value, tier,
               k.source >= 0 && k.source <= 6 ? source_words[k.source] : "?", k.env ? "  env " : "",
               k.env ? k.env : "");
        printf("  %-*s %s\n", nw, "", k.reason);
    }
    if (n == 0)
        printf("  (no knobs)\n");
    gpuopt_plan_warning_count(plan, &nwarn);
    if (nwarn)
        printf("\nWarnings:\n");
    for (int32_t i = 0; i < nwarn; i++) {
        const char *w = NULL;
        if (gpuopt_plan_warning_at(plan, i, &w) == GPUOPT_OK)
            printf("  - %s\n", w);
    }
    return GPUOPT_OK;
}

typedef struct unit {
    const char *suffix;
    double mult;
} unit;

/* A number with one of `units`' suffixes ("16GiB", "100ms") in the units'
 * base; NaN when it is not one. */
static double scaled(const char *v, const unit *units, size_t n)
{
    char *end;
    double d = strtod(v, &end);
    for (size_t i = 0; end != v && i < n; i++)
        if (strcmp(end, units[i].suffix) == 0)
            return d * units[i].mult;
    return NAN;
}

/* A size argument: "7e9", "16GiB", "4096". */
static int parse_size(const char *opt, const char *v, uint64_t *out)
{
    /* KiB and the like are powers of two (0x1p10 is 1024), KB and the like of ten. */
    static const unit units[] = {
        {"", 1},       {"k", 0x1p10},   {"KiB", 0x1p10}, {"M", 0x1p20},   {"MiB", 0x1p20},
        {"G", 0x1p30}, {"GiB", 0x1p30}, {"T", 0x1p40},   {"TiB", 0x1p40}, {"KB", 1e3},
        {"MB", 1e6},   {"GB", 1e9},     {"TB", 1e12},
    };
    double b = scaled(v, units, sizeof units / sizeof *units);
    if (!(b >= 0 && b < 9.2e18)) {
        cli_usage_error("plan",
                        "%s %s: accepted a size in bytes such as 7e9, 4096, 512MiB or "
                        "16GiB",
                        opt, v);
        return -1;
    }
    *out = (uint64_t)b;
    return 0;
}

/* A whole number of at least 1: "40". */
static int parse_count(const char *opt, const char *v, int32_t *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < 1 || n > INT32_MAX) {
        cli_usage_error("plan", "%s %s: accepted a whole number from 1", opt, v);
        return -1;
    }
    *out = (int32_t)n;
    return 0;
}

/* A duration: "100ms", "0.1s", "2500us", "250000ns"; a bare number is seconds. */
static int parse_duration(const char *opt, const char *v, uint64_t *ns)
{
    static const unit units[] = {{"", 1e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}};
    double t = scaled(v, units, sizeof units / sizeof *units);
    if (!(t >= 1 && t <= 3.6e12)) {
        cli_usage_error("plan",
                        "%s %s: accepted a time up to an hour such as 100ms, 0.1s, "
                        "2500us",
                        opt, v);
        return -1;
    }
    *ns = (uint64_t)(t + 0.5);
    return 0;
}

enum {
    OPT_APPLY_ENV = CLI_LONG,
    OPT_BIND,
    OPT_MODEL_BYTES,
    OPT_ITEM_BYTES,
    OPT_SENSITIVE,
    OPT_REDUCED,
    OPT_QUANTIZED,
    OPT_LATENCY,
    OPT_THROUGHPUT,
    OPT_FIXED_SHAPES,
    OPT_MEMORY_BOUND,
    OPT_COMPUTE_BOUND,
    OPT_LAUNCHES,
    OPT_ITEMS_PER_STEP,
    OPT_STEP_TIME,
    OPT_H2D_BYTES,
    OPT_D2H_BYTES,
};

static int run(int argc, char **argv)
{
    int level = GPUOPT_LEVEL_DEFAULT, json = 0, env = 0, apply_env = 0, bind = 0, have_workload = 0,
        o;
    /* The workload's flags; two that contradict each other are both
     * refused, none wins. */
    int sensitive = 0, reduced = 0, quantized = 0, latency = 0, throughput = 0, fixed = 0,
        memory_bound = 0, compute_bound = 0;
    const char *device = NULL, *backends = NULL;
    char **command = NULL;
    gpuopt_workload wl;
    gpuopt_workload_init(&wl);
    const cli_option options[] = {
        {"level", 'l', "N", NULL},
        {"device", 'd', "SPEC", &device},
        {"backend", 'b', "LIST", &backends},
        {"json", 'j', NULL, &json},
        {"env", 'e', NULL, &env},
        {"apply-env", OPT_APPLY_ENV, NULL, &apply_env},
        {"bind", OPT_BIND, NULL, &bind},
        {"model-bytes", OPT_MODEL_BYTES, "N", NULL},
        {"item-bytes", OPT_ITEM_BYTES, "N", NULL},
        {"precision-sensitive", OPT_SENSITIVE, NULL, &sensitive},
        {"reduced-precision", OPT_REDUCED, NULL, &reduced},
        {"quantized", OPT_QUANTIZED, NULL, &quantized},
        {"latency", OPT_LATENCY, NULL, &latency},
        {"throughput", OPT_THROUGHPUT, NULL, &throughput},
        {"fixed-shapes", OPT_FIXED_SHAPES, NULL, &fixed},
        {"memory-bound", OPT_MEMORY_BOUND, NULL, &memory_bound},
        {"compute-bound", OPT_COMPUTE_BOUND, NULL, &compute_bound},
        {"launches-per-step", OPT_LAUNCHES, "N", NULL},
        {"items-per-step", OPT_ITEMS_PER_STEP, "N", NULL},
        {"step-time", OPT_STEP_TIME, "T", NULL},
        {"h2d-bytes", OPT_H2D_BYTES, "N", NULL},
        {"d2h-bytes", OPT_D2H_BYTES, "N", NULL},
        {"help", 'h', NULL, NULL},
        {0},
    };
    cli_parser p;
    /* In order: the options end at the command --apply-env runs, so its own
     * options are never read as gpuopt's (as env(1) and nice(1) do). */
    cli_parser_init(&p, &cli_plan, options, 1);
    while ((o = cli_parser_next(&p, argc, argv)) != CLI_OPTS_END) {
        const char *v = p.value;
        int bad = 0;
        switch (o) {
        case 'l': {
            char *end;
            long l = strtol(v, &end, 10);
            if (!*v || *end || l < 0 || l > GPUOPT_LEVEL_MAX)
                return cli_usage_error("plan",
                                       "--level %s: accepted 0 (safe defaults), 1 (from "
                                       "detected hardware), 2 (measured)",
                                       v);
            level = (int)l;
            continue;
        }
        case OPT_MODEL_BYTES: bad = parse_size("--model-bytes", v, &wl.model_bytes); break;
        case OPT_ITEM_BYTES: bad = parse_size("--item-bytes", v, &wl.item_bytes); break;
        case OPT_H2D_BYTES: bad = parse_size("--h2d-bytes", v, &wl.h2d_bytes_per_step); break;
        case OPT_D2H_BYTES: bad = parse_size("--d2h-bytes", v, &wl.d2h_bytes_per_step); break;
        case OPT_LAUNCHES:
            bad = parse_count("--launches-per-step", v, &wl.launches_per_step);
            break;
        case OPT_ITEMS_PER_STEP:
            bad = parse_count("--items-per-step", v, &wl.items_per_step);
            break;
        case OPT_STEP_TIME: bad = parse_duration("--step-time", v, &wl.step_time_ns); break;
        default: return p.status;
        }
        if (bad)
            return CLI_USAGE;
        have_workload = 1;
    }
    if (memory_bound && compute_bound)
        return cli_usage_error("plan", "--memory-bound and --compute-bound contradict "
                                       "each other: give one");
    if (p.operands < argc)
        command = &argv[p.operands];
    if (json + env + apply_env > 1)
        return cli_usage_error("plan", "--json, --env and --apply-env are exclusive: choose one");
    if (apply_env && !command)
        return cli_usage_error("plan", "--apply-env needs a command: gpuopt plan --apply-env -- "
                                       "COMMAND [ARGS...]");
    if (command && !apply_env)
        return cli_usage_error("plan",
                               "'%s' is a command to run, which only --apply-env does "
                               "(gpuopt plan --apply-env -- COMMAND [ARGS...])",
                               command[0]);
    if (bind && !apply_env)
        return cli_usage_error("plan", "--bind binds the command --apply-env runs: gpuopt plan "
                                       "--bind --apply-env -- COMMAND [ARGS...]");
    if (sensitive && reduced)
        return cli_usage_error("plan", "--precision-sensitive and --reduced-precision contradict "
                                       "each other: describe one");
    if (latency && throughput)
        return cli_usage_error("plan", "--latency and --throughput contradict each other: "
                                       "describe one objective");
    if (sensitive && quantized)
        return cli_usage_error("plan", "--precision-sensitive and --quantized contradict each "
                                       "other: a quantised model already trades precision");
    if (sensitive || reduced)
        wl.reduced_precision = reduced;
    if (latency || throughput)
        wl.objective = latency ? GPUOPT_OBJECTIVE_LATENCY : GPUOPT_OBJECTIVE_THROUGHPUT;
    if (memory_bound || compute_bound)
        wl.bound = memory_bound ? GPUOPT_BOUND_MEMORY : GPUOPT_BOUND_COMPUTE;
    wl.quantized = quantized;
    wl.fixed_shapes = fixed;
    have_workload |= sensitive | reduced | quantized | latency | throughput | fixed | memory_bound |
                     compute_bound;

    gpuopt_context *ctx = NULL;
    gpuopt_plan *plan = NULL;
    char *text = NULL;
    int rc = cli_context("plan", backends, device, 1, &ctx);
    if (rc)
        return rc;
    /* The selector is in the context and the plan selects: only then does
     * the choice see the workload, and the plan say why it won. */
    gpuopt_status st = gpuopt_plan_create_for(ctx, NULL, level, have_workload ? &wl : NULL, &plan);
    if (st) {
        rc = cli_fail("plan",
                      st == GPUOPT_ERR_NO_DEVICE ? cli_device_origin() : "cannot make a plan", st);
        goto out;
    }
    if (apply_env) {
        st = gpuopt_plan_apply(plan, GPUOPT_APPLY_ENV | (bind ? GPUOPT_APPLY_AFFINITY : 0u), &text);
        if (st) {
            rc = cli_fail("plan",
                          bind ? "cannot bind the command or apply the plan's environment"
                               : "cannot apply the plan's environment",
                          st);
            goto out;
        }
        /* The library bound this process; exec keeps the mask. Say so
         * only when it could not, so the command's output stays its own. */
        if (bind && strncmp(text, "not bound", 9) == 0)
            fprintf(stderr, "gpuopt plan: %.*s\n", (int)strcspn(text, "\n"), text);
        gpuopt_free(text);
        text = NULL;
        gpuopt_plan_destroy(plan);
        gpuopt_context_destroy(ctx);
        cli_restore_env();
        fflush(NULL);
        execvp(command[0], command);
        fprintf(stderr, "gpuopt plan: cannot run '%s': %s\n", command[0], strerror(errno));
        return errno == ENOENT ? 127 : 126;
    }
    if (json || env) {
        st = json ? gpuopt_plan_to_json(plan, &text) : gpuopt_plan_to_env(plan, &text);
        if (st) {
            rc = cli_fail("plan", "cannot export the plan", st);
            goto out;
        }
        fputs(text, stdout);
        if (json)
            fputc('\n', stdout);
    } else if ((st = print_plan(plan))) {
        rc = cli_fail("plan", "cannot show the plan", st);
    }
out:
    gpuopt_free(text);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    return rc;
}

const cli_command cli_plan = {
    "plan", "show the settings (knobs) for a device, with reasons; run a command with them",
    "usage: gpuopt plan [-l N] [-d SPEC] [-b LIST] [WORKLOAD...] [-j | -e]\n"
    "       gpuopt plan [OPTIONS] [--bind] --apply-env [--] COMMAND [ARGS...]\n\n"
    "Builds the plan for a device: level 0 safe defaults, 1 (default) settings from the\n"
    "detected hardware, 2 settings measured on the device. Each knob shows its value,\n"
    "the tier and source that set it, and the reason.\n\n"
    "  -l, --level N        0, 1 or 2 (default: GPUOPT_LEVEL, else 1)\n"
    "  -d, --device SPEC    auto, gpu, cpu, cpu:0, opencl:1, cuda:0, a UUID (GPU-...) or a\n"
    "                       PCI bus id (0000:3b:00.0); default: GPUOPT_DEVICE, else auto.\n"
    "                       A SPEC gpuopt does not understand is a usage error (exit 2),\n"
    "                       whether it comes from --device or from GPUOPT_DEVICE\n"
    "  -b, --backend LIST   only these backends, like GPUOPT_BACKEND\n"
    "  -j, --json           {level_requested, level_applied, device, selection, knobs,\n"
    "                       warnings}\n"
    "  -e, --env            shell lines for the knobs that are environment variables, each\n"
    "                       setting its variable only where it is unset, as --apply-env\n"
    "                       does: ': \"${NAME=value}\"; export NAME' (eval \"$(gpuopt plan -e)\")\n"
    "  --apply-env [--] COMMAND [ARGS...]\n"
    "                       run COMMAND with the plan's environment variables set (like\n"
    "                       env(1)); a variable already set is kept, never overwritten. The\n"
    "                       options end at COMMAND: its own options are its own\n"
    "  --bind               with --apply-env: run COMMAND bound (sched_setaffinity) to the\n"
    "                       plan's cpu.affinity, the CPUs next to the device (docs/fleet.md)\n\n"
    "Workload (sizes the batch, advises quantising or offloading, decides precision):\n"
    "  --model-bytes N        model/weights resident on the device (7e9, 14GiB)\n"
    "  --item-bytes N         device memory per batch item\n"
    "  --precision-sensitive  no fp16/bf16/tf32/fp8 knob turns on; TF32 is kept off\n"
    "  --reduced-precision    reduced precision is acceptable (not with the above)\n"
    "  --quantized            the model is already quantised\n"
    "  --latency | --throughput   what to optimise (one of them; default throughput)\n"
    "  --fixed-shapes         shapes repeat call after call\n"
    "  --memory-bound | --compute-bound\n"
    "                         what limits its speed: memory bandwidth, or arithmetic\n"
    "One step of latency-oriented work (docs/latency.md: graphs, warm-up, pre-allocation,\n"
    "streams, with the arithmetic in each reason; transfers and launches measured at level 2):\n"
    "  --launches-per-step N  kernel launches one step makes\n"
    "  --step-time T          the step's time target: 100ms, 0.1s, 2500us\n"
    "  --items-per-step N     items one step holds at once (10 concurrent users: 10)\n"
    "  --h2d-bytes N | --d2h-bytes N\n"
    "                         bytes one step copies host to device, device to host\n\n"
    "Without --device the plan is for the device 'auto' ranks first for this workload\n"
    "(docs/selection.md); the 'Selected:' line says why it won.\n",
    run};
