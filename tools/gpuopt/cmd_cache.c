/* gpuopt cache: the tuning cache for people. list, show KEY, verify, clear
 * and path over gpuopt_cache_*; the tables are rendered from the same JSON
 * that --json prints.
 *
 * KEY is a record's key as the cache file stores it: 16 hex digits, the hash
 * of the record's hard key (kind, backend, architecture, compute units,
 * source, options and space hashes, workload). `gpuopt cache list` prints
 * it first on each line; any unique prefix of at least 4 digits will do. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

static void fmt_when(double t, char *out, size_t cap)
{
    if (!(t > 0)) {
        snprintf(out, cap, "-");
        return;
    }
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d %H:%M:%SZ", &tm))
        snprintf(out, cap, "%.0f", t);
}

/* {"MWG":64,"SA":"on"} as "MWG=64 SA=on". */
static void fmt_params(const cJSON *params, char *out, size_t cap)
{
    size_t off = 0;
    out[0] = '\0';
    const cJSON *p;
    cJSON_ArrayForEach(p, params)
    {
        int w;
        if (cJSON_IsString(p))
            w = snprintf(out + off, cap - off, "%s%s=%s", off ? " " : "", p->string,
                         p->valuestring);
        else
            w = snprintf(out + off, cap - off, "%s%s=%.17g", off ? " " : "", p->string,
                         p->valuedouble);
        if (w < 0 || (size_t)w >= cap - off)
            break;
        off += (size_t)w;
    }
}

/* The cache's listing: printed as it is with `json` (*out stays NULL), else
 * parsed into *out. Returns the exit status, or CLI_OK. */
static int get_listing(gpuopt_context *ctx, int json, cJSON **out)
{
    char *text = NULL;
    gpuopt_status st = gpuopt_cache_list(ctx, &text);
    if (!st && json)
        printf("%s\n", text);
    else if (!st && !(*out = cJSON_Parse(text)))
        st = GPUOPT_ERR_NO_MEMORY;
    gpuopt_free(text);
    return st ? cli_fail("cache", "cannot list the cache", st) : CLI_OK;
}

static void print_entry_line(const cJSON *e)
{
    const cJSON *hard = cJSON_GetObjectItemCaseSensitive(e, "hard");
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(e, "best");
    char params[512] = "", t[32], when[32];
    cli_format_ns(cli_num(best, "median_ns", -1), t, sizeof t);
    fmt_when(cli_num(e, "time", 0), when, sizeof when);
    if (cJSON_IsObject(best))
        fmt_params(cJSON_GetObjectItemCaseSensitive(best, "params"), params, sizeof params);
    else if (cJSON_GetObjectItemCaseSensitive(e, "payload") &&
             !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(e, "payload")))
        snprintf(params, sizeof params, "(measurement)");
    else
        snprintf(params, sizeof params, "(no valid candidate)");
    printf("  %-16s %-9s %-10s %s  %s  [%s]\n", or_dash(cli_str(e, "key")),
           or_dash(cli_str(hard, "kind")), t, params, or_dash(cli_str(hard, "workload")), when);
}

static int cmd_list(gpuopt_context *ctx, int json)
{
    cJSON *o = NULL;
    int rc = get_listing(ctx, json, &o);
    if (rc || json)
        return rc;
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(o, "files");
    printf("Tuning cache: %s\n", or_dash(cli_str(o, "dir")));
    int n = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, files)
    {
        const cJSON *dev = cJSON_GetObjectItemCaseSensitive(f, "device");
        const cJSON *entries = cJSON_GetObjectItemCaseSensitive(f, "entries");
        const cJSON *unf = cJSON_GetObjectItemCaseSensitive(f, "unfinished");
        printf("\n%s  (%s; %s, %d entries, %d unfinished, %.0f bytes)\n",
               or_dash(cli_str(f, "file")), or_dash(cli_str(dev, "name")),
               or_dash(cli_str(f, "status")), cJSON_GetArraySize(entries), cJSON_GetArraySize(unf),
               cli_num(f, "bytes", 0));
        const cJSON *e;
        cJSON_ArrayForEach(e, entries)
        {
            print_entry_line(e);
            n++;
        }
    }
    if (!n)
        printf("  (no entries)\n");
    cJSON_Delete(o);
    return CLI_OK;
}

