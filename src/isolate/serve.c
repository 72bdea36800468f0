/* The measurement worker (serve.h): one device session of this process's
 * own, driven request by request over the wire protocol. Each request
 * calls the backend's runtime ops exactly as an in-process session would;
 * only the handles cross the process boundary, as numbers. */
#include "isolate/serve.h"

#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "device.h"
#include "isolate/wire.h"
#include "util/detail.h"
#include "util/strutil.h"

/* Handles by number (slot + 1); a freed slot is NULL. */
typedef struct handles {
    void **slot;
    size_t n, cap;
} handles;

enum { BUFS, PROGS, KERNS, KINDS };

typedef struct worker {
    gpuopt_context *ctx;
    const gpo_runtime_ops *ops;
    gpo_rt *rt;
    handles h[KINDS];
} worker;

static void let_go(worker *w, int kind, void *p)
{
    if (kind == BUFS)
        w->ops->buffer_free(w->rt, p);
    else if (kind == PROGS)
        w->ops->program_free(w->rt, p);
    else
        w->ops->kernel_free(w->rt, p);
}

/* p's number; 0 (p let go) when out of memory. */
static uint64_t keep(worker *w, int kind, void *p)
{
    handles *h = &w->h[kind];
    if (gpo_grow(&h->slot, sizeof *h->slot, h->n, &h->cap, 64)) {
        let_go(w, kind, p);
        return 0;
    }
    h->slot[h->n++] = p;
    return h->n;
}

static void *find(const handles *h, uint64_t id)
{
    return id >= 1 && id <= h->n ? h->slot[id - 1] : NULL;
}

static void *take(handles *h, uint64_t id)
{
    void *p = find(h, id);
    if (p)
        h->slot[id - 1] = NULL;
    return p;
}

/* The route of the host's device: the same backend, native index and
 * name, in a context that loads that backend alone. */
static gpuopt_status open_session(worker *w, gpo_wire_msg *in, gpo_wire_msg *out)
{
    uint64_t version = gpo_wire_get_u64(in);
    char *backend = gpo_wire_get_text(in);
    uint64_t index = gpo_wire_get_u64(in);
    char *name = gpo_wire_get_text(in);
    char *language = gpo_wire_get_text(in);
    gpuopt_status st = GPUOPT_OK;
    if (in->bad) {
        st = gpo_fail(GPUOPT_ERR_IO, "measurement worker: a malformed HELLO");
        goto out;
    }
    if (version != GPO_WIRE_VERSION) {
        st = gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                      "measurement worker: the library speaks protocol %llu, this worker %u",
                      (unsigned long long)version, GPO_WIRE_VERSION);
        goto out;
    }
    gpuopt_options o = {0};
    o.struct_size = sizeof o;
    o.backends = backend;
    if ((st = gpuopt_context_create(&o, &w->ctx)) != GPUOPT_OK)
        goto out;
    const gpo_route *route = NULL;
    int32_t n = 0;
    gpuopt_device_count(w->ctx, &n);
    for (int32_t i = 0; i < n && !route; i++) {
        gpuopt_device *d = NULL;
        if (gpuopt_device_at(w->ctx, i, &d) != GPUOPT_OK)
            continue;
        for (int r = 0; r < d->n_routes; r++) {
            const gpo_route *rr = &d->routes[r];
            if (strcmp(rr->backend->name, backend) == 0 && (uint64_t)rr->index == index &&
                rr->backend_state && rr->backend->runtime && rr->backend->runtime->language &&
                strcmp(rr->backend->runtime->language, language) == 0)
                route = rr;
        }
    }
    if (!route) {
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND,
                      "measurement worker: no %s device %llu with a %s runtime in this process",
                      backend, (unsigned long long)index, language);
        goto out;
    }
    if (strcmp(route->info.name, name) != 0) {
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND,
                      "measurement worker: %s device %llu is %s here, not %s (the device list "
                      "differs between the processes)",
                      backend, (unsigned long long)index, route->info.name, name);
        goto out;
    }
    w->ops = route->backend->runtime;
    gpo_detail_clear();
    st = w->ops->open(route->backend_state, route, &w->rt);
out:
    if (st == GPUOPT_OK)
        gpo_wire_put_text(out, w->ops->compiler_version(w->rt));
    free(backend);
    free(name);
    free(language);
    return st;
}

static gpuopt_status bad_handle(const char *what, uint64_t id)
{
    return gpo_fail(GPUOPT_ERR_IO, "measurement worker: no %s %llu", what, (unsigned long long)id);
}

