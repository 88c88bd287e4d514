/* run.c: one run of the experiment: train the reference model on a task with short sequences (n <= L_train),
 * checkpoint it, and evaluate it by greedy decoding on the canonical evaluation sets at every test length; RoPE
 * runs are also evaluated with each evaluation-time extension at s = (2n+3) / (2 L_train + 3). */
#include "train_order.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------ evaluation */

#define EVAL_CHUNK 64

rg_status to_evaluate(rg_model *m, const rg_evalset *es, double *exact, double *token_acc)
{
    int n = es->n, P = n + 2, G = n + 1;
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_kv_cache kv;
    rg_status st = rg_kv_cache_init(&kv, m, EVAL_CHUNK, P + G);
    if (st) { rg_ctx_free(c); return st; }
    int32_t *prompt = malloc(sizeof(int32_t) * EVAL_CHUNK * P), *gen = malloc(sizeof(int32_t) * EVAL_CHUNK * G);
    int32_t *want = malloc(sizeof(int32_t) * EVAL_CHUNK * G), *next = malloc(sizeof(int32_t) * EVAL_CHUNK);
    int32_t *argmax = malloc(sizeof(int32_t) * EVAL_CHUNK * P);
    rg_task_score score = {0};
    if (!prompt || !gen || !want || !next || !argmax) { st = rg_error(RG_ERR_NOMEM, "evaluation: out of memory"); goto done; }
    for (int s0 = 0; s0 < es->count && st == RG_OK; s0 += EVAL_CHUNK) {
        int B = es->count - s0 < EVAL_CHUNK ? es->count - s0 : EVAL_CHUNK;
        for (int b = 0; b < B; b++) {
            const int32_t *x = es->x + (int64_t)(s0 + b) * n;
            rg_task_prompt(x, n, prompt + b * P);
            rg_task_expected(es->task, x, n, want + b * G);
        }
        rg_kv_cache_reset(&kv);
        kv.batch = B;
        rg_tensor *logits;
        rg_ctx_reset(c);
        if ((st = rg_model_forward(c, m, prompt, NULL, B, P, &kv, &logits))) break;
        rg_argmax(logits, argmax); /* [B, P]: the last position of each row predicts y_1 */
        for (int b = 0; b < B; b++) gen[b * G] = next[b] = argmax[b * P + P - 1];
        for (int j = 1; j < G; j++) {
            rg_ctx_reset(c);
            if ((st = rg_model_forward(c, m, next, NULL, B, 1, &kv, &logits))) break;
            rg_argmax(logits, next);
            for (int b = 0; b < B; b++) gen[b * G + j] = next[b];
        }
        if (st == RG_OK) rg_task_score_add(&score, gen, want, B, G, NULL);
    }
    *exact = rg_task_exact_match(&score);
    *token_acc = rg_task_token_acc(&score);
done:
    free(prompt); free(gen); free(want); free(next); free(argmax);
    rg_kv_cache_free(&kv);
    rg_ctx_free(c);
    return st;
}

/* ------------------------------------------------------------------ training */

static void progress(const to_options *o, const char *tag, int64_t step, int64_t total, double loss, double tok_s,
                     double eta, bool last)
{
    if (o->quiet) return;
    if (isatty(STDERR_FILENO) && o->jobs == 1) {
        fprintf(stderr, "\r%s step %lld/%lld loss %.4f %.0f tok/s ETA %.0fs   %s", tag, (long long)step,
                (long long)total, loss, tok_s, eta, last ? "\n" : "");
    } else if (last || step % 500 == 0) {
        fprintf(stderr, "%s step %lld/%lld loss %.4f %.0f tok/s ETA %.0fs\n", tag, (long long)step, (long long)total,
                loss, tok_s, eta);
    }
}