static int is_hex_prefix(const char *k)
{
    size_t n = strlen(k);
    if (n < 4 || n > 16)
        return 0;
    for (const char *c = k; *c; c++)
        if (!isxdigit((unsigned char)*c))
            return 0;
    return 1;
}

static void print_stats(const char *label, const cJSON *c)
{
    if (!cJSON_IsObject(c)) {
        printf("  %-13s -\n", label);
        return;
    }
    char params[1024], med[32], p20[32], p80[32], mn[32];
    fmt_params(cJSON_GetObjectItemCaseSensitive(c, "params"), params, sizeof params);
    cli_format_ns(cli_num(c, "median_ns", -1), med, sizeof med);
    cli_format_ns(cli_num(c, "p20_ns", -1), p20, sizeof p20);
    cli_format_ns(cli_num(c, "p80_ns", -1), p80, sizeof p80);
    cli_format_ns(cli_num(c, "min_ns", -1), mn, sizeof mn);
    printf("  %-13s %s\n", label, params);
    printf("  %-13s median %s (p20 %s, p80 %s, min %s; %.0f runs)", "", med, p20, p80, mn,
           cli_num(c, "runs", 0));
    if (cli_num(c, "compile_ms", -1) >= 0)
        printf(", built in %.0f ms", cli_num(c, "compile_ms", -1));
    printf("\n");
}

/* The winner and the runner-up by their medians from the side-by-side
 * re-timing, fastest first: the winner is kept unless beaten beyond noise,
 * so a runner-up may be faster by less than that. */
static void print_finalists(const cJSON *best, const cJSON *runner)
{
    if (!cJSON_IsObject(best)) {
        printf("  %-13s none: no candidate was valid (a lookup tunes again)\n", "best");
        return;
    }
    double b = cli_num(best, "median_ns", -1), r = cli_num(runner, "median_ns", -1);
    if (cJSON_IsObject(runner) && r >= 0 && r < b) {
        print_stats("runner-up", runner);
        print_stats("best", best);
        printf("  %-13s the runner-up's lead is within noise: the incumbent was kept\n", "");
        return;
    }
    print_stats("best", best);
    print_stats("runner-up", runner);
}

