/* gpuopt plan: the knobs for a device at a level, with tier, source and
 * reason; as JSON or as shell export lines. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char *const source_words[] = {"default", "detected", "benchmark", "cache",
                                           "config",  "env",      "api"};

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
    int32_t asked = 0, applied = 0, n = 0, nw = 0;
    gpuopt_device *dev = NULL;
    gpuopt_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
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
    for (int32_t i = 0; i < n; i++) {
        gpuopt_knob k;
        memset(&k, 0, sizeof k);
        k.struct_size = sizeof k;
        if (gpuopt_plan_knob_at(plan, i, &k))
            continue;
        char tier[16];
        if (k.tier >= 0)
            snprintf(tier, sizeof tier, "tier %d", (int)k.tier);
        else
            snprintf(tier, sizeof tier, "user");
        printf("  %-28s %-18s [%s, %s]%s%s\n", k.name, k.value, tier,
               k.source >= 0 && k.source <= 6 ? source_words[k.source] : "?",
               k.env ? "  env " : "", k.env ? k.env : "");
        printf("  %-28s %s\n", "", k.reason);
    }
    if (n == 0)
        printf("  (no knobs)\n");
    gpuopt_plan_warning_count(plan, &nw);
    if (nw)
        printf("\nWarnings:\n");
    for (int32_t i = 0; i < nw; i++) {
        const char *w = NULL;
        if (gpuopt_plan_warning_at(plan, i, &w) == GPUOPT_OK)
            printf("  - %s\n", w);
    }
    return GPUOPT_OK;
}

/* A size argument: "7e9", "16GiB", "4096". */
static int parse_size(const char *opt, const char *v, uint64_t *out)
{
    char *end;
    double d = strtod(v, &end);
    double mult = 1;
    if (end != v) {
        if (!strcmp(end, "k") || !strcmp(end, "KiB")) mult = 1024.0;
        else if (!strcmp(end, "M") || !strcmp(end, "MiB")) mult = 1048576.0;
        else if (!strcmp(end, "G") || !strcmp(end, "GiB")) mult = 1073741824.0;
        else if (!strcmp(end, "T") || !strcmp(end, "TiB")) mult = 1099511627776.0;
        else if (!strcmp(end, "KB")) mult = 1e3;
        else if (!strcmp(end, "MB")) mult = 1e6;
        else if (!strcmp(end, "GB")) mult = 1e9;
        else if (!strcmp(end, "TB")) mult = 1e12;
        else if (*end) end = (char *)v;
    }
    if (end == v || !(d >= 0) || d * mult >= 9.2e18) {
        cli_usage_error("plan", "%s %s: accepted a size in bytes such as 7e9, 4096, 512MiB or "
                                "16GiB", opt, v);
        return -1;
    }
    *out = (uint64_t)(d * mult);
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
    char *end;
    double d = strtod(v, &end);
    double mult = 1e9;
    if (end != v) {
        if (!strcmp(end, "ms")) mult = 1e6;
        else if (!strcmp(end, "us")) mult = 1e3;
        else if (!strcmp(end, "ns")) mult = 1;
        else if (*end && strcmp(end, "s")) end = (char *)v;
    }
    if (end == v || !(d > 0) || d * mult > 3.6e12 || d * mult < 1) {
        cli_usage_error("plan", "%s %s: accepted a time up to an hour such as 100ms, 0.1s, "
                                "2500us", opt, v);
        return -1;
    }
    *ns = (uint64_t)(d * mult + 0.5);
    return 0;
}

