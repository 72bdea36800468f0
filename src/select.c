/* Device selection (see select.h and docs/selection.md).
 *
 * A search ranks the usable devices it matches by, in order: whether the
 * workload fits (when it gives sizes), device type, a native backend over
 * OpenCL, the throughput that matters for the workload, memory, position.
 * Every fact ranked is the primary backend's own (routes[0].info, the
 * est_* estimates), never one another route filled in later, and probing
 * stops early only when the device already found outranks anything a
 * later backend could add. So the answer is the same whether or not a
 * full listing probed OpenCL first: probing CUDA and ROCm when absent
 * costs microseconds, the first clGetPlatformIDs 16-25 ms on PoCL. */
#include "select.h"

#include <string.h>

#include "context.h"
#include "util/strutil.h"
#include "workload_fit.h"

/* ---- what the workload asks of the ranking ------------------------------- */

typedef enum metric_kind {
    M_FP32 = 0,     /* no workload, or it keeps fp32: est_gflops */
    M_MATRIX = 1,   /* reduced precision accepted: the precision it will use */
    M_BANDWIDTH = 2 /* memory-bound: est_bandwidth_gbs */
} metric_kind;

typedef struct rank_rule {
    uint64_t need; /* model + one item in bytes; 0: no sizes given */
    metric_kind metric;
    int quantized;
    char need_text[32];
} rank_rule;

static void make_rule(const struct gpuopt_context *ctx, const gpuopt_workload *w, rank_rule *r)
{
    memset(r, 0, sizeof *r);
    if (!w)
        return;
    r->need = w->model_bytes + w->item_bytes;
    gpo_format_bytes(r->need, r->need_text, sizeof r->need_text);
    r->quantized = w->quantized == 1;
    int reduced =
        w->reduced_precision == 1 || (w->reduced_precision == -1 && ctx->cfg.reduced_precision);
    if (w->bound == GPUOPT_BOUND_MEMORY)
        r->metric = M_BANDWIDTH;
    else if (reduced)
        r->metric = M_MATRIX;
}

/* ---- one device's ranking keys --------------------------------------------- */

enum { FIT_NO = 0, FIT_UNKNOWN = 1, FIT_YES = 2 };

typedef struct keys {
    const gpuopt_device *dev;
    size_t pos;
    int fit;
    int type;      /* discrete GPU 4, integrated 3, accelerator 2, CPU 1 */
    int native;    /* 1: a vendor's own API or the CPU backend */
    int precision; /* gpo_precision the metric is in (M_FP32, M_MATRIX) */
    double metric;
    double fp32;
    uint64_t memory;
    int keep_pct; /* headroom the fit kept back */
} keys;

static const gpuopt_device_info *own(const gpuopt_device *d)
{
    return d->n_routes > 0 ? &d->routes[0].info : &d->info;
}

static int type_rank(const gpuopt_device_info *i)
{
    switch (i->type) {
    case GPUOPT_DEVICE_TYPE_GPU: return i->integrated == 1 ? 3 : 4;
    case GPUOPT_DEVICE_TYPE_ACCELERATOR: return 2;
    case GPUOPT_DEVICE_TYPE_CPU: return 1;
    default: return 0;
    }
}

static const char *type_words(int rank)
{
    static const char *const words[] = {"a device of another kind", "a CPU", "an accelerator",
                                        "an integrated GPU", "a discrete GPU"};
    return words[rank >= 0 && rank <= 4 ? rank : 0];
}

/* A vendor's own API (CUDA, HIP) or the CPU backend's direct view beats the
 * same kind of device reached only through OpenCL. */
static int native_rank(const gpuopt_device *d)
{
    const gpo_backend *b = d->routes[0].backend;
    return b && (b->native_gpu || strcmp(b->name, "cpu") == 0) ? 1 : 0;
}

/* The precision a workload that accepts reduced precision runs its matrix
 * work in on this device, as the rules choose it: FP8 for a quantised
 * model where the matrix units have it, else bfloat16 (fp32's range), else
 * fp16; fp32 on the vector units where there are no matrix units. */
static int precision_for(const rank_rule *r, const gpuopt_device *d)
{
    if (r->quantized && d->est_matrix_gflops[GPO_PREC_FP8] > 0)
        return GPO_PREC_FP8;
    if (d->est_matrix_gflops[GPO_PREC_BF16] > 0)
        return GPO_PREC_BF16;
    if (d->est_matrix_gflops[GPO_PREC_FP16] > 0)
        return GPO_PREC_FP16;
    return GPO_PREC_FP32;
}

