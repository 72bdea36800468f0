/* Tunes an OpenCL C kernel through the C API (gpuopt/tune.h): the
 * work-items per group and the elements per work-item of y = 2 * x,
 * every candidate checked against a reference kernel, the answer cached.
 *
 *   cc tune_scale.c $(pkg-config --cflags --libs gpuopt) -o tune_scale
 *   ./tune_scale          # tunes (a second run answers from the cache)
 *
 * It needs an OpenCL device (PoCL runs it on the CPU); without one it says
 * so and exits 0. */
#include <stdio.h>
#include <string.h>

#include <gpuopt/gpuopt.h>

static const char *const kernel =
    "__kernel void scale(__global const float *x, __global float *y, int n)\n"
    "{\n"
    "    int first = get_global_id(0) * WPT;\n"
    "    for (int i = first; i < first + WPT && i < n; i++)\n"
    "        y[i] = 2.0f * x[i];\n"
    "}\n";

static const char *const reference =
    "__kernel void reference(__global const float *x, __global float *y, int n)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        y[i] = 2.0f * x[i];\n"
    "}\n";

static int fail(const char *what, gpuopt_status st)
{
    fprintf(stderr, "tune_scale: %s: %s: %s\n", what, gpuopt_strerror(st), gpuopt_last_error());
    return 1;
}

int main(void)
{
    gpuopt_context *ctx = NULL;
    gpuopt_device *dev = NULL;
    gpuopt_space *space = NULL;
    gpuopt_tuner *tuner = NULL;
    gpuopt_result *result = NULL;
    int rc = 0;
    gpuopt_status st = gpuopt_context_create(NULL, &ctx);
    if (st)
        return fail("context", st);
    if ((st = gpuopt_device_select(ctx, "opencl", &dev))) {
        printf("no OpenCL device here (%s): nothing to tune\n", gpuopt_last_error());
        goto out;
    }

    /* The space: two parameters, a problem size, a constraint. */
    static const int64_t wpt[] = {1, 2, 4, 8}, wg[] = {16, 64, 256};
    if ((st = gpuopt_space_create(&space)) || (st = gpuopt_space_add_int(space, "WPT", wpt, 4)) ||
        (st = gpuopt_space_add_int(space, "WG", wg, 3)) ||
        (st = gpuopt_space_set_size(space, "N", 1 << 16)) ||
        (st = gpuopt_space_add_constraint(space, "N / WPT >= WG"))) {
        rc = fail("space", st);
        goto out;
    }
    if ((st = gpuopt_tuner_create(ctx, dev, space, &tuner))) {
        rc = fail("tuner", st);
        goto out;
    }

    /* What is tuned: descriptors, zeroed but for struct_size. */
    gpuopt_kernel_desc k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.source = kernel;
    k.entry = "scale";
    k.language = GPUOPT_LANG_OPENCL_C;
    k.global[0] = "ceildiv(N, WPT)";
    k.local[0] = "WG";
    gpuopt_buffer_desc x, y;
    memset(&x, 0, sizeof x);
    x.struct_size = sizeof x;
    x.type = GPUOPT_ELEM_F32;
    x.count = "N";
    y = x;
    x.init = GPUOPT_INIT_RANDOM;
    y.init = GPUOPT_INIT_ZEROS;
    y.is_output = 1;
    gpuopt_scalar_desc n;
    memset(&n, 0, sizeof n);
    n.struct_size = sizeof n;
    n.type = GPUOPT_ELEM_I32;
    n.expression = "N";
    gpuopt_reference_desc ref;
    memset(&ref, 0, sizeof ref);
    ref.struct_size = sizeof ref;
    ref.source = reference;
    ref.entry = "reference";
    ref.global[0] = "N";
    if ((st = gpuopt_tuner_set_kernel(tuner, &k)) || (st = gpuopt_tuner_set_buffer(tuner, 0, &x)) ||
        (st = gpuopt_tuner_set_buffer(tuner, 1, &y)) ||
        (st = gpuopt_tuner_set_scalar(tuner, 2, &n)) ||
        (st = gpuopt_tuner_set_reference_kernel(tuner, &ref))) {
        rc = fail("subject", st);
        goto out;
    }

    /* How: read the settings, change some, write them back. */
    gpuopt_tuner_settings set;
    memset(&set, 0, sizeof set);
    set.struct_size = sizeof set;
    st = gpuopt_tuner_get_settings(tuner, &set);
    set.repeat_ms = 10; /* a small example: short timing */
    set.workload_key = "examples/tuning/tune_scale.c";
    if (st || (st = gpuopt_tuner_set_settings(tuner, &set))) {
        rc = fail("settings", st);
        goto out;
    }

    if ((st = gpuopt_tuner_run(tuner, &result))) {
        rc = fail("run", st);
        goto out;
    }
    int32_t origin = GPUOPT_ORIGIN_TUNED, count = 0;
    gpuopt_result_get_origin(result, &origin);
    gpuopt_result_count(result, &count);
    gpuopt_candidate best;
    memset(&best, 0, sizeof best);
    best.struct_size = sizeof best;
    if ((st = gpuopt_result_best(result, &best))) {
        /* An answer too: every candidate failed; each says why. */
        printf("no valid candidate among %d: %s\n", (int)count, gpuopt_last_error());
        rc = 1;
        goto out;
    }
    char *text = NULL;
    gpuopt_point_to_string(best.point, &text);
    printf("best %s: %.0f ns median of %d runs, %s (%d candidates)\n", text ? text : "?",
           best.median_ns, (int)best.runs,
           origin == GPUOPT_ORIGIN_TUNED ? "tuned now" : "from the cache", (int)count);
    gpuopt_free(text);
out:
    gpuopt_result_destroy(result);
    gpuopt_tuner_destroy(tuner);
    gpuopt_space_destroy(space);
    gpuopt_context_destroy(ctx);
    return rc;
}
