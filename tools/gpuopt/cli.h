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

extern const cli_command cli_cache, cli_devices, cli_doctor, cli_gres, cli_labels, cli_memory,
    cli_plan, cli_tune, cli_version;

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

/* ---- The node's GPUs (cli_node.c), for labels and gres ---------------------- */

struct cJSON;
enum { CLI_NODE_MAX_GPUS = 64 };

typedef struct cli_node {
    gpuopt_context *ctx;
    struct cJSON *root;                          /* gpuopt_context_to_json's document */
    const struct cJSON *gpus[CLI_NODE_MAX_GPUS]; /* its devices of type "gpu", in order */
    int n;
} cli_node;

/* Reads the device list with the command's --backend. Reports its own
 * failure and returns the exit status, or CLI_OK; free with cli_node_free
 * either way. */
int cli_node_read(const char *cmd, const char *backends, cli_node *node);
void cli_node_free(cli_node *node);

/* A string member ("" counts as absent: NULL), a number member (dflt). */
const char *cli_json_str(const struct cJSON *o, const char *key);
double cli_json_num(const struct cJSON *o, const char *key, double dflt);

/* The device's vendor as one word: nvidia, amd, intel, else other. */
const char *cli_vendor_word(const struct cJSON *dev);

#endif
