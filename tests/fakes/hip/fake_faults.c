/* Fault injection and call counting for the HIP test doubles (fake_hip.h).
 *
 * GPUOPT_FAKE_HIP_FAIL = "call:N:error[,call:N:error...]": the N-th use
 * (1-based; "*" = every use) of `call` fails with `error`, a hipError_t or
 * hiprtcResult name or a number. Calls that return text return NULL
 * instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hip.h"

/* hipError_t values (the same in every major) with the runtime's words. */
static const struct {
    const char *name;
    int value;
    const char *text;
} errors[] = {
    {"hipSuccess", 0, "no error"},
    {"hipErrorInvalidValue", 1, "invalid argument"},
    {"hipErrorOutOfMemory", 2, "out of memory"},
    {"hipErrorNotInitialized", 3, "initialization error"},
    {"hipErrorInvalidConfiguration", 9, "invalid configuration argument"},
    {"hipErrorInsufficientDriver", 35, "driver version is insufficient for runtime version"},
    {"hipErrorInvalidDeviceFunction", 98, "invalid device function"},
    {"hipErrorNoDevice", 100, "no ROCm-capable device is detected"},
    {"hipErrorInvalidDevice", 101, "invalid device ordinal"},
    {"hipErrorInvalidImage", 200, "device kernel image is invalid"},
    {"hipErrorNoBinaryForGpu", 209, "no kernel image is available for execution on the device"},
    {"hipErrorInvalidHandle", 400, "invalid resource handle"},
    {"hipErrorNotFound", 500, "named symbol not found"},
    {"hipErrorNotReady", 600, "device not ready"},
    {"hipErrorIllegalAddress", 700, "an illegal memory access was encountered"},
    {"hipErrorLaunchOutOfResources", 701, "too many resources requested for launch"},
    {"hipErrorLaunchTimeOut", 702, "the launch timed out and was terminated"},
    {"hipErrorAssert", 710, "device-side assert triggered"},
    {"hipErrorLaunchFailure", 719, "unspecified launch failure"},
    {"hipErrorNotSupported", 801, "operation not supported"},
    {"hipErrorUnknown", 999, "unknown error"},
};
#define N_ERRORS (sizeof errors / sizeof errors[0])

/* hiprtcResult names, for faults in the hiprtc doubles. */
static const char *const rtc_names[] = {"HIPRTC_SUCCESS",
                                        "HIPRTC_ERROR_OUT_OF_MEMORY",
                                        "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE",
                                        "HIPRTC_ERROR_INVALID_INPUT",
                                        "HIPRTC_ERROR_INVALID_PROGRAM",
                                        "HIPRTC_ERROR_INVALID_OPTION",
                                        "HIPRTC_ERROR_COMPILATION",
                                        "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
                                        "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
                                        "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
                                        "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
                                        "HIPRTC_ERROR_INTERNAL_ERROR"};

typedef struct fault {
    char call[64];
    long nth; /* 0 = every use */
    int error;
} fault;

static int loaded;
static fault faults[16];
static int n_faults;
static int fired;
static struct {
    char call[64];
    long uses;
} counters[128];
static int n_counters;

const char *fake_error_name(int value)
{
    for (size_t i = 0; i < N_ERRORS; i++)
        if (errors[i].value == value)
            return errors[i].name;
    return NULL;
}

const char *fake_error_text(int value)
{
    for (size_t i = 0; i < N_ERRORS; i++)
        if (errors[i].value == value)
            return errors[i].text;
    return NULL;
}

static int error_value(const char *text)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text && !*end)
        return (int)v;
    for (size_t i = 0; i < N_ERRORS; i++)
        if (strcmp(errors[i].name, text) == 0)
            return errors[i].value;
    for (size_t i = 0; i < sizeof rtc_names / sizeof rtc_names[0]; i++)
        if (strcmp(rtc_names[i], text) == 0)
            return (int)i;
    return 999;
}

void fake_faults_load(void)
{
    const char *spec = getenv("GPUOPT_FAKE_HIP_FAIL");
    loaded = 1;
    n_faults = fired = n_counters = 0;
    memset(counters, 0, sizeof counters);
    if (!spec)
        return;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p && n_faults < 16;
         p = strtok_r(NULL, ",", &save)) {
        char *c1 = strchr(p, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c1 || !c2)
            continue;
        *c1 = *c2 = '\0';
        fault *f = &faults[n_faults++];
        snprintf(f->call, sizeof f->call, "%s", p);
        f->nth = strcmp(c1 + 1, "*") == 0 ? 0 : strtol(c1 + 1, NULL, 10);
        f->error = error_value(c2 + 1);
    }
}

int fake_enter(const char *call)
{
    int i;
    if (!loaded)
        fake_on_first_use();
    for (i = 0; i < n_counters; i++)
        if (strcmp(counters[i].call, call) == 0)
            break;
    if (i == n_counters && n_counters < 128)
        snprintf(counters[n_counters++].call, sizeof counters[0].call, "%s", call);
    long use = i < 128 ? ++counters[i].uses : 0;
    for (int k = 0; k < n_faults; k++)
        if (strcmp(faults[k].call, call) == 0 && (faults[k].nth == 0 || faults[k].nth == use)) {
            fired++;
            return faults[k].error;
        }
    return 0;
}

int fake_faults_fired(void)
{
    return fired;
}

long fake_uses(const char *call)
{
    for (int i = 0; i < n_counters; i++)
        if (strcmp(counters[i].call, call) == 0)
            return counters[i].uses;
    return 0;
}
