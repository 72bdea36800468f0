/* The file a profiler writes by itself (autowrite.h).
 *
 * At exit, the profilers still alive are written by an atexit handler,
 * registered when the first one is armed (nothing runs at load time). The
 * handler never reads device marks: the vendor driver may already have
 * run its own exit handlers, and calling into it then is a known source of
 * crashes; the file says so. It logs to stderr only, never to a log
 * callback: the callback's owner (a Python interpreter, a logging
 * framework) may be gone by then. glibc runs an atexit handler of a
 * shared library when the library is unloaded, if it is unloaded first
 * (atexit(3) is __cxa_atexit with the library's __dso_handle), so a
 * dlclose'd libgpuopt leaves no dangling handler. */
#include "autowrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render.h"
#include "util/file_write.h"
#include "util/strutil.h"

typedef struct armed {
    gpuopt_profiler *p;
    pid_t pid;
} armed;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static armed *reg;
static size_t n_reg, cap_reg;
static unsigned numbered_so_far; /* profilers that took GPUOPT_PROFILE's file */
static int handler_registered;

static void write_file(gpuopt_profiler *p, int read_marks, const gpo_logger *log)
{
    char *text = NULL;
    gpuopt_status st =
        gpo_prof_render(p, gpo_prof_format_of_path(p->trace_path), read_marks, &text);
    if (!st)
        st = gpo_file_write_atomic(p->trace_path, text, strlen(text));
    free(text);
    if (st)
        gpo_log_warn(log, "profiler: the profile was not written: %s", gpo_detail_get());
    else
        gpo_log_info(log, "profiler: profile written to %s", p->trace_path);
}

static void at_exit(void)
{
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < n_reg; i++) {
        if (reg[i].pid != getpid())
            continue;
        gpo_logger to_stderr = {reg[i].p->log.level, NULL, NULL};
        write_file(reg[i].p, 0, &to_stderr);
    }
    free(reg);
    reg = NULL;
    n_reg = cap_reg = 0;
    pthread_mutex_unlock(&reg_lock);
}

/* `pattern` expanded into out, without the number. -1 when it does not fit. */
static int expand(const char *pattern, char *out, size_t cap)
{
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    if (pattern[0] != '/') {
        char cwd[GPO_PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            return -1;
        gpo_sbuf_appendf(&b, "%s/", cwd);
    }
    for (const char *s = pattern; *s; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            gpo_sbuf_appendf(&b, "%ld", (long)getpid());
            s++;
        } else if (s[0] == '%' && s[1] == '%') {
            gpo_sbuf_append(&b, "%");
            s++;
        } else {
            gpo_sbuf_appendf(&b, "%c", *s);
        }
    }
    char *text = gpo_sbuf_take(&b);
    int ok = text && gpo_strlcpy(out, text, cap) < cap;
    free(text);
    return ok ? 0 : -1;
}

/* "dir/trace.json" -> "dir/trace.<n>.json" ("dir/trace" -> "dir/trace.<n>"). */
static int number(char *path, size_t cap, unsigned n)
{
    char tail[GPO_PATH_MAX];
    const char *base = strrchr(path, '/');
    char *dot = strrchr(base ? base : path, '.');
    if (!dot || dot == (base ? base + 1 : path))
        dot = path + strlen(path);
    gpo_strlcpy(tail, dot, sizeof tail);
    *dot = '\0';
    size_t len = strlen(path);
    int w = snprintf(path + len, cap - len, ".%u%s", n, tail);
    return w < 0 || (size_t)w >= cap - len ? -1 : 0;
}

gpuopt_status gpo_prof_autowrite_arm(gpuopt_profiler *p, const char *pattern, int numbered)
{
    char path[GPO_PATH_MAX];
    if (expand(pattern, path, sizeof path) != 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "the profile's file \"%.200s\" cannot be made an absolute path shorter "
                        "than %d bytes",
                        pattern, GPO_PATH_MAX);
    gpuopt_status st = GPUOPT_OK;
    pthread_mutex_lock(&reg_lock);
    if (numbered && ++numbered_so_far > 1 && number(path, sizeof path, numbered_so_far) != 0) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the profile's file \"%.200s\" is too long",
                      pattern);
        goto out;
    }
    if (gpo_grow(&reg, sizeof *reg, n_reg, &cap_reg, 4)) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: out of memory");
        goto out;
    }
    if (!handler_registered) {
        if (atexit(at_exit) != 0) {
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: atexit() refused the exit handler");
            goto out;
        }
        handler_registered = 1;
    }
    reg[n_reg].p = p;
    reg[n_reg].pid = getpid();
    n_reg++;
    gpo_strlcpy(p->trace_path, path, sizeof p->trace_path);
out:
    pthread_mutex_unlock(&reg_lock);
    return st;
}

void gpo_prof_autowrite_finish(gpuopt_profiler *p)
{
    pid_t pid = -1;
    pthread_mutex_lock(&reg_lock);
    for (size_t i = 0; i < n_reg; i++) {
        if (reg[i].p != p)
            continue;
        pid = reg[i].pid;
        reg[i] = reg[--n_reg];
        break;
    }
    pthread_mutex_unlock(&reg_lock);
    if (pid == getpid() && p->trace_path[0])
        write_file(p, 1, &p->log);
}
