/* Applying a plan to the running process: environment knobs (never
 * overwriting what the user set) and the device settings a backend owns. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "plan.h"
#include "util/cpuset.h"
#include "util/strutil.h"

/* Binds the calling thread to cpu.affinity (gpuopt.h, GPUOPT_APPLY_AFFINITY). */
static gpuopt_status apply_affinity(const struct gpuopt_plan *p, gpo_sbuf *report)
{
    const char *cpus = gpo_knob_get_text(p, "cpu.affinity");
    if (!cpus) {
        gpo_sbuf_appendf(report, "not bound: the plan has no cpu.affinity (%s has no NUMA facts)\n",
                         p->device->info.id);
        return GPUOPT_OK;
    }
    unsigned char set[GPO_CPUSET_BYTES];
    if (gpo_parse_cpulist(cpus, set, GPO_CPUSET_BITS) < 1)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cpu.affinity '%s' is not a CPU list", cpus);
    cpu_set_t *cs = CPU_ALLOC(GPO_CPUSET_BITS);
    if (!cs)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory binding to CPUs %s", cpus);
    size_t size = CPU_ALLOC_SIZE(GPO_CPUSET_BITS);
    CPU_ZERO_S(size, cs);
    for (size_t c = 0; c < GPO_CPUSET_BITS; c++)
        if ((set[c / 8] >> (c % 8)) & 1)
            CPU_SET_S(c, size, cs);
    int rc = sched_setaffinity(0, size, cs);
    int err = errno;
    CPU_FREE(cs);
    if (rc != 0)
        return gpo_fail(
            GPUOPT_ERR_IO,
            "sched_setaffinity refused CPUs %s (cpu.affinity): %s; nothing was applied", cpus,
            err == EINVAL ? "none of them is online here or allowed by the cpuset" : strerror(err));
    gpo_sbuf_appendf(report, "bound to CPUs %s (cpu.affinity)\n", cpus);
    return GPUOPT_OK;
}

/* `refused` collects the variables setenv() refused, for the detail: a
 * failed apply hands back no report (gpuopt.h: failure means no output). */
static void apply_env(const struct gpuopt_plan *p, gpo_sbuf *report, gpo_sbuf *refused)
{
    for (size_t i = 0; i < p->n_knobs; i++) {
        const gpo_knob *k = &p->knobs[i];
        if (!k->env)
            continue;
        const char *have = getenv(k->env);
        if (have) {
            gpo_sbuf_appendf(report, "kept %s=%s (already set; the plan had %s)\n", k->env, have,
                             k->text);
            continue;
        }
        if (setenv(k->env, k->text, 0) != 0) {
            gpo_sbuf_appendf(refused, "%s%s=%s", refused->len ? ", " : "", k->env, k->text);
            continue;
        }
        gpo_sbuf_appendf(report, "set %s=%s\n", k->env, k->text);
    }
}

GPUOPT_API gpuopt_status gpuopt_plan_apply(const gpuopt_plan *plan, uint32_t flags, char **report)
{
    gpo_detail_clear();
    if (report)
        *report = NULL;
    if (!plan)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "plan is NULL");
    if (flags & ~(GPUOPT_APPLY_ENV | GPUOPT_APPLY_DEVICE | GPUOPT_APPLY_AFFINITY))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "flags 0x%x: accepted GPUOPT_APPLY_ENV (0x1) | GPUOPT_APPLY_DEVICE (0x2) | "
                        "GPUOPT_APPLY_AFFINITY (0x4)",
                        (unsigned)flags);
    gpo_sbuf out, refused;
    gpo_sbuf_init(&out);
    gpo_sbuf_init(&refused);
    gpo_sbuf_append(&out, "");
    gpuopt_status st = GPUOPT_OK;
    if (flags & GPUOPT_APPLY_AFFINITY) {
        st = apply_affinity(plan, &out);
        if (st) {
            gpo_sbuf_free(&out);
            gpo_sbuf_free(&refused);
            return st;
        }
    }
    if (flags & GPUOPT_APPLY_ENV)
        apply_env(plan, &out, &refused);
    if (flags & GPUOPT_APPLY_DEVICE) {
        const gpo_route *r = &plan->device->routes[0];
        if (r->backend && r->backend->apply_device) {
            st = r->backend->apply_device(r->backend_state, r, plan, &out);
        } else {
            gpo_sbuf_appendf(&out, "no device settings: the %s backend owns none\n",
                             plan->device->info.backend);
        }
    }
    if (!st && (refused.len || refused.failed))
        st = gpo_fail(GPUOPT_ERR_IO, "setenv() refused %s; the plan's other variables were set",
                      refused.failed ? "some variables" : refused.data);
    gpo_sbuf_free(&refused);
    if (st) {
        gpo_sbuf_free(&out);
        return st;
    }
    char *text = gpo_sbuf_take(&out);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing the apply report");
    if (report)
        *report = text;
    else
        free(text);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_plan_to_build_options(const gpuopt_plan *plan, char **options)
{
    GPO_ENTRY_OUT("", plan, "plan", options, NULL);
    const char *v = gpo_knob_get_text(plan, "opencl.build_options");
    *options = gpo_strdup(v ? v : "");
    if (!*options)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    return GPUOPT_OK;
}
