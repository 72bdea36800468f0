/* examples/tuning/sgemm.cu builds through the backend's NVRTC path for
 * every legal combination of a small parameter subset (the example's
 * legality rules, its header comment), without a single warning, and an
 * illegal one is refused by the kernel's own checks. One configuration
 * then goes through the runtime ops into the libcuda test double: it
 * loads, its parameters are set, and the launch says that running it
 * needs a GPU. Exits 77 (skipped) without NVRTC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_backend.h"
#include "cuda/cuda_load.h"
#include "cuda_test_util.h"
#include "util/strutil.h"

#define NO_KERNEL_DRIVER GPO_FIXTURES_DIR "/nvidia/absent"

static gpo_config cfg;
static gpo_nvrtc *nv;
static char *source;
static int arch; /* what the configurations compile for: sm_80, or NVRTC's newest */
static fake_cuda full;

/* The subset: every value list here, all their combinations (24, of which
 * 20 are legal). Each build takes NVRTC about a seventh of a second on our
 * machines, so the subset varies what changes the code most (vector width,
 * staging, per-thread work); the host emulation test covers tile shapes. */
static const int mwg[] = {64}, nwg[] = {64}, kwg[] = {16}, mwi[] = {4}, nwi[] = {2, 4},
                 vw[] = {1, 2, 4}, sa[] = {0, 1}, sb[] = {0, 1};
#define N_(a) (sizeof a / sizeof a[0])

/* The example's legality rules for M = N = K = 512. */
static int legal(int MWG, int NWG, int KWG, int MWI, int NWI, int VW, int SA, int SB)
{
    return 512 % MWG == 0 && 512 % NWG == 0 && 512 % KWG == 0 && MWG % MWI == 0 && NWG % NWI == 0 &&
           NWI % VW == 0 && (MWG / MWI) * (NWG / NWI) <= 1024 &&
           4 * (SA * MWG * KWG + SB * KWG * NWG) <= 49152;
}

static void every_legal_configuration_of_the_subset_builds_cleanly(void **state)
{
    (void)state;
    int built = 0, raw = 0;
    for (size_t a = 0; a < N_(mwg); a++)
        for (size_t b = 0; b < N_(nwg); b++)
            for (size_t c = 0; c < N_(kwg); c++)
                for (size_t d = 0; d < N_(mwi); d++)
                    for (size_t e = 0; e < N_(nwi); e++)
                        for (size_t f = 0; f < N_(vw); f++)
                            for (size_t g = 0; g < N_(sa); g++)
                                for (size_t h = 0; h < N_(sb); h++) {
                                    raw++;
                                    if (!legal(mwg[a], nwg[b], kwg[c], mwi[d], nwi[e], vw[f], sa[g],
                                               sb[h]))
                                        continue;
                                    char opts[256], *log = NULL;
                                    gpo_nvrtc_image img;
                                    snprintf(opts, sizeof opts,
                                             "-DMWG=%d -DNWG=%d -DKWG=%d -DMWI=%d -DNWI=%d "
                                             "-DVW=%d -DSA=%d -DSB=%d",
                                             mwg[a], nwg[b], kwg[c], mwi[d], nwi[e], vw[f], sa[g],
                                             sb[h]);
                                    if (gpo_nvrtc_compile(nv, source, opts, arch / 10, arch % 10,
                                                          &img, &log))
                                        fail_msg("%s: %s", opts, gpo_detail_get());
                                    if (log)
                                        fail_msg("%s: warnings: %s", opts, log);
                                    assert_true(img.size > 0);
                                    gpo_nvrtc_image_free(&img);
                                    built++;
                                }
    print_message("built %d legal configurations of %d for sm_%d with NVRTC %d.%d\n", built, raw,
                  arch, nv->major, nv->minor);
    assert_int_equal(raw, 24);
    assert_int_equal(built, 20);
}

