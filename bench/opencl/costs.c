/* Where the OpenCL backend's time goes, in one process: dlopen + symbols +
 * the first clGetPlatformIDs (driver start-up), reading every fact of every
 * device (enumerate), and the preferred-multiple probe kernel that devices
 * older than OpenCL 3.0 need (run here on every device, 3.0 or not, to
 * price it). Prints "name ms" lines; median of RUNS probes. */
#include <stdio.h>
#include <stdlib.h>

#include "backend_env.h"
#include "backend.h"
#include "config.h"
#include "cl_device.h"
#include "util/strutil.h"

extern const gpo_backend gpo_backend_opencl;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1 || runs > 1000)
        return 2;
    static gpo_config cfg;
    gpo_fs_init(&cfg.fs, NULL);
    gpo_logger log = {GPUOPT_LOG_ERROR, NULL, NULL};
    gpo_backend_env env = {&cfg, &log};
    void *state = NULL;
    gpo_backend_report rep;
    gpo_device_list list = {0};
    uint64_t t0 = gpo_now_ns();
    if (gpo_backend_opencl.load(&env, &state, &rep) != GPUOPT_OK) {
        fprintf(stderr, "%s\n", rep.reason);
        return 1;
    }
    uint64_t t1 = gpo_now_ns();
    if (gpo_backend_opencl.enumerate(state, &env, &list) != GPUOPT_OK || list.n == 0)
        return 1;
    uint64_t t2 = gpo_now_ns();
    printf("load %.2f\n", (double)(t1 - t0) / 1e6);
    printf("first_clGetPlatformIDs %.2f\n", (double)((ocl_state *)state)->platforms_ns / 1e6);
    printf("enumerate_%zu_devices %.2f\n", list.n, (double)(t2 - t1) / 1e6);
    double *ms = calloc((size_t)runs, sizeof *ms);
    ocl_facts *f = &((ocl_dev_priv *)list.items[0]->routes[0].priv)->facts;
    for (int i = 0; i < runs; i++) {
        uint64_t a = gpo_now_ns();
        if (gpo_ocl_probe_preferred_multiple(&((ocl_state *)state)->api, f) != GPUOPT_OK)
            return 1;
        ms[i] = (double)(gpo_now_ns() - a) / 1e6;
    }
    printf("probe_first %.2f\n", ms[0]);
    qsort(ms, (size_t)runs, sizeof *ms, cmp);
    printf("probe_median %.2f\n", ms[runs / 2]);
    free(ms);
    gpo_device_list_free(&list);
    gpo_backend_opencl.unload(state);
    return 0;
}
