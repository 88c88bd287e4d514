/* test_direct_write.c (float32): a parameter written by plain C stores (p->data[j] = v, no call to the library) is
 * read by the next forward, whatever the library derived from the old values (a Linear weight's transpose, its bf16
 * copy, an encoding's tables): for every registered encoding (the registry, not a list), in fp32 and bf16 Linear
 * products (bf16 skipped where rg_bf16_supported is false), at 1 and 2 threads, the results after the write equal
 * bit for bit those of a freshly built model given the same values before its first forward:
 *   - forward: forward, write, forward (logits);
 *   - decode: a prompt and one token decoded with a KV cache, write, the next token (logits; the reference decodes
 *     the first tokens with the old values, then the last one with a fresh model holding the new values on the
 *     same cache); no rg_ctx_reset between the decoding forwards, so the forward alone must notice;
 *   - step: forward, loss and backward, write, the same again (logits and every parameter's gradient);
 *   - train: rg_train_grad (the library's step: 2 length-sorted micro-batches), write, rg_train_grad (the loss and
 *     every gradient);
 *   - generate: rg_generate, write, rg_generate (the tokens).
 * And the epochs' hold (rg_derivation_hold): forwards inside it reuse lm_head.weight's transpose (one derivation for
 * the library's loops, as before epochs), nested holds keep it, and the first forward after it makes it again.
 * The write multiplies every parameter (lm_head.weight, blocks.0.attn.q_proj.weight and all the others) by a factor
 * of 1.25, 1.75 or 2.25; forward and step also check that the write changed the results, so that equal results mean
 * the new values were read. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/gemm.h" /* rg_bf16_supported */

enum { B = 2, T = 6, P = 3 };
typedef enum { FORWARD, DECODE, STEP, TRAIN_GRAD, GENERATE } use;
static const char *const USE_NAME[] = {"forward", "decode", "step", "train", "generate"};

typedef struct {
    use u;
    int threads;
} mode;

static const mode MODES[] = {{FORWARD, 1}, {FORWARD, 2}, {DECODE, 1},     {DECODE, 2},     {STEP, 1},
                             {STEP, 2},    {TRAIN_GRAD, 1}, {TRAIN_GRAD, 2}, {GENERATE, 1}, {GENERATE, 2}};

static const int32_t TOKENS[B * T] = {1, 5, 3, 0, 6, 2, 4, 4, 2, 6, 1, 3};

/* The tiny model of encoding k (seed 5) with its matrices drawn N(0, 0.3^2): far from the init, so that attention
 * and positions matter. The same values for every call with the same k. */
static rg_model *build(rg_pos_kind k)
{
    rg_model_config cfg = tc_tiny_config(k);
    rg_model *m;
    if (rg_model_new(&cfg, 5, &m)) fail_msg("rg_model_new(%s): %s", rg_pos_name(k), rg_last_error());
    rg_rng rng;
    rg_rng_seed(&rng, 11, 0);
    for (int i = 0; i < m->params.n; i++)
        if (m->params.items[i]->ndim == 2) tc_fill_randn(m->params.items[i], &rng, 0.3);
    return m;
}

/* The write under test: plain stores into every parameter's data, nothing else. */
static void write_params(rg_model *m)
{
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        const rg_real f = (rg_real)(1.25 + 0.5 * (i % 3));
        for (int64_t j = 0; j < p->numel; j++) p->data[j] *= f;
    }
}

/* What a case compares: logits (or generated tokens) and, for a step, the parameters' gradients. */
typedef struct {
    rg_real *v;
    int64_t n;
} result;

static result copy_of(const rg_real *x, int64_t n, result r)
{
    r.v = realloc(r.v, (size_t)(r.n + n) * sizeof *r.v);
    assert_non_null(r.v);
    memcpy(r.v + r.n, x, (size_t)n * sizeof *r.v);
    r.n += n;
    return r;
}

static result logits_of(const rg_tensor *logits) { return copy_of(logits->data, logits->numel, (result){0}); }

static rg_tensor *forward(rg_ctx *c, rg_model *m, const int32_t *tok, int T_, rg_kv_cache *kv)
{
    rg_tensor *logits;
    if (rg_model_forward(c, m, tok, NULL, B, T_, kv, &logits))
        fail_msg("forward of %s: %s", rg_pos_name(m->cfg.pos), rg_last_error());
    return logits;
}

