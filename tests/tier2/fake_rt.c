/* The tier-2 test double (fake_rt.h). */
#include "fake_rt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "context.h"
#include "util/strutil.h"

fake_spec fake_gpu, fake_cl;
int fake_bare_enabled;

struct gpo_rt {
    fake_spec *s;
};
struct gpo_rt_buf {
    size_t size;
    unsigned char *data;
};
struct gpo_rt_prog {
    int unused;
};
struct gpo_rt_kernel {
    char name[32];
    gpo_rt_buf *buf[3];
    uint32_t n;
    size_t shared;
};

/* The reduction's output is computed when it is read (launches are
 * timed thousands of times, read once per size). */
static struct {
    gpo_rt_buf *in, *out;
    uint32_t n;
    size_t global, local;
    int wrong;
} pending;

static void reduce_now(void)
{
    const uint32_t *in = (const uint32_t *)pending.in->data;
    uint32_t *out = (uint32_t *)pending.out->data;
    size_t groups = pending.global / pending.local;
    memset(out, 0, groups * 4);
    for (size_t w = 0; w < pending.global; w++)
        for (size_t i = w; i < pending.n; i += pending.global)
            out[w / pending.local] += in[i];
    out[0] += (uint32_t)pending.wrong;
    pending.out = NULL;
}

/* Counts the call and fails it when the spec says so. */
static gpuopt_status enter(fake_spec *s, const char *op)
{
    s->calls++;
    if (!s->fail_op || strcmp(s->fail_op, op) != 0)
        return GPUOPT_OK;
    if (s->fail_nth && ++s->fail_seen != s->fail_nth)
        return GPUOPT_OK;
    return gpo_fail(s->fail_status ? s->fail_status : GPUOPT_ERR_DRIVER, "fake: %s failed: %s", op,
                    s->fail_words ? s->fail_words : "injected");
}

static void spin(double ns)
{
    uint64_t end = gpo_now_ns() + (uint64_t)ns;
    while (gpo_now_ns() < end)
        ;
}

static gpuopt_status rt_open(void *state, const gpo_route *route, gpo_rt **rt)
{
    fake_spec *s = state;
    (void)route;
    *rt = NULL;
    gpuopt_status st = enter(s, "open");
    if (st)
        return st;
    *rt = calloc(1, sizeof **rt);
    if (!*rt)
        return GPUOPT_ERR_NO_MEMORY;
    (*rt)->s = s;
    s->opens++;
    s->live++;
    return GPUOPT_OK;
}

static void rt_close(gpo_rt *rt)
{
    if (!rt)
        return;
    rt->s->calls++;
    rt->s->live--;
    free(rt);
}

static gpuopt_status buf_alloc(gpo_rt *rt, size_t bytes, gpo_rt_buf **out)
{
    *out = NULL;
    gpuopt_status st = enter(rt->s, "buffer_alloc");
    if (st)
        return st;
    gpo_rt_buf *b = calloc(1, sizeof *b);
    if (b)
        b->data = calloc(1, bytes);
    if (!b || !b->data) {
        free(b);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "fake: no memory");
    }
    b->size = bytes;
    rt->s->live++;
    *out = b;
    return GPUOPT_OK;
}

static void buf_free(gpo_rt *rt, gpo_rt_buf *b)
{
    rt->s->calls++;
    if (!b)
        return;
    if (pending.out == b || pending.in == b)
        pending.out = pending.in = NULL;
    rt->s->live--;
    free(b->data);
    free(b);
}

static gpuopt_status buf_write(gpo_rt *rt, gpo_rt_buf *b, size_t off, const void *src, size_t n)
{
    gpuopt_status st = enter(rt->s, "buffer_write");
    if (st)
        return st;
    memcpy(b->data + off, src, n);
    return GPUOPT_OK;
}

