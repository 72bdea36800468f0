/* The doctor's findings: a growable list of small records built one sentence
 * at a time. An allocation failure latches report->failed and the finding
 * in hand becomes NULL, which every function here accepts. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "util/strutil.h"

static const char *const status_words[] = {"ok", "info", "warning", "problem"};

const char *gpo_dr_status_word(gpo_dr_status st)
{
    return st >= GPO_DR_OK && st <= GPO_DR_PROBLEM ? status_words[st] : "unknown";
}

gpo_dr_finding *gpo_dr_add(gpo_dr_report *r, const char *backend, const char *check,
                           gpo_dr_status status)
{
    if (gpo_grow(&r->items, sizeof *r->items, r->n, &r->cap, 32)) {
        r->failed = 1;
        return NULL;
    }
    gpo_dr_finding *f = &r->items[r->n++];
    memset(f, 0, sizeof *f);
    f->backend = backend;
    f->check = check;
    f->status = status;
    return f;
}

/* printf into a fresh string; NULL (and the report failed) when out of
 * memory. */
static char *vformat(gpo_dr_report *r, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!s) {
        r->failed = 1;
        return NULL;
    }
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

/* Takes s into *slot in place of what was there; NULL (out of memory, the
 * report already failed) keeps the old text. */
static void replace(char **slot, char *s)
{
    if (!s)
        return;
    free(*slot);
    *slot = s;
}

void gpo_dr_say(gpo_dr_report *r, gpo_dr_finding *f, const char *fmt, ...)
{
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    replace(&f->summary, vformat(r, fmt, ap));
    va_end(ap);
}

void gpo_dr_evidence(gpo_dr_report *r, gpo_dr_finding *f, const char *fmt, ...)
{
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(r, fmt, ap);
    va_end(ap);
    if (!s)
        return;
    char **bigger = realloc(f->evidence, (f->n_evidence + 1) * sizeof *bigger);
    if (!bigger) {
        free(s);
        r->failed = 1;
        return;
    }
    f->evidence = bigger;
    f->evidence[f->n_evidence++] = s;
}

void gpo_dr_fix(gpo_dr_report *r, gpo_dr_finding *f, const char *fmt, ...)
{
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    replace(&f->fix, vformat(r, fmt, ap));
    va_end(ap);
}

void gpo_dr_path(gpo_dr_report *r, gpo_dr_finding *f, const char *path)
{
    if (!f || !path)
        return;
    char *s = gpo_strdup(path);
    if (!s)
        r->failed = 1;
    replace(&f->path, s);
}

void gpo_dr_report_free(gpo_dr_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        gpo_dr_finding *f = &r->items[i];
        free(f->summary);
        for (size_t k = 0; k < f->n_evidence; k++)
            free(f->evidence[k]);
        free(f->evidence);
        free(f->path);
        free(f->fix);
    }
    free(r->items);
    memset(r, 0, sizeof *r);
}
