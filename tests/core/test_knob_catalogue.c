/* Every knob catalogue (the core's and each compiled-in backend's) against
 * the knob model: each entry declares its type, a domain and its meaning;
 * a derived entry names inputs that exist and no derivation depends on
 * itself; docs/knobs.md lists every entry with the same domain and
 * derivation; and a value outside an entry's domain (below the range,
 * above it, off its step, a wrong word, a wrong type) is refused with the
 * domain in the message through the API, GPUOPT_KNOBS and the config file,
 * while the domain's own bounds and words are accepted.
 *
 * GPO_PRINT_KNOB_TABLE=1 prints the rows docs/knobs.md must hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend.h"
#include "context.h"
#include "support/testutil.h"
#include "util/fs.h"
#include "util/strutil.h"

typedef struct entry {
    const gpo_knob_def *def;
    const char *catalogue; /* "core", "cpu", ... */
} entry;

static entry entries[256];
static size_t n_entries;

static void collect(void)
{
    n_entries = 0;
    for (size_t i = 0; i < gpo_n_core_knobs; i++)
        entries[n_entries++] = (entry){&gpo_core_knobs[i], "core"};
    for (size_t b = 0; b < gpo_n_backends; b++)
        for (size_t i = 0; i < gpo_backends[b]->n_knobs; i++) {
            assert_true(n_entries < sizeof entries / sizeof entries[0]);
            entries[n_entries++] = (entry){&gpo_backends[b]->knobs[i], gpo_backends[b]->name};
        }
}

static const entry *entry_named(const char *name)
{
    for (size_t i = 0; i < n_entries; i++)
        if (strcmp(entries[i].def->name, name) == 0)
            return &entries[i];
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    collect();
    unsetenv("GPUOPT_KNOBS");
    return 0;
}

static void every_entry_declares_a_type_a_domain_and_a_meaning(void **state)
{
    (void)state;
    assert_true(n_entries > 40);
    for (size_t i = 0; i < n_entries; i++) {
        const gpo_knob_def *d = entries[i].def;
        assert_non_null(d->name);
        if (!d->summary || strlen(d->summary) < 10)
            fail_msg("%s has no meaning", d->name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(entries[j].def->name, d->name) == 0)
                fail_msg("%s is declared twice (%s and %s)", d->name, entries[j].catalogue,
                         entries[i].catalogue);
        switch (d->type) {
        case GPUOPT_KNOB_INT:
        case GPUOPT_KNOB_BYTES:
            if (d->min > d->max || d->min < 0 || d->max < 1)
                fail_msg("%s has no range (%lld to %lld)", d->name, (long long)d->min,
                         (long long)d->max);
            if (d->step > 1 && (d->min % d->step || d->max % d->step))
                fail_msg("%s: its range is not in steps of %lld", d->name, (long long)d->step);
            assert_null(d->words);
            break;
        case GPUOPT_KNOB_STRING:
            if (d->words)
                assert_non_null(d->words[0]);
            if (d->form)
                assert_non_null(d->form_text);
            assert_true(d->min == 0 && d->max == 0);
            break;
        case GPUOPT_KNOB_BOOL: assert_true(d->min == 0 && d->max == 0 && !d->words); break;
        default: fail_msg("%s has type %d", d->name, (int)d->type);
        }
        /* The environment variable is a name a shell can export. */
        if (d->env)
            assert_int_equal(strspn(d->env, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),
                             strlen(d->env));
    }
}

/* Depth-first through the inputs: 1 when `name` is reached again. */
static int reaches(const char *from, const char *name, int depth)
{
    const entry *e = entry_named(from);
    if (!e || !e->def->inputs || depth > 16)
        return depth > 16;
    for (size_t i = 0; e->def->inputs[i]; i++)
        if (strcmp(e->def->inputs[i], name) == 0 || reaches(e->def->inputs[i], name, depth + 1))
            return 1;
    return 0;
}

