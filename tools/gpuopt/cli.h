/* Shared pieces of the gpuopt command: the subcommand table, option
 * parsing helpers and exit codes. */
#ifndef GPUOPT_CLI_H
#define GPUOPT_CLI_H

#include <stddef.h>

#include <gpuopt/gpuopt.h>

/* Exit status: 0 success, 1 runtime failure, 2 usage error. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *usage; /* full --help text */
    int (*run)(int argc, char **argv);
} cli_command;

extern const cli_command cli_cache, cli_devices, cli_doctor, cli_memory, cli_plan, cli_tune,
    cli_version;

/* Prints "gpuopt CMD: message" to stderr and returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints "gpuopt CMD: what: <strerror>: <last error>" and returns CLI_FAIL,
 * or CLI_USAGE when the status says the user's input was malformed. */
int cli_fail(const char *cmd, const char *what, gpuopt_status st);

/* A duration for people: "812 ns", "3.4 us", "1.05 ms", "2.1 s"; "-" when
 * negative or NaN (not measured). */
void cli_format_ns(double ns, char *out, size_t cap);

/* 1 when arg is --help or -h. */
int cli_is_help(const char *arg);

/* Creates a context with the command's overrides (NULL: none). */
gpuopt_status cli_context(const char *backends, gpuopt_context **ctx);

#endif
