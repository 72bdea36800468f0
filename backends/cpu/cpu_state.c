/* The CPU backend's loaded state (see cpu_state.h): no vendor library, so
 * load reads the host's facts (cpuid, procfs, sysfs, cgroups) and the
 * kernel's release stands for the driver version. */
#include <assert.h>
#include <stdlib.h>
#include <sys/utsname.h>

#include "cpu/cpu_state.h"
#include "cpu/memory.h"
#include "util/strutil.h"

typedef struct cpu_state {
    gpo_fs fs;
    gpo_cpu_facts facts;
} cpu_state;

gpuopt_status gpo_cpu_state_load(const gpo_backend_env *env, void **state,
                                 gpo_backend_report *report)
{
    assert(state && report);
    *state = NULL;
    /* gpo_cpu_facts_read sets every fact: no need to zero 20 KiB first. */
    cpu_state *s = malloc(sizeof *s);
    if (!s)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory loading the CPU backend");
    s->fs = *gpo_env_fs(env);
    gpuopt_status st = gpo_cpu_facts_read(&s->fs, gpo_env_log(env), &s->facts);
    if (st) {
        free(s);
        return st;
    }
    /* No vendor library; the kernel is the CPU's "driver". */
    struct utsname u;
    if (!gpo_fs_is_recorded(&s->fs) && uname(&u) == 0)
        gpo_snprintf(report->driver_version, sizeof report->driver_version, "Linux %s", u.release);
    if (s->facts.notes[0])
        gpo_strlcpy(report->reason, s->facts.notes, sizeof report->reason);
    *state = s;
    return GPUOPT_OK;
}

void gpo_cpu_state_unload(void *state)
{
    free(state);
}

const gpo_cpu_facts *gpo_cpu_state_facts(const void *state)
{
    assert(state);
    return &((const cpu_state *)state)->facts;
}

int gpo_cpu_state_recorded(const void *state)
{
    assert(state);
    return gpo_fs_is_recorded(&((const cpu_state *)state)->fs);
}

gpuopt_status gpo_cpu_state_memory_live(void *state, const gpo_route *route, uint32_t flags,
                                        gpo_memory_reading *out)
{
    (void)route;
    (void)flags; /* host memory needs no context */
    assert(state && out);
    const cpu_state *s = state;
    return gpo_cpu_memory_live(&s->fs, &s->facts, gpo_now_ns(), out);
}
