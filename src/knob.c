/* Knob catalogue lookup and value parsing (src/knob.h). */
#include "knob.h"

#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
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

int gpo_knob_parse(int32_t type, const char *text, int64_t *ival, char **norm, char *why,
                   size_t cap)
{
    assert(text);
    *norm = NULL;
    *ival = 0;
    switch (type) {
    case GPUOPT_KNOB_BOOL: {
        int b;
        if (gpo_parse_bool(text, &b)) {
            gpo_snprintf(why, cap, "'%s' is not a boolean; accepted: true, false", text);
            return -1;
        }
        *ival = b;
        *norm = gpo_strdup(b ? "true" : "false");
        break;
    }
    case GPUOPT_KNOB_INT:
        if (gpo_parse_i64(text, INT64_MIN, INT64_MAX, ival)) {
            gpo_snprintf(why, cap, "'%s' is not an integer", text);
            return -1;
        }
        *norm = gpo_asprintf("%" PRId64, *ival);
        break;
    case GPUOPT_KNOB_BYTES: {
        uint64_t b;
        if (gpo_parse_bytes(text, &b) || b > (uint64_t)INT64_MAX) {
            gpo_snprintf(why, cap,
                         "'%s' is not a size; accepted: a byte count such as "
                         "268435456, 256MiB, 16GiB or 2e9",
                         text);
            return -1;
        }
        *ival = (int64_t)b;
        *norm = gpo_asprintf("%" PRIu64, b);
        break;
    }
    case GPUOPT_KNOB_STRING: *norm = gpo_strdup(text); break;
    default:
        /* Catalogues are static tables of the four types. */
        assert(!"a catalogue entry has an unknown knob type");
        gpo_snprintf(why, cap, "unknown knob type %d", (int)type);
        return -1;
    }
    if (!*norm) {
        gpo_snprintf(why, cap, "out of memory");
        return -1;
    }
    return 0;
}
