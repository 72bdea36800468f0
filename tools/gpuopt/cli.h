/* Shared pieces of the gpuopt command: the subcommand table, option
 * parsing, error messages and exit codes. */
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

#define CLI_COMMAND(name) extern const cli_command cli_##name;
#include "commands.def"
#undef CLI_COMMAND

/* Prints "gpuopt CMD: message" to stderr and returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints "gpuopt CMD: what: <the library's words>" (gpuopt_last_error, or
 * the status's description when there are none) and returns CLI_FAIL, or
 * CLI_USAGE when the status says the user's input was malformed. */
int cli_fail(const char *cmd, const char *what, gpuopt_status st);

/* The width of a table column: the longest string `key` of the objects in
 * `array` (a cJSON array), at least `min`, so that a long name never pushes
 * its row out of line. */
struct cJSON;
int cli_widest(const struct cJSON *array, const char *key, int min);

/* A duration for people: "812 ns", "3.4 us", "1.05 ms", "2.1 s"; "-" when
 * negative or NaN (not measured). */
void cli_format_ns(double ns, char *out, size_t cap);

/* Bytes for people: "812 B", "3.5 GiB" (binary units up to PiB). */
void cli_format_bytes(double bytes, char *out, size_t cap);

/* ---- Options (cli_options.c) ------------------------------------------------
 *
 * Every command reads its options with getopt_long(3) through one table:
 * --opt=value and --opt value, -j, clustered short options (-jv), unique
 * prefixes of long names (--lev), `--` ends the options. An option nobody
 * knows gets the nearest name ("did you mean '--level'?"). */

typedef struct cli_option {
    const char *name; /* the long name, without "--" */
    int id;           /* the short letter, or a value >= CLI_LONG for a long-only option */
    const char *arg;  /* the value's name in messages ("LIST"); NULL: a flag */
    /* Where the parser puts the option, for one that needs nothing more: a
     * flag's int becomes 1, a value's const char * points at it. NULL:
     * cli_parser_next returns the option to the caller. */
    void *store;
} cli_option;

enum { CLI_LONG = 256 };

/* What cli_parser_next returns besides an option's id. */
enum {
    CLI_OPTS_END = -1, /* no more options: the operands start at argv[p->operands] */
    CLI_OPTS_EXIT = -2 /* --help printed, or a usage error reported: return p->status */
};

typedef struct cli_parser {
    const cli_command *cmd;    /* whose usage --help prints (NULL: the caller handles 'h') */
    const char *command;       /* its name in messages */
    const cli_option *options; /* ends with an entry whose name is NULL */
    int in_order;              /* options end at the first operand (plan: the command to run) */
    const char *value;         /* the value of the option just returned */
    int operands;              /* index of the first operand, after CLI_OPTS_END */
    int status;                /* the exit status, after CLI_OPTS_EXIT */
} cli_parser;

void cli_parser_init(cli_parser *p, const cli_command *cmd, const cli_option *options,
                     int in_order);

/* The id of the next option (its value in p->value), CLI_OPTS_END or
 * CLI_OPTS_EXIT. A table holding {"help", 'h'} gets --help and -h printed
 * here. */
int cli_parser_next(cli_parser *p, int argc, char **argv);

/* A command without operands whose options all have a store (--help
 * aside): reads them, and refuses an operand. Returns CLI_OPTS_END to go
 * on, else the exit status (CLI_OK after --help). */
int cli_parse(const cli_command *cmd, const cli_option *options, int argc, char **argv);

/* The name among `names` within two edits of word[0..len) (a typo), or
 * NULL. */
const char *cli_nearest(const char *word, size_t len, const char *const *names, size_t n);

/* ---- Context (cli_context.c) ------------------------------------------------ */

/* Creates a context with the command's --backend and, for a command that
 * selects a device (`selects`), the device selector: `device` (--device),
 * else GPUOPT_DEVICE. A command that does not select never reads
 * GPUOPT_DEVICE, nor lets the library warn about it. The command reads GPUOPT_DEVICE as --device's
 * default, so a bad value is the same usage error from either (exit 2);
 * the library alone would warn and select "auto", which suits a program
 * but not a person asking for a device. Reports its own failure and
 * returns the exit status, or CLI_OK. */
int cli_context(const char *cmd, const char *backends, const char *device, int selects,
                gpuopt_context **ctx);

/* cli_context with no --device, then the JSON document `get` writes of the
 * context (gpuopt_context_to_json, gpuopt_context_diagnose): the text in
 * *text and, when `parse` is set, the document in *root. A failure of `get`
 * is "gpuopt CMD: WHAT: ...", one of the parse "the library returned
 * malformed JSON". Returns the exit status, or CLI_OK; whatever was made
 * (*ctx, *text, *root) is the caller's to free, also on failure. */
int cli_context_json(const char *cmd, const char *backends, int selects,
                     gpuopt_status (*get)(gpuopt_context *, char **), const char *what, int parse,
                     gpuopt_context **ctx, char **text, struct cJSON **root);

/* What a selection that fails is said about: the selector as the user wrote
 * it ("--device foo", "GPUOPT_DEVICE=foo"), else "cannot select a device". */
const char *cli_device_origin(void);

/* Puts GPUOPT_DEVICE back as the user had it, for a program gpuopt runs. */
void cli_restore_env(void);

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

/* A string member, else NULL; the same with "" counting as absent; a
 * number member, else dflt. */
const char *cli_str(const struct cJSON *o, const char *key);
const char *cli_json_str(const struct cJSON *o, const char *key);
double cli_num(const struct cJSON *o, const char *key, double dflt);

/* The device's vendor as one word: nvidia, amd, intel, else other. */
const char *cli_vendor_word(const struct cJSON *dev);

#endif
