/* Option parsing for every gpuopt command: getopt_long(3) over one table per
 * command, and the usage errors it leads to, in one style ("gpuopt CMD:
 * unknown option '--levl'; did you mean '--level'?"). The same table gives
 * getopt its long options and short-option string, and the error messages
 * the names a command accepts, so the three never disagree. */
#include <assert.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

enum { MAX_OPTIONS = 32 };

/* Damerau-Levenshtein distance (optimal string alignment) of a and b, for
 * "did you mean": a transposition ("--devcie") counts as one edit. Names
 * longer than 63 characters are never close to anything. */
static size_t edit_distance(const char *a, size_t na, const char *b)
{
    enum { MAX = 64 };
    size_t nb = strlen(b);
    if (na >= MAX || nb >= MAX)
        return (size_t)-1;
    size_t d[MAX][MAX];
    for (size_t i = 0; i <= na; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best)
                best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

const char *cli_nearest(const char *word, size_t len, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, len, names[i]);
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    /* Close means a typo, not another word: at most two edits, and fewer
     * than the word has letters ("--x" suggests nothing). */
    return best && best_d <= 2 && best_d < len ? best : NULL;
}

static const cli_option *by_id(const cli_option *opts, int id)
{
    for (const cli_option *o = opts; o->name; o++)
        if (o->id == id)
            return o;
    return NULL;
}

/* "--json, --backend LIST, --help": the options (with their values' names
 * when `values`) whose names start with name[0..len). */
static const char *list_options(const cli_option *opts, const char *name, size_t len, int values,
                                char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (const cli_option *o = opts; o->name && n < cap; o++)
        if (strncmp(o->name, name, len) == 0)
            n += (size_t)snprintf(out + n, cap - n, "%s--%s%s%s", n ? ", " : "", o->name,
                                  values && o->arg ? " " : "", values && o->arg ? o->arg : "");
    return out;
}

static const char *nearest_option(const cli_option *opts, const char *word, size_t len)
{
    const char *names[MAX_OPTIONS];
    size_t n = 0;
    for (const cli_option *o = opts; o->name && n < MAX_OPTIONS; o++)
        names[n++] = o->name;
    return cli_nearest(word, len, names, n);
}

/* A long option getopt_long did not take: unknown, ambiguous (a prefix of
 * several), or given a value it does not take. */
static void long_option_error(const cli_parser *p, const char *arg)
{
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const cli_option *exact = NULL;
    int prefixed = 0;
    for (const cli_option *o = p->options; o->name; o++) {
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            exact = o;
        else if (strncmp(o->name, name, len) == 0)
            prefixed++;
    }
    const char *cmd = p->command, *near = nearest_option(p->options, name, len);
    char list[1024];
    if (exact || (prefixed == 1 && eq)) /* getopt_long refuses a value only for a flag */
        cli_usage_error(cmd, "--%.*s takes no value ('%s')", (int)len, name, arg);
    else if (prefixed > 1)
        cli_usage_error(cmd, "option '--%.*s' is ambiguous; it could be %s", (int)len, name,
                        list_options(p->options, name, len, 0, list, sizeof list));
    else if (near)
        cli_usage_error(cmd, "unknown option '--%.*s'; did you mean '--%s'?", (int)len, name, near);
    else
        cli_usage_error(cmd, "unknown option '--%.*s'; accepted: %s", (int)len, name,
                        list_options(p->options, "", 0, 1, list, sizeof list));
}

/* A short option getopt_long did not take. "-json" reads as -j -s -o -n:
 * when the word the unknown letter came from is a long name with one dash,
 * say so rather than complain about the 's'. */
static void short_option_error(const cli_parser *p, int argc, char **argv, int c)
{
    const char *cmd = p->command;
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "--") == 0)
            break;
        if (w[0] != '-' || w[1] == '-' || strlen(w) < 3 || !strchr(w + 1, c))
            continue;
        const char *eq = strchr(w + 1, '=');
        size_t len = eq ? (size_t)(eq - w - 1) : strlen(w + 1);
        const char *near = nearest_option(p->options, w + 1, len);
        if (near) {
            cli_usage_error(cmd, "unknown option '%s'; did you mean '--%s'?", w, near);
            return;
        }
    }
    char list[1024], letter[8] = "";
    if (c >= 0x20 && c < 0x7f)
        snprintf(letter, sizeof letter, " '-%c'", c);
    cli_usage_error(cmd, "unknown option%s; accepted: %s", letter,
                    list_options(p->options, "", 0, 1, list, sizeof list));
}

void cli_parser_init(cli_parser *p, const cli_command *cmd, const cli_option *options, int in_order)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->command = cmd ? cmd->name : "";
    p->options = options;
    p->in_order = in_order;
    /* optind 0 makes glibc start over, re-reading the '+' of the short
     * option string (main.c parses its own options first). */
    optind = 0;
    opterr = 0;
}

int cli_parser_next(cli_parser *p, int argc, char **argv)
{
    struct option longopts[MAX_OPTIONS + 1];
    /* '+' stops at the first operand, ':' reports a missing value as ':';
     * then each short letter, with ':' when it takes a value. */
    char shortopts[2 + 2 * MAX_OPTIONS + 1];
    size_t n = 0, s = 0;
    if (p->in_order)
        shortopts[s++] = '+';
    shortopts[s++] = ':';
    for (const cli_option *o = p->options; o->name; o++) {
        if (n == MAX_OPTIONS)
            break;
        longopts[n++] =
            (struct option){o->name, o->arg ? required_argument : no_argument, NULL, o->id};
        if (o->id > 0 && o->id < 0x80) {
            shortopts[s++] = (char)o->id;
            if (o->arg)
                shortopts[s++] = ':';
        }
    }
    memset(&longopts[n], 0, sizeof longopts[n]);
    shortopts[s] = '\0';

    p->value = NULL;
    int c = getopt_long(argc, argv, shortopts, longopts, NULL);
    if (c == -1) {
        p->operands = optind;
        return CLI_OPTS_END;
    }
    if (c == 'h' && p->cmd && by_id(p->options, 'h')) {
        fputs(p->cmd->usage, stdout);
        p->status = CLI_OK;
        return CLI_OPTS_EXIT;
    }
    p->status = CLI_USAGE;
    /* The word getopt_long was reading: a long option moves optind past it. */
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    if (c == ':') {
        const cli_option *o = by_id(p->options, optopt);
        if (o)
            cli_usage_error(p->command, "--%s: missing value (--%s %s)", o->name, o->name, o->arg);
        else
            cli_usage_error(p->command, "'%s': missing value", arg);
        return CLI_OPTS_EXIT;
    }
    if (c == '?') {
        if (strncmp(arg, "--", 2) == 0 && arg[2])
            long_option_error(p, arg);
        else
            short_option_error(p, argc, argv, optopt);
        return CLI_OPTS_EXIT;
    }
    p->value = optarg;
    const cli_option *o = by_id(p->options, c);
    if (!o || !o->store)
        return c;
    if (o->arg)
        *(const char **)o->store = optarg;
    else
        *(int *)o->store = 1;
    return cli_parser_next(p, argc, argv);
}

int cli_parse(const cli_command *cmd, const cli_option *options, int argc, char **argv)
{
    cli_parser p;
    cli_parser_init(&p, cmd, options, 0);
    int o = cli_parser_next(&p, argc, argv);
    assert(o < 0); /* every option has a store */
    if (o == CLI_OPTS_EXIT)
        return p.status;
    if (p.operands < argc)
        return cli_usage_error(cmd->name, "unexpected argument '%s'", argv[p.operands]);
    return CLI_OPTS_END;
}
