/* Plans on every kind of device the tests can reach (the CPU, PoCL's CPU
 * device, and the CUDA and HIP test doubles of an H100, an RTX 4090, an
 * A100, a T4, a K80, an RX 580 and an MI300X), at level 0 and 1, with no
 * workload, a precision-sensitive one, one that accepts reduced precision,
 * one whose model does not fit, and a latency-oriented one (the real-time
 * audio case of docs/latency.md):
 *
 *   - what the plan exports (gpuopt_plan_to_env, gpuopt_plan_apply) equals
 *     what it shows, knob for knob, and nothing else is exported;
 *   - TF32 follows docs/knobs.md, "TF32", on every GPU;
 *   - every derived knob of every catalogue follows an override of each of
 *     its inputs (it changes for some value of the input on some device,
 *     and its reason then names the input and who set it), and an override
 *     of the derived knob itself wins and says so.
 *
 * The exports are checked again after every override. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend.h"
#include "util/strutil.h"

/* The order of GPUOPT_FAKE_CUDA_DEVICES and GPUOPT_FAKE_HIP_DEVICES in
 * tests/backends/CMakeLists.txt. */
static const struct device {
    const char *id, *what;
    int tf32; /* 1: CUDA with TF32 (>= 8.0); 2: ROCm with XF32; 0: none; -1: not a GPU */
    const char *backend;
} devices[] = {
    {"cpu:0", "the host CPU", -1, "cpu"}, {"opencl:0", "PoCL's CPU device", -1, "opencl"},
    {"cuda:0", "H100 SXM5", 1, "cuda"},   {"cuda:1", "RTX 4090", 1, "cuda"},
    {"cuda:2", "A100 SXM4", 1, "cuda"},   {"cuda:3", "T4", 0, "cuda"},
    {"cuda:4", "K80", 0, "cuda"},         {"rocm:0", "RX 580", 0, "rocm"},
    {"rocm:1", "MI300X", 2, "rocm"},
};
#define N_DEVICES (sizeof devices / sizeof devices[0])

enum { W_NONE, W_SENSITIVE, W_REDUCED, W_BIG, W_LATENCY, N_WORKLOADS };
static const char *const workload_names[] = {"no workload", "precision-sensitive",
                                             "reduced precision", "a model 5x the memory",
                                             "real-time audio (latency, precision-sensitive)"};

/* ---- reading plans ------------------------------------------------------------------ */

typedef struct seen {
    int present;
    char value[512];
    char reason[2048];
    int32_t source, tier;
} seen;

static seen knob_of(const gpuopt_plan *p, const char *name)
{
    seen s;
    gpuopt_knob k;
    memset(&s, 0, sizeof s);
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    if (gpuopt_plan_knob_find(p, name, &k) == GPUOPT_OK) {
        s.present = 1;
        gpo_strlcpy(s.value, k.value, sizeof s.value);
        gpo_strlcpy(s.reason, k.reason, sizeof s.reason);
        s.source = k.source;
        s.tier = k.tier;
    }
    return s;
}

/* Every environment variable any catalogue exports. */
static const char *env_names[64];
static size_t n_env_names;

static void add_env_names(const gpo_knob_def *defs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!defs[i].env)
            continue;
        size_t j = 0;
        while (j < n_env_names && strcmp(env_names[j], defs[i].env) != 0)
            j++;
        if (j == n_env_names) {
            assert_true(n_env_names < sizeof env_names / sizeof env_names[0]);
            env_names[n_env_names++] = defs[i].env;
        }
    }
}

static void unset_all_env(void)
{
    for (size_t i = 0; i < n_env_names; i++)
        unsetenv(env_names[i]);
}

/* The value the line `: "${NAME=value}"; export NAME` gives NAME in `text`,
 * its backslashes removed as the shell removes them; NULL when the text has
 * no line for it. */
static const char *exported(const char *text, const char *name, char *out, size_t cap)
{
    char head[96], tail[96];
    snprintf(head, sizeof head, ": \"${%s=", name);
    snprintf(tail, sizeof tail, "}\"; export %s\n", name);
    const char *at = strstr(text, head);
    if (!at || (at != text && at[-1] != '\n'))
        return NULL;
    at += strlen(head);
    size_t n = 0;
    for (; *at && strncmp(at, tail, strlen(tail)) != 0; at++) {
        if (at[0] == '\\' && at[1])
            at++;
        if (n + 1 < cap)
            out[n++] = *at;
    }
    out[n] = '\0';
    return *at ? out : NULL;
}

