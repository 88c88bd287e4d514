/* gradcheck_conformance.c (float64 build): the conformance check (nn/pos_conformance.h) of every registered
 * encoding, one loop over the registry (the opt-in grid encodings included, and the example plugin's xpos, its source
 * examples/plugin_xpos_addition.c compiled in float64 and its entry point called here), each check printed with its
 * error and bound; and two mutants registered here that must fail it: one whose backward is wrong, one declared
 * relative that adds absolute positions (its shift line fails, in float32 too). The same
 * source built against the float32 library is build/tests/test_conformance_f32: the loop at float32's bounds. */
#include "common.h"
#include "nn/pos_conformance.h"
#include "engine/plugin.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the mutant: ALiBi with learned slopes and a
 * backward that forgets the sign (d/dm of -m |i-j| taken as +|i-j|) */

static void mutant_backward(rg_tensor *node)
{
    rg_tensor *m = node->src[0];
    int H = m->shape[0], T = (int)node->iarg[0], S = (int)node->iarg[1];
    const int32_t *q = node->saved, *k = node->saved2;
    rg_real *dm = rg_grad_of(m);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < S; j++) dm[h] += (rg_real)abs(q[i] - k[j]) * node->grad[((int64_t)h * T + i) * S + j];
}
static const rg_op OP_MUTANT = {"mutant_bias", mutant_backward};

typedef struct { rg_tensor *m[8]; } mutant_state;

static rg_status mutant_new(const rg_model_config *cfg, void **state)
{
    *state = calloc(1, sizeof(mutant_state));
    return *state ? RG_OK : rg_error(RG_ERR_NOMEM, "mutant: out of memory");
}

static rg_status mutant_params(void *state, const rg_model_config *cfg, rg_pos_site site, int layer, rg_params *ps,
                               rg_rng *rng)
{
    if (site != RG_POS_SITE_ATTN_BEGIN || layer >= 8) return RG_OK;
    char name[64];
    snprintf(name, sizeof name, "blocks.%d.attn.slopes", layer);
    rg_tensor **m = &((mutant_state *)state)->m[layer];
    rg_status st = rg_params_register(ps, name, 1, (int[]){cfg->n_heads}, m);
    for (int h = 0; !st && h < cfg->n_heads; h++) (*m)->data[h] = (rg_real)(0.5 / (h + 1));
    return st;
}

/* bias [H, T, S] = -m_h |q_i - k_j| of the first row's positions */
static rg_tensor *mutant_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                              rg_tensor *q, rg_tensor *k)
{
    rg_tensor *m = ((mutant_state *)state)->m[layer];
    int H = m->shape[0], T = s->T, S = s->S;
    rg_tensor *out = rg_node_new(c, &OP_MUTANT, 3, (int[]){H, T, S}, 1, &m);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < S; j++)
                out->data[((int64_t)h * T + i) * S + j] = -m->data[h] * (rg_real)abs(s->q_pos[i] - s->k_pos[j]);
    out->saved = (void *)s->q_pos;
    out->saved2 = (void *)s->k_pos;
    out->iarg[0] = T;
    out->iarg[1] = S;
    return out;
}

static const rg_pos_encoding MUTANT = {
    .name = "mutant-alibi", .doc = "learned ALiBi slopes with a wrong backward (a test of the conformance check)",
    .state_new = mutant_new, .add_params = mutant_params, .score_bias = mutant_bias, .state_free = free};

/* ------------------------------------------------------------------ the second mutant: declared relative, but its
 * input hook adds a small absolute position term (AMP sin(0.37 p + i) to element i of the embedding at position p):
 * shifting every position changes the logits by far less than float32's old fixed bound of 1e4 e (1.2e-3) and far
 * more than rounding noise. */
#define ABSOLUTE_AMP 1e-5

