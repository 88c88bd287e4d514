/* run.c: one run of the experiment: train the reference model on a task with short sequences (n <= L_train),
 * checkpoint it, log it (runs/<task>-<pos>-seed<S>/train.csv), and evaluate it by greedy decoding on the
 * evaluation sets at every test length; RoPE runs are also evaluated with each evaluation-time extension
 * (rg_model_set_rope_scaling) at s = (2n+3) / (2 L_train + 3) per test length, or at a fixed factor. A run is one
 * training variant (eng_variant): the encoding as configured, rope_theta 500000, or randomized positions. */
#include "engine/run/run.h"
#include "engine/base/clock.h"
#include "engine/base/files.h"
#include "engine/base/kill.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/sizes.h"
#include "engine/base/types.h"
#include "engine/run/evaluate.h"
#include "engine/run/lm_run.h"
#include "engine/run/mpi_transport.h"
#include "engine/run/results_file.h"
#include "engine/run/resume.h"
#include "engine/run/run_curves.h"
#include "engine/settings/plugin_load.h"
#include "engine/settings/protocol.h"
#include "engine/settings/settings.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ the held-out set (steps-to-learn) */

/* Prompts and expected continuations of the held-out set of a run (see ENG_HELDOUT_SEED), and for a +rand run the
 * positions of each sample (eval_positions, drawn once: every measurement of the run uses the same ones). */
typedef struct {
    rg_task task;
    int n_lens, lens[ENG_HELDOUT_LENS];
    int32_t *prompts[ENG_HELDOUT_LENS], *want[ENG_HELDOUT_LENS], *pos[ENG_HELDOUT_LENS];
} heldout;

static void heldout_free(heldout *h)
{
    for (int i = 0; i < ENG_HELDOUT_LENS; i++) { free(h->prompts[i]); free(h->want[i]); free(h->pos[i]); }
    memset(h, 0, sizeof *h);
}

/* random: the run trains with random positions (then seed and max_position draw the held-out positions). */
static rg_status heldout_init(heldout *h, rg_task task, int L, bool random, uint64_t seed, int max_position)
{
    memset(h, 0, sizeof *h);
    h->task = task;
    for (int q = 1; q <= ENG_HELDOUT_LENS; q++) {
        int n = rg_task_size_part(task, L, q, ENG_HELDOUT_LENS); /* ceil(q L / 4); a grid's sides so */
        if (h->n_lens && h->lens[h->n_lens - 1] == n) continue;
        int k = h->n_lens++, P = rg_task_prompt_len(task, n), G = rg_task_target_len(task, n);
        h->lens[k] = n;
        h->prompts[k] = malloc(sizeof(int32_t) * ENG_HELDOUT_COUNT * (size_t)P);
        h->want[k] = malloc(sizeof(int32_t) * ENG_HELDOUT_COUNT * (size_t)G);
        rg_status st = h->prompts[k] && h->want[k] ? RG_OK : rg_error(RG_ERR_NOMEM, "held-out set: out of memory");
        if (st == RG_OK)
            st = eng_eval_positions(random, seed, EVALPOS_HELDOUT, task, n, ENG_HELDOUT_COUNT, max_position, &h->pos[k]);
        rg_rng rng;
        rg_rng_seed(&rng, ENG_HELDOUT_SEED, rg_task_stream(task, n));
        for (int i = 0; i < ENG_HELDOUT_COUNT && st == RG_OK; i++)
            st = rg_task_draw(task, &rng, n, h->prompts[k] + (int64_t)i * P, h->want[k] + (int64_t)i * G);
        if (st) { heldout_free(h); return st; }
    }
    return RG_OK;
}

/* Exact match and token accuracy over the whole held-out set (each length has the same number of samples). */
static rg_status heldout_eval(const heldout *h, rg_model *m, double *exact, double *token_acc)
{
    *exact = *token_acc = 0;
    double tokens = 0;
    for (int k = 0; k < h->n_lens; k++) {
        int n = h->lens[k], G = rg_task_target_len(h->task, n);
        double em, acc;
        rg_status st = eng_evaluate_rows(m, h->task, n, h->prompts[k], h->want[k], ENG_HELDOUT_COUNT, h->pos[k], &em, &acc,
                                       NULL, 0);
        if (st) return st;
        *exact += em / h->n_lens;
        *token_acc += acc * G;
        tokens += G;
    }
    *token_acc /= tokens;
    return RG_OK;
}

