/* Device selectors ("auto", "gpu", "cuda", "cuda:1", a UUID, a PCI bus
 * id): parsing the text, and whether one device matches. Pure: no context,
 * no probing; the configuration checks a selector with it before any
 * backend loads, and selection (select.c) applies it. */
#ifndef GPO_POLICY_H
#define GPO_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

/* Longest selector text accepted, terminator included. */
#define GPO_POLICY_MAX 256

struct gpo_backend;

typedef enum gpo_policy_kind {
    GPO_POLICY_AUTO = 0,    /* best device of any allowed backend */
    GPO_POLICY_GPU = 1,     /* best GPU */
    GPO_POLICY_BACKEND = 2, /* best device of one backend */
    GPO_POLICY_INDEX = 3,   /* backend + native index */
    GPO_POLICY_UUID = 4,    /* UUID or unique prefix */
    GPO_POLICY_PCI = 5      /* PCI bus id, normalised */
} gpo_policy_kind;

typedef struct gpo_policy {
    gpo_policy_kind kind;
    char backend[16];
    int32_t index;
    char key[128]; /* UUID (as given) or normalised PCI bus id */
} gpo_policy;

/* Parses a selector; the `n` backends of `list` give the names accepted.
 * Returns 0, or -1 with what is accepted in `why`. */
int gpo_policy_parse(const char *text, const struct gpo_backend *const *list, size_t n,
                     gpo_policy *out, char *why, size_t cap);

/* 1 when the device's facts satisfy the selector (backend, index, id); a
 * search ("auto", "gpu", a backend) matches every candidate it ranks. */
int gpo_policy_matches(const gpo_policy *pol, const gpuopt_device *dev);

/* 1 when the selector asks for the best of several devices rather than
 * naming one. */
int gpo_policy_is_search(const gpo_policy *pol);

#endif
