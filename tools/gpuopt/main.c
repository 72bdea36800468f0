/* gpuopt: the command-line face of libgpuopt. Every subcommand goes through
 * the public API only, so the CLI is also the library's first user. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_command *const commands[] = {&cli_cache, &cli_devices, &cli_doctor, &cli_memory,
                                              &cli_plan,  &cli_tune,    &cli_version};
static const size_t n_commands = sizeof commands / sizeof commands[0];

static void print_usage(FILE *out)
{
    fprintf(out, "usage: gpuopt COMMAND [OPTIONS]\n\n"
                 "Which compute devices are here, which one to use, and how to set work up "
                 "for it.\n\nCommands:\n");
    for (size_t i = 0; i < n_commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "  %-10s %s\n", "help", "show help for a command");
    fprintf(out, "\n'gpuopt COMMAND --help' describes a command. Settings come from "
                 "GPUOPT_* environment\nvariables and the config file (see docs/config.md).\n"
                 "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gpuopt%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return CLI_USAGE;
}

int cli_fail(const char *cmd, const char *what, gpuopt_status st)
{
    const char *detail = gpuopt_last_error();
    fprintf(stderr, "gpuopt %s: %s: %s%s%s\n", cmd, what, gpuopt_strerror(st), *detail ? ": " : "",
            detail);
    return st == GPUOPT_ERR_INVALID_ARGUMENT || st == GPUOPT_ERR_CONFIG ||
                   st == GPUOPT_ERR_OUT_OF_RANGE ?
               CLI_USAGE :
               CLI_FAIL;
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

int cli_is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

gpuopt_status cli_context(const char *backends, gpuopt_context **ctx)
{
    gpuopt_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.backends = backends;
    return gpuopt_context_create(&opts, ctx);
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < n_commands; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (cli_is_help(name)) {
        print_usage(stdout);
        return CLI_OK;
    }
    if (strcmp(name, "--version") == 0)
        name = "version";
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            print_usage(stdout);
            return CLI_OK;
        }
        const cli_command *c = find_command(argv[2]);
        if (!c)
            return cli_usage_error(NULL, "no command '%s'; run 'gpuopt --help' for the list",
                                   argv[2]);
        fputs(c->usage, stdout);
        return CLI_OK;
    }
    const cli_command *c = find_command(name);
    if (!c) {
        cli_usage_error(NULL, "unknown command '%s'", name);
        print_usage(stderr);
        return CLI_USAGE;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (cli_is_help(argv[i])) {
            fputs(c->usage, stdout);
            return CLI_OK;
        }
    }
    return c->run(argc - 1, argv + 1);
}
