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
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tensor/gemm.h"
#include "tensor/pool.h"

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

/* Three steps of a model on random data (rg_model_loss_backward, clip, AdamW) with FTZ/DAZ on or off, on `threads`
 * threads, Linear's products in `prec`; d_model 16 (B = 4, T = 12) or, when big, d_model 192, d_ff 768, B = 32,
 * T = 32: 1024 rows, so every elementwise pass has more than 2 x RG_POOL_GRAIN elements and at 2 threads is split
 * over the pool, while no product reaches oneDNN's float32 matmul (K > 1024, gemm.c). Writes every parameter after
 * them to out. */
typedef struct {
    bool flush, big;
    int threads;
    rg_pos_kind pos;
    rg_precision prec;
} steps_config;

static int64_t steps_numel(const steps_config *k);

static rg_model *steps_model(const steps_config *k)
{
    if (!k->big) return small_model(k->pos, 5);
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = 192;
    cfg.n_heads = 4;
    cfg.d_ff = 768;
    cfg.max_len = 40;
    cfg.pos = k->pos;
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 5, &m), RG_OK);
    return m;
}

static void three_steps(const steps_config *k, float *out)
{
    rg_model *m = steps_model(k);
    assert_true(rg_params_numel(&m->params) == steps_numel(k));
    rg_adamw opt;
    assert_int_equal(rg_adamw_init(&opt, &m->params, 0.9, 0.98, 1e-8, 0.01), RG_OK);
    rg_ctx *c = rg_ctx_new();
    rg_flush_denormals(k->flush);
    rg_set_num_threads(k->threads);
    assert_int_equal(rg_set_linear_precision(k->prec), RG_OK);
    rg_rng rng;
    rg_rng_seed(&rng, 9, 0);
    const int B = k->big ? 32 : 4, T = k->big ? 32 : 12;
    int32_t *tok = malloc(sizeof(int32_t) * B * T), *tgt = malloc(sizeof(int32_t) * B * T);
    for (int s = 0; s < 3; s++) {
        for (int i = 0; i < B * T; i++) {
            tok[i] = (int32_t)rg_rng_below(&rng, 30);
            tgt[i] = i % 3 ? (int32_t)rg_rng_below(&rng, 30) : -100;
        }
        rg_params_zero_grad(&m->params);
        double l;
        assert_int_equal(rg_model_loss_backward(c, m, tok, tgt, NULL, B, T, k->big ? 1 : 2, -100, &l), RG_OK);
        rg_params_clip_grad_norm(&m->params, 1.0);
        rg_adamw_step(&opt, &m->params, 1e-2);
    }
    int64_t j = 0;
    for (int i = 0; i < m->params.n; i++)
        for (int64_t e = 0; e < m->params.items[i]->numel; e++) out[j++] = m->params.items[i]->data[e];
    free(tok);
    free(tgt);
    rg_ctx_free(c);
    rg_adamw_free(&opt);
    rg_model_free(m);
    rg_set_num_threads(1);
    assert_int_equal(rg_set_linear_precision(RG_PRECISION_FP32), RG_OK);
    rg_flush_denormals(true);
}

static int64_t steps_numel(const steps_config *k)
{
    rg_model *m = steps_model(k);
    int64_t n = rg_params_numel(&m->params);
    rg_model_free(m);
    return n;
}

static void test_flush_keeps_normal_results(void **state)
{
    steps_config on = {.flush = true, .threads = 1, .pos = RG_POS_ROPE}, off = on;
    off.flush = false;
    int64_t n = steps_numel(&on);
    float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
    three_steps(&on, a);
    three_steps(&off, b);
    assert_memory_equal(a, b, sizeof(float) * n);
    free(a);
    free(b);
}

/* The step at 2 threads (products split by rows, attention by (batch, head), the elementwise passes over the pool:
 * rg_pool_for) gives the bits of the step at 1 thread, for each position encoding of the table. Products on
 * oneDNN (every bf16 product, float32 ones with K > 1024) are not in it: split by rows they run primitives of
 * another shape, whose blocking, and so whose sums, differ (docs/precision.md). */
static void test_threads_keep_bits(void **state)
{
    static const rg_pos_kind cases[] = {RG_POS_ROPE, RG_POS_T5};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        steps_config one = {.flush = true, .big = true, .threads = 1, .pos = cases[i], .prec = RG_PRECISION_FP32};
        steps_config two = one;
        two.threads = 2;
        int64_t n = steps_numel(&one);
        float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
        three_steps(&one, a);
        three_steps(&two, b);
        int64_t differ = 0;
        for (int64_t e = 0; e < n; e++) differ += memcmp(&a[e], &b[e], sizeof(float)) != 0;
        if (differ) fail_msg("case %zu: %lld of %lld parameters differ between 1 and 2 threads", i, (long long)differ,
                             (long long)n);
        free(a);
        free(b);
    }
}

/* rg_pool_for at 2 threads: every index of the range exactly once, bounds multiples of `align` except n, the parts
 * on two threads; below 2 x min_per_part one call on the calling thread. */
typedef struct {
    _Atomic int hits[1000];
    _Atomic int calls, other_thread, misaligned;
    pthread_t caller;
} range_log;

static void log_range(void *p, int64_t b, int64_t e)
{
    range_log *g = p;
    g->calls++;
    if (!pthread_equal(pthread_self(), g->caller)) g->other_thread++;
    if (b % 16 || (e % 16 && e != 1000)) g->misaligned++;
    for (int64_t i = b; i < e; i++) g->hits[i]++;
}

static void test_pool_for_ranges(void **state)
{
    rg_set_num_threads(2);
    static range_log g;
    memset(&g, 0, sizeof g);
    g.caller = pthread_self();
    rg_pool_for(1000, 100, 16, log_range, &g);
    for (int i = 0; i < 1000; i++) assert_int_equal(g.hits[i], 1);
    assert_int_equal(g.calls, 2);
    assert_int_equal(g.other_thread, 1);
    assert_int_equal(g.misaligned, 0);
    memset(&g, 0, sizeof g);
    g.caller = pthread_self();
    rg_pool_for(1000, 501, 16, log_range, &g); /* too small for two parts of 501 */
    for (int i = 0; i < 1000; i++) assert_int_equal(g.hits[i], 1);
    assert_int_equal(g.calls, 1);
    assert_int_equal(g.other_thread, 0);
    rg_set_num_threads(1);
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
        cmocka_unit_test(test_threads_keep_bits),
        cmocka_unit_test(test_pool_for_ranges),
        cmocka_unit_test(test_subnormal_operand_not_slow),
        cmocka_unit_test(test_pool_across_fork),
        cmocka_unit_test(test_step_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
