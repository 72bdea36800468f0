/* Marketing names from libdrm's amdgpu.ids (rocm_ids.c), for GPUs the KFD
 * topology lists by PCI id only. */
#ifndef GPO_ROCM_IDS_H
#define GPO_ROCM_IDS_H

#include <stddef.h>
#include <stdint.h>

#define GPO_AMDGPU_IDS_PATH "/usr/share/libdrm/amdgpu.ids"

/* Looks up (device_id, revision) in the text of an amdgpu.ids file ("1002
 * device, revision, name" lines, hex). revision -1 matches when every entry
 * of that device carries the same name. Returns 1 and fills out, else 0. */
int gpo_amdgpu_ids_lookup(const char *text, uint32_t device_id, int32_t revision, char *out,
                          size_t cap);

#endif
