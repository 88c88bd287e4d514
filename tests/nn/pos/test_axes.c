/* test_axes.c (float32): the position axes of a forward (pos.h "position axes"; rg_model_forward_axes,
 * rg_generate_axes, rg_batch.axes through rg_train_grad's micro-batches).
 *   - every built-in encoding: axes equal to the 1-D positions on all three axes give rg_model_forward's logits bit
 *     for bit (the summary then holds axes, so every hook that reads them must read the same ids);
 *   - a test encoding whose bias reads the row and column axes (-|dr| - |dc|, registered here through the public
 *     seam): the logits depend on the axes (a control changes one token's column and its row's logits change), a
 *     KV-cache decode (prefill, then one token per forward) equals the full forward at every step, rg_generate_axes
 *     tokens are the argmax of a cache-free full forward, and batch sizes 1, 2 and 5 agree;
 *   - rg_train_grad with 1 and 3 micro-batches (rows sorted by length and gathered [3, rows, Tm]) gives the same
 *     gradients, and they differ from the gradients without axes (the gather is not dropped);
 *   - errors: an axis id outside [0, RG_MAX_POSITION) in a forward and in rg_generate_axes, naming axis, row and
 *     token. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ an encoding that reads two axes */

static rg_tensor *grid_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                            rg_tensor *q, rg_tensor *k)
{
    (void)state, (void)prep, (void)layer, (void)q, (void)k;
    const int B = s->B, T = s->T, S = s->S, H = 2;
    rg_tensor *bias = rg_tensor_new(c, 4, (int[]){B, H, T, S});
    const int32_t *qr = rg_pos_q_axis(s, RG_AXIS_ROW), *qc = rg_pos_q_axis(s, RG_AXIS_COL);
    const int32_t *kr = rg_pos_k_axis(s, RG_AXIS_ROW), *kc = rg_pos_k_axis(s, RG_AXIS_COL);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++)
                for (int j = 0; j < S; j++)
                    bias->data[(((int64_t)b * H + h) * T + i) * S + j] =
                        (rg_real)(-(h + 1) * (abs(qr[b * T + i] - kr[b * S + j]) + abs(qc[b * T + i] - kc[b * S + j])));
    return bias;
}

static const rg_pos_encoding grid_enc = {.name = "test-grid-bias", .doc = "-(h+1)(|dr| + |dc|), a test of the axes",
                                         .score_bias = grid_bias};
static rg_pos_kind grid_kind;

static int setup(void **state)
{
    (void)state;
    return rg_pos_register(&grid_enc, &grid_kind) == RG_OK ? 0 : -1;
}

enum { B = 3, T = 7, V = 7 };

/* Axis ids of a 2 x 3 grid flattened row-major after a BOS at (0, 0): token t >= 1 is cell t-1, row (t-1)/3,
 * column (t-1)%3 times b+1 (rows differ in their column offsets); frames 0. */
static void grid_axes(int nb, int nt, int32_t *ax)
{
    for (int b = 0; b < nb; b++)
        for (int t = 0; t < nt; t++) {
            int cell = t ? t - 1 : 0;
            ax[(0 * nb + b) * nt + t] = 0;
            ax[(1 * nb + b) * nt + t] = cell / 3;
            ax[(2 * nb + b) * nt + t] = cell % 3 * (b + 1);
        }
}

static void tokens_of(int32_t *tok, int n)
{
    rg_rng r;
    rg_rng_seed(&r, 5, 0);
    for (int i = 0; i < n; i++) tok[i] = (int32_t)rg_rng_below(&r, V);
}

static rg_tensor *forward(rg_ctx *c, rg_model *m, const int32_t *tok, const int32_t *pos, const int32_t *ax, int nb,
                          int nt)
{
    rg_tensor *logits;
    assert_int_equal(rg_model_forward_axes(c, m, tok, pos, ax, nb, nt, NULL, &logits), RG_OK);
    return logits;
}

static void test_equal_axes_every_encoding(void **state)
{
    (void)state;
    int32_t tok[B * T], pos[B * T], ax[RG_POS_AXES * B * T];
    tokens_of(tok, B * T);
    for (int i = 0; i < B * T; i++) pos[i] = i % T + 2 * (i / T);
    for (int a = 0; a < RG_POS_AXES; a++) memcpy(ax + a * B * T, pos, sizeof pos);
    for (int k = 0; k < RG_POS_BUILTIN_COUNT; k++) {
        rg_model_config cfg = tc_tiny_config((rg_pos_kind)k);
        rg_model *m = tc_model_randn(&cfg, 9, 0.5);
        rg_ctx *c = rg_ctx_new();
        rg_set_grad_enabled(c, false);
        rg_tensor *a = forward(c, m, tok, pos, NULL, B, T), *b = forward(c, m, tok, pos, ax, B, T);
        if (memcmp(a->data, b->data, sizeof(rg_real) * (size_t)a->numel))
            fail_msg("%s: logits with axes equal to the positions differ from rg_model_forward's", rg_pos_name(k));
        rg_ctx_free(c);
        rg_model_free(m);
    }
}

