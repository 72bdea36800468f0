/* The CUDA backend's one reading of CUDA_VISIBLE_DEVICES (cuda_visible.c),
 * which the doctor's visible_devices check applies. */
#ifndef GPO_CUDA_VISIBLE_H
#define GPO_CUDA_VISIBLE_H

#include <stddef.h>

#include "doctor/doctor.h"

/* What the CUDA driver makes of `text`: entries up to the first that is not
 * a device count. `n_devices` is how many GPUs the kernel lists (-1
 * unknown: indices are not range-checked); `uuids` (may be NULL) the known
 * UUIDs, which a "GPU-" entry must begin (a unique prefix matches, as in
 * CUDA). NULL text: nothing set. */
void gpo_cuda_visible_parse(const char *text, int n_devices, const char *const *uuids,
                            size_t n_uuids, gpo_dr_visible *out);

#endif