static void illegal_configurations_are_refused_by_the_kernel(void **state)
{
    (void)state;
    static const struct {
        const char *opts, *says;
    } rows[] = {
        {"-DNWI=2 -DVW=4", "NWI % VW must all be 0"},
        {"-DVW=3", "VW must be 1, 2 or 4"},
        {"-DMWG=128 -DNWG=128 -DMWI=2 -DNWI=2 -DVW=2", "threads exceed a block"},
        {"-DMWG=128 -DNWG=128 -DKWG=64", "exceed 48 KiB"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *log = NULL;
        gpo_nvrtc_image img;
        assert_int_equal(
            gpo_nvrtc_compile(nv, source, rows[i].opts, arch / 10, arch % 10, &img, &log),
            GPUOPT_ERR_BUILD);
        if (!log || !strstr(log, rows[i].says))
            fail_msg("%s: log '%s' does not say '%s'", rows[i].opts, log ? log : "", rows[i].says);
        free(log);
    }
}

static void the_example_loads_into_the_double_and_needs_a_gpu_to_run(void **state)
{
    (void)state;
    cuda_env e;
    gpo_backend_report rep;
    void *st = NULL;
    gpo_route route;
    gpo_rt *rt = NULL;
    gpo_rt_buf *A = NULL, *B = NULL, *C = NULL;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *k = NULL;
    char *log = NULL;
    const gpo_runtime_ops *ops = gpo_backend_cuda.runtime;
    int M = 512, N = 512, K = 512;
    float alpha = 1.0f, beta = 0.0f;
    /* MWG=NWG=64, MWI=NWI=4: blocks of 16 x 16 threads. */
    size_t global[3] = {512 / 4, 512 / 4, 1}, local[3] = {16, 16, 1};
    double ns = 0.0;

    cuda_env_init(&e, FAKE_CUDA_FULL, NO_KERNEL_DRIVER);
    gpo_config_set_library(&e.cfg, "nvrtc", gpo_config_library(&cfg, "nvrtc"));
    fake_cuda_configure(&full, fake_devices("a100-sxm4-40gb.json", NULL), NULL, NULL);
    assert_int_equal(gpo_backend_cuda.load(&e.env, &st, &rep), GPUOPT_OK);
    memset(&route, 0, sizeof route);
    assert_int_equal(ops->open(st, &route, &rt), GPUOPT_OK);
    size_t bytes = (size_t)M * K * sizeof(float);
    assert_int_equal(ops->buffer_alloc(rt, bytes, &A), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(rt, bytes, &B), GPUOPT_OK);
    assert_int_equal(ops->buffer_alloc(rt, bytes, &C), GPUOPT_OK);
    if (ops->program_build(rt, source,
                           "-DMWG=64 -DNWG=64 -DKWG=16 -DMWI=4 -DNWI=4 -DVW=4 -DSA=1 -DSB=1", &prog,
                           &log))
        fail_msg("%s", gpo_detail_get());
    assert_null(log);
    assert_int_equal(ops->kernel_create(rt, prog, "sgemm", &k), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_scalar(rt, k, 0, &M, sizeof M), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_scalar(rt, k, 1, &N, sizeof N), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_scalar(rt, k, 2, &K, sizeof K), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_scalar(rt, k, 3, &alpha, sizeof alpha), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 4, A), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 5, B), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_scalar(rt, k, 6, &beta, sizeof beta), GPUOPT_OK);
    assert_int_equal(ops->kernel_set_buffer(rt, k, 7, C), GPUOPT_OK);
    assert_int_equal(ops->launch(rt, k, 2, global, local, &ns), GPUOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(gpo_detail_get(), "needs a real NVIDIA GPU"));
    print_message("running the SGEMM needs a GPU: %s\n", gpo_detail_get());
    ops->close(rt);
    assert_int_equal(full.live_objects(NULL), 0);
    gpo_backend_cuda.unload(st);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = calloc(1, (size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

int main(void)
{
    const char *lib = GPO_NVRTC_TEST_LIBRARY;
    memset(&cfg, 0, sizeof cfg);
    if (lib[0])
        gpo_config_set_library(&cfg, "nvrtc", lib);
    if (gpo_nvrtc_open(gpo_config_library(&cfg, "nvrtc"), 0, &nv) != GPUOPT_OK) {
        printf("skipped: no NVRTC to compile the SGEMM example with here: %s\n", gpo_detail_get());
        return 77; /* CTest: SKIP_RETURN_CODE */
    }
    source = read_all(GPO_SGEMM_SOURCE);
    if (!source) {
        printf("cannot read %s\n", GPO_SGEMM_SOURCE);
        return 1;
    }
    arch = nv->archs[nv->n_archs - 1];
    for (int i = 0; i < nv->n_archs; i++)
        if (nv->archs[i] == 80)
            arch = 80;
    unsetenv("CUDA_VISIBLE_DEVICES");
    if (fake_cuda_open(&full, FAKE_CUDA_FULL))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_legal_configuration_of_the_subset_builds_cleanly),
        cmocka_unit_test(illegal_configurations_are_refused_by_the_kernel),
        cmocka_unit_test(the_example_loads_into_the_double_and_needs_a_gpu_to_run),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    gpo_nvrtc_close(nv);
    free(source);
    return rc;
}
