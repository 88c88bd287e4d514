/* plugin_xpos_addition.c: a plugin for the stock train_order (plugin.h, docs/extending.md): one shared library that
 * registers a position encoding, "xpos", and a task, "addition", written against the installed headers only.
 *
 * xpos: xPos (Sun et al. 2022, "A Length-Extrapolatable Transformer", sec. 3.2; torchscale's XPOS): RoPE's
 * interleaved rotation with a per-pair exponential decay. Pair i of the rotary dimension d (i < d/2) has
 *     zeta_i = (2i/d + gamma) / (1 + gamma)            (gamma = xpos_gamma, 0.4)
 * and the query at position p is rotated and scaled by zeta_i^(p / B), the key at position p by zeta_i^(-p / B)
 * (B = xpos_scale_base, 512), so that q_m . k_n carries zeta^((m - n) / B): a relative encoding whose long-distance
 * scores decay. Positions are used as they are (torchscale centres them on the sequence, a constant shift that
 * cancels in q . k); zeta^(p/B) stays above 1e-3 for p < 2800 at the defaults. Built on the public rope helpers:
 * rg_rope_table_new gives RoPE's cos/sin table (HF rope_scaling applied, so --rope-scaling rows apply to xpos too),
 * which is scaled per pair into a query table and a key table, and rg_pos_rope rotates with each (its backward, the
 * transposed rotation, is the backward of the scaled one too). The conformance check (train_order --plugin THIS
 * --check-pos xpos) checks all of it.
 *
 * addition: multi-digit addition of two n-digit numbers (leading zeros allowed), the answer's n + 1 digits least
 * significant first (the "reversed" format of Lee et al. 2023, "Teaching Arithmetic to Small Transformers", under
 * which each output digit depends on the two input digits of its place and the carry):
 *     BOS a_1 .. a_n + b_1 .. b_n =    then the target   s_0 s_1 .. s_n EOS
 * 2n + 3 prompt tokens and n + 2 target tokens (3n + 5 in all).
 *
 * Build (the Makefile does it: build/examples/plugin_xpos_addition.so), installed:
 *     cc -shared -fPIC -std=c11 $(pkg-config --cflags ropegrad) plugin_xpos_addition.c -o xpos_addition.so
 * Run:
 *     train_order --plugin ./xpos_addition.so --task addition --pos xpos,rope,alibi --train-len 4 --test-lens 4,8
 */
#include <ropegrad/ropegrad.h>
#include <ropegrad/task/task.h>
#include <ropegrad/engine/plugin.h>

#include <math.h>

RG_PLUGIN_MAGIC;

/* ------------------------------------------------------------------ xpos */

static const rg_pos_setting XPOS_SETTINGS[] = {
    {"xpos_gamma", RG_POS_SETTING_DOUBLE, 0.4, 0, 100, "xPos gamma: zeta_i = (2i/d + gamma) / (1 + gamma)"},
    {"xpos_scale_base", RG_POS_SETTING_DOUBLE, 512, 1, 1e9, "xPos scale base B: the decay zeta^(p/B) (Sun et al.)"},
};

typedef struct {
    rg_rope_table q, k;
    int n_heads;
} xpos_prep;

