/* tricks.c: the literature's task-structure tricks for length generalization as registered tasks, each a variant
 * of an ordering task (rg_task_desc.base) trained and evaluated by the same engine at the same budget
 * (docs/tricks.md). Declared in tricks.h.
 *
 * Index hints (Zhou et al. 2024, "Transformers Can Achieve Length Generalization But Not Robustly", arXiv
 * 2402.09371: "a6b7c5+a1b6c3=a7b3c9"): every content symbol is preceded by an index token h_k (tokens
 * RG_HINT_TOK0 + k, k in 0..RG_HINT_COUNT-1), the input's hints consecutive from a start s drawn uniformly from
 * 0..RG_HINT_COUNT-n (in training and in the evaluation sets alike: the sample's first draw), and each output
 * symbol preceded by the hint of the input symbol it copies:
 *
 *     copy_hints:     BOS h_s x_1 h_{s+1} x_2 .. h_{s+n-1} x_n SEP   h_s y_1 .. h_{s+n-1} y_n EOS
 *     reverse_hints:  (same prompt)                             SEP   h_{s+n-1} y_1 .. h_s y_n EOS   (y_j = x_{n+1-j})
 *
 *   prompt 2n+2 tokens, target 2n+1 (the model generates the hints too, as in Zhou et al.); vocabulary 30 + 128.
 *   Scored on every target token (hints included: exact match is comparable with the base task, token accuracy
 *   is not). n > RG_HINT_COUNT is refused (RG_ERR_ARG).
 *
 * Position coupling (Cho et al. 2024, "Position Coupling: Improving Length Generalization of Arithmetic
 * Transformers Using Task Structure"; HanseulJo/position-coupling configs/task/copy_coupled.yaml, randomize: True):
 * the tokens of copy / reverse (the same samples as the base task), with position ids that give output token y_j
 * the id of the input token it copies, from a start offset s:
 *
 *     token         BOS  x_1 .. x_n    SEP     y_1 .. y_n               EOS
 *     copy_coupled  s    s+1 .. s+n    s       s+1 .. s+n               s+n+1
 *     reverse_coup. s    s+1 .. s+n    s+n+1   s+n .. s+1  (y_j: s+n+1-j)  s
 *
 *   so the token predicting y_j (SEP or y_{j-1}) sits one id before (copy) or after (reverse) x_j's (x_{n+1-j}'s).
 *   Training draws s uniformly from 0..RG_COUPLED_MAX_POS-n-2 (ids < RG_COUPLED_MAX_POS = 128, at least twice
 *   the default largest test n = 64, as Cho et al.'s maxpos 301 for tests to 100); evaluation uses s = 0. */
#include "tricks.h"
#include "task_internal.h"

#include <string.h>

/* ------------------------------------------------------------------ index hints */

static int hints_prompt_len(int n) { return 2 * n + 2; }
static int hints_target_len(int n) { return 2 * n + 1; }

static rg_status hints_sample(const rg_task_desc *d, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    if (n > RG_HINT_COUNT)
        return rg_error(RG_ERR_ARG, "task '%s': n = %d needs more than its %d index tokens", d->name, n, RG_HINT_COUNT);
    bool reverse = d->user != NULL;
    int s = (int)rg_rng_below(rng, (uint32_t)(RG_HINT_COUNT - n + 1));
    prompt[0] = RG_TOK_BOS;
    for (int k = 0; k < n; k++) {
        prompt[1 + 2 * k] = RG_HINT_TOK0 + s + k;
        prompt[2 + 2 * k] = RG_TOK_SYM0 + (int32_t)rg_rng_below(rng, RG_TASK_NSYM);
    }
    prompt[2 * n + 1] = RG_TOK_SEP;
    for (int j = 0; j < n; j++) {
        int k = reverse ? n - 1 - j : j; /* the input index output j copies */
        target[2 * j] = prompt[1 + 2 * k];
        target[2 * j + 1] = prompt[2 + 2 * k];
    }
    target[2 * n] = RG_TOK_EOS;
    return RG_OK;
}

