/* test_train_step.c (float32): the parameter block layout (views at the table's offsets, zero padding, one-memset
 * zero_grad, optimizer state in the same layout), flush-to-zero / denormals-are-zero (a step's results on normal
 * data are the same bit for bit with and without them; a subnormal operand no longer slows a product), the thread
 * pool across fork() (train_order's --jobs with --threads 2), and rg_train_step's argument errors. */
#include "common.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tensor/gemm.h"

static rg_model *small_model(rg_pos_kind pos, uint64_t seed)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = 16;
    cfg.n_heads = 2;
    cfg.d_ff = 32;
    cfg.max_len = 24;
    cfg.pos = pos;
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, seed, &m), RG_OK);
    return m;
}

static void test_block_layout(void **state)
{
    rg_model *m = small_model(RG_POS_LEARNED, 1);
    rg_params *ps = &m->params;
    assert_int_equal(ps->n_packed, ps->n);
    assert_non_null(ps->data);
    for (int i = 0; i < ps->n; i++) {
        rg_tensor *p = ps->items[i];
        assert_true(p->packed);
        assert_ptr_equal(p->data, ps->data + ps->offset[i]);
        assert_ptr_equal(p->grad, ps->grad + ps->offset[i]);
        assert_int_equal(ps->offset[i] % 16, 0);
        assert_true(ps->offset[i + 1] - ps->offset[i] >= p->numel + 1); /* room for the guard */
        for (int64_t j = ps->offset[i] + p->numel; j < ps->offset[i + 1]; j++) {
            assert_true(ps->data[j] == 0);
            assert_true(ps->grad[j] == 0);
        }
        for (int64_t j = 0; j < p->numel; j++) p->grad[j] = 1;
    }
    rg_params_zero_grad(ps);
    for (int64_t j = 0; j < ps->offset[ps->n]; j++) assert_true(ps->grad[j] == 0);
    rg_adamw opt;
    assert_int_equal(rg_adamw_init(&opt, ps, 0.9, 0.98, 1e-8, 0.01), RG_OK);
    for (int i = 0; i < ps->n; i++) {
        assert_ptr_equal(opt.m[i], opt.m_block + ps->offset[i]);
        assert_ptr_equal(opt.v[i], opt.v_block + ps->offset[i]);
    }
    /* a standalone registry packs on first use and keeps its values */
    rg_params own = {0};
    rg_tensor *a, *w;
    assert_int_equal(rg_params_register(&own, "a", 1, (int[]){3}, &a), RG_OK);
    assert_int_equal(rg_params_register(&own, "w", 2, (int[]){2, 17}, &w), RG_OK);
    a->data[2] = 5;
    w->data[33] = 7;
    a->grad[0] = 3;
    w->grad[0] = 4;
    assert_true(fabs(rg_params_grad_norm(&own) - 5) < 1e-12);
    assert_int_equal(rg_params_pack(&own), RG_OK);
    assert_true(a->data[2] == 5 && w->data[33] == 7 && a->grad[0] == 3 && w->grad[0] == 4);
    assert_true(fabs(rg_params_grad_norm(&own) - 5) < 1e-12);
    assert_true(fabs(rg_params_clip_grad_norm(&own, 1.0) - 5) < 1e-12);
    assert_true(fabs(rg_params_grad_norm(&own) - 1) < 1e-6);
    rg_params_free(&own);
    rg_adamw_free(&opt);
    rg_model_free(m);
}

/* Three steps of a small model on random data (rg_model_loss_backward, clip, AdamW), with FTZ/DAZ on or off;
 * writes every parameter after them to out. */
