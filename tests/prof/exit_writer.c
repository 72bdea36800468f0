/* A program that profiles and never destroys its profiler, for the test of
 * GPUOPT_PROFILE (tests/cli/test_profile_cli.sh): the trace must be
 * written when it exits. Arguments:
 *   (none)  one profiler, two sections, exit
 *   fork    the same, and a fork()ed child that records and exits first:
 *           the child must not write the parent's file
 *   two     two profilers: the second one's file is numbered ".2" */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gpuopt/gpuopt.h>

/* Never destroyed, on purpose; held here so that a leak checker sees them
 * still reachable at exit, as they are in a program that keeps them in its
 * own globals. */
static gpuopt_context *ctx;
static gpuopt_profiler *kept[2];

static gpuopt_profiler *profiler(gpuopt_context *ctx)
{
    gpuopt_profiler *p = NULL;
    if (gpuopt_profiler_create(ctx, NULL, NULL, &p) != GPUOPT_OK) {
        fprintf(stderr, "exit_writer: %s\n", gpuopt_last_error());
        return NULL;
    }
    return p;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (gpuopt_context_create(NULL, &ctx) != GPUOPT_OK)
        return 1;
    gpuopt_profiler *p = kept[0] = profiler(ctx);
    if (!p)
        return 1;
    gpuopt_profiler_begin(p, "at-exit");
    gpuopt_profiler_begin(p, "inner");
    gpuopt_profiler_end(p, "inner");
    gpuopt_profiler_end(p, "at-exit");
    if (strcmp(mode, "fork") == 0) {
        pid_t child = fork();
        if (child == 0) {
            gpuopt_profiler_begin(p, "in-the-child");
            gpuopt_profiler_end(p, "in-the-child");
            return 0; /* exit(), with the parent's profiler registered */
        }
        int status = 0;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    if (strcmp(mode, "two") == 0) {
        gpuopt_profiler *q = kept[1] = profiler(ctx);
        if (!q)
            return 1;
        gpuopt_profiler_begin(q, "second-profiler");
        gpuopt_profiler_end(q, "second-profiler");
    }
    return 0; /* neither the profilers nor the context are destroyed */
}
