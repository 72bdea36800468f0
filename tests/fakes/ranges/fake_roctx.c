/* A test double of the roctx library (rocprofiler-sdk's
 * librocprofiler-sdk-roctx, roctracer's libroctx64): the two calls the
 * profiler makes, as declared in rocprofiler-sdk-roctx/roctx.h, recorded
 * with range_log.h (GPUOPT_FAKE_RANGES_LOG=1). Tests read the record
 * through gpo_fake_roctx_log. */
#include "range_log.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int roctxRangePushA(const char *message)
{
    return range_log_push(message);
}
EXPORT int roctxRangePop(void)
{
    return range_log_pop();
}

EXPORT size_t gpo_fake_roctx_log(char *out, size_t cap)
{
    return range_log_read(out, cap);
}
EXPORT void gpo_fake_roctx_reset(void)
{
    range_log_reset();
}
