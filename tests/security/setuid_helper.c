/* A program that uses the library the way a set-user-ID root tool would:
 * a context from the defaults (config file and environment), the device
 * list, a plan at the level the environment asks, the cache's path. The
 * setuid test (test_setuid.sh) runs it set-user-ID root as an ordinary
 * user with a hostile environment and config files. It prints whether the
 * process is in secure-execution mode, then the device list and the plan. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include <gpuopt/gpuopt.h>

int main(void)
{
    printf("secure=%lu\n", getauxval(AT_SECURE));
    gpuopt_context *ctx = NULL;
    gpuopt_status st = gpuopt_context_create(NULL, &ctx);
    if (st) {
        fprintf(stderr, "context: %s: %s\n", gpuopt_strerror(st), gpuopt_last_error());
        return 1;
    }
    char *json = NULL;
    if ((st = gpuopt_context_to_json(ctx, &json)) == GPUOPT_OK)
        printf("devices=%s\n", json);
    gpuopt_free(json);
    gpuopt_device *dev = NULL;
    gpuopt_plan *plan = NULL;
    if (!st)
        st = gpuopt_device_select(ctx, "cpu", &dev);
    if (!st)
        st = gpuopt_plan_create(ctx, dev, GPUOPT_LEVEL_DEFAULT, &plan);
    if (!st && (st = gpuopt_plan_to_json(plan, &json)) == GPUOPT_OK)
        printf("plan=%s\n", json);
    gpuopt_free(json);
    char *cache = NULL;
    gpuopt_status cs = gpuopt_cache_path(ctx, &cache);
    printf("cache=%s\n", cs ? gpuopt_strerror(cs) : cache);
    gpuopt_free(cache);
    if (st)
        fprintf(stderr, "%s: %s\n", gpuopt_strerror(st), gpuopt_last_error());
    gpuopt_plan_destroy(plan);
    gpuopt_context_destroy(ctx);
    return st ? 1 : 0;
}
