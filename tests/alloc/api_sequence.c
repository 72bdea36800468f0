/* A program's whole use of the public API, for the allocation-failure
 * sweep (alloc_sweep.py): a context, the device list, a selection, knob
 * overrides, plans with and without a workload, every export, the device
 * list as JSON, the diagnosis, the cache's path. Each call's result goes to
 * stdout; the first call that fails is named on stderr with its status and
 * detail, everything made so far is released, and the exit status is 1.
 * Usage: gpo_alloc_api_sequence [SYSFS_ROOT] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpuopt/gpuopt.h>

static gpuopt_context *ctx;
static gpuopt_plan *plan, *wplan;

static void finish(int rc)
{
    gpuopt_plan_destroy(wplan);
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    exit(rc);
}

static void check(gpuopt_status st, const char *call)
{
    if (st == GPUOPT_OK)
        return;
    fprintf(stderr, "%s failed: %s: %s\n", call, gpuopt_strerror(st), gpuopt_last_error());
    finish(1);
}

static void print_text(const char *what, char *text)
{
    printf("%s: %s\n", what, text);
    gpuopt_free(text);
}

static void print_plan(const gpuopt_plan *p)
{
    int32_t n = 0, requested = 0, applied = 0;
    check(gpuopt_plan_level(p, &requested, &applied), "gpuopt_plan_level");
    printf("level %d -> %d\n", (int)requested, (int)applied);
    check(gpuopt_plan_knob_count(p, &n), "gpuopt_plan_knob_count");
    for (int32_t i = 0; i < n; i++) {
        gpuopt_knob k;
        memset(&k, 0, sizeof k);
        k.struct_size = sizeof k;
        check(gpuopt_plan_knob_at(p, i, &k), "gpuopt_plan_knob_at");
        printf("knob %s = %s (tier %d, source %d, env %s): %s\n", k.name, k.value, (int)k.tier,
               (int)k.source, k.env ? k.env : "-", k.reason);
    }
    check(gpuopt_plan_warning_count(p, &n), "gpuopt_plan_warning_count");
    for (int32_t i = 0; i < n; i++) {
        const char *w = NULL;
        check(gpuopt_plan_warning_at(p, i, &w), "gpuopt_plan_warning_at");
        printf("warning %s\n", w);
    }
    char *text = NULL;
    check(gpuopt_plan_to_json(p, &text), "gpuopt_plan_to_json");
    print_text("json", text);
    check(gpuopt_plan_to_env(p, &text), "gpuopt_plan_to_env");
    print_text("env", text);
    check(gpuopt_plan_to_build_options(p, &text), "gpuopt_plan_to_build_options");
    print_text("build options", text);
}

int main(int argc, char **argv)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.backends = "cpu";
    /* A recorded tree: free memory (the batch size) is the same each run. */
    o.sysfs_root = argc > 1 ? argv[1] : NULL;
    check(gpuopt_context_create(&o, &ctx), "gpuopt_context_create");
    int32_t n = 0;
    check(gpuopt_device_count(ctx, &n), "gpuopt_device_count");
    for (int32_t i = 0; i < n; i++) {
        gpuopt_device *d = NULL;
        gpuopt_device_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        check(gpuopt_device_at(ctx, i, &d), "gpuopt_device_at");
        check(gpuopt_device_get_info(d, &info), "gpuopt_device_get_info");
        printf("device %s: %s (%s, %d units)\n", info.id, info.name, info.arch_name,
               (int)info.compute_units);
    }
    gpuopt_device *dev = NULL;
    check(gpuopt_device_select(ctx, NULL, &dev), "gpuopt_device_select");
    check(gpuopt_context_set_knob(ctx, "threads", "1"), "gpuopt_context_set_knob");
    check(gpuopt_plan_create(ctx, dev, 1, &plan), "gpuopt_plan_create");
    print_plan(plan);
    gpuopt_workload w;
    gpuopt_workload_init(&w);
    w.model_bytes = (uint64_t)1 << 30;
    w.item_bytes = (uint64_t)1 << 20;
    w.objective = GPUOPT_OBJECTIVE_THROUGHPUT;
    check(gpuopt_plan_create_for(ctx, dev, 1, &w, &wplan), "gpuopt_plan_create_for");
    print_plan(wplan);
    char *text = NULL;
    check(gpuopt_context_to_json(ctx, &text), "gpuopt_context_to_json");
    print_text("devices", text);
    check(gpuopt_context_diagnose(ctx, &text), "gpuopt_context_diagnose");
    print_text("diagnosis", text);
    check(gpuopt_cache_path(ctx, &text), "gpuopt_cache_path");
    print_text("cache", text);
    finish(0);
}