static void three_steps(bool flush, float *out, int64_t n)
{
    rg_model *m = small_model(RG_POS_ROPE, 5);
    rg_adamw opt;
    assert_int_equal(rg_adamw_init(&opt, &m->params, 0.9, 0.98, 1e-8, 0.01), RG_OK);
    rg_ctx *c = rg_ctx_new();
    rg_flush_denormals(flush);
    rg_rng rng;
    rg_rng_seed(&rng, 9, 0);
    enum { B = 4, T = 12 };
    int32_t tok[B * T], tgt[B * T];
    for (int s = 0; s < 3; s++) {
        for (int i = 0; i < B * T; i++) {
            tok[i] = (int32_t)rg_rng_below(&rng, 30);
            tgt[i] = i % 3 ? (int32_t)rg_rng_below(&rng, 30) : -100;
        }
        rg_params_zero_grad(&m->params);
        double l;
        assert_int_equal(rg_model_loss_backward(c, m, tok, tgt, NULL, B, T, 2, -100, &l), RG_OK);
        rg_params_clip_grad_norm(&m->params, 1.0);
        rg_adamw_step(&opt, &m->params, 1e-2);
    }
    assert_true(rg_params_numel(&m->params) == n);
    int64_t k = 0;
    for (int i = 0; i < m->params.n; i++)
        for (int64_t j = 0; j < m->params.items[i]->numel; j++) out[k++] = m->params.items[i]->data[j];
    rg_ctx_free(c);
    rg_adamw_free(&opt);
    rg_model_free(m);
    rg_flush_denormals(true);
}

static void test_flush_keeps_normal_results(void **state)
{
    rg_model *m = small_model(RG_POS_ROPE, 5);
    int64_t n = rg_params_numel(&m->params);
    rg_model_free(m);
    float *on = malloc(sizeof(float) * n), *off = malloc(sizeof(float) * n);
    three_steps(true, on, n);
    three_steps(false, off, n);
    assert_memory_equal(on, off, sizeof(float) * n);
    free(on);
    free(off);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The best of 5 interleaved timings of sgemm N^3 with A normal and with A subnormal; returns the ratio. */
static double subnormal_ratio(int N, float *A_norm, float *A_sub, float *B, float *C)
{
    double best[2] = {1e30, 1e30};
    for (int r = 0; r < 5; r++)
        for (int w = 0; w < 2; w++) {
            double t0 = now_s();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1, w ? A_sub : A_norm, N, B, N, 0, C, N);
            double t = now_s() - t0;
            if (t < best[w]) best[w] = t;
        }
    return best[1] / best[0];
}

static void test_subnormal_operand_not_slow(void **state)
{
    enum { N = 256 };
    float *An = malloc(sizeof(float) * N * N), *As = malloc(sizeof(float) * N * N);
    float *B = malloc(sizeof(float) * N * N), *C = malloc(sizeof(float) * N * N);
    rg_rng rng;
    rg_rng_seed(&rng, 1, 1);
    bool was = rg_flush_denormals(false); /* FTZ would make the products below 0 */
    for (int i = 0; i < N * N; i++) {
        An[i] = (float)rg_rng_normal(&rng);
        As[i] = An[i] * 1e-39f; /* subnormal (below 1.18e-38) */
        B[i] = (float)rg_rng_normal(&rng);
    }
    assert_true(fpclassify(As[1]) == FP_SUBNORMAL);
    double slow = subnormal_ratio(N, An, As, B, C); /* flags off: OpenBLAS's workers start without them too */
    rg_set_num_threads(2); /* flags on, on this thread and (restarted) OpenBLAS's workers */
    assert_true(rg_flush_denormals(true)); /* already on */
    double fast = subnormal_ratio(N, An, As, B, C);
    print_message("sgemm %d^3 at 2 threads, subnormal A over normal A: %.1fx without FTZ/DAZ, %.2fx with\n", N, slow,
                  fast);
    assert_true(fast < 3.0); /* the slowdown measured without, on CPUs that have one, was 87-358x */
    /* the flags are in effect (this part fails on any CPU if they are not): with DAZ the subnormal operand reads as
     * 0, so the product is exactly 0 (also the rows OpenBLAS's worker threads computed); without, it is not */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1, As, N, B, N, 0, C, N);
    for (int i = 0; i < N * N; i++) assert_true(C[i] == 0);
    rg_set_num_threads(1);
    rg_flush_denormals(false);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1, As, N, B, N, 0, C, N);
    int nonzero = 0;
    for (int i = 0; i < N * N; i++) nonzero += C[i] != 0;
    assert_true(nonzero > N * N / 2);
    rg_ctx_free(rg_ctx_new()); /* a new context turns them on again */
    assert_true(rg_flush_denormals(was));
    free(An); free(As); free(B); free(C);
}

