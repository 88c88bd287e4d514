/* test_threads_bits.c (float32): the elementwise passes that run over ropegrad's pool (rg_pool_for, src/tensor/pool.h)
 * give the bits of one thread. The products are held fixed: main sets RG_GEMM=blas before the first product, so
 * every product runs on OpenBLAS, and the 2-thread runs set OpenBLAS back to one thread after rg_set_num_threads(2),
 * so every product is computed as at 1 thread while the pool's worker takes half of each elementwise pass (and of
 * attention's (batch, head) pairs, each pair the same one-thread product). How a split product's kernels change its
 * bits (libxsmm's and oneDNN's part shapes, OpenBLAS's partition at some widths) is not what this file tests
 * (docs/precision.md, "Threads"). */
#include "common.h"

#include <cblas.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/pool.h"

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

/* Three training steps (rg_model_loss_backward, clip, AdamW) of one case on `threads` threads; every parameter after
 * them goes to out (n values). Each case has more than 2 x RG_POOL_GRAIN elements in every activation, so at 2
 * threads each pass is split: rows for the forward passes, columns (widths not multiples of 16 included) for the
 * bias and LayerNorm weight gradients. */
typedef struct {
    rg_pos_kind pos;
    int d_model, n_heads, d_ff, B, T;
} steps_case;

static rg_model *case_model(const steps_case *k)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = k->d_model;
    cfg.n_heads = k->n_heads;
    cfg.d_ff = k->d_ff;
    cfg.max_len = k->T + 8;
    cfg.pos = k->pos;
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 5, &m), RG_OK);
    return m;
}

static float *three_steps(const steps_case *k, int threads, int64_t *n)
{
    rg_model *m = case_model(k);
    rg_adamw opt;
    assert_int_equal(rg_adamw_init(&opt, &m->params, 0.9, 0.98, 1e-8, 0.01), RG_OK);
    rg_ctx *c = rg_ctx_new();
    rg_set_num_threads(threads);
    openblas_set_num_threads(1); /* the products as at 1 thread */
    rg_rng rng;
    rg_rng_seed(&rng, 9, 0);
    const int BT = k->B * k->T;
    int32_t *tok = malloc(sizeof(int32_t) * BT), *tgt = malloc(sizeof(int32_t) * BT);
    for (int s = 0; s < 3; s++) {
        for (int i = 0; i < BT; i++) {
            tok[i] = (int32_t)rg_rng_below(&rng, 30);
            tgt[i] = i % 3 ? (int32_t)rg_rng_below(&rng, 30) : -100;
        }
        rg_params_zero_grad(&m->params);
        double l;
        assert_int_equal(rg_model_loss_backward(c, m, tok, tgt, NULL, k->B, k->T, 1, -100, &l), RG_OK);
        rg_params_clip_grad_norm(&m->params, 1.0);
        rg_adamw_step(&opt, &m->params, 1e-2);
    }
    *n = rg_params_numel(&m->params);
    float *out = malloc(sizeof(float) * *n);
    int64_t j = 0;
    for (int i = 0; i < m->params.n; i++)
        for (int64_t e = 0; e < m->params.items[i]->numel; e++) out[j++] = m->params.items[i]->data[e];
    free(tok);
    free(tgt);
    rg_ctx_free(c);
    rg_adamw_free(&opt);
    rg_model_free(m);
    rg_set_num_threads(1);
    return out;
}

static int64_t count_differ(const float *a, const float *b, int64_t n)
{
    int64_t d = 0;
    for (int64_t e = 0; e < n; e++) d += memcmp(&a[e], &b[e], sizeof(float)) != 0;
    return d;
}

static void test_steps_keep_bits(void **state)
{
    static const steps_case cases[] = {
        {RG_POS_ROPE, 192, 4, 768, 32, 32},      /* 1024 rows */
        {RG_POS_T5, 200, 4, 600, 31, 33},        /* 1023 rows; widths 200 and 600 leave a part of 8 columns */
        {RG_POS_ROPE_HALF, 200, 4, 600, 31, 33},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t n1, n2;
        float *a = three_steps(&cases[i], 1, &n1), *b = three_steps(&cases[i], 2, &n2);
        assert_int_equal(n1, n2);
        int64_t differ = count_differ(a, b, n1);
        if (differ) fail_msg("case %zu: %lld of %lld parameters differ between 1 and 2 threads", i, (long long)differ,
                             (long long)n1);
        free(a);
        free(b);
    }
}

/* RoPE's backward accumulates into a gradient that is not zero (in the model it always is: q's and k's gradients are
 * fresh when it runs): x's gradient filled first, then the inverse rotation of a seed added, at 1 and 2 threads. */
static float *rope_grad(int threads)
{
    enum { B = 31, T = 33, D = 200, H = 4 };
    rg_set_num_threads(threads);
    rg_ctx *c = rg_ctx_new();
    rg_rng rng;
    rg_rng_seed(&rng, 3, 0);
    rg_tensor *x = tc_param_randn("x", 3, (int[]){B, T, D}, &rng, 1.0);
    rg_real *g = rg_grad_of(x);
    for (int64_t i = 0; i < x->numel; i++) g[i] = (rg_real)rg_rng_normal(&rng);
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = D;
    cfg.n_heads = H;
    cfg.max_len = T;
    int32_t pos[T];
    for (int t = 0; t < T; t++) pos[t] = t;
    rg_rope_table tab = rg_rope_table_new(c, &cfg, pos, T, T);
    rg_tensor *y = rg_pos_rope(c, x, H, false, &tab);
    rg_real *seed = malloc(sizeof(rg_real) * y->numel);
    for (int64_t i = 0; i < y->numel; i++) seed[i] = (rg_real)rg_rng_normal(&rng);
    rg_backward(c, y, seed);
    float *out = malloc(sizeof(float) * x->numel);
    memcpy(out, x->grad, sizeof(float) * x->numel);
    free(seed);
    rg_ctx_free(c);
    rg_param_free(x);
    rg_set_num_threads(1);
    return out;
}

static void test_rope_backward_accumulates(void **state)
{
    enum { N = 31 * 33 * 200 };
    float *a = rope_grad(1), *b = rope_grad(2);
    assert_int_equal(count_differ(a, b, N), 0);
    free(a);
    free(b);
}

int main(void)
{
    setenv("RG_GEMM", "blas", 1); /* before the first product: read once (src/tensor/gemm.h) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_for_ranges),
        cmocka_unit_test(test_steps_keep_bits),
        cmocka_unit_test(test_rope_backward_accumulates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
