/* report.c: the experiment's written outputs. report.md: provenance (date, commit, host CPU, BLAS kernels,
 * command), the configuration, how to read the tables, and per task a section of the parts of its views (views.c:
 * the exact-match, maximum / median and token-accuracy tables, a grid task's matrices). report.csv: one line per
 * (run, test length), every seed. report.json (cJSON): provenance, configuration, every cell with its views' keys
 * (the statistics with their per-seed values, the per-position accuracy), and every run. The figures: the views'.
 * Every file goes through eng_out (checked writes, renamed into place only when complete). */
#include "engine/views/report.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/results/results.h"
#include "engine/run/mpi_transport.h"
#include "engine/settings/lists.h"
#include "engine/settings/protocol.h"
#include "engine/settings/settings.h"
#include "engine/views/report_protocol.h"
#include "engine/views/views.h"

#include <cblas.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef RG_GIT_COMMIT
#define RG_GIT_COMMIT "unknown"
#endif

/* ------------------------------------------------------------------ provenance */

void eng_provenance_get(eng_provenance *p)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(p->date, sizeof p->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(p->cpu, sizeof p->cpu, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            char *v = strchr(line, ':') + 1;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = 0;
            snprintf(p->cpu, sizeof p->cpu, "%s", v);
            break;
        }
    if (f) fclose(f);
    p->commit = RG_GIT_COMMIT;
    p->blas_core = openblas_get_corename();
    p->blas_config = openblas_get_config();
}

/* ------------------------------------------------------------------ report.md */

void eng_md_provenance(eng_out *w, const eng_provenance *p, const char *command, double wall_seconds)
{
    eng_out_printf(w, "## Provenance\n\n- date: %s\n- ropegrad: %s (%s)\n- commit: %s\n- host CPU: %s\n"
                     "- BLAS: OpenBLAS kernels %s (%s)\n- command: `%s`\n- wall time: %.1f s (%.1f min)\n\n", p->date,
                  rg_version(), rg_build_real(), p->commit, p->cpu, p->blas_core, p->blas_config,
                  command ? command : "", wall_seconds, wall_seconds / 60);
}

/* The learning-rate schedule this invocation ran with, in words. */
static void lr_schedule_text(const eng_options *o, char *b, size_t cap)
{
    if (!o->resume[0])
        snprintf(b, cap, "new: warmup %d then cosine from step 0 to %d, down to %g x lr", o->warmup, o->lr_total,
                 o->min_lr_frac);
    else if (o->lr_mode == ENG_LR_RESTART)
        snprintf(b, cap, "restart (resume): a new warmup %d + cosine from step %d to %d, down to %g x lr", o->warmup,
                 o->lr_start, o->lr_total, o->min_lr_frac);
    else
        snprintf(b, cap, "continue (resume): the checkpoint's warmup + cosine from step %d to %d goes on; steps past "
                 "%d run at %g x lr", o->lr_start, o->lr_total, o->lr_total, o->min_lr_frac);
}

/* The test lengths of task whose evaluation sets were generated (not read from the data file), ascending, into
 * out (room for ENG_MAX_TABLE_LENS). Returns their count. */
static int generated_lens(const eng_table *t, int task, int *out)
{
    int n = 0;
    for (int j = 0; j < t->n_lens[task]; j++)
        for (int i = 0; i < t->n_res; i++) {
            const eng_result *r = &t->res[i];
            int q = 0;
            while (r->task == (rg_task)task && q < r->n_lens && r->lens[q] != t->lens[task][j]) q++;
            if (r->task == (rg_task)task && q < r->n_lens && r->generated[q]) { out[n++] = t->lens[task][j]; break; }
        }
    return n;
}

