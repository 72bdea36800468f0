/* gpuopt memory: every device's memory now, in the manner of nvidia-smi's
 * memory columns (total, used, free) with where each reading came from;
 * --watch SECONDS refreshes it like watch(1), --json prints one JSON
 * document per refresh. No driver context is created for a reading
 * (gpuopt_device_memory), so watching costs the GPUs nothing. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char *const source_words[] = {"none",        "management", "kernel", "context",
                                           "new_context", "runtime",    "host"};

static const char *source_word(int32_t s)
{
    return s >= 0 && s <= GPUOPT_MEMORY_SOURCE_HOST ? source_words[s] : "none";
}

typedef struct row {
    gpuopt_device_info info;
    gpuopt_memory_info mem;
} row;

/* One reading of every device (or of `only`); *rows is malloc'd. */
static gpuopt_status read_all(gpuopt_context *ctx, gpuopt_device *only, row **rows, int32_t *n)
{
    int32_t count = 1;
    gpuopt_status st = only ? GPUOPT_OK : gpuopt_device_count(ctx, &count);
    *rows = NULL;
    *n = 0;
    if (st)
        return st;
    row *r = calloc((size_t)(count ? count : 1), sizeof *r);
    if (!r)
        return GPUOPT_ERR_NO_MEMORY;
    for (int32_t i = 0; i < count && !st; i++) {
        gpuopt_device *dev = only;
        if (!dev)
            st = gpuopt_device_at(ctx, i, &dev);
        r[i].info.struct_size = sizeof r[i].info;
        r[i].mem.struct_size = sizeof r[i].mem;
        if (!st)
            st = gpuopt_device_get_info(dev, &r[i].info);
        if (!st)
            st = gpuopt_device_memory(dev, &r[i].mem);
    }
    if (st) {
        free(r);
        return st;
    }
    *rows = r;
    *n = count;
    return GPUOPT_OK;
}

static void print_table(const row *r, int32_t n)
{
    /* The id and name columns fit the longest entry, as in `gpuopt devices`:
     * a long OpenCL device name pushes no row out of line. */
    int idw = 10, nw = 30;
    for (int32_t i = 0; i < n; i++) {
        if ((int)strlen(r[i].info.id) > idw)
            idw = (int)strlen(r[i].info.id);
        if ((int)strlen(r[i].info.name) > nw)
            nw = (int)strlen(r[i].info.name);
    }
    printf("%-*s %-*s %10s %10s %10s %6s  %s\n", idw, "DEVICE", nw, "NAME", "TOTAL", "USED", "FREE",
           "USE%", "SOURCE");
    for (int32_t i = 0; i < n; i++) {
        char t[32], u[32] = "-", f[32] = "-", pct[16] = "-";
        const gpuopt_memory_info *m = &r[i].mem;
        cli_format_bytes((double)m->total_bytes, t, sizeof t);
        if (m->source != GPUOPT_MEMORY_SOURCE_NONE) {
            cli_format_bytes((double)m->used_bytes, u, sizeof u);
            cli_format_bytes((double)m->free_bytes, f, sizeof f);
            if (m->total_bytes)
                snprintf(pct, sizeof pct, "%.1f%%",
                         100.0 * (double)m->used_bytes / (double)m->total_bytes);
        }
        printf("%-*s %-*s %10s %10s %10s %6s  %s", idw, r[i].info.id, nw, r[i].info.name, t, u, f,
               pct, m->source_text);
        if (m->age_s >= 0.05)
            printf(" (%.1f s old)", m->age_s);
        printf("\n");
    }
}

static int print_json(const row *r, int32_t n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *list = root ? cJSON_AddArrayToObject(root, "devices") : NULL;
    int ok = list != NULL;
    for (int32_t i = 0; ok && i < n; i++) {
        const gpuopt_memory_info *m = &r[i].mem;
        int known = m->source != GPUOPT_MEMORY_SOURCE_NONE;
        cJSON *d = cJSON_CreateObject();
        ok = d && cJSON_AddItemToArray(list, d) && cJSON_AddStringToObject(d, "id", r[i].info.id) &&
             cJSON_AddStringToObject(d, "name", r[i].info.name) &&
             cJSON_AddNumberToObject(d, "total_bytes", (double)m->total_bytes) &&
             (known ? cJSON_AddNumberToObject(d, "used_bytes", (double)m->used_bytes) != NULL
                    : cJSON_AddNullToObject(d, "used_bytes") != NULL) &&
             (known ? cJSON_AddNumberToObject(d, "free_bytes", (double)m->free_bytes) != NULL
                    : cJSON_AddNullToObject(d, "free_bytes") != NULL) &&
             cJSON_AddStringToObject(d, "source", source_word(m->source)) &&
             cJSON_AddStringToObject(d, "source_text", m->source_text) &&
             cJSON_AddNumberToObject(d, "age_s", m->age_s);
    }
    char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return -1;
    printf("%s\n", text);
    free(text);
    return 0;
}