/* What the plan exports, by gpuopt_plan_to_env and by gpuopt_plan_apply,
 * equals what it shows, and it exports nothing else. */
static void exports_match(const gpuopt_plan *p, const char *what)
{
    int32_t n = 0, with_env = 0;
    char *text = NULL, *report = NULL, got[1024];
    assert_int_equal(gpuopt_plan_knob_count(p, &n), GPUOPT_OK);
    assert_int_equal(gpuopt_plan_to_env(p, &text), GPUOPT_OK);
    unset_all_env();
    assert_int_equal(gpuopt_plan_apply(p, GPUOPT_APPLY_ENV, &report), GPUOPT_OK);
    for (int32_t i = 0; i < n; i++) {
        gpuopt_knob k;
        memset(&k, 0, sizeof k);
        k.struct_size = sizeof k;
        assert_int_equal(gpuopt_plan_knob_at(p, i, &k), GPUOPT_OK);
        if (!k.env)
            continue;
        with_env++;
        if (!exported(text, k.env, got, sizeof got) || strcmp(got, k.value) != 0)
            fail_msg("%s: %s = %s but gpuopt_plan_to_env exports %s", what, k.name, k.value,
                     exported(text, k.env, got, sizeof got) ? got : "nothing");
        const char *set = getenv(k.env);
        if (!set || strcmp(set, k.value) != 0)
            fail_msg("%s: %s = %s but gpuopt_plan_apply set %s=%s", what, k.name, k.value, k.env,
                     set ? set : "(nothing)");
    }
    int lines = 0;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    if (lines != with_env)
        fail_msg("%s: %d export lines for %d environment knobs:\n%s", what, lines, (int)with_env,
                 text);
    int set = 0;
    for (size_t i = 0; i < n_env_names; i++)
        set += getenv(env_names[i]) != NULL;
    if (set != with_env)
        fail_msg("%s: gpuopt_plan_apply set %d variables for %d environment knobs:\n%s", what, set,
                 (int)with_env, report);
    unset_all_env();
    gpuopt_free(text);
    gpuopt_free(report);
}

/* ---- making plans ------------------------------------------------------------------- */

static gpuopt_context *ctx;
static int plans_made;

static gpuopt_plan *plan_for(size_t d, int level, int workload)
{
    gpuopt_device *dev = NULL;
    gpuopt_plan *p = NULL;
    gpuopt_workload w;
    gpuopt_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    assert_int_equal(gpuopt_device_select(ctx, devices[d].id, &dev), GPUOPT_OK);
    assert_int_equal(gpuopt_device_get_info(dev, &info), GPUOPT_OK);
    gpuopt_workload_init(&w);
    w.reduced_precision = workload == W_SENSITIVE ? 0 : workload == W_NONE ? -1 : 1;
    if (workload == W_BIG) {
        w.model_bytes = info.memory_bytes * 5;
        w.item_bytes = 64ull << 20;
    }
    if (workload == W_LATENCY) {
        w.reduced_precision = 0;
        w.objective = GPUOPT_OBJECTIVE_LATENCY;
        w.fixed_shapes = 1;
        w.model_bytes = 1ull << 30;
        w.item_bytes = 48ull << 20;
        w.items_per_step = 10;
        w.launches_per_step = 40;
        w.step_time_ns = 100000000;
        w.h2d_bytes_per_step = 64ull << 10;
        w.d2h_bytes_per_step = 1ull << 20;
    }
    gpuopt_status st = gpuopt_plan_create_for(ctx, dev, level, workload == W_NONE ? NULL : &w, &p);
    plans_made++;
    if (st)
        fail_msg("%s, level %d, %s: %s", devices[d].id, level, workload_names[workload],
                 gpuopt_last_error());
    return p;
}

static int device_present(size_t d)
{
    gpuopt_device *dev = NULL;
    return gpuopt_device_select(ctx, devices[d].id, &dev) == GPUOPT_OK;
}

