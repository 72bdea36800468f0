/* The example backend's block of gpuopt_context_diagnose: the generic "backend"
 * finding, then its own "library" check, read through the doctor's narrow
 * run (src/doctor/doctor.h) as a real backend's checks are. */
#include "example_doctor.h"

void gpo_example_diagnose(gpo_dr_run *run)
{
    gpo_dr_report *r = run->rep;
    gpo_dr_check_backend(run, "example", 1);
    const gpo_backend_slot *s = gpo_dr_slot(run, "example");
    const char *lib = gpo_dr_library(run, "example");
    if (!s || s->status == GPUOPT_BACKEND_DISABLED)
        return;
    int ok = s->status == GPUOPT_BACKEND_AVAILABLE;
    gpo_dr_finding *f = gpo_dr_add(r, "example", "library", ok ? GPO_DR_OK : GPO_DR_PROBLEM);
    if (lib) {
        gpo_dr_say(r, f, "GPUOPT_EXAMPLE_LIBRARY chooses %s%s", lib,
                   ok ? "" : ", which cannot be read");
        gpo_dr_path(r, f, lib);
        gpo_dr_evidence(r, f, "GPUOPT_EXAMPLE_LIBRARY=%s", lib);
    } else {
        gpo_dr_say(r, f, "the built-in Example driver is used");
        gpo_dr_evidence(r, f, "GPUOPT_EXAMPLE_LIBRARY is not set");
    }
    if (!ok) {
        gpo_dr_evidence(r, f, "%s", s->report.reason);
        gpo_dr_fix(r, f, "unset GPUOPT_EXAMPLE_LIBRARY, or point it at a readable file");
    }
}
