/* custom_encoding.c: a position encoding that is not built in, written against the public header ropegrad.h only,
 * registered with rg_pos_register, trained on a copy task, saved as a checkpoint and reloaded (docs/extending.md,
 * "A new encoding", walks through it). The encoding, "alibi-learned" (ALiBi's bias with learned slopes), lives in
 * examples/alibi_learned.h, shared with examples/custom_task.c. Shapes: tokens, targets int32 [B, T].
 * Usage: custom_encoding [--steps N] [--out DIR]: N steps (default 300); the checkpoint is DIR/alibi-learned.h5
 * (default: a new folder /tmp/rg_custom_XXXXXX; an existing file is never replaced).
 * Exit status: 0 when the loss fell, the slopes moved (their gradient is used) and the reloaded checkpoint gives
 * the same logits bit for bit; 1 otherwise; 2 bad usage. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp: the compile line of docs/install.md is a plain -std=c11 one */
#include "alibi_learned.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ the program */

enum { N = 6, T = 2 * N + 1, B = 16, V = 11, SEP = 10 };

/* a copy batch: N symbols, SEP, the same N symbols; only the copied half is counted */
static void copy_batch(rg_rng *rng, int32_t *tokens, int32_t *targets)
{
    for (int b = 0; b < B; b++) {
        int32_t *x = tokens + b * T, *y = targets + b * T;
        for (int i = 0; i < N; i++) x[i] = x[N + 1 + i] = (int32_t)rg_rng_below(rng, SEP);
        x[N] = SEP;
        for (int t = 0; t < T; t++) y[t] = (t >= N && t + 1 < T) ? x[t + 1] : -100;
    }
}

static int usage(const char *msg)
{
    fprintf(stderr, "custom_encoding: %s\nusage: custom_encoding [--steps N (1..100000)] [--out DIR]\n", msg);
    return 2;
}

/* Trains m for `steps` steps; *first and *last the first and the smoothed last loss. 0, or 1 on failure. */
static int train(rg_model *m, rg_adamw *opt, int steps, double *first, double *last)
{
    rg_trainer tr;
    if (rg_trainer_init(&tr)) return 1;
    rg_rng rng;
    rg_rng_seed(&rng, 42, 0);
    int32_t tokens[B * T], targets[B * T];
    for (int step = 0; step < steps; step++) {
        copy_batch(&rng, tokens, targets);
        rg_batch batch = {tokens, targets, NULL, B, T, NULL, NULL};
        rg_step_config sc = {1, rg_lr_schedule(step, 3e-3, 20, steps, 0.1), 1.0, -100, NULL, 0};
        rg_step_stats st;
        if (rg_train_step(&tr, m, opt, &batch, &sc, &st)) {
            fprintf(stderr, "custom_encoding: step %d: %s\n", step, rg_last_error());
            rg_trainer_free(&tr);
            return 1;
        }
        if (step == 0) *first = *last = st.loss;
        *last = step < 20 ? st.loss : 0.9 * *last + 0.1 * st.loss;
        if (step % 50 == 0 || step == steps - 1) printf("step %4d  loss %.4f\n", step, *last);
    }
    rg_trainer_free(&tr);
    return 0;
}

/* logits of one fixed batch */
static rg_status logits_of(rg_model *m, rg_ctx *c, rg_tensor **out)
{
    rg_rng rng;
    rg_rng_seed(&rng, 7, 0);
    int32_t tokens[B * T], targets[B * T];
    copy_batch(&rng, tokens, targets);
    rg_ctx_reset(c);
    return rg_model_forward(c, m, tokens, NULL, B, T, NULL, out);
}