static int cmd_show(gpuopt_context *ctx, const char *key, int json)
{
    char lower[17];
    if (!is_hex_prefix(key))
        return cli_usage_error("cache",
                               "show %s: accepted a record key, 4 to 16 hex digits, as "
                               "the first column of 'gpuopt cache list' shows",
                               key);
    size_t n = strlen(key);
    for (size_t i = 0; i <= n; i++)
        lower[i] = (char)tolower((unsigned char)key[i]);
    cJSON *o = NULL;
    int rc = get_listing(ctx, 0, &o);
    if (rc)
        return rc;
    const cJSON *found = NULL, *found_file = NULL, *f;
    int matches = 0;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(o, "files"))
    {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(f, "entries"))
        {
            const char *k = cli_str(e, "key");
            if (k && strncmp(k, lower, n) == 0) {
                /* The same key in two device files is two records. */
                matches++;
                found = e;
                found_file = f;
            }
        }
    }
    if (matches != 1) {
        fprintf(stderr, "gpuopt cache: show %s: %s\n", key,
                matches ? "more than one record starts with it; give more digits"
                        : "no record has this key ('gpuopt cache list' shows the keys)");
        rc = matches ? CLI_USAGE : CLI_FAIL;
        goto out;
    }
    if (json) {
        char *text = cJSON_PrintUnformatted(found);
        printf("%s\n", text ? text : "null");
        free(text);
        goto out;
    }
    const cJSON *hard = cJSON_GetObjectItemCaseSensitive(found, "hard");
    const cJSON *soft = cJSON_GetObjectItemCaseSensitive(found, "soft");
    const cJSON *budget = cJSON_GetObjectItemCaseSensitive(found, "budget");
    char when[32], used[32];
    fmt_when(cli_num(found, "time", 0), when, sizeof when);
    fmt_when(cli_num(found, "used", 0), used, sizeof used);
    printf("Record %s in %s\n", or_dash(cli_str(found, "key")),
           or_dash(cli_str(found_file, "file")));
    printf(" hard key (any change is a miss)\n");
    static const char *const hard_keys[] = {"kind",    "backend", "arch",    "source",
                                            "options", "space",   "workload"};
    for (size_t i = 0; i < sizeof hard_keys / sizeof *hard_keys; i++)
        printf("  %-13s %s\n", hard_keys[i], or_dash(cli_str(hard, hard_keys[i])));
    printf("  %-13s %.0f\n", "compute_units", cli_num(hard, "compute_units", -1));
    printf(" soft fields (a change re-verifies the winner)\n");
    static const char *const soft_keys[] = {"driver", "compiler", "library", "device_name"};
    for (size_t i = 0; i < sizeof soft_keys / sizeof *soft_keys; i++)
        printf("  %-13s %s\n", soft_keys[i], or_dash(cli_str(soft, soft_keys[i])));
    printf(" search\n");
    printf("  %-13s %s, seed %s, budget %.0f candidates / %.0f s / %.0f failures\n", "strategy",
           or_dash(cli_str(found, "strategy")), or_dash(cli_str(found, "seed")),
           cli_num(budget, "max_evaluations", 0), cli_num(budget, "max_seconds", 0),
           cli_num(budget, "max_failures", 0));
    printf("  %-13s %.0f candidates, %s, %.1f s\n", "evaluated", cli_num(found, "evaluated", 0),
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(found, "complete")) ? "complete"
                                                                             : "stopped early",
           cli_num(found, "wall_s", 0));
    printf("  %-13s %s (last used %s)\n", "measured", when, used);
    printf(" result\n");
    print_finalists(cJSON_GetObjectItemCaseSensitive(found, "best"),
                    cJSON_GetObjectItemCaseSensitive(found, "runner_up"));
    const cJSON *payload = cJSON_GetObjectItemCaseSensitive(found, "payload");
    if (payload && !cJSON_IsNull(payload)) {
        char *text = cJSON_PrintUnformatted(payload);
        printf("  %-13s %s\n", "payload", text ? text : "?");
        free(text);
    }
out:
    cJSON_Delete(o);
    return rc;
}

static int cmd_verify(gpuopt_context *ctx, int json)
{
    char *text = NULL;
    gpuopt_status st = gpuopt_cache_verify(ctx, &text);
    if (st)
        return cli_fail("cache", "cannot verify the cache", st);
    cJSON *o = cJSON_Parse(text);
    int ok = o && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"));
    if (json) {
        printf("%s\n", text);
    } else if (o) {
        printf("Tuning cache: %s: %s\n", or_dash(cli_str(o, "dir")), ok ? "ok" : "PROBLEMS");
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(o, "files"))
        {
            const char *detail = cli_str(f, "detail");
            printf("  %-60s %-13s %.0f entries, %.0f candidates, %.0f unfinished%s%s\n",
                   or_dash(cli_str(f, "file")), or_dash(cli_str(f, "status")),
                   cli_num(f, "entries", 0), cli_num(f, "candidates", 0),
                   cli_num(f, "unfinished", 0), detail && *detail ? ": " : "",
                   detail ? detail : "");
        }
        const cJSON *s;
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(o, "set_aside"))
            printf("  set aside: %s\n", cJSON_IsString(s) ? s->valuestring : "?");
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(o, "stale_temp"))
            printf("  stale temporary file: %s\n", cJSON_IsString(s) ? s->valuestring : "?");
    }
    cJSON_Delete(o);
    gpuopt_free(text);
    return ok ? CLI_OK : CLI_FAIL;
}

static int cmd_clear(gpuopt_context *ctx, gpuopt_device *dev)
{
    gpuopt_status st;
    if ((st = gpuopt_cache_clear(ctx, dev)))
        return cli_fail("cache", "cannot clear the cache", st);
    char *dir = NULL;
    gpuopt_cache_path(ctx, &dir);
    if (dev) {
        gpuopt_device_info info = {.struct_size = sizeof info};
        gpuopt_device_get_info(dev, &info);
        printf("Cleared the tuning cache of %s in %s\n", info.id, dir ? dir : "?");
    } else {
        printf("Cleared the tuning cache in %s\n", dir ? dir : "?");
    }
    gpuopt_free(dir);
    return CLI_OK;
}

