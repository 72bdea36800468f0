/* Knobs: the catalogue entry every knob is declared with, the lookup of a
 * name in the catalogues, and the parsing of a value of a knob's type.
 *
 * Every knob a rule may set is declared once in a catalogue (the core's in
 * src/knobs_core.c, each backend's in its ops table): name, type, the
 * environment variable it exports to, a one-line meaning. docs/knobs.md
 * documents every entry. This module sits below both the configuration
 * (which checks the user's overrides) and the plan (which checks what rules
 * set), so neither has to reach into the other. */
#ifndef GPO_KNOB_H
#define GPO_KNOB_H

#include <stddef.h>
#include <stdint.h>

#include "util/detail.h"

typedef struct gpo_knob_def {
    const char *name;    /* "launch.block_size" */
    int32_t type;        /* gpuopt_knob_type */
    const char *env;     /* "OMP_NUM_THREADS", or NULL when not an environment knob */
    const char *summary; /* one line: what it means for the user */
} gpo_knob_def;

/* The core's own catalogue (src/knobs_core.c): knobs several backends set
 * with the same meaning. */
extern const gpo_knob_def gpo_core_knobs[];
extern const size_t gpo_n_core_knobs;

struct gpo_backend;

/* The entry called `name` in the core's catalogue or in the catalogue of
 * one of the `n` backends of `list` (the core's first), or NULL. */
const gpo_knob_def *gpo_knob_find(const struct gpo_backend *const *list, size_t n,
                                  const char *name);

/* The entry called `name` in one catalogue of `n` entries, or NULL. */
const gpo_knob_def *gpo_knob_find_in(const gpo_knob_def *defs, size_t n, const char *name);

/* Parses `text` as a value of knob type `type`: *ival gets the number
 * (bool 0/1, int, bytes) and *norm the value as the plan shows it (malloc'd;
 * "256MiB" becomes "268435456"). Returns 0, or -1 with what is accepted in
 * `why` and *norm NULL. */
int gpo_knob_parse(int32_t type, const char *text, int64_t *ival, char **norm, char *why,
                   size_t cap);

#endif