/* ------------------------------------------------------------------ training */

/* Everything one training loop holds. */
typedef struct {
    const eng_options *o;
    rg_task task;
    rg_model *m;
    rg_adamw *opt;
    rg_run_state *rs;
    const char *tag, *name, *ckpt; /* tag: "copy/rope+rand/seed1" in messages; name: runs/<name>/ */
    rg_task_batch batch;
    rg_trainer tr;               /* the library's step state (micro-batch buffers, context) */
    rg_rng *data_rng, *pos_rng;
    FILE *csv;                   /* runs/<run>/train.csv */
    FILE *eval_csv;              /* runs/<run>/eval.csv (with --eval-every) */
    FILE *extrap_csv;            /* runs/<run>/extrap.csv (with --extrap-every) */
    heldout held;
    eng_curveset curves;
    int64_t steps_to_learn;      /* as eng_result (carried over a resume through /run steps_to_learn) */
    double eval_seconds;         /* spent on held-out measurements */
    double t0, win_t0, win_loss;
    double row_loss;             /* the loss of the last train.csv row (the mean since the row before) */
    int64_t win_steps, win_tokens, start;
} trainer;

/* The learning rate of step index s: warmup + cosine from o->lr_start to o->lr_total, then the final rate. */
static double lr_at(const eng_options *o, int64_t s)
{
    int64_t total = o->lr_total - o->lr_start;
    if (s - o->lr_start >= total) return o->lr * o->min_lr_frac;
    return rg_lr_schedule(s - o->lr_start, o->lr, o->warmup, total, o->min_lr_frac);
}

/* One training step: sample a batch, then the library's step (rg_train_step: length-sorted micro-batches, forward,
 * loss, backward, clip, AdamW). Writes the loss, the gradient norm before clipping and the tokens processed.
 * 0, or -1 with a message. */
static int train_step(trainer *t, double lr, double *loss, double *grad_norm, int64_t *tokens)
{
    const eng_options *o = t->o;
    if (rg_task_batch_sample(&t->batch, t->task, t->data_rng, o->batch, o->train_len)) {
        fprintf(stderr, "%s: %s: batch: %s\n", t->tag, t->ckpt, rg_last_error());
        return -1;
    }
    rg_batch rb = {t->batch.tokens, t->batch.targets, t->batch.len, t->batch.B, t->batch.T, t->batch.positions,
                   t->batch.axes};
    rg_step_config sc = {o->micro_batches, lr, o->clip, RG_TASK_IGNORE, o->random_positions ? t->pos_rng : NULL,
                         o->max_position};
    rg_step_stats ss;
    rg_status st = rg_train_step(&t->tr, t->m, t->opt, &rb, &sc, &ss);
    if (st) {
        fprintf(stderr, "%s: %s: train step: %s%s\n", t->tag, t->ckpt, rg_last_error(), st == RG_ERR_NOMEM
                ? " (the step's memory grows with --batch / --micro-batches rows of 2 --train-len + 3 tokens: lower "
                  "--batch or raise --micro-batches)" : "");
        return -1;
    }
    *loss = ss.loss;
    *grad_norm = ss.grad_norm;
    *tokens += ss.tokens;
    return 0;
}

/* The source run's log rows up to step `upto`, for a resume: <folder above the checkpoint's>/runs/<name>/<file>
 * (the layout train_order writes), read whole before the resumed log is opened (it may be the same file). Returns
 * the rows (malloc'ed, without the header; NULL when the log is missing, its header is not `header`, or a row is
 * malformed: the resumed log then starts at the resume step, and the message says so). */
