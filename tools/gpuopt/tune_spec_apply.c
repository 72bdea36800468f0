/* Turning a loaded spec into a space and a tuner through the public API.
 * The loader checked types and ranges; what only the library can judge
 * (expressions, names they use, limits) is reported here with the JSON
 * path it came from and the library's own detail. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tune_spec.h"

typedef struct actx {
    const tune_spec *s;
    char *err;
    size_t cap;
} actx;

/* "FILE: PATH: WHAT: <library detail>", returning the status. */
static gpuopt_status afail(actx *a, gpuopt_status st, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static gpuopt_status afail(actx *a, gpuopt_status st, const char *path, const char *fmt, ...)
{
    const char *detail = gpuopt_last_error();
    int off = snprintf(a->err, a->cap, "%s: %s: ", a->s->file, path);
    if (off < 0 || (size_t)off >= a->cap)
        return st;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(a->err + off, a->cap - (size_t)off, fmt, ap);
    va_end(ap);
    if (w >= 0 && (size_t)(off + w) < a->cap)
        snprintf(a->err + off + w, a->cap - (size_t)(off + w), ": %s%s%s", gpuopt_strerror(st),
                 detail && *detail ? ": " : "", detail ? detail : "");
    return st;
}

static gpuopt_status build_space(actx *a, gpuopt_space *sp)
{
    const tune_spec *s = a->s;
    gpuopt_status st;
    char path[320];
    /* Sizes first: constraints may name them. */
    for (int32_t i = 0; i < s->n_sizes; i++) {
        st = gpuopt_space_set_size(sp, s->sizes[i].name, s->sizes[i].value);
        if (st) {
            snprintf(path, sizeof path, "sizes.%s", s->sizes[i].name);
            return afail(a, st, path, "the size is not accepted");
        }
    }
    for (int32_t i = 0; i < s->n_params; i++) {
        const ts_param *p = &s->params[i];
        st = p->is_enum ? gpuopt_space_add_enum(sp, p->name, p->texts, p->count)
                        : gpuopt_space_add_int(sp, p->name, p->ints, p->count);
        if (st) {
            snprintf(path, sizeof path, "parameters.%s", p->name);
            return afail(a, st, path, "the parameter is not accepted");
        }
    }
    for (int32_t i = 0; i < s->n_constraints; i++) {
        st = gpuopt_space_add_constraint(sp, s->constraints[i]);
        if (st) {
            snprintf(path, sizeof path, "constraints[%d]", (int)i);
            return afail(a, st, path, "\"%s\" is not accepted", s->constraints[i]);
        }
    }
    return GPUOPT_OK;
}

static gpuopt_status set_arguments(actx *a, gpuopt_tuner *t)
{
    const tune_spec *s = a->s;
    char path[64];
    for (uint32_t i = 0; i < s->n_args; i++) {
        const ts_arg *g = &s->args[i];
        gpuopt_status st;
        snprintf(path, sizeof path, "arguments[%u]", (unsigned)i);
        if (g->kind == TS_ARG_BUFFER) {
            gpuopt_buffer_desc b = {.struct_size = sizeof b,
                                    .type = g->type,
                                    .init = g->init,
                                    .count = g->count,
                                    .constant = g->constant,
                                    .data = g->data,
                                    .is_output = g->output};
            if ((st = gpuopt_tuner_set_buffer(t, i, &b)))
                return afail(a, st, path, "the buffer (size \"%s\") is not accepted", g->count);
        } else {
            /* expression NULL: the number */
            gpuopt_scalar_desc v = {.struct_size = sizeof v,
                                    .type = g->type,
                                    .expression = g->expr,
                                    .value = g->number};
            if ((st = gpuopt_tuner_set_scalar(t, i, &v)) && g->expr)
                return afail(a, st, path, "the scalar \"%s\" is not accepted", g->expr);
            if (st)
                return afail(a, st, path, "the scalar %g is not accepted", g->number);
        }
    }
    return GPUOPT_OK;
}

static gpuopt_status set_reference(actx *a, gpuopt_tuner *t)
{
    const tune_spec *s = a->s;
    gpuopt_status st = GPUOPT_OK;
    if (s->ref_source) {
        gpuopt_reference_desc r = {.struct_size = sizeof r,
                                   .source = s->ref_source,
                                   .entry = s->ref_entry,
                                   .build_options = s->ref_options};
        memcpy(r.global, s->ref_global, sizeof r.global);
        memcpy(r.local, s->ref_local, sizeof r.local);
        if ((st = gpuopt_tuner_set_reference_kernel(t, &r)))
            return afail(a, st, "reference", "the reference kernel is not accepted");
    }
    for (int32_t i = 0; i < s->n_ref_data; i++) {
        st = gpuopt_tuner_set_reference_data(t, s->ref_data[i].index, s->ref_data[i].data,
                                             s->ref_data[i].bytes);
        if (st) {
            char path[64];
            snprintf(path, sizeof path, "reference.data[%d]", (int)i);
            return afail(a, st, path, "the expected data is not accepted");
        }
    }
    return GPUOPT_OK;
}

/* The spec's settings, one part of the spec at a time, so that a refusal
 * names the part. */
static gpuopt_status set_settings(actx *a, gpuopt_tuner *t)
{
    const tune_spec *s = a->s;
    gpuopt_tuner_settings set = {.struct_size = sizeof set};
    gpuopt_status st = gpuopt_tuner_get_settings(t, &set);
    if (st)
        return afail(a, st, "kernel", "cannot read the tuner's settings");
    if (s->has_tolerance) {
        set.abs_tol = s->abs_tol;
        set.rel_tol = s->rel_tol;
        if ((st = gpuopt_tuner_set_settings(t, &set)))
            return afail(a, st, "tolerance", "the tolerance is not accepted");
    }
    if (s->workload_key) {
        set.workload_key = s->workload_key;
        if ((st = gpuopt_tuner_set_settings(t, &set)))
            return afail(a, st, "workload_key", "\"%s\" is not accepted", s->workload_key);
    }
    if (s->has_timing) {
        set.warmup_ms = s->warmup_ms;
        set.repeat_ms = s->repeat_ms;
        set.min_runs = s->min_runs;
        set.max_runs = s->max_runs;
        if ((st = gpuopt_tuner_set_settings(t, &set)))
            return afail(a, st, "timing", "the timing settings are not accepted");
    }
    if (s->isolation != GPUOPT_ISOLATION_AUTO) {
        set.isolation = s->isolation;
        if ((st = gpuopt_tuner_set_settings(t, &set)))
            return afail(a, st, "timing.isolation", "the isolation is not accepted");
    }
    if (s->timeout_s >= 0) {
        set.timeout_s = s->timeout_s;
        if ((st = gpuopt_tuner_set_settings(t, &set)))
            return afail(a, st, "timing.timeout_s", "the timeout is not accepted");
    }
    set.strategy = s->strategy;
    set.max_evaluations = s->max_evaluations;
    set.max_seconds = s->max_seconds;
    set.max_failures = s->max_failures;
    set.seed = s->seed;
    if ((st = gpuopt_tuner_set_settings(t, &set)))
        return afail(a, st, "search", "the search settings are not accepted");
    return GPUOPT_OK;
}

/* The part of the spec a refused kernel descriptor came from: the field
 * the library's detail names (its geometry and local memory are parts of
 * their own in the spec). */
static const char *kernel_part(void)
{
    const char *detail = gpuopt_last_error();
    if (strstr(detail, "local_memory"))
        return "local_memory";
    if (strstr(detail, "global[") || strstr(detail, "local["))
        return "geometry";
    return "kernel";
}

static gpuopt_status configure(actx *a, gpuopt_tuner *t)
{
    const tune_spec *s = a->s;
    gpuopt_kernel_desc k = {.struct_size = sizeof k,
                            .source = s->source,
                            .entry = s->entry,
                            .language = s->language,
                            .build_options = s->build_options,
                            .local_memory = s->local_memory};
    memcpy(k.global, s->global, sizeof k.global);
    memcpy(k.local, s->local, sizeof k.local);
    gpuopt_status st = gpuopt_tuner_set_kernel(t, &k);
    if (st)
        return afail(a, st, kernel_part(), "the kernel is not accepted");
    if ((st = set_arguments(a, t)) || (st = set_reference(a, t)))
        return st;
    return set_settings(a, t);
}

gpuopt_status tune_spec_space(const tune_spec *spec, gpuopt_space **space, char *err, size_t cap)
{
    assert(spec && space && err && cap);
    err[0] = '\0';
    *space = NULL;
    actx a = {spec, err, cap};
    gpuopt_space *sp = NULL;
    gpuopt_status st = gpuopt_space_create(&sp);
    if (st)
        return afail(&a, st, "parameters", "cannot create the space");
    if ((st = build_space(&a, sp))) {
        gpuopt_space_destroy(sp);
        return st;
    }
    *space = sp;
    return GPUOPT_OK;
}

gpuopt_status tune_spec_apply(const tune_spec *spec, gpuopt_context *ctx, gpuopt_device *device,
                              gpuopt_space **space, gpuopt_tuner **tuner, char *err, size_t cap)
{
    assert(spec && ctx && space && tuner && err && cap);
    err[0] = '\0';
    *space = NULL;
    *tuner = NULL;
    actx a = {spec, err, cap};
    gpuopt_space *sp = NULL;
    gpuopt_tuner *t = NULL;
    gpuopt_status st = tune_spec_space(spec, &sp, err, cap);
    if (st)
        goto out;
    st = gpuopt_tuner_create(ctx, device, sp, &t);
    if (st) {
        afail(&a, st, "kernel", "cannot create a tuner on the device");
        goto out;
    }
    if ((st = configure(&a, t)))
        goto out;
    *space = sp;
    *tuner = t;
    return GPUOPT_OK;
out:
    gpuopt_tuner_destroy(t);
    gpuopt_space_destroy(sp);
    return st;
}