/* One runtime call; its results appended to out. */
static gpuopt_status call(worker *w, gpo_wire_msg *in, gpo_wire_msg *out)
{
    const gpo_runtime_ops *ops = w->ops;
    gpo_rt *rt = w->rt;
    switch (in->op) {
    case GPO_WIRE_BUF_ALLOC: {
        gpo_rt_buf *b = NULL;
        gpuopt_status st = ops->buffer_alloc(rt, (size_t)gpo_wire_get_u64(in), &b);
        if (st != GPUOPT_OK)
            return st;
        uint64_t id = keep(w, BUFS, b);
        if (!id)
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "measurement worker: out of memory");
        gpo_wire_put_u64(out, id);
        return GPUOPT_OK;
    }
    case GPO_WIRE_BUF_WRITE: {
        uint64_t id = gpo_wire_get_u64(in), off = gpo_wire_get_u64(in);
        size_t n = 0;
        const void *p = gpo_wire_get_bytes(in, &n);
        gpo_rt_buf *b = find(&w->h[BUFS], id);
        return b ? ops->buffer_write(rt, b, (size_t)off, p, n) : bad_handle("buffer", id);
    }
    case GPO_WIRE_BUF_READ: {
        uint64_t id = gpo_wire_get_u64(in), off = gpo_wire_get_u64(in), n = gpo_wire_get_u64(in);
        gpo_rt_buf *b = find(&w->h[BUFS], id);
        if (!b)
            return bad_handle("buffer", id);
        void *p = malloc(n ? (size_t)n : 1);
        if (!p)
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "measurement worker: out of memory");
        gpuopt_status st = ops->buffer_read(rt, b, (size_t)off, p, (size_t)n);
        if (st == GPUOPT_OK)
            gpo_wire_put_bytes(out, p, (size_t)n);
        free(p);
        return st;
    }
    case GPO_WIRE_PROG_BUILD: {
        char *src = gpo_wire_get_text(in), *opts = gpo_wire_get_text(in), *log = NULL;
        gpo_rt_prog *p = NULL;
        gpuopt_status st = in->bad ? gpo_fail(GPUOPT_ERR_NO_MEMORY, "measurement worker: out "
                                                                    "of memory")
                                   : ops->program_build(rt, src, opts, &p, &log);
        uint64_t id = 0;
        if (st == GPUOPT_OK && !(id = keep(w, PROGS, p)))
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "measurement worker: out of memory");
        gpo_wire_put_u64(out, id);
        gpo_wire_put_u64(out, log != NULL);
        gpo_wire_put_text(out, log);
        free(src);
        free(opts);
        free(log);
        return st;
    }
    case GPO_WIRE_KERN_CREATE: {
        uint64_t pid = gpo_wire_get_u64(in);
        char *name = gpo_wire_get_text(in);
        gpo_rt_prog *p = find(&w->h[PROGS], pid);
        gpo_rt_kernel *k = NULL;
        gpuopt_status st = !name ? gpo_fail(GPUOPT_ERR_NO_MEMORY, "measurement worker: out of "
                                                                  "memory")
                           : p   ? ops->kernel_create(rt, p, name, &k)
                                 : bad_handle("program", pid);
        free(name);
        uint64_t id = 0;
        if (st == GPUOPT_OK && !(id = keep(w, KERNS, k)))
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "measurement worker: out of memory");
        gpo_wire_put_u64(out, id);
        return st;
    }
    default: break;
    }
    uint64_t kid = gpo_wire_get_u64(in);
    gpo_rt_kernel *k = find(&w->h[KERNS], kid);
    if (in->op != GPO_WIRE_FINISH && !k)
        return bad_handle("kernel", kid);
    switch (in->op) {
    case GPO_WIRE_KERN_BUF: {
        uint64_t index = gpo_wire_get_u64(in), bid = gpo_wire_get_u64(in);
        gpo_rt_buf *b = find(&w->h[BUFS], bid);
        return b ? ops->kernel_set_buffer(rt, k, (uint32_t)index, b) : bad_handle("buffer", bid);
    }
    case GPO_WIRE_KERN_SCALAR: {
        uint64_t index = gpo_wire_get_u64(in);
        size_t n = 0;
        const void *v = gpo_wire_get_bytes(in, &n);
        return ops->kernel_set_scalar(rt, k, (uint32_t)index, v, n);
    }
    case GPO_WIRE_KERN_LOCAL: {
        uint64_t index = gpo_wire_get_u64(in), bytes = gpo_wire_get_u64(in);
        if (!ops->kernel_set_local)
            return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "this runtime has no local memory arguments");
        return ops->kernel_set_local(rt, k, (uint32_t)index, (size_t)bytes);
    }
    case GPO_WIRE_KERN_GROUP: {
        size_t max = 0;
        if (!ops->kernel_max_group)
            return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "this runtime does not say");
        gpuopt_status st = ops->kernel_max_group(rt, k, &max);
        gpo_wire_put_u64(out, max);
        return st;
    }
    case GPO_WIRE_LAUNCH: {
        uint32_t dims = (uint32_t)gpo_wire_get_u64(in);
        size_t global[3], local[3];
        for (int i = 0; i < 3; i++)
            global[i] = (size_t)gpo_wire_get_u64(in);
        int has_local = gpo_wire_get_u64(in) != 0;
        for (int i = 0; i < 3; i++)
            local[i] = (size_t)gpo_wire_get_u64(in);
        int timed = gpo_wire_get_u64(in) != 0;
        double dev = -1;
        uint64_t t0 = gpo_now_ns();
        gpuopt_status st =
            ops->launch(rt, k, dims, global, has_local ? local : NULL, timed ? &dev : NULL);
        gpo_wire_put_f64(out, dev);
        gpo_wire_put_f64(out, (double)(gpo_now_ns() - t0));
        return st;
    }
    case GPO_WIRE_FINISH: return ops->finish(rt);
    default:
        return gpo_fail(GPUOPT_ERR_IO, "measurement worker: unknown request %u", (unsigned)in->op);
    }
}