static int cmd_export(gpuopt_context *ctx, gpuopt_device *dev)
{
    char *text = NULL;
    gpuopt_status st;
    if ((st = gpuopt_cache_export(ctx, dev, &text)))
        return cli_fail("cache", "cannot export the cache", st);
    int ok = fputs(text, stdout) >= 0 && fflush(stdout) == 0;
    gpuopt_free(text);
    if (!ok) {
        fprintf(stderr, "gpuopt cache: export: cannot write the export to standard output\n");
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* An export is at most this long: four times a cache file's read limit. */
#define IMPORT_MAX (256u << 20)

static int cmd_import(gpuopt_context *ctx, const char *file, int all, int json)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        fprintf(stderr, "gpuopt cache: import %s: cannot be opened: %s\n", file, strerror(errno));
        return CLI_FAIL;
    }
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap || cap >= IMPORT_MAX)
            break;
        char *more = realloc(buf, cap * 2);
        if (!more) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = more;
        cap *= 2;
    }
    int err = ferror(f), big = buf && len == cap && cap >= IMPORT_MAX;
    fclose(f);
    if (!buf || err || big) {
        fprintf(stderr, "gpuopt cache: import %s: %s\n", file,
                !buf  ? "out of memory"
                : err ? "cannot be read"
                      : "larger than 256 MiB, more than any export");
        free(buf);
        return CLI_FAIL;
    }
    char *report = NULL;
    gpuopt_status st =
        gpuopt_cache_import(ctx, buf, len, all ? GPUOPT_CACHE_IMPORT_ALL : 0, &report);
    free(buf);
    if (st)
        return cli_fail("cache", "cannot import", st);
    if (json) {
        printf("%s\n", report);
        gpuopt_free(report);
        return CLI_OK;
    }
    cJSON *o = cJSON_Parse(report);
    gpuopt_free(report);
    const cJSON *e;
    printf("Imported %.0f records (%.0f kept: the local one is as new or newer)\n",
           cli_num(o, "imported", 0), cli_num(o, "kept_newer", 0));
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(o, "files"))
    {
        if (cli_str(e, "skipped"))
            printf("  %s: %.0f records skipped: %s (--all imports them as they are)\n",
                   or_dash(cli_str(e, "device")), cli_num(e, "records", 0), cli_str(e, "skipped"));
        else
            printf("  %s: %.0f of %.0f records into %s\n", or_dash(cli_str(e, "device")),
                   cli_num(e, "imported", 0), cli_num(e, "records", 0),
                   or_dash(cli_str(e, "file")));
    }
    cJSON_Delete(o);
    return CLI_OK;
}

