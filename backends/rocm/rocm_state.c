/* The loaded ROCm backend's state and what the rules and the runtime ops
 * ask of it (rocm_state.h). */
#include "rocm_state.h"

#include <assert.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/detail.h"
#include "util/strutil.h"

gpuopt_status gpo_rocm_state_new(const gpo_fs *fs, const char *hiprtc_path, gpo_rocm_state **out)
{
    assert(fs && out);
    gpo_rocm_state *st = calloc(1, sizeof *st);
    *out = NULL;
    if (!st)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory loading the ROCm backend");
    gpo_dl_once_init(&st->rtc_once);
    st->fs = *fs;
    st->pid = getpid();
    if (hiprtc_path)
        gpo_strlcpy(st->hiprtc_path, hiprtc_path, sizeof st->hiprtc_path);
    *out = st;
    return GPUOPT_OK;
}

void gpo_rocm_state_free(gpo_rocm_state *st)
{
    if (!st)
        return;
    gpo_dl_once_destroy(&st->rtc_once);
    gpo_kfd_free(&st->kfd);
    free(st->order);
    free(st);
}

gpuopt_status gpo_rocm_check_fork(const gpo_rocm_state *st, const char *what)
{
    pid_t now = getpid();
    if (st->hip_ok && st->pid != now)
        return gpo_fail(GPUOPT_ERR_FORKED,
                        "rocm %s: the HIP runtime was initialised in process %ld and this is a "
                        "fork()ed child (%ld), where the parent's runtime state is stale: "
                        "create a new context in a process that has not inherited HIP (spawn "
                        "instead of fork)",
                        what, (long)st->pid, (long)now);
    return GPUOPT_OK;
}

static gpuopt_status open_hiprtc(void *arg)
{
    gpo_rocm_state *st = arg;
    return gpo_hiprtc_open(&st->rtc, st->hiprtc_path[0] ? st->hiprtc_path : NULL, st->hip.handle,
                           st->hip.abi ? st->hip.abi->major : 0);
}

gpuopt_status gpo_rocm_hiprtc(gpo_rocm_state *st, const gpo_hiprtc **rtc)
{
    gpuopt_status status = gpo_dl_once_run(&st->rtc_once, open_hiprtc, st);
    if (status == GPUOPT_OK)
        *rtc = &st->rtc;
    return status;
}
