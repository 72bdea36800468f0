/* A test double of NVRTC's libnvrtc.so: only nvrtcVersion, the call the
 * doctor makes to learn which CUDA version a runtime compiler targets.
 * GPUOPT_FAKE_NVRTC_VERSION ("12.4", default "13.0") sets its answer, so
 * tests can put a runtime newer than the test double's driver. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((visibility("default"))) int nvrtcVersion(int *major, int *minor)
{
    const char *v = getenv("GPUOPT_FAKE_NVRTC_VERSION");
    int a = 13, b = 0;
    if (v && *v && sscanf(v, "%d.%d", &a, &b) != 2)
        return 3; /* NVRTC_ERROR_INVALID_INPUT */
    if (!major || !minor)
        return 3;
    *major = a;
    *minor = b;
    return 0; /* NVRTC_SUCCESS */
}
