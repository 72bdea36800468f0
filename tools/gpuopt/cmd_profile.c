/* gpuopt profile: runs a program with GPUOPT_PROFILE set, so a program that
 * links libgpuopt and opens profiler sections writes its profile (a Chrome
 * trace, or an SVG picture) when its profiler is destroyed or it exits,
 * with no code that says where. Like time(1) or env(1), it waits for the
 * program and exits with the program's status. */
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

#define DEFAULT_OUTPUT "trace.json"

/* `path` made absolute against the current directory, so a program that
 * changes directory writes where it was asked. */
static int absolute(const char *path, char *out, size_t cap)
{
    char cwd[4096];
    int n;
    if (path[0] == '/')
        n = snprintf(out, cap, "%s", path);
    else if (getcwd(cwd, sizeof cwd))
        n = snprintf(out, cap, "%s/%s", cwd, path);
    else
        return -1;
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* The files the profile may be in: the path itself, or every match of it
 * with "%p" read as any process id, and the numbered files of later
 * profilers ("name.2.ext"). Freed with globfree. */
static void matches(const char *path, glob_t *g)
{
    char pattern[4200];
    size_t o = 0;
    for (const char *s = path; *s && o + 2 < sizeof pattern; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            pattern[o++] = '*';
            s++;
        } else if (s[0] == '%' && s[1] == '%') {
            pattern[o++] = '%';
            s++;
        } else if (strchr("*?[\\", *s)) {
            pattern[o++] = '\\';
            pattern[o++] = *s;
        } else {
            pattern[o++] = *s;
        }
    }
    pattern[o] = '\0';
    char numbered[4300];
    const char *slash = strrchr(pattern, '/'), *dot = strrchr(slash ? slash : pattern, '.');
    if (dot && dot != (slash ? slash + 1 : pattern))
        snprintf(numbered, sizeof numbered, "%.*s.[0-9]*%s", (int)(dot - pattern), pattern, dot);
    else
        snprintf(numbered, sizeof numbered, "%s.[0-9]*", pattern);
    memset(g, 0, sizeof *g);
    glob(pattern, 0, NULL, g);
    glob(numbered, GLOB_APPEND, NULL, g);
}

/* What a file was before the program ran: the library replaces a profile
 * by renaming a new file over it, so a rewritten one has another inode
 * or time. */
typedef struct seen {
    char *path;
    ino_t ino;
    struct timespec mtime;
} seen;

static seen *snapshot(const char *path, size_t *n)
{
    glob_t g;
    matches(path, &g);
    seen *s = calloc(g.gl_pathc ? g.gl_pathc : 1, sizeof *s);
    *n = 0;
    for (size_t i = 0; s && i < g.gl_pathc; i++) {
        struct stat sb;
        if (stat(g.gl_pathv[i], &sb) != 0 || !(s[*n].path = strdup(g.gl_pathv[i])))
            continue;
        s[*n].ino = sb.st_ino;
        s[*n].mtime = sb.st_mtim;
        (*n)++;
    }
    globfree(&g);
    return s;
}

static void forget(seen *s, size_t n)
{
    for (size_t k = 0; s && k < n; k++)
        free(s[k].path);
    free(s);
}

static int report_written(const char *path, const seen *before, size_t n_before)
{
    glob_t g;
    int found = 0;
    matches(path, &g);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct stat sb;
        if (stat(g.gl_pathv[i], &sb) != 0)
            continue;
        int same = 0;
        for (size_t k = 0; k < n_before && !same; k++)
            same = strcmp(before[k].path, g.gl_pathv[i]) == 0 && before[k].ino == sb.st_ino &&
                   before[k].mtime.tv_sec == sb.st_mtim.tv_sec &&
                   before[k].mtime.tv_nsec == sb.st_mtim.tv_nsec;
        if (same)
            continue;
        fprintf(stderr, "gpuopt profile: profile written to %s\n", g.gl_pathv[i]);
        found++;
    }
    globfree(&g);
    if (found)
        fprintf(stderr, "gpuopt profile: open a trace in https://ui.perfetto.dev or "
                        "chrome://tracing, a .svg in a browser\n");
    else
        fprintf(stderr,
                "gpuopt profile: the program wrote no profile to %s (it makes no "
                "gpuopt_profiler, gives its profiler its own trace_path, or ignores the "
                "environment)\n",
                path);
    return found;
}

static int run(int argc, char **argv)
{
    const char *output = DEFAULT_OUTPUT;
    const cli_option options[] = {{"output", 'o', "FILE", &output}, {"help", 'h', NULL, NULL}, {0}};
    cli_parser p;
    /* In order: the options end at the program to run, whose own options
     * are its own ("gpuopt profile python3 -u x.py"). */
    cli_parser_init(&p, &cli_profile, options, 1);
    if (cli_parser_next(&p, argc, argv) != CLI_OPTS_END)
        return p.status;
    int i = p.operands;
    if (i >= argc)
        return cli_usage_error("profile", "no command to run: gpuopt profile [--output FILE] -- "
                                          "COMMAND [ARGS...]");
    if (!*output)
        return cli_usage_error("profile", "--output is empty");
    char path[4096];
    if (absolute(output, path, sizeof path) != 0)
        return cli_usage_error("profile", "cannot make '%s' an absolute path", output);
    if (setenv("GPUOPT_PROFILE", path, 1) != 0) {
        fprintf(stderr, "gpuopt profile: setenv: %s\n", strerror(errno));
        return CLI_FAIL;
    }

    /* The program gets the terminal's interrupts; this command waits and
     * reports (as system(3) does). */
    struct sigaction ignore, old_int, old_quit;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &old_int);
    sigaction(SIGQUIT, &ignore, &old_quit);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGQUIT);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);

    size_t n_before = 0;
    seen *before = snapshot(path, &n_before);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[i], NULL, &attr, argv + i, environ);
    posix_spawnattr_destroy(&attr);
    int status = 0;
    if (rc == 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (rc != 0) {
        forget(before, n_before);
        fprintf(stderr, "gpuopt profile: cannot run '%s': %s\n", argv[i], strerror(rc));
        return rc == ENOENT ? 127 : 126; /* as the shell and env(1) */
    }
    report_written(path, before, n_before);
    forget(before, n_before);
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "gpuopt profile: '%s' was killed by signal %d\n", argv[i],
                WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : CLI_FAIL;
}

const cli_command cli_profile = {
    "profile", "run a program with its gpuopt profiler sections written to a trace",
    "usage: gpuopt profile [--output FILE] [--] COMMAND [ARGS...]\n\n"
    "Runs COMMAND with GPUOPT_PROFILE=FILE in its environment. A program that links\n"
    "libgpuopt and opens profiler sections (gpuopt_profiler_begin/_end, the\n"
    "GPUOPT_PROFILE_* macros, Python's prof.section) writes its profile there when\n"
    "its profiler is destroyed or it exits, whole or not at all: a Chrome trace for\n"
    "Perfetto (https://ui.perfetto.dev) or chrome://tracing, or an SVG picture when\n"
    "FILE ends in .svg. A second profiler in one process writes FILE with .2 before\n"
    "the extension; \"%p\" in FILE becomes each process's id (for programs that start\n"
    "others). docs/profiler.md describes the files.\n\n"
    "  -o, --output FILE   where the profile goes (default: " DEFAULT_OUTPUT ", made\n"
    "                      absolute against the current directory)\n\n"
    "Exit status: COMMAND's own; 126 or 127 when it cannot be run (as the shell);\n"
    "128+N when signal N ended it; 2 for a usage error here.\n",
    run};