static int run(int argc, char **argv)
{
    int json = 0, o;
    long count = 0; /* refreshes; 0: until interrupted */
    double watch = 0;
    const char *backends = NULL, *device = NULL;
    const cli_option options[] = {
        {"watch", 'w', "SECONDS", NULL},
        {"count", 'n', "N", NULL},
        {"device", 'd', "SPEC", &device},
        {"backend", 'b', "LIST", &backends},
        {"json", 'j', NULL, &json},
        {"help", 'h', NULL, NULL},
        {0},
    };
    cli_parser p;
    cli_parser_init(&p, &cli_memory, options, 0);
    while ((o = cli_parser_next(&p, argc, argv)) != CLI_OPTS_END) {
        const char *v = p.value;
        char *end;
        switch (o) {
        case 'w':
            watch = strtod(v, &end);
            if (!*v || *end || !(watch >= 0.1 && watch <= 86400))
                return cli_usage_error("memory", "--watch %s: accepted seconds from 0.1 to 86400",
                                       v);
            break;
        case 'n':
            count = strtol(v, &end, 10);
            if (!*v || *end || count < 1)
                return cli_usage_error("memory", "--count %s: accepted a whole number from 1", v);
            break;
        default: return p.status;
        }
    }
    if (p.operands < argc)
        return cli_usage_error("memory", "unexpected argument '%s'", argv[p.operands]);
    if (count && !watch)
        return cli_usage_error("memory", "--count goes with --watch");
    /* Every device unless --device names one: GPUOPT_DEVICE chooses where
     * work runs, not what this view shows, so only --device selects here. */
    gpuopt_context *ctx = NULL;
    int rc = cli_context("memory", backends, device, device != NULL, &ctx);
    if (rc)
        return rc;
    gpuopt_device *only = NULL;
    gpuopt_status st;
    if (device && (st = gpuopt_device_select(ctx, device, &only)) != GPUOPT_OK) {
        rc = cli_fail("memory", cli_device_origin(), st);
        goto out;
    }
    int tty = isatty(STDOUT_FILENO);
    for (long round = 0; !count || round < count; round++) {
        row *rows = NULL;
        int32_t n = 0;
        st = read_all(ctx, only, &rows, &n);
        if (st) {
            rc = cli_fail("memory", "cannot read the devices' memory", st);
            goto out;
        }
        if (watch && !json) {
            time_t now = time(NULL);
            char when[64] = "";
            struct tm tm;
            if (localtime_r(&now, &tm))
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
            if (tty)
                fputs("\033[H\033[2J", stdout); /* home, clear: as watch(1) redraws */
            printf("Every %.1fs: gpuopt memory%*s%s\n\n", watch, 20, "", when);
        }
        if (json) {
            if (print_json(rows, n)) {
                free(rows);
                rc = cli_fail("memory", "cannot write JSON", GPUOPT_ERR_NO_MEMORY);
                goto out;
            }
        } else {
            print_table(rows, n);
        }
        free(rows);
        fflush(stdout);
        if (!watch || (count && round + 1 >= count))
            break;
        struct timespec ts = {(time_t)watch, (long)((watch - (double)(time_t)watch) * 1e9)};
        nanosleep(&ts, NULL);
    }
out:
    gpuopt_context_destroy(ctx);
    return rc;
}

const cli_command cli_memory = {
    "memory", "show each device's memory now (total, used, free) and where it was read",
    "usage: gpuopt memory [-w SECONDS [-n N]] [-d SPEC] [-b LIST] [-j]\n\n"
    "Reads every device's memory now, without creating a driver context: NVML for\n"
    "NVIDIA GPUs, amdgpu's sysfs counters for AMD GPUs, the driver where a context is\n"
    "already current or active, /proc/meminfo and the cgroup limit for the CPU. The\n"
    "SOURCE column says which answered, or why free memory is unknown.\n\n"
    "  -w, --watch SECONDS  refresh every SECONDS (0.1 to 86400), redrawing like watch(1)\n"
    "  -n, --count N        stop after N refreshes (with --watch)\n"
    "  -d, --device SPEC    only this device (cuda:0, a UUID, a PCI bus id, ...); without\n"
    "                       it every device, whatever GPUOPT_DEVICE says\n"
    "  -b, --backend LIST   only these backends, like GPUOPT_BACKEND\n"
    "  -j, --json           {devices: [{id, name, total_bytes, used_bytes, free_bytes,\n"
    "                       source, source_text, age_s}]}, one line per refresh\n",
    run};
