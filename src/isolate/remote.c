/* The library's side of a measurement worker (remote.h): finding and
 * spawning the worker, and the runtime ops that forward each call to it. */
#include "isolate/remote.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "isolate/wire.h"
#include "util/detail.h"
#include "util/strutil.h"

#ifndef GPO_WORKER_INSTALLED
#define GPO_WORKER_INSTALLED "/usr/local/lib/gpuopt/gpuopt-worker"
#endif
#define WORKER_NAME "gpuopt/gpuopt-worker"
/* The descriptor the worker reads its socket on (argv says so too). */
#define WORKER_FD 3
/* How long a worker that was asked to close may take to exit before it is
 * killed (one whose device hangs in a kernel never would). */
#define CLOSE_GRACE_MS 5000

extern char **environ;

struct gpo_rt {
    int fd;
    pid_t pid;
    int dead;
    int timeout_ms;   /* device waits; 0: none */
    char device[160]; /* "cuda device 0 (NVIDIA H100)" */
    char why[1024];   /* what killed it */
    char compiler[256];
};

/* Handles are the worker's numbers. */
struct gpo_rt_buf {
    uint64_t id;
};
struct gpo_rt_prog {
    uint64_t id;
};
struct gpo_rt_kernel {
    uint64_t id;
};

/* An address inside this library, for dladdr. */
static const char here = 0;

/* The worker executable: GPUOPT_WORKER (read with secure_getenv, so never
 * in a privileged process), else gpuopt/gpuopt-worker beside the shared
 * library this code runs in (dladdr), else the installed one
 * (GPO_WORKER_INSTALLED, compiled in). 0 with `out` set; -1 with `out`
 * saying where it looked. */