/* RoPE's table of the query positions, scaled into the query's (zeta^(p/B)) and the key's (zeta^(-p/B)). */
static void *xpos_prepare(rg_ctx *c, void *state, const rg_model_config *cfg, const rg_pos_summary *s)
{
    (void)state;
    int rows = s->rows_shared ? s->T : s->B * s->T;
    rg_rope_table t = rg_rope_table_new(c, cfg, s->q_pos, rows, (int64_t)s->q_max + 1);
    double gamma = rg_pos_config_get(cfg, "xpos_gamma"), base = rg_pos_config_get(cfg, "xpos_scale_base");
    xpos_prep *p = rg_arena_alloc(&c->arena, sizeof *p);
    size_t n = (size_t)rows * t.n_freq;
    rg_real *buf = rg_arena_alloc(&c->arena, 4 * n * sizeof(rg_real));
    rg_real *qc = buf, *qs = buf + n, *kc = buf + 2 * n, *ks = buf + 3 * n;
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < t.n_freq; i++) {
            double zeta = ((double)i / t.n_freq + gamma) / (1 + gamma); /* 2i/d with d = 2 n_freq */
            double up = pow(zeta, s->q_pos[r] / base);
            size_t at = (size_t)r * t.n_freq + i;
            qc[at] = (rg_real)(t.cos[at] * up);
            qs[at] = (rg_real)(t.sin[at] * up);
            kc[at] = (rg_real)(t.cos[at] / up);
            ks[at] = (rg_real)(t.sin[at] / up);
        }
    p->q = (rg_rope_table){t.n_freq, rows, qc, qs};
    p->k = (rg_rope_table){t.n_freq, rows, kc, ks};
    p->n_heads = cfg->n_heads;
    return p;
}

/* New keys sit at the query positions (pos.h: with a KV cache, k holds the new tokens only). */
static void xpos_rotate_qk(rg_ctx *c, const void *prep, rg_tensor **q, rg_tensor **k)
{
    const xpos_prep *p = prep;
    *q = rg_pos_rope(c, *q, p->n_heads, false, &p->q);
    *k = rg_pos_rope(c, *k, p->n_heads, false, &p->k);
}

static const rg_pos_encoding XPOS = {
    .name = "xpos",
    .doc = "xPos: RoPE (interleaved) with per-pair decay zeta_i^(+-p/B) on q and k (Sun et al. 2022)",
    .rope_layout = "interleaved",
    .settings = XPOS_SETTINGS,
    .n_settings = 2,
    .prepare = xpos_prepare,
    .rotate_qk = xpos_rotate_qk,
    .flags = RG_POS_ROTARY | RG_POS_RELATIVE,
};

/* ------------------------------------------------------------------ addition */

enum { DIGIT0 = RG_TOK_SYM0, PLUS = DIGIT0 + 10, ADD_VOCAB = PLUS + 1 };

static int add_prompt_len(int n) { return 2 * n + 3; }
static int add_target_len(int n) { return n + 2; }

static rg_status add_sample(const rg_task_desc *task, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    (void)task;
    prompt[0] = RG_TOK_BOS;
    for (int i = 0; i < n; i++) prompt[1 + i] = DIGIT0 + (int32_t)rg_rng_below(rng, 10);
    prompt[n + 1] = PLUS;
    for (int i = 0; i < n; i++) prompt[n + 2 + i] = DIGIT0 + (int32_t)rg_rng_below(rng, 10);
    prompt[2 * n + 2] = RG_TOK_SEP;
    int carry = 0;
    for (int j = 0; j < n; j++) { /* place j from the right: digit n-1-j of each number */
        int s = (prompt[n - j] - DIGIT0) + (prompt[2 * n + 1 - j] - DIGIT0) + carry;
        target[j] = DIGIT0 + s % 10;
        carry = s / 10;
    }
    target[n] = DIGIT0 + carry;
    target[n + 1] = RG_TOK_EOS;
    return RG_OK;
}

static char add_char(int32_t tok)
{
    if (tok >= DIGIT0 && tok < DIGIT0 + 10) return (char)('0' + (tok - DIGIT0));
    if (tok == PLUS) return '+';
    return tok == RG_TOK_SEP ? '=' : rg_task_token_char(tok);
}

static const rg_task_desc ADDITION = {
    .name = "addition",
    .summary = "two n-digit numbers; their sum's n+1 digits, least significant first (plugin example)",
    .vocab_size = ADD_VOCAB,
    .prompt_len = add_prompt_len,
    .target_len = add_target_len,
    .sample = add_sample,
    .token_char = add_char,
};

/* ------------------------------------------------------------------ the entry point */

rg_status rg_plugin_init(void)
{
    rg_status st = rg_pos_register(&XPOS, NULL);
    return st ? st : rg_task_register(&ADDITION, NULL);
}