/* ---- TF32 --------------------------------------------------------------------------- */

/* "knob=value" present with that value, "!knob" absent. */
static void expect(const gpuopt_plan *p, const char *list, const char *what)
{
    char buf[512];
    gpo_strlcpy(buf, list, sizeof buf);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save)) {
        if (tok[0] == '!') {
            seen s = knob_of(p, tok + 1);
            if (s.present)
                fail_msg("%s: %s = %s, expected absent (%s)", what, tok + 1, s.value, s.reason);
            continue;
        }
        char *eq = strchr(tok, '=');
        *eq = '\0';
        seen s = knob_of(p, tok);
        if (!s.present || strcmp(s.value, eq + 1) != 0)
            fail_msg("%s: %s = %s, expected %s (%s)", what, tok, s.present ? s.value : "absent",
                     eq + 1, s.reason);
    }
}

static const char *tf32_expected(const struct device *dv, int level, int workload)
{
    int sensitive = workload == W_SENSITIVE || workload == W_LATENCY;
    int reduced = workload == W_REDUCED || workload == W_BIG;
    if (dv->tf32 < 0)
        return "!cuda.tf32 !rocm.tf32";
    if (!strcmp(dv->backend, "cuda")) {
        if (sensitive && (level == 0 || dv->tf32))
            return "cuda.tf32=false cuda.tf32_override=0 !cuda.torch_tf32_override";
        if (level == 0)
            return "!cuda.tf32 !cuda.tf32_override !cuda.torch_tf32_override";
        return dv->tf32 ? "cuda.tf32=true !cuda.tf32_override cuda.torch_tf32_override=1"
                        : "cuda.tf32=false !cuda.tf32_override !cuda.torch_tf32_override";
    }
    if (sensitive && (level == 0 || dv->tf32))
        return "rocm.tf32=false rocm.hipblaslt_allow_tf32=0 !rocm.torch_tf32_override";
    if (level == 0)
        return "!rocm.tf32 !rocm.hipblaslt_allow_tf32 !rocm.torch_tf32_override";
    if (dv->tf32 && reduced)
        return "rocm.tf32=true rocm.hipblaslt_allow_tf32=1 rocm.torch_tf32_override=1";
    return "rocm.tf32=false !rocm.hipblaslt_allow_tf32 !rocm.torch_tf32_override";
}

/* A model five times the device's memory, reduced precision accepted: 4
 * bits are still too big, so a GPU with memory of its own gets 4 bits plus
 * offload (with the arithmetic) and a batch beside what it holds; a CPU
 * device, whose memory is the host's, gets 4 bits and a warning instead. */
static void big_model_advice(const gpuopt_plan *p, const struct device *dv, const char *what)
{
    int32_t n = 0;
    int warned = 0;
    expect(p, "model.quantize_bits=4", what);
    assert_int_equal(gpuopt_plan_warning_count(p, &n), GPUOPT_OK);
    for (int32_t i = 0; i < n; i++) {
        const char *text = NULL;
        assert_int_equal(gpuopt_plan_warning_at(p, i, &text), GPUOPT_OK);
        warned |= strstr(text, "offloading to host memory does not apply") != NULL;
    }
    if (dv->tf32 < 0) {
        expect(p, "!model.offload_bytes !batch.max_size", what);
        if (!warned)
            fail_msg("%s: no warning that offloading does not apply", what);
        return;
    }
    seen off = knob_of(p, "model.offload_bytes");
    if (!off.present || !strstr(off.reason, "at 4 bits") || !strstr(off.reason, "keep "))
        fail_msg("%s: model.offload_bytes %s (%s)", what, off.present ? off.value : "absent",
                 off.reason);
    expect(p, "batch.max_size=1", what);
    assert_false(warned);
}

/* ---- derived knobs -------------------------------------------------------------------- */

typedef struct pair {
    const gpo_knob_def *derived;
    const char *input;
    int changed; /* somewhere an override of the input changed the derived knob */
} pair;

static pair pairs[128];
static size_t n_pairs;

static void add_pairs(const gpo_knob_def *defs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; defs[i].inputs && defs[i].inputs[k]; k++) {
            assert_true(n_pairs < sizeof pairs / sizeof pairs[0]);
            pairs[n_pairs++] = (pair){&defs[i], defs[i].inputs[k], 0};
        }
}

