/* Launch-to-completion of an empty kernel on the first OpenCL device:
 * through the backend's runtime ops (ops->launch with device timing) beside
 * the same calls made directly (clEnqueueNDRangeKernel with an event,
 * clWaitForEvents, two profiling queries, clReleaseEvent), on the same
 * device, interleaved in blocks so drift hits both alike.
 *
 *   bench_opencl_launch [BLOCKS [LAUNCHES_PER_BLOCK]]
 *
 * Prints one line per path: name median_us p10_us p90_us (per launch, over
 * the blocks' means), then the ratio of the medians. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_env.h"
#include "backend.h"
#include "config.h"
#include "cl_device.h"
#include "util/strutil.h"

extern const gpo_backend gpo_backend_opencl;

static const char *src = "__kernel void empty(void) {}";

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void stats(const char *name, double *v, int n, double *median)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    *median = v[n / 2];
    printf("%s %.2f %.2f %.2f\n", name, v[n / 2], v[n / 10], v[n * 9 / 10]);
}

int main(int argc, char **argv)
{
    int blocks = argc > 1 ? atoi(argv[1]) : 40;
    int per = argc > 2 ? atoi(argv[2]) : 250;
    if (blocks < 1 || per < 1)
        return 2;
    static gpo_config cfg;
    gpo_fs_init(&cfg.fs, NULL);
    gpo_logger log = {GPUOPT_LOG_ERROR, NULL, NULL};
    gpo_backend_env env = {&cfg, &log};
    void *state = NULL;
    gpo_backend_report rep;
    gpo_device_list list = {0};
    if (gpo_backend_opencl.load(&env, &state, &rep) != GPUOPT_OK ||
        gpo_backend_opencl.enumerate(state, &env, &list) != GPUOPT_OK || list.n == 0) {
        fprintf(stderr, "no OpenCL device: %s %s\n", rep.reason, gpo_detail_get());
        return 1;
    }
    gpuopt_device *dev = list.items[0];
    dev->routes[0].backend_state = state;
    const ocl_state *st = state;
    const ocl_api *api = &st->api;
    const ocl_facts *f = &((ocl_dev_priv *)dev->routes[0].priv)->facts;

    /* Through the ops. */
    const gpo_runtime_ops *ops = gpo_backend_opencl.runtime;
    gpo_rt *rt = NULL;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = NULL;
    if (ops->open(state, &dev->routes[0], &rt) || ops->program_build(rt, src, "", &prog, NULL) ||
        ops->kernel_create(rt, prog, "empty", &k)) {
        fprintf(stderr, "ops: %s\n", gpo_detail_get());
        return 1;
    }

    /* Raw: the same objects made directly. */
    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)f->platform, 0};
    cl_context ctx = api->CreateContext(props, 1, &f->device, NULL, NULL, &err);
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q =
        api->CreateCommandQueueWithProperties
            ? api->CreateCommandQueueWithProperties(ctx, f->device, qp, &err)
            : api->CreateCommandQueue(ctx, f->device, CL_QUEUE_PROFILING_ENABLE, &err);
    cl_program rp = api->CreateProgramWithSource(ctx, 1, &src, NULL, &err);
    api->BuildProgram(rp, 1, &f->device, "", NULL, NULL);
    cl_kernel rk = api->CreateKernel(rp, "empty", &err);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "raw: %s\n", gpo_ocl_error_name(err));
        return 1;
    }

    size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
    double *t_ops = calloc((size_t)blocks, sizeof *t_ops);
    double *t_raw = calloc((size_t)blocks, sizeof *t_raw);
    double sink = 0;
    for (int w = 0; w < 50; w++) { /* warm both paths */
        double ns;
        ops->launch(rt, k, 1, global, local, &ns);
        cl_event ev;
        api->EnqueueNDRangeKernel(q, rk, 1, NULL, global, local, 0, NULL, &ev);
        api->WaitForEvents(1, &ev);
        api->ReleaseEvent(ev);
    }
    for (int b = 0; b < blocks; b++) {
        for (int pass = 0; pass < 2; pass++) {
            int ops_first = (b & 1) == 0;
            int use_ops = pass == 0 ? ops_first : !ops_first;
            uint64_t t0 = gpo_now_ns();
            for (int i = 0; i < per; i++) {
                if (use_ops) {
                    double ns = 0;
                    if (ops->launch(rt, k, 1, global, local, &ns) != GPUOPT_OK)
                        return 1;
                    sink += ns;
                } else {
                    cl_event ev = NULL;
                    cl_ulong s = 0, e = 0;
                    if (api->EnqueueNDRangeKernel(q, rk, 1, NULL, global, local, 0, NULL, &ev) ||
                        api->WaitForEvents(1, &ev) ||
                        api->GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s,
                                                   NULL) ||
                        api->GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e,
                                                   NULL))
                        return 1;
                    api->ReleaseEvent(ev);
                    sink += (double)(e - s);
                }
            }
            double us = (double)(gpo_now_ns() - t0) / 1e3 / per;
            (use_ops ? t_ops : t_raw)[b] = us;
        }
    }
    double m_ops, m_raw;
    stats("ops_launch", t_ops, blocks, &m_ops);
    stats("raw_opencl", t_raw, blocks, &m_raw);
    printf("ratio %.3f\n", m_ops / m_raw);
    fprintf(stderr, "(device time sum %.0f ns, device: %s)\n", sink, dev->info.name);

    api->ReleaseKernel(rk);
    api->ReleaseProgram(rp);
    api->ReleaseCommandQueue(q);
    api->ReleaseContext(ctx);
    ops->close(rt);
    gpo_device_list_free(&list);
    gpo_backend_opencl.unload(state);
    free(t_ops);
    free(t_raw);
    return 0;
}
