/* The ROCm backend's device records (rocm_device.c), from what HIP says
 * (enriched by the KFD node of the same GPU) or from the KFD topology
 * alone. */
#ifndef GPO_ROCM_DEVICE_H
#define GPO_ROCM_DEVICE_H

#include <cjson/cJSON.h>

#include "device.h"
#include "rocm_hip.h"
#include "rocm_kfd.h"

/* Builds the record of HIP device `ordinal` from what HIP said (hd), enriched
 * by `kfd` (may be NULL), the KFD node of the same GPU. `notes` (may be NULL)
 * is copied into the details. */
gpuopt_status gpo_rocm_device_from_hip(int ordinal, const gpo_kfd_gpu *kfd,
                                       const gpo_hip_device *hd, const cJSON *notes,
                                       gpuopt_device **out);

/* Builds the record of a GPU seen only in the KFD topology; `index` is the
 * ordinal HIP would give it. */
gpuopt_status gpo_rocm_device_from_kfd(const gpo_kfd_gpu *kfd, int index, gpuopt_device **out);

/* The KFD node that is HIP device all[ordinal]: same UUID, else the n-th
 * node with the same PCI location where it is the n-th HIP device there.
 * NULL when none. */
const gpo_kfd_gpu *gpo_rocm_match_kfd(const gpo_kfd *kfd, const gpo_hip_device *all, int ordinal);

#endif
