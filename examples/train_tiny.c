/* train_tiny.c: the template training script. A small transformer learns to copy: each sequence is 6 random
 * symbols, a separator, then the same 6 symbols; the loss counts only the copied half. Shapes: tokens and
 * targets int32 [B, T], logits [B, T, V]. Build: make; run: ./build/examples/train_tiny (a few seconds). */
#include "ropegrad.h"

#include <stdio.h>

enum { N = 6, T = 2 * N + 1, B = 16, V = 11, SEP = 10, STEPS = 400, PRINT_EVERY = 50 };

int main(void)
{
    rg_model_config cfg = rg_model_config_default(); /* the reference model; shrink it and pick RoPE */
    cfg.vocab_size = V;
    cfg.d_model = 32;
    cfg.n_heads = 4;
    cfg.d_ff = 64;
    cfg.max_len = T;
    cfg.pos = RG_POS_ROPE;
    rg_model *m;
    rg_adamw opt;
    if (rg_model_new(&cfg, 1234, &m) || rg_adamw_init(&opt, &m->params, 0.9, 0.98, 1e-8, 0.01)) {
        fprintf(stderr, "setup failed: %s\n", rg_last_error());
        return 1;
    }
    rg_trainer tr; /* the step's context (intermediates, reset every micro-batch) and buffers */
    rg_trainer_init(&tr);
    rg_rng rng;
    rg_rng_seed(&rng, 42, 0);
    int32_t tokens[B * T], targets[B * T];
    double first = 0, recent = 0;
    for (int step = 0; step < STEPS; step++) {
        for (int b = 0; b < B; b++) { /* a fresh batch: targets are the next token, -100 = not counted */
            int32_t *x = tokens + b * T, *y = targets + b * T;
            for (int i = 0; i < N; i++) x[i] = x[N + 1 + i] = (int32_t)rg_rng_below(&rng, SEP);
            x[N] = SEP;
            for (int t = 0; t < T; t++) y[t] = (t >= N && t + 1 < T) ? x[t + 1] : -100;
        }
        /* zero_grad, forward, cross-entropy, backward, clip 1.0, AdamW: every row is T long (lengths NULL),
         * one micro-batch */
        rg_batch batch = {tokens, targets, NULL, B, T, NULL, NULL};
        rg_step_config sc = {1, rg_lr_schedule(step, 3e-3, 20, STEPS, 0.1), 1.0, -100, NULL, 0};
        rg_step_stats st;
        if (rg_train_step(&tr, m, &opt, &batch, &sc, &st)) {
            fprintf(stderr, "step failed: %s\n", rg_last_error());
            return 1;
        }
        double l = st.loss;
        if (step == 0) first = l;
        recent = step < PRINT_EVERY ? l : 0.9 * recent + 0.1 * l; /* smoothed */
        if (step % PRINT_EVERY == 0 || step == STEPS - 1) printf("step %4d  loss %.4f\n", step, recent);
    }
    rg_trainer_free(&tr);
    rg_adamw_free(&opt);
    rg_model_free(m);
    if (!(recent < 0.5 * first)) { /* ln(10) = 2.30 at the start */
        fprintf(stderr, "the loss did not fall enough (%.4f -> %.4f)\n", first, recent);
        return 1;
    }
    return 0;
}