/* The title (PARTIAL while runs are still going) and the provenance. */
static void md_header(eng_out *w, const eng_report_meta *meta, const eng_provenance *p)
{
    if (meta->partial) {
        eng_out_printf(w, "# Length extrapolation report — PARTIAL\n\n**Partial report: written while runs are "
                         "still going");
        if (meta->runs_total > 0) eng_out_printf(w, " (%d of %d runs finished)", meta->runs_done, meta->runs_total);
        eng_out_printf(w, ". The final report replaces it when every run has finished.**\n\n");
    } else {
        eng_out_printf(w, "# Length extrapolation report\n\n");
    }
    eng_md_provenance(w, p, meta->command, meta->wall_seconds);
    if (meta->sources) /* train_order --combine: the blocks this report holds; the wall time is their sum */
        eng_out_printf(w, "## Combined from\n\nThis report combines the reports below (blocks of one grid: of its seeds, "
                         "tasks or encodings, every other setting checked equal; the wall time above is the sum of "
                         "theirs). The accuracy by output position and the curves over training are drawn from the blocks "
                         "whose per-position counts and run logs came along (named below); report.csv carries neither."
                         "\n\n%s\n",
                      meta->sources);
}

/* What a report contains, so that its notes explain only that: RoPE scaling rows per length and with a fixed
 * factor, θ=500k and +rand rows (or every run with randomized positions), the MPI ranks, rows not learned. */
typedef struct {
    bool scaled, fixed, theta, rand, plain, unlearned, bf16_angles; /* plain: rows evaluated at positions 0..2n+2 */
    int ranks;
} eng_report_has;

static void report_has(const eng_table *t, eng_report_has *h)
{
    memset(h, 0, sizeof *h);
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        h->scaled |= r->ext != RG_ROPE_EXT_NONE && r->ext_factor == 0;
        h->fixed |= r->ext != RG_ROPE_EXT_NONE && r->ext_factor != 0;
        h->theta |= r->variant == ENG_VAR_THETA500K;
        h->bf16_angles |= r->variant == ENG_VAR_BF16ANGLES;
        h->rand |= r->variant == ENG_VAR_RAND;
        h->plain |= r->variant != ENG_VAR_RAND;
        h->unlearned |= !eng_row_learned(t, r);
    }
    h->ranks = eng_mpi_size();
}

/* The sequence length T(n) of task as a formula of n, "(2n+3)" for the ordering tasks, into buf when T(n) = a n + b
 * (a > 0) at n = 1, 2, at L and at every size the table tests the task at; NULL otherwise (a grid task's size
 * codes). */
static const char *seq_len_formula(const eng_table *t, int task, int L, char *buf, size_t cap)
{
    int a = rg_task_total_len(task, 2) - rg_task_total_len(task, 1), b = rg_task_total_len(task, 1) - a;
    bool affine = a > 0 && !rg_task_is_grid(task) && rg_task_total_len(task, L) == a * L + b;
    for (int j = 0; affine && j < t->n_lens[task]; j++)
        affine = rg_task_total_len(task, t->lens[task][j]) == a * t->lens[task][j] + b;
    if (!affine) return NULL;
    char an[24];
    snprintf(an, sizeof an, a == 1 ? "n" : "%dn", a);
    if (b == 0) snprintf(buf, cap, "%s", an);
    else snprintf(buf, cap, "(%s%+d)", an, b);
    return buf;
}

/* The RoPE scaling rows' bullets: the factor s = T(n)/T(L) per test length as run.c applies it (T the sequence
 * length of the task's own geometry, T(L) the original_max_position_embeddings), said for the table's first task;
 * each task of another T(L) named after it. */
