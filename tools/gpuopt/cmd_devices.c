/* gpuopt devices: backends and devices, as a table for people (rendered from
 * the same JSON that --json prints, so the two never disagree). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static void print_bytes(double b)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    printf("%.*f %s", u ? 1 : 0, b, unit[u]);
}

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
    const char *routes = str(d, "routes");
    printf("  %c %-*s %s\n", cJSON_IsTrue(sel) ? '*' : ' ', idw, str(d, "id"),
           str(d, "name") ? str(d, "name") : "(unnamed)");
    printf("    %-*s", idw + 1, "");
    const char *fam = str(arch, "family"), *an = str(arch, "name"),
               *cc = str(arch, "compute_capability");
    int first = 1;
#define SEP() (first ? (first = 0, "") : ", ")
    printf("%s%s", SEP(), str(d, "type") ? str(d, "type") : "device");
    if (fam || an)
        printf("%s%s%s%s", SEP(), fam ? fam : "", fam && an ? " " : "", an ? an : "");
    if (cc)
        printf(" (compute capability %s)", cc);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(arch, "extrapolated")))
        printf(" [newer than the tables: extrapolated]");
    if (num(d, "compute_units", -1) >= 0)
        printf("%s%.0f compute units", SEP(), num(d, "compute_units", 0));
    if (num(d, "simd_width", -1) > 0)
        printf("%sSIMD %.0f", SEP(), num(d, "simd_width", 0));
    if (num(d, "clock_mhz", -1) > 0)
        printf("%s%.0f MHz", SEP(), num(d, "clock_mhz", 0));
    if (num(d, "memory_bytes", 0) > 0) {
        printf("%s", SEP());
        print_bytes(num(d, "memory_bytes", 0));
    }
    printf("\n");
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(d, "details");
    const cJSON *ocl = cJSON_GetObjectItemCaseSensitive(details, "opencl");
    if (str(ocl, "platform_name"))
        printf("    %-*splatform: %s\n", idw + 1, "", str(ocl, "platform_name"));
    if (str(d, "pci_bus_id") || str(d, "uuid"))
        printf("    %-*s%s%s%s\n", idw + 1, "", str(d, "pci_bus_id") ? str(d, "pci_bus_id") : "",
               str(d, "pci_bus_id") && str(d, "uuid") ? "  " : "",
               str(d, "uuid") ? str(d, "uuid") : "");
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
        const char *name = str(b, "name"), *status = str(b, "status");
        printf("%-*s %s", bw, name, status);
        if (num(b, "init_ms", -1) >= 0)
            printf(" (%.1f ms)", num(b, "init_ms", 0));
        if (str(b, "runtime_version") || str(b, "driver_version")) {
            printf(", ");
            if (str(b, "runtime_version"))
                printf("runtime %s", str(b, "runtime_version"));
            if (str(b, "runtime_version") && str(b, "driver_version"))
                printf(", ");
            if (str(b, "driver_version"))
                printf("driver %s", str(b, "driver_version"));
        }
        printf("\n");
        if (str(b, "library"))
            printf("%-*s library: %s\n", bw, "", str(b, "library"));
        if (str(b, "reason"))
            printf("%-*s %s\n", bw, "", reason_words(str(b, "reason")));
        int shown = 0;
        const cJSON *d;
        cJSON_ArrayForEach(d, devices)
        {
            if (str(d, "backend") && strcmp(str(d, "backend"), name) == 0) {
                print_device(d, idw);
                shown++;
            }
        }
        if (!shown && status && strcmp(status, "available") == 0)
            printf("%-*s no devices\n", bw, "");
    }
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(root, "selection");
    if (str(sel, "device"))
        printf("\n* selected by policy \"%s\": %s\n", str(sel, "policy"),
               str(sel, "reason") ? str(sel, "reason") : str(sel, "device"));
    else if (str(sel, "error"))
        printf("\nno device selected: %s\n", str(sel, "error"));
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
        const char *uuid = str(d, "uuid"), *pci = str(d, "pci_bus_id");
        printf("%-*s  %s", idw, str(d, "id"), str(d, "name") ? str(d, "name") : "(unnamed)");
        if (uuid && *uuid)
            printf("  (UUID: %s)", uuid);
        else if (pci && *pci)
            printf("  (PCI: %s)", pci);
        printf("\n");
    }
}

static const cli_option options[] = {
    {"json", 'j', NULL}, {"backend", 'b', "LIST"}, {"list", 'l', NULL},
    {"help", 'h', NULL}, {NULL, 0, NULL},
};

static int run(int argc, char **argv)
{
    int json = 0, list = 0, o;
    const char *backends = NULL;
    cli_parser p;
    cli_parser_init(&p, &cli_devices, options, 0);
    while ((o = cli_parser_next(&p, argc, argv)) != CLI_OPTS_END) {
        if (o == 'j')
            json = 1;
        else if (o == 'l')
            list = 1;
        else if (o == 'b')
            backends = p.value;
        else
            return p.status;
    }
    if (p.operands < argc)
        return cli_usage_error("devices", "unexpected argument '%s'", argv[p.operands]);
    if (json && list)
        return cli_usage_error("devices", "--json and --list are exclusive: choose one");
    gpuopt_context *ctx = NULL;
    char *text = NULL;
    cJSON *root = NULL;
    int rc = cli_context("devices", backends, NULL, 1, &ctx);
    if (rc)
        return rc;
    gpuopt_status st = gpuopt_context_to_json(ctx, &text);
    if (st) {
        rc = cli_fail("devices", "cannot list devices", st);
        goto out;
    }
    if (json) {
        printf("%s\n", text);
        goto out;
    }
    root = cJSON_Parse(text);
    if (!root) {
        fprintf(stderr, "gpuopt devices: the library returned malformed JSON\n");
        rc = CLI_FAIL;
        goto out;
    }
    if (list)
        print_list(root);
    else
        print_table(root);
out:
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