/* A product split over the pool (512 x 64 x 64: above the 4 MFLOP threshold) against a triple loop. */
static int pool_product_ok(void)
{
    enum { M = 512, N = 64, K = 64 };
    static float A[M * K], B[K * N], C[M * N];
    for (int i = 0; i < M * K; i++) A[i] = (float)((i * 7) % 13) - 6;
    for (int i = 0; i < K * N; i++) B[i] = (float)((i * 5) % 11) - 5;
    rg_gemm(false, false, M, N, K, 1, A, K, B, N, 0, C, N);
    for (int i = 0; i < M; i += 37)
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            if (C[i * N + j] != s) return 0; /* small integers: exact */
        }
    return 1;
}

static void test_pool_across_fork(void **state)
{
    rg_set_num_threads(2);
    assert_true(pool_product_ok());
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the child has none of the parent's workers: its first job must start its own, not hang */
        alarm(60);
        _exit(pool_product_ok() ? 0 : 3);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(pool_product_ok());
    rg_set_num_threads(1);
}

static void test_step_errors(void **state)
{
    rg_model *m = small_model(RG_POS_NONE, 2);
    rg_adamw opt;
    assert_int_equal(rg_adamw_init(&opt, &m->params, 0.9, 0.98, 1e-8, 0.01), RG_OK);
    rg_trainer tr;
    assert_int_equal(rg_trainer_init(&tr), RG_OK);
    int32_t tok[2 * 4] = {1, 2, 3, 4, 5, 6, 7, 8}, tgt[2 * 4] = {2, 3, 4, -100, 6, 7, 8, 9};
    int len[2] = {3, 4}, bad_len[2] = {0, 4};
    rg_step_stats ss;
    static const struct { int B, T, k; double clip, lr; bool bad_len; } cases[] = {
        {0, 4, 1, 1, 1e-3, false}, {2, 0, 1, 1, 1e-3, false}, {2, 4, 0, 1, 1e-3, false},
        {2, 4, 1, -1, 1e-3, false}, {2, 4, 1, 1, NAN, false}, {2, 4, 1, 1, 1e-3, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rg_batch b = {tok, tgt, cases[i].bad_len ? bad_len : len, cases[i].B, cases[i].T, NULL, NULL};
        rg_step_config sc = {cases[i].k, cases[i].lr, cases[i].clip, -100, NULL, 0};
        assert_int_equal(rg_train_step(&tr, m, &opt, &b, &sc, &ss), RG_ERR_ARG);
        assert_int_equal(opt.step, 0);
    }
    rg_batch b = {tok, tgt, len, 2, 4, NULL, NULL};
    rg_step_config sc = {2, 1e-3, 1.0, -100, NULL, 0};
    assert_int_equal(rg_train_step(&tr, m, &opt, &b, &sc, &ss), RG_OK);
    assert_int_equal(opt.step, 1);
    assert_true(isfinite(ss.loss) && ss.loss > 0 && ss.grad_norm > 0);
    assert_int_equal(ss.tokens, 3 + 4); /* each row its own micro-batch: no padding */
    rg_trainer_free(&tr);
    rg_adamw_free(&opt);
    rg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_layout),
        cmocka_unit_test(test_flush_keeps_normal_results),
        cmocka_unit_test(test_subnormal_operand_not_slow),
        cmocka_unit_test(test_pool_across_fork),
        cmocka_unit_test(test_step_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