static gpuopt_status buf_read(gpo_rt *rt, gpo_rt_buf *b, size_t off, void *dst, size_t n)
{
    gpuopt_status st = enter(rt->s, "buffer_read");
    if (st)
        return st;
    if (pending.out == b)
        reduce_now();
    memcpy(dst, b->data + off, n);
    return GPUOPT_OK;
}

/* Pinned blocks are marked so transfers can tell them apart. */
static void *pinned_blocks[8];

static gpuopt_status pin_alloc(gpo_rt *rt, size_t bytes, void **ptr)
{
    *ptr = NULL;
    gpuopt_status st = enter(rt->s, "host_alloc_pinned");
    if (st)
        return st;
    *ptr = malloc(bytes);
    if (!*ptr)
        return GPUOPT_ERR_NO_MEMORY;
    for (int i = 0; i < 8; i++)
        if (!pinned_blocks[i]) {
            pinned_blocks[i] = *ptr;
            break;
        }
    rt->s->live++;
    return GPUOPT_OK;
}

static void pin_free(gpo_rt *rt, void *ptr)
{
    rt->s->calls++;
    for (int i = 0; i < 8; i++)
        if (pinned_blocks[i] == ptr)
            pinned_blocks[i] = NULL;
    rt->s->live--;
    free(ptr);
}

static int is_pinned(const void *p)
{
    for (int i = 0; i < 8; i++)
        if (p && pinned_blocks[i] == p)
            return 1;
    return 0;
}

/* A 16 MiB transfer is the transfer benchmark's: it only takes its time
 * (spinning, so the host clock sees it), pinned twice as fast by default. */
static gpuopt_status pwrite_(gpo_rt *rt, gpo_rt_buf *b, size_t off, const void *src, size_t n)
{
    if (n != 16u << 20)
        return buf_write(rt, b, off, src, n);
    gpuopt_status st = enter(rt->s, "buffer_write");
    if (!st)
        spin(is_pinned(src) ? rt->s->pinned_spin_ns : rt->s->pageable_spin_ns);
    return st;
}

static gpuopt_status pread_(gpo_rt *rt, gpo_rt_buf *b, size_t off, void *dst, size_t n)
{
    if (n != 16u << 20)
        return buf_read(rt, b, off, dst, n);
    gpuopt_status st = enter(rt->s, "buffer_read");
    if (!st)
        spin(is_pinned(dst) ? rt->s->pinned_spin_ns : rt->s->pageable_spin_ns);
    return st;
}

static gpuopt_status prog_build(gpo_rt *rt, const char *src, const char *opt, gpo_rt_prog **p,
                                char **log)
{
    (void)opt;
    *p = NULL;
    if (log)
        *log = NULL;
    gpuopt_status st = enter(rt->s, "program_build");
    if (st)
        return st;
    if (!src || !strstr(src, "gpo_t2_reduce"))
        return gpo_fail(GPUOPT_ERR_BUILD, "fake: not the tier-2 program");
    *p = calloc(1, sizeof **p);
    rt->s->live++;
    return *p ? GPUOPT_OK : GPUOPT_ERR_NO_MEMORY;
}

static void prog_free(gpo_rt *rt, gpo_rt_prog *p)
{
    rt->s->calls++;
    if (p)
        rt->s->live--;
    free(p);
}

static gpuopt_status k_create(gpo_rt *rt, gpo_rt_prog *p, const char *name, gpo_rt_kernel **k)
{
    (void)p;
    *k = NULL;
    gpuopt_status st = enter(rt->s, "kernel_create");
    if (st)
        return st;
    *k = calloc(1, sizeof **k);
    if (!*k)
        return GPUOPT_ERR_NO_MEMORY;
    gpo_strlcpy((*k)->name, name, sizeof(*k)->name);
    rt->s->live++;
    return GPUOPT_OK;
}

static void k_free(gpo_rt *rt, gpo_rt_kernel *k)
{
    rt->s->calls++;
    if (k)
        rt->s->live--;
    free(k);
}

