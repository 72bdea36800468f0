/* gpuopt devices: backends and devices, as a table for people (rendered from
 * the same JSON that --json prints, so the two never disagree). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The library names the API field a backend list came from; here it came
 * from --backend, and says so in those words. */
static const char *reason_words(const char *reason)
{
    static const char field[] = "excluded by gpuopt_options.backends=";
    static char buf[512];
    if (strncmp(reason, field, sizeof field - 1) != 0)
        return reason;
    snprintf(buf, sizeof buf, "excluded by --backend %s", reason + sizeof field - 1);
    return buf;
}

/* Column widths: as wide as the longest entry, at least the layout's own. */
typedef struct widths {
    int backend, id;
} widths;

static void print_device(const cJSON *d, int idw)
{
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(d, "arch");
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(d, "selected");
    const char *routes = cli_str(d, "routes");
    printf("  %c %-*s %s\n", cJSON_IsTrue(sel) ? '*' : ' ', idw, cli_str(d, "id"),
           cli_str(d, "name") ? cli_str(d, "name") : "(unnamed)");
    printf("    %-*s", idw + 1, "");
    const char *fam = cli_str(arch, "family"), *an = cli_str(arch, "name"),
               *cc = cli_str(arch, "compute_capability");
    int first = 1;
#define SEP() (first ? (first = 0, "") : ", ")
    printf("%s%s", SEP(), cli_str(d, "type") ? cli_str(d, "type") : "device");
    if (fam || an)
        printf("%s%s%s%s", SEP(), fam ? fam : "", fam && an ? " " : "", an ? an : "");
    if (cc)
        printf(" (compute capability %s)", cc);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(arch, "extrapolated")))
        printf(" [newer than the tables: extrapolated]");
    if (cli_num(d, "compute_units", -1) >= 0)
        printf("%s%.0f compute units", SEP(), cli_num(d, "compute_units", 0));
    if (cli_num(d, "simd_width", -1) > 0)
        printf("%sSIMD %.0f", SEP(), cli_num(d, "simd_width", 0));
    if (cli_num(d, "clock_mhz", -1) > 0)
        printf("%s%.0f MHz", SEP(), cli_num(d, "clock_mhz", 0));
    if (cli_num(d, "memory_bytes", 0) > 0) {
        char b[32];
        cli_format_bytes(cli_num(d, "memory_bytes", 0), b, sizeof b);
        printf("%s%s", SEP(), b);
    }
    printf("\n");
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(d, "details");
    const cJSON *ocl = cJSON_GetObjectItemCaseSensitive(details, "opencl");
    if (cli_str(ocl, "platform_name"))
        printf("    %-*splatform: %s\n", idw + 1, "", cli_str(ocl, "platform_name"));
    if (cli_str(d, "pci_bus_id") || cli_str(d, "uuid"))
        printf("    %-*s%s%s%s\n", idw + 1, "",
               cli_str(d, "pci_bus_id") ? cli_str(d, "pci_bus_id") : "",
               cli_str(d, "pci_bus_id") && cli_str(d, "uuid") ? "  " : "",
               cli_str(d, "uuid") ? cli_str(d, "uuid") : "");
    if (cli_num(d, "numa_node", -1) >= 0 || cli_str(d, "local_cpus") || cli_str(d, "device_file")) {
        printf("    %-*s", idw + 1, "");
        if (cli_num(d, "numa_node", -1) >= 0)
            printf("NUMA node %.0f%s", cli_num(d, "numa_node", 0),
                   cli_str(d, "local_cpus") ? ", " : "");
        if (cli_str(d, "local_cpus"))
            printf("local CPUs %s", cli_str(d, "local_cpus"));
        if (cli_str(d, "device_file"))
            printf("%s%s", cli_num(d, "numa_node", -1) >= 0 || cli_str(d, "local_cpus") ? "; " : "",
                   cli_str(d, "device_file"));
        printf("\n");
    }
    if (routes && strchr(routes, ','))
        printf("    %-*salso reachable through: %s\n", idw + 1, "", strchr(routes, ',') + 1);
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(d, "warnings"))
    {
        if (cJSON_IsString(w))
            printf("    %-*swarning: %s\n", idw + 1, "", w->valuestring);
    }
#undef SEP
}

