/* Lists the compute devices libgpuopt finds and prints the level-1 plan of
 * the one it selects.
 *
 *   cc list_devices.c $(pkg-config --cflags --libs gpuopt) -o list_devices
 *   ./list_devices            # GPUOPT_DEVICE / GPUOPT_BACKEND steer it
 */
#include <gpuopt/gpuopt.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Prints what failed, in the library's words, and passes the status on. */
static gpuopt_status report(const char *what, gpuopt_status st)
{
    if (st != GPUOPT_OK)
        fprintf(stderr, "list_devices: %s: %s (%s)\n", what, gpuopt_strerror(st),
                gpuopt_last_error());
    return st;
}

static const char *type_name(int32_t type)
{
    switch (type) {
    case GPUOPT_DEVICE_TYPE_CPU: return "cpu";
    case GPUOPT_DEVICE_TYPE_GPU: return "gpu";
    case GPUOPT_DEVICE_TYPE_ACCELERATOR: return "accelerator";
    default: return "other";
    }
}

static const char *source_name(int32_t source)
{
    static const char *const names[] = {"default", "detected", "benchmark", "cache",
                                        "config",  "env",      "api"};
    return source >= 0 && source < (int32_t)(sizeof names / sizeof names[0]) ? names[source] : "?";
}

static gpuopt_status print_devices(gpuopt_context *ctx, const gpuopt_device *selected)
{
    int32_t count = 0;
    gpuopt_status st = report("counting devices", gpuopt_device_count(ctx, &count));
    if (st != GPUOPT_OK)
        return st;
    printf("%d device(s):\n", (int)count);
    for (int32_t i = 0; i < count; i++) {
        gpuopt_device *dev = NULL;
        gpuopt_device_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        st = report("reading a device", gpuopt_device_at(ctx, i, &dev));
        if (st == GPUOPT_OK)
            st = report("reading a device", gpuopt_device_get_info(dev, &info));
        if (st != GPUOPT_OK)
            return st;
        printf("%c %-10s %-4s %s", dev == selected ? '*' : ' ', info.id, type_name(info.type),
               info.name);
        if (info.arch_family[0] || info.arch_name[0])
            printf(" [%s%s%s]", info.arch_family,
                   info.arch_family[0] && info.arch_name[0] ? " " : "", info.arch_name);
        if (info.compute_units > 0)
            printf(", %d compute units", (int)info.compute_units);
        if (info.memory_bytes > 0)
            printf(", %" PRIu64 " MiB", info.memory_bytes >> 20);
        printf("\n");
    }
    return GPUOPT_OK;
}

static gpuopt_status print_plan(const gpuopt_plan *plan)
{
    int32_t requested = 0, applied = 0, count = 0, warnings = 0;
    gpuopt_status st = report("reading the plan", gpuopt_plan_level(plan, &requested, &applied));
    if (st == GPUOPT_OK)
        st = report("reading the plan", gpuopt_plan_knob_count(plan, &count));
    if (st == GPUOPT_OK)
        st = report("reading the plan", gpuopt_plan_warning_count(plan, &warnings));
    if (st != GPUOPT_OK)
        return st;
    printf("plan: level %d requested, level %d applied, %d knob(s)\n", (int)requested, (int)applied,
           (int)count);
    for (int32_t i = 0; i < count; i++) {
        gpuopt_knob knob;
        memset(&knob, 0, sizeof knob);
        knob.struct_size = sizeof knob;
        st = report("reading a knob", gpuopt_plan_knob_at(plan, i, &knob));
        if (st != GPUOPT_OK)
            return st;
        printf("  %-24s = %-16s tier %d, %s: %s\n", knob.name, knob.value, (int)knob.tier,
               source_name(knob.source), knob.reason);
    }
    for (int32_t i = 0; i < warnings; i++) {
        const char *text = NULL;
        st = report("reading a warning", gpuopt_plan_warning_at(plan, i, &text));
        if (st != GPUOPT_OK)
            return st;
        printf("  warning: %s\n", text);
    }
    return GPUOPT_OK;
}

int main(void)
{
    gpuopt_context *ctx = NULL;
    gpuopt_device *selected = NULL;
    gpuopt_plan *plan = NULL;
    gpuopt_status st;

    printf("libgpuopt %s\n", gpuopt_version());
    st = report("creating the context", gpuopt_context_create(NULL, &ctx));
    if (st != GPUOPT_OK)
        goto out;
    /* NULL: the context's policy, GPUOPT_DEVICE or "auto". */
    st = report("selecting a device", gpuopt_device_select(ctx, NULL, &selected));
    if (st != GPUOPT_OK)
        goto out;
    st = print_devices(ctx, selected);
    if (st != GPUOPT_OK)
        goto out;
    st = report("planning", gpuopt_plan_create(ctx, selected, 1, &plan));
    if (st != GPUOPT_OK)
        goto out;
    st = print_plan(plan);

out:
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    return st == GPUOPT_OK ? 0 : 1;
}