static char hints_token_char(int32_t tok) { return tok >= RG_HINT_TOK0 ? '#' : rg_task_token_char(tok); }

static int reverse_flag;
const rg_task_desc rg_task_desc_copy_hints = {
    .name = "copy_hints", .summary = "copy with index hints before every symbol (Zhou et al. 2024)",
    .vocab_size = RG_HINT_VOCAB, .prompt_len = hints_prompt_len, .target_len = hints_target_len,
    .sample = hints_sample, .token_char = hints_token_char, .base = "copy", .flags = RG_TASK_OPT_IN};
const rg_task_desc rg_task_desc_reverse_hints = {
    .name = "reverse_hints", .summary = "reverse with index hints before every symbol (Zhou et al. 2024)",
    .vocab_size = RG_HINT_VOCAB, .prompt_len = hints_prompt_len, .target_len = hints_target_len,
    .sample = hints_sample, .token_char = hints_token_char, .user = &reverse_flag, .base = "reverse",
    .flags = RG_TASK_OPT_IN};

/* ------------------------------------------------------------------ position coupling */

static int coupled_prompt_len(int n) { return n + 2; }
static int coupled_target_len(int n) { return n + 1; }

static rg_status coupled_sample(const rg_task_desc *d, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    const rg_task_desc *base = d->user ? &rg_task_desc_reverse : &rg_task_desc_copy;
    return base->sample(base, rng, n, prompt, target);
}

rg_status rg_coupled_positions(bool reverse, int n, int s, int32_t *pos)
{
    if (n < 1 || s < 0 || (int64_t)s + n + 2 > RG_TASK_MAX_POSITION)
        return rg_error(RG_ERR_ARG, "coupled positions: n = %d, start %d (ids must stay below %d)", n, s,
                        RG_TASK_MAX_POSITION);
    pos[0] = s;
    for (int i = 1; i <= n; i++) pos[i] = s + i;
    pos[n + 1] = reverse ? s + n + 1 : s;
    for (int j = 1; j <= n; j++) pos[n + 1 + j] = reverse ? s + n + 1 - j : s + j;
    pos[2 * n + 2] = reverse ? s : s + n + 1;
    return RG_OK;
}

static rg_status coupled_positions(const rg_task_desc *d, rg_rng *rng, int n, int32_t *pos)
{
    int s = 0;
    if (rng) {
        if (n + 2 > RG_COUPLED_MAX_POS)
            return rg_error(RG_ERR_ARG, "task '%s': training n = %d needs more than its %d position ids", d->name, n,
                            RG_COUPLED_MAX_POS);
        s = (int)rg_rng_below(rng, (uint32_t)(RG_COUPLED_MAX_POS - n - 1));
    }
    return rg_coupled_positions(d->user != NULL, n, s, pos);
}

const rg_task_desc rg_task_desc_copy_coupled = {
    .name = "copy_coupled", .summary = "copy with position coupling: y_j at x_j's position id (Cho et al. 2024)",
    .vocab_size = RG_TASK_VOCAB, .prompt_len = coupled_prompt_len, .target_len = coupled_target_len,
    .sample = coupled_sample, .token_char = rg_task_token_char, .positions = coupled_positions, .base = "copy",
    .flags = RG_TASK_OPT_IN};
const rg_task_desc rg_task_desc_reverse_coupled = {
    .name = "reverse_coupled",
    .summary = "reverse with position coupling: y_j at x_{n+1-j}'s position id (Cho et al. 2024)",
    .vocab_size = RG_TASK_VOCAB, .prompt_len = coupled_prompt_len, .target_len = coupled_target_len,
    .sample = coupled_sample, .token_char = rg_task_token_char, .positions = coupled_positions,
    .user = &reverse_flag, .base = "reverse", .flags = RG_TASK_OPT_IN};

rg_status rg_task_register_tricks(void)
{
    const rg_task_desc *all[] = {&rg_task_desc_copy_hints, &rg_task_desc_reverse_hints, &rg_task_desc_copy_coupled,
                                 &rg_task_desc_reverse_coupled};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        rg_status st = rg_task_register(all[i], NULL);
        if (st) return st;
    }
    return RG_OK;
}