static void derived_entries_name_existing_inputs_and_form_no_cycle(void **state)
{
    (void)state;
    int derived = 0;
    for (size_t i = 0; i < n_entries; i++) {
        const entry *e = &entries[i];
        const gpo_knob_def *d = e->def;
        if ((d->derive == NULL) != (d->inputs == NULL))
            fail_msg("%s: a derivation needs inputs and inputs a derivation", d->name);
        if (!d->derive)
            continue;
        derived++;
        assert_non_null(d->inputs[0]);
        for (size_t k = 0; d->inputs[k]; k++) {
            const entry *in = entry_named(d->inputs[k]);
            if (!in)
                fail_msg("%s is derived from %s, which no catalogue declares", d->name,
                         d->inputs[k]);
            /* An input is the core's or the same backend's. */
            if (strcmp(in->catalogue, "core") != 0 && strcmp(in->catalogue, e->catalogue) != 0)
                fail_msg("%s (%s) is derived from %s of another backend (%s)", d->name,
                         e->catalogue, in->def->name, in->catalogue);
        }
        if (reaches(d->name, d->name, 0))
            fail_msg("%s depends on itself", d->name);
    }
    assert_true(derived >= 12);
}

/* The row docs/knobs.md holds for an entry. */
static void doc_row(const entry *e, char *out, size_t cap)
{
    const gpo_knob_def *d = e->def;
    static const char *const types[] = {"", "bool", "int", "bytes", "string"};
    char dom[512], inputs[256] = "", env[96] = "";
    gpo_knob_domain_text(d, dom, sizeof dom);
    for (size_t k = 0; d->inputs && d->inputs[k]; k++) {
        size_t n = strlen(inputs);
        snprintf(inputs + n, sizeof inputs - n, "%s`%s`", n ? ", " : "", d->inputs[k]);
    }
    if (d->env)
        snprintf(env, sizeof env, "`%s`", d->env);
    snprintf(out, cap, "| `%s` | %s | %s | %s | %s | %s |", d->name, e->catalogue, types[d->type],
             dom, inputs[0] ? inputs : "-", env[0] ? env : "-");
}

static void the_document_lists_every_knob_with_its_domain_and_derivation(void **state)
{
    (void)state;
    char row[1024], line[1100];
    if (getenv("GPO_PRINT_KNOB_TABLE")) {
        for (size_t i = 0; i < n_entries; i++) {
            doc_row(&entries[i], row, sizeof row);
            printf("%s\n", row);
        }
        return;
    }
    gpo_fs fs;
    char *docs = NULL;
    size_t len = 0;
    gpo_fs_init(&fs, "");
    assert_int_equal(gpo_fs_read_alloc(&fs, GPO_FIXTURES_DIR "/../../docs/knobs.md", &docs, &len),
                     GPUOPT_OK);
    char *section = strstr(docs, "\n## Domains and derivations");
    assert_non_null(section);
    char *next = strstr(section + 1, "\n## ");
    if (next)
        *next = '\0';
    int missing = 0;
    for (size_t i = 0; i < n_entries; i++) {
        doc_row(&entries[i], row, sizeof row);
        gpo_snprintf(line, sizeof line, "\n%s\n", row);
        if (!strstr(section, line)) {
            printf("docs/knobs.md lacks or differs: %s\n", row);
            missing++;
        }
    }
    /* And no row for a knob that is not declared: the table's rows run from
     * its header to the first blank line. */
    int rows = 0;
    const char *p = strstr(section, "\n| knob | catalogue |");
    assert_non_null(p);
    for (p = strchr(p + 1, '\n'); p && p[1] == '|'; p = strchr(p + 1, '\n'))
        rows += strncmp(p, "\n| `", 4) == 0;
    free(docs);
    if (missing)
        fail_msg("%d catalogue entries are not in docs/knobs.md as declared", missing);
    assert_int_equal(rows, (int)n_entries);
}

/* ---- bad values ------------------------------------------------------------------- */

typedef struct bad {
    char text[64]; /* as GPUOPT_KNOBS and the API take it */
    char json[64]; /* as the config file's "knobs" holds it */
    const char *what;
} bad;

