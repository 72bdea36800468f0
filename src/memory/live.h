/* A device's memory now, through its primary route's memory_live
 * (src/backend.h), for the public gpuopt_device_memory, plans at level >= 1
 * (src/tiers.c), the device list (src/json_devices.c) and the memory
 * manager (src/memory/manager.c). */
#ifndef GPO_MEMORY_LIVE_H
#define GPO_MEMORY_LIVE_H

#include "backend.h"

/* Reads `dev`'s memory with `flags` (GPO_MEMORY_MAY_CREATE_CONTEXT or 0).
 * Always fills *out: on GPUOPT_OK with the source's numbers (and updates
 * dev->info.memory_free_bytes); when no source can say (a backend without
 * memory_live, or its GPUOPT_ERR_UNSUPPORTED) it returns GPUOPT_OK too,
 * with source GPUOPT_MEMORY_SOURCE_NONE, the record's total and the words
 * of why in source_text; any other failure (forked, out of memory, a
 * driver error) is returned with the detail set and *out holding the
 * total alone. The caller holds the context's lock. */
gpuopt_status gpo_memory_read(gpuopt_device *dev, uint32_t flags, gpo_memory_reading *out);

/* "NVML", "kernel", ...: the source in one word, as the JSON formats give it. */
const char *gpo_memory_source_word(int32_t source);

#endif