/* Values of a text domain checked by a form (not words), which the
 * catalogue cannot enumerate: two that its form accepts. */
static const struct {
    const char *knob, *values[2];
} form_samples[] = {
    {"cpu.affinity", {"0", "0-1"}}, /* a Linux CPU list */
};

/* Values of a domain worth trying: its bounds, or every word. */
static size_t candidates(const gpo_knob_def *d, char out[][64], size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; d->form && i < sizeof form_samples / sizeof form_samples[0]; i++)
        if (!strcmp(form_samples[i].knob, d->name))
            for (size_t v = 0; v < 2 && n < cap; v++) {
                assert_true(d->form(form_samples[i].values[v]));
                snprintf(out[n++], 64, "%s", form_samples[i].values[v]);
            }
    switch (d->type) {
    case GPUOPT_KNOB_BOOL:
        snprintf(out[n++], 64, "true");
        snprintf(out[n++], 64, "false");
        break;
    case GPUOPT_KNOB_INT:
    case GPUOPT_KNOB_BYTES:
        snprintf(out[n++], 64, "%lld", (long long)d->min);
        snprintf(out[n++], 64, "%lld", (long long)d->max);
        break;
    default:
        for (size_t w = 0; d->words && d->words[w] && n < cap; w++)
            snprintf(out[n++], 64, "%s", d->words[w]);
        break;
    }
    return n;
}

/* A value of the derived knob's own domain other than `now`. */
static int other_value(const gpo_knob_def *d, const char *now, char *out, size_t cap)
{
    char cand[8][64];
    size_t n = candidates(d, cand, 8);
    for (size_t i = 0; i < n; i++)
        if (strcmp(cand[i], now) != 0) {
            gpo_strlcpy(out, cand[i], cap);
            return 1;
        }
    if (d->type == GPUOPT_KNOB_STRING && !d->words && !d->form) {
        gpo_snprintf(out, cap, "%s-by-hand", now);
        return 1;
    }
    return 0;
}

static int applies(const gpo_knob_def *d, const struct device *dv)
{
    if (gpo_knob_find_in(gpo_core_knobs, gpo_n_core_knobs, d->name) == d)
        return 1;
    for (size_t b = 0; b < gpo_n_backends; b++)
        if (!strcmp(gpo_backends[b]->name, dv->backend) &&
            gpo_knob_find_in(gpo_backends[b]->knobs, gpo_backends[b]->n_knobs, d->name) == d)
            return 1;
    return 0;
}

static void overrides_reach_derived_knobs(size_t d, int level, int workload,
                                          const gpuopt_plan *base)
{
    char what[256];
    for (size_t i = 0; i < n_pairs; i++) {
        pair *pr = &pairs[i];
        if (!applies(pr->derived, &devices[d]))
            continue;
        const gpo_knob_def *in = gpo_knob_find(gpo_backends, gpo_n_backends, pr->input);
        seen before = knob_of(base, pr->derived->name);
        char cand[8][64];
        size_t n = candidates(in, cand, 8);
        for (size_t c = 0; c < n; c++) {
            snprintf(what, sizeof what, "%s (%s), level %d, %s, %s=%s", devices[d].id,
                     devices[d].what, level, workload_names[workload], pr->input, cand[c]);
            assert_int_equal(gpuopt_context_set_knob(ctx, pr->input, cand[c]), GPUOPT_OK);
            gpuopt_plan *p = plan_for(d, level, workload);
            exports_match(p, what);
            seen after = knob_of(p, pr->derived->name);
            seen input = knob_of(p, pr->input);
            if (after.present != before.present || strcmp(after.value, before.value) != 0)
                pr->changed = 1;
            if (after.present && input.present) {
                /* The reason names the input and that the user set it. */
                if (!strstr(after.reason, pr->input) ||
                    !strstr(after.reason, "set by gpuopt_context_set_knob"))
                    fail_msg("%s: %s's reason does not name %s and who set it: %s", what,
                             pr->derived->name, pr->input, after.reason);
                if (after.source != GPUOPT_SOURCE_API)
                    fail_msg("%s: %s has source %d, not the user's", what, pr->derived->name,
                             (int)after.source);
            }
            gpuopt_plan_destroy(p);
            assert_int_equal(gpuopt_context_set_knob(ctx, pr->input, NULL), GPUOPT_OK);
        }
    }
    /* An override of a derived knob itself wins and says so. */
    for (size_t i = 0; i < n_pairs; i++) {
        const gpo_knob_def *dk = pairs[i].derived;
        if (i > 0 && pairs[i - 1].derived == dk)
            continue;
        seen now = knob_of(base, dk->name);
        char v[256];
        if (!applies(dk, &devices[d]) || !now.present || !other_value(dk, now.value, v, sizeof v))
            continue;
        gpo_snprintf(what, sizeof what, "%s, level %d, %s, %s=%s by hand", devices[d].id, level,
                     workload_names[workload], dk->name, v);
        assert_int_equal(gpuopt_context_set_knob(ctx, dk->name, v), GPUOPT_OK);
        gpuopt_plan *p = plan_for(d, level, workload);
        exports_match(p, what);
        seen s = knob_of(p, dk->name);
        if (!s.present || strcmp(s.value, v) != 0 || !strstr(s.reason, "overriding its derivation"))
            fail_msg("%s: %s = %s (%s)", what, dk->name, s.value, s.reason);
        gpuopt_plan_destroy(p);
        assert_int_equal(gpuopt_context_set_knob(ctx, dk->name, NULL), GPUOPT_OK);
    }
}