static void print_table(const cJSON *root)
{
    const cJSON *backends = cJSON_GetObjectItemCaseSensitive(root, "backends");
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(root, "devices");
    int bw = cli_widest(backends, "name", 7), idw = cli_widest(devices, "id", 11);
    const cJSON *b;
    cJSON_ArrayForEach(b, backends)
    {
        const char *name = cli_str(b, "name"), *status = cli_str(b, "status");
        printf("%-*s %s", bw, name, status);
        if (cli_num(b, "init_ms", -1) >= 0)
            printf(" (%.1f ms)", cli_num(b, "init_ms", 0));
        if (cli_str(b, "runtime_version") || cli_str(b, "driver_version")) {
            printf(", ");
            if (cli_str(b, "runtime_version"))
                printf("runtime %s", cli_str(b, "runtime_version"));
            if (cli_str(b, "runtime_version") && cli_str(b, "driver_version"))
                printf(", ");
            if (cli_str(b, "driver_version"))
                printf("driver %s", cli_str(b, "driver_version"));
        }
        printf("\n");
        if (cli_str(b, "library"))
            printf("%-*s library: %s\n", bw, "", cli_str(b, "library"));
        if (cli_str(b, "reason"))
            printf("%-*s %s\n", bw, "", reason_words(cli_str(b, "reason")));
        int shown = 0;
        const cJSON *d;
        cJSON_ArrayForEach(d, devices)
        {
            if (cli_str(d, "backend") && strcmp(cli_str(d, "backend"), name) == 0) {
                print_device(d, idw);
                shown++;
            }
        }
        if (!shown && status && strcmp(status, "available") == 0)
            printf("%-*s no devices\n", bw, "");
    }
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(root, "selection");
    if (cli_str(sel, "device"))
        printf("\n* selected by policy \"%s\": %s\n", cli_str(sel, "policy"),
               cli_str(sel, "reason") ? cli_str(sel, "reason") : cli_str(sel, "device"));
    else if (cli_str(sel, "error"))
        printf("\nno device selected: %s\n", cli_str(sel, "error"));
}

/* One line per device, as `nvidia-smi -L` and `clinfo -l` give them:
 * "cuda:0  NVIDIA H100 80GB HBM3  (UUID: GPU-...)", for scripts and people
 * who only want the names. */
static void print_list(const cJSON *root)
{
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(root, "devices");
    int idw = cli_widest(devices, "id", 0);
    const cJSON *d;
    cJSON_ArrayForEach(d, devices)
    {
        const char *uuid = cli_str(d, "uuid"), *pci = cli_str(d, "pci_bus_id");
        printf("%-*s  %s", idw, cli_str(d, "id"),
               cli_str(d, "name") ? cli_str(d, "name") : "(unnamed)");
        if (uuid && *uuid)
            printf("  (UUID: %s)", uuid);
        else if (pci && *pci)
            printf("  (PCI: %s)", pci);
        printf("\n");
    }
}

static int run(int argc, char **argv)
{
    int json = 0, list = 0;
    const char *backends = NULL;
    const cli_option options[] = {
        {"json", 'j', NULL, &json},
        {"backend", 'b', "LIST", &backends},
        {"list", 'l', NULL, &list},
        {"help", 'h', NULL, NULL},
        {0},
    };
    int rc = cli_parse(&cli_devices, options, argc, argv);
    if (rc != CLI_OPTS_END)
        return rc;
    if (json && list)
        return cli_usage_error("devices", "--json and --list are exclusive: choose one");
    gpuopt_context *ctx = NULL;
    char *text = NULL;
    cJSON *root = NULL;
    rc = cli_context_json("devices", backends, 1, gpuopt_context_to_json, "cannot list devices",
                          !json, &ctx, &text, &root);
    if (rc == CLI_OK) {
        if (json)
            printf("%s\n", text);
        else if (list)
            print_list(root);
        else
            print_table(root);
    }
    cJSON_Delete(root);
    gpuopt_free(text);
    gpuopt_context_destroy(ctx);
    return rc;
}

const cli_command cli_devices = {
    "devices", "list backends and devices; mark the selected one",
    "usage: gpuopt devices [-j|--json | -l|--list] [-b|--backend LIST]\n\n"
    "Lists every backend (with why it is unavailable, the library it loaded and its\n"
    "versions) and every device, a physical device once even when several backends\n"
    "reach it. '*' marks the device GPUOPT_DEVICE (default \"auto\") selects, and the\n"
    "last line says why (docs/selection.md). A device the compiler found no longer\n"
    "targets carries a warning.\n\n"
    "  -j, --json           one JSON object: {gpuopt_version, backends, devices, selection}\n"
    "                       (docs/json.md)\n"
    "  -l, --list           one line per device: ID  NAME  (UUID: ...), like nvidia-smi -L\n"
    "  -b, --backend LIST   only these backends, like GPUOPT_BACKEND (auto, cpu, opencl, ...)\n",
    run};
