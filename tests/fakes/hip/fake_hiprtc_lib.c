/* The standalone hiprtc double (libhiprtc.so.6 / .7): fake_hiprtc.c with
 * its own fault state and test controls. ROCm 7 ships hiprtc only this way
 * (HIP CHANGELOG, HIP 7.0). */
#include "fake_hip.h"

int fake_hiprtc_live(void);
void fake_hiprtc_reset(void);

void fake_on_first_use(void)
{
    fake_faults_load();
}

/* Re-reads GPUOPT_FAKE_HIP_FAIL and zeroes the counters. */
EXPORT void gpuoptFakeHiprtcReset(void)
{
    fake_faults_load();
    fake_hiprtc_reset();
}

EXPORT int gpuoptFakeHiprtcFaultsFired(void)
{
    return fake_faults_fired();
}

/* Programs created and not destroyed. */
EXPORT int gpuoptFakeHiprtcLive(void)
{
    return fake_hiprtc_live();
}