static gpuopt_status k_buf(gpo_rt *rt, gpo_rt_kernel *k, uint32_t i, gpo_rt_buf *b)
{
    gpuopt_status st = enter(rt->s, "kernel_set_buffer");
    if (!st && i < 2)
        k->buf[i] = b;
    return st;
}

static gpuopt_status k_scalar(gpo_rt *rt, gpo_rt_kernel *k, uint32_t i, const void *v, size_t n)
{
    gpuopt_status st = enter(rt->s, "kernel_set_scalar");
    if (!st && i == 2 && n == sizeof k->n)
        memcpy(&k->n, v, n);
    return st;
}

static gpuopt_status k_local(gpo_rt *rt, gpo_rt_kernel *k, uint32_t i, size_t bytes)
{
    (void)i;
    gpuopt_status st = enter(rt->s, "kernel_set_local");
    if (!st)
        k->shared = bytes;
    return st;
}

static gpuopt_status k_max(gpo_rt *rt, gpo_rt_kernel *k, size_t *max)
{
    (void)k;
    gpuopt_status st = enter(rt->s, "kernel_max_group");
    if (!st)
        *max = rt->s->kernel_max;
    return st;
}

/* Simulated time: the best size's time, plus `slope` per factor of 2 away,
 * with a +-0.5% wobble so runs have a spread, and the lucky runs. */
static double sim_ns(fake_spec *s, double base, int64_t best, size_t local)
{
    static unsigned tick;
    double away = fabs(log2((double)local / (double)best));
    double wobble = (tick++ % 3 == 0) ? 1.005 : (tick % 3 == 1) ? 0.995 : 1.0;
    if (s->lucky_every > 0 && (int64_t)local == s->lucky_local &&
        ++s->lucky_seen % s->lucky_every == 0)
        wobble *= 0.5;
    return base * (1 + s->slope * away) * wobble;
}

static gpuopt_status do_launch(gpo_rt *rt, gpo_rt_kernel *k, uint32_t dims, const size_t g[3],
                               const size_t *l, double *ns)
{
    fake_spec *s = rt->s;
    gpuopt_status st = enter(s, "launch");
    if (st)
        return st;
    s->launches++;
    size_t local = l ? l[0] : 1;
    if (dims != 1 || !local || g[0] % local)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "fake launch: bad geometry");
    int seen = 0;
    for (int i = 0; i < s->n_locals; i++)
        seen |= s->locals[i] == (int64_t)local;
    if (!seen && s->n_locals < 64)
        s->locals[s->n_locals++] = (int64_t)local;
    double t = 1000;
    if (strcmp(k->name, "gpo_t2_copy") == 0) {
        t = sim_ns(s, s->copy_ns, s->best_copy, local);
        size_t n = k->n < k->buf[0]->size / 4 ? k->n : k->buf[0]->size / 4;
        const unsigned char *src = k->buf[0]->data;
        size_t last = n * 4 >= 4 ? n * 4 - 4 : 0; /* its first, middle and last words */
        if (!memcmp(src, "\0\0\0\0", 4) || !memcmp(src + last / 2 / 4 * 4, "\0\0\0\0", 4) ||
            !memcmp(src + last, "\0\0\0\0", 4))
            s->unwritten_copies++;
        memcpy(k->buf[1]->data, k->buf[0]->data, n * 4 < 4096 ? n * 4 : 4096);
    } else if (strcmp(k->name, "gpo_t2_reduce") == 0) {
        t = sim_ns(s, s->reduce_ns, s->best_reduce, local);
        pending.in = k->buf[0];
        pending.out = k->buf[1];
        pending.n = k->n;
        pending.global = g[0];
        pending.local = local;
        pending.wrong = s->wrong_sum;
    }
    if (ns)
        *ns = t;
    return GPUOPT_OK;
}

static gpuopt_status do_finish(gpo_rt *rt)
{
    return enter(rt->s, "finish");
}

static const char *compiler(gpo_rt *rt)
{
    (void)rt;
    return "fake 1.0";
}