static rg_status absolute_input(rg_ctx *c, void *state, const rg_pos_summary *s, rg_tensor *tok, rg_tensor **h)
{
    rg_tensor *pe = rg_tensor_new(c, tok->ndim, tok->shape);
    int D = tok->shape[tok->ndim - 1];
    for (int64_t i = 0; i < pe->numel; i++) pe->data[i] = (rg_real)(ABSOLUTE_AMP * sin(0.37 * s->q_pos[i / D] + (double)(i % D)));
    *h = rg_add(c, tok, pe);
    return RG_OK;
}

static const rg_pos_encoding ABSOLUTE = {
    .name = "mutant-absolute", .doc = "absolute positions added, declared relative (a test of the conformance check)",
    .input = absolute_input, .flags = RG_POS_RELATIVE};

/* ------------------------------------------------------------------ the loop */

static void test_every_encoding(void **state)
{
    int failed_total = 0;
    for (int p = 0; p < rg_pos_count(); p++) {
        const char *name = rg_pos_name((rg_pos_kind)p);
        if (!strcmp(name, MUTANT.name) || !strcmp(name, ABSOLUTE.name)) continue;
        int failed = -1;
        rg_status st = rg_pos_conformance(name, &(rg_pos_report){stdout, NULL, NULL}, &failed);
        if (st) print_message("%s: %s\n", name, rg_last_error());
        assert_int_equal(st, RG_OK);
        failed_total += failed;
    }
    rg_pos_kind x;
    assert_int_equal(rg_pos_parse("xpos", &x), RG_OK); /* the plugin's encoding was in the loop */
    assert_int_equal(failed_total, 0);
}

/* Counts the failed lines by check name. */
typedef struct { int grad_fail, lines; } tally;
static void count_line(const rg_pos_check *l, void *user)
{
    tally *t = user;
    t->lines++;
    if (!l->pass && !strncmp(l->check, "grad", 4)) t->grad_fail++;
}

static void test_mutant_fails(void **state)
{
    tally t = {0, 0};
    int failed = 0;
    assert_int_equal(rg_pos_conformance(MUTANT.name, &(rg_pos_report){stdout, count_line, &t}, &failed), RG_OK);
    assert_true(t.lines >= 4);
    assert_int_equal(t.grad_fail, 2); /* grad score_bias and grad model */
    assert_int_equal(failed, 2);
}

/* The shift line of the absolute mutant fails, in both builds; every other line passes. */
typedef struct { int shift_fail, lines; double error, bound; } shift_tally;
static void count_shift(const rg_pos_check *l, void *user)
{
    shift_tally *t = user;
    t->lines++;
    if (strcmp(l->check, "shift")) return;
    t->shift_fail += !l->pass;
    t->error = l->error;
    t->bound = l->bound;
}

static void test_absolute_fails_shift(void **state)
{
    shift_tally t = {0, 0, 0, 0};
    int failed = 0;
    assert_int_equal(rg_pos_conformance(ABSOLUTE.name, &(rg_pos_report){stdout, count_shift, &t}, &failed), RG_OK);
    assert_true(t.lines >= 4);
    assert_int_equal(t.shift_fail, 1);
    assert_int_equal(failed, 1);
    assert_true(t.error < 1e4 * FLT_EPSILON); /* float32's old fixed bound: it would have passed */
    assert_true(10 * t.bound < t.error);      /* failed by far, not at the margin */
}

static void test_unknown_name(void **state)
{
    int failed = 7;
    assert_int_equal(rg_pos_conformance("no-such-encoding", NULL, &failed), RG_ERR_ARG);
    assert_non_null(strstr(rg_last_error(), "no-such-encoding"));
    assert_int_equal(failed, 0);
}

int main(void)
{
    if (rg_plugin_init() || rg_pos_register(&MUTANT, NULL) || rg_pos_register(&ABSOLUTE, NULL)) {
        fprintf(stderr, "%s\n", rg_last_error());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_encoding),
        cmocka_unit_test(test_mutant_fails),
        cmocka_unit_test(test_absolute_fails_shift),
        cmocka_unit_test(test_unknown_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
