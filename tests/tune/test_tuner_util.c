#include "test_tuner_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "tune/tuner.h"

char tt_log[16384];

static void logger(int32_t level, const char *message, void *user)
{
    (void)user;
    size_t n = strlen(tt_log);
    snprintf(tt_log + n, sizeof tt_log - n, "%d:%s\n", (int)level, message);
}

int tt_context(const char *backend, const char *dir, gpuopt_context **ctx, gpuopt_device **dev)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = backend;
    o.cache_dir = dir;
    o.log_level = "info";
    o.log_fn = logger;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    tt_log[0] = '\0';
    if (gpuopt_context_create(&o, ctx) != GPUOPT_OK)
        return -1;
    if (gpuopt_device_select(*ctx, backend, dev) != GPUOPT_OK) {
        fprintf(stderr, "no %s device: %s\n", backend, gpuopt_last_error());
        gpuopt_context_destroy(*ctx);
        return -1;
    }
    return 0;
}

const char *const tt_planted_source =
    "__kernel void planted(__global const float *a, __global float *out, int n)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    if (i >= n)\n"
    "        return;\n"
    "#if A == 1 && B == 4\n"
    "#error planted_build_failure\n"
    "#endif\n"
    "#if A == 4 && B == 4\n"
    "    return; /* planted: fastest, and wrong */\n"
    "#endif\n"
    "    float acc = 0.0f;\n"
    "#if !(A == 3 && B == 2)\n"
    "    for (int j = 0; j < 1000 * A; j++)\n"
    "        acc += a[(i + j) % n] * 0.0f;\n"
    "#endif\n"
    "    out[i] = 2.0f * a[i] + acc;\n"
    "}\n";

const char *const tt_reference_source =
    "__kernel void reference(__global const float *a, __global float *out, int n)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        out[i] = 2.0f * a[i];\n"
    "}\n";

gpuopt_space *tt_planted_space(void)
{
    gpuopt_space *s = NULL;
    static const int64_t a[] = {1, 2, 3, 4}, b[] = {1, 2, 4};
    if (gpuopt_space_create(&s) != GPUOPT_OK || gpuopt_space_add_int(s, "A", a, 4) != GPUOPT_OK ||
        gpuopt_space_add_int(s, "B", b, 3) != GPUOPT_OK ||
        gpuopt_space_set_size(s, "N", 1024) != GPUOPT_OK) {
        gpuopt_space_destroy(s);
        return NULL;
    }
    return s;
}

gpuopt_tuner_settings tt_settings(const gpuopt_tuner *t)
{
    gpuopt_tuner_settings s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    if (gpuopt_tuner_get_settings(t, &s) != GPUOPT_OK)
        fprintf(stderr, "tt_settings: %s\n", gpuopt_last_error());
    return s;
}

gpuopt_kernel_desc tt_planted_kernel(void)
{
    gpuopt_kernel_desc k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.source = tt_planted_source;
    k.entry = "planted";
    k.language = GPUOPT_LANG_OPENCL_C;
    k.global[0] = "N";
    k.local[0] = "64";
    return k;
}

gpuopt_tuner *tt_planted_tuner(gpuopt_context *ctx, gpuopt_device *dev, const gpuopt_space *space,
                               int32_t mode)
{
    gpuopt_tuner *t = NULL;
    gpuopt_kernel_desc k = tt_planted_kernel();
    gpuopt_buffer_desc a = {.struct_size = sizeof a}, out = {.struct_size = sizeof out};
    a.type = out.type = GPUOPT_ELEM_F32;
    a.count = out.count = "N";
    a.init = GPUOPT_INIT_RANDOM;
    out.init = GPUOPT_INIT_ZEROS;
    out.is_output = 1;
    gpuopt_scalar_desc n = {.struct_size = sizeof n};
    n.type = GPUOPT_ELEM_I32;
    n.expression = "N";
    gpuopt_reference_desc ref = {.struct_size = sizeof ref};
    ref.source = tt_reference_source;
    ref.entry = "reference";
    ref.global[0] = "N";
    if (gpuopt_tuner_create(ctx, dev, space, &t) != GPUOPT_OK || gpuopt_tuner_set_kernel(t, &k) ||
        gpuopt_tuner_set_buffer(t, 0, &a) || gpuopt_tuner_set_buffer(t, 1, &out) ||
        gpuopt_tuner_set_scalar(t, 2, &n) || gpuopt_tuner_set_reference_kernel(t, &ref)) {
        fprintf(stderr, "planted tuner: %s\n", gpuopt_last_error());
        gpuopt_tuner_destroy(t);
        return NULL;
    }
    gpuopt_tuner_settings s = tt_settings(t);
    s.warmup_ms = 0.5;
    s.repeat_ms = 2;
    s.min_runs = 3;
    s.max_runs = 10;
    s.cache_mode = mode;
    if (gpuopt_tuner_set_settings(t, &s)) {
        fprintf(stderr, "planted tuner: %s\n", gpuopt_last_error());
        gpuopt_tuner_destroy(t);
        return NULL;
    }
    return t;
}