static void md_rope_scaling(eng_out *w, const eng_table *t, const eng_report_has *h)
{
    int L = t->train_len, lead = 0;
    while (lead < rg_task_count() - 1 && !t->n_lens[lead]) lead++;
    int TL = rg_task_total_len(lead, L);
    char others[320] = "", fixed[320] = "", formula[48], size[32];
    for (int task = 0; task < rg_task_count(); task++) {
        int T = rg_task_total_len(task, L);
        if (!t->n_lens[task] || T == TL || strlen(others) > sizeof others - 96) continue;
        snprintf(others + strlen(others), sizeof others - strlen(others), "; %s: s = T(n)/%d and %d (T(n) its "
                 "sequence length)", rg_task_name(task), T, T);
        snprintf(fixed + strlen(fixed), sizeof fixed - strlen(fixed), "; %s: %d", rg_task_name(task), T);
    }
    const char *f = seq_len_formula(t, lead, L, formula, sizeof formula);
    if (h->scaled && f)
        eng_out_printf(w, "- RoPE scaling (rows rope+TYPE, --rope-scaling, HF rope_type names) per test length: beyond "
                         "the training length with factor s = %s/%d and original_max_position_embeddings %d%s; at "
                         "n <= %s s = 1 and they equal plain RoPE\n", f, TL, TL, others,
                      rg_task_size_text(lead, L, size, sizeof size));
    else if (h->scaled) /* sizes that are no lengths (a grid's codes): s in terms of T alone */
        eng_out_printf(w, "- RoPE scaling (rows rope+TYPE, --rope-scaling, HF rope_type names) per test size: where "
                         "the sequence is longer than in training, factor s = T(n)/%d (T(n) the sequence length at "
                         "size n, %d at the training size %s) and original_max_position_embeddings %d%s; where T(n) "
                         "<= %d s = 1 and they equal plain RoPE\n", TL, TL, rg_task_size_text(lead, L, size,
                         sizeof size), TL, others, TL);
    if (h->fixed)
        eng_out_printf(w, "- RoPE scaling with a fixed factor (rows rope+TYPE:F): the factor F at every test length, as "
                         "an HF rope_scaling config does, with original_max_position_embeddings %d%s\n", TL, fixed);
}

