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

static void print_device(const cJSON *d)
{
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(d, "arch");
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(d, "selected");
    const char *routes = str(d, "routes");
    printf("  %c %-11s %s\n", cJSON_IsTrue(sel) ? '*' : ' ', str(d, "id"),
           str(d, "name") ? str(d, "name") : "(unnamed)");
    printf("    %-12s", "");
    const char *fam = str(arch, "family"), *an = str(arch, "name"), *cc = str(arch, "compute_capability");
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
        printf("    %-12splatform: %s\n", "", str(ocl, "platform_name"));
    if (str(d, "pci_bus_id") || str(d, "uuid"))
        printf("    %-12s%s%s%s\n", "", str(d, "pci_bus_id") ? str(d, "pci_bus_id") : "",
               str(d, "pci_bus_id") && str(d, "uuid") ? "  " : "", str(d, "uuid") ? str(d, "uuid") : "");
    if (routes && strchr(routes, ','))
        printf("    %-12salso reachable through: %s\n", "", strchr(routes, ',') + 1);
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(d, "warnings"))
    {
        if (cJSON_IsString(w))
            printf("    %-12swarning: %s\n", "", w->valuestring);
    }
#undef SEP
}

static void print_table(const cJSON *root)
{
    const cJSON *backends = cJSON_GetObjectItemCaseSensitive(root, "backends");
    const cJSON *devices = cJSON_GetObjectItemCaseSensitive(root, "devices");
    const cJSON *b;
    cJSON_ArrayForEach(b, backends)
    {
        const char *name = str(b, "name"), *status = str(b, "status");
        printf("%-7s %s", name, status);
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
            printf("        library: %s\n", str(b, "library"));
        if (str(b, "reason"))
            printf("        %s\n", str(b, "reason"));
        int shown = 0;
        const cJSON *d;
        cJSON_ArrayForEach(d, devices)
        {
            if (str(d, "backend") && strcmp(str(d, "backend"), name) == 0) {
                print_device(d);
                shown++;
            }
        }
        if (!shown && status && strcmp(status, "available") == 0)
            printf("        no devices\n");
    }
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(root, "selection");
    if (str(sel, "device"))
        printf("\n* selected by policy \"%s\": %s\n", str(sel, "policy"),
               str(sel, "reason") ? str(sel, "reason") : str(sel, "device"));
    else if (str(sel, "error"))
        printf("\nno device selected: %s\n", str(sel, "error"));
}

static int run(int argc, char **argv)
{
    int json = 0;
    const char *backends = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
            backends = argv[++i];
        else
            return cli_usage_error("devices",
                                   "unknown option '%s'; accepted: --json, --backend LIST, --help",
                                   argv[i]);
    }
    gpuopt_context *ctx = NULL;
    char *text = NULL;
    cJSON *root = NULL;
    int rc = CLI_OK;
    gpuopt_status st = cli_context(backends, &ctx);
    if (st)
        return cli_fail("devices", "cannot create a context", st);
    st = gpuopt_context_to_json(ctx, &text);
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
    print_table(root);
out:
    cJSON_Delete(root);
    gpuopt_free(text);
    gpuopt_context_destroy(ctx);
    return rc;
}

const cli_command cli_devices = {
    "devices", "list backends and devices; mark the selected one",
    "usage: gpuopt devices [--json] [--backend LIST]\n\n"
    "Lists every backend (with why it is unavailable, the library it loaded and its\n"
    "versions) and every device, a physical device once even when several backends\n"
    "reach it. '*' marks the device GPUOPT_DEVICE (default \"auto\") selects, and the\n"
    "last line says why (docs/selection.md). A device the compiler found no longer\n"
    "targets carries a warning.\n\n"
    "  --json           one JSON object: {gpuopt_version, backends, devices, selection}\n"
    "                   (docs/json.md)\n"
    "  --backend LIST   only these backends, like GPUOPT_BACKEND (auto, cpu, opencl, ...)\n",
    run};
