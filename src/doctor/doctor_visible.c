/* The visible_devices finding: CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES,
 * ROCR_VISIBLE_DEVICES, ... Set to "" or "-1" (a common way to say "no
 * GPU" in job scripts) they hide every device, and the driver then answers
 * "no device" as if there were none. Each vendor's driver reads its list
 * by its own rules, so the reading is the backend's (its one visibility
 * parser, passed in); this file only turns the reading into words. */

#include "doctor.h"
#include "util/strutil.h"

void gpo_dr_check_visible(gpo_dr_report *r, const char *backend, const char *const *vars,
                          size_t n_vars, gpo_dr_visible_fn parse, void *arg, int n_devices,
                          int vendor_present)
{
    int any = 0;
    for (size_t i = 0; i < n_vars; i++) {
        const char *value = gpo_dr_env(vars[i]);
        if (!value)
            continue;
        any = 1;
        gpo_dr_visible v;
        parse(vars[i], value, arg, &v);
        gpo_dr_finding *f;
        if (v.valid == 0) {
            f = gpo_dr_add(r, backend, "visible_devices",
                           vendor_present ? GPO_DR_PROBLEM : GPO_DR_WARNING);
            gpo_dr_say(r, f, "%s='%s' hides every GPU from the driver", vars[i], value);
            if (v.total == 0)
                gpo_dr_evidence(r, f, "%s is set and empty: no device is visible", vars[i]);
            else
                gpo_dr_evidence(r, f,
                                "its first entry '%s' is %s, where the driver stops "
                                "reading the list",
                                v.bad, v.why_bad);
            gpo_dr_fix(r, f, "unset %s (or list the GPUs to use, e.g. %s=0)", vars[i], vars[i]);
        } else if (v.bad[0] || v.why_bad[0]) {
            f = gpo_dr_add(r, backend, "visible_devices", GPO_DR_WARNING);
            gpo_dr_say(r, f, "%s='%s': only the first %d of its %d entries count", vars[i], value,
                       v.valid, v.total);
            gpo_dr_evidence(r, f,
                            "entry '%s' is %s; the driver ignores it and everything "
                            "after it",
                            v.bad, v.why_bad[0] ? v.why_bad : "not a device");
            if (v.bad[0])
                gpo_dr_fix(r, f, "remove '%s' (and fix the entries after it) in %s", v.bad,
                           vars[i]);
            else
                gpo_dr_fix(r, f, "remove the empty entry (and fix the entries after it) in %s",
                           vars[i]);
        } else {
            f = gpo_dr_add(r, backend, "visible_devices", GPO_DR_INFO);
            if (n_devices >= 0)
                gpo_dr_say(r, f, "%s='%s' shows %d of the %d GPU%s the kernel lists", vars[i],
                           value, v.valid, n_devices, n_devices == 1 ? "" : "s");
            else
                gpo_dr_say(r, f, "%s='%s' restricts the driver to %d device%s", vars[i], value,
                           v.valid, v.valid == 1 ? "" : "s");
            gpo_dr_evidence(r, f, "%s=%s", vars[i], value);
        }
        gpo_dr_path(r, f, vars[i]);
    }
    if (!any) {
        gpo_sbuf names;
        gpo_sbuf_init(&names);
        for (size_t i = 0; i < n_vars; i++)
            gpo_sbuf_appendf(&names, "%s%s", i ? ", " : "", vars[i]);
        gpo_dr_finding *f = gpo_dr_add(r, backend, "visible_devices", GPO_DR_OK);
        gpo_dr_say(r, f, "no visibility variable hides devices");
        gpo_dr_evidence(r, f, "not set: %s", names.data ? names.data : "");
        if (names.failed)
            r->failed = 1;
        gpo_sbuf_free(&names);
    }
}