static const gpo_runtime_ops fake_ops = {
    .language = "opencl-c",
    .open = rt_open,
    .close = rt_close,
    .buffer_alloc = buf_alloc,
    .buffer_free = buf_free,
    .buffer_write = pwrite_,
    .buffer_read = pread_,
    .host_alloc_pinned = pin_alloc,
    .host_free_pinned = pin_free,
    .program_build = prog_build,
    .program_free = prog_free,
    .kernel_create = k_create,
    .kernel_free = k_free,
    .kernel_set_buffer = k_buf,
    .kernel_set_scalar = k_scalar,
    .kernel_set_local = k_local,
    .kernel_max_group = k_max,
    .launch = do_launch,
    .finish = do_finish,
    .compiler_version = compiler,
};

/* ---- the backends ------------------------------------------------------------------ */

static gpuopt_status load_gpu(const gpo_backend_env *e, void **st, gpo_backend_report *r)
{
    (void)e;
    (void)r;
    *st = &fake_gpu;
    return GPUOPT_OK;
}

static gpuopt_status load_cl(const gpo_backend_env *e, void **st, gpo_backend_report *r)
{
    (void)e;
    (void)r;
    *st = &fake_cl;
    return GPUOPT_OK;
}

static gpuopt_status load_bare(const gpo_backend_env *e, void **st, gpo_backend_report *r)
{
    (void)e;
    (void)r;
    *st = &fake_bare_enabled;
    return GPUOPT_OK;
}

static void unload(void *state)
{
    (void)state;
}

static gpuopt_status push(gpo_device_list *out, const char *name, const char *uuid,
                          const char *driver, uint64_t l2)
{
    gpuopt_device *d = gpo_device_new();
    if (!d)
        return GPUOPT_ERR_NO_MEMORY;
    d->info.type = GPUOPT_DEVICE_TYPE_GPU;
    d->info.index = 0;
    gpo_strlcpy(d->info.name, name, sizeof d->info.name);
    gpo_strlcpy(d->info.uuid, uuid, sizeof d->info.uuid);
    gpo_strlcpy(d->info.arch_name, "fake_1", sizeof d->info.arch_name);
    gpo_strlcpy(d->info.driver_version, driver, sizeof d->info.driver_version);
    gpo_strlcpy(d->info.runtime_version, "fake runtime 1", sizeof d->info.runtime_version);
    d->info.compute_units = 4;
    d->info.max_threads_per_block = 2048;
    d->info.memory_bytes = 8ull << 30;
    d->info.l2_bytes = l2;
    d->info.shared_mem_per_block = 48u << 10;
    d->est_gflops = 1000;
    return gpo_device_list_push(out, d);
}

static gpuopt_status enum_gpu(void *state, const gpo_backend_env *e, gpo_device_list *out)
{
    (void)e;
    fake_spec *s = state;
    return s->enabled ? push(out, "Fake GPU", "GPU-feed0000-0000-0000-0000-000000000001", s->driver,
                             s->l2_bytes)
                      : GPUOPT_OK;
}

static gpuopt_status enum_bare(void *state, const gpo_backend_env *e, gpo_device_list *out)
{
    (void)e;
    return *(int *)state ? push(out, "Bare accelerator", "BARE-1", "1.0", 4u << 20) : GPUOPT_OK;
}

/* Tier 1's launch settings, which tier 2's sweeps start from. */
static gpuopt_status tier1(void *state, const gpo_route *r, const gpuopt_device *d,
                           struct gpuopt_plan *p)
{
    (void)state;
    (void)r;
    (void)d;
    gpuopt_status st = gpo_knob_set_int(p, "launch.block_multiple", 32, "fake: warps of 32");
    return st ? st : gpo_knob_set_int(p, "launch.block_size", 256, "fake: 256 threads");
}

static gpuopt_status tier0(void *state, const gpo_route *r, const gpuopt_device *d,
                           struct gpuopt_plan *p)
{
    return tier1(state, r, d, p);
}