/* ---- the test ----------------------------------------------------------------------- */

static void every_device_level_and_workload_exports_what_its_plan_shows(void **state)
{
    (void)state;
    int plans = 0;
    for (size_t d = 0; d < N_DEVICES; d++) {
        if (!device_present(d)) {
            /* PoCL may be missing on a build machine; the doubles never are. */
            assert_string_equal(devices[d].backend, "opencl");
            printf("skipping %s: no such device here\n", devices[d].id);
            continue;
        }
        for (int level = 0; level <= 1; level++)
            for (int w = 0; w < N_WORKLOADS; w++) {
                char what[160];
                snprintf(what, sizeof what, "%s (%s), level %d, %s", devices[d].id, devices[d].what,
                         level, workload_names[w]);
                gpuopt_plan *p = plan_for(d, level, w);
                int32_t applied = -1;
                assert_int_equal(gpuopt_plan_level(p, NULL, &applied), GPUOPT_OK);
                if (applied != level)
                    fail_msg("%s: level %d applied", what, (int)applied);
                exports_match(p, what);
                expect(p, tf32_expected(&devices[d], level, w), what);
                if (w == W_BIG)
                    big_model_advice(p, &devices[d], what);
                overrides_reach_derived_knobs(d, level, w, p);
                gpuopt_plan_destroy(p);
                plans++;
            }
    }
    assert_true(plans >= (int)(N_DEVICES - 1) * 2 * N_WORKLOADS);
    printf("%d device x level x workload cases, %d plans with overrides, %zu (derived knob, "
           "input) pairs\n",
           plans, plans_made, n_pairs);
    for (size_t i = 0; i < n_pairs; i++)
        if (!pairs[i].changed)
            fail_msg("no override of %s changed %s on any device", pairs[i].input,
                     pairs[i].derived->name);
}

static int setup(void **state)
{
    (void)state;
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.config_path = "";
    n_env_names = n_pairs = 0;
    add_env_names(gpo_core_knobs, gpo_n_core_knobs);
    add_pairs(gpo_core_knobs, gpo_n_core_knobs);
    for (size_t b = 0; b < gpo_n_backends; b++) {
        add_env_names(gpo_backends[b]->knobs, gpo_backends[b]->n_knobs);
        add_pairs(gpo_backends[b]->knobs, gpo_backends[b]->n_knobs);
    }
    unset_all_env();
    return gpuopt_context_create(&o, &ctx) == GPUOPT_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    gpuopt_context_destroy(ctx);
    return 0;
}

int main(void)
{
    /* The doubles honour the visibility variables as the drivers do. */
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("ROCR_VISIBLE_DEVICES");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_device_level_and_workload_exports_what_its_plan_shows),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