/* The configuration: model, training, schedule, evaluation, generated lengths, RoPE scaling, variants. */
static void md_config(eng_out *w, const eng_options *o, const eng_table *t, const eng_report_has *h)
{
    int L = o->train_len;
    char vocab[512]; /* a run's model takes its task's vocabulary (30 for the ordering tasks) */
    snprintf(vocab, sizeof vocab, "%d", o->model.vocab_size);
    bool same = true;
    for (int k = 0; k < rg_task_count(); k++) same &= !o->tasks[k] || rg_task_get(k)->vocab_size == o->model.vocab_size;
    if (!same) {
        snprintf(vocab, sizeof vocab, "per task (");
        for (int k = 0; k < rg_task_count(); k++)
            if (o->tasks[k])
                snprintf(vocab + strlen(vocab), sizeof vocab - strlen(vocab), "%s%s %d", vocab[10] ? ", " : "",
                         rg_task_name(k), rg_task_get(k)->vocab_size);
        snprintf(vocab + strlen(vocab), sizeof vocab - strlen(vocab), ")");
    }
    char model[512];
    eng_out_printf(w, "## Configuration\n\n- model: %s, vocab %s, max_len %d, pre-LayerNorm decoder, no dropout\n",
                  eng_model_text(&o->model, t, model, sizeof model), vocab, o->model.max_len);
    char pos_cfg[2048];
    eng_print_pos_config(o, pos_cfg, sizeof pos_cfg);
    if (pos_cfg[0]) eng_out_printf(w, "- encoding settings (--pos-config): %s\n", pos_cfg);
    char train[96];
    bool grid = false;
    for (int k = 0; k < t->n_rows; k++) grid |= rg_task_is_grid(t->rows[k].task);
    if (grid) { /* grid tasks: every side drawn up to the training size's (rg_task_train_size, docs/grids.md) */
        char size[32];
        snprintf(train, sizeof train, "grid sizes up to %s (each side uniform from 1)",
                 rg_task_size_text(t->rows[0].task, L, size, sizeof size));
    } else snprintf(train, sizeof train, "n uniform in 1..%d", L);
    eng_out_printf(w, "- training: %d steps, batch %d, %s, AdamW lr %g betas (%g, %g) eps %g wd %g, "
                     "clip %g, warmup %d then cosine to %g x lr%s\n", o->steps, o->batch, train, o->lr, o->beta1, o->beta2,
                  o->eps, o->weight_decay, o->clip, o->warmup, o->min_lr_frac,
                  o->random_positions ? ", randomized positions" : "");
    char lr[256];
    lr_schedule_text(o, lr, sizeof lr);
    eng_out_printf(w, "- learning-rate schedule: %s\n", lr);
    char sources[2048]; /* --resume / --eval: which settings the checkpoint gave (a new run: every one its own) */
    if ((o->resume[0] || o->eval[0]) && eng_settings_sources(sources, sizeof sources)[0])
        eng_out_printf(w, "- settings sources: %s\n", sources);
    if (o->data[0]) eng_out_printf(w, "- evaluation: greedy decoding with the KV cache on %s\n", o->data);
    else eng_out_printf(w, "- evaluation: greedy decoding with the KV cache (every test set generated: no data file)\n");
    for (int task = 0; task < rg_task_count(); task++) {
        int gen[ENG_MAX_TABLE_LENS], ng = generated_lens(t, task, gen);
        if (!t->n_lens[task]) continue;
        eng_out_printf(w, "- %s: test sets generated (not in the data file; same generator and seed rule): ",
                      rg_task_name((rg_task)task));
        char size[32];
        for (int i = 0; i < ng; i++) eng_out_printf(w, "%s%s", i ? ", " : "", eng_size_label((rg_task)task, gen[i], size,
                                                                                          sizeof size));
        eng_out_printf(w, "%s\n", ng ? "" : "none");
    }
    md_rope_scaling(w, t, h);
    if (h->theta)
        eng_out_printf(w, "- training variant `θ=500k`: rope / rope-half trained and evaluated with rope_theta 500000 "
                         "(the other rows %g)\n", o->model.rope_base == ENG_THETA_500K ? 10000.0 : o->model.rope_base);
    if (h->bf16_angles)
        eng_out_printf(w, "- training variant `bf16 angles`: rope / rope-half trained and evaluated with RoPE's angles "
                         "bf16(bf16(p) bf16(theta_i)) and cos / sin tables rounded to bf16 (--rope-angles bf16, as "
                         "torch.autocast computed them before HF PR #29285); the other rows in double / float32\n");
    if (h->rand)
        eng_out_printf(w, "- randomized positions (%s; Ruoss et al. 2023): each training sequence of T tokens gets a "
                         "sorted uniform random subset of T distinct positions from [0, %d), and is evaluated the same "
                         "way (as the paper's reference code does): each test and held-out sample of 2n+3 tokens gets "
                         "its own sorted uniform random subset of [0, %d), from a PCG32 stream seeded by (seed, task, "
                         "n)%s\n", o->random_positions ? "rows `+rand`, --random-positions" : "rows `+rand`",
                      o->max_position, o->max_position, h->plain ? "; the other rows are evaluated at positions "
                      "0..2n+2" : "");
    if (h->ranks > 1)
        eng_out_printf(w, "- MPI: %d ranks (%s)\n", h->ranks, o->data_parallel ? "--data-parallel: every rank computes "
                      "a share of every batch; gradients summed in rank order" : "the grid over ranks: rank 0 hands "
                      "out the runs and writes the report");
    eng_md_protocol(w, o, t);
    eng_out_printf(w, "\n");
}