static void make_keys(const rank_rule *r, const gpuopt_device *d, size_t pos, keys *k)
{
    const gpuopt_device_info *i = own(d);
    memset(k, 0, sizeof *k);
    k->dev = d;
    k->pos = pos;
    k->memory = i->memory_bytes;
    k->fit = FIT_YES;
    if (r->need) {
        /* Level 0's budget (src/workload_fit.c): total memory with its
         * headroom kept back, which never changes between calls as a
         * free-memory reading does. */
        gpo_fit_budget b;
        gpo_fit_budget_make(k->memory, "total", k->memory, 0, &b);
        k->keep_pct = b.keep_pct;
        k->fit = !k->memory ? FIT_UNKNOWN : r->need <= b.usable ? FIT_YES : FIT_NO;
    }
    k->type = type_rank(i);
    k->native = native_rank(d);
    k->fp32 = d->est_gflops;
    k->precision = GPO_PREC_FP32;
    k->metric = d->est_gflops;
    if (r->metric == M_MATRIX) {
        k->precision = precision_for(r, d);
        if (k->precision != GPO_PREC_FP32)
            k->metric = d->est_matrix_gflops[k->precision];
    } else if (r->metric == M_BANDWIDTH) {
        k->metric = d->est_bandwidth_gbs;
    }
}

/* Which criterion separated two devices (docs/selection.md, in order). */
typedef enum criterion {
    C_FIT,
    C_TYPE,
    C_NATIVE,
    C_METRIC,
    C_FP32, /* memory-bound, but a bandwidth is unknown: fp32 instead */
    C_MEMORY,
    C_ORDER
} criterion;