/* The *_FREE requests: not answered. */
static int release(worker *w, gpo_wire_msg *in)
{
    int kind = in->op == GPO_WIRE_BUF_FREE    ? BUFS
               : in->op == GPO_WIRE_PROG_FREE ? PROGS
               : in->op == GPO_WIRE_KERN_FREE ? KERNS
                                              : -1;
    if (kind < 0)
        return 0;
    void *p = take(&w->h[kind], gpo_wire_get_u64(in));
    if (p)
        let_go(w, kind, p);
    return 1;
}

static void worker_close(worker *w)
{
    /* Kernels before their programs, before the buffers. */
    for (int kind = KINDS - 1; kind >= 0; kind--) {
        for (size_t i = 0; w->rt && i < w->h[kind].n; i++)
            if (w->h[kind].slot[i])
                let_go(w, kind, w->h[kind].slot[i]);
        free(w->h[kind].slot);
    }
    if (w->rt)
        w->ops->close(w->rt);
    gpuopt_context_destroy(w->ctx);
}

int gpo_worker_serve(int fd)
{
    worker w = {0};
    int rc = 1;
    for (;;) {
        gpo_wire_msg in, out;
        int got = gpo_wire_recv(fd, &in);
        if (got != 0) {
            rc = got == -1 && in.len == 0 ? 0 : 1; /* end of stream: the library let go */
            gpo_wire_free(&in);
            break;
        }
        if (in.op == GPO_WIRE_CLOSE) {
            gpo_wire_free(&in);
            rc = 0;
            break;
        }
        if (w.rt && release(&w, &in)) {
            gpo_wire_free(&in);
            continue;
        }
        gpo_wire_init(&out, in.op, 0);
        gpo_detail_clear();
        gpuopt_status st;
        if (in.op == GPO_WIRE_HELLO)
            st = w.ctx ? gpo_fail(GPUOPT_ERR_IO, "measurement worker: a second HELLO")
                       : open_session(&w, &in, &out);
        else if (!w.rt)
            st = gpo_fail(GPUOPT_ERR_IO, "measurement worker: no session is open");
        else
            st = call(&w, &in, &out);
        /* The reply: status, detail, then the results written above. */
        gpo_wire_msg reply;
        gpo_wire_init(&reply, in.op, (int32_t)st);
        gpo_wire_put_text(&reply, st == GPUOPT_OK ? "" : gpo_detail_get());
        if (!out.bad && out.len)
            gpo_wire_put_bytes(&reply, out.data, out.len);
        else
            gpo_wire_put_bytes(&reply, NULL, 0);
        int sent = gpo_wire_send(fd, &reply);
        gpo_wire_free(&reply);
        gpo_wire_free(&out);
        gpo_wire_free(&in);
        if (sent != 0)
            break;
    }
    worker_close(&w);
    return rc;
}