static char *source_history(const trainer *t, const char *file, const char *header, int64_t upto)
{
    char ck_dir[ENG_PATH], src_dir[ENG_PATH], path[2 * ENG_PATH + 192], line[1024];
    eng_folder_of(t->o->resume, ck_dir, sizeof ck_dir);
    snprintf(path, sizeof path, "%s/runs/%s/%s", eng_folder_of(ck_dir, src_dir, sizeof src_dir), t->name, file);
    FILE *f = eng_fopen_read(path);
    size_t cap = 1 << 16, n = 0;
    char *rows = f ? malloc(cap) : NULL;
    if (rows) rows[0] = 0; /* a log with no row up to the resume step is the header alone */
    bool ok = rows && fgets(line, sizeof line, f) && strcmp(line, header) == 0;
    while (ok && fgets(line, sizeof line, f)) {
        char *end;
        long long step = strtoll(line, &end, 10);
        size_t len = strlen(line);
        if (end == line || *end != ',' || line[len - 1] != '\n' || len > 512) { ok = false; break; }
        if (step > upto) continue;
        if (n + len + 1 > cap) {
            char *p = cap < (64u << 20) ? realloc(rows, cap *= 2) : NULL;
            if (!p) { ok = false; break; }
            rows = p;
        }
        memcpy(rows + n, line, len + 1);
        n += len;
    }
    if (f) fclose(f);
    if (!ok) {
        free(rows);
        if (!t->o->quiet)
            fprintf(stderr, "%s: %s starts at the resume step %lld: no readable log of the source run at %s\n",
                    t->tag, file, (long long)upto, path);
        return NULL;
    }
    return rows;
}

/* Opens the run's log file (header, then on a resume the source run's rows up to the resume step). */
static FILE *open_log(const trainer *t, const char *dir, const char *file, const char *header)
{
    char path[ENG_PATH + 192];
    if (eng_mpi_writes()) snprintf(path, sizeof path, "%s/%s", dir, file);
    else snprintf(path, sizeof path, "/dev/null"); /* data-parallel ranks 1..N-1: rank 0 writes the logs (mpi_transport.h) */
    char *rows = t->o->resume[0] && eng_mpi_writes() ? source_history(t, file, header, t->rs->step) : NULL;
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "%s: cannot write %s: %s\n", t->tag, path, strerror(errno));
    else fprintf(f, "%s%s", header, rows ? rows : "");
    free(rows);
    return f;
}

static int trainer_init(trainer *t)
{
    const eng_options *o = t->o;
    if (rg_task_batch_alloc_for(&t->batch, t->task, o->batch, o->train_len) || rg_trainer_init(&t->tr) ||
        eng_mpi_share(&t->tr, t->tag)) {
        fprintf(stderr, "%s: %s\n", t->tag, rg_last_error());
        return -1;
    }
    rg_trainer_track(&t->tr, t->rs); /* each step advances rs->step and rs->lr.step with AdamW's step */
    t->data_rng = rg_run_state_rng(t->rs, "data");
    t->pos_rng = rg_run_state_rng(t->rs, "positions");
    if (!t->data_rng || !t->pos_rng) {
        fprintf(stderr, "%s: %s: the data or positions RNG is missing\n", t->tag, t->ckpt);
        return -1;
    }
    char dir[ENG_PATH + 160];
    snprintf(dir, sizeof dir, "%.*s/runs/%s", ENG_PATH - 1, o->out, t->name);
    if (eng_make_dir(dir)) {
        fprintf(stderr, "%s: cannot make %s: %s\n", t->tag, dir, strerror(errno));
        return -1;
    }
    if (!(t->csv = open_log(t, dir, "train.csv", "step,loss,lr,grad_norm,tokens_per_s,elapsed_s\n"))) return -1;
    if (o->eval_every) {
        int64_t seed; /* the run's seed, a row of train_order's /run settings (settings.c, settings_run.c) */
        if (rg_run_state_get_int(t->rs, "seed", 1, INT32_MAX, &seed) ||
            heldout_init(&t->held, t->task, o->train_len, eng_variant_of(o, t->m->cfg.pos) == ENG_VAR_RAND,
                         (uint64_t)seed, o->max_position)) {
            fprintf(stderr, "%s: %s\n", t->tag, rg_last_error());
            return -1;
        }
        if (!(t->eval_csv = open_log(t, dir, "eval.csv", "step,exact_match,token_acc,eval_seconds\n"))) return -1;
    }
    if (o->extrap_every) {
        int64_t seed;
        if (rg_run_state_get_int(t->rs, "seed", 1, INT32_MAX, &seed) ||
            eng_curveset_init(&t->curves, o, t->task, eng_variant_of(o, t->m->cfg.pos) == ENG_VAR_RAND, (uint64_t)seed)) {
            fprintf(stderr, "%s: %s\n", t->tag, rg_last_error());
            return -1;
        }
        if (!(t->extrap_csv = open_log(t, dir, "extrap.csv", "step,n,exact_match,token_acc\n"))) return -1;
    }
    t->t0 = t->win_t0 = eng_now_seconds();
    t->start = t->rs->step;
    return 0;
}