/* < 0 when a ranks before b; *by says which criterion decided. */
static int compare(const rank_rule *r, const keys *a, const keys *b, criterion *by)
{
    criterion dummy;
    if (!by)
        by = &dummy;
    *by = C_FIT;
    if (a->fit != b->fit)
        return b->fit - a->fit;
    *by = C_TYPE;
    if (a->type != b->type)
        return b->type - a->type;
    *by = C_NATIVE;
    if (a->native != b->native)
        return b->native - a->native;
    /* A bandwidth only one of them has ranks nothing: fall back to fp32. */
    int both = r->metric != M_BANDWIDTH || (a->metric > 0 && b->metric > 0);
    *by = both ? C_METRIC : C_FP32;
    double ma = both ? a->metric : a->fp32, mb = both ? b->metric : b->fp32;
    if (ma != mb)
        return ma > mb ? -1 : 1;
    *by = C_MEMORY;
    if (a->memory != b->memory)
        return a->memory > b->memory ? -1 : 1;
    *by = C_ORDER;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* ---- usability and probing -------------------------------------------------- */

static int native_discrete_gpu(const gpuopt_device *dev)
{
    const gpuopt_device_info *i = own(dev);
    return dev->routes[0].backend && dev->routes[0].backend->native_gpu &&
           i->type == GPUOPT_DEVICE_TYPE_GPU && i->integrated != 1;
}

/* A device listed from the kernel's description while its backend cannot
 * load (driver library missing) can be named explicitly, but a search never
 * chooses it: nothing could run on it. */
static int usable(const struct gpuopt_context *ctx, const gpuopt_device *d)
{
    int s = d->routes[0].backend ? gpo_ctx_slot_of(ctx, d->routes[0].backend->name) : -1;
    return s >= 0 && ctx->slots[s].status == GPUOPT_BACKEND_AVAILABLE;
}

/* 1 once nothing a backend not probed yet could list would outrank what
 * is here: a usable native discrete GPU the workload fits on (later
 * backends add OpenCL views and CPUs, which rank below it). */
static int decided(const struct gpuopt_context *ctx, const rank_rule *r)
{
    for (size_t i = 0; i < ctx->devices.n; i++) {
        const gpuopt_device *d = ctx->devices.items[i];
        if (!native_discrete_gpu(d) || !usable(ctx, d))
            continue;
        keys k;
        make_keys(r, d, i, &k);
        if (k.fit == FIT_YES)
            return 1;
    }
    return 0;
}

static gpuopt_status probe_for_search(struct gpuopt_context *ctx, const rank_rule *r)
{
    size_t last_native = 0;
    int any_native = 0;
    for (size_t i = 0; i < ctx->n_backends; i++) {
        if (ctx->slots[i].ops->native_gpu) {
            last_native = i;
            any_native = 1;
        }
    }
    gpuopt_status st = any_native ? gpo_ctx_probe_upto(ctx, last_native) : GPUOPT_OK;
    if (st == GPUOPT_OK && !decided(ctx, r))
        st = gpo_ctx_probe_all(ctx);
    return st;
}

/* ---- the words --------------------------------------------------------------- */

static void device_words(const gpuopt_device *d, char *out, size_t cap)
{
    gpo_snprintf(out, cap, "%s (%s)", d->info.id, d->info.name[0] ? d->info.name : "unnamed");
}

static void metric_words(const rank_rule *r, const keys *k, char *out, size_t cap)
{
    if (r->metric == M_BANDWIDTH)
        gpo_snprintf(out, cap, "%.0f GB/s", k->metric);
    else if (k->precision != GPO_PREC_FP32)
        gpo_snprintf(out, cap, "%s %.1f TFLOP/s", gpo_precision_name(k->precision),
                     k->metric / 1000.0);
    else
        gpo_snprintf(out, cap, "%.1f TFLOP/s", k->metric / 1000.0);
}

static const char *metric_name(const rank_rule *r)
{
    switch (r->metric) {
    case M_BANDWIDTH: return "peak memory bandwidth (the workload is memory-bound)";
    case M_MATRIX:
        return "matrix-unit throughput in the precision the workload will use (it accepts "
               "reduced precision)";
    default: return "peak fp32 throughput";
    }
}

static void explain_win(const rank_rule *r, const keys *w, const keys *o, criterion by, char *out,
                        size_t cap)
{
    char me[320], other[320], a[64], b[64], ma[32], mb[32];
    device_words(w->dev, me, sizeof me);
    if (!o) {
        gpo_snprintf(out, cap, "%s: the only usable device that matches", me);
        return;
    }
    device_words(o->dev, other, sizeof other);
    switch (by) {
    case C_FIT:
        gpo_format_bytes(w->memory, ma, sizeof ma);
        gpo_format_bytes(o->memory, mb, sizeof mb);
        if (w->fit == FIT_YES && o->fit == FIT_NO)
            gpo_snprintf(out, cap,
                         "%s: the workload's %s fits in its %s (%d%% kept back), not in the %s "
                         "of %s",
                         me, r->need_text, ma, w->keep_pct, mb, other);
        else if (w->fit == FIT_YES)
            gpo_snprintf(out, cap,
                         "%s: the workload's %s fits in its %s (%d%% kept back); the memory size "
                         "of %s is unknown",
                         me, r->need_text, ma, w->keep_pct, other);
        else
            gpo_snprintf(out, cap,
                         "%s: its memory size is unknown, and the workload's %s does not fit in "
                         "the %s of %s (%d%% kept back)",
                         me, r->need_text, mb, other, o->keep_pct);
        return;
    case C_TYPE:
        gpo_snprintf(out, cap, "%s: %s, ranked above %s, %s", me, type_words(w->type), other,
                     type_words(o->type));
        return;
    case C_NATIVE:
        gpo_snprintf(out, cap,
                     "%s: reached through its own backend (%s), ranked above %s, the same kind "
                     "of device reached only through %s",
                     me, w->dev->routes[0].backend->name, other, o->dev->routes[0].backend->name);
        return;
    case C_METRIC:
        metric_words(r, w, a, sizeof a);
        metric_words(r, o, b, sizeof b);
        gpo_snprintf(out, cap, "%s: highest estimated %s, %s against %s for %s", me, metric_name(r),
                     a, b, other);
        return;
    case C_FP32:
        gpo_snprintf(out, cap,
                     "%s: the workload is memory-bound but the peak bandwidth of %s is not "
                     "known, so peak fp32 throughput decides: %.1f against %.1f TFLOP/s",
                     me, w->metric > 0 ? other : me, w->fp32 / 1000.0, o->fp32 / 1000.0);
        return;
    case C_MEMORY:
        gpo_format_bytes(w->memory, ma, sizeof ma);
        gpo_format_bytes(o->memory, mb, sizeof mb);
        gpo_snprintf(out, cap,
                     "%s: as fast as %s by the estimates, with more memory (%s against %s)", me,
                     other, ma, mb);
        return;
    case C_ORDER:
        gpo_snprintf(out, cap, "%s: tied with %s on every count, and listed first", me, other);
        return;
    }
}

/* Backends that are present but were of no use to this search. */
static void note_passed_over(struct gpuopt_context *ctx, const gpuopt_device *chosen,
                             gpo_selection *why)
{
    for (size_t i = 0; i < ctx->n_probed; i++) {
        gpo_ctx_slot *s = &ctx->slots[i];
        if (chosen->routes[0].backend == s->ops)
            continue;
        const char *what;
        if (s->status == GPUOPT_BACKEND_ERROR)
            what = "is present but not working";
        else if (s->status == GPUOPT_BACKEND_UNAVAILABLE && s->n_found > 0)
            what = "sees a device it cannot use";
        else
            continue;
        char line[768];
        gpo_snprintf(line, sizeof line,
                     "the %s backend %s, so %s was chosen instead: %s; `gpuopt doctor` says why "
                     "and what to do",
                     s->ops->name, what, chosen->info.id, s->report.reason);
        if (!s->warned) {
            gpo_log_warn(&ctx->log, "%s", line);
            s->warned = 1;
        }
        if (why && why->n_warnings < GPO_MAX_BACKENDS)
            gpo_strlcpy(why->warnings[why->n_warnings++], line, sizeof why->warnings[0]);
    }
}

/* Why nothing matched, for the caller: what the policy asked for, what the
 * context has, and why each backend that has nothing is so. */
static gpuopt_status no_match(struct gpuopt_context *ctx, const char *text, const gpo_policy *pol)
{
    if (pol->kind == GPO_POLICY_BACKEND || pol->kind == GPO_POLICY_INDEX) {
        int s = gpo_ctx_slot_of(ctx, pol->backend);
        if (s >= 0 && ctx->slots[s].status != GPUOPT_BACKEND_AVAILABLE &&
            ctx->slots[s].status != GPUOPT_BACKEND_NOT_PROBED)
            return gpo_fail(
                GPUOPT_ERR_NO_DEVICE, "device '%s': the %s backend is %s: %s", text, pol->backend,
                ctx->slots[s].status == GPUOPT_BACKEND_DISABLED ? "disabled" : "not available",
                ctx->slots[s].report.reason);
    }
    gpo_sbuf msg;
    gpo_sbuf_init(&msg);
    gpo_sbuf_appendf(&msg, "no device matches '%s'", text);
    for (size_t i = 0; i < ctx->devices.n; i++)
        gpo_sbuf_appendf(&msg, "%s%s%s",
                         i ? ", " : "; devices here: ", ctx->devices.items[i]->info.id,
                         usable(ctx, ctx->devices.items[i])
                             ? ""
                             : " (seen by the kernel only: its backend is unavailable)");
    /* Each probed backend that offers nothing, with its reason; the ones
     * the configuration excluded in one clause. */
    int disabled = 0, said = 0;
    for (size_t i = 0; i < ctx->n_probed; i++) {
        const gpo_ctx_slot *s = &ctx->slots[i];
        if (s->status == GPUOPT_BACKEND_DISABLED) {
            disabled++;
            continue;
        }
        if (s->status != GPUOPT_BACKEND_AVAILABLE)
            gpo_sbuf_appendf(&msg, "%s%s: %s", ctx->devices.n || said++ ? "; " : ": ", s->ops->name,
                             s->report.reason);
    }
    if (disabled) {
        gpo_sbuf_append(&msg, "; not probed: ");
        int k = 0;
        for (size_t i = 0; i < ctx->n_probed; i++)
            if (ctx->slots[i].status == GPUOPT_BACKEND_DISABLED)
                gpo_sbuf_appendf(&msg, "%s%s", k++ ? ", " : "", ctx->slots[i].ops->name);
        for (size_t i = 0; i < ctx->n_probed; i++)
            if (ctx->slots[i].status == GPUOPT_BACKEND_DISABLED) {
                gpo_sbuf_appendf(&msg, " (%s)", ctx->slots[i].report.reason);
                break;
            }
    }
    if (!ctx->devices.n && !msg.failed && msg.data && !strchr(msg.data, ';'))
        gpo_sbuf_append(&msg, "; devices here: none");
    gpuopt_status st = gpo_fail(GPUOPT_ERR_NO_DEVICE, "%s",
                                msg.data && !msg.failed ? msg.data : "no device matches");
    gpo_sbuf_free(&msg);
    return st;
}

/* ---- selecting ------------------------------------------------------------------ */

gpuopt_status gpo_ctx_select_for(struct gpuopt_context *ctx, const char *policy,
                                 const gpuopt_workload *workload, gpuopt_device **out,
                                 gpo_selection *why)
{
    gpo_policy pol;
    char msg[512];
    rank_rule rule;
    const char *text = policy ? policy : ctx->cfg.device;
    *out = NULL;
    if (why) {
        memset(why, 0, sizeof *why);
        gpo_strlcpy(why->policy, text, sizeof why->policy);
    }
    if (gpo_policy_parse(text, ctx->list, ctx->n_backends, &pol, msg, sizeof msg))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "device policy '%s' is not understood; %s",
                        text, msg);
    gpuopt_status st = gpo_ctx_check_fork(ctx);
    if (st)
        return st;
    make_rule(ctx, workload, &rule);
    int search = gpo_policy_is_search(&pol);

    if (pol.kind == GPO_POLICY_AUTO || pol.kind == GPO_POLICY_GPU) {
        st = probe_for_search(ctx, &rule);
    } else if (pol.kind == GPO_POLICY_BACKEND || pol.kind == GPO_POLICY_INDEX) {
        int s = gpo_ctx_slot_of(ctx, pol.backend);
        st = gpo_ctx_probe_upto(ctx, s < 0 ? ctx->n_backends - 1 : (size_t)s);
    } else {
        st = gpo_ctx_probe_all(ctx);
    }
    if (st)
        return st;

    /* When the native GPU backends decided, the runner-up the reason names
     * is one of theirs too, so the words do not depend on whether OpenCL
     * happened to be probed already. */
    int natives_decide = search && decided(ctx, &rule);
    keys best, second, k;
    int have_best = 0, have_second = 0;
    criterion by = C_ORDER;
    for (size_t i = 0; i < ctx->devices.n; i++) {
        gpuopt_device *d = ctx->devices.items[i];
        if (!gpo_policy_matches(&pol, d) || (search && !usable(ctx, d)))
            continue;
        make_keys(&rule, d, i, &k);
        int may_be_second = !natives_decide || d->routes[0].backend->native_gpu;
        if (!have_best || compare(&rule, &k, &best, NULL) < 0) {
            if (have_best && (!natives_decide || best.dev->routes[0].backend->native_gpu)) {
                second = best;
                have_second = 1;
            }
            best = k;
            have_best = 1;
        } else if (may_be_second && (!have_second || compare(&rule, &k, &second, NULL) < 0)) {
            second = k;
            have_second = 1;
        }
    }
    if (!have_best)
        return no_match(ctx, text, &pol);
    gpuopt_device *chosen = (gpuopt_device *)best.dev;
    if (pol.kind == GPO_POLICY_UUID) {
        /* A prefix must name one device only. */
        for (size_t i = 0; i < ctx->devices.n; i++)
            if (ctx->devices.items[i] != chosen && gpo_policy_matches(&pol, ctx->devices.items[i]))
                return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                                "UUID prefix '%s' matches both %s and %s; give more digits", text,
                                chosen->info.id, ctx->devices.items[i]->info.id);
    }
    if (why) {
        if (!search) {
            char me[320];
            device_words(chosen, me, sizeof me);
            gpo_snprintf(why->reason, sizeof why->reason, "%s: named by the selector '%s'", me,
                         text);
        } else {
            if (have_second)
                compare(&rule, &best, &second, &by);
            explain_win(&rule, &best, have_second ? &second : NULL, by, why->reason,
                        sizeof why->reason);
            if (!workload) {
                size_t n = strlen(why->reason);
                gpo_snprintf(why->reason + n, sizeof why->reason - n,
                             " (no workload was described)");
            }
        }
    }
    if (search)
        note_passed_over(ctx, chosen, why);
    gpo_log_debug(&ctx->log, "selected %s (%s) for '%s'", chosen->info.id, chosen->info.name, text);
    *out = chosen;
    return GPUOPT_OK;
}