/* The values outside an entry's domain; returns how many. */
static size_t bad_values(const gpo_knob_def *d, bad *out)
{
    size_t n = 0;
    switch (d->type) {
    case GPUOPT_KNOB_INT:
    case GPUOPT_KNOB_BYTES:
        if (d->type == GPUOPT_KNOB_INT || d->min > 0) {
            snprintf(out[n].text, sizeof out[n].text, "%lld", (long long)d->min - 1);
            out[n++].what = "below the range";
        }
        snprintf(out[n].text, sizeof out[n].text, "%lld", (long long)d->max + 1);
        out[n++].what = "above the range";
        if (d->step > 1) {
            snprintf(out[n].text, sizeof out[n].text, "%lld", (long long)d->min + 1);
            out[n++].what = "off the step";
        }
        snprintf(out[n].text, sizeof out[n].text, "twelve");
        out[n++].what = "not a number";
        break;
    case GPUOPT_KNOB_BOOL:
        snprintf(out[n].text, sizeof out[n].text, "sometimes");
        out[n++].what = "not a boolean";
        break;
    case GPUOPT_KNOB_STRING:
        if (d->words || d->form) {
            snprintf(out[n].text, sizeof out[n].text, "sideways");
            out[n++].what = "a wrong word";
        }
        break;
    default: break;
    }
    for (size_t i = 0; i < n; i++)
        gpo_snprintf(out[i].json, sizeof out[i].json, "\"%s\"", out[i].text);
    /* A JSON value of no scalar type, for every entry. */
    snprintf(out[n].text, sizeof out[n].text, "[1]");
    snprintf(out[n].json, sizeof out[n].json, "[1]");
    out[n++].what = "a JSON array";
    return n;
}

static gpuopt_context *context(const char *config_path, log_capture *log)
{
    gpuopt_options o;
    gpuopt_context *ctx = NULL;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.config_path = config_path ? config_path : "";
    o.log_fn = capture_log;
    o.log_user = log;
    assert_int_equal(gpuopt_context_create(&o, &ctx), GPUOPT_OK);
    return ctx;
}

static void expect_domain(const char *text, const gpo_knob_def *d, const char *value,
                          const char *via, const char *what)
{
    char dom[512];
    gpo_knob_domain_text(d, dom, sizeof dom);
    if (!strstr(text, d->name) || !strstr(text, value) || !strstr(text, dom))
        fail_msg("%s: %s=%s (%s) is refused without naming the knob, the value and the domain "
                 "'%s': %s",
                 via, d->name, value, what, dom, text);
}

static void values_outside_a_domain_are_refused_with_the_domain(void **state)
{
    (void)state;
    int checked = 0;
    for (size_t i = 0; i < n_entries; i++) {
        const gpo_knob_def *d = entries[i].def;
        bad bads[8];
        size_t n = bad_values(d, bads);
        for (size_t b = 0; b < n; b++) {
            int scalar = bads[b].json[0] != '[';
            log_capture log;
            char text[512];
            /* The API refuses it. */
            if (scalar) {
                memset(&log, 0, sizeof log);
                gpuopt_context *ctx = context(NULL, &log);
                assert_int_equal(gpuopt_context_set_knob(ctx, d->name, bads[b].text),
                                 GPUOPT_ERR_INVALID_ARGUMENT);
                expect_domain(gpuopt_last_error(), d, bads[b].text, "gpuopt_context_set_knob",
                              bads[b].what);
                assert_int_equal(ctx->cfg.n_knobs, 0);
                gpuopt_context_destroy(ctx);
                /* GPUOPT_KNOBS warns and ignores it. */
                memset(&log, 0, sizeof log);
                gpo_snprintf(text, sizeof text, "%s=%s", d->name, bads[b].text);
                setenv("GPUOPT_KNOBS", text, 1);
                ctx = context(NULL, &log);
                unsetenv("GPUOPT_KNOBS");
                expect_domain(log.text, d, bads[b].text, "GPUOPT_KNOBS", bads[b].what);
                assert_non_null(strstr(log.text, "GPUOPT_KNOBS: ignoring"));
                assert_int_equal(ctx->cfg.n_knobs, 0);
                gpuopt_context_destroy(ctx);
            }
            /* The config file warns and ignores it. */
            memset(&log, 0, sizeof log);
            gpo_snprintf(text, sizeof text, "{\"knobs\": {\"%s\": %s}}", d->name, bads[b].json);
            gpuopt_context *ctx = context(write_temp_file(0, "bad-knob.json", text), &log);
            char dom[512];
            gpo_knob_domain_text(d, dom, sizeof dom);
            if (!strstr(log.text, d->name) || !strstr(log.text, dom))
                fail_msg("config file: %s = %s (%s) is refused without the domain '%s': %s",
                         d->name, bads[b].json, bads[b].what, dom, log.text);
            assert_int_equal(ctx->cfg.n_knobs, 0);
            gpuopt_context_destroy(ctx);
            checked++;
        }
    }
    assert_true(checked > 100);
}

