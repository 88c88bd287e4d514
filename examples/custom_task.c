/* custom_task.c: a task of one's own in the experiment engine, written against the installed headers only (as a
 * user's program outside the repository would be; docs/extending.md walks through it). The task is associative
 * recall (Ba et al. 2016, "Using Fast Weights to Attend to the Recent Past"; the "MQAR" family of Arora et al.
 * 2023 "Zoology"): the prompt lists n key-value pairs and then a query key, the model must answer the query's
 * value, then EOS.
 *
 *     position  0    1   2   ..  2n-1  2n    2n+1  2n+2     then the target
 *     token     BOS  k_1 v_1 ..  k_n   v_n   SEP   q        v EOS
 *
 * Keys are the letters a..z (tokens 4..29; they may repeat: the answer is the value of q's last occurrence), values
 * the digits 0..9 (tokens 30..39), q is the key of a uniformly drawn pair. A sample of length n has 2n+3 prompt
 * tokens and 2 target tokens. The score hook recomputes the answer from the prompt (it does not trust `expected`).
 *
 * The program registers the task and a user encoding, "alibi-learned" (examples/alibi_learned.h, shared with
 * examples/custom_encoding.c), then hands its command line to the engine: every train_order option works, with
 * `--task recall` (or `--task recall,copy` for rows beside a built-in task), `--pos alibi-learned,rope` (rows beside
 * a built-in encoding), and so do --eval CKPT, --compare and --replot. Build, in the repository: `make`
 * (build/examples/custom_task); installed, with alibi_learned.h beside custom_task.c:
 *     cc custom_task.c $(pkg-config --cflags --libs ropegrad) -o custom_task
 * Run: build/examples/custom_task --task recall,copy --pos alibi-learned,rope --steps 300 --train-len 8 \
 *          --test-lens 8,16 --out out/recall
 */
#include <ropegrad/ropegrad.h>
#include <ropegrad/task/task.h>
#include <ropegrad/engine/engine.h>

#include "alibi_learned.h"

#include <stdio.h>

enum { KEY0 = RG_TOK_SYM0, N_KEYS = 26, VAL0 = KEY0 + N_KEYS, N_VALS = 10, RECALL_VOCAB = VAL0 + N_VALS };

static int recall_prompt_len(int n) { return 2 * n + 3; }
static int recall_target_len(int n) { return 2; }

/* The value of the last occurrence of key q among the n pairs of prompt (BOS k_1 v_1 .. k_n v_n SEP q), or -1. */
static int32_t recall_answer(const int32_t *prompt, int n, int32_t q)
{
    int32_t v = -1;
    for (int i = 0; i < n; i++)
        if (prompt[1 + 2 * i] == q) v = prompt[2 + 2 * i];
    return v;
}

static rg_status recall_sample(const rg_task_desc *task, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    prompt[0] = RG_TOK_BOS;
    for (int i = 0; i < n; i++) {
        prompt[1 + 2 * i] = KEY0 + (int32_t)rg_rng_below(rng, N_KEYS);
        prompt[2 + 2 * i] = VAL0 + (int32_t)rg_rng_below(rng, N_VALS);
    }
    prompt[2 * n + 1] = RG_TOK_SEP;
    int32_t q = prompt[1 + 2 * (int)rg_rng_below(rng, (uint32_t)n)];
    prompt[2 * n + 2] = q;
    target[0] = recall_answer(prompt, n, q);
    target[1] = RG_TOK_EOS;
    return RG_OK;
}

/* Right tokens of a generated answer: the value (against the prompt's own answer) and the EOS after it. */
static int recall_score(const rg_task_desc *task, int n, const int32_t *prompt, const int32_t *gen,
                        const int32_t *expected)
{
    return (gen[0] == recall_answer(prompt, n, prompt[2 * n + 2])) + (gen[1] == RG_TOK_EOS);
}

static char recall_char(int32_t tok)
{
    if (tok >= VAL0 && tok < VAL0 + N_VALS) return (char)('0' + (tok - VAL0));
    return rg_task_token_char(tok); /* ^ | $ _ and the letters */
}

static const rg_task_desc recall = {
    .name = "recall",
    .summary = "associative recall: n key-value pairs, a query key; answer its value",
    .vocab_size = RECALL_VOCAB,
    .prompt_len = recall_prompt_len,
    .target_len = recall_target_len,
    .sample = recall_sample,
    .score = recall_score,
    .token_char = recall_char,
};

int main(int argc, char **argv)
{
    if (rg_task_register(&recall, NULL) != RG_OK || rg_pos_register(&ALIBI_LEARNED, NULL) != RG_OK) {
        fprintf(stderr, "custom_task: %s\n", rg_last_error());
        return 1;
    }
    return rg_engine_main(argc, argv);
}