/* Reloads path into a model built from its own config; compares its logits with m's bit for bit. 0 or 1. */
static int reload_and_compare(const char *path, rg_model *m)
{
    rg_model_config cfg;
    rg_run_state rs;
    rg_model *m2 = NULL;
    if (rg_checkpoint_read_config(path, &cfg, &rs) || rg_model_new(&cfg, 99, &m2) ||
        rg_checkpoint_load(path, m2, NULL, NULL)) {
        fprintf(stderr, "custom_encoding: reload: %s\n", rg_last_error());
        rg_model_free(m2);
        return 1;
    }
    printf("reloaded %s: pos_encoding %s, alibi_learned_scale %g, step %lld\n", path, rg_pos_name(cfg.pos),
           rg_pos_config_get(&cfg, "alibi_learned_scale"), (long long)rs.step);
    rg_ctx *c1 = rg_ctx_new(), *c2 = rg_ctx_new();
    rg_set_grad_enabled(c1, false);
    rg_set_grad_enabled(c2, false);
    rg_tensor *a, *b;
    int bad = logits_of(m, c1, &a) || logits_of(m2, c2, &b) ||
              memcmp(a->data, b->data, (size_t)a->numel * sizeof(rg_real)) != 0;
    if (bad) fprintf(stderr, "custom_encoding: the reloaded model's logits differ\n");
    else printf("reloaded logits equal bit for bit (%lld values)\n", (long long)a->numel);
    rg_ctx_free(c1);
    rg_ctx_free(c2);
    rg_model_free(m2);
    return bad;
}

int main(int argc, char **argv)
{
    int steps = 300;
    char dir[4096] = "";
    static const struct option lo[] = {{"steps", required_argument, NULL, 's'}, {"out", required_argument, NULL, 'o'},
                                       {NULL, 0, NULL, 0}};
    for (int ch; (ch = getopt_long(argc, argv, "", lo, NULL)) != -1;) {
        char *end;
        if (ch == 's') {
            long v = strtol(optarg, &end, 10);
            if (*end || end == optarg || v < 1 || v > 100000) return usage("--steps takes an integer in 1..100000");
            steps = (int)v;
        } else if (ch == 'o' && strlen(optarg) + 32 < sizeof dir) {
            snprintf(dir, sizeof dir, "%s", optarg);
        } else {
            return usage("unknown option or a path too long");
        }
    }
    if (optind < argc) return usage("unexpected argument");
    if (!dir[0] && !mkdtemp(strcpy(dir, "/tmp/rg_custom_XXXXXX"))) return usage("cannot make a folder in /tmp");
    mkdir(dir, 0777); /* --out DIR: made if missing (an error shows at the save) */
    char path[4200];
    snprintf(path, sizeof path, "%s/alibi-learned.h5", dir);
    struct stat sb;
    if (stat(path, &sb) == 0) return usage("the checkpoint exists already (choose another --out)");

    /* 1. register the encoding, 2. name it in the config and set its setting */
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = V, cfg.d_model = 32, cfg.n_heads = 4, cfg.d_ff = 64, cfg.max_len = T;
    if (rg_pos_register(&ALIBI_LEARNED, NULL) || rg_pos_parse("alibi-learned", &cfg.pos) ||
        rg_pos_config_set(&cfg, "alibi_learned_scale", 0.5)) {
        fprintf(stderr, "custom_encoding: %s\n", rg_last_error());
        return 1;
    }
    /* 3. build, train, save */
    rg_model *m;
    rg_adamw opt;
    if (rg_model_new(&cfg, 1234, &m) || rg_adamw_init(&opt, &m->params, 0.9, 0.98, 1e-8, 0.01)) {
        fprintf(stderr, "custom_encoding: setup: %s\n", rg_last_error());
        return 1;
    }
    rg_tensor *s0 = rg_params_find(&m->params, "blocks.0.attn.slopes");
    rg_real init0 = s0->data[0];
    double first = 0, last = 0;
    int bad = train(m, &opt, steps, &first, &last);
    rg_run_state rs;
    rg_run_state_init(&rs);
    rs.step = steps;
    if (!bad && rg_checkpoint_save(path, m, &opt, &rs)) {
        fprintf(stderr, "custom_encoding: save: %s\n", rg_last_error());
        bad = 1;
    }
    printf("slopes of layer 0, head 0: %.6f -> %.6f; loss %.4f -> %.4f\n", init0, s0->data[0], first, last);
    if (!bad && (s0->data[0] == init0 || !(last < first))) {
        fprintf(stderr, "custom_encoding: the slopes did not move or the loss did not fall\n");
        bad = 1;
    }
    /* 4. reload into a model built from the file's config */
    if (!bad) bad = reload_and_compare(path, m);
    rg_adamw_free(&opt);
    rg_model_free(m);
    return bad ? 1 : 0;
}