static int worker_path(char *out, size_t cap)
{
    const char *env = secure_getenv("GPUOPT_WORKER");
    if (env && *env) {
        gpo_strlcpy(out, env, cap);
        return access(out, X_OK) == 0 ? 0 : -1;
    }
    Dl_info info;
    if (dladdr(&here, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
        const char *slash = strrchr(info.dli_fname, '/');
        gpo_snprintf(out, cap, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                     WORKER_NAME);
        if (access(out, X_OK) == 0)
            return 0;
    }
    gpo_strlcpy(out, GPO_WORKER_INSTALLED, cap);
    if (access(out, X_OK) == 0)
        return 0;
    return gpo_say(-1, out, cap, "%s beside the library, or %s%s", WORKER_NAME,
                   GPO_WORKER_INSTALLED,
                   secure_getenv("GPUOPT_WORKER") ? "" : " (GPUOPT_WORKER names another)");
}

/* How the worker ended, once it has (blocking up to the grace when
 * `wait`; killing it past that). */
static void reap(gpo_rt *rt, int grace_ms, char *how, size_t cap)
{
    int status = 0;
    pid_t got = 0;
    for (int waited = 0; (got = waitpid(rt->pid, &status, WNOHANG)) == 0; waited += 10) {
        if (waited >= grace_ms) {
            kill(rt->pid, SIGKILL);
            got = waitpid(rt->pid, &status, 0);
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (got < 0 && errno == EINTR)
        got = waitpid(rt->pid, &status, 0);
    if (got != rt->pid)
        gpo_snprintf(how, cap, "ended (the program collected its exit status)");
    else if (WIFSIGNALED(status))
        gpo_snprintf(how, cap, "was killed by signal %d (%s)", WTERMSIG(status),
                     strsignal(WTERMSIG(status)));
    else
        gpo_snprintf(how, cap, "exited with status %d", WEXITSTATUS(status));
    rt->pid = 0;
}

static void stop(gpo_rt *rt, int grace_ms, char *how, size_t cap)
{
    if (rt->fd >= 0) {
        close(rt->fd);
        rt->fd = -1;
    }
    if (rt->pid > 0)
        reap(rt, grace_ms, how, cap);
}

/* The worker stopped answering: it died (a crash in the driver, ROCr's
 * abort on a GPU memory fault). */
static gpuopt_status lost(gpo_rt *rt, const char *doing)
{
    char how[160] = "";
    pid_t pid = rt->pid;
    stop(rt, CLOSE_GRACE_MS, how, sizeof how);
    rt->dead = 1;
    gpo_snprintf(rt->why, sizeof rt->why,
                 "the measurement worker (pid %d) of %s %s while %s: code on the device "
                 "crashed it (its stderr, above, may hold the driver's words)",
                 (int)pid, rt->device, how, doing);
    return gpo_fail(GPUOPT_ERR_FAULT, "%s", rt->why);
}

static const char *const op_names[] = {
    [GPO_WIRE_HELLO] = "opening the device",
    [GPO_WIRE_BUF_ALLOC] = "allocating a buffer",
    [GPO_WIRE_BUF_WRITE] = "writing a buffer",
    [GPO_WIRE_BUF_READ] = "reading a buffer",
    [GPO_WIRE_PROG_BUILD] = "building a program",
    [GPO_WIRE_KERN_CREATE] = "creating a kernel",
    [GPO_WIRE_KERN_BUF] = "binding a buffer",
    [GPO_WIRE_KERN_SCALAR] = "binding a scalar",
    [GPO_WIRE_KERN_LOCAL] = "sizing local memory",
    [GPO_WIRE_KERN_GROUP] = "asking a kernel's limit",
    [GPO_WIRE_LAUNCH] = "running a kernel",
    [GPO_WIRE_FINISH] = "waiting for the device",
};

/* Waits for the worker's answer to a device wait within the timeout: 0
 * when it is there (or there is no limit), -1 when the time ran out. */
static int answer_within(gpo_rt *rt, uint16_t op)
{
    int device_wait = op == GPO_WIRE_LAUNCH || op == GPO_WIRE_FINISH || op == GPO_WIRE_BUF_READ ||
                      op == GPO_WIRE_BUF_WRITE;
    if (!device_wait || rt->timeout_ms <= 0)
        return 0;
    struct pollfd p = {.fd = rt->fd, .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, rt->timeout_ms)) < 0 && errno == EINTR)
        continue;
    return n == 0 ? -1 : 0;
}

/* The worker ran past the timeout: it is stopped. */
static gpuopt_status overran(gpo_rt *rt, const char *doing)
{
    char how[160] = "";
    pid_t pid = rt->pid;
    if (rt->pid > 0)
        kill(rt->pid, SIGKILL);
    stop(rt, CLOSE_GRACE_MS, how, sizeof how);
    rt->dead = 1;
    gpo_snprintf(rt->why, sizeof rt->why,
                 "%s took longer than the timeout of %.3g s: the measurement worker (pid %d) of "
                 "%s was stopped",
                 doing, rt->timeout_ms / 1e3, (int)pid, rt->device);
    return gpo_fail(GPUOPT_ERR_TIMEOUT, "%s", rt->why);
}

/* One request and its reply: the call's status, with its detail; *res
 * (when not NULL) the results to read. */
static gpuopt_status rpc(gpo_rt *rt, gpo_wire_msg *req, gpo_wire_msg *res)
{
    const char *doing =
        req->op < GPO_WIRE_OPS_END && op_names[req->op] ? op_names[req->op] : "answering";
    if (res)
        gpo_wire_init(res, req->op, 0);
    if (rt->dead)
        return gpo_fail(GPUOPT_ERR_FAULT, "%s", rt->why);
    if (req->bad)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for a request to the worker");
    gpo_wire_msg in;
    if (gpo_wire_send(rt->fd, req) != 0)
        return lost(rt, doing);
    if (answer_within(rt, req->op) != 0)
        return overran(rt, doing);
    int got = gpo_wire_recv(rt->fd, &in);
    if (got != 0 || in.op != req->op) {
        if (got == 0)
            gpo_wire_free(&in);
        return lost(rt, doing);
    }
    char *detail = gpo_wire_get_text(&in);
    size_t n = 0;
    const void *p = gpo_wire_get_bytes(&in, &n);
    gpuopt_status st = (gpuopt_status)in.status;
    if (in.bad) {
        free(detail);
        gpo_wire_free(&in);
        return lost(rt, doing);
    }
    if (res && n) {
        res->data = malloc(n);
        if (!res->data)
            res->bad = 1;
        else
            memcpy(res->data, p, n);
        res->len = res->cap = n;
    }
    gpo_wire_free(&in);
    if (st == GPUOPT_ERR_FAULT) {
        /* Sticky: the worker's context is done for. Stopped at once (a
         * poisoned context has nothing left worth a clean exit). */
        char how[160] = "";
        if (rt->pid > 0)
            kill(rt->pid, SIGKILL);
        stop(rt, CLOSE_GRACE_MS, how, sizeof how);
        rt->dead = 1;
        gpo_snprintf(rt->why, sizeof rt->why, "%s (in the measurement worker of %s, now replaced)",
                     detail, rt->device);
        free(detail);
        return gpo_fail(st, "%s", rt->why);
    }
    if (st != GPUOPT_OK)
        gpo_detail_set("%s", detail);
    free(detail);
    return st;
}

static gpuopt_status spawn(gpo_rt *rt, const char *path)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return gpo_fail(GPUOPT_ERR_UNAVAILABLE, "cannot make the worker's socket: %s",
                        strerror(errno));
    /* dup2 onto itself would keep close-on-exec: the child's end must
     * arrive as another descriptor. */
    if (sv[1] == WORKER_FD) {
        int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, WORKER_FD + 1);
        close(sv[1]);
        sv[1] = moved;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    /* A driver's chatter on stdout must not land in the program's output. */
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    posix_spawn_file_actions_adddup2(&fa, sv[1], WORKER_FD);
    char fdarg[16];
    gpo_snprintf(fdarg, sizeof fdarg, "%d", WORKER_FD);
    char *argv[] = {(char *)path, "--fd", fdarg, NULL};
    pid_t pid = 0;
    int err = sv[1] < 0 ? errno : posix_spawn(&pid, path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (sv[1] >= 0)
        close(sv[1]);
    if (err != 0) {
        close(sv[0]);
        return gpo_fail(GPUOPT_ERR_UNAVAILABLE, "cannot start the measurement worker %s: %s", path,
                        strerror(err));
    }
    rt->fd = sv[0];
    rt->pid = pid;
    return GPUOPT_OK;
}

gpuopt_status gpo_worker_open(const gpo_route *route, gpo_rt **out)
{
    *out = NULL;
    char path[4096];
    if (worker_path(path, sizeof path) != 0)
        return gpo_fail(GPUOPT_ERR_UNAVAILABLE, "no measurement worker: looked for %s", path);
    gpo_rt *rt = calloc(1, sizeof *rt);
    if (!rt)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory opening a measurement worker");
    rt->fd = -1;
    gpo_snprintf(rt->device, sizeof rt->device, "%s device %d (%s)", route->backend->name,
                 (int)route->index, route->info.name);
    gpuopt_status st = spawn(rt, path);
    if (st != GPUOPT_OK) {
        free(rt);
        return st;
    }
    gpo_wire_msg req, res;
    gpo_wire_init(&req, GPO_WIRE_HELLO, 0);
    gpo_wire_put_u64(&req, GPO_WIRE_VERSION);
    gpo_wire_put_text(&req, route->backend->name);
    gpo_wire_put_u64(&req, (uint64_t)route->index);
    gpo_wire_put_text(&req, route->info.name);
    gpo_wire_put_text(&req, route->backend->runtime->language);
    st = rpc(rt, &req, &res);
    gpo_wire_free(&req);
    char *compiler = st == GPUOPT_OK ? gpo_wire_get_text(&res) : NULL;
    gpo_wire_free(&res);
    if (st == GPUOPT_OK && !compiler)
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory opening a measurement worker");
    if (st != GPUOPT_OK) {
        st = gpo_fail(st == GPUOPT_ERR_FAULT ? GPUOPT_ERR_UNAVAILABLE : st,
                      "the measurement worker %s cannot open %s: %s", path, rt->device,
                      gpo_detail_get());
        free(compiler);
        gpo_worker_runtime.close(rt);
        return st;
    }
    gpo_strlcpy(rt->compiler, compiler, sizeof rt->compiler);
    free(compiler);
    *out = rt;
    return GPUOPT_OK;
}

void gpo_worker_set_timeout(gpo_rt *rt, double seconds)
{
    rt->timeout_ms =
        seconds > 0 ? (seconds * 1e3 < 2e9 ? (int)(seconds * 1e3) + 1 : 2000000000) : 0;
}

int gpo_worker_dead(const gpo_rt *rt)
{
    return rt->dead;
}

/* ---- the ops ------------------------------------------------------------------ */

static gpuopt_status w_open(void *state, const gpo_route *route, gpo_rt **rt)
{
    (void)state;
    return gpo_worker_open(route, rt);
}

static void w_close(gpo_rt *rt)
{
    if (!rt)
        return;
    if (!rt->dead && rt->fd >= 0) {
        gpo_wire_msg m;
        gpo_wire_init(&m, GPO_WIRE_CLOSE, 0);
        (void)gpo_wire_send(rt->fd, &m);
    }
    char how[160];
    stop(rt, CLOSE_GRACE_MS, how, sizeof how);
    free(rt);
}

/* A request of `op` with its first n fields, u64 each. */
static void request(gpo_wire_msg *m, uint16_t op, const uint64_t *v, int n)
{
    gpo_wire_init(m, op, 0);
    for (int i = 0; i < n; i++)
        gpo_wire_put_u64(m, v[i]);
}

/* A request that is not answered: a handle let go. */
static void drop(gpo_rt *rt, uint16_t op, uint64_t id)
{
    if (rt->dead)
        return;
    gpo_wire_msg m;
    request(&m, op, &id, 1);
    /* A worker that died shows at the next answered request. */
    (void)gpo_wire_send(rt->fd, &m);
    gpo_wire_free(&m);
}

/* A request answered without results. */
static gpuopt_status call(gpo_rt *rt, gpo_wire_msg *req)
{
    gpuopt_status st = rpc(rt, req, NULL);
    gpo_wire_free(req);
    return st;
}

/* A request of u64 fields only, answered without results. */
static gpuopt_status ask(gpo_rt *rt, uint16_t op, const uint64_t *v, int n)
{
    gpo_wire_msg req;
    request(&req, op, v, n);
    return call(rt, &req);
}

/* A request answered by a new handle (or another number). */
static gpuopt_status make(gpo_rt *rt, gpo_wire_msg *req, uint64_t *id)
{
    gpo_wire_msg res;
    gpuopt_status st = rpc(rt, req, &res);
    gpo_wire_free(req);
    *id = gpo_wire_get_u64(&res);
    gpo_wire_free(&res);
    return st;
}

static gpuopt_status w_buffer_alloc(gpo_rt *rt, size_t bytes, gpo_rt_buf **buf)
{
    *buf = NULL;
    gpo_rt_buf *b = calloc(1, sizeof *b);
    if (!b)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for a buffer handle");
    gpo_wire_msg req;
    request(&req, GPO_WIRE_BUF_ALLOC, (uint64_t[]){bytes}, 1);
    gpuopt_status st = make(rt, &req, &b->id);
    if (st != GPUOPT_OK)
        free(b);
    *buf = st == GPUOPT_OK ? b : NULL;
    return st;
}

static void w_buffer_free(gpo_rt *rt, gpo_rt_buf *buf)
{
    if (!buf)
        return;
    drop(rt, GPO_WIRE_BUF_FREE, buf->id);
    free(buf);
}

static gpuopt_status w_buffer_write(gpo_rt *rt, gpo_rt_buf *buf, size_t offset, const void *src,
                                    size_t bytes)
{
    gpo_wire_msg req;
    request(&req, GPO_WIRE_BUF_WRITE, (uint64_t[]){buf->id, offset}, 2);
    gpo_wire_put_bytes(&req, src, bytes);
    return call(rt, &req);
}

static gpuopt_status w_buffer_read(gpo_rt *rt, gpo_rt_buf *buf, size_t offset, void *dst,
                                   size_t bytes)
{
    gpo_wire_msg req, res;
    request(&req, GPO_WIRE_BUF_READ, (uint64_t[]){buf->id, offset, bytes}, 3);
    gpuopt_status st = rpc(rt, &req, &res);
    gpo_wire_free(&req);
    size_t n = 0;
    const void *p = st == GPUOPT_OK ? gpo_wire_get_bytes(&res, &n) : NULL;
    if (st == GPUOPT_OK && (!p || n != bytes))
        st = lost(rt, "reading a buffer");
    else if (st == GPUOPT_OK)
        memcpy(dst, p, n);
    gpo_wire_free(&res);
    return st;
}

static gpuopt_status w_program_build(gpo_rt *rt, const char *source, const char *options,
                                     gpo_rt_prog **prog, char **log)
{
    *prog = NULL;
    *log = NULL;
    gpo_rt_prog *p = calloc(1, sizeof *p);
    if (!p)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for a program handle");
    gpo_wire_msg req, res;
    gpo_wire_init(&req, GPO_WIRE_PROG_BUILD, 0);
    gpo_wire_put_text(&req, source);
    gpo_wire_put_text(&req, options);
    gpuopt_status st = rpc(rt, &req, &res);
    gpo_wire_free(&req);
    if (res.len) {
        p->id = gpo_wire_get_u64(&res);
        int has_log = gpo_wire_get_u64(&res) != 0;
        char *text = gpo_wire_get_text(&res);
        if (has_log)
            *log = text;
        else
            free(text);
    }
    gpo_wire_free(&res);
    if (st != GPUOPT_OK)
        free(p);
    *prog = st == GPUOPT_OK ? p : NULL;
    return st;
}

static void w_program_free(gpo_rt *rt, gpo_rt_prog *prog)
{
    if (!prog)
        return;
    drop(rt, GPO_WIRE_PROG_FREE, prog->id);
    free(prog);
}

static gpuopt_status w_kernel_create(gpo_rt *rt, gpo_rt_prog *prog, const char *name,
                                     gpo_rt_kernel **kernel)
{
    *kernel = NULL;
    gpo_rt_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for a kernel handle");
    gpo_wire_msg req;
    request(&req, GPO_WIRE_KERN_CREATE, &prog->id, 1);
    gpo_wire_put_text(&req, name);
    gpuopt_status st = make(rt, &req, &k->id);
    if (st != GPUOPT_OK)
        free(k);
    *kernel = st == GPUOPT_OK ? k : NULL;
    return st;
}

static void w_kernel_free(gpo_rt *rt, gpo_rt_kernel *kernel)
{
    if (!kernel)
        return;
    drop(rt, GPO_WIRE_KERN_FREE, kernel->id);
    free(kernel);
}

static gpuopt_status w_kernel_set_buffer(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                         gpo_rt_buf *buf)
{
    return ask(rt, GPO_WIRE_KERN_BUF, (uint64_t[]){kernel->id, index, buf->id}, 3);
}

static gpuopt_status w_kernel_set_scalar(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                         const void *value, size_t size)
{
    gpo_wire_msg req;
    request(&req, GPO_WIRE_KERN_SCALAR, (uint64_t[]){kernel->id, index}, 2);
    gpo_wire_put_bytes(&req, value, size);
    return call(rt, &req);
}

static gpuopt_status w_kernel_set_local(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                        size_t bytes)
{
    return ask(rt, GPO_WIRE_KERN_LOCAL, (uint64_t[]){kernel->id, index, bytes}, 3);
}

static gpuopt_status w_kernel_max_group(gpo_rt *rt, gpo_rt_kernel *kernel, size_t *max_items)
{
    gpo_wire_msg req;
    request(&req, GPO_WIRE_KERN_GROUP, &kernel->id, 1);
    uint64_t n;
    gpuopt_status st = make(rt, &req, &n);
    *max_items = (size_t)n;
    return st;
}

static gpuopt_status w_launch(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t dims,
                              const size_t global[3], const size_t *local, double *device_ns)
{
    const size_t one[3] = {1, 1, 1}, *l = local ? local : one;
    gpo_wire_msg req, res;
    request(&req, GPO_WIRE_LAUNCH,
            (uint64_t[]){kernel->id, dims, global[0], global[1], global[2], local != NULL, l[0],
                         l[1], l[2], 1},
            10);
    gpuopt_status st = rpc(rt, &req, &res);
    gpo_wire_free(&req);
    double dev = gpo_wire_get_f64(&res), host = gpo_wire_get_f64(&res);
    gpo_wire_free(&res);
    /* The worker's own clock around its call, where the runtime keeps no
     * device time: the socket's round trip is no part of the kernel. */
    if (st == GPUOPT_OK && device_ns)
        *device_ns = dev >= 0 ? dev : host;
    return st;
}

static gpuopt_status w_finish(gpo_rt *rt)
{
    return ask(rt, GPO_WIRE_FINISH, NULL, 0);
}

static const char *w_compiler_version(gpo_rt *rt)
{
    return rt->compiler;
}

const gpo_runtime_ops gpo_worker_runtime = {
    .language = "worker",
    .builds_alongside_launches = 0,
    .open = w_open,
    .close = w_close,
    .buffer_alloc = w_buffer_alloc,
    .buffer_free = w_buffer_free,
    .buffer_write = w_buffer_write,
    .buffer_read = w_buffer_read,
    .program_build = w_program_build,
    .program_free = w_program_free,
    .kernel_create = w_kernel_create,
    .kernel_free = w_kernel_free,
    .kernel_set_buffer = w_kernel_set_buffer,
    .kernel_set_scalar = w_kernel_set_scalar,
    .kernel_set_local = w_kernel_set_local,
    .kernel_max_group = w_kernel_max_group,
    .launch = w_launch,
    .finish = w_finish,
    .compiler_version = w_compiler_version,
};