/* Trains m from rs->step to o->steps. Returns 0 or -1. */
static int train(const to_options *o, rg_task task, rg_model *m, rg_adamw *opt, rg_run_state *rs, const char *ckpt,
                 const char *tag, double *final_loss)
{
    rg_task_batch batch;
    rg_trainer tr;
    if (rg_task_batch_alloc(&batch, o->batch, o->train_len) || rg_trainer_init(&tr)) {
        fprintf(stderr, "%s: %s\n", tag, rg_last_error());
        return -1;
    }
    rg_rng *data_rng = rg_run_state_rng(rs, "data"), *pos_rng = rg_run_state_rng(rs, "positions");
    double t0 = now_seconds(), loss_ema = NAN;
    int64_t tokens = 0, start = rs->step;
    int rc = 0;
    while (rs->step < o->steps && rc == 0) {
        rg_task_batch_sample(&batch, task, data_rng, o->batch, o->train_len);
        /* the library's step: length-sorted micro-batches, forward, loss, backward, clip, AdamW */
        rg_batch rb = {batch.tokens, batch.targets, batch.len, batch.B, batch.T};
        rg_step_config sc = {o->micro_batches, rg_lr_schedule(rs->step, o->lr, o->warmup, o->steps, o->min_lr_frac),
                             o->clip, RG_TASK_IGNORE, o->random_positions ? pos_rng : NULL, o->max_position};
        rg_step_stats ss;
        if (rg_train_step(&tr, m, opt, &rb, &sc, &ss)) {
            fprintf(stderr, "%s: train step: %s\n", tag, rg_last_error());
            rc = -1;
            break;
        }
        double l = ss.loss;
        tokens += ss.tokens;
        rs->step++;
        rs->lr.step = rs->step;
        if (!isfinite(l)) {
            fprintf(stderr, "%s: loss is %g at step %lld\n", tag, l, (long long)rs->step);
            rc = -1;
            break;
        }
        loss_ema = isnan(loss_ema) ? l : 0.98 * loss_ema + 0.02 * l;
        double el = now_seconds() - t0;
        progress(o, tag, rs->step, o->steps, loss_ema, tokens / el, el / (double)(rs->step - start) *
                 (double)(o->steps - rs->step), rs->step == o->steps);
        if (rs->step % o->ckpt_every == 0 || rs->step == o->steps) {
            if (rg_checkpoint_save(ckpt, m, opt, rs)) {
                fprintf(stderr, "%s: %s\n", tag, rg_last_error());
                rc = -1;
                break;
            }
        }
    }
    *final_loss = loss_ema;
    rg_trainer_free(&tr);
    rg_task_batch_free(&batch);
    return rc;
}

/* ------------------------------------------------------------------ one run */

int to_options_from_checkpoint(to_options *o, const char *ckpt, bool steps_given)
{
    rg_model_config cfg;
    rg_run_state rs;
    if (rg_checkpoint_read_config(ckpt, &cfg, &rs)) {
        fprintf(stderr, "train_order: %s\n", rg_last_error());
        return -1;
    }
    o->model = cfg;
    o->model.rope_ext = RG_ROPE_EXT_NONE;
    o->train_len = (int)rs.L_train;
    o->lr = rs.lr.peak;
    o->warmup = (int)rs.lr.warmup;
    o->min_lr_frac = rs.lr.min_frac;
    o->clip = rs.lr.grad_clip;
    if (!steps_given || o->eval[0]) o->steps = (int)rs.lr.total;
    const rg_run_attr *a;
    if ((a = rg_run_state_attr(&rs, "batch")) && a->type == RG_RUN_ATTR_INT) o->batch = (int)a->i;
    if ((a = rg_run_state_attr(&rs, "random_positions")) && a->type == RG_RUN_ATTR_INT) o->random_positions = a->i;
    if ((a = rg_run_state_attr(&rs, "max_position")) && a->type == RG_RUN_ATTR_INT) o->max_position = (int)a->i;
    if ((a = rg_run_state_attr(&rs, "micro_batches")) && a->type == RG_RUN_ATTR_INT && a->i >= 1 &&
        a->i <= TO_MAX_MICRO)
        o->micro_batches = (int)a->i;
    if (o->warmup > o->steps) o->warmup = o->steps;
    if (o->ckpt_every > o->steps) o->ckpt_every = o->steps;
    if (o->resume[0] && rs.step >= o->steps && !o->quiet)
        fprintf(stderr, "train_order: %s is at step %lld already (total %d): evaluating only\n", ckpt,
                (long long)rs.step, o->steps);
    return 0;
}

