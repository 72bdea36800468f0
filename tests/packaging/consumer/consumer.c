/* A program outside the project that uses the installed libgpuopt: creates
 * a context, selects the CPU, makes a level-1 plan, and says which file the
 * library was loaded from, so the test can tell the installed copy from the
 * build tree's. */
#define _GNU_SOURCE /* dladdr */
#include <gpuopt/gpuopt.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static const char *loaded_from(void)
{
    Dl_info where;
    const char *(*fn)(void) = gpuopt_version;
    void *addr;
    /* ISO C has no function-to-object pointer conversion; copy the bits. */
    memcpy(&addr, &fn, sizeof addr);
    if (dladdr(addr, &where) && where.dli_fname && where.dli_fname[0])
        return where.dli_fname;
    return "(unknown)";
}

int main(void)
{
    gpuopt_options opt;
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    gpuopt_plan *plan = NULL;
    gpuopt_device_info info;
    int32_t knobs = 0;
    gpuopt_status st;

    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    opt.backends = "cpu";
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;

    printf("consumer: libgpuopt %s (built with %s) from %s\n", gpuopt_version(),
           GPUOPT_VERSION_STRING, loaded_from());
    st = gpuopt_context_create(&opt, &ctx);
    if (st == GPUOPT_OK)
        st = gpuopt_device_select(ctx, "cpu", &dev);
    if (st == GPUOPT_OK)
        st = gpuopt_device_get_info(dev, &info);
    if (st == GPUOPT_OK)
        st = gpuopt_plan_create(ctx, dev, 1, &plan);
    if (st == GPUOPT_OK)
        st = gpuopt_plan_knob_count(plan, &knobs);
    if (st == GPUOPT_OK)
        printf("consumer: %s planned with %d knobs\n", info.id, (int)knobs);
    else
        fprintf(stderr, "consumer: %s: %s\n", gpuopt_status_name(st), gpuopt_last_error());
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    return st == GPUOPT_OK ? 0 : 1;
}
