/* x86-64 naming: the psABI level and the microarchitecture of facts whose
 * vendor, family, model and features are known (x86_uarch.c). */
#ifndef GPO_X86_UARCH_H
#define GPO_X86_UARCH_H

#include "cpu/cpu_facts.h"

/* Fills x86_level, isa_level and microarch from the vendor/family/model
 * table, falling back to the feature set (and saying why in
 * src_microarch). */
void gpo_x86_name_microarch(gpo_cpu_facts *f);

#endif