const char *tt_best(const gpuopt_result *r)
{
    static char text[256];
    gpuopt_candidate c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    text[0] = '\0';
    char *s = NULL;
    if (gpuopt_result_best(r, &c) == GPUOPT_OK && gpuopt_point_to_string(c.point, &s) == 0) {
        snprintf(text, sizeof text, "%s", s);
        gpuopt_free(s);
    }
    return text;
}

int tt_find(const gpuopt_result *r, const char *text)
{
    int32_t n = 0;
    gpuopt_result_count(r, &n);
    for (int32_t i = 0; i < n; i++) {
        gpuopt_candidate c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        char *s = NULL;
        if (gpuopt_result_at(r, i, &c) != GPUOPT_OK || gpuopt_point_to_string(c.point, &s))
            continue;
        int eq = strcmp(s, text) == 0;
        gpuopt_free(s);
        if (eq)
            return i;
    }
    return -1;
}

int tt_status_of(const gpuopt_result *r, const char *text)
{
    int i = tt_find(r, text);
    gpuopt_candidate c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    return i >= 0 && gpuopt_result_at(r, i, &c) == GPUOPT_OK ? c.status : -1;
}

/* ---- counting wrapper ------------------------------------------------------- */

tt_counts tt_count;
static const gpo_runtime_ops *real;
static gpo_runtime_ops counting;

static gpuopt_status c_open(void *s, const gpo_route *r, gpo_rt **rt)
{
    __atomic_add_fetch(&tt_count.open, 1, __ATOMIC_RELAXED);
    return real->open(s, r, rt);
}

static gpuopt_status c_build(gpo_rt *rt, const char *src, const char *opts, gpo_rt_prog **p,
                             char **log)
{
    /* Called from the tuner's build worker too. */
    __atomic_add_fetch(&tt_count.build, 1, __ATOMIC_RELAXED);
    return real->program_build(rt, src, opts, p, log);
}

static gpuopt_status c_kernel(gpo_rt *rt, gpo_rt_prog *p, const char *name, gpo_rt_kernel **k)
{
    __atomic_add_fetch(&tt_count.kernel_create, 1, __ATOMIC_RELAXED);
    return real->kernel_create(rt, p, name, k);
}

static gpuopt_status c_launch(gpo_rt *rt, gpo_rt_kernel *k, uint32_t dims, const size_t g[3],
                              const size_t *l, double *ns)
{
    __atomic_add_fetch(&tt_count.launch, 1, __ATOMIC_RELAXED);
    return real->launch(rt, k, dims, g, l, ns);
}

static gpuopt_status c_alloc(gpo_rt *rt, size_t bytes, gpo_rt_buf **b)
{
    __atomic_add_fetch(&tt_count.buffer_alloc, 1, __ATOMIC_RELAXED);
    return real->buffer_alloc(rt, bytes, b);
}

static const gpo_runtime_ops *hook(const gpo_runtime_ops *r)
{
    real = r;
    counting = *r;
    counting.open = c_open;
    counting.program_build = c_build;
    counting.kernel_create = c_kernel;
    counting.launch = c_launch;
    counting.buffer_alloc = c_alloc;
    return &counting;
}

void tt_count_install(gpuopt_tuner *t)
{
    memset(&tt_count, 0, sizeof tt_count);
    gpo_tuner_test_wrap(t, hook);
}
