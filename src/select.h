/* Device selection policies: parsing ("auto", "gpu", "cuda", "cuda:1", a
 * UUID, a PCI bus id) and the ordering rule that "auto" applies. */
#ifndef GPO_SELECT_H
#define GPO_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

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

/* Parses a policy; `list` gives the backend names accepted. Returns 0, or -1
 * with what is accepted in `why`. */
int gpo_policy_parse(const char *text, const struct gpo_backend *const *list, size_t n,
                     gpo_policy *out, char *why, size_t cap);

/* 1 when the device's facts satisfy the policy's filter (backend, index, id). */
int gpo_policy_matches(const gpo_policy *pol, const gpuopt_device *dev);

/* Ordering for "auto": returns < 0 when a is preferred over b. Discrete GPU
 * over integrated GPU over accelerator over CPU; then a native backend over
 * OpenCL; then higher estimated throughput, more memory, lower position. */
int gpo_device_prefer(const gpuopt_device *a, size_t pos_a, const gpuopt_device *b, size_t pos_b);

/* 1 when the device is a discrete GPU of a native backend: "auto" can stop
 * probing once it has one. */
int gpo_device_is_native_discrete_gpu(const gpuopt_device *dev);

#endif