static void trainer_free(trainer *t)
{
    if (t->csv) fclose(t->csv);
    if (t->eval_csv) fclose(t->eval_csv);
    if (t->extrap_csv) fclose(t->extrap_csv);
    heldout_free(&t->held);
    eng_curveset_free(&t->curves);
    rg_trainer_free(&t->tr);
    rg_task_batch_free(&t->batch);
}

/* A row of train.csv every log_every steps (the loss is the mean since the last row), and the progress line:
 * on a terminal (one job) a line redrawn every step, otherwise a labelled line at every tenth of the run. */
static void log_step(trainer *t, double loss, double lr, double grad_norm, int64_t tokens)
{
    const eng_options *o = t->o;
    int64_t s = t->rs->step;
    t->win_loss += loss;
    t->win_steps++;
    t->win_tokens += tokens;
    double now = eng_now_seconds(), el = now - t->t0;
    double mean = t->win_loss / (double)t->win_steps, tok_s = (double)t->win_tokens / fmax(now - t->win_t0, 1e-9);
    bool last = s == o->steps, row = s % o->log_every == 0 || last;
    if (row) {
        fprintf(t->csv, "%lld,%.6g,%.6g,%.6g,%.6g,%.3f\n", (long long)s, mean, lr, grad_norm, tok_s, el);
        fflush(t->csv);
    }
    double eta = el / (double)(s - t->start) * (double)(o->steps - s);
    int64_t tenth = (o->steps - t->start) / 10 > 0 ? (o->steps - t->start) / 10 : 1;
    if (o->quiet) {
    } else if (isatty(STDERR_FILENO) && o->jobs == 1) {
        fprintf(stderr, "\r%s step %lld/%d loss %.4f lr %.2e %.0f tok/s ETA %.0fs   %s", t->tag, (long long)s,
                o->steps, mean, lr, tok_s, eta, last ? "\n" : "");
    } else if (last || (s - t->start) % tenth == 0) {
        fprintf(stderr, "%s: step %lld/%d, loss %.4f (mean of the last %lld steps), lr %.2e, grad_norm %.3g, "
                "%.0f tokens/s, elapsed %.0f s, ETA %.0f s\n", t->tag, (long long)s, o->steps, mean,
                (long long)t->win_steps, lr, grad_norm, tok_s, el, eta);
    }
    if (row) { t->row_loss = mean; t->win_loss = 0; t->win_steps = 0; t->win_tokens = 0; t->win_t0 = now; }
}

/* Every o->eval_every steps (and at the last): exact match on the held-out set, a row of eval.csv, and the first
 * step reaching ENG_LEARNED_EXACT (kept in the run state, so that a resume carries it on). 0 or -1. */