/* How to read the tables: the cells, the interval and why t, n/a. */
static void md_how_to_read(eng_out *w, const eng_options *o, const eng_report_has *h)
{
    eng_out_printf(w, "## How to read the tables\n\n"
        "- Exact match cells: mean ± sd [95%% interval] · k/N, over the N seeds of the row; k/N counts the seeds "
        "whose exact match is >= %.1f. Outcomes are often bimodal (most seeds 0, one seed high): k/N shows that "
        "where the mean cannot. With one seed a cell is the value and k/1 (no sd, no interval).\n"
        "- The 95%% interval is the Student t interval of the seed mean, mean -+ t(0.975, N-1) sd/sqrt(N), clipped "
        "to [0, 1]. Why t and not a bootstrap: with the 3 to 10 seeds a cell has, a percentile bootstrap never "
        "reaches past the seeds' own values and is too narrow (it covers well under 95%% for so few samples), "
        "while the t interval widens with the spread and the small N, which is the warning a reader needs. "
        "Neither is exact for bimodal outcomes, hence k/N beside it. report.json also gives a seeded percentile "
        "bootstrap interval (%d resamples) per cell for comparison. An interval [x, x] means the seeds agreed "
        "exactly; it is no promise about seeds not run (see k/N and the number of seeds).\n"
        "- Token accuracy cells: mean ± sd [95%% t interval].\n"
        "- Below each exact-match table: the maximum over seeds / the median (the literature reports the maximum "
        "over seeds: Deletang et al. 2023, Ruoss et al. 2023); report_cells.csv has every statistic per cell.\n"
        "- n/a: not evaluated (a position past the learned table, max_len %d", ENG_PASS_EXACT, ENG_BOOT_REPS,
        o->model.max_len);
    if (h->rand) eng_out_printf(w, "; for a +rand row, 2n+3 tokens need more random positions than [0, max_position "
                                  "%d) has", o->max_position);
    eng_out_printf(w, ").\n");
}

static int write_md(const eng_options *o, const eng_table *t, const eng_report_meta *meta, const eng_provenance *p)
{
    eng_out w;
    if (eng_out_open(&w, o->out, "report.md")) return -1;
    md_header(&w, meta, p);
    eng_report_has h;
    report_has(t, &h);
    md_config(&w, o, t, &h);
    eng_md_sizes(&w, t); /* a model-size axis only (sizes_table.c) */
    md_how_to_read(&w, o, &h);
    int L = t->train_len;
    if (h.unlearned)
        eng_out_printf(&w, "- ✗ marks a row whose mean exact match at n = %d (the training length) is below 0.9: the "
                          "model did not learn the task, so its extrapolation numbers say nothing about the "
                          "encoding.\n", L);
    eng_out_printf(&w, "- Plots (gnuplot), each as .svg, .pdf and .png: extrapolation (per task, heatmaps of exact "
                      "match and token accuracy), curves_<task> (against n, with the seeds and the 95%% band), "
                      "loss_<task> (training loss of every run).\n");
    if (eng_table_has_learn(t))
        eng_out_printf(&w, "- steps to %.2f (last column of the exact-match tables): the first step at which a run's "
                          "held-out exact match (every %d steps and at the last, %d samples at each of up to %d "
                          "lengths n <= %d, not "
                          "the test sets' samples) reached %.2f; mean (median) over the seeds that reached it, and "
                          "k/N of the measured seeds that did; \"not within S\": none did in S steps. RoPE scaling "
                          "rows repeat their run's value (the scaling is applied only at evaluation).\n",
                      ENG_LEARNED_EXACT, o->eval_every, ENG_HELDOUT_COUNT, ENG_HELDOUT_LENS, L, ENG_LEARNED_EXACT);
    eng_out_printf(&w, "\n");
    for (int task = 0; task < rg_task_count(); task++) {
        if (!t->n_lens[task]) continue;
        eng_out_printf(&w, "## %s\n\n", rg_task_name((rg_task)task));
        eng_views_markdown(&w, t, task); /* the task's views (views.c) */
    }
    eng_md_tricks(&w, t); /* report_protocol.c */
    char *settings = eng_options_json(o);
    eng_out_printf(&w, "## Settings\n\nThe resolved settings of this invocation (a valid --config file for a new "
                      "run):\n\n```json\n%s\n```\n", settings ? settings : "(out of memory)");
    cJSON_free(settings);
    return eng_out_close(&w);
}

/* ------------------------------------------------------------------ report.csv */

