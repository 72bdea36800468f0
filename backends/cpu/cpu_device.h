/* The CPU's device record, built from its facts (cpu_device.c). */
#ifndef GPO_CPU_DEVICE_H
#define GPO_CPU_DEVICE_H

#include "cpu/cpu_facts.h"
#include "device.h"

/* Fills a device record (info, details, est_gflops) from facts. Returns
 * GPUOPT_ERR_NO_MEMORY when the details cannot be built. */
gpuopt_status gpo_cpu_fill_device(const gpo_cpu_facts *f, gpuopt_device *dev);

#endif