static int measure(trainer *t)
{
    const eng_options *o = t->o;
    int64_t s = t->rs->step;
    if (o->extrap_every && (s % o->extrap_every == 0 || s == o->steps)) {
        double t0 = eng_now_seconds();
        if (eng_curveset_measure(&t->curves, t->m, s, t->extrap_csv, t->tag)) return -1;
        t->eval_seconds += eng_now_seconds() - t0;
    }
    if (!o->eval_every || (s % o->eval_every != 0 && s != o->steps)) return 0;
    double t0 = eng_now_seconds(), em, acc;
    if (heldout_eval(&t->held, t->m, &em, &acc)) {
        fprintf(stderr, "%s: held-out evaluation at step %lld: %s\n", t->tag, (long long)s, rg_last_error());
        return -1;
    }
    double secs = eng_now_seconds() - t0;
    t->eval_seconds += secs;
    fprintf(t->eval_csv, "%lld,%.6g,%.6g,%.4f\n", (long long)s, em, acc, secs);
    fflush(t->eval_csv);
    if (em >= ENG_LEARNED_EXACT && t->steps_to_learn <= 0) {
        t->steps_to_learn = s;
        if (!o->quiet)
            fprintf(stderr, "%s: step %lld: held-out exact match %.3f >= %.2f (steps to learn)\n", t->tag,
                    (long long)s, em, ENG_LEARNED_EXACT);
    }
    if (rg_run_state_set_int(t->rs, "steps_to_learn", t->steps_to_learn > 0 ? t->steps_to_learn : -1)) {
        fprintf(stderr, "%s: %s\n", t->tag, rg_last_error());
        return -1;
    }
    return 0;
}

/* Trains m from rs->step to o->steps, saving to ckpt. Returns 0 or -1. */
static int train(const eng_options *o, rg_task task, rg_model *m, rg_adamw *opt, rg_run_state *rs, const char *ckpt,
                 const char *tag, const char *name, double *final_loss, int64_t *steps_to_learn)
{
    trainer t = {.o = o, .task = task, .m = m, .opt = opt, .rs = rs, .tag = tag, .name = name, .ckpt = ckpt,
                 .row_loss = NAN, .steps_to_learn = *steps_to_learn};
    int rc = trainer_init(&t) ? -1 : 0;
    if (o->continuing && o->resume[0]) /* the window of losses the interrupted run had (its final loss: the mean) */
        eng_loss_window_load(rs, &t.win_loss, &t.win_steps, &t.row_loss);
    while (rc == 0 && rs->step < o->steps) {
        double loss, grad_norm, lr = lr_at(o, rs->step);
        int64_t tokens = 0;
        if (train_step(&t, lr, &loss, &grad_norm, &tokens)) { rc = -1; break; } /* advances rs (tracked) */
        if (!isfinite(loss)) {
            fprintf(stderr, "%s: %s%s%s: loss is %g at step %lld\n", tag, ckpt, o->resume[0] ? ", resumed from " : "",
                    o->resume, loss, (long long)rs->step);
            rc = -1;
            break;
        }
        if (eng_mpi_after_step(o, m, tag, rs->step)) { rc = -1; break; }
        if (eng_mpi_writes()) { /* data-parallel ranks 1..N-1 neither log, measure nor save (mpi_transport.h) */
            log_step(&t, loss, lr, grad_norm, tokens);
            if (measure(&t)) { rc = -1; break; }
        }
        eng_kill_point("train", rs->step); /* tests only (continue.c) */
        if ((rs->step % o->ckpt_every == 0 || rs->step == o->steps) && eng_mpi_writes()) {
            eng_kill_point("save", rs->step);
            if (eng_loss_window_store(rs, t.win_loss, t.win_steps, t.row_loss) || rg_checkpoint_save(ckpt, m, opt, rs)) {
                fprintf(stderr, "%s: %s\n", tag, rg_last_error());
                rc = -1;
            }
        }
    }
    *final_loss = t.row_loss; /* the mean over the last log window (at most --log-every steps) */
    if (o->eval_every && t.steps_to_learn == 0) t.steps_to_learn = -1; /* measured, not reached */
    *steps_to_learn = t.steps_to_learn;
    if (o->eval_every && !o->quiet)
        fprintf(stderr, "%s: measurements during training took %.2f s of %.2f s\n", tag, t.eval_seconds,
                eng_now_seconds() - t.t0);
    trainer_free(&t);
    return rc;
}

/* ------------------------------------------------------------------ one run */

