/* The x86-64 reader: vendor, family/model and ISA features from cpuid on
 * the live system or from a recorded tree's /proc/cpuinfo (cpuid_x86.c). */
#ifndef GPO_CPUID_X86_H
#define GPO_CPUID_X86_H

#include "cpu/cpu_facts.h"

/* Vendor, model, family and features: cpuid on the live system, the tree's
 * /proc/cpuinfo when recorded (or when cpuid is not available); then the
 * level and microarchitecture names (x86_uarch.h). */
gpuopt_status gpo_x86_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* Live cpuid only (x86 builds): fills vendor, family/model/stepping, isa
 * (with OS support for AVX/AVX-512/AMX state checked in XCR0),
 * cpuid_max_leaf, and outside a hypervisor the brand (model_name) and
 * cpuid_max_mhz. Under a hypervisor the brand and clock are left to
 * /proc/cpuinfo (each cpuid traps there). The instruction runs once per
 * process; later calls copy its answers. Thread-safe.
 * Returns 0, or -1 when not built for x86 or cpuid is missing. */
int gpo_x86_cpuid_live(gpo_cpu_facts *f);

#endif