static rg_model *grid_model(void)
{
    rg_model_config cfg = tc_tiny_config(grid_kind);
    return tc_model_randn(&cfg, 4, 0.5);
}

/* Decodes tok [B, T] through a KV cache (a prefill of 3 tokens, then one per forward) with axis ids ax [3, B, T]
 * (the prefill without axes unless prefill_axes) and returns the largest difference from the logits full. */
static double cached_decode(rg_model *m, const int32_t *tok, const int32_t *ax, bool prefill_axes,
                            const rg_tensor *full)
{
    rg_kv_cache kv;
    assert_int_equal(rg_kv_cache_init(&kv, m, B, T), RG_OK);
    double worst = 0;
    for (int t0 = 0; t0 < T;) {
        int len = t0 ? 1 : 3;
        int32_t tt[B * 3], pp[B * 3], aa[RG_POS_AXES * B * 3];
        for (int b = 0; b < B; b++)
            for (int t = 0; t < len; t++) {
                tt[b * len + t] = tok[b * T + t0 + t];
                pp[b * len + t] = t0 + t;
                for (int a = 0; a < RG_POS_AXES; a++) aa[(a * B + b) * len + t] = ax[(a * B + b) * T + t0 + t];
            }
        rg_ctx *d = rg_ctx_new();
        rg_set_grad_enabled(d, false);
        rg_tensor *lg;
        assert_int_equal(rg_model_forward_axes(d, m, tt, pp, t0 || prefill_axes ? aa : NULL, B, len, &kv, &lg),
                         RG_OK);
        for (int b = 0; b < B; b++)
            for (int t = 0; t < len; t++)
                for (int v = 0; v < V; v++)
                    worst = tc_max(worst, fabs(lg->data[(b * len + t) * V + v] - full->data[(b * T + t0 + t) * V + v]));
        rg_ctx_free(d);
        t0 += len;
    }
    rg_kv_cache_free(&kv);
    return worst;
}

static void test_cache_and_control(void **state)
{
    (void)state;
    rg_model *m = grid_model();
    int32_t tok[B * T], ax[RG_POS_AXES * B * T];
    tokens_of(tok, B * T);
    grid_axes(B, T, ax);
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *full = forward(c, m, tok, NULL, ax, B, T);
    /* control: column of row 1, token 4 changed: row 1's logits change, rows 0 and 2 do not */
    int32_t ax2[RG_POS_AXES * B * T];
    memcpy(ax2, ax, sizeof ax);
    ax2[(2 * B + 1) * T + 4] += 3;
    rg_tensor *moved = forward(c, m, tok, NULL, ax2, B, T);
    double diff[B] = {0};
    for (int64_t i = 0; i < full->numel; i++) diff[i / (T * V)] += fabs(full->data[i] - moved->data[i]);
    assert_true(diff[0] == 0 && diff[2] == 0 && diff[1] > 1e-3);
    /* KV cache: prefill 3 tokens, then one per forward; each step's logits equal the full forward's row */
    double worst = cached_decode(m, tok, ax, true, full);
    if (!(worst < 1e-5)) fail_msg("cached decode with axes differs from the full forward by %g", worst);
    /* a prefill without axes (its keys cached with every axis = position), then decoding with axes: equal to the
     * full forward whose first 3 tokens have axis ids = positions */
    int32_t ax3[RG_POS_AXES * B * T];
    memcpy(ax3, ax, sizeof ax);
    for (int a = 0; a < RG_POS_AXES; a++)
        for (int b = 0; b < B; b++)
            for (int t = 0; t < 3; t++) ax3[(a * B + b) * T + t] = t;
    rg_tensor *full3 = forward(c, m, tok, NULL, ax3, B, T);
    worst = cached_decode(m, tok, ax3, false, full3);
    if (!(worst < 1e-5)) fail_msg("a prefill without axes, then decoding with axes, differs by %g", worst);
    rg_ctx_free(c);
    rg_model_free(m);
}

enum { N = 5, P = 3, G = 4 };

