/* gpuopt cache: the tuning cache for people. list, show KEY, verify, clear
 * and path over gpuopt_cache_*; the tables are rendered from the same JSON
 * that --json prints.
 *
 * KEY is a record's key as the journal writes it: 16 hex digits, the hash
 * of the record's hard key (kind, backend, architecture, compute units,
 * source, options and space hashes, workload). `gpuopt cache list` prints
 * it first on each line; any unique prefix of at least 4 digits will do. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static gpuopt_status get_listing(gpuopt_context *ctx, cJSON **out)
{
    char *text = NULL;
    gpuopt_status st = gpuopt_cache_list(ctx, &text);
    if (st)
        return st;
    *out = cJSON_Parse(text);
    gpuopt_free(text);
    return *out ? GPUOPT_OK : GPUOPT_ERR_NO_MEMORY;
}

static void print_entry_line(const cJSON *e)
{
    const cJSON *hard = cJSON_GetObjectItemCaseSensitive(e, "hard");
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(e, "best");
    char params[512] = "", t[32], when[32];
    cli_format_ns(num(best, "median_ns", -1), t, sizeof t);
    fmt_when(num(e, "time", 0), when, sizeof when);
    if (cJSON_IsObject(best))
        fmt_params(cJSON_GetObjectItemCaseSensitive(best, "params"), params, sizeof params);
    else if (cJSON_GetObjectItemCaseSensitive(e, "payload") &&
             !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(e, "payload")))
        snprintf(params, sizeof params, "(measurement)");
    else
        snprintf(params, sizeof params, "(no valid candidate)");
    printf("  %-16s %-9s %-10s %s  %s  [%s]\n", or_dash(str(e, "key")), or_dash(str(hard, "kind")),
           t, params, or_dash(str(hard, "workload")), when);
}

static int cmd_list(gpuopt_context *ctx, int json)
{
    char *text = NULL;
    if (json) {
        gpuopt_status st = gpuopt_cache_list(ctx, &text);
        if (st)
            return cli_fail("cache", "cannot list the cache", st);
        printf("%s\n", text);
        gpuopt_free(text);
        return CLI_OK;
    }
    cJSON *o = NULL;
    gpuopt_status st = get_listing(ctx, &o);
    if (st)
        return cli_fail("cache", "cannot list the cache", st);
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(o, "files");
    printf("Tuning cache: %s\n", or_dash(str(o, "dir")));
    int n = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, files)
    {
        const cJSON *dev = cJSON_GetObjectItemCaseSensitive(f, "device");
        const cJSON *entries = cJSON_GetObjectItemCaseSensitive(f, "entries");
        const cJSON *unf = cJSON_GetObjectItemCaseSensitive(f, "unfinished");
        printf("\n%s  (%s; %s, %d entries, %d unfinished, %.0f bytes)\n", or_dash(str(f, "file")),
               or_dash(str(dev, "name")), or_dash(str(f, "status")), cJSON_GetArraySize(entries),
               cJSON_GetArraySize(unf), num(f, "bytes", 0));
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
    cli_format_ns(num(c, "median_ns", -1), med, sizeof med);
    cli_format_ns(num(c, "p20_ns", -1), p20, sizeof p20);
    cli_format_ns(num(c, "p80_ns", -1), p80, sizeof p80);
    cli_format_ns(num(c, "min_ns", -1), mn, sizeof mn);
    printf("  %-13s %s\n", label, params);
    printf("  %-13s median %s (p20 %s, p80 %s, min %s; %.0f runs)", "", med, p20, p80, mn,
           num(c, "runs", 0));
    if (num(c, "compile_ms", -1) >= 0)
        printf(", built in %.0f ms", num(c, "compile_ms", -1));
    printf("\n");
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
    gpuopt_status st = get_listing(ctx, &o);
    if (st)
        return cli_fail("cache", "cannot list the cache", st);
    const cJSON *found = NULL, *found_file = NULL, *f;
    int matches = 0;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(o, "files"))
    {
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(f, "entries"))
        {
            const char *k = str(e, "key");
            if (k && strncmp(k, lower, n) == 0) {
                /* The same key in two device files is two records. */
                matches++;
                found = e;
                found_file = f;
            }
        }
    }
    int rc = CLI_OK;
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
    fmt_when(num(found, "time", 0), when, sizeof when);
    fmt_when(num(found, "used", 0), used, sizeof used);
    printf("Record %s in %s\n", or_dash(str(found, "key")), or_dash(str(found_file, "file")));
    printf(" hard key (any change is a miss)\n");
    static const char *const hard_keys[] = {"kind",    "backend", "arch",    "source",
                                            "options", "space",   "workload"};
    for (size_t i = 0; i < sizeof hard_keys / sizeof *hard_keys; i++)
        printf("  %-13s %s\n", hard_keys[i], or_dash(str(hard, hard_keys[i])));
    printf("  %-13s %.0f\n", "compute_units", num(hard, "compute_units", -1));
    printf(" soft fields (a change re-verifies the winner)\n");
    static const char *const soft_keys[] = {"driver", "compiler", "library", "device_name"};
    for (size_t i = 0; i < sizeof soft_keys / sizeof *soft_keys; i++)
        printf("  %-13s %s\n", soft_keys[i], or_dash(str(soft, soft_keys[i])));
    printf(" search\n");
    printf("  %-13s %s, seed %s, budget %.0f candidates / %.0f s / %.0f failures\n", "strategy",
           or_dash(str(found, "strategy")), or_dash(str(found, "seed")),
           num(budget, "max_evaluations", 0), num(budget, "max_seconds", 0),
           num(budget, "max_failures", 0));
    printf("  %-13s %.0f candidates, %s, %.1f s\n", "evaluated", num(found, "evaluated", 0),
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(found, "complete")) ? "complete"
                                                                             : "stopped early",
           num(found, "wall_s", 0));
    printf("  %-13s %s (last used %s)\n", "measured", when, used);
    printf(" result\n");
    print_stats("best", cJSON_GetObjectItemCaseSensitive(found, "best"));
    print_stats("runner-up", cJSON_GetObjectItemCaseSensitive(found, "runner_up"));
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
        printf("Tuning cache: %s: %s\n", or_dash(str(o, "dir")), ok ? "ok" : "PROBLEMS");
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(o, "files"))
        {
            const char *detail = str(f, "detail");
            printf("  %-60s %-13s %.0f entries, %.0f candidates, %.0f unfinished%s%s\n",
                   or_dash(str(f, "file")), or_dash(str(f, "status")), num(f, "entries", 0),
                   num(f, "candidates", 0), num(f, "unfinished", 0), detail && *detail ? ": " : "",
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

static int cmd_clear(gpuopt_context *ctx, const char *device)
{
    gpuopt_device *dev = NULL;
    gpuopt_status st;
    if (device && (st = gpuopt_device_select(ctx, device, &dev)))
        return cli_fail("cache", "--device", st);
    if ((st = gpuopt_cache_clear(ctx, dev)))
        return cli_fail("cache", "cannot clear the cache", st);
    char *dir = NULL;
    gpuopt_cache_path(ctx, &dir);
    if (dev) {
        gpuopt_device_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        gpuopt_device_get_info(dev, &info);
        printf("Cleared the tuning cache of %s in %s\n", info.id, dir ? dir : "?");
    } else {
        printf("Cleared the tuning cache in %s\n", dir ? dir : "?");
    }
    gpuopt_free(dir);
    return CLI_OK;
}

static const cli_option options[] = {
    {"json", 'j', NULL},
    {"device", 'd', "SPEC"},
    {"help", 'h', NULL},
    {NULL, 0, NULL},
};

static int run(int argc, char **argv)
{
    const char *sub = NULL, *key = NULL, *device = NULL;
    int json = 0, o;
    cli_parser p;
    cli_parser_init(&p, &cli_cache, options, 0);
    while ((o = cli_parser_next(&p, argc, argv)) != CLI_OPTS_END) {
        if (o == 'j')
            json = 1;
        else if (o == 'd')
            device = p.value;
        else
            return p.status;
    }
    for (int i = p.operands; i < argc; i++) {
        if (!sub)
            sub = argv[i];
        else if (!key && strcmp(sub, "show") == 0)
            key = argv[i];
        else
            return cli_usage_error("cache", "unexpected argument '%s'", argv[i]);
    }
    static const char accepted[] = "accepted: list, show KEY, verify, clear, path";
    if (!sub)
        return cli_usage_error("cache", "missing what to do; %s", accepted);
    static const char *const subs[] = {"list", "show", "verify", "clear", "path"};
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
    if (device && strcmp(sub, "clear") != 0)
        return cli_usage_error("cache", "--device goes with clear only");
    if (json && (!strcmp(sub, "clear") || !strcmp(sub, "path")))
        return cli_usage_error("cache", "--json goes with list, show and verify");
    gpuopt_context *ctx = NULL;
    int rc = cli_context("cache", NULL, NULL, 0, &ctx);
    if (rc)
        return rc;
    if (!strcmp(sub, "path")) {
        char *dir = NULL;
        gpuopt_status st = gpuopt_cache_path(ctx, &dir);
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
    } else {
        rc = cmd_clear(ctx, device);
    }
    gpuopt_context_destroy(ctx);
    return rc;
}

const cli_command cli_cache = {
    "cache", "list, show, verify or clear the tuning cache",
    "usage: gpuopt cache list [-j|--json]\n"
    "       gpuopt cache show KEY [-j|--json]\n"
    "       gpuopt cache verify [-j|--json]\n"
    "       gpuopt cache clear [-d|--device SPEC]\n"
    "       gpuopt cache path\n"
    "\n"
    "The tuning cache keeps what gpuopt tune and level-2 plans measured, one journal file\n"
    "per device under GPUOPT_CACHE_DIR (default $XDG_CACHE_HOME/gpuopt; docs/tuning.md).\n"
    "\n"
    "  list     every record: its KEY, kind, best time, best configuration, workload, date\n"
    "  show     one record in detail: hard key, soft fields, search settings, best and\n"
    "           runner-up with their statistics. KEY is the record's key, 16 hex digits\n"
    "           (the hash of its hard key), as list prints it; a unique prefix of at least\n"
    "           4 digits will do\n"
    "  verify   checks every journal line by line and rewrites nothing; exit status 1 when\n"
    "           a file is corrupt, of an older schema or unreadable\n"
    "  clear    removes every journal (--device SPEC: only that device's); nothing else in\n"
    "           the directory is touched\n"
    "  path     the cache directory\n"
    "\n"
    "Exit status: 0 success, 1 failure (show: no such record; verify: problems found),\n"
    "2 usage error.\n",
    run};