static int run(int argc, char **argv)
{
    const char *sub = NULL, *key = NULL, *device = NULL;
    int json = 0, all = 0;
    const cli_option options[] = {
        {"json", 'j', NULL, &json},
        {"device", 'd', "SPEC", &device},
        {"all", 'a', NULL, &all},
        {"help", 'h', NULL, NULL},
        {0},
    };
    cli_parser p;
    cli_parser_init(&p, &cli_cache, options, 0);
    if (cli_parser_next(&p, argc, argv) != CLI_OPTS_END)
        return p.status;
    for (int i = p.operands; i < argc; i++) {
        if (!sub)
            sub = argv[i];
        else if (!key && (strcmp(sub, "show") == 0 || strcmp(sub, "import") == 0))
            key = argv[i];
        else
            return cli_usage_error("cache", "unexpected argument '%s'", argv[i]);
    }
    static const char accepted[] =
        "accepted: list, show KEY, verify, clear, path, export, import FILE";
    if (!sub)
        return cli_usage_error("cache", "missing what to do; %s", accepted);
    static const char *const subs[] = {"list", "show",   "verify", "clear",
                                       "path", "export", "import"};
    int known = 0;
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++)
        known |= !strcmp(sub, subs[i]);
    if (!known) {
        const char *near = cli_nearest(sub, strlen(sub), subs, sizeof subs / sizeof *subs);
        if (near)
            return cli_usage_error("cache", "'%s' is not accepted; did you mean '%s'?", sub, near);
        return cli_usage_error("cache", "'%s' is not accepted; %s", sub, accepted);
    }
    if (!strcmp(sub, "show") && !key)
        return cli_usage_error("cache", "show needs a KEY (the first column of 'gpuopt cache "
                                        "list')");
    if (!strcmp(sub, "import") && !key)
        return cli_usage_error("cache", "import needs a FILE (written by 'gpuopt cache export')");
    if (device && strcmp(sub, "clear") != 0 && strcmp(sub, "export") != 0)
        return cli_usage_error("cache", "--device goes with clear and export only");
    if (all && strcmp(sub, "import") != 0)
        return cli_usage_error("cache", "--all goes with import only");
    if (json && (!strcmp(sub, "clear") || !strcmp(sub, "path") || !strcmp(sub, "export")))
        return cli_usage_error("cache", "--json goes with list, show, verify and import");
    gpuopt_context *ctx = NULL;
    int rc = cli_context("cache", NULL, NULL, 0, &ctx);
    if (rc)
        return rc;
    /* Only clear and export take --device (checked above). */
    gpuopt_device *dev = NULL;
    gpuopt_status st;
    if (device && (st = gpuopt_device_select(ctx, device, &dev))) {
        rc = cli_fail("cache", "--device", st);
    } else if (!strcmp(sub, "path")) {
        char *dir = NULL;
        st = gpuopt_cache_path(ctx, &dir);
        rc = st ? cli_fail("cache", "no cache path", st) : CLI_OK;
        if (!st)
            printf("%s\n", dir);
        gpuopt_free(dir);
    } else if (!strcmp(sub, "list")) {
        rc = cmd_list(ctx, json);
    } else if (!strcmp(sub, "show")) {
        rc = cmd_show(ctx, key, json);
    } else if (!strcmp(sub, "verify")) {
        rc = cmd_verify(ctx, json);
    } else if (!strcmp(sub, "export")) {
        rc = cmd_export(ctx, dev);
    } else if (!strcmp(sub, "import")) {
        rc = cmd_import(ctx, key, all, json);
    } else {
        rc = cmd_clear(ctx, dev);
    }
    gpuopt_context_destroy(ctx);
    return rc;
}

const cli_command cli_cache = {
    "cache", "list, show, verify, clear, export or import the tuning cache",
    "usage: gpuopt cache list [-j|--json]\n"
    "       gpuopt cache show KEY [-j|--json]\n"
    "       gpuopt cache verify [-j|--json]\n"
    "       gpuopt cache clear [-d|--device SPEC]\n"
    "       gpuopt cache path\n"
    "       gpuopt cache export [-d|--device SPEC] > FILE\n"
    "       gpuopt cache import FILE [-a|--all] [-j|--json]\n"
    "\n"
    "The tuning cache keeps what gpuopt tune and level-2 plans measured, one file per\n"
    "device under GPUOPT_CACHE_DIR (default $XDG_CACHE_HOME/gpuopt; docs/tuning.md).\n"
    "\n"
    "  list     every record: its KEY, kind, best time, best configuration, workload, date\n"
    "  show     one record in detail: hard key, soft fields, search settings, best and\n"
    "           runner-up with their statistics. KEY is the record's key, 16 hex digits\n"
    "           (the hash of its hard key), as list prints it; a unique prefix of at least\n"
    "           4 digits will do\n"
    "  verify   checks every line of every file and rewrites nothing; exit status 1 when\n"
    "           a file or a line of it is corrupt, of an older schema or unreadable\n"
    "  clear    removes every file the cache made (--device SPEC: only that device's);\n"
    "           nothing else in the directory is touched\n"
    "  path     the cache directory\n"
    "  export   the finished records of every device (--device SPEC: of one) on standard\n"
    "           output, each file's with its device fingerprint\n"
    "  import   an export into this cache: each file's records into the file of a device\n"
    "           here with the same backend, architecture and compute units (--all: also\n"
    "           the others, as they are, for a shared directory); a newer local record is\n"
    "           kept; a cut or damaged export imports nothing\n"
    "\n"
    "Exit status: 0 success, 1 failure (show: no such record; verify: problems found),\n"
    "2 usage error.\n",
    run};