/* A new run's state: the RNG streams (1: batches, 2: positions); build() adds the schedule and the settings. */
static int new_run_state(int seed, rg_run_state *rs)
{
    rg_run_state_init(rs);
    rg_rng r;
    rg_rng_seed(&r, (uint64_t)seed, 1);
    if (!rg_run_state_add_rng(rs, "data", &r)) return -1;
    rg_rng_seed(&r, (uint64_t)seed, 2);
    return rg_run_state_add_rng(rs, "positions", &r) ? 0 : -1;
}

/* Builds the model and optimizer of a run: new, or read from the checkpoint of --resume / --eval (its encoding
 * replaces *pos; task and seed are the checkpoint's already: eng_options_check read them from its /run group), and
 * writes the run's settings into rs's /run group. Returns 0 or -1 with a message; on -1, *m is NULL or the model
 * and optimizer are built and the caller frees them. */
static int build(const eng_options *o, rg_task task, rg_pos_kind *pos, int seed, rg_model **m, rg_adamw *opt,
                 rg_run_state *rs)
{
    const char *src = o->resume[0] ? o->resume : o->eval[0] ? o->eval : NULL;
    rg_model_config cfg = o->model;
    cfg.pos = *pos;
    cfg.vocab_size = rg_task_get(task)->vocab_size; /* the task's vocabulary (30 for the ordering tasks) */
    if (src) {
        if (rg_checkpoint_read_config(src, &cfg, rs)) {
            eng_err("%s\n", rg_last_error());
            return -1;
        }
        *pos = cfg.pos;
    } else if (new_run_state(seed, rs)) {
        eng_err("%s\n", rg_last_error());
        return -1;
    }
    if (rg_model_new(&cfg, (uint64_t)seed, m)) {
        eng_err("%s\n", rg_last_error());
        return -1;
    }
    if (rg_adamw_init(opt, &(*m)->params, o->beta1, o->beta2, o->eps, o->weight_decay) ||
        (src && rg_checkpoint_load(src, *m, opt, rs))) {
        eng_err("%s\n", rg_last_error());
        rg_model_free(*m);
        *m = NULL;
        return -1;
    }
    if (src && eng_settings_check_optim(opt, src)) return -1; /* the caller frees m and opt */
    /* the schedule and settings this invocation runs with (a resume may extend --steps or restart the schedule) */
    rs->lr = (rg_lr_state){rs->step, o->lr, o->warmup, o->lr_total, o->min_lr_frac, o->clip};
    if (eng_settings_to_run(o, task, seed, rs) || eng_plugin_record(rs, (*m)->cfg.pos, task)) {
        eng_err("%s\n", rg_last_error());
        return -1;
    }
    return 0;
}