int to_run(const to_options *o, rg_task task, rg_pos_kind pos, int seed, const char *resume_from, bool eval_only,
           to_result *res)
{
    char tag[128], ckpt[TO_PATH + 128];
    rg_model_config cfg = o->model;
    cfg.pos = pos;
    rg_run_state rs;
    rg_run_state_init(&rs);
    if (resume_from) {
        if (rg_checkpoint_read_config(resume_from, &cfg, &rs)) {
            fprintf(stderr, "%s\n", rg_last_error());
            return -1;
        }
        if (rg_task_parse(rs.task, &task)) {
            fprintf(stderr, "%s: %s\n", resume_from, rg_last_error());
            return -1;
        }
        pos = cfg.pos;
        seed = (int)rs.seed;
        /* main() took the training settings from this checkpoint (to_options_from_checkpoint) */
    }
    snprintf(tag, sizeof tag, "%s/%s/seed%d", rg_task_name(task), rg_pos_name(pos), seed);
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/%s-%s-seed%d.h5", o->out, rg_task_name(task), rg_pos_name(pos), seed);
    rg_model *m = NULL;
    if (rg_model_new(&cfg, (uint64_t)seed, &m)) {
        fprintf(stderr, "%s: %s\n", tag, rg_last_error());
        return -1;
    }
    rg_adamw opt;
    if (rg_adamw_init(&opt, &m->params, o->beta1, o->beta2, o->eps, o->weight_decay)) {
        fprintf(stderr, "%s: %s\n", tag, rg_last_error());
        rg_model_free(m);
        return -1;
    }
    int n_res = -1;
    double final_loss = NAN, t0 = now_seconds();
    if (resume_from) {
        if (rg_checkpoint_load(resume_from, m, &opt, &rs)) {
            fprintf(stderr, "%s\n", rg_last_error());
            goto done;
        }
    } else {
        snprintf(rs.task, sizeof rs.task, "%s", rg_task_name(task));
        rs.L_train = o->train_len;
        rs.seed = (uint64_t)seed;
        rs.lr = (rg_lr_state){0, o->lr, o->warmup, o->steps, o->min_lr_frac, o->clip};
        /* the settings a resume must reuse that the run state has no field for */
        rg_run_state_set_int(&rs, "batch", o->batch);
        rg_run_state_set_int(&rs, "random_positions", o->random_positions);
        rg_run_state_set_int(&rs, "max_position", o->max_position);
        rg_run_state_set_int(&rs, "micro_batches", o->micro_batches);
        rg_rng r;
        rg_rng_seed(&r, (uint64_t)seed, 1); /* stream 1: training batches */
        rg_run_state_add_rng(&rs, "data", &r);
        rg_rng_seed(&r, (uint64_t)seed, 2); /* stream 2: randomized positions */
        rg_run_state_add_rng(&rs, "positions", &r);
    }
    rs.lr.total = o->steps; /* a resume may extend the run (--steps) */
    if (!eval_only && train(o, task, m, &opt, &rs, ckpt, tag, &final_loss)) goto done;
    double train_s = now_seconds() - t0;

    /* variants: the encoding itself, then each RoPE extension */
    bool rope = pos == RG_POS_ROPE || pos == RG_POS_ROPE_HALF;
    int n_var = 1 + (rope ? o->n_exts : 0);
    int L_tokens = 2 * (int)rs.L_train + 3;
    for (int v = 0; v < n_var; v++) {
        to_result *r = &res[v];
        memset(r, 0, sizeof *r);
        r->task = task;
        r->pos = pos;
        r->ext = v == 0 ? RG_ROPE_EXT_NONE : o->exts[v - 1];
        r->seed = seed;
        r->n_lens = o->n_test_lens;
        r->final_loss = final_loss;
        r->train_seconds = train_s;
        r->steps = rs.step;
        for (int i = 0; i < o->n_test_lens; i++) {
            int n = o->test_lens[i];
            r->lens[i] = n;
            double s = (double)(2 * n + 3) / (double)L_tokens;
            m->cfg.rope_ext = (v == 0 || s <= 1) ? RG_ROPE_EXT_NONE : r->ext;
            m->cfg.rope_scale = s > 1 ? s : 1;
            m->cfg.rope_orig_len = L_tokens;
            rg_evalset es;
            if (rg_evalset_load(o->data, rg_task_name(task), n, &es)) {
                fprintf(stderr, "%s: %s\n", tag, rg_last_error());
                goto done;
            }
            rg_status st = to_evaluate(m, &es, &r->exact[i], &r->token_acc[i]);
            rg_evalset_free(&es);
            if (st == RG_ERR_ARG && pos == RG_POS_LEARNED) {
                /* a position past the learned table: not evaluable, reported as n/a */
                r->exact[i] = r->token_acc[i] = NAN;
            } else if (st) {
                fprintf(stderr, "%s: evaluation at n=%d: %s\n", tag, n, rg_last_error());
                goto done;
            }
        }
        if (!o->quiet)
            fprintf(stderr, "%s%s%s: exact_match at n=%d: %.3f\n", tag, v ? "+" : "", v ? rg_rope_ext_name(r->ext) : "",
                    o->test_lens[0], r->exact[0]);
    }
    n_res = n_var;
done:
    rg_adamw_free(&opt);
    rg_model_free(m);
    return n_res;
}