static int write_csv(const eng_options *o, const eng_result *res, int n_res)
{
    eng_out w;
    if (eng_out_open(&w, o->out, "report.csv")) return -1;
    bool sized = eng_results_sized(res, n_res); /* a model-size axis: its columns at the end (sizes_table.c) */
    eng_out_printf(&w, "%s%s\n", ENG_CSV_HEADER, eng_size_csv_header(sized));
    for (int i = 0; i < n_res; i++)
        for (int j = 0; j < res[i].n_lens; j++) {
            char ext[48], size[128];
            eng_out_printf(&w, "%s,%s,%s,%s,%d,%lld,%.9g,%.3f,%d,%.9g,%.9g,%d,%d,%lld%s\n", rg_task_name(res[i].task),
                          rg_pos_name(res[i].pos), eng_variant_name(res[i].variant),
                          eng_ext_text(res[i].ext, res[i].ext_factor, ext, sizeof ext), res[i].seed,
                          (long long)res[i].steps, res[i].final_loss, res[i].train_seconds, res[i].lens[j],
                          res[i].exact[j], res[i].token_acc[j], o->train_len, res[i].generated[j] ? 1 : 0,
                          (long long)res[i].steps_to_learn, eng_size_csv_fields(&res[i], sized, size, sizeof size));
        }
    return eng_out_close(&w);
}

/* ------------------------------------------------------------------ report.json */

static cJSON *num_or_null(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static cJSON *json_config(const eng_options *o)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "train_len", o->train_len);
    cJSON_AddNumberToObject(c, "steps", o->steps);
    cJSON_AddNumberToObject(c, "batch", o->batch);
    cJSON_AddNumberToObject(c, "lr", o->lr);
    cJSON_AddNumberToObject(c, "min_lr_frac", o->min_lr_frac);
    cJSON_AddNumberToObject(c, "warmup", o->warmup);
    cJSON_AddNumberToObject(c, "weight_decay", o->weight_decay);
    cJSON_AddNumberToObject(c, "clip", o->clip);
    cJSON_AddNumberToObject(c, "beta1", o->beta1);
    cJSON_AddNumberToObject(c, "beta2", o->beta2);
    cJSON_AddNumberToObject(c, "eps", o->eps);
    cJSON_AddBoolToObject(c, "random_positions", o->random_positions);
    if (o->n_sizes) cJSON_AddItemToObject(c, "sizes", eng_sizes_json(o)); /* a size axis: each size's numbers */
    else {
        cJSON_AddNumberToObject(c, "d_model", o->model.d_model);
        cJSON_AddNumberToObject(c, "n_heads", o->model.n_heads);
        cJSON_AddNumberToObject(c, "n_layers", o->model.n_layers);
        cJSON_AddNumberToObject(c, "d_ff", o->model.d_ff);
    }
    cJSON_AddNumberToObject(c, "vocab_size", o->model.vocab_size);
    cJSON_AddNumberToObject(c, "max_len", o->model.max_len);
    char pos_cfg[2048];
    eng_print_pos_config(o, pos_cfg, sizeof pos_cfg);
    cJSON_AddStringToObject(c, "pos_config", pos_cfg);
    cJSON_AddStringToObject(c, "data", o->data);
    return c;
}

static cJSON *json_runs(const eng_result *res, int n_res)
{
    cJSON *runs = cJSON_CreateArray();
    for (int i = 0; i < n_res; i++) {
        const eng_result *r = &res[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "task", rg_task_name(r->task));
        char ext[48], label[96];
        cJSON_AddStringToObject(o, "encoding", rg_pos_name(r->pos));
        cJSON_AddStringToObject(o, "variant", eng_variant_name(r->variant));
        cJSON_AddStringToObject(o, "rope_ext", eng_ext_text(r->ext, r->ext_factor, ext, sizeof ext));
        cJSON_AddStringToObject(o, "label", eng_label(r->pos, r->variant, r->ext, r->ext_factor, label, sizeof label));
        eng_size_json(o, r);
        cJSON_AddNumberToObject(o, "seed", r->seed);
        cJSON_AddNumberToObject(o, "steps", (double)r->steps);
        cJSON_AddItemToObject(o, "final_loss", num_or_null(r->final_loss));
        cJSON_AddNumberToObject(o, "train_seconds", r->train_seconds);
        cJSON_AddNumberToObject(o, "steps_to_learn", (double)r->steps_to_learn);
        cJSON *rs = cJSON_AddArrayToObject(o, "results");
        for (int j = 0; j < r->n_lens; j++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "n", r->lens[j]);
            cJSON_AddItemToObject(e, "exact_match", num_or_null(r->exact[j]));
            cJSON_AddItemToObject(e, "token_acc", num_or_null(r->token_acc[j]));
            cJSON_AddBoolToObject(e, "generated", r->generated[j]);
            cJSON_AddItemToArray(rs, e);
        }
        cJSON_AddItemToArray(runs, o);
    }
    return runs;
}

