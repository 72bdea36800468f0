/* Compiled, never run, by the header_compiles_* tests: as C99 and C11 with
 * -Wpedantic -Werror, and as C++ (-x c++, C++98 and later). gpuopt.h comes
 * first and alone, so it must bring everything it uses; every type and
 * macro is used once so the compilers see them in expressions. */
#include <gpuopt/gpuopt.h>

#if !defined(GPO_EXPECT_MAJOR) || !defined(GPO_EXPECT_MINOR) || !defined(GPO_EXPECT_PATCH)
#error "the test passes the CMake project version as GPO_EXPECT_*"
#endif
#if GPUOPT_VERSION_MAJOR != GPO_EXPECT_MAJOR || GPUOPT_VERSION_MINOR != GPO_EXPECT_MINOR ||        \
    GPUOPT_VERSION_PATCH != GPO_EXPECT_PATCH
#error "gpuopt.h's GPUOPT_VERSION_* differ from the CMake project version"
#endif
#if GPUOPT_VERSION_NUMBER != (GPO_EXPECT_MAJOR * 10000 + GPO_EXPECT_MINOR * 100 + GPO_EXPECT_PATCH)
#error "GPUOPT_VERSION_NUMBER does not follow the version macros"
#endif

static void on_log(int32_t level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

static size_t use_everything(void)
{
    gpuopt_status st = GPUOPT_ERR_INVALID_ARGUMENT;
    gpuopt_log_level lv = GPUOPT_LOG_DEBUG;
    gpuopt_backend_status bs = GPUOPT_BACKEND_AVAILABLE;
    gpuopt_device_type dt = GPUOPT_DEVICE_TYPE_GPU;
    gpuopt_feature ft = GPUOPT_FEATURE_MATRIX_UNITS;
    gpuopt_knob_type kt = GPUOPT_KNOB_BYTES;
    gpuopt_knob_source ks = GPUOPT_SOURCE_API;
    gpuopt_log_fn fn = on_log;
    gpuopt_options options;
    gpuopt_backend_info backend;
    gpuopt_device_info device;
    gpuopt_knob knob;
    gpuopt_workload workload;
    gpuopt_objective objective = GPUOPT_OBJECTIVE_LATENCY;
    gpuopt_context *ctx = 0;
    gpuopt_device *dev = 0;
    gpuopt_plan *plan = 0;
    const char *version = GPUOPT_VERSION_STRING;
    unsigned long api = GPUOPT_API_VERSION;
    int level = GPUOPT_LEVEL_DEFAULT + GPUOPT_LEVEL_MAX;
    unsigned int flags = GPUOPT_OPTION_IGNORE_ENV | GPUOPT_OPTION_IGNORE_CONFIG_FILE |
                         GPUOPT_APPLY_ENV | GPUOPT_APPLY_DEVICE;

    options.struct_size = sizeof options;
    options.log_fn = fn;
    backend.struct_size = sizeof backend;
    device.struct_size = sizeof device;
    knob.struct_size = sizeof knob;
    workload.struct_size = sizeof workload;
    return (size_t)st + (size_t)lv + (size_t)bs + (size_t)dt + (size_t)ft + (size_t)kt +
           (size_t)ks + options.struct_size + backend.struct_size + device.struct_size +
           knob.struct_size + workload.struct_size + (size_t)objective + (ctx == 0) + (dev == 0) +
           (plan == 0) + (size_t)version[0] + (size_t)api + (size_t)level + flags;
}

/* The profiler's macros, with the NULL profiler they accept. */
static int profile_sections(gpuopt_profiler *prof)
{
    gpuopt_profiler_options options;
    gpuopt_count_unit unit = GPUOPT_COUNT_BYTES;
    gpuopt_profile_format format = GPUOPT_PROFILE_SVG;
    options.struct_size = sizeof options;
    options.flags = GPUOPT_PROFILER_START_DISABLED | GPUOPT_PROFILER_NO_VENDOR_RANGES;
    options.max_sections = GPUOPT_PROFILER_DEFAULT_MAX_SECTIONS;
    GPUOPT_PROFILE_BEGIN(prof, "outer");
    {
        GPUOPT_PROFILE_SCOPE(prof, "inner");
        GPUOPT_PROFILE_COUNT(prof, GPUOPT_COUNT_ITEMS, 4u);
    }
    GPUOPT_PROFILE_END(prof, "outer");
    return (int)options.flags + (int)unit + (int)format + (GPUOPT_ERR_NESTING != 0);
}

int main(void)
{
    return use_everything() == 0 || profile_sections(0) == 0;
}
