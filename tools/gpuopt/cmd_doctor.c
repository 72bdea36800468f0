/* gpuopt doctor: why each backend can or cannot use a GPU, and what to do.
 * A thin face over gpuopt_context_diagnose(): the report is rendered from the same
 * JSON that --json prints. Exit 0 when at least one accelerator is usable,
 * 1 when none is (or the diagnosis failed), 2 on usage errors. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* ASCII marks, so the report survives any terminal and log file. */
static const char *mark(const char *status)
{
    if (!status)
        return "[ ?? ]";
    if (strcmp(status, "ok") == 0)
        return "[ ok ]";
    if (strcmp(status, "info") == 0)
        return "[info]";
    if (strcmp(status, "warning") == 0)
        return "[warn]";
    return "[FAIL]";
}

static void print_finding(const cJSON *f, int cw, int verbose)
{
    const char *st = cli_str(f, "status");
    printf("  %s %-*s %s\n", mark(st), cw, cli_str(f, "check") ? cli_str(f, "check") : "?",
           cli_str(f, "summary") ? cli_str(f, "summary") : "");
    /* Quiet by default: "ok" and "info" findings are one line each. */
    if (!verbose && st && (strcmp(st, "ok") == 0 || strcmp(st, "info") == 0))
        return;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(f, "evidence"))
    {
        if (cJSON_IsString(e))
            printf("         %-*s - %s\n", cw, "", e->valuestring);
    }
    if (cli_str(f, "fix"))
        printf("         %-*s fix: %s\n", cw, "", cli_str(f, "fix"));
}

static void print_report(const cJSON *root, int verbose)
{
    const cJSON *findings = cJSON_GetObjectItemCaseSensitive(root, "findings");
    const cJSON *b;
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(root, "user");
    printf("gpuopt doctor %s",
           cli_str(root, "gpuopt_version") ? cli_str(root, "gpuopt_version") : "");
    if (cli_str(root, "sysfs_root"))
        printf(" (recorded root %s)", cli_str(root, "sysfs_root"));
    printf("\nuser: %s", cli_str(user, "name") ? cli_str(user, "name") : "?");
    const cJSON *g;
    int first = 1;
    cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(user, "groups"))
    {
        if (cJSON_IsString(g)) {
            printf("%s%s", first ? ", groups: " : " ", g->valuestring);
            first = 0;
        }
    }
    printf("\n");
    if (cli_str(root, "container"))
        printf("container: %s\n", cli_str(root, "container"));
    const cJSON *backends = cJSON_GetObjectItemCaseSensitive(root, "backends");
    int bw = cli_widest(backends, "name", 7), cw = cli_widest(findings, "check", 18);
    cJSON_ArrayForEach(b, backends)
    {
        const char *name = cli_str(b, "name");
        printf("\n%s %-*s %s\n", mark(cli_str(b, "worst")), bw, name ? name : "?",
               cli_str(b, "status") ? cli_str(b, "status") : "");
        const cJSON *f;
        cJSON_ArrayForEach(f, findings)
        {
            if (name && cli_str(f, "backend") && strcmp(cli_str(f, "backend"), name) == 0)
                print_finding(f, cw, verbose);
        }
    }
    printf("\n%s\n", cli_str(root, "verdict") ? cli_str(root, "verdict") : "");
}

static int run(int argc, char **argv)
{
    int json = 0, verbose = 0;
    const cli_option options[] = {
        {"json", 'j', NULL, &json},
        {"verbose", 'v', NULL, &verbose},
        {"help", 'h', NULL, NULL},
        {0},
    };
    int rc = cli_parse(&cli_doctor, options, argc, argv);
    if (rc != CLI_OPTS_END)
        return rc;
    gpuopt_context *ctx = NULL;
    char *text = NULL;
    cJSON *root = NULL;
    rc = cli_context_json("doctor", NULL, 0, gpuopt_context_diagnose, "cannot diagnose", 1, &ctx,
                          &text, &root);
    if (rc)
        goto out;
    if (json)
        printf("%s\n", text);
    else
        print_report(root, verbose);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "accelerators_usable");
    rc = cJSON_IsNumber(n) && n->valuedouble >= 1 ? CLI_OK : CLI_FAIL;
out:
    cJSON_Delete(root);
    gpuopt_free(text);
    gpuopt_context_destroy(ctx);
    return rc;
}

const cli_command cli_doctor = {
    "doctor", "say why each backend can or cannot use a GPU, and what to do",
    "usage: gpuopt doctor [-j|--json] [-v|--verbose]\n\n"
    "Checks, for CUDA, ROCm, OpenCL and the CPU, what a GPU needs to be usable here:\n"
    "GPUs on the PCI bus and their kernel driver, the device nodes and whether you may\n"
    "open them (and which group to join), the driver libraries (and the CUDA toolkit's\n"
    "stub shadowing the driver), a driver older than the CUDA runtime, registered\n"
    "OpenCL drivers, visibility variables hiding every GPU, and container hints. Each\n"
    "finding comes with its evidence and a fix.\n\n"
    "  -j, --json      one JSON object: {accelerators_usable, backends, findings, ...}\n"
    "                  (docs/doctor.md)\n"
    "  -v, --verbose   show the evidence of every finding, not only of warnings and problems\n\n"
    "Exit status: 0 when at least one accelerator (a GPU or other non-CPU device) is\n"
    "usable, 1 when none is, 2 on a usage error.\n",
    run};
