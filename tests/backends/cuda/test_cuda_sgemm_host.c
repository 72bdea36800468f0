/* examples/tuning/sgemm.cu computes SGEMM: the kernel, compiled as C for
 * each configuration of SGEMM_CONFIGS (CMake builds one object per
 * configuration), runs on the host with one thread per CUDA thread
 * (sgemm/sgemm_host.h) and must match a double-precision reference,
 * element by element. Every vector width and staging variant is covered.
 * Speed means nothing here; a GPU is needed for that. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sgemm/sgemm_host.h"
#include "sgemm_configs.h"

_Thread_local sgemm_dim3 threadIdx, blockIdx;
static pthread_barrier_t barrier;

void sgemm_host_syncthreads(void)
{
    pthread_barrier_wait(&barrier);
}

#define DECLARE_(id, mwg, nwg, kwg, mwi, nwi, vw, sa, sb)                                          \
    void sgemm_##id(int M, int N, int K, float alpha, const float *restrict A,                     \
                    const float *restrict B, float beta, float *restrict C);
SGEMM_CONFIGS(DECLARE_)

static const struct config {
    sgemm_fn fn;
    int mwg, nwg, kwg, mwi, nwi, vw, sa, sb;
} configs[] = {
#define ROW_(id, mwg, nwg, kwg, mwi, nwi, vw, sa, sb)                                              \
    {sgemm_##id, mwg, nwg, kwg, mwi, nwi, vw, sa, sb},
    SGEMM_CONFIGS(ROW_)
#undef ROW_
};

typedef struct job {
    const struct config *cfg;
    int M, N, K;
    float alpha, beta;
    const float *A, *B;
    float *C;
    sgemm_dim3 thread, block;
} job;

static void *run_thread(void *arg)
{
    job *j = arg;
    threadIdx = j->thread;
    blockIdx = j->block;
    j->cfg->fn(j->M, j->N, j->K, j->alpha, j->A, j->B, j->beta, j->C);
    return NULL;
}

/* One launch: grid (N/NWG, M/MWG), block (NWG/NWI, MWG/MWI), one block at
 * a time. */
static void launch(const struct config *c, int M, int N, int K, float alpha, const float *A,
                   const float *B, float beta, float *C)
{
    int bx = c->nwg / c->nwi, by = c->mwg / c->mwi, threads = bx * by;
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    job *jobs = calloc((size_t)threads, sizeof *jobs);
    pthread_attr_t attr;
    assert_non_null(tids);
    assert_non_null(jobs);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (int gy = 0; gy < M / c->mwg; gy++) {
        for (int gx = 0; gx < N / c->nwg; gx++) {
            assert_int_equal(pthread_barrier_init(&barrier, NULL, (unsigned)threads), 0);
            for (int t = 0; t < threads; t++) {
                jobs[t] = (job){c,
                                M,
                                N,
                                K,
                                alpha,
                                beta,
                                A,
                                B,
                                C,
                                {(unsigned)(t % bx), (unsigned)(t / bx), 0},
                                {(unsigned)gx, (unsigned)gy, 0}};
                assert_int_equal(pthread_create(&tids[t], &attr, run_thread, &jobs[t]), 0);
            }
            for (int t = 0; t < threads; t++)
                pthread_join(tids[t], NULL);
            pthread_barrier_destroy(&barrier);
        }
    }
    pthread_attr_destroy(&attr);
    free(tids);
    free(jobs);
}

static float next_value(uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return (float)(*seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

static void every_configuration_computes_alpha_ab_plus_beta_c(void **state)
{
    (void)state;
    for (size_t n = 0; n < sizeof configs / sizeof configs[0]; n++) {
        const struct config *c = &configs[n];
        int M = 2 * c->mwg, N = 2 * c->nwg, K = 3 * c->kwg;
        float alpha = 1.5f, beta = 0.5f;
        uint32_t seed = 42u + (uint32_t)n;
        float *A = malloc(sizeof *A * (size_t)(M * K)), *B = malloc(sizeof *B * (size_t)(K * N));
        float *C = malloc(sizeof *C * (size_t)(M * N)), *C0 = malloc(sizeof *C0 * (size_t)(M * N));
        assert_true(A && B && C && C0);
        for (int i = 0; i < M * K; i++)
            A[i] = next_value(&seed);
        for (int i = 0; i < K * N; i++)
            B[i] = next_value(&seed);
        for (int i = 0; i < M * N; i++)
            C[i] = C0[i] = next_value(&seed);

        launch(c, M, N, K, alpha, A, B, beta, C);

        for (int m = 0; m < M; m++)
            for (int j = 0; j < N; j++) {
                double ref = 0.0;
                for (int k = 0; k < K; k++)
                    ref += (double)A[m * K + k] * B[k * N + j];
                ref = alpha * ref + beta * C0[m * N + j];
                double got = C[m * N + j];
                if (fabs(got - ref) > 1e-4 * (1.0 + fabs(ref)))
                    fail_msg("MWG=%d NWG=%d KWG=%d MWI=%d NWI=%d VW=%d SA=%d SB=%d: C[%d][%d] = "
                             "%g, reference %g",
                             c->mwg, c->nwg, c->kwg, c->mwi, c->nwi, c->vw, c->sa, c->sb, m, j, got,
                             ref);
            }
        free(A);
        free(B);
        free(C);
        free(C0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_configuration_computes_alpha_ab_plus_beta_c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