static void test_generate_axes(void **state)
{
    (void)state;
    rg_model *m = grid_model();
    for (int64_t i = 0; i < m->lm_head->numel; i++) m->lm_head->data[i] *= 30;
    int32_t prompts[N * P], ax[RG_POS_AXES * N * (P + G)], out[N * G], out1[N * G];
    tokens_of(prompts, N * P);
    grid_axes(N, P + G, ax);
    assert_int_equal(rg_generate_axes(m, prompts, N, P, G, NULL, ax, 2, out), RG_OK);
    assert_int_equal(rg_generate_axes(m, prompts, N, P, G, NULL, ax, 1, out1), RG_OK);
    assert_memory_equal(out, out1, sizeof out);
    assert_int_equal(rg_generate_axes(m, prompts, N, P, G, NULL, ax, 64, out1), RG_OK);
    assert_memory_equal(out, out1, sizeof out);
    /* greedy under a cache-free forward of each row with its own axes */
    for (int i = 0; i < N; i++) {
        int32_t seq[P + G], a1[RG_POS_AXES * (P + G)];
        memcpy(seq, prompts + i * P, sizeof(int32_t) * P);
        memcpy(seq + P, out + i * G, sizeof(int32_t) * G);
        for (int a = 0; a < RG_POS_AXES; a++)
            memcpy(a1 + a * (P + G), ax + (a * N + i) * (P + G), sizeof(int32_t) * (P + G));
        rg_ctx *c = rg_ctx_new();
        rg_set_grad_enabled(c, false);
        rg_tensor *lg = forward(c, m, seq, NULL, a1, 1, P + G - 1);
        for (int j = 0; j < G; j++) {
            const rg_real *row = lg->data + (P - 1 + j) * V;
            double best = row[0];
            for (int v = 1; v < V; v++) best = row[v] > best ? row[v] : best;
            if (!(row[seq[P + j]] >= best - 1e-4)) fail_msg("row %d token %d is not the argmax of a full forward", i, j);
        }
        rg_ctx_free(c);
    }
    rg_model_free(m);
}

static void grads_of(rg_model *m, const int32_t *tok, const int32_t *tgt, const int *len, const int32_t *ax, int k,
                     double *g, int64_t n)
{
    rg_trainer t;
    rg_trainer_init(&t);
    rg_batch b = {tok, tgt, len, B, T, NULL, ax};
    rg_step_config cfg = {.micro_batches = k, .clip = 0, .lr = 0, .ignore_index = -100};
    rg_step_stats st;
    assert_int_equal(rg_train_grad(&t, m, &b, &cfg, &st), RG_OK);
    for (int64_t i = 0; i < n; i++) g[i] = m->params.grad[i];
    rg_trainer_free(&t);
}

static void test_train_micro_batches(void **state)
{
    (void)state;
    rg_model *m = grid_model();
    int32_t tok[B * T], tgt[B * T], ax[RG_POS_AXES * B * T];
    const int len[B] = {7, 4, 6};
    tc_padded_batch(8, V, B, T, len, tok, tgt);
    grid_axes(B, T, ax);
    int64_t n = m->params.offset[m->params.n_packed];
    double *g1 = malloc(sizeof(double) * n), *g3 = malloc(sizeof(double) * n), *g0 = malloc(sizeof(double) * n);
    grads_of(m, tok, tgt, len, ax, 1, g1, n);
    grads_of(m, tok, tgt, len, ax, 3, g3, n);
    grads_of(m, tok, tgt, len, NULL, 3, g0, n);
    double worst = 0, apart = 0;
    for (int64_t i = 0; i < n; i++) {
        worst = tc_max(worst, fabs(g1[i] - g3[i]));
        apart = tc_max(apart, fabs(g1[i] - g0[i]));
    }
    if (!(worst < 1e-6)) fail_msg("gradients with 1 and 3 micro-batches differ by %g", worst);
    if (!(apart > 1e-4)) fail_msg("gradients with and without axes agree (%g): the axes were not used", apart);
    free(g0), free(g1), free(g3);
    rg_model_free(m);
}

static void test_errors(void **state)
{
    (void)state;
    rg_model *m = grid_model();
    int32_t tok[B * T], ax[RG_POS_AXES * B * T];
    tokens_of(tok, B * T);
    grid_axes(B, T, ax);
    ax[(2 * B + 1) * T + 5] = -1;
    rg_ctx *c = rg_ctx_new();
    rg_tensor *lg;
    assert_int_equal(rg_model_forward_axes(c, m, tok, NULL, ax, B, T, NULL, &lg), RG_ERR_ARG);
    assert_non_null(strstr(rg_last_error(), "axis 2 id -1 at row 1, token 5"));
    int32_t big[RG_POS_AXES * 7] = {0}, out[4];
    assert_int_equal(rg_generate_axes(m, tok, 1, 3, 4, NULL, big, 1, out), RG_OK);
    big[2 * 7 + 6] = RG_MAX_POSITION; /* the last, never-fed id of the column axis */
    assert_int_equal(rg_generate_axes(m, tok, 1, 3, 4, NULL, big, 1, out), RG_ERR_ARG);
    assert_non_null(strstr(rg_last_error(), "axis 2 id 1048576 at row 0, token 6"));
    rg_ctx_free(c);
    rg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_axes_every_encoding),
        cmocka_unit_test(test_cache_and_control),
        cmocka_unit_test(test_generate_axes),
        cmocka_unit_test(test_train_micro_batches),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
