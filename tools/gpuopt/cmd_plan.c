/* gpuopt plan: the knobs for a device at a level, with tier, source and
 * reason; as JSON or as shell export lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const source_words[] = {"default", "detected", "benchmark", "cache",
                                           "config",  "env",      "api"};

static void print_plan(gpuopt_plan *plan)
{
    int32_t asked = 0, applied = 0, n = 0, nw = 0;
    gpuopt_device *dev = NULL;
    gpuopt_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    gpuopt_plan_level(plan, &asked, &applied);
    gpuopt_plan_device(plan, &dev);
    gpuopt_device_get_info(dev, &info);
    printf("Plan for %s (%s): level %d", info.id, info.name, (int)applied);
    if (asked != applied)
        printf(" (asked %d)", (int)asked);
    printf("\n\n");
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
}

static int run(int argc, char **argv)
{
    int level = GPUOPT_LEVEL_DEFAULT, json = 0, env = 0;
    const char *device = NULL, *backends = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--env") == 0) {
            env = 1;
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
        } else {
            return cli_usage_error("plan", "unknown option or missing value '%s'; accepted: "
                                           "--level N, --device SPEC, --backend LIST, --json, "
                                           "--env, --help",
                                   a);
        }
    }
    if (json && env)
        return cli_usage_error("plan", "--json and --env are exclusive: choose one output");

    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    gpuopt_plan *plan = NULL;
    char *text = NULL;
    int rc = CLI_OK;
    gpuopt_status st = cli_context(backends, &ctx);
    if (st)
        return cli_fail("plan", "cannot create a context", st);
    st = gpuopt_select(ctx, device, &dev);
    if (st) {
        rc = cli_fail("plan", "cannot select a device", st);
        goto out;
    }
    st = gpuopt_plan_create(ctx, dev, level, &plan);
    if (st) {
        rc = cli_fail("plan", "cannot make a plan", st);
        goto out;
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
    } else {
        print_plan(plan);
    }
out:
    gpuopt_free(text);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    return rc;
}

const cli_command cli_plan = {
    "plan", "show the settings (knobs) for a device, with reasons",
    "usage: gpuopt plan [--level N] [--device SPEC] [--backend LIST] [--json | --env]\n\n"
    "Builds the plan for a device: level 0 safe defaults, 1 (default) settings from the\n"
    "detected hardware, 2 settings measured on the device. Each knob shows its value,\n"
    "the tier and source that set it, and the reason.\n\n"
    "  --level N        0, 1 or 2 (default: GPUOPT_LEVEL, else 1)\n"
    "  --device SPEC    auto, gpu, cpu, cpu:0, opencl:1, cuda:0, a UUID (GPU-...) or a PCI\n"
    "                   bus id (0000:3b:00.0); default: GPUOPT_DEVICE, else auto\n"
    "  --backend LIST   only these backends, like GPUOPT_BACKEND\n"
    "  --json           {level_requested, level_applied, device, knobs, warnings}\n"
    "  --env            shell 'export NAME=value' lines for the knobs that are environment\n"
    "                   variables (eval \"$(gpuopt plan --env)\")\n",
    run};
