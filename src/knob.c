/* Knob catalogue lookup, domains in words, and value parsing against a
 * knob's domain (src/knob.h). */
#include "knob.h"

#include <assert.h>
#include <inttypes.h>
#include <string.h>

#include "backend.h"
#include "util/strutil.h"

const gpo_knob_def *gpo_knob_find_in(const gpo_knob_def *defs, size_t n, const char *name)
{
    assert(name);
    for (size_t i = 0; i < n; i++)
        if (strcmp(defs[i].name, name) == 0)
            return &defs[i];
    return NULL;
}

const gpo_knob_def *gpo_knob_find(const struct gpo_backend *const *list, size_t n, const char *name)
{
    const gpo_knob_def *d = gpo_knob_find_in(gpo_core_knobs, gpo_n_core_knobs, name);
    for (size_t i = 0; !d && i < n; i++)
        d = gpo_knob_find_in(list[i]->knobs, list[i]->n_knobs, name);
    return d;
}

int gpo_knob_source_is_user(int32_t source)
{
    return source == GPUOPT_SOURCE_CONFIG || source == GPUOPT_SOURCE_ENV ||
           source == GPUOPT_SOURCE_API;
}

/* ---- the domain in words --------------------------------------------------------- */

static void number_text(const gpo_knob_def *def, int64_t v, char *out, size_t cap)
{
    if (def->type == GPUOPT_KNOB_BYTES && v > 0)
        gpo_format_bytes((uint64_t)v, out, cap);
    else
        gpo_snprintf(out, cap, "%" PRId64, v);
}

void gpo_knob_domain_text(const gpo_knob_def *def, char *out, size_t cap)
{
    char lo[32], hi[32], step[32], units[48] = "";
    if (def->units)
        gpo_snprintf(units, sizeof units, " (%s)", def->units);
    switch (def->type) {
    case GPUOPT_KNOB_BOOL: gpo_snprintf(out, cap, "true or false"); return;
    case GPUOPT_KNOB_INT:
    case GPUOPT_KNOB_BYTES:
        number_text(def, def->min, lo, sizeof lo);
        number_text(def, def->max, hi, sizeof hi);
        if (def->step > 1) {
            number_text(def, def->step, step, sizeof step);
            gpo_snprintf(out, cap, "%s from %s to %s, a multiple of %s%s",
                         def->type == GPUOPT_KNOB_BYTES ? "a size" : "an integer", lo, hi, step,
                         units);
        } else {
            gpo_snprintf(out, cap, "%s from %s to %s%s",
                         def->type == GPUOPT_KNOB_BYTES ? "a size" : "an integer", lo, hi, units);
        }
        return;
    case GPUOPT_KNOB_STRING:
        if (def->words) {
            /* Into `out` directly: a message allocates nothing, so it
             * cannot come out different when memory is short. */
            size_t len = 0;
            gpo_snprintf(out, cap, "%s", def->words[1] ? "one of " : "only ");
            for (size_t i = 0; def->words[i]; i++) {
                len = strlen(out);
                gpo_snprintf(out + len, cap - len, "%s%s", i ? ", " : "", def->words[i]);
            }
            len = strlen(out);
            gpo_snprintf(out + len, cap - len, "%s", units);
        } else if (def->form) {
            gpo_snprintf(out, cap, "%s", def->form_text ? def->form_text : "text of a set form");
        } else {
            gpo_snprintf(out, cap, "any text%s", units);
        }
        return;
    default: break;
    }
    assert(!"a catalogue entry has an unknown knob type");
    gpo_snprintf(out, cap, "unknown knob type %d", (int)def->type);
}

/* ---- checks --------------------------------------------------------------------- */

static int outside(const gpo_knob_def *def, const char *shown, char *why, size_t cap)
{
    char dom[512];
    gpo_knob_domain_text(def, dom, sizeof dom);
    return gpo_say(-1, why, cap, "'%s' is outside its domain: %s", shown, dom);
}

/* The catalogue's spelling of `text`, or NULL when it is not one of the words. */
static const char *word_of(const gpo_knob_def *def, const char *text)
{
    for (size_t i = 0; def->words[i]; i++)
        if (gpo_strcaseeq(def->words[i], text))
            return def->words[i];
    return NULL;
}

int gpo_knob_check(const gpo_knob_def *def, int64_t ival, const char *text, char *why, size_t cap)
{
    char shown[32];
    switch (def->type) {
    case GPUOPT_KNOB_BOOL: return ival == 0 || ival == 1 ? 0 : outside(def, "?", why, cap);
    case GPUOPT_KNOB_INT:
    case GPUOPT_KNOB_BYTES:
        if (ival >= def->min && ival <= def->max && (def->step <= 1 || ival % def->step == 0))
            return 0;
        gpo_snprintf(shown, sizeof shown, "%" PRId64, ival);
        return outside(def, shown, why, cap);
    case GPUOPT_KNOB_STRING:
        assert(text);
        if (def->words ? word_of(def, text) != NULL : def->form ? def->form(text) : 1)
            return 0;
        return outside(def, text, why, cap);
    default: break;
    }
    assert(!"a catalogue entry has an unknown knob type");
    return gpo_say(-1, why, cap, "unknown knob type %d", (int)def->type);
}

/* The domain in words after a type error, so every refusal names it. */
static int not_of_type(const gpo_knob_def *def, const char *text, const char *what, char *why,
                       size_t cap)
{
    char dom[512];
    gpo_knob_domain_text(def, dom, sizeof dom);
    return gpo_say(-1, why, cap, "'%s' is not %s; its domain: %s", text, what, dom);
}

int gpo_knob_parse(const gpo_knob_def *def, const char *text, int64_t *ival, char **norm, char *why,
                   size_t cap)
{
    assert(def && text);
    *norm = NULL;
    *ival = 0;
    switch (def->type) {
    case GPUOPT_KNOB_BOOL: {
        int b;
        if (gpo_parse_bool(text, &b))
            return not_of_type(def, text, "a boolean", why, cap);
        *ival = b;
        *norm = gpo_strdup(b ? "true" : "false");
        break;
    }
    case GPUOPT_KNOB_INT:
        if (gpo_parse_i64(text, INT64_MIN, INT64_MAX, ival))
            return not_of_type(def, text, "an integer", why, cap);
        if (gpo_knob_check(def, *ival, NULL, why, cap))
            return -1;
        *norm = gpo_asprintf("%" PRId64, *ival);
        break;
    case GPUOPT_KNOB_BYTES: {
        uint64_t b;
        if (gpo_parse_bytes(text, &b))
            return not_of_type(def, text,
                               "a size (a byte count such as 268435456, 256MiB, 16GiB or 2e9)", why,
                               cap);
        if (b > (uint64_t)INT64_MAX)
            return outside(def, text, why, cap);
        *ival = (int64_t)b;
        if (gpo_knob_check(def, *ival, NULL, why, cap))
            return -1;
        *norm = gpo_asprintf("%" PRIu64, b);
        break;
    }
    case GPUOPT_KNOB_STRING:
        if (gpo_knob_check(def, 0, text, why, cap))
            return -1;
        *norm = gpo_strdup(def->words ? word_of(def, text) : text);
        break;
    default:
        /* Catalogues are static tables of the four types. */
        assert(!"a catalogue entry has an unknown knob type");
        return gpo_say(-1, why, cap, "unknown knob type %d", (int)def->type);
    }
    if (!*norm)
        return gpo_say(GPO_KNOB_PARSE_NO_MEMORY, why, cap, "out of memory");
    return 0;
}
