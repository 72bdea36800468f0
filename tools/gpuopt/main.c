/* gpuopt: the command-line face of libgpuopt. Every subcommand goes through
 * the public API only, so the CLI is also the library's first user. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_command *const commands[] = {
#define CLI_COMMAND(name) &cli_##name,
#include "commands.def"
#undef CLI_COMMAND
};
static const size_t n_commands = sizeof commands / sizeof commands[0];

static void print_usage(FILE *out)
{
    fprintf(out, "usage: gpuopt COMMAND [OPTIONS] [ARGS]\n"
                 "       gpuopt -h|--help | -V|--version\n\n"
                 "Which compute devices are here, which one to use, and how to set work up "
                 "for it.\n\nCommands:\n");
    for (size_t i = 0; i < n_commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "  %-10s %s\n", "help", "show help for a command");
    fprintf(out, "\n'gpuopt COMMAND --help' describes a command; 'man gpuopt' all of them.\n"
                 "Options take '--name value' or '--name=value'; '--' ends them. Settings\n"
                 "come from GPUOPT_* environment variables and the config file (gpuopt(1)).\n"
                 "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gpuopt%s%s: ", cmd && *cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return CLI_USAGE;
}

int cli_fail(const char *cmd, const char *what, gpuopt_status st)
{
    /* The library's own words say what failed; its status description
     * ("input/output error") only when it has none. */
    const char *detail = gpuopt_last_error();
    fprintf(stderr, "gpuopt %s: %s: %s\n", cmd, what, *detail ? detail : gpuopt_strerror(st));
    return st == GPUOPT_ERR_INVALID_ARGUMENT || st == GPUOPT_ERR_CONFIG ||
                   st == GPUOPT_ERR_OUT_OF_RANGE
               ? CLI_USAGE
               : CLI_FAIL;
}

void cli_format_ns(double ns, char *out, size_t cap)
{
    if (!(ns >= 0))
        snprintf(out, cap, "-");
    else if (ns < 1e3)
        snprintf(out, cap, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(out, cap, "%.3g us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(out, cap, "%.3g ms", ns / 1e6);
    else
        snprintf(out, cap, "%.3g s", ns / 1e9);
}

void cli_format_bytes(double b, char *out, size_t cap)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (b >= 1024 && u < 5) {
        b /= 1024;
        u++;
    }
    snprintf(out, cap, "%.*f %s", u ? 1 : 0, b, unit[u]);
}

int cli_widest(const cJSON *array, const char *key, int min)
{
    int w = min;
    const cJSON *e;
    cJSON_ArrayForEach(e, array)
    {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
        if (cJSON_IsString(v) && (int)strlen(v->valuestring) > w)
            w = (int)strlen(v->valuestring);
    }
    return w;
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < n_commands; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

static int unknown_command(const char *name)
{
    const char *names[sizeof commands / sizeof commands[0] + 1];
    for (size_t i = 0; i < n_commands; i++)
        names[i] = commands[i]->name;
    names[n_commands] = "help";
    const char *near = cli_nearest(name, strlen(name), names, n_commands + 1);
    if (near)
        return cli_usage_error(NULL, "unknown command '%s'; did you mean '%s'?", name, near);
    cli_usage_error(NULL, "unknown command '%s'", name);
    print_usage(stderr);
    return CLI_USAGE;
}

static const cli_option options[] = {{"help", 'h', NULL, NULL}, {"version", 'V', NULL, NULL}, {0}};

int main(int argc, char **argv)
{
    cli_parser p;
    cli_parser_init(&p, NULL, options, 1);
    int o;
    while ((o = cli_parser_next(&p, argc, argv)) != CLI_OPTS_END) {
        if (o == 'h') {
            print_usage(stdout);
            return CLI_OK;
        }
        if (o == 'V')
            return cli_version.run(1, (char *[]){(char *)"version", NULL});
        return p.status;
    }
    if (p.operands >= argc) {
        print_usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[p.operands];
    if (strcmp(name, "help") == 0) {
        if (p.operands + 1 >= argc) {
            print_usage(stdout);
            return CLI_OK;
        }
        const cli_command *c = find_command(argv[p.operands + 1]);
        if (!c)
            return unknown_command(argv[p.operands + 1]);
        fputs(c->usage, stdout);
        return CLI_OK;
    }
    const cli_command *c = find_command(name);
    if (!c)
        return unknown_command(name);
    return c->run(argc - p.operands, argv + p.operands);
}
