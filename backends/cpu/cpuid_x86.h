/* The x86-64 reader: vendor, family/model and ISA features from cpuid on
 * the live system or from a recorded tree's /proc/cpuinfo (cpuid_x86.c). */
#ifndef GPO_CPUID_X86_H
#define GPO_CPUID_X86_H

#include "cpu/cpu_facts.h"

/* Vendor, model, family and features: cpuid on the live system, the tree's
 * /proc/cpuinfo when recorded (or when cpuid is not available); then the
 * level and microarchitecture names (x86_uarch.h). */
gpuopt_status gpo_x86_read(const gpo_fs *fs, const gpo_logger *log, gpo_cpu_facts *f);

/* Live cpuid only (x86 builds): fills vendor, family/model/stepping, brand
 * and isa (with OS support for AVX/AVX-512/AMX state checked in XCR0).
 * Under a hypervisor the brand is left empty (each cpuid traps there; the
 * caller reads it from /proc/cpuinfo).
 * Returns 0, or -1 when not built for x86 or cpuid is missing. */
int gpo_x86_cpuid_live(gpo_cpu_facts *f);

/* Maximum core frequency from cpuid leaf 0x16 (live x86 only, after
 * gpo_x86_cpuid_live filled f->cpuid_max_leaf), -1 when the leaf is absent
 * or reports 0 (common under hypervisors). */
int32_t gpo_x86_cpuid_max_mhz(const gpo_cpu_facts *f);

#endif
