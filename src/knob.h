/* Knobs: the catalogue entry every knob is declared with (type, domain,
 * environment variable, framework setting, and for a derived knob its
 * inputs and derivation), the lookup of a name in the catalogues, and the
 * parsing of a value against a knob's domain.
 *
 * Every knob a rule may set is declared once in a catalogue (the core's in
 * src/knobs_core.c, each backend's beside its ops table); docs/knobs.md
 * lists every entry with its domain and derivation, and a test keeps the
 * two in step. This module sits below the configuration (which checks the
 * user's overrides), the plan (which checks what rules set) and the
 * derivation phase (src/plan_derive.c), so none of them reaches into
 * another.
 *
 * How a plan uses the catalogue (docs/knobs.md, "How a plan is built"):
 * rules propose values (tier 0, 1, 2); the user's overrides replace the
 * proposals they name; then every derived knob is computed from the final
 * values of its inputs, in dependency order. Rules never set a derived
 * knob, so what a derived knob exports always follows from what the plan
 * shows. */
#ifndef GPO_KNOB_H
#define GPO_KNOB_H

#include <stddef.h>
#include <stdint.h>

#include "util/detail.h"

struct gpuopt_plan;

/* One input of a derived knob as the plan holds it when derivation runs. */
typedef struct gpo_knob_input {
    const char *name;
    int present;      /* 0: no rule and no user set it */
    int user;         /* 1: set by the user (config file, GPUOPT_KNOBS, API) */
    int32_t tier;     /* the tier that set it; -1 when only the user did */
    int64_t ival;     /* bool 0/1, int, bytes */
    const char *text; /* the value as text; NULL when absent */
} gpo_knob_input;

/* What a derivation gives. */
typedef struct gpo_derivation {
    int present;       /* 0: the knob is absent (the reason is in how) */
    char value[256];   /* the value as a user would write it, checked against the domain */
    char how[768];     /* the arithmetic or the rule, in words; may be empty */
    char warning[768]; /* when not empty: a warning the plan carries */
} gpo_derivation;

/* What a derivation may read besides its inputs: the facts of the plan,
 * which overrides cannot change. */
typedef struct gpo_derive_env {
    const struct gpuopt_plan *plan;  /* for a backend's own fact readers (src/rules.h) */
    void *state;                     /* the backend state of the route whose catalogue declares
                                        the knob; NULL for the core's catalogue */
    const gpuopt_device *dev;        /* the plan's device */
    const gpuopt_workload *workload; /* NULL: none described */
    int32_t level;                   /* the level the plan reached, 0..2 */
    uint64_t memory;                 /* what rules size against: free memory when it was read
                                        (level >= 1), else the total; 0 unknown */
    const char *memory_what;         /* "free" / "total" */
    uint64_t memory_total;           /* the device's total */
    int reduced;             /* reduced precision may be used (gpo_plan_reduced_precision) */
    const char *reduced_why; /* that decision in words */
} gpo_derive_env;

/* Computes a derived knob. `in` holds one entry per name of the entry's
 * `inputs`, in that order. Fills *out; returns GPUOPT_OK (or a failure
 * that fails the plan). A derivation reads no other knob than its inputs,
 * so overriding an input is the only way a user changes it (besides
 * overriding the derived knob itself); it reads no fact at level 0. */
typedef gpuopt_status (*gpo_knob_derive_fn)(const gpo_knob_input *in, const gpo_derive_env *env,
                                            gpo_derivation *out);

typedef struct gpo_knob_def {
    const char *name;    /* "launch.block_size" */
    int32_t type;        /* gpuopt_knob_type */
    const char *env;     /* "OMP_NUM_THREADS", or NULL when not an environment knob */
    const char *summary; /* one line: what it means for the user */
    /* The domain. int and bytes: min to max inclusive (every such entry has
     * a range), a multiple of `step` when step > 1. string: one of `words`
     * (NULL-terminated; matched regardless of case and shown in the
     * catalogue's spelling) when set, else text that `form` accepts
     * (described by form_text), else any text. bool: true or false. */
    int64_t min, max, step;
    const char *const *words;
    int (*form)(const char *text);
    const char *form_text;
    const char *units;   /* "threads", "bits", "MiB", "bytes/s"; NULL when none */
    const char *maps_to; /* the framework or library setting it corresponds to; NULL if none */
    /* A derived knob: computed from the knobs named in `inputs`
     * (NULL-terminated) by `derive`, after the user's overrides. */
    const char *const *inputs;
    gpo_knob_derive_fn derive;
} gpo_knob_def;

/* A NULL-terminated word list for a catalogue entry. */
#define GPO_WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

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

/* The domain in words, as error messages and docs/knobs.md give it:
 * "an integer from 1 to 8192 (threads)", "one of LAZY, EAGER". */
void gpo_knob_domain_text(const gpo_knob_def *def, char *out, size_t cap);

/* Parses `text` as a value of `def`, type and domain: *ival gets the number
 * (bool 0/1, int, bytes) and *norm the value as the plan shows it
 * (malloc'd; "256MiB" becomes "268435456", "lazy" becomes "LAZY"). Returns
 * 0, or -1 with the reason in `why` ("'-3' is outside the domain: an
 * integer from 1 to 8192 (threads)") and *norm NULL, or
 * GPO_KNOB_PARSE_NO_MEMORY when the value was fine but *norm could not be
 * allocated (callers fail with GPUOPT_ERR_NO_MEMORY, never "not accepted"). */
#define GPO_KNOB_PARSE_NO_MEMORY (-2)
int gpo_knob_parse(const gpo_knob_def *def, const char *text, int64_t *ival, char **norm, char *why,
                   size_t cap);

/* Checks a typed value a rule sets against `def`'s domain: 0, or -1 with
 * the reason in `why`. For strings `text` is the value; for the other
 * types `ival`. */
int gpo_knob_check(const gpo_knob_def *def, int64_t ival, const char *text, char *why, size_t cap);

/* 1 when `source` (gpuopt_knob_source) is one of the user's. */
int gpo_knob_source_is_user(int32_t source);

#endif