gpuopt_status gpo_ctx_select(struct gpuopt_context *ctx, const char *policy, gpuopt_device **out)
{
    return gpo_ctx_select_for(ctx, policy, NULL, out, NULL);
}

void gpo_ctx_explain(struct gpuopt_context *ctx, const gpuopt_device *dev,
                     const gpuopt_workload *workload, gpo_selection *why)
{
    gpuopt_device *would = NULL;
    gpo_selection mine;
    char me[320];
    device_words(dev, me, sizeof me);
    if (gpo_ctx_select_for(ctx, NULL, workload, &would, &mine) == GPUOPT_OK && would == dev) {
        *why = mine;
        return;
    }
    memset(why, 0, sizeof *why);
    gpo_strlcpy(why->policy, ctx->cfg.device, sizeof why->policy);
    if (would)
        gpo_snprintf(why->reason, sizeof why->reason,
                     "%s: chosen by the caller; the selector '%s' would choose %s", me,
                     ctx->cfg.device, mine.reason);
    else
        gpo_snprintf(why->reason, sizeof why->reason, "%s: chosen by the caller", me);
    gpo_detail_clear();
}

GPUOPT_API gpuopt_status gpuopt_device_select(gpuopt_context *ctx, const char *policy,
                                              gpuopt_device **device)
{
    GPO_ENTRY_OUT("", ctx, "ctx", device, NULL);
    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_select(ctx, policy, device);
    gpo_ctx_unlock(ctx);
    return st;
}