static int run(int argc, char **argv)
{
    int level = GPUOPT_LEVEL_DEFAULT, json = 0, env = 0, apply_env = 0, have_workload = 0;
    /* Flags that cannot be given together: both are refused, none wins. */
    int sensitive = 0, reduced = 0, latency = 0, throughput = 0;
    const char *device = NULL, *backends = NULL;
    char **command = NULL;
    gpuopt_workload wl;
    gpuopt_workload_init(&wl);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            command = &argv[i + 1];
            break;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--env") == 0) {
            env = 1;
        } else if (strcmp(a, "--apply-env") == 0) {
            apply_env = 1;
        } else if ((strcmp(a, "--level") == 0 || strcmp(a, "-l") == 0) && i + 1 < argc) {
            const char *v = argv[++i];
            char *end;
            long l = strtol(v, &end, 10);
            if (!*v || *end || l < 0 || l > GPUOPT_LEVEL_MAX)
                return cli_usage_error("plan", "--level %s: accepted 0 (safe defaults), 1 (from "
                                               "detected hardware), 2 (measured)", v);
            level = (int)l;
        } else if ((strcmp(a, "--device") == 0 || strcmp(a, "-d") == 0) && i + 1 < argc) {
            device = argv[++i];
        } else if (strcmp(a, "--backend") == 0 && i + 1 < argc) {
            backends = argv[++i];
        } else if (strcmp(a, "--model-bytes") == 0 && i + 1 < argc) {
            if (parse_size(a, argv[i + 1], &wl.model_bytes))
                return CLI_USAGE;
            i++;
            have_workload = 1;
        } else if (strcmp(a, "--item-bytes") == 0 && i + 1 < argc) {
            if (parse_size(a, argv[i + 1], &wl.item_bytes))
                return CLI_USAGE;
            i++;
            have_workload = 1;
        } else if (strcmp(a, "--precision-sensitive") == 0) {
            wl.reduced_precision = 0;
            have_workload = sensitive = 1;
        } else if (strcmp(a, "--reduced-precision") == 0) {
            wl.reduced_precision = 1;
            have_workload = reduced = 1;
        } else if (strcmp(a, "--quantized") == 0) {
            wl.quantized = 1;
            have_workload = 1;
        } else if (strcmp(a, "--latency") == 0) {
            wl.objective = GPUOPT_OBJECTIVE_LATENCY;
            have_workload = latency = 1;
        } else if (strcmp(a, "--throughput") == 0) {
            wl.objective = GPUOPT_OBJECTIVE_THROUGHPUT;
            have_workload = throughput = 1;
        } else if (strcmp(a, "--fixed-shapes") == 0) {
            wl.fixed_shapes = 1;
            have_workload = 1;
        } else if (strcmp(a, "--launches-per-step") == 0 && i + 1 < argc) {
            if (parse_count(a, argv[++i], &wl.launches_per_step))
                return CLI_USAGE;
            have_workload = 1;
        } else if (strcmp(a, "--items-per-step") == 0 && i + 1 < argc) {
            if (parse_count(a, argv[++i], &wl.items_per_step))
                return CLI_USAGE;
            have_workload = 1;
        } else if (strcmp(a, "--step-time") == 0 && i + 1 < argc) {
            if (parse_duration(a, argv[++i], &wl.step_time_ns))
                return CLI_USAGE;
            have_workload = 1;
        } else if ((strcmp(a, "--h2d-bytes") == 0 || strcmp(a, "--d2h-bytes") == 0) &&
                   i + 1 < argc) {
            if (parse_size(a, argv[i + 1], a[2] == 'h' ? &wl.h2d_bytes_per_step
                                                       : &wl.d2h_bytes_per_step))
                return CLI_USAGE;
            i++;
            have_workload = 1;
        } else if (strcmp(a, "--memory-bound") == 0 || strcmp(a, "--compute-bound") == 0) {
            int32_t b = a[2] == 'm' ? GPUOPT_BOUND_MEMORY : GPUOPT_BOUND_COMPUTE;
            if (wl.bound != GPUOPT_BOUND_UNKNOWN && wl.bound != b)
                return cli_usage_error("plan", "--memory-bound and --compute-bound contradict "
                                               "each other: give one");
            wl.bound = b;
            have_workload = 1;
        } else {
            return cli_usage_error("plan", "unknown option or missing value '%s'; accepted: "
                                           "--level N, --device SPEC, --backend LIST, --json, "
                                           "--env, --apply-env -- COMMAND..., --model-bytes N, "
                                           "--item-bytes N, --precision-sensitive, "
                                           "--reduced-precision, --quantized, --latency, "
                                           "--throughput, --fixed-shapes, --memory-bound, "
                                           "--compute-bound, --launches-per-step N, "
                                           "--step-time T, --items-per-step N, --h2d-bytes N, "
                                           "--d2h-bytes N, --help",
                                   a);
        }
    }
    if (json + env + apply_env > 1)
        return cli_usage_error("plan", "--json, --env and --apply-env are exclusive: choose one");
    if (apply_env && (!command || !command[0]))
        return cli_usage_error("plan", "--apply-env needs a command: gpuopt plan --apply-env -- "
                                       "COMMAND [ARGS...]");
    if (command && !apply_env)
        return cli_usage_error("plan", "a command after '--' runs only with --apply-env");
    if (sensitive && reduced)
        return cli_usage_error("plan", "--precision-sensitive and --reduced-precision contradict "
                                       "each other: describe one");
    if (latency && throughput)
        return cli_usage_error("plan", "--latency and --throughput contradict each other: "
                                       "describe one objective");
    if (wl.reduced_precision == 0 && wl.quantized)
        return cli_usage_error("plan", "--precision-sensitive and --quantized contradict each "
                                       "other: a quantised model already trades precision");

    gpuopt_context *ctx = NULL;
    gpuopt_plan *plan = NULL;
    char *text = NULL;
    int rc = CLI_OK;
    /* The selector goes into the context and the plan selects: only then
     * does the choice see the workload, and the plan say why it won. */
    gpuopt_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.backends = backends;
    opts.device = device;
    gpuopt_status st = gpuopt_context_create(&opts, &ctx);
    if (st)
        return cli_fail("plan", "cannot create a context", st);
    st = gpuopt_plan_create_for(ctx, NULL, level, have_workload ? &wl : NULL, &plan);
    if (st) {
        rc = cli_fail("plan",
                      st == GPUOPT_ERR_NO_DEVICE ? "cannot select a device" : "cannot make a plan",
                      st);
        goto out;
    }
    if (apply_env) {
        st = gpuopt_plan_apply(plan, GPUOPT_APPLY_ENV, &text);
        if (st) {
            rc = cli_fail("plan", "cannot apply the plan's environment", st);
            goto out;
        }
        gpuopt_free(text);
        text = NULL;
        gpuopt_plan_destroy(plan);
        gpuopt_context_destroy(ctx);
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
    "usage: gpuopt plan [--level N] [--device SPEC] [--backend LIST] [WORKLOAD...]\n"
    "                   [--json | --env | --apply-env -- COMMAND [ARGS...]]\n\n"
    "Builds the plan for a device: level 0 safe defaults, 1 (default) settings from the\n"
    "detected hardware, 2 settings measured on the device. Each knob shows its value,\n"
    "the tier and source that set it, and the reason.\n\n"
    "  --level N        0, 1 or 2 (default: GPUOPT_LEVEL, else 1)\n"
    "  --device SPEC    auto, gpu, cpu, cpu:0, opencl:1, cuda:0, a UUID (GPU-...) or a PCI\n"
    "                   bus id (0000:3b:00.0); default: GPUOPT_DEVICE, else auto\n"
    "  --backend LIST   only these backends, like GPUOPT_BACKEND\n"
    "  --json           {level_requested, level_applied, device, selection, knobs,\n"
    "                   warnings}\n"
    "  --env            shell 'export NAME=value' lines for the knobs that are environment\n"
    "                   variables (eval \"$(gpuopt plan --env)\")\n"
    "  --apply-env -- COMMAND [ARGS...]\n"
    "                   run COMMAND with the plan's environment variables set (like env(1));\n"
    "                   a variable already set in the environment is kept, never overwritten\n\n"
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