/* The bounds and words of a domain are in it, in any case for words, and
 * the plan shows the catalogue's spelling. */
static void a_domain_s_own_bounds_and_words_are_accepted(void **state)
{
    (void)state;
    log_capture log;
    memset(&log, 0, sizeof log);
    gpuopt_context *ctx = context(NULL, &log);
    for (size_t i = 0; i < n_entries; i++) {
        const gpo_knob_def *d = entries[i].def;
        char v[64];
        switch (d->type) {
        case GPUOPT_KNOB_INT:
        case GPUOPT_KNOB_BYTES:
            snprintf(v, sizeof v, "%lld", (long long)d->min);
            assert_int_equal(gpuopt_context_set_knob(ctx, d->name, v), GPUOPT_OK);
            snprintf(v, sizeof v, "%lld", (long long)d->max);
            assert_int_equal(gpuopt_context_set_knob(ctx, d->name, v), GPUOPT_OK);
            break;
        case GPUOPT_KNOB_BOOL:
            assert_int_equal(gpuopt_context_set_knob(ctx, d->name, "true"), GPUOPT_OK);
            assert_int_equal(gpuopt_context_set_knob(ctx, d->name, "false"), GPUOPT_OK);
            break;
        default:
            for (size_t w = 0; d->words && d->words[w]; w++) {
                int64_t ival;
                char *norm = NULL, why[256], lower[64];
                assert_int_equal(gpuopt_context_set_knob(ctx, d->name, d->words[w]), GPUOPT_OK);
                gpo_strlcpy(lower, d->words[w], sizeof lower);
                for (char *c = lower; *c; c++)
                    *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
                assert_int_equal(gpo_knob_parse(d, lower, &ival, &norm, why, sizeof why), 0);
                assert_string_equal(norm, d->words[w]);
                free(norm);
            }
            break;
        }
    }
    gpuopt_context_destroy(ctx);
}

/* The examples, word for word. */
static void the_reported_bad_overrides_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *name, *value, *says;
    } rows[] = {
        {"threads", "-3", "an integer from 1 to 8192 (threads)"},
        {"threads", "0", "an integer from 1 to 8192 (threads)"},
        {"threads", "99999999999", "an integer from 1 to 8192 (threads)"},
        {"omp.proc_bind", "sideways", "one of false, true, primary, close, spread"},
        {"cpu.fpmath_mode", "whatever", "one of STRICT, BF16, F16, TF32, ANY"},
    };
    log_capture log;
    memset(&log, 0, sizeof log);
    gpuopt_context *ctx = context(NULL, &log);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_int_equal(gpuopt_context_set_knob(ctx, rows[i].name, rows[i].value),
                         GPUOPT_ERR_INVALID_ARGUMENT);
        if (!strstr(gpuopt_last_error(), rows[i].says) ||
            !strstr(gpuopt_last_error(), rows[i].value))
            fail_msg("%s=%s: '%s'", rows[i].name, rows[i].value, gpuopt_last_error());
    }
    gpuopt_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(every_entry_declares_a_type_a_domain_and_a_meaning, setup),
        cmocka_unit_test_setup(derived_entries_name_existing_inputs_and_form_no_cycle, setup),
        cmocka_unit_test_setup(the_document_lists_every_knob_with_its_domain_and_derivation, setup),
        cmocka_unit_test_setup(values_outside_a_domain_are_refused_with_the_domain, setup),
        cmocka_unit_test_setup(a_domain_s_own_bounds_and_words_are_accepted, setup),
        cmocka_unit_test_setup(the_reported_bad_overrides_are_refused, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