/* report.json's header: provenance, partial-run counts, config, settings, schedule, generated test lengths. */
static void json_head(cJSON *root, const eng_options *o, const eng_table *t, const eng_report_meta *meta,
                      const eng_provenance *p)
{
    cJSON *pv = cJSON_AddObjectToObject(root, "provenance");
    cJSON_AddStringToObject(pv, "date", p->date);
    cJSON_AddStringToObject(pv, "ropegrad_version", rg_version());
    cJSON_AddStringToObject(pv, "commit", p->commit);
    cJSON_AddStringToObject(pv, "host_cpu", p->cpu);
    cJSON_AddStringToObject(pv, "blas_core", p->blas_core);
    cJSON_AddStringToObject(pv, "blas_config", p->blas_config);
    cJSON_AddStringToObject(pv, "command", meta->command ? meta->command : "");
    cJSON_AddNumberToObject(pv, "wall_seconds", meta->wall_seconds);
    if (meta->sources) cJSON_AddStringToObject(pv, "combined_from", meta->sources);
    cJSON_AddBoolToObject(root, "partial", meta->partial);
    if (meta->partial && meta->runs_total > 0) {
        cJSON_AddNumberToObject(root, "runs_done", meta->runs_done);
        cJSON_AddNumberToObject(root, "runs_total", meta->runs_total);
    }
    cJSON_AddItemToObject(root, "config", json_config(o));
    char *settings = eng_options_json(o), lr[256];
    cJSON *sj = settings ? cJSON_Parse(settings) : NULL;
    cJSON_free(settings);
    cJSON_AddItemToObject(root, "settings", sj ? sj : cJSON_CreateNull());
    lr_schedule_text(o, lr, sizeof lr);
    cJSON_AddStringToObject(root, "lr_schedule", lr);
    cJSON *gen = cJSON_AddObjectToObject(root, "generated_test_lengths");
    for (int task = 0; task < rg_task_count(); task++) {
        int g[ENG_MAX_TABLE_LENS], ng = generated_lens(t, task, g);
        if (t->n_lens[task]) cJSON_AddItemToObject(gen, rg_task_name((rg_task)task), cJSON_CreateIntArray(g, ng));
    }
}

