/* The doctor's reading of a probed context (doctor_backend.c): one
 * gpo_backend_slot per backend for the run, and which devices are usable.
 * Core-only: backends see the slots through src/doctor/doctor.h. */
#ifndef GPO_DOCTOR_BACKEND_H
#define GPO_DOCTOR_BACKEND_H

#include "context.h"
#include "doctor/doctor.h"

/* Fills slots[0, ctx->n_backends) from the context's probe, in its order.
 * With the context's lock held, after gpo_ctx_probe_all. */
void gpo_dr_slots_read(const struct gpuopt_context *ctx, gpo_backend_slot *slots);

/* 1 when `d` is an accelerator (not a CPU) that a route through an
 * available backend can use (`backend` NULL: any route, else that one). */
int gpo_dr_device_usable(const struct gpuopt_context *ctx, const gpuopt_device *d,
                         const char *backend);

/* Adds a "toolchain_support" warning for each device whose route through
 * backend `b` says the compiler and release found no longer target it
 * (gpo_backend.toolchain_dropped), with the last release that does. */
void gpo_dr_check_toolchain(gpo_dr_run *run, const struct gpuopt_context *ctx,
                            const gpo_backend *b);

#endif