/* One training step's forward, loss and backward (gradients zeroed first): the logits and every gradient. */
static result step(rg_ctx *c, rg_model *m)
{
    rg_params_zero_grad(&m->params);
    rg_ctx_reset(c);
    rg_tensor *logits = forward(c, m, TOKENS, T, NULL);
    rg_backward(c, rg_cross_entropy(c, logits, TOKENS, -100), NULL);
    result r = logits_of(logits);
    for (int i = 0; i < m->params.n; i++) r = copy_of(m->params.items[i]->grad, m->params.items[i]->numel, r);
    return r;
}

/* The library's step without the update: rows of lengths 6 and 4, one per micro-batch (the loss and every
 * gradient). */
static result train_grad(rg_model *m)
{
    static const int LENGTHS[B] = {6, 4};
    int32_t targets[B * T];
    for (int i = 0; i < B * T; i++) targets[i] = i % T < LENGTHS[i / T] ? TOKENS[(i + 1) % (B * T)] : -100;
    rg_batch b = {.tokens = TOKENS, .targets = targets, .lengths = LENGTHS, .B = B, .T = T};
    rg_step_config cfg = {.micro_batches = 2, .ignore_index = -100};
    rg_trainer tr;
    rg_step_stats st;
    assert_int_equal(rg_trainer_init(&tr), RG_OK);
    if (rg_train_grad(&tr, m, &b, &cfg, &st)) fail_msg("train_grad: %s", rg_last_error());
    rg_trainer_free(&tr);
    result r = copy_of(&(rg_real){(rg_real)st.loss}, 1, (result){0});
    for (int i = 0; i < m->params.n; i++) r = copy_of(m->params.items[i]->grad, m->params.items[i]->numel, r);
    return r;
}

static result generate(rg_model *m)
{
    enum { G = 4 };
    int32_t out[B * G];
    if (rg_generate(m, TOKENS, B, P, G, 0, NULL, B, out)) fail_msg("generate: %s", rg_last_error());
    result r = {0};
    for (int i = 0; i < B * G; i++) r = copy_of(&(rg_real){(rg_real)out[i]}, 1, r);
    return r;
}

/* The prompt and the first decoded token on kv: the logits of that token. */
static rg_tensor *decode_two(rg_ctx *c, rg_model *m, rg_kv_cache *kv)
{
    forward(c, m, TOKENS, P, kv);
    return forward(c, m, TOKENS + P, 1, kv);
}

/* The results after "use the model, write, use it again" (*before: those of the first use, for the check that the
 * write matters); when fresh, a new model given the written values before its first use. */
static result run(rg_pos_kind k, use u, bool fresh, result *before)
{
    rg_model *m = build(k), *w = NULL;
    rg_ctx *c = rg_ctx_new();
    result r = {0};
    rg_kv_cache kv;
    if (u == DECODE) assert_int_equal(rg_kv_cache_init(&kv, m, B, P + 2), RG_OK);
    if (u != STEP) rg_set_grad_enabled(c, false);
    if (!fresh) { /* the first use, which leaves whatever the library derives from the values */
        if (u == FORWARD) *before = logits_of(forward(c, m, TOKENS, T, NULL));
        if (u == DECODE) *before = logits_of(decode_two(c, m, &kv));
        if (u == STEP) *before = step(c, m);
        if (u == TRAIN_GRAD) *before = train_grad(m);
        if (u == GENERATE) *before = generate(m);
        write_params(m);
        w = m;
    } else {
        if (u == DECODE) decode_two(c, m, &kv); /* the cache holds the old values' keys, as in the written run */
        w = build(k);
        write_params(w);
    }
    if (u != DECODE) rg_ctx_reset(c); /* decoding: the forward alone must notice the write */
    if (u == FORWARD) r = logits_of(forward(c, w, TOKENS, T, NULL));
    if (u == DECODE) r = logits_of(forward(c, w, TOKENS + P + 1, 1, &kv));
    if (u == STEP) r = step(c, w);
    if (u == TRAIN_GRAD) r = train_grad(w);
    if (u == GENERATE) r = generate(w);
    if (u == DECODE) rg_kv_cache_free(&kv);
    rg_ctx_free(c);
    if (w != m) rg_model_free(w);
    rg_model_free(m);
    return r;
}