/* "statistics" (how the intervals and steps_to_learn are computed) and "rows" (steps_to_learn per table row). */
static void json_stats_rows(cJSON *root, const eng_table *t)
{
    cJSON *st = cJSON_AddObjectToObject(root, "statistics");
    cJSON_AddStringToObject(st, "interval", "Student t interval of the seed mean, clipped to [0, 1] (ci95_t); "
                                            "percentile bootstrap of the mean, seeded per cell (ci95_bootstrap)");
    cJSON_AddNumberToObject(st, "level", ENG_CI_LEVEL);
    cJSON_AddNumberToObject(st, "bootstrap_resamples", ENG_BOOT_REPS);
    cJSON_AddNumberToObject(st, "pass_exact_match", ENG_PASS_EXACT);
    cJSON_AddStringToObject(st, "steps_to_learn", "per run: the first step with held-out exact match >= "
                            "learned_exact_match (n <= train_len, every eval_every steps); -1 not reached within "
                            "steps, 0 not measured. Per row (rows[].steps_to_learn): over the measured seeds, k "
                            "reaching it, mean and median of their steps, max_steps");
    cJSON_AddNumberToObject(st, "learned_exact_match", ENG_LEARNED_EXACT);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        char label[96];
        eng_learn_stat ls;
        eng_row_steps_to_learn(t, r, &ls);
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "task", rg_task_name(r->task));
        cJSON_AddStringToObject(x, "label", eng_row_label(r, label, sizeof label));
        eng_row_size_json(x, t, r);
        cJSON_AddNumberToObject(x, "seeds", r->n_runs);
        cJSON *l = cJSON_AddObjectToObject(x, "steps_to_learn");
        cJSON_AddNumberToObject(l, "n", ls.n);
        cJSON_AddNumberToObject(l, "k", ls.k);
        cJSON_AddItemToObject(l, "mean", num_or_null(ls.mean));
        cJSON_AddItemToObject(l, "median", num_or_null(ls.median));
        cJSON_AddNumberToObject(l, "max_steps", (double)ls.max_steps);
        cJSON_AddItemToArray(rows, x);
    }
}

/* "cells": one object per (row, test length): its names, then a key per view (views.c: the exact-match and
 * token-accuracy statistics, the per-position accuracy). */
static void json_cells(cJSON *root, const eng_table *t)
{
    cJSON *cells = cJSON_AddArrayToObject(root, "cells");
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        for (int j = 0; j < t->n_lens[r->task]; j++) {
            int n = t->lens[r->task][j];
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "task", rg_task_name(r->task));
            char ext[48], label[96];
            cJSON_AddStringToObject(c, "encoding", rg_pos_name(r->pos));
            cJSON_AddStringToObject(c, "variant", eng_variant_name(r->variant));
            cJSON_AddStringToObject(c, "rope_ext", eng_ext_text(r->ext, r->ext_factor, ext, sizeof ext));
            cJSON_AddStringToObject(c, "label", eng_row_label(r, label, sizeof label));
            eng_row_size_json(c, t, r);
            cJSON_AddNumberToObject(c, "n", n);
            eng_views_json_cell(c, t, r, n);
            cJSON_AddItemToArray(cells, c);
        }
    }
}

/* report.json in o->out: the head, statistics and rows, cells and runs. */
static int write_json(const eng_options *o, const eng_table *t, const eng_report_meta *meta, const eng_provenance *p)
{
    cJSON *root = cJSON_CreateObject();
    json_head(root, o, t, meta, p);
    json_stats_rows(root, t);
    json_cells(root, t);
    cJSON_AddItemToObject(root, "runs", json_runs(t->res, t->n_res));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) { eng_err("report.json: out of memory\n"); return -1; }
    eng_out w;
    int rc = eng_out_open(&w, o->out, "report.json");
    if (rc == 0) {
        eng_out_printf(&w, "%s\n", text);
        rc = eng_out_close(&w);
    }
    free(text);
    return rc;
}

/* ------------------------------------------------------------------ entry points */

int eng_report(const eng_options *o, const eng_result *res, int n_res, const eng_report_meta *meta)
{
    eng_table t;
    if (n_res < 1) { eng_err("no results to report\n"); return -1; }
    if (eng_table_build(&t, res, n_res, o->train_len)) return -1;
    eng_provenance p;
    eng_provenance_get(&p);
    int rc = 0;
    if (write_csv(o, res, n_res) || eng_write_cells_csv(o->out, &t) || eng_write_positions_csv(o->out, &t)) rc = -1;
    if (rc == 0 && write_json(o, &t, meta, &p)) rc = -1;
    if (rc == 0 && write_md(o, &t, meta, &p)) rc = -1;
    char runs[ENG_PATH + 16];
    snprintf(runs, sizeof runs, "%s/runs", o->out);
    if (rc == 0 && eng_views_plot(&t, o->out, runs, NULL, false)) rc = -1;
    eng_table_free(&t);
    return rc;
}