/* Evaluates variant v (0: the encoding itself, else RoPE extension o->exts[v-1]) at every test length into r. */
static int evaluate_variant(const eng_options *o, rg_model *m, const rg_run_state *rs, const char *tag, int v,
                            eng_result *r)
{
    int L_tokens = rg_task_total_len(r->task, o->train_len); /* a checkpoint's /run train_len for --resume, --eval */
    for (int i = 0; i < o->n_test_lens; i++) {
        int n = o->test_lens[i];
        r->lens[i] = n;
        double s = (double)rg_task_total_len(r->task, n) / (double)L_tokens;
        if (eng_pos_rotary(r->pos)) {
            /* per test length: s beyond the training length (none at or below it); fixed: the factor everywhere */
            bool on = v != 0 && (r->ext_factor > 0 || s > 1);
            rg_rope_scaling sc = rg_model_rope_scaling(m);
            sc.rope_type = on ? r->ext : RG_ROPE_EXT_NONE;
            sc.factor = !on ? 1 : r->ext_factor > 0 ? r->ext_factor : s;
            sc.original_max_position_embeddings = L_tokens;
            if (rg_model_set_rope_scaling(m, &sc)) {
                fprintf(stderr, "%s: RoPE scaling %s at n=%d: %s\n", tag, rg_rope_ext_name(sc.rope_type), n,
                        rg_last_error());
                return -1;
            }
        }
        rg_evalset es;
        bool generated;
        if (eng_evalset_get(o, r->task, n, &es, &generated)) {
            fprintf(stderr, "%s: %s\n", tag, rg_last_error());
            return -1;
        }
        r->generated[i] = generated;
        int32_t *pos; /* +rand runs: randomized positions as in training, the same for every row v */
        rg_status st = eng_eval_positions(r->variant == ENG_VAR_RAND, (uint64_t)r->seed, EVALPOS_TEST, r->task, n, es.count,
                                      o->max_position, &pos);
        bool no_positions = st == RG_ERR_ARG;
        if (st == RG_OK) st = eng_evaluate_set(m, &es, es.count, pos, &r->exact[i], &r->token_acc[i], r, i);
        free(pos);
        rg_evalset_free(&es);
        if (no_positions) {
            r->exact[i] = r->token_acc[i] = NAN; /* longer than --max-position: n/a */
            if (!o->quiet) fprintf(stderr, "%s: n/a at n=%d (not evaluated): %s\n", tag, n, rg_last_error());
        } else if (st == RG_ERR_ARG && eng_pos_bounded(r->pos)) {
            r->exact[i] = r->token_acc[i] = NAN; /* a position past the encoding's largest (a learned table): n/a */
        } else if (st) {
            fprintf(stderr, "%s: evaluation at n=%d: %s\n", tag, n, rg_last_error());
            return -1;
        }
        if (v == 0) eng_kill_point("eval", i + 1); /* tests only (continue.c) */
        char ext[48] = "";
        if (v) eng_ext_text(r->ext, r->ext_factor, ext, sizeof ext);
        char size[32];
        eng_size_label(r->task, n, size, sizeof size);
        if (!o->quiet && !no_positions)
            fprintf(stderr, "%s%s%s: evaluated %s%s (%d/%d): exact_match %.3f, token_acc %.3f\n", tag, v ? "+" : "",
                    ext, size, generated ? " (generated set)" : "", i + 1, o->n_test_lens, r->exact[i],
                    r->token_acc[i]);
    }
    return 0;
}

void eng_run_options(const eng_options *o, const eng_job *job, eng_options *ov)
{
    /* the invocation's settings with the job's training variant applied (a checkpoint's run is the variant its own
       settings make it) */
    *ov = *o;
    if (!o->resume[0] && !o->eval[0]) {
        if (job->variant == ENG_VAR_RAND) ov->random_positions = true;
        if (job->variant == ENG_VAR_THETA500K) ov->model.rope_base = ENG_THETA_500K;
        eng_set_fair_max_distance(ov, job->task, job->pos); /* the job's own task's longest distance */
        const char *md = rg_pos_encoding_of(job->pos)->max_distance_setting;
        if (job->variant == ENG_VAR_T5MAX128 && md) rg_pos_config_set(&ov->model, md, ENG_T5_LEGACY_MAX_DISTANCE);
        if (job->variant == ENG_VAR_BF16ANGLES) ov->model.rope_bf16_angles = true;
    }
    if (job->size > 0 && job->size <= o->n_sizes) { /* the job's model size: the run's one size */
        ov->sizes[0] = o->sizes[job->size - 1];
        ov->n_sizes = 1;
        if (!o->resume[0] && !o->eval[0]) eng_size_apply(&ov->sizes[0], &ov->model);
    } else {
        ov->n_sizes = 0;
    }
    if (eng_lm_task(job->task)) /* no greedy decoding: perplexity after training */
        ov->eval_every = ov->extrap_every = 0;
}