/* True if the written model's results equal the fresh model's bit for bit; else prints the first difference. */
static bool check_case(rg_pos_kind k, const mode *md, rg_precision prec)
{
    const char *name = rg_pos_name(k);
    result before = {0}, got = run(k, md->u, false, &before), want = run(k, md->u, true, NULL);
    assert_int_equal(got.n, want.n);
    for (int64_t i = 0; i < want.n; i++)
        if (!isfinite(want.v[i])) fail_msg("%s %s: a result of the written model is not finite", name,
                                           USE_NAME[md->u]);
    /* before and after the write read the same tokens */
    bool same_input = md->u == FORWARD || md->u == STEP || md->u == TRAIN_GRAD;
    if (same_input && !memcmp(before.v, want.v, (size_t)want.n * sizeof *want.v))
        fail_msg("%s %s: the write does not change the results (the case could not fail)", name, USE_NAME[md->u]);
    int64_t i = 0;
    while (i < want.n && !memcmp(&got.v[i], &want.v[i], sizeof *got.v)) i++;
    if (i < want.n)
        printf("%-18s %-8s %s, %d thread(s): result %lld after the write is %.9g, a fresh model with the same "
               "values gives %.9g\n", name, USE_NAME[md->u], rg_precision_name(prec), md->threads, (long long)i,
               (double)got.v[i], (double)want.v[i]);
    free(before.v), free(got.v), free(want.v);
    return i == want.n;
}

static void run_all(rg_precision prec)
{
    int n = 0, bad = 0;
    for (size_t i = 0; i < sizeof MODES / sizeof *MODES; i++) {
        rg_set_num_threads(MODES[i].threads);
        assert_int_equal(rg_set_linear_precision(prec), RG_OK);
        for (int k = 0; k < rg_pos_count(); k++, n++) bad += !check_case((rg_pos_kind)k, &MODES[i], prec);
        rg_set_num_threads(1);
        assert_int_equal(rg_set_linear_precision(RG_PRECISION_FP32), RG_OK);
    }
    print_message("%s: %d cases (%d encodings x %d uses and thread counts), %d differ from a fresh model\n",
                  rg_precision_name(prec), n, rg_pos_count(), (int)(sizeof MODES / sizeof *MODES), bad);
    if (bad) fail_msg("%s: %d of %d cases read stale values after a direct write", rg_precision_name(prec), bad, n);
}

static void test_hold(void **state)
{
    rg_model *m = build(RG_POS_ROPE);
    rg_tensor *w = m->lm_head;
    if (!rg_gemm_transposes_b(B * T, w->shape[0], w->shape[1])) {
        printf("skipped: lm_head's product does not use a kept transpose here (RG_GEMM=blas?)\n");
        rg_model_free(m);
        skip();
        return;
    }
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_derivation_hold(true);
    forward(c, m, TOKENS, T, NULL);
    const uint64_t made = w->transposed.epoch;
    rg_derivation_hold(true); /* nested */
    rg_ctx_reset(c);
    forward(c, m, TOKENS, T, NULL);
    rg_derivation_hold(false);
    rg_ctx_reset(c);
    forward(c, m, TOKENS, T, NULL);
    assert_true(rg_derived_current(w, &w->transposed));
    assert_true(w->transposed.epoch == made); /* not made again inside the hold */
    rg_derivation_hold(false);
    forward(c, m, TOKENS, T, NULL);
    assert_true(rg_derived_current(w, &w->transposed));
    assert_true(w->transposed.epoch != made); /* made again by the first forward after it */
    rg_ctx_free(c);
    rg_model_free(m);
}

static void test_fp32(void **state) { run_all(RG_PRECISION_FP32); }

static void test_bf16(void **state)
{
    char why[256];
    if (!rg_bf16_supported(why, sizeof why)) {
        printf("bf16 cases skipped: %s\n", why);
        skip();
        return;
    }
    run_all(RG_PRECISION_BF16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hold),
        cmocka_unit_test(test_fp32),
        cmocka_unit_test(test_bf16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