#define FAKE_BACKEND(var, nm, native, loadfn, enumfn, rt)                                          \
    const gpo_backend var = {.abi = GPO_BACKEND_ABI,                                               \
                             .name = nm,                                                           \
                             .description = "tier-2 test double",                                  \
                             .native_gpu = native,                                                 \
                             .load = loadfn,                                                       \
                             .unload = unload,                                                     \
                             .enumerate = enumfn,                                                  \
                             .tier0 = tier0,                                                       \
                             .tier1 = tier1,                                                       \
                             .runtime = rt}

FAKE_BACKEND(fake_backend_gpu, "fakegpu", 1, load_gpu, enum_gpu, &fake_ops);
FAKE_BACKEND(fake_backend_cl, "fakecl", 0, load_cl, enum_gpu, &fake_ops);
FAKE_BACKEND(fake_backend_bare, "bare", 0, load_bare, enum_bare, NULL);

static const gpo_backend *const fake_list[3] = {&fake_backend_gpu, &fake_backend_cl,
                                                &fake_backend_bare};

static void spec_reset(fake_spec *s)
{
    memset(s, 0, sizeof *s);
    s->enabled = 1;
    gpo_strlcpy(s->driver, "1.0", sizeof s->driver);
    s->best_copy = 512;
    s->best_reduce = 128;
    s->copy_ns = 100e3;
    s->reduce_ns = 50e3;
    s->slope = 0.5;
    s->pageable_spin_ns = 200e3;
    s->pinned_spin_ns = 100e3;
    s->kernel_max = 1024;
    s->l2_bytes = 4u << 20;
}

void fake_reset(void)
{
    spec_reset(&fake_gpu);
    spec_reset(&fake_cl);
    fake_bare_enabled = 0;
    fake_loadavg = "0.10 0.10 0.10 1/100 1";
    fake_online = NULL;
}

const char *fake_loadavg = "0.10 0.10 0.10 1/100 1";
const char *fake_online;

/* mkdir -p of root/rel ("a/b/c" makes a, a/b and a/b/c under root). */
static int mkdirs(const char *root, const char *rel)
{
    char path[800];
    size_t at = (size_t)snprintf(path, sizeof path, "%s/", root);
    for (size_t i = 0;; i++) {
        if (rel[i] == '/' || rel[i] == '\0') {
            path[at] = '\0';
            if (mkdir(path, 0700) && errno != EEXIST)
                return -1;
            if (rel[i] == '\0')
                return 0;
        }
        if (at + 1 >= sizeof path)
            return -1;
        path[at++] = rel[i];
    }
}

gpuopt_status fake_context(const char *cache_dir, gpuopt_context **ctx)
{
    /* A recorded /proc/loadavg: the tests say how busy the machine is, not
     * the machine that runs them. */
    static char root[600];
    char path[700];
    snprintf(root, sizeof root, "%s/root", cache_dir);
    snprintf(path, sizeof path, "%s/proc", root);
    if ((mkdir(root, 0700) && errno != EEXIST) || (mkdir(path, 0700) && errno != EEXIST))
        return GPUOPT_ERR_IO;
    snprintf(path, sizeof path, "%s/proc/loadavg", root);
    FILE *f = fopen(path, "w");
    if (!f)
        return GPUOPT_ERR_IO;
    fprintf(f, "%s\n", fake_loadavg);
    fclose(f);
    if (fake_online) {
        if (mkdirs(root, "sys/devices/system/cpu") != 0)
            return GPUOPT_ERR_IO;
        snprintf(path, sizeof path, "%s/sys/devices/system/cpu/online", root);
        if (!(f = fopen(path, "w")))
            return GPUOPT_ERR_IO;
        fprintf(f, "%s\n", fake_online);
        fclose(f);
    }
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.sysfs_root = root;
    o.cache_dir = cache_dir;
    o.log_level = "off";
    return gpo_context_create_with(&o, fake_list, 3, ctx);
}
