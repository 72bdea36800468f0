/* Device selection: the order "auto" ranks devices in, and resolving a
 * selector (src/policy.h) against a context, probing backends lazily. */
#ifndef GPO_SELECT_H
#define GPO_SELECT_H

#include <stddef.h>

#include "device.h"

struct gpuopt_context;

/* Ordering for "auto": returns < 0 when a is preferred over b. Discrete GPU
 * over integrated GPU over accelerator over CPU; then a native backend over
 * OpenCL; then higher estimated throughput, more memory, lower position. */
int gpo_device_prefer(const gpuopt_device *a, size_t pos_a, const gpuopt_device *b, size_t pos_b);

/* 1 when the device is a discrete GPU of a native backend: "auto" can stop
 * probing once it has one. */
int gpo_device_is_native_discrete_gpu(const gpuopt_device *dev);

/* With the context's lock held: resolves a selector (NULL: the configured
 * one), probing only as far as it needs. */
gpuopt_status gpo_ctx_select(struct gpuopt_context *ctx, const char *policy, gpuopt_device **out);

#endif