int eng_run(const eng_options *o_in, const eng_job *job, eng_result *res)
{
    static eng_options ov;
    eng_run_options(o_in, job, &ov);
    const eng_options *o = &ov;
    if (o->continuing) eng_continue_resume_source(&ov, job); /* its checkpoint, if it has one */
    rg_task task = job->task;
    rg_pos_kind pos = job->pos;
    int seed = job->seed;
    rg_model *m = NULL;
    rg_adamw opt;
    static rg_run_state rs;
    if (build(o, task, &pos, seed, &m, &opt, &rs)) {
        if (m) { rg_adamw_free(&opt); rg_model_free(m); } /* built, then refused */
        return -1;
    }
    eng_variant variant = eng_variant_of(o, pos);
    char tag[192], label[96], name[160], ckpt[ENG_PATH + 192];
    char size_text[ENG_SIZE_TEXT] = ""; /* the size axis: in the names and the results */
    if (o->n_sizes) memcpy(size_text, o->sizes[0].text, sizeof size_text);
    const char *size = o->n_sizes ? size_text : NULL;
    snprintf(tag, sizeof tag, "%s/%s%s%s/seed%d", rg_task_name(task),
             eng_label(pos, variant, RG_ROPE_EXT_NONE, 0, label, sizeof label), size ? " " : "", size ? size : "",
             seed);
    eng_run_name(task, pos, variant, size, seed, name, sizeof name);
    eng_kill_run(name); /* tests only (continue.c) */
    snprintf(ckpt, sizeof ckpt, "%.*s/ckpt/%s.h5", ENG_PATH - 1, o->out, name);
    int n_res = -1;
    double final_loss = NAN, t0 = eng_now_seconds();
    int64_t steps_to_learn = 0; /* a checkpoint's, if it measured: -1 (not reached by its step) or the step */
    const rg_run_attr *a = rg_run_state_attr(&rs, "steps_to_learn");
    if (a && (a->type != RG_RUN_ATTR_INT || a->i < -1 || a->i == 0 || a->i > rs.step)) {
        fprintf(stderr, "%s: checkpoint %s: /run steps_to_learn is not -1 or a step from 1 to the checkpoint's "
                "step %lld\n", tag, o->resume[0] ? o->resume : o->eval, (long long)rs.step);
        goto done;
    }
    if (a) steps_to_learn = a->i;
    if (eng_lm_task(task)) eng_lm_forget(o, name);
    if (!o->eval[0] && train(o, task, m, &opt, &rs, ckpt, tag, name, &final_loss, &steps_to_learn)) goto done;
    if (eng_lm_task(task)) { /* perplexity by context, reported in lm_report.* (no rows of report.md) */
        n_res = eng_mpi_writes() && eng_lm_evaluate_run(o, m, task, name, tag) ? -1 : 0;
        if (n_res == 0 && eng_mpi_writes() && !o_in->resume[0] && !o_in->eval[0] &&
            eng_results_save(o, eng_settings_digest(o_in), name, res, 0))
            n_res = -1;
        goto done;
    }
    double train_s = eng_now_seconds() - t0;
    bool rope = eng_pos_rotary(pos); /* the rope_scaling rows */
    int n_var = eng_mpi_writes() ? 1 + (rope ? o->n_exts : 0) : 0; /* data-parallel: rank 0 evaluates */
    for (int v = 0; v < n_var; v++) {
        eng_result *r = &res[v];
        memset(r, 0, sizeof *r);
        *r = (eng_result){.task = task, .pos = pos, .variant = variant, .ext = v ? o->exts[v - 1] : RG_ROPE_EXT_NONE,
                         .ext_factor = v ? o->ext_factor[v - 1] : 0, .seed = seed,
                         .n_lens = o->n_test_lens, .final_loss = final_loss, .train_seconds = train_s,
                         .steps = rs.step, .steps_to_learn = steps_to_learn,
                         .params = rg_params_numel(&m->params)};
        if (size) {
            memcpy(r->size, size_text, sizeof r->size);
            r->d_model = m->cfg.d_model;
            r->n_layers = m->cfg.n_layers;
            r->n_heads = m->cfg.n_heads;
            r->d_ff = m->cfg.d_ff;
        }
        if (evaluate_variant(o, m, &rs, tag, v, r)) goto done;
    }
    n_res = n_var;
    /* a finished run's results on disk, so that --continue keeps them (a new run of a grid, or a continued one) */
    if (eng_mpi_writes() && !o_in->resume[0] && !o_in->eval[0] &&
        eng_results_save(o, eng_settings_digest(o_in), name, res, n_res))
        n_res = -1;
done:
    rg_adamw_free(&opt);
    rg_model_free(m);
    return n_res;
}
