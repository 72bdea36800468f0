/* Profiles the phases of an inference program: load_model, then for each
 * batch preprocess, inference and postprocess. Registers its buffers with
 * the memory manager, prints where the time went and what was registered,
 * and writes a Chrome trace (open it in https://ui.perfetto.dev or
 * chrome://tracing) and an SVG picture beside it.
 *
 *   profile_phases [TRACE.json]          (default: profile_phases.json)
 *
 * The work is a stand-in (a small matrix product on the CPU) so the example
 * runs anywhere in a fraction of a second; a real program would call its
 * framework in each section. With GPUOPT_PROFILE set (`gpuopt profile --
 * profile_phases`), the profiler also writes its trace there when it is
 * destroyed, without any code for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpuopt/gpuopt.h>

enum { N = 96, BATCHES = 6, BATCH = 8 };

static float weights[N * N];

static void fail(const char *what, gpuopt_status st)
{
    fprintf(stderr, "profile_phases: %s: %s: %s\n", what, gpuopt_strerror(st), gpuopt_last_error());
    exit(1);
}

static void load_model(void)
{
    for (int i = 0; i < N * N; i++)
        weights[i] = (float)((i * 7919) % 1000) / 1000.0f;
}

static void preprocess(float *batch, int b)
{
    for (int i = 0; i < BATCH * N; i++)
        batch[i] = (float)((i + b) % 17) / 17.0f;
}

static float inference(const float *in, float *out)
{
    float sum = 0;
    for (int r = 0; r < BATCH; r++)
        for (int c = 0; c < N; c++) {
            float acc = 0;
            for (int k = 0; k < N; k++)
                acc += in[r * N + k] * weights[k * N + c];
            out[r * N + c] = acc;
            sum += acc;
        }
    return sum;
}

int main(int argc, char **argv)
{
    const char *trace = argc > 1 ? argv[1] : "profile_phases.json";
    gpuopt_context *ctx = NULL;
    gpuopt_profiler *prof = NULL;
    gpuopt_plan *plan = NULL;
    gpuopt_memory *mem = NULL;
    gpuopt_status st = gpuopt_context_create(NULL, &ctx);
    if (st)
        fail("gpuopt_context_create", st);
    /* The memory manager takes its budget and workload from a plan for the
     * selected device; the plan is not needed after. */
    if ((st = gpuopt_plan_create(ctx, NULL, GPUOPT_LEVEL_DEFAULT, &plan)))
        fail("gpuopt_plan_create", st);
    st = gpuopt_memory_create(plan, &mem);
    gpuopt_plan_destroy(plan);
    if (st)
        fail("gpuopt_memory_create", st);
    /* NULL options: host time, NVTX/roctx ranges when a tool is attached,
     * and GPUOPT_PROFILE's file when it is set. */
    st = gpuopt_profiler_create(ctx, NULL, NULL, &prof);
    if (st)
        fail("gpuopt_profiler_create", st);

    /* The functions say when sections do not nest; the macros below take a
     * NULL profiler too (profiling off costs one branch). */
    if ((st = gpuopt_profiler_begin(prof, "load_model")))
        fail("begin", st);
    load_model();
    /* A real program registers what it allocates on the device, with
     * GPUOPT_PLACE_DEVICE; this one's buffers are on the host. */
    if ((st = gpuopt_memory_register(mem, "weights", GPUOPT_PLACE_HOST, sizeof weights)))
        fail("registering the weights", st);
    if ((st = gpuopt_profiler_end(prof, "load_model")))
        fail("end", st);

    static float in[BATCH * N], out[BATCH * N];
    if ((st = gpuopt_memory_register(mem, "batch_in", GPUOPT_PLACE_HOST, sizeof in)) ||
        (st = gpuopt_memory_register(mem, "batch_out", GPUOPT_PLACE_HOST, sizeof out)))
        fail("registering the batch buffers", st);
    float checksum = 0;
    for (int b = 0; b < BATCHES; b++) {
        GPUOPT_PROFILE_BEGIN(prof, "preprocess");
        GPUOPT_PROFILE_COUNT(prof, GPUOPT_COUNT_BYTES, sizeof in);
        preprocess(in, b);
        GPUOPT_PROFILE_END(prof, "preprocess");
        {
            GPUOPT_PROFILE_SCOPE(prof, "inference"); /* ends with the block */
            GPUOPT_PROFILE_COUNT(prof, GPUOPT_COUNT_ITEMS, BATCH);
            checksum += inference(in, out);
        }
        GPUOPT_PROFILE_BEGIN(prof, "postprocess");
        checksum += out[b];
        GPUOPT_PROFILE_END(prof, "postprocess");
    }

    char *table = NULL;
    if ((st = gpuopt_profiler_report(prof, GPUOPT_PROFILE_TABLE, &table)))
        fail("gpuopt_profiler_report", st);
    printf("checksum %.3f\n%s", (double)checksum, table);
    gpuopt_free(table);

    gpuopt_memory_stats ms;
    memset(&ms, 0, sizeof ms);
    ms.struct_size = sizeof ms;
    if ((st = gpuopt_memory_get_stats(mem, &ms)))
        fail("gpuopt_memory_get_stats", st);
    printf("memory: %d allocations, %llu bytes on the host (high water %llu)\n",
           (int)ms.allocations, (unsigned long long)ms.host_bytes,
           (unsigned long long)ms.host_high_water_bytes);
    gpuopt_memory_release(mem, "batch_in");
    gpuopt_memory_release(mem, "batch_out");

    char svg[4096];
    size_t len = strlen(trace);
    snprintf(svg, sizeof svg, "%.*s.svg",
             (int)(len > 5 && strcmp(trace + len - 5, ".json") == 0 ? len - 5 : len), trace);
    if ((st = gpuopt_profiler_write(prof, GPUOPT_PROFILE_TRACE, trace)))
        fail("writing the trace", st);
    if ((st = gpuopt_profiler_write(prof, GPUOPT_PROFILE_SVG, svg)))
        fail("writing the picture", st);
    printf("trace: %s\npicture: %s\n", trace, svg);

    gpuopt_profiler_destroy(prof);
    gpuopt_memory_destroy(mem);
    gpuopt_context_destroy(ctx);
    return 0;
}
