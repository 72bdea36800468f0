/* A core's vector throughput (cpu_peak.c): fp32 FLOP per cycle from a table
 * of microarchitectures (how many FMA pipes of which width the core really
 * has), not from the widest ISA it reports: Zen 4 accepts 512-bit FMAs but
 * runs them on two 256-bit pipes. */
#ifndef GPO_CPU_PEAK_H
#define GPO_CPU_PEAK_H

#include <stddef.h>

#include "cpu/cpu_facts.h"

/* fp32 FLOP per cycle per core (FMA pipes x fp32 lanes x 2): the table's
 * figure for f->microarch, else two pipes of the widest vector the ISA
 * offers up to 256 bits (never assuming full-width 512-bit pipes the table
 * does not vouch for). */
int32_t gpo_cpu_flops_per_cycle(const gpo_cpu_facts *f);

/* Where gpo_cpu_flops_per_cycle's figure came from, in words, into
 * out[cap] (cap > 0): the table row and its source, the SKU rule that
 * decided, or that the table could not decide and what was assumed. */
void gpo_cpu_flops_source(const gpo_cpu_facts *f, char *out, size_t cap);

/* Peak fp32 GFLOP/s estimate: usable physical cores x GHz x FLOP/cycle;
 * 0 when the clock is unknown. Ordering only. */
double gpo_cpu_est_gflops(const gpo_cpu_facts *f);

#endif
